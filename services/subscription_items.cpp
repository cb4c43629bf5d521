// A subscription's monitored items (Part 4 §5.12): adding, removing and switching the mode of an item, and
// the ready list the Publish walk takes notifications from (subscription.hpp). The state machine and the
// Publish side are subscription.cpp.
#include "services/sampler.hpp"
#include "services/session.hpp"
#include "services/shard.hpp"
#include "services/subscription.hpp"

namespace opcuad::services {

MonitoredItem* Subscription::item(uint32_t item_id) noexcept {
  return items_.find(item_id);
}

MonitoredItem& Subscription::add_item(MonitoredItem&& added) {
  added.id = next_item_id_++;
  if (added.id == 0) added.id = next_item_id_++;  // 0 marks a free slot; ids wrap after 2^32 creations
  added.subscription = this;
  const ua::MonitoringMode mode = added.mode();
  added.set_mode_value(ua::MonitoringMode::Disabled);
  MonitoredItem& item = items_.insert(std::move(added));
  ++disabled_items_;  // as inserted; set_mode() counts the change
  set_mode(item, mode);
  return item;
}

bool Subscription::remove_item(uint32_t item_id) {
  MonitoredItem* item = items_.find(item_id);
  if (!item) return false;
  if (item->mode() == ua::MonitoringMode::Disabled) --disabled_items_;
  shard_->sampler->remove(*item);
  if (item->is_event()) unindex_event_item(*shard_, *item);
  unready(*item);
  ReadyList& list = list_of(*item);
  items_.erase(item_id);  // a ready-list entry of it is now stale: its slot no longer has its id
  registry_.release_monitored_items(1);
  compact_ready(list);
  return true;
}

void Subscription::set_mode(MonitoredItem& item, ua::MonitoringMode mode) {
  const ua::MonitoringMode before = item.mode();
  item.set_mode_value(mode);
  if ((before == ua::MonitoringMode::Disabled) != (mode == ua::MonitoringMode::Disabled)) {
    mode == ua::MonitoringMode::Disabled ? ++disabled_items_ : --disabled_items_;
  }
  if (mode == ua::MonitoringMode::Disabled) {
    shard_->sampler->remove(item);
    unready(item);
    item.clear_queue();
    item.reset_sampling();
    return;
  }
  if (item.is_event()) {
    // Not sampled: events arrive from the drain. Sampling queues them, Reporting also reports them
    // (Part 4 §5.12.1.3); what Sampling queued is reported once Reporting.
    if (mode == ua::MonitoringMode::Reporting && !item.queue_empty()) {
      make_ready(item);
    } else if (mode == ua::MonitoringMode::Sampling) {
      unready(item);
    }
    return;
  }
  if (before == ua::MonitoringMode::Disabled) {
    // The initial value (Part 4 §5.12.1.4): the first sample after enabling is always queued.
    item.reset_sampling();
    shard_->sampler->add(item);
    item.sample(*registry_.space().current());
  } else if (mode == ua::MonitoringMode::Reporting && !item.queue_empty()) {
    make_ready(item);  // Sampling -> Reporting: what it queued is reported now
  } else if (mode == ua::MonitoringMode::Sampling) {
    unready(item);
  }
}

void Subscription::resample(MonitoredItem& item) {
  if (item.mode() == ua::MonitoringMode::Disabled || item.is_event()) return;
  shard_->sampler->remove(item);
  shard_->sampler->add(item);
}

void Subscription::on_item_queued(MonitoredItem& item) {
  if (item.mode() != ua::MonitoringMode::Reporting) return;
  make_ready(item);
  const std::unordered_set<uint32_t>* triggered = item.triggered();
  if (!triggered) return;
  // Part 4 §5.12.1.6: a reporting triggering item makes its linked Sampling items report their queues.
  for (uint32_t linked_id : *triggered) {
    MonitoredItem* linked = this->item(linked_id);
    if (linked && linked->mode() == ua::MonitoringMode::Sampling && !linked->queue_empty())
      make_ready(*linked);
  }
}

// The ready lists (data items, event items): an entry per item that became ready, in that order.
// Leaving one is O(1): the item is marked not ready (or removed, which makes its entry's id stale) and
// the entry stays until the next Publish walk or a compaction drops it; `listed` keeps an item from
// getting a second entry meanwhile.
void Subscription::make_ready(MonitoredItem& item) {
  if (item.ready) return;
  ReadyList& list = list_of(item);
  item.ready = true;
  ++list.count;
  if (item.listed) return;  // its old entry is still there
  item.listed = true;
  list.entries.push_back(ReadyEntry{&item, item.id});
}

void Subscription::unready(MonitoredItem& item) noexcept {
  if (!item.ready) return;
  ReadyList& list = list_of(item);
  item.ready = false;
  --list.count;
  compact_ready(list);
}

// Drops the stale entries once they are more than half the list: each entry is dropped once, so the
// work is O(1) per entry ever added.
void Subscription::compact_ready(ReadyList& list) noexcept {
  if (list.entries.size() - list.head <= 2 * list.count + 32) return;
  size_t kept = 0;
  for (size_t i = list.head; i < list.entries.size(); ++i) {
    const ReadyEntry entry = list.entries[i];
    if (entry.item->id != entry.id) continue;
    if (!entry.item->ready) {
      entry.item->listed = false;
      continue;
    }
    list.entries[kept++] = entry;
  }
  list.entries.resize(kept);
  list.head = 0;
}

// A Publish walk reported (or dropped as stale) every entry before `head`. They are erased only once
// they are at least half the vector, so the move costs O(1) per entry ever added.
void Subscription::consume_ready(ReadyList& list, size_t head) noexcept {
  list.head = head;
  if (list.head == list.entries.size()) {
    list.entries.clear();
    list.head = 0;
  } else if (list.head >= 1024 && 2 * list.head >= list.entries.size()) {
    list.entries.erase(list.entries.begin(), list.entries.begin() + static_cast<std::ptrdiff_t>(list.head));
    list.head = 0;
  }
}

}  // namespace opcuad::services
