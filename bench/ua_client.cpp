#include "bench/ua_client.hpp"

#include "bench/blocking_client.hpp"

#include <asio/buffer.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
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
    error = "no server certificate to open a secured channel with (GetEndpoints returned none; give "
            "--server-certificate FILE)";
    return false;
  }
  endpoint.security = make_server_security(s, std::move(der), error);
  return endpoint.security != nullptr;
}

// ---- LoadConnection

LoadConnection::LoadConnection(asio::io_context& ctx, const Workload& workload, LoadStats& stats,
                               const std::atomic<int>& phase)
    : ctx_(ctx), socket_(ctx), timer_(ctx), workload_(workload), stats_(stats), phase_(phase) {}

void LoadConnection::start(const SessionInfo& session, uint32_t inflight, Clock::duration pace) {
  session_ = session;
  inflight_ = inflight == 0 ? 1 : inflight;
  pace_ = pace;
  if (pace_.count() != 0) inflight_ = 1;
  handle_offset_ = workload_.encode_request(session_.authentication_token, request_);
  if (request_.size() > session_.chunk_room()) {
    // One request per chunk keeps the client simple; Read of a few thousand nodes still fits 64 KiB.
    fail("request of " + std::to_string(request_.size()) + " bytes does not fit one chunk");
    return;
  }
  generation_.assign(inflight_, 0);
  sent_at_.assign(inflight_, Clock::time_point{});
  rx_.allocate(kReadSize);
  const size_t overhead =
      transport::kSymmetricPrefix + (session_.crypto ? session_.crypto->max_overhead() : 0);
  pending_.reserve(inflight_ * (request_.size() + overhead));
  writing_.reserve(pending_.capacity());
  for (uint32_t slot = 0; slot < inflight_; ++slot) send_request(slot);
  flush();
  do_read();
}

void LoadConnection::send_request(uint32_t slot) {
  const uint32_t request_id = slot + inflight_ * ++generation_[slot];
  put_u32(request_.data() + handle_offset_, request_id);
  sent_at_[slot] = Clock::now();
  if (!append_chunk(pending_, MessageType::Message, 'F', session_, request_id, request_.span()))
    return fail("cannot seal a request");
  ++outstanding_;
}

void LoadConnection::flush() {
  if (write_in_flight_ || pending_.size() == 0 || closed_) return;
  std::swap(pending_, writing_);
  pending_.clear();
  write_in_flight_ = true;
  asio::async_write(socket_, asio::buffer(writing_.data(), writing_.size()),
                    [this](const asio::error_code& ec, size_t) {
                      write_in_flight_ = false;
                      writing_.clear();
                      if (ec) return fail("write: " + ec.message());
                      flush();
                    });
}

void LoadConnection::do_read() {
  if (closed_) return;
  const auto space = rx_.space();
  socket_.async_read_some(asio::buffer(space.data(), space.size()),
                          [this](const asio::error_code& ec, size_t n) {
                            if (ec) {
                              if (!closed_) fail("read: " + ec.message());
                              return;
                            }
                            on_read(n);
                          });
}

void LoadConnection::on_read(size_t n) {
  rx_.commit(n);
  // One clock read per batch: responses that arrive together completed together as far as we can see.
  const auto now = Clock::now();
  std::span<uint8_t> chunk;
  for (transport::ParseResult r; (r = rx_.next(chunk)) != transport::ParseResult::NeedMore;) {
    if (r == transport::ParseResult::Bad) return fail("implausible chunk size");
    if (!handle_chunk(chunk, now)) return;
  }
  if (outstanding_ == 0 && phase_.load(std::memory_order_relaxed) == static_cast<int>(Phase::Stop))
    return finish();
  flush();
  do_read();
}

bool LoadConnection::handle_chunk(std::span<uint8_t> chunk, Clock::time_point now) {
  const uint32_t word = get_u32(chunk.data());
  const auto type = static_cast<MessageType>(word & 0xFFFFFF);
  const auto chunk_type = static_cast<char>(word >> 24);
  if (type == MessageType::Error) {
    transport::ErrorMessage err;
    std::string what;
    if (read_error(chunk.subspan(transport::kHeaderSize), err, what))
      ++stats_.errors.service[err.error.value()];
    fail(what);
    return false;
  }
  if (type != MessageType::Message || chunk.size() < transport::kSymmetricPrefix) {
    fail("unexpected message type from the server");
    return false;
  }
  // Decrypted and verified in place first on a secured channel: the sequence header is inside.
  std::span<const uint8_t> body;
  if (!open_chunk(session_, chunk, body)) {
    fail("a response chunk failed its security checks");
    return false;
  }
  // Part 6 §6.7.2.4: the server's sequence numbers go up by exactly one per chunk.
  const uint32_t sequence = get_u32(chunk.data() + 16);
  if (expected_sequence_ != 0 && sequence != expected_sequence_)
    ++stats_.transport_errors["sequence number gap"];
  expected_sequence_ = sequence + 1;
  const uint32_t request_id = get_u32(chunk.data() + 20);
  if (phase_.load(std::memory_order_relaxed) == static_cast<int>(Phase::Measure))
    stats_.response_bytes += chunk.size();
  if (chunk_type == 'C') {
    reassembly_.insert(reassembly_.end(), body.begin(), body.end());
    return true;
  }
  if (chunk_type == 'A') {
    reassembly_.clear();
    ++stats_.transport_errors["aborted response"];
    handle_response(request_id, {}, now);
    return !closed_;
  }
  if (!reassembly_.empty()) {
    reassembly_.insert(reassembly_.end(), body.begin(), body.end());
    handle_response(request_id, reassembly_, now);
    reassembly_.clear();
  } else {
    handle_response(request_id, body, now);
  }
  return !closed_;
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
    if (ec || closed_) return;
    if (phase_.load(std::memory_order_relaxed) == static_cast<int>(Phase::Stop)) {
      if (outstanding_ == 0) finish();
      return;
    }
    send_request(slot);
    flush();
  });
}

void LoadConnection::fail(const std::string& what) {
  if (closed_) return;
  ++stats_.transport_errors[what];
  finish();
}

void LoadConnection::finish() {
  if (closed_) return;
  closed_ = true;
  asio::error_code ec;
  timer_.cancel();
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  finished_.store(true, std::memory_order_release);
}

void LoadConnection::force_close() noexcept {
  if (closed_) return;
  if (outstanding_ > 0) stats_.transport_errors["unanswered at the end of the run"] += outstanding_;
  finish();
}

}  // namespace opcuad::bench
