#pragma once
// BoundedCounter: a count that may not pass a limit, taken one at a time and given back in any amount.
// The server-wide limits of config::Limits that any shard reserves against (max_sessions,
// max_subscriptions, max_monitored_items) are each one of these. Lock-free: a reservation is one
// compare-exchange loop on a relaxed atomic (the count orders nothing else), so it may run on a shard
// thread, and a release is one fetch_sub.

#include <atomic>
#include <cstdint>

namespace opcuad::services {

class BoundedCounter {
 public:
  // `limit` is the largest count (0: nothing may be reserved), read at each reservation: it is a field of
  // the live configuration (config::Limits), which a reload may change. REQUIRES: it outlives the counter.
  explicit BoundedCounter(const uint32_t& limit) noexcept : limit_(limit) {}
  BoundedCounter(const BoundedCounter&) = delete;
  BoundedCounter& operator=(const BoundedCounter&) = delete;

  // One more, unless the count is at its limit: true when reserved.
  bool try_acquire() noexcept {
    uint32_t n = count_.load(std::memory_order_relaxed);
    do {
      if (n >= limit_) return false;
    } while (!count_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
    return true;
  }
  // Gives back `n` reservations. REQUIRES: they were taken.
  void release(uint32_t n = 1) noexcept { count_.fetch_sub(n, std::memory_order_relaxed); }
  uint32_t count() const noexcept { return count_.load(std::memory_order_relaxed); }
  uint32_t limit() const noexcept { return limit_; }

 private:
  const uint32_t& limit_;
  std::atomic<uint32_t> count_{0};
};

}  // namespace opcuad::services
