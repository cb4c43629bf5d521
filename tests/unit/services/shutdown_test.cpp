// Shutdown with many sessions held (docs/ARCHITECTURE.md, Threads: Shutdown). The daemon posts
// Server::end_sessions() to each shard, then Server::detach_shards(), then lets each shard's thread run out
// of work and joins it (ShardPool::stop()). Ending thousands of sessions is one long handler on the shard;
// when the shard's 250 ms sweep falls due during it, the shard's reactor queues the sweep's completion
// (with success) behind the detach_shards() handler that is already waiting, so the detach's cancel()
// finds nothing left to cancel. That completion must not arm the sweep again, or the shard never runs out
// of work and the daemon never exits.
#include <catch2/catch.hpp>

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>

#include <atomic>
#include <future>
#include <thread>

#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {

constexpr uint32_t kSessions = 2000;  // as in opcuad-bench --scenario connect --hold 2000
constexpr auto kSweepPeriod = std::chrono::milliseconds(250);  // Server::sweep()

}  // namespace

TEST_CASE("shutdown: the shard runs out of work after end_sessions and detach_shards with 2000 sessions held",
          "[services][shutdown][concurrency]") {
  ServiceHarness h("\"max_sessions\": 2100, \"max_subscriptions\": 2100");
  for (uint32_t i = 0; i < kSessions; ++i) {
    REQUIRE(h.login().is_good());
    ua::CreateSubscriptionRequest cs;
    cs.requested_publishing_interval = 1000;
    cs.requested_max_keep_alive_count = 100;
    cs.requested_lifetime_count = 100000;
    cs.publishing_enabled = true;
    REQUIRE(h.call<ua::CreateSubscriptionResponse>(cs).response_header.service_result.is_good());
  }
  REQUIRE(h.server->session_count() == kSessions);
  REQUIRE(h.server->subscription_count() == kSessions);
  // The clients have gone (as in the bench: connections=0 at shutdown.closing); their sessions stay.
  h.channel->detach();

  // The shard's thread, run as ShardPool runs it: a work guard until stop, then until out of work.
  auto guard = asio::make_work_guard(h.ctx);
  std::promise<void> returned;
  auto out_of_work = returned.get_future();
  h.ctx.restart();
  std::thread shard([&] {
    h.ctx.run();
    returned.set_value();
  });

  // Daemon::close_clients() and stop_now(), in their order.
  h.server->end_sessions(ua::status::BadShutdown);
  // The shard is still busy closing sessions when detach_shards() is posted and the sweep falls due: here
  // a handler holds the shard for longer than a sweep period, so the overlap does not depend on how fast
  // this machine frees 2000 sessions.
  std::promise<void> busy;
  std::atomic<bool> detach_posted{false};
  asio::post(h.ctx, [&] {
    busy.set_value();
    const auto until = std::chrono::steady_clock::now() + kSweepPeriod + std::chrono::milliseconds(50);
    while (!detach_posted.load() || std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  busy.get_future().wait();
  h.server->detach_shards();
  detach_posted.store(true);
  guard.reset();  // ShardPool::stop(): the shard returns from run() once its work is done

  const bool stopped = out_of_work.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  if (!stopped) h.ctx.stop();  // a timer is still armed: end the loop so the test can report it
  shard.join();
  CHECK(stopped);
  CHECK(h.server->session_count() == 0);
  CHECK(h.server->subscription_count() == 0);
}
