#include "services/sampler.hpp"

#include <cmath>

#include "services/monitored_item.hpp"

namespace opcuad::services {

Sampler::~Sampler() { stop(); }

void Sampler::add(MonitoredItem& item) {
  const int64_t key = std::llround(item.sampling_interval_ms * 1000.0);
  auto& group = groups_[key];
  if (!group) {
    group = std::make_shared<Group>(ctx_);
    group->interval = std::chrono::microseconds(key);
    group->start = std::chrono::steady_clock::now();
    arm(group);
  }
  item.sampler_key = key;
  item.sampler_slot = group->items.size();
  group->items.push_back(&item);
}

void Sampler::remove(MonitoredItem& item) noexcept {
  if (item.sampler_key < 0) return;
  auto it = groups_.find(item.sampler_key);
  item.sampler_key = -1;
  if (it == groups_.end()) return;
  auto& items = it->second->items;
  // Swap-remove: O(1), the moved item learns its new slot.
  MonitoredItem* last = items.back();
  items[item.sampler_slot] = last;
  last->sampler_slot = item.sampler_slot;
  items.pop_back();
  if (items.empty()) {
    it->second->timer.cancel();
    groups_.erase(it);
  }
}

void Sampler::stop() noexcept {
  for (auto& [key, group] : groups_) {
    group->timer.cancel();
    for (MonitoredItem* item : group->items) item->sampler_key = -1;
  }
  groups_.clear();
}

void Sampler::arm(const std::shared_ptr<Group>& group) {
  ++group->tick;
  auto due = group->start + group->interval * group->tick;
  const auto now = std::chrono::steady_clock::now();
  if (due + group->interval <= now) {
    // More than one interval late (an overloaded loop): skip the deadlines already past.
    const uint64_t behind = static_cast<uint64_t>((now - group->start) / group->interval);
    missed_ticks_ += behind - group->tick + 1;
    group->tick = behind + 1;
    due = group->start + group->interval * group->tick;
  }
  group->timer.expires_at(due);
  std::weak_ptr<Group> weak = group;
  group->timer.async_wait([this, weak](std::error_code ec) {
    auto g = weak.lock();
    if (ec || !g) return;
    run(*g);
    if (!g->items.empty()) arm(g);
  });
}

void Sampler::run(Group& group) {
  // The store is read once per tick; this shard's quiescent point comes later, so it stays valid.
  const addressspace::NodeStore& store = *space_.current();
  // sample() never adds or removes items, so the vector is stable while we walk it.
  for (MonitoredItem* item : group.items) item->sample(store);
}

}  // namespace opcuad::services
