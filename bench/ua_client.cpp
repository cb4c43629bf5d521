#include "bench/ua_client.hpp"

#include "bench/blocking_client.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>

#include "transport/uatcp.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::bench {

namespace {

using transport::MessageType;
using Clock = std::chrono::steady_clock;

}  // namespace

bool parse_loopback_url(std::string_view url, Endpoint& out, std::string& error) {
  constexpr std::string_view kScheme = "opc.tcp://";
  if (!url.starts_with(kScheme)) {
    error = "the URL must start with opc.tcp://";
    return false;
  }
  std::string_view rest = url.substr(kScheme.size());
  if (auto slash = rest.find('/'); slash != std::string_view::npos) rest = rest.substr(0, slash);
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) {
    error = "the URL needs a port";
    return false;
  }
  const std::string_view host = rest.substr(0, colon);
  if (host != "127.0.0.1" && host != "localhost") {
    error = "only loopback targets (127.0.0.1) are allowed";
    return false;
  }
  unsigned port = 0;
  auto port_text = rest.substr(colon + 1);
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    error = "bad port in the URL";
    return false;
  }
  out.port = static_cast<uint16_t>(port);
  out.url = "opc.tcp://127.0.0.1:" + std::to_string(port);
  return true;
}

bool attach_security(Endpoint& endpoint, const std::filesystem::path& server_dir, std::string& error,
                     const SecuritySettings& s) {
  DiscoveredEndpoint discovered;
  if (!discover_endpoint(endpoint, s, discovered, error)) return false;
  endpoint.anonymous_policy_id = discovered.anonymous_policy_id;
  if (!s.secured()) return true;
  std::vector<uint8_t> der;
  if (!server_dir.empty()) {
    der = generated_server_certificate(server_dir);
  } else if (!s.server_certificate_file.empty()) {
    std::ifstream in(s.server_certificate_file, std::ios::binary);
    der.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    der = std::move(discovered.server_certificate);
  }
  if (der.empty()) {
    error =
        "no server certificate to open a secured channel with (GetEndpoints returned none; give "
        "--server-certificate FILE)";
    return false;
  }
  endpoint.security = make_server_security(s, std::move(der), error);
  return endpoint.security != nullptr;
}

// ---- LoadConnection

LoadConnection::LoadConnection(asio::io_context& ctx, const Workload& workload, LoadStats& stats,
                               const std::atomic<int>& phase)
    : WireClient(ctx), timer_(ctx), workload_(workload), stats_(stats), phase_(phase) {}

void LoadConnection::start(const SessionInfo& session, uint32_t inflight, Clock::duration pace) {
  this->session() = session;
  inflight_ = inflight == 0 ? 1 : inflight;
  pace_ = pace;
  if (pace_.count() != 0) inflight_ = 1;
  handle_offset_ = workload_.encode_request(session.authentication_token, request_);
  if (workload_.alternates())
    workload_.encode_request(session.authentication_token, alternate_request_, true);
  if (request_.size() > session.chunk_room()) {
    // One request per chunk keeps the client simple; Read of a few thousand nodes still fits 64 KiB.
    fail("request of " + std::to_string(request_.size()) + " bytes does not fit one chunk");
    return;
  }
  generation_.assign(inflight_, 0);
  sent_at_.assign(inflight_, Clock::time_point{});
  const size_t overhead = transport::kSymmetricPrefix + (session.crypto ? session.crypto->max_overhead() : 0);
  reserve_output(inflight_ * (request_.size() + overhead));
  for (uint32_t slot = 0; slot < inflight_; ++slot) send_request(slot);
  start_wire();
}

void LoadConnection::send_request(uint32_t slot) {
  const uint32_t request_id = slot + inflight_ * ++generation_[slot];
  // Alternating requests go out in turn on the connection, which the server handles in order.
  ua::ByteBuffer& request = workload_.alternates() && (sends_++ & 1) ? alternate_request_ : request_;
  put_u32(request.data() + handle_offset_, request_id);
  sent_at_[slot] = Clock::now();
  if (!append_chunk(outgoing(), MessageType::Message, 'F', session(), request_id, request.span()))
    return fail("cannot seal a request");
  ++outstanding_;
}

