#include "daemon/daemon.hpp"

#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>

#include <csignal>
#include <cstdlib>

#include "addressspace/server_object.hpp"
#include "config/address_space_loader.hpp"
#include "config/pki_settings.hpp"
#include "config/reload_settings.hpp"
#include "config/transport_settings.hpp"
#include "daemon/alloc_counters.hpp"
#include "daemon/build_info.hpp"
#include "daemon/channel_security.hpp"
#include "daemon/condition_state_file.hpp"
#include "daemon/log.hpp"
#include "services/event_record.hpp"
#include "ua/endpoint_url.hpp"

namespace opcuad {

namespace {

transport::TransportConfig transport_config(const config::ServerConfig& c) {
  transport::TransportConfig t = config::transport_settings(c);
  t.warn = [](std::string_view message) { log::warn("transport: {}", message); };
  return t;
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "signal";
  }
}

}  // namespace

Daemon::Daemon(const config::ServerConfig& config)
    : config_(config),
      events_(RateLimiter::Limits{config.logging.rate_limit_burst,
                                  std::chrono::seconds(config.logging.rate_limit_window_s)}),
      transport_config_(transport_config(config)),
      notifier_(Notifier::from_environment()) {
  transport_config_.events = [this](const transport::Event& e) { events_.write(e); };
}

Daemon::~Daemon() {
  stop_now();
}

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
      config_.threads,
      transport::ShardScheduling{config_.scheduling.pin_shards, config_.scheduling.realtime_priority});
  if (!open_pki()) return false;
  services_ = std::make_unique<services::Server>(space_, config_);
  diagnostic_arrays_ = std::make_unique<services::DiagnosticsRefresher>(*services_, space_, control_);
  services_->set_role_table(std::move(roles));
  // The server's certificate for session signatures and encrypted passwords, and the user trust list for
  // X509 identity tokens (docs/SECURITY.md).
  services_->set_identity(&identity_);
  services_->set_user_certificate_validator(certificate_validator(pki_, security::CertificateUse::User));
  for (const auto& w : config::security_warnings(config_)) log::warn("security: {}", w);
  if (const auto problems = services_->security_problems(); !problems.empty()) {
    for (const auto& p : problems) log::error("security: {}", p);
    return false;
  }
  services_->set_events(transport_config_.events);
  for (size_t i = 0; i < shards_->size(); ++i) services_->attach_shard(shards_->shard(i).context());
  // The alarms as they were (the state file), then judged on their inputs' start values, before any client
  // can see them.
  restore_conditions();
  services_->evaluate_all_alarms(*control_participant_);
  simulator_ = std::make_unique<Simulator>(shards_->shard(0).context(), space_, config_, *services_);
  // One heartbeat per shard serves /healthz, the metrics and the systemd watchdog. With a watchdog, at
  // least four beats per ping interval, so a healthy shard is never mistaken for a stuck one.
  watchdog_ = watchdog_interval_from_environment();
  if (watchdog_) {
    shards_->set_heartbeat_interval(std::min<std::chrono::milliseconds>(
        transport::kHeartbeatInterval,
        std::chrono::duration_cast<std::chrono::milliseconds>(*watchdog_ / 4)));
  }
  for (const auto& problem : shards_->start()) log::warn("scheduling: {}", problem);
  simulator_->start();
  log::info("{} shard(s); {} simulated variable(s)", shards_->size(), simulator_->variable_count());

  // RSA work of secure channel handshakes, off the shard threads (docs/SECURITY.md, "Secure conversation").
  const uint32_t handshake_threads = config_.connections.handshake_threads
                                         ? config_.connections.handshake_threads
                                         : std::max(1u, std::thread::hardware_concurrency() / 2);
  handshakes_ = std::make_unique<transport::HandshakePool>(handshake_threads,
                                                           config_.connections.max_queued_handshakes);
  services_->set_crypto_pool(handshakes_.get());  // CreateSession's signature, encrypted passwords
  log::info("handshake pool: {} thread(s) at nice {}, at most {} queued", handshakes_->threads(),
            transport::HandshakePool::kNice, handshakes_->max_queued());
  // Signals first: one that comes as soon as the port is open (and logged) is then handled, not fatal.
  signals_.add(SIGINT);
  signals_.add(SIGTERM);
  await_signal();
  hangup_.add(SIGHUP);
  for (const auto& e : config_.endpoints) {
    if (!listen(e)) return false;
  }
  if (config_.http && !start_http(*config_.http)) return false;
  await_hangup();
  if (config_.diagnostics.enabled) {
    log::info(
        "diagnostics on: ServerDiagnostics.EnabledFlag TRUE, session and subscription arrays refreshed every "
        "1 s");
  }
  tick_server_status();
  if (config_.diagnostics.counters) {
    alloc_counters::enable(true);
    log::info("diagnostics counters on: ns=1;s=Diagnostics.*, refreshed every {} ms",
              config::kCounterRefreshMs);
    tick_counters();
  }
  watch_certificate_expiry();
  start_supervision();
  // Offline between the control thread's turns: each handler that reads values is online for its own
  // run (OnlineScope), so the thread never holds the epoch back for a second.
  space_.reclaimer().go_offline(*control_participant_);
  return true;
}

