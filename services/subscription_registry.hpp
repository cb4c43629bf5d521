#pragma once
// SubscriptionRegistry: what a subscription shares with the rest of the server, and all it may reach of
// it (subscription.hpp holds a reference to one, never the Server): the server-wide limits on
// subscriptions and monitored items (config::Limits max_subscriptions, max_monitored_items), which shard
// holds each subscription (for TransferSubscriptions, transfer_service.cpp), the distinct publishing
// intervals served (PublishingIntervalCount, Part 5 §12.9), the address space whose store items sample,
// and the largest Publish response the server builds (config::Limits max_publish_response_size).
//
// Threads: any shard. The counters are lock-free (bounded_counter.hpp); the two tables take a mutex, but
// only when a subscription is created, modified, moved or deleted, never by Publish or sampling.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

#include "addressspace/address_space.hpp"
#include "services/bounded_counter.hpp"

namespace opcuad::services {

struct ShardState;

class SubscriptionRegistry {
 public:
  // The limits are read live (bounded_counter.hpp). REQUIRES: they outlive the registry.
  SubscriptionRegistry(addressspace::AddressSpace& space, const uint32_t& max_subscriptions,
                       const uint32_t& max_monitored_items,
                       const uint32_t& max_publish_response_size) noexcept
      : space_(space),
        subscriptions_(max_subscriptions),
        monitored_items_(max_monitored_items),
        max_publish_response_size_(max_publish_response_size) {}
  SubscriptionRegistry(const SubscriptionRegistry&) = delete;
  SubscriptionRegistry& operator=(const SubscriptionRegistry&) = delete;

  addressspace::AddressSpace& space() const noexcept { return space_; }
  // The server's own bound on a PublishResponse body, in bytes, below whatever the client accepts.
  size_t max_publish_response_size() const noexcept { return max_publish_response_size_; }

  // Reservations against the server-wide limits. A subscription holds one from before its construction
  // until its destruction; each of its items one from before add_item() until it is removed.
  bool reserve_subscription() noexcept { return subscriptions_.try_acquire(); }
  void release_subscription() noexcept { subscriptions_.release(); }
  bool reserve_monitored_item() noexcept {
    if (!monitored_items_.try_acquire()) return false;
    monitored_items_created_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  void release_monitored_items(uint32_t n) noexcept { monitored_items_.release(n); }
  uint32_t subscription_count() const noexcept { return subscriptions_.count(); }
  uint32_t monitored_item_count() const noexcept { return monitored_items_.count(); }
  uint64_t monitored_items_created() const noexcept {
    return monitored_items_created_.load(std::memory_order_relaxed);
  }

  // Which shard holds each subscription: set when one is created or arrives on a shard, cleared when it
  // is destroyed.
  void place(uint32_t id, ShardState& shard);
  void forget(uint32_t id) noexcept;
  ShardState* shard_of(uint32_t id);

  // The live subscriptions' publishing intervals: `delta` +1 when a subscription takes `interval_ms`, -1
  // when it leaves it.
  void count_publishing_interval(double interval_ms, int delta);
  uint32_t publishing_interval_count() const noexcept {
    return publishing_interval_count_.load(std::memory_order_relaxed);
  }

 private:
  addressspace::AddressSpace& space_;
  BoundedCounter subscriptions_;
  BoundedCounter monitored_items_;
  const uint32_t& max_publish_response_size_;
  std::atomic<uint64_t> monitored_items_created_{0};  // cumulated; bumped beside the reservation
  std::mutex owners_mutex_;
  std::unordered_map<uint32_t, ShardState*> owners_;  // GUARDED_BY(owners_mutex_)
  std::mutex intervals_mutex_;
  std::map<double, uint32_t> intervals_;  // GUARDED_BY(intervals_mutex_): interval -> subscriptions
  std::atomic<uint32_t> publishing_interval_count_{0};
};

}  // namespace opcuad::services
