// The cross-shard paths with real threads (docs/ARCHITECTURE.md, Threads): two shards, each an
// io_context run by its own thread as the ShardPool runs them, and clients that keep both busy while a
// session moves, a subscription is transferred, or a write on one shard wakes items on the other. Run
// under ThreadSanitizer by tools/test.sh ([concurrency]); under the other builds they check the outcome.
//
// While the threads run, the test thread touches a channel or its sink only through a post to its shard
// (Remote::on_shard), as a socket's completion handlers would.
#include <catch2/catch.hpp>

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

// Runs two io_contexts on two threads until stop() (or destruction).
class ShardThreads {
 public:
  ShardThreads(asio::io_context& a, asio::io_context& b)
      : guard_a_(a.get_executor()), guard_b_(b.get_executor()) {
    a.restart();
    b.restart();
    threads_[0] = std::thread([&a] { a.run(); });
    threads_[1] = std::thread([&b] { b.run(); });
  }
  ~ShardThreads() { stop(); }
  void stop() {
    if (!threads_[0].joinable()) return;
    guard_a_.reset();
    guard_b_.reset();
    guard_a_.get_executor().context().stop();
    guard_b_.get_executor().context().stop();
    for (auto& t : threads_) t.join();
  }

 private:
  asio::executor_work_guard<asio::io_context::executor_type> guard_a_, guard_b_;
  std::thread threads_[2];
};

// A client on its own channel to `h`'s server on shard `ctx`, driven from a thread that is not that
// shard's: the channel is created, fed and detached on the shard's thread (a channel belongs to the
// thread that made it, as a Connection's does), and its sink is read there.
// REQUIRES: `ctx` attached to the server and run by a ShardThreads for the Remote's whole life.
struct Remote {
  Remote(ServiceHarness& h, asio::io_context& context) : ctx(context), sink(context) {
    on_shard([&] {
      ch = std::make_shared<SecureChannel>(ctx, sink, events, pool, stats, h.tconfig, *h.server, h.ids);
      ch->start();
      for (const std::string& bytes : {hello(), open_request(1, 1)}) {
        auto space = ch->receive_space();
        std::memcpy(space.data(), bytes.data(), bytes.size());
        ch->on_received(bytes.size());
      }
    });
    // The writer sends ACK and the OPN response from a posted drain.
    std::string out;
    std::vector<ServerMessage> m;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (m.size() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::string more;
      on_shard([&] { more.swap(sink.out); });
      out += more;
      m.clear();
      REQUIRE(parse_output(out, m));
    }
    REQUIRE(m.size() == 2);
    ua::OpenSecureChannelResponse opened;
    REQUIRE(decode_body(m.back(), opened));
    channel_id = opened.security_token.channel_id;
    token_id = opened.security_token.token_id;
  }
  ~Remote() {
    on_shard([&] { ch->detach(); });
  }