// A daemon runs for months: the warning ahead of the own certificate's end (logged by the PKI at start)
// repeats once a day, so it reaches the journal while there is time to renew.
void Daemon::watch_certificate_expiry() {
  certificate_timer_.expires_after(std::chrono::hours(24));
  certificate_timer_.async_wait([this](std::error_code ec) {
    if (ec) return;
    const std::string w = security::expiry_warning(pki_.info().not_after, std::chrono::system_clock::now());
    if (!w.empty()) log::warn("pki: {}", w);
    watch_certificate_expiry();
  });
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
    config->validate_certificate = certificate_validator(pki_, security::CertificateUse::Application);
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
  const metrics::Sources sources{*shards_,    *services_, daemon_counters_,
                                 started_at_, version_,   pki_.info().not_after};
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
    if (ec || phase_ == Phase::Stopped) return;
    if (phase_ != Phase::Running) return await_hangup();  // shutting down: nothing to reload
    // systemd 253+ (Type=notify-reload) waits for RELOADING=1 with the time, then READY=1.
    notifier_.send("RELOADING=1\n" + monotonic_usec_line());
    if (const auto failed = log::reopen()) {
      log::error("SIGHUP: {}; still writing to the previous file", *failed);
    } else {
      log::info("SIGHUP: log file reopened");
    }
    log::info("SIGHUP: {}", pki_.reload());
    (void)reload_configuration();  // success or not, the server keeps serving: READY=1 either way
    notifier_.send("READY=1\n" + status_line());
    await_hangup();
  });
}

bool Daemon::reload_configuration() {
  const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *control_participant_);
  if (reload_source_.server_file.empty()) {
    log::info("event=reload.skipped reason=\"built-in configuration, no server file to read again\"");
    return false;
  }
  const std::string file = reload_source_.server_file.string();
  config::LoadResult loaded = config::load_config(reload_source_.server_file);
  std::vector<config::ConfigError> errors = std::move(loaded.errors);
  config::ReloadOutcome outcome;
  if (errors.empty()) {
    outcome = config::reload_address_space(*nodes_config_, loaded.config, space_, *control_participant_);
    errors = std::move(outcome.errors);
  }
  if (!errors.empty()) {
    for (const auto& e : errors) log::error("event=reload.error {}", e.to_string());
    daemon_counters_.reload_failures.fetch_add(1, std::memory_order_relaxed);
    log::error("event=reload.failed file={} errors={} (the running configuration keeps serving)", file,
               errors.size());
    return false;
  }
  const config::ServerConfig& next = loaded.config;
  for (const auto& setting : config::restart_only_changes(config_, next)) {
    log::warn("event=reload.needs_restart setting={} (the running value stays until a restart)", setting);
  }
  if (next.logging.level != file_log_level_) {
    if (reload_source_.log_level_from_command_line) {
      log::warn(
          "event=reload.not_applied setting=logging.level value={} (--log-level on the command line wins)",
          next.logging.level);
    } else if (const auto level = log::parse_level(next.logging.level)) {
      log::set_level(*level);
      log::info("event=reload.applied setting=logging.level value={}", next.logging.level);
    }
    file_log_level_ = next.logging.level;
  }
  reloaded_ = std::make_unique<config::ServerConfig>(std::move(loaded.config));
  nodes_config_ = reloaded_.get();
  // The simulated variables of the new store, from the new node files (removed ones stop, new ones start).
  const size_t simulated = simulator_ ? simulator_->rewire(*nodes_config_) : 0;
  daemon_counters_.reloads.fetch_add(1, std::memory_order_relaxed);
  // Clients that show the address space learn what changed (Part 3 §9.32): null when nothing has a verb.
  services_->raise_event(services::model_change_event(*space_.current(), outcome.changes));
  // Alarms keep their state by NodeId; changed limits judge the inputs anew.
  services_->evaluate_all_alarms(*control_participant_);
  save_conditions(false);
  log::info("event=reload.done file={} nodes={} added={} removed={} changed={} values_reset={} simulated={}",
            file, outcome.nodes, outcome.diff.added, outcome.diff.removed, outcome.diff.changed,
            outcome.values_reset, simulated);
  return true;
}