void LoadConnection::begin_batch() {
  batch_time_ = Clock::now();
}

void LoadConnection::end_batch() {
  if (outstanding_ == 0 && phase_.load(std::memory_order_relaxed) == static_cast<int>(Phase::Stop)) finish();
}

void LoadConnection::on_server_error(const transport::ErrorMessage& err) {
  ++stats_.errors.service[err.error.value()];
}

void LoadConnection::on_message(const MessageChunk& m) {
  // Part 6 §6.7.2.4: the server's sequence numbers go up by exactly one per chunk.
  if (expected_sequence_ != 0 && m.sequence != expected_sequence_)
    ++stats_.transport_errors["sequence number gap"];
  expected_sequence_ = m.sequence + 1;
  if (phase_.load(std::memory_order_relaxed) == static_cast<int>(Phase::Measure))
    stats_.response_bytes += m.size;
  if (m.chunk_type == 'C') return;
  if (m.chunk_type == 'A') {
    ++stats_.transport_errors["aborted response"];
    return handle_response(m.request_id, {}, batch_time_);
  }
  handle_response(m.request_id, m.message, batch_time_);
}

void LoadConnection::handle_response(uint32_t request_id, std::span<const uint8_t> body,
                                     Clock::time_point now) {
  const uint32_t slot = request_id % inflight_;
  if (outstanding_ == 0 || request_id / inflight_ != generation_[slot]) {
    ++stats_.transport_errors["response to no outstanding request"];
    return;
  }
  --outstanding_;
  const int phase = phase_.load(std::memory_order_relaxed);
  if (!body.empty()) {
    ua::Decoder d(body);
    ua::NodeId type;
    ua::decode(d, type);
    const uint32_t type_id =
        type.namespace_index() == 0 && type.type() == ua::IdType::Numeric ? type.numeric() : 0;
    ResponseSummary s = workload_.check_response(type_id, d, stats_.errors);
    if (s.good && s.request_handle != request_id) ++stats_.transport_errors["request handle mismatch"];
    if (s.good && s.bad_operations == 0 && sample_.empty()) sample_.assign(body.begin(), body.end());
    const auto latency = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - sent_at_[slot]).count());
    if (phase == static_cast<int>(Phase::Measure)) {
      ++stats_.requests;
      stats_.operations += s.good ? s.operations : 0;
      stats_.references += s.references;
      stats_.latency.record(latency);
    } else if (phase >= kFirstWindow && static_cast<size_t>(phase - kFirstWindow) < stats_.windows.size()) {
      auto& w = stats_.windows[static_cast<size_t>(phase - kFirstWindow)];
      ++w.requests;
      w.latency.record(latency);
    }
  }
  stats_.completed.store(stats_.completed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (phase == static_cast<int>(Phase::Stop)) return;
  if (pace_.count() == 0) return send_request(slot);
  // Paced (one request in flight): the next one leaves one interval after this one did.
  timer_.expires_at(std::max(sent_at_[slot] + pace_, now));
  timer_.async_wait([this, slot](const asio::error_code& ec) {
    if (ec || wire_closed()) return;
    if (phase_.load(std::memory_order_relaxed) == static_cast<int>(Phase::Stop)) {
      if (outstanding_ == 0) finish();
      return;
    }
    send_request(slot);
    flush();
  });
}

void LoadConnection::fail(const std::string& what) {
  if (wire_closed()) return;
  ++stats_.transport_errors[what];
  finish();
}

void LoadConnection::finish() {
  if (wire_closed()) return;
  timer_.cancel();
  close_wire();
  finished_.store(true, std::memory_order_release);
}

void LoadConnection::force_close() noexcept {
  if (wire_closed()) return;
  if (outstanding_ > 0) stats_.transport_errors["unanswered at the end of the run"] += outstanding_;
  finish();
}

}  // namespace opcuad::bench