  // Runs `f` on the channel's shard and waits for it.
  template <class F>
  void on_shard(F f) {
    std::promise<void> done;
    asio::post(ctx, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  // The try_* functions make no Catch2 assertion (Catch2 is not thread-safe): BusyClient's thread uses
  // them. False when the request did not fit or no answer came within 10 s (TSan is slow).
  template <class Req>
  bool try_send(Req req, uint32_t& request_id) {
    req.request_header.authentication_token = token;
    req.request_header.request_handle = ++handle;
    request_id = handle;
    const std::string bytes =
        symmetric_chunk("MSG", 'F', channel_id, token_id, sequence++, handle, encode_request(req));
    bool fits = false;
    on_shard([&] {
      auto space = ch->receive_space();
      fits = space.size() >= bytes.size();
      if (!fits) return;
      std::memcpy(space.data(), bytes.data(), bytes.size());
      ch->on_received(bytes.size());
    });
    return fits;
  }
  bool try_wait(uint32_t request_id, ServerMessage& out) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      std::string bytes;
      on_shard([&] { bytes.swap(sink.out); });
      std::vector<ServerMessage> m;
      if (!parse_output(bytes, m)) return false;
      for (auto& x : m) stash.push_back(std::move(x));
      for (auto it = stash.begin(); it != stash.end(); ++it) {
        if (it->request_id == request_id) {
          out = std::move(*it);
          stash.erase(it);
          return true;
        }
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  // The response, or false (a ServiceFault, no answer, or one that does not decode).
  template <class Resp, class Req>
  bool try_call(Req req, Resp& resp) {
    uint32_t id = 0;
    ServerMessage m;
    return try_send(std::move(req), id) && try_wait(id, m) && decode_body(m, resp);
  }

  template <class Req>
  uint32_t send(Req req) {
    uint32_t id = 0;
    const bool sent = try_send(std::move(req), id);  // outside REQUIRE, which names its expression twice
    REQUIRE(sent);
    return id;
  }
  bool wait_response(uint32_t request_id, ServerMessage& out) { return try_wait(request_id, out); }
  template <class Resp, class Req>
  Resp call(Req req, ua::StatusCode* fault = nullptr) {
    ServerMessage m;
    const uint32_t id = send(std::move(req));  // outside REQUIRE, which names its expression twice
    REQUIRE(wait_response(id, m));
    return decode_response<Resp>(m, fault);
  }

  void login() {
    ua::CreateSessionRequest create;
    create.session_name = ua::String("threads");
    create.requested_session_timeout = 60000;
    token = call<ua::CreateSessionResponse>(create).authentication_token;
    ua::StatusCode s;
    call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
    REQUIRE(s.is_good());
  }

  uint32_t subscribe() {
    ua::CreateSubscriptionRequest r;
    r.requested_publishing_interval = 20;
    r.requested_max_keep_alive_count = 10;
    r.requested_lifetime_count = 1000;
    r.publishing_enabled = true;
    auto resp = call<ua::CreateSubscriptionResponse>(r);
    REQUIRE(resp.response_header.service_result.is_good());
    return resp.subscription_id;
  }

  // A Reporting item on `node`'s Value (interval 0: exception-based), queue of 100.
  void monitor(uint32_t sub, const ua::NodeId& node, double interval) {
    ua::CreateMonitoredItemsRequest r;
    r.subscription_id = sub;
    r.timestamps_to_return = ua::TimestampsToReturn::Both;
    ua::MonitoredItemCreateRequest item;
    item.item_to_monitor.node_id = node;
    item.item_to_monitor.attribute_id = 13;
    item.monitoring_mode = ua::MonitoringMode::Reporting;
    item.requested_parameters = ua::MonitoringParameters{7, interval, {}, 100, true};
    r.items_to_create.push_back(std::move(item));
    auto resp = call<ua::CreateMonitoredItemsResponse>(r);
    REQUIRE(resp.results.size() == 1);
    REQUIRE(resp.results[0].status_code.is_good());
  }

  // Publishes until a data change of at least `value` arrives (at most 10 s); the values seen go to `seen`.
  bool publish_until(double value, std::vector<double>* seen = nullptr) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      ua::StatusCode fault;
      auto r = call<ua::PublishResponse>(ua::PublishRequest{}, &fault);
      if (!fault.is_good()) return false;
      for (const auto& eo : r.notification_message.notification_data) {
        const auto* dc = eo.get<ua::DataChangeNotification>();
        if (!dc) continue;
        for (const auto& n : dc->monitored_items) {
          const double* d = n.value.value.get_if<double>();
          if (!d) continue;
          if (seen) seen->push_back(*d);
          if (*d >= value) return true;
        }
      }
    }
    return false;
  }

  asio::io_context& ctx;
  MemorySink sink;
  MemoryEvents events;
  BufferPool pool;
  TransportStats stats;
  std::shared_ptr<SecureChannel> ch;
  uint32_t channel_id = 0, token_id = 0, sequence = 2, handle = 0;
  ua::NodeId token;
  std::vector<ServerMessage> stash;
};

// A client thread that keeps a shard busy with Writes of Speed and Reads until stopped; counts the answers
// that were not Good. Write n writes n / 1000 (value_of(n)): increasing, and inside Speed's EURange of 0..100
// (a value past it is BadOutOfRange) for the 100,000 writes a fast shard may do before the test stops it.
inline double value_of(uint64_t writes) {
  return static_cast<double>(writes) / 1000;
}

class BusyClient {
 public:
  explicit BusyClient(Remote& r) : remote_(r) {
    thread_ = std::thread([this] {
      double v = 0;
      while (!stop_.load()) {
        ua::WriteResponse w;
        ++v;
        if (!remote_.try_call(write_request(plant(".Speed"), value_of(static_cast<uint64_t>(v))), w) ||
            w.results.size() != 1 || !w.results[0].is_good()) {
          ++failures_;
        }
        ua::ReadRequest read;
        read.nodes_to_read.push_back(ua::ReadValueId{plant(".Speed"), 13, {}, {}});
        read.nodes_to_read.push_back(ua::ReadValueId{ua::NodeId(0, 2258), 13, {}, {}});
        ua::ReadResponse rd;
        if (!remote_.try_call(read, rd) || rd.results.size() != 2 || !rd.results[0].status.is_good())
          ++failures_;
        writes_.store(static_cast<uint64_t>(v));
      }
    });
  }
  ~BusyClient() { stop(); }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  uint64_t writes() const { return writes_.load(); }
  uint64_t failures() const { return failures_.load(); }

