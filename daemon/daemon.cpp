#include "daemon/daemon.hpp"

#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>

#include <csignal>

#include "addressspace/server_object.hpp"
#include "config/address_space_loader.hpp"
#include "config/pki_settings.hpp"
#include "config/transport_settings.hpp"
#include "daemon/alloc_counters.hpp"
#include "daemon/build_info.hpp"
#include "daemon/channel_security.hpp"
#include "daemon/log.hpp"
#include "ua/endpoint_url.hpp"

namespace opcuad {

namespace {

transport::TransportConfig transport_config(const config::ServerConfig& c) {
  transport::TransportConfig t = config::transport_settings(c);
  t.warn = [](std::string_view message) { log::warn("transport: {}", message); };
  return t;
}

}  // namespace

Daemon::Daemon(const config::ServerConfig& config)
    : config_(config), transport_config_(transport_config(config)) {}

Daemon::~Daemon() { shutdown(); }

bool Daemon::start() {
  control_participant_ = space_.reclaimer().register_participant();
  config::RoleTable roles;
  const auto errors =
      config::build_address_space(config_, space_, *control_participant_, build_info(), &roles);
  if (!errors.empty()) {
    for (const auto& e : errors) log::error("{}", e.to_string());
    return false;
  }
  log::info("address space: {} nodes", space_.current()->size());

  shards_ = std::make_unique<transport::ShardPool>(
      config_.threads, transport::ShardScheduling{config_.scheduling.pin_shards, config_.scheduling.realtime_priority});
  if (!open_pki()) return false;
  services_ = std::make_unique<services::Server>(space_, config_);
  services_->set_role_table(std::move(roles));
  // The server's certificate for session signatures and encrypted passwords, and the user trust list for
  // X509 identity tokens (docs/SECURITY.md).
  services_->set_identity(&identity_);
  services_->set_user_certificate_validator([this](std::span<const uint8_t> chain, const security::Policy& p) {
    security::CertificateRequirements req;
    req.min_key_bits = static_cast<int>(p.min_key_bits);
    req.max_key_bits = static_cast<int>(p.max_key_bits);
    req.allow_sha1 = p.sha1_certificates;
    req.use = security::CertificateUse::User;
    return pki_.validate(chain, req);
  });
  for (const auto& w : config::security_warnings(config_)) log::warn("security: {}", w);
  if (const auto problems = services_->security_problems(); !problems.empty()) {
    for (const auto& p : problems) log::error("security: {}", p);
    return false;
  }
  for (size_t i = 0; i < shards_->size(); ++i) services_->attach_shard(shards_->shard(i).context());
  simulator_ = std::make_unique<Simulator>(shards_->shard(0).context(), space_, config_, *services_);
  for (const auto& problem : shards_->start()) log::warn("scheduling: {}", problem);
  simulator_->start();
  log::info("{} shard(s); {} simulated variable(s)", shards_->size(), simulator_->variable_count());

  // RSA work of secure channel handshakes, off the shard threads (docs/SECURITY.md, "Secure conversation").
  handshakes_ = std::make_unique<transport::HandshakePool>(
      std::max(1u, std::thread::hardware_concurrency() / 2), kMaxQueuedHandshakes);
  for (const auto& e : config_.endpoints) {
    if (!listen(e)) return false;
  }
  if (config_.http && !start_http(*config_.http)) return false;
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  signals_.async_wait([this](std::error_code ec, int sig) {
    if (ec) return;
    log::info("signal {}: shutting down", sig);
    shutdown();
  });
  hangup_.add(SIGHUP);
  await_hangup();
  tick_server_status();
  if (config_.diagnostics.counters) {
    alloc_counters::enable(true);
    log::info("diagnostics counters on: ns=1;s=Diagnostics.*, refreshed every {} ms",
              config::kCounterRefreshMs);
    tick_counters();
  }
  return true;
}

// The own certificate and the trust lists (docs/SECURITY.md, "Certificates and trust"): created on the
// first start, opened before any listener so that the first OPN finds them.
bool Daemon::open_pki() {
  security::PkiSettings settings = config::pki_settings(config_);
  settings.warn = [](std::string_view message) { log::warn("pki: {}", message); };
  const security::PkiOpenResult opened = pki_.open(settings);
  for (const auto& n : opened.notices) log::info("pki: {}", n);
  for (const auto& w : opened.warnings) log::warn("pki: {}", w);
  if (!opened.ok()) {
    log::error("pki: {}: {}", settings.directory.string(), opened.error);
    return false;
  }
  log::info("pki: {}; own certificate {} (SHA-1 thumbprint {}), valid until {}", settings.directory.string(),
            pki_.paths().own_certificate.string(), pki_.thumbprint_hex(),
            security::iso_time(pki_.info().not_after));
  identity_ = server_identity(pki_);
  return true;
}

bool Daemon::listen(const config::Endpoint& endpoint) {
  // The configuration has validated the URL and its security (config/loader.cpp).
  const char* reason = nullptr;
  const auto url = ua::parse_endpoint_url(endpoint.url, &reason);
  if (!url) {
    log::error("endpoint {}: {}", endpoint.url, reason);
    return false;
  }
  try {
    asio::ip::tcp::resolver resolver(control_);
    auto results =
        resolver.resolve(std::string(url->host), std::to_string(url->port),
                         asio::ip::tcp::resolver::passive | asio::ip::tcp::resolver::numeric_service);
    const asio::ip::tcp::endpoint ep = *results.begin();
    // Each endpoint's channels accept the policy and mode pairs that endpoint offers.
    auto config = std::make_unique<transport::TransportConfig>(transport_config_);
    config->security_offers = security_offers(endpoint);
    config->identity = &identity_;
    config->validate_certificate = application_certificate_validator(pki_);
    config->handshakes = handshakes_.get();
    auto l = std::make_unique<transport::Listener>(control_, ep, *shards_, *config, *services_, ids_);
    endpoint_configs_.push_back(std::move(config));
    l->start();
    // The actual port (a configured port 0 picks a free one; tests read it from this line).
    log::info("listening on {} for {}", ua::format_endpoint_url(ep.address().to_string(), l->port(), ""),
              endpoint.url);
    listeners_.push_back(std::move(l));
    return true;
  } catch (const std::system_error& e) {
    log::error("endpoint {}: cannot listen: {}", endpoint.url, e.what());
    return false;
  }
}

// The health and metrics endpoint (docs/CONFIGURATION.md, "http"), on its own thread.
bool Daemon::start_http(const config::Http& http) {
  std::string host;
  uint16_t port = 0;
  if (!config::split_listen_address(http.listen, host, port)) {  // the loader checked it already
    log::error("http: cannot parse listen address {}", http.listen);
    return false;
  }
  version_ = std::string(build_info().software_version.view());
  const metrics::Sources sources{*shards_, *services_, daemon_counters_, started_at_, version_};
  http_ = std::make_unique<HttpServer>(
      HttpServer::Limits{http.max_connections, http.max_request_bytes,
                         std::chrono::milliseconds(http.request_timeout_ms)},
      metrics::http_routes(sources, std::chrono::milliseconds(http.health_max_age_ms)));
  if (const auto failed = http_->start(host, port)) {
    log::error("http: cannot listen on {}: {}", http.listen, *failed);
    return false;
  }
  // The actual port (tests configure port 0 and read it from this line).
  log::info("http: /healthz and /metrics on {}:{}", http_->endpoint().address().to_string(), http_->port());
  return true;
}

// logrotate and its kin rename the file and send SIGHUP; later lines go to a new file at the old path.
void Daemon::await_hangup() {
  hangup_.async_wait([this](std::error_code ec, int) {
    if (ec || stopped_) return;
    if (const auto failed = log::reopen()) {
      log::error("SIGHUP: {}; still writing to the previous file", *failed);
    } else {
      log::info("SIGHUP: log file reopened");
    }
    log::info("SIGHUP: {}", pki_.reload());
    await_hangup();
  });
}

void Daemon::tick_server_status() {
  if (stopped_) return;
  // ServerStatus.CurrentTime needs no tick: it is a computed cell (addressspace/server_object.hpp).
  // ServerDiagnosticsSummary (Part 5 §12.9): the sums of the per-shard counters, as /metrics shows them.
  const ua::ServerDiagnosticsSummaryDataType summary = metrics::diagnostics_summary(*shards_, *services_);
  if (!(summary == last_summary_)) {
    addressspace::update_server_diagnostics(*space_.current(), space_.values(), *control_participant_, summary);
    last_summary_ = summary;
  }
  space_.reclaimer().quiescent(*control_participant_);
  status_timer_.expires_after(std::chrono::seconds(1));
  status_timer_.async_wait([this](std::error_code ec) {
    if (!ec) tick_server_status();
  });
}

// The counters of config diagnostics.counters, all written with one timestamp so that one Read of them is
// one snapshot. Heap allocations come from the operator new hook, the rest from the shards' statistics.
void Daemon::tick_counters() {
  if (stopped_) return;
  using addressspace::DiagnosticCounter;
  addressspace::CounterValues v{};
  auto at = [&v](DiagnosticCounter c) -> uint64_t& { return v[static_cast<size_t>(c)]; };
  const alloc_counters::Totals heap = alloc_counters::totals();
  at(DiagnosticCounter::HeapAllocations) = heap.allocations;
  at(DiagnosticCounter::HeapBytesAllocated) = heap.bytes;
  for (size_t i = 0; i < shards_->size(); ++i) {
    const transport::TransportStats& s = shards_->shard(i).stats();
    at(DiagnosticCounter::RequestsReceived) += s.requests.load(std::memory_order_relaxed);
    at(DiagnosticCounter::MessagesSent) += s.messages_sent.load(std::memory_order_relaxed);
    at(DiagnosticCounter::ChunksSent) += s.chunks_sent.load(std::memory_order_relaxed);
    at(DiagnosticCounter::WriteCalls) += s.write_calls.load(std::memory_order_relaxed);
    at(DiagnosticCounter::BytesSent) += s.bytes_sent.load(std::memory_order_relaxed);
  }
  if (services_) {
    const auto late = services_->sampling_lateness();
    at(DiagnosticCounter::SampledItems) = late[0];
    at(DiagnosticCounter::SampledLate250us) = late[1];
    at(DiagnosticCounter::SampledLate1ms) = late[2];
    at(DiagnosticCounter::SampledLate5ms) = late[3];
  }
  counters_.publish(*space_.current(), space_.values(), *control_participant_, v, ua::DateTime::now());
  counters_timer_.expires_after(std::chrono::milliseconds(static_cast<int>(config::kCounterRefreshMs)));
  counters_timer_.async_wait([this](std::error_code ec) {
    if (!ec) tick_counters();
  });
}

int Daemon::run() {
  control_.run();
  return 0;
}

void Daemon::shutdown() {
  if (stopped_) return;
  stopped_ = true;
  status_timer_.cancel();
  counters_timer_.cancel();
  asio::error_code ignored;
  signals_.cancel(ignored);
  hangup_.cancel(ignored);
  for (auto& l : listeners_) l->stop();  // stop accepting first
  if (http_) http_->stop();              // it reads the shards' counters
  // Handshakes in progress finish (their results are posted to shards that still run), queued ones are
  // dropped with their channels.
  if (handshakes_) handshakes_->stop();
  if (shards_) {
    if (simulator_) asio::post(shards_->shard(0).context(), [s = simulator_.get()] { s->stop(); });
    if (services_) services_->detach_shards();
    shards_->stop();  // closes every connection on its shard, then joins the threads
  }
  if (control_participant_) space_.reclaimer().go_offline(*control_participant_);
  log::info("stopped");
}

}  // namespace opcuad
