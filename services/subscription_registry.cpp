#include "services/subscription_registry.hpp"

namespace opcuad::services {

void SubscriptionRegistry::place(uint32_t id, ShardState& shard) {
  std::lock_guard lock(owners_mutex_);
  owners_[id] = &shard;
}

void SubscriptionRegistry::forget(uint32_t id) noexcept {
  std::lock_guard lock(owners_mutex_);
  owners_.erase(id);
}

ShardState* SubscriptionRegistry::shard_of(uint32_t id) {
  std::lock_guard lock(owners_mutex_);
  auto it = owners_.find(id);
  return it == owners_.end() ? nullptr : it->second;
}

void SubscriptionRegistry::count_publishing_interval(double interval_ms, int delta) {
  std::lock_guard lock(intervals_mutex_);
  if (delta > 0) {
    ++intervals_[interval_ms];
  } else if (auto it = intervals_.find(interval_ms); it != intervals_.end() && --it->second == 0) {
    intervals_.erase(it);
  }
  publishing_interval_count_.store(static_cast<uint32_t>(intervals_.size()), std::memory_order_relaxed);
}

}  // namespace opcuad::services