 private:
  Remote& remote_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> failures_{0};
  std::thread thread_;
};

void wait_for_writes(const BusyClient& busy, uint64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (busy.writes() < n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(busy.writes() >= n);
}

}  // namespace

TEST_CASE("threads: a session re-activated on another shard moves while its old shard keeps serving",
          "[services][concurrency]") {
  asio::io_context ctx_b;  // outlives the server, which keeps timers on it
  ServiceHarness h;        // shard A: h.ctx
  h.channel->detach();     // the harness's own channel belongs to this thread; the Remotes make theirs
  h.server->attach_shard(ctx_b);
  ShardThreads threads(h.ctx, ctx_b);
  Remote a(h, h.ctx), busy_a(h, h.ctx), b(h, ctx_b);
  a.login();
  busy_a.login();
  const uint32_t sub = a.subscribe();
  a.monitor(sub, plant(".Speed"), 10);
  REQUIRE(a.publish_until(10.0));  // the initial value, sampled on shard A

  BusyClient busy(busy_a);  // writes Speed on shard A throughout
  wait_for_writes(busy, 5);
  b.token = a.token;
  ua::StatusCode s;
  b.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);  // the move, A -> B
  REQUIRE(s.is_good());
  // Its subscription now samples and publishes on shard B, and sees shard A's writes.
  const uint64_t later = busy.writes() + 3;
  wait_for_writes(busy, later);
  std::vector<double> seen;
  CHECK(b.publish_until(value_of(later), &seen));
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  // The token no longer finds a session on shard A.
  a.call<ua::ReadResponse>(ua::ReadRequest{}, &s);
  CHECK(s == status::BadSessionIdInvalid);
  busy.stop();
  CHECK(busy.failures() == 0);
}

TEST_CASE("threads: TransferSubscriptions across shards while both are busy", "[services][concurrency]") {
  asio::io_context ctx_b;
  ServiceHarness h;
  h.channel->detach();
  h.server->attach_shard(ctx_b);
  ShardThreads threads(h.ctx, ctx_b);
  Remote a(h, h.ctx), busy_a(h, h.ctx), b(h, ctx_b);
  a.login();
  busy_a.login();
  b.login();
  const uint32_t sub = a.subscribe();
  a.monitor(sub, plant(".Speed"), 10);
  REQUIRE(a.publish_until(10.0));

  BusyClient busy(busy_a);
  wait_for_writes(busy, 5);
  // Publish requests stay queued on shard A while shard B takes the subscription.
  const uint32_t pending = a.send(ua::PublishRequest{});
  ua::TransferSubscriptionsRequest t;
  t.subscription_ids = {sub};
  t.send_initial_values = true;
  auto resp = b.call<ua::TransferSubscriptionsResponse>(t);
  REQUIRE(resp.results.size() == 1);
  CHECK(resp.results[0].status_code.is_good());
  const uint64_t later = busy.writes() + 3;
  wait_for_writes(busy, later);
  CHECK(b.publish_until(value_of(later)));
  // The old session got its answers: data before the transfer or GoodSubscriptionTransferred after it.
  ServerMessage m;
  CHECK(a.wait_response(pending, m));
  busy.stop();
  CHECK(busy.failures() == 0);
}

TEST_CASE("threads: writes on one shard wake exception-based items on the other", "[services][concurrency]") {
  asio::io_context ctx_b;
  ServiceHarness h;
  h.channel->detach();
  h.server->attach_shard(ctx_b);
  ShardThreads threads(h.ctx, ctx_b);
  Remote a(h, h.ctx), b(h, ctx_b);
  a.login();
  b.login();
  const uint32_t sub = b.subscribe();
  b.monitor(sub, plant(".Speed"), 0);  // woken by writes: CellWatch, then a post from the writer's shard
  REQUIRE(b.publish_until(10.0));

  BusyClient busy(a);  // the writer, on shard A
  wait_for_writes(busy, 50);
  busy.stop();
  const double last = value_of(busy.writes());
  std::vector<double> seen;
  CHECK(b.publish_until(last, &seen));  // the last write always arrives; a burst may coalesce
  REQUIRE(!seen.empty());
  CHECK(seen.back() == last);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  CHECK(busy.failures() == 0);
}