void Daemon::restore_conditions() {
  const addressspace::ConditionSpecs* specs = space_.current()->condition_specs();
  if (!specs || specs->size() == 0) return;
  const auto& path = config_.condition_state_file;
  condition_state::ReadResult r = condition_state::read(path, config_.application_uri);
  switch (r.outcome) {
    case condition_state::ReadResult::Outcome::Missing:
      log::info("event=state.none file={} (the alarms start as configured)", path.string());
      break;
    case condition_state::ReadResult::Outcome::Ignored:
      log::warn("event=state.ignored file={} reason=\"{}\" (the alarms start as configured)", path.string(),
                r.reason);
      break;
    case condition_state::ReadResult::Outcome::Loaded: {
      const size_t applied = condition_state::restore(*space_.current(), r.records);
      log::info("event=state.loaded file={} conditions={} records={}", path.string(), applied,
                r.records.size());
      break;
    }
  }
}

void Daemon::save_conditions(bool spaced) {
  const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *control_participant_);
  if (!services_) return;
  const uint64_t changes = services_->condition_changes();
  if (changes == condition_changes_saved_) return;
  const auto start = std::chrono::steady_clock::now();
  if (spaced && start < next_condition_save_) return;  // written at a later tick
  const addressspace::NodeStore* store = space_.current();
  if (!store || !store->condition_specs()) return;
  const auto records = condition_state::collect(*store);
  const std::string failed =
      condition_state::write(config_.condition_state_file, config_.application_uri, records);
  next_condition_save_ = start + condition_state::write_spacing(std::chrono::steady_clock::now() - start);
  // On failure too: tried again at the next change, the live state is unaffected.
  if (!failed.empty()) log::error("event=state.write_failed {}", failed);
  condition_changes_saved_ = changes;
}

void Daemon::tick_server_status() {
  const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *control_participant_);
  if (phase_ == Phase::Stopped) return;
  // ServerStatus.CurrentTime needs no tick: it is a computed cell (addressspace/server_object.hpp).
  // ServerDiagnosticsSummary (Part 5 §12.9): the sums of the per-shard counters, as /metrics shows them.
  const ua::ServerDiagnosticsSummaryDataType summary = metrics::diagnostics_summary(*shards_, *services_);
  if (!(summary == last_summary_)) {
    addressspace::update_server_diagnostics(*space_.current(), space_.values(), *control_participant_,
                                            summary);
    last_summary_ = summary;
  }
  if (diagnostic_arrays_) diagnostic_arrays_->tick(*control_participant_);
  save_conditions(true);
  events_.flush();  // "suppressed" lines of the rate-limit windows that ended
  status_timer_.expires_after(std::chrono::seconds(1));
  status_timer_.async_wait([this](std::error_code ec) {
    if (!ec) tick_server_status();
  });
}

