#pragma once
// A minimal OPC UA binary client for the load harness: SecurityPolicy None or a signed (and encrypted)
// channel (client_security.hpp), anonymous sessions, pipelined requests. It is built for measuring a server,
// so the request path does as little as it can: each connection encodes its request once and only patches the
// request handle and the chunk header per send; responses are decoded into reused objects (no allocation once
// warm), and many requests queued in one loop turn go out in one write.
//
// Setup is blocking (open_session, in blocking_client.hpp), the load phase is asynchronous on one
// io_context per client thread (the chunk loop in wire_client.hpp).
//
// shard-local: a LoadConnection and the LoadStats it writes belong to the thread running its io_context.

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/histogram.hpp"
#include "bench/ua_framing.hpp"
#include "bench/wire_client.hpp"
#include "bench/workload.hpp"
#include "ua/buffer.hpp"
#include "ua/node_id.hpp"
#include "ua/status_code.hpp"

namespace opcuad::bench {

struct Endpoint {
  std::string url;  // opc.tcp://127.0.0.1:PORT
  uint16_t port = 0;
  // Set: open channels with the run's security policy and mode for this server's certificate.
  std::shared_ptr<const ServerSecurity> security;
  // ActivateSession's AnonymousIdentityToken.policyId: what the server's GetEndpoints names it
  // (attach_security); opcuad's own name until then.
  std::string anonymous_policy_id = "anonymous";
};

// Accepts only opc.tcp://127.0.0.1:PORT or opc.tcp://localhost:PORT: the harness never loads a remote host.
bool parse_loopback_url(std::string_view url, Endpoint& out, std::string& error);

// Prepares `endpoint` for sessions with `s`'s policy and mode: asks the server's GetEndpoints for the
// endpoint that offers them (discover_endpoint) and takes its anonymous policyId. When secured, also sets
// endpoint.security, for the certificate the server generated in `server_dir`/pki (a child the harness
// started), else the file given with --server-certificate, else the one GetEndpoints returned (Part 4
// §5.4.4 puts it there; the bench trusts it, as it only ever loads loopback). False with a reason.
bool attach_security(Endpoint& endpoint, const std::filesystem::path& server_dir, std::string& error,
                     const SecuritySettings& s = security_settings());

// Phases of a run, written by the main thread, read (relaxed) on every response. A phase value of
// kFirstWindow + i measures into LoadStats::windows[i] instead (the storm scenario's alternating windows).
enum class Phase : int { Warmup = 0, Measure = 1, Stop = 2 };
inline constexpr int kFirstWindow = 16;

// One measured window of the storm scenario.
struct WindowStats {
  uint64_t requests = 0;
  Histogram latency;  // ns
};

// Counters of one client thread. `completed` is also read by the main thread for progress and stall
// detection, hence atomic; it has one writer, so relaxed stores cost no more than a plain add.
struct LoadStats {
  std::atomic<uint64_t> completed{0};  // responses in any phase
  uint64_t requests = 0;               // responses received during Measure
  uint64_t operations = 0;             // values read / written, nodes browsed, paths translated
  uint64_t references = 0;             // browse: references returned
  uint64_t response_bytes = 0;
  Histogram latency;   // ns, Measure only
  ErrorCounts errors;  // every phase: an error is an error
  std::map<std::string, uint64_t> transport_errors;
  std::vector<WindowStats> windows;  // sized before the connections start
};

// One session on its own TCP connection, keeping `inflight` requests outstanding (closed loop).
class LoadConnection : private WireClient<LoadConnection> {
 public:
  LoadConnection(asio::io_context& ctx, const Workload& workload, LoadStats& stats,
                 const std::atomic<int>& phase);
  using WireClient::socket;

  // REQUIRES: open_session() succeeded on socket(). Must run on the io_context's thread (post it there).
  // A non-zero `pace` sends one request per interval (one in flight) instead of a closed loop.
  void start(const SessionInfo& session, uint32_t inflight,
             std::chrono::steady_clock::duration pace = std::chrono::steady_clock::duration::zero());
  // True once the connection has stopped: drained after Phase::Stop, or failed.
  bool finished() const noexcept { return finished_.load(std::memory_order_acquire); }
  uint32_t outstanding() const noexcept { return outstanding_; }
  // The first good response body (type id + response), for the canned server to replay.
  const std::vector<uint8_t>& sample_response() const noexcept { return sample_; }
  void force_close() noexcept;

 private:
  friend WireClient;
  // WireClient's hooks.
  void begin_batch();
  void on_message(const MessageChunk& m);
  void on_server_error(const transport::ErrorMessage& err);
  void on_wire_error(const std::string& what) { fail(what); }
  void end_batch();

  void send_request(uint32_t slot);
  void handle_response(uint32_t request_id, std::span<const uint8_t> body,
                       std::chrono::steady_clock::time_point now);
  void fail(const std::string& what);
  void finish();

  asio::steady_timer timer_;  // paced runs only
  std::chrono::steady_clock::duration pace_{};
  const Workload& workload_;
  LoadStats& stats_;
  const std::atomic<int>& phase_;

  // The encoded request (type id + request), its handle patched per send.
  ua::ByteBuffer request_;
  ua::ByteBuffer alternate_request_;  // Workload::alternates(): sent every other time
  uint64_t sends_ = 0;
  size_t handle_offset_ = 0;
  // Outstanding requests: request id = slot + inflight * generation, so a slot is reused only after its
  // response arrived and the id alone finds the send time.
  uint32_t inflight_ = 0;
  uint32_t outstanding_ = 0;
  std::vector<uint32_t> generation_;
  std::vector<std::chrono::steady_clock::time_point> sent_at_;
  uint32_t expected_sequence_ = 0;  // 0: not seen yet
  // One clock read per read: responses that arrive together completed together as far as we can see.
  std::chrono::steady_clock::time_point batch_time_;
  std::vector<uint8_t> sample_;

  std::atomic<bool> finished_{false};
};

}  // namespace opcuad::bench
