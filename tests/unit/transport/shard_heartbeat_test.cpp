#include <catch2/catch.hpp>

#include <asio/post.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "transport/shard_pool.hpp"

using namespace opcuad::transport;
using namespace std::chrono_literals;

TEST_CASE("ShardHeartbeat: never beaten is infinitely old; a beat makes it young", "[transport][heartbeat]") {
  ShardHeartbeat h;
  CHECK(h.age() == ShardHeartbeat::Clock::duration::max());
  const auto t = ShardHeartbeat::Clock::now();
  h.beat(t);
  CHECK(h.age(t + 30ms) == 30ms);
  CHECK(h.age(t - 5ms) == ShardHeartbeat::Clock::duration::zero());  // a reader's older clock reading
}

TEST_CASE("ShardPool: every shard's heartbeat stays young while its loop turns, and ages when it is held",
          "[transport][heartbeat][live]") {
  ShardPool pool(2);
  CHECK(pool.oldest_heartbeat() == std::chrono::steady_clock::duration::max());  // not started
  pool.start();
  // Beats every 100 ms, even with nothing to do (the bounds leave room for a loaded machine).
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (pool.oldest_heartbeat() > 800ms && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  CHECK(pool.oldest_heartbeat() < 800ms);

  std::atomic<bool> release{false};
  asio::post(pool.shard(0).context(), [&release] {
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  std::this_thread::sleep_for(1300ms);
  CHECK(pool.shard(0).heartbeat().age() >= 1000ms);
  CHECK(pool.shard(1).heartbeat().age() < 800ms);
  CHECK(pool.oldest_heartbeat() >= 1000ms);
  // What the systemd watchdog asks (daemon.cpp): the held shard, with its age.
  const auto stale = pool.stale_shard(900ms);
  REQUIRE(stale);
  CHECK(stale->shard == 0);
  CHECK(stale->age >= 1000ms);
  release.store(true);
  std::this_thread::sleep_for(300ms);
  CHECK(pool.oldest_heartbeat() < 800ms);
  CHECK_FALSE(pool.stale_shard(800ms));
  pool.stop();  // returns: the heartbeat timers are cancelled with the rest
}

TEST_CASE("ShardPool: set_heartbeat_interval sets every shard's beat, at least 1 ms",
          "[transport][heartbeat]") {
  // A watchdog with a short ping interval asks for faster beats (at least four per interval, daemon.cpp).
  ShardPool pool(2);
  CHECK(pool.shard(1).heartbeat_interval() == kHeartbeatInterval);
  pool.set_heartbeat_interval(20ms);
  CHECK(pool.shard(0).heartbeat_interval() == 20ms);
  CHECK(pool.shard(1).heartbeat_interval() == 20ms);
  pool.set_heartbeat_interval(0ms);
  CHECK(pool.shard(0).heartbeat_interval() == 1ms);
}