// The counters of config diagnostics.counters, all written with one timestamp so that one Read of them is
// one snapshot. Heap allocations come from the operator new hook, the rest from the shards' statistics.
void Daemon::tick_counters() {
  const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *control_participant_);
  if (phase_ == Phase::Stopped) return;
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

void Daemon::await_signal() {
  signals_.async_wait([this](std::error_code ec, int sig) {
    if (ec) return;
    if (phase_ == Phase::Running) {
      await_signal();  // a second signal ends the countdown (stop_now() cancels the wait)
      begin_shutdown(sig);
    } else if (phase_ == Phase::Draining) {
      log::info("event=shutdown.now signal={} seconds_left={}", signal_name(sig), seconds_left_);
      close_clients();
    }
  });
}

void Daemon::begin_shutdown(int sig) {
  phase_ = Phase::Draining;
  shutdown_reason_ = fmt::format("The server is shutting down ({})", signal_name(sig));
  for (auto& l : listeners_) l->stop();  // no new clients while the present ones leave
  // Part 5 §12.10: the shutdown is delayed "if Clients are connected"; with none there is nobody to wait for.
  const uint32_t connections = shards_->connections().load(std::memory_order_relaxed);
  seconds_left_ = connections == 0 ? 0 : config_.shutdown.grace_period_s;
  notifier_.send("STOPPING=1\n" + status_line());
  log::info("event=shutdown.started signal={} grace_period_s={} connections={} sessions={} subscriptions={}",
            signal_name(sig), seconds_left_, connections, services_->session_count(),
            services_->subscription_count());
  raise_system_status(ua::ServerState::Shutdown, 900, shutdown_reason_);
  count_down();
}

void Daemon::raise_system_status(ua::ServerState state, uint16_t severity, const std::string& message) {
  const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *control_participant_);
  // Null (ignored) for a store without namespace 0's event types.
  services_->raise_event(services::system_status_event(*space_.current(), state, severity, message));
}

// Part 5 §12.10: SecondsTillShutdown is "approximate"; it is rewritten once a second, so a client that
// reads or monitors it sees it fall to 0. The ServerStatus structure follows (set_server_state).
void Daemon::count_down() {
  const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *control_participant_);
  if (phase_ != Phase::Draining) return;
  addressspace::set_server_state(*space_.current(), space_.values(), *control_participant_,
                                 ua::ServerState::Shutdown, seconds_left_,
                                 ua::LocalizedText{"en", shutdown_reason_});
  notifier_.send(status_line());
  const bool connected = shards_->connections().load(std::memory_order_relaxed) != 0;
  if (seconds_left_ > 0 && !connected) {
    log::info("event=shutdown.clients_gone seconds_left={}", seconds_left_);  // the last one left in time
    return close_clients();
  }
  if (seconds_left_ == 0) {
    if (config_.shutdown.grace_period_s == 0 || !connected) return close_clients();
    // The final 0 stays up for kLastPublish, so that subscriptions carry it before the sessions close.
    shutdown_timer_.expires_after(kLastPublish);
    shutdown_timer_.async_wait([this](std::error_code ec) {
      if (!ec) close_clients();
    });
    return;
  }
  --seconds_left_;
  shutdown_timer_.expires_after(std::chrono::seconds(1));
  shutdown_timer_.async_wait([this](std::error_code ec) {
    if (!ec) count_down();
  });
}

void Daemon::close_clients() {
  if (phase_ != Phase::Draining) return;
  phase_ = Phase::Closing;
  shutdown_timer_.cancel();
  log::info("event=shutdown.closing sessions={} connections={}", services_->session_count(),
            shards_->connections().load(std::memory_order_relaxed));
  // Posted in this order to every shard: the Publish answers are queued before the ERR.
  services_->end_sessions(ua::status::BadShutdown);
  shards_->close_connections(ua::status::BadServerHalted, "the server is shutting down");
  await_closed(std::chrono::steady_clock::now() + kCloseTimeout);
}

