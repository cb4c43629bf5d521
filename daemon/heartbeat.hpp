#pragma once
// Per-shard heartbeats: each shard's own timer stamps its slot with the steady clock, so a reader on
// another thread can tell whether every shard's event loop turned recently. The watchdog pings of the
// service manager depend on it (daemon.cpp): a shard stuck in a handler stops the pings, and systemd
// restarts the service (WatchdogSec=).
//
// Threads: slot i is written by shard i only (relaxed store), read by anyone (relaxed load).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

namespace opcuad {

class ShardHeartbeats {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ShardHeartbeats(size_t shards) : n_(shards), beats_(std::make_unique<Slot[]>(shards)) {
    const int64_t now = Clock::now().time_since_epoch().count();
    for (size_t i = 0; i < n_; ++i) beats_[i].at.store(now, std::memory_order_relaxed);
  }

  size_t size() const noexcept { return n_; }
  void beat(size_t shard, Clock::time_point now = Clock::now()) noexcept {
    beats_[shard].at.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  }
  Clock::time_point last(size_t shard) const noexcept {
    return Clock::time_point(Clock::duration(beats_[shard].at.load(std::memory_order_relaxed)));
  }
  // The first shard whose last beat is older than `max_age` at `now`; nullopt when every one is fresh.
  std::optional<size_t> stale(Clock::time_point now, Clock::duration max_age) const noexcept {
    for (size_t i = 0; i < n_; ++i) {
      if (now - last(i) > max_age) return i;
    }
    return std::nullopt;
  }

 private:
  struct alignas(64) Slot {  // one cache line each: shards never write the same line
    std::atomic<int64_t> at{0};
  };
  size_t n_;
  std::unique_ptr<Slot[]> beats_;
};

}  // namespace opcuad
