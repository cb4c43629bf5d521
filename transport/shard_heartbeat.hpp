#pragma once
// ShardHeartbeat: when a shard's event loop last turned. A timer on the shard stamps it every
// kHeartbeatInterval, or what ShardPool::set_heartbeat_interval set (ShardPool::start); the one source for
// every watcher on any thread (the HTTP /healthz handler, the shard heartbeat metric, the systemd
// watchdog), which reads its age. A stamp older than a few intervals means the shard's loop is stuck (a
// handler that does not return, a starved thread), whatever else the process is doing.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace opcuad::transport {

inline constexpr std::chrono::milliseconds kHeartbeatInterval{100};

class ShardHeartbeat {
 public:
  using Clock = std::chrono::steady_clock;

  // shard thread only (one writer: relaxed load + store, no read-modify-write needed).
  void beat(Clock::time_point now = Clock::now()) noexcept {
    last_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  }
  // Any thread. A shard that never beat is infinitely old.
  Clock::duration age(Clock::time_point now = Clock::now()) const noexcept {
    const Clock::rep last = last_.load(std::memory_order_relaxed);
    if (last == 0) return Clock::duration::max();
    const Clock::duration d = now.time_since_epoch() - Clock::duration(last);
    return d.count() < 0 ? Clock::duration::zero() : d;
  }

 private:
  std::atomic<Clock::rep> last_{0};
};

}  // namespace opcuad::transport