void Daemon::await_closed(std::chrono::steady_clock::time_point deadline) {
  const uint32_t open = shards_->connections().load(std::memory_order_relaxed);
  if (open == 0 || std::chrono::steady_clock::now() >= deadline) {
    if (open != 0) log::warn("event=shutdown.timeout connections={} (closed without waiting)", open);
    return stop_now();
  }
  shutdown_timer_.expires_after(std::chrono::milliseconds(20));
  shutdown_timer_.async_wait([this, deadline](std::error_code ec) {
    if (!ec) await_closed(deadline);
  });
}

void Daemon::stop_now() {
  if (phase_ == Phase::Stopped) return;
  phase_ = Phase::Stopped;
  if (diagnostic_arrays_) diagnostic_arrays_->stop();
  status_timer_.cancel();
  counters_timer_.cancel();
  certificate_timer_.cancel();
  shutdown_timer_.cancel();
  watchdog_timer_.cancel();
  notify_status_timer_.cancel();
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
    shards_->stop();  // closes every connection still open on its shard, then joins the threads
  }
  if (services_) save_conditions(false);  // nothing changes them any more
  if (control_participant_) space_.reclaimer().go_offline(*control_participant_);
  log::info("stopped");
}

// Supervision by the service manager, on the shards' heartbeats (transport/shard_heartbeat.hpp, set up in
// start()).
void Daemon::start_supervision() {
  notifier_.send("READY=1\n" + status_line());
  // Every listener listens: the server is Running (Part 5 §12.6), told to event items on the Server object.
  raise_system_status(ua::ServerState::Running, 100, "The server is running");
  if (notifier_.active()) {
    log::info("event=notify.ready socket={} watchdog_usec={}", std::getenv("NOTIFY_SOCKET"),
              watchdog_ ? watchdog_->count() : 0);
  }
  if (watchdog_) tick_watchdog();
  if (notifier_.active()) tick_notify_status();
}

// WATCHDOG=1 every half interval (sd_watchdog_enabled(3) advises pinging at half of it), and only while
// every shard has beaten within that half: a shard stuck in a handler stops the pings, so systemd
// restarts the service; the control loop stuck stops them too.
void Daemon::tick_watchdog() {
  if (phase_ == Phase::Stopped || !watchdog_) return;
  const auto half = *watchdog_ / 2;
  if (const auto stale = shards_->stale_shard(half)) {
    if (!watchdog_stalled_) {
      const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(stale->age);
      log::error("event=watchdog.stalled shard={} last_beat_ms={} (no WATCHDOG=1 until it turns again)",
                 stale->shard, age.count());
    }
    watchdog_stalled_ = true;
  } else {
    if (watchdog_stalled_) log::warn("event=watchdog.resumed");
    watchdog_stalled_ = false;
    notifier_.send("WATCHDOG=1");
  }
  watchdog_timer_.expires_after(half);
  watchdog_timer_.async_wait([this](std::error_code ec) {
    if (!ec) tick_watchdog();
  });
}

void Daemon::tick_notify_status() {
  if (phase_ == Phase::Stopped) return;
  notifier_.send(status_line());
  notify_status_timer_.expires_after(std::chrono::seconds(2));
  notify_status_timer_.async_wait([this](std::error_code ec) {
    if (!ec) tick_notify_status();
  });
}

std::string Daemon::status_line() const {
  const uint32_t sessions = services_ ? services_->session_count() : 0;
  const uint32_t subscriptions = services_ ? services_->subscription_count() : 0;
  const uint32_t connections = shards_ ? shards_->connections().load(std::memory_order_relaxed) : 0;
  switch (phase_) {
    case Phase::Running:
      return fmt::format("STATUS=serving: {} connection(s), {} session(s), {} subscription(s)", connections,
                         sessions, subscriptions);
    case Phase::Draining:
      return fmt::format("STATUS=shutting down in {} s: {} connection(s), {} session(s), {} subscription(s)",
                         seconds_left_, connections, sessions, subscriptions);
    default:
      return fmt::format("STATUS=shutting down: closing {} connection(s)", connections);
  }
}

}  // namespace opcuad
