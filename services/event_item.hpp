#pragma once
// EventItemState: what an event monitored item (ItemToMonitor: an Object or View, AttributeId
// EventNotifier; Part 4 §5.12.1.1) holds beyond the common MonitoredItem: its EventFilter, compiled
// against the event types of one NodeStore generation (content_filter.hpp), the notifier it watches, and
// its queue of encoded EventFieldLists (Part 4 §7.25.3, §5.12.1.5).
//
// Queue. A ring of slots, each the encoding of one EventFieldList without its clientHandle (which
// ModifyMonitoredItems may change while the event waits): `Int32 n, n x Variant`, one Variant per select
// clause in clause order, a null Variant for a clause that selects nothing. Publish copies the bytes
// behind the item's clientHandle. Slots keep their buffers, so queueing allocates nothing once the ring
// has grown; a slot whose buffer grew past kSlotKeepBytes gives it back when emptied.
//
// Bounds (docs/SECURITY.md): an encoded EventFieldList is at most kMaxEventBytes (a field that would
// pass it is replaced by null, so an event always fits a message); a queue holds at most its revised
// queueSize events and kMaxQueueBytes bytes; past either it overflows.
//
// Overflow (Part 4 §5.12.1.5; Part 5 §6.4.34 EventQueueOverflowEventType): the item receives an event of
// type EventQueueOverflowEventType in its queue. discardOldest TRUE: the oldest events are discarded and
// the overflow event takes the front, so the client sees the gap before the events after it. FALSE: the
// new event is discarded and the overflow event replaces the newest queued one, so it comes after the
// events that were kept. One overflow event per gap: none is added while one is already at that end. A
// queue of one always holds the newest event (the discard policy is ignored for a queue of one, as for
// data items) and gets no overflow event.
//
// shard-local: part of its MonitoredItem (ItemExtras::event).

#include <cstdint>
#include <memory>
#include <vector>

#include "addressspace/node_store.hpp"
#include "services/content_filter.hpp"
#include "services/event_schema.hpp"
#include "ua/buffer.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

class EventItemState {
 public:
  static constexpr size_t kMaxEventBytes = 64 * 1024;
  static constexpr size_t kMaxQueueBytes = 1024 * 1024;
  static constexpr size_t kSlotKeepBytes = 4096;

  // The filter of a CreateMonitoredItems / ModifyMonitoredItems request, compiled against `store`'s
  // event types (REQUIRES: store.event_types()). A null filter (`filter` nullptr) takes the default
  // select list (default_filter()) and no where clause. On success the state takes the filter and the
  // store's generation; on failure (BadEventFilterInvalid) it keeps what it had. `result` is the
  // EventFilterResult to return, empty when every clause and element is Good.
  ua::StatusCode compile(const ua::EventFilter* filter, const addressspace::NodeStore& store,
                         ua::EventFilterResult& result);
  // The select list an event item gets without a filter: EventId, EventType, SourceNode, SourceName,
  // Time, ReceiveTime, Message, Severity (the BaseEventType fields every event carries, Part 5 §6.4.2).
  static const ua::EventFilter& default_filter();

  const CompiledFilter& filter() const noexcept { return compiled_; }
  const ua::EventFilter& requested() const noexcept { return requested_; }
  uint64_t generation() const noexcept { return generation_; }

  // The notifier watched in `generation()`'s store; kNoNode when it is no notifier there (after a
  // reload that removed it): the item then receives nothing.
  addressspace::NodeIndex notifier = addressspace::kNoNode;
  // In its shard's index (ShardState::event_items), at position `index_slot` of its notifier's list.
  bool indexed = false;
  uint32_t index_slot = 0;

  // Does `event` pass the where clause?
  bool matches(const EventView& event) const noexcept { return services::matches(compiled_, event); }

  // The queue.
  bool empty() const noexcept { return count_ == 0; }
  size_t size() const noexcept { return count_; }
  size_t bytes() const noexcept { return bytes_; }
  // The encoded fields of the oldest event (Int32 n, n Variants). REQUIRES: !empty().
  const ua::ByteBuffer& front() const noexcept { return slots_[head_].bytes; }
  bool front_is_overflow() const noexcept { return count_ > 0 && slots_[head_].overflow; }
  void pop_front() noexcept;
  void clear() noexcept;
  // Keeps at most `capacity` events, the newest.
  void trim(uint32_t capacity) noexcept;

  // Queues `event` into a queue of `capacity` events. When the queue is full, `overflow()` gives the
  // EventQueueOverflowEventType event to queue (built at most once per drain by the caller). Returns
  // true when an overflow event was added.
  template <class F>
  bool add(const EventView& event, uint32_t capacity, bool discard_oldest, F&& overflow) {
    if (!full(capacity)) {
      push_back(event, false);
      return false;
    }
    if (capacity < 2) {
      pop_front();
      push_back(event, false);
      return false;
    }
    if (!discard_oldest) {
      if (slot(count_ - 1).overflow) return false;  // this gap already has its overflow event
      pop_back();
      push_back(overflow(), true);
      return true;
    }
    const bool had = front_is_overflow();
    if (had) pop_front();
    // Room for the new event and the overflow event, in count and in bytes.
    while (count_ > 0 && (count_ + 2 > capacity || bytes_ + 2 * kMaxEventBytes > kMaxQueueBytes)) pop_front();
    push_front(overflow(), true);
    push_back(event, false);
    return !had;
  }

  // Events meant for this item were lost before they reached it (its shard's inbox was full): an
  // overflow event is queued as for a full queue, at the end unless discardOldest must make room at the
  // front. Returns true when one was added.
  template <class F>
  bool note_loss(uint32_t capacity, bool discard_oldest, F&& overflow) {
    if (capacity < 2 || (count_ > 0 && slot(count_ - 1).overflow)) return false;
    if (!full(capacity)) {
      push_back(overflow(), true);
      return true;
    }
    if (!discard_oldest) {
      pop_back();
      push_back(overflow(), true);
      return true;
    }
    if (front_is_overflow()) return false;
    while (count_ > 0 && (count_ + 1 > capacity || bytes_ + 2 * kMaxEventBytes > kMaxQueueBytes)) pop_front();
    push_front(overflow(), true);
    return true;
  }

 private:
  struct Slot {
    ua::ByteBuffer bytes;
    bool overflow = false;
  };
  bool full(uint32_t capacity) const noexcept {
    return count_ >= capacity || bytes_ + kMaxEventBytes > kMaxQueueBytes;
  }
  Slot& slot(size_t i) noexcept { return slots_[(head_ + i) % slots_.size()]; }
  Slot& grow_back();   // the slot after the newest, the ring grown when full
  Slot& grow_front();  // the slot before the oldest
  void push_back(const EventView& event, bool overflow);
  void push_front(const EventView& event, bool overflow);
  void pop_back() noexcept;
  void release(Slot& s) noexcept;
  void encode(const EventView& event, Slot& s);

  ua::EventFilter requested_;
  std::unique_ptr<StoreEventSchema> schema_;  // what compiled_ points to
  CompiledFilter compiled_;
  uint64_t generation_ = 0;
  ua::Variant scratch_;  // a select clause's index range result
  std::vector<Slot> slots_;
  size_t head_ = 0;
  size_t count_ = 0;
  size_t bytes_ = 0;
};

}  // namespace opcuad::services
