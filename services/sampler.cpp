#include "services/sampler.hpp"

#include <cmath>

#include "services/monitored_item.hpp"

namespace opcuad::services {

Sampler::~Sampler() {
  stop();
}

namespace {
// sampler_key of an exception-based item (timer groups have keys > 0).
constexpr uint32_t kExceptionKey = 0;
}  // namespace

void Sampler::add(MonitoredItem& item) {
  int64_t key = std::llround(item.sampling_interval_ms * 1000.0);
  if (key <= 0) {
    if (item.cell && bit_) return add_exception(item);
    key = std::llround(kFastestSamplingIntervalMs * 1000.0);  // nothing would wake it: poll instead
  }
  auto& group = groups_[key];
  if (!group) {
    group = std::make_shared<Group>(ctx_);
    group->interval = std::chrono::microseconds(key);
    group->start = grid_start(std::chrono::steady_clock::now(), group->interval);  // see Phases in the header
    arm(group);
  }
  item.sampler_key = static_cast<uint32_t>(key);
  item.sampler_slot = static_cast<uint32_t>(group->items.size());
  group->items.push_back(&item);
}

void Sampler::remove(MonitoredItem& item) noexcept {
  if (item.sampler_key == MonitoredItem::kNoGroup) return;
  if (item.sampler_key == kExceptionKey) return remove_exception(item);
  auto it = groups_.find(item.sampler_key);
  item.sampler_key = MonitoredItem::kNoGroup;
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
    for (MonitoredItem* item : group->items) item->sampler_key = MonitoredItem::kNoGroup;
  }
  groups_.clear();
  for (auto& [cell, items] : exceptions_) {
    for (MonitoredItem* item : items) item->sampler_key = MonitoredItem::kNoGroup;
  }
  exceptions_.clear();
  for (auto& [slot, count] : slot_cells_) watch_.unwatch(slot, bit_);
  slot_cells_.clear();
}

void Sampler::add_exception(MonitoredItem& item) {
  auto& items = exceptions_[item.cell];
  if (items.empty() && ++slot_cells_[CellWatch::slot(item.cell)] == 1) {
    watch_.watch(CellWatch::slot(item.cell), bit_);  // before the item's first sample (cell_watch.hpp)
  }
  item.sampler_key = kExceptionKey;
  item.sampler_slot = static_cast<uint32_t>(items.size());
  items.push_back(&item);
}

void Sampler::remove_exception(MonitoredItem& item) noexcept {
  item.sampler_key = MonitoredItem::kNoGroup;
  auto it = exceptions_.find(item.cell);
  if (it == exceptions_.end()) return;
  auto& items = it->second;
  MonitoredItem* last = items.back();
  items[item.sampler_slot] = last;
  last->sampler_slot = item.sampler_slot;
  items.pop_back();
  if (!items.empty()) return;
  exceptions_.erase(it);
  const size_t slot = CellWatch::slot(item.cell);
  auto count = slot_cells_.find(slot);
  if (count != slot_cells_.end() && --count->second == 0) {
    slot_cells_.erase(count);
    watch_.unwatch(slot, bit_);
  }
}

void Sampler::on_written(std::span<const addressspace::ValueCell* const> cells) {
  if (exceptions_.empty()) return;
  const addressspace::NodeStore& store = *space_.current();
  for (const addressspace::ValueCell* cell : cells) {
    auto it = exceptions_.find(cell);
    if (it == exceptions_.end()) continue;  // another cell of the same slot, or the item left
    // sample() never adds or removes items, so the vector is stable while we walk it.
    for (MonitoredItem* item : it->second) item->sample(store);
  }
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
  group->timer.async_wait([this, weak, due](std::error_code ec) {
    auto g = weak.lock();
    if (ec || !g) return;
    const auto began = std::chrono::steady_clock::now();
    run(*g);
    record_lateness(g->items.size(), began - due, std::chrono::steady_clock::now() - began);
    if (!g->items.empty()) arm(g);
  });
}

void Sampler::record_lateness(size_t items, std::chrono::steady_clock::duration start,
                              std::chrono::steady_clock::duration took) noexcept {
  using namespace std::chrono_literals;
  // The tick's items were sampled one after another between start and start + took, so the share of
  // them sampled later than x after the deadline is (start + took - x) / took, clamped to [0, 1].
  const double s = std::chrono::duration<double, std::micro>(start).count();
  const double d = std::chrono::duration<double, std::micro>(took).count();
  auto later_than = [&](double x_us) -> uint64_t {
    if (s >= x_us) return items;
    if (s + d <= x_us || d <= 0) return 0;
    return static_cast<uint64_t>(std::llround(static_cast<double>(items) * (s + d - x_us) / d));
  };
  auto add = [](std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  };
  add(lateness_.samples, items);
  add(lateness_.over_250us, later_than(250));
  add(lateness_.over_1ms, later_than(1000));
  add(lateness_.over_5ms, later_than(5000));
}

void Sampler::run(Group& group) {
  // The store is read once per tick; this shard's quiescent point comes later, so it stays valid.
  const addressspace::NodeStore& store = *space_.current();
  // sample() never adds or removes items, so the vector is stable while we walk it.
  // Each sample touches the item, its cell and, for queues deeper than one, its extras, all scattered
  // over memory: fetching them a few items ahead overlaps those cache misses.
  const std::vector<MonitoredItem*>& items = group.items;
  const size_t n = items.size();
  constexpr size_t kItemAhead = 16, kCellAhead = 8, kSlotAhead = 4;
  for (size_t i = 0; i < n; ++i) {
    if (i + kItemAhead < n) {
      const char* p = reinterpret_cast<const char*>(items[i + kItemAhead]);
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
    }
    if (i + kCellAhead < n) {
      const MonitoredItem* ahead = items[i + kCellAhead];
      if (ahead->cell) __builtin_prefetch(ahead->cell);
      if (ahead->extras) __builtin_prefetch(ahead->extras.get());
    }
    // A queue deeper than one: the ring slot the sample's older value moves to (its extras came in above).
    if (i + kSlotAhead < n) prefetch_next_slot(*items[i + kSlotAhead]);
    items[i]->sample(store);
  }
}

std::chrono::steady_clock::time_point Sampler::publishing_phase(
    std::chrono::steady_clock::time_point now) noexcept {
  const auto fastest = std::chrono::microseconds(std::llround(kFastestSamplingIntervalMs * 1000.0));
  return grid_start(now, fastest) + std::chrono::microseconds(1);
}

std::chrono::steady_clock::time_point Sampler::writer_phase(
    std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration interval) noexcept {
  return grid_start(now, interval) - interval / 2;  // at or before now: the next tick is half an interval off
}

}  // namespace opcuad::services
