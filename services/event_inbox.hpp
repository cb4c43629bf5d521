#pragma once
// EventInbox: the events raised for one shard and not yet delivered (Server::raise_event on any thread,
// the shard's drain on its own). A bounded multi-producer, single-consumer ring without a lock: a producer
// claims a slot with one compare-exchange on the tail and publishes it with the slot's sequence number;
// the consumer takes slots in order and hands each back by advancing its sequence a lap. A producer never
// waits: when the ring is full the record is dropped and counted, and the shard's next drain gives every
// event item it holds an EventQueueOverflowEventType event (Part 4 §5.12.1.5; the items cannot know which
// of them lost one).
//
// Memory: kCapacity slots, allocated once with the shard (a slot is a sequence number and a shared_ptr).
//
// Thread-safe: push() from any thread; pop(), take_lost() from the owning shard's thread only.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "services/event_record.hpp"

namespace opcuad::services {

class EventInbox {
 public:
  static constexpr size_t kCapacity = 4096;  // a power of two
  static_assert((kCapacity & (kCapacity - 1)) == 0);

  EventInbox() : slots_(std::make_unique<Slot[]>(kCapacity)) {
    for (size_t i = 0; i < kCapacity; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
  }
  EventInbox(const EventInbox&) = delete;
  EventInbox& operator=(const EventInbox&) = delete;

  // Any thread. False (and counted as lost) when the ring is full.
  bool push(std::shared_ptr<const EventRecord> record) noexcept {
    uint64_t pos = tail_.load(std::memory_order_relaxed);
    Slot* slot;
    for (;;) {
      slot = &slots_[pos & (kCapacity - 1)];
      const uint64_t seq = slot->sequence.load(std::memory_order_acquire);
      const auto lag = static_cast<int64_t>(seq - pos);
      if (lag == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
      } else if (lag < 0) {
        // The slot still holds the record of the previous lap: the consumer is kCapacity behind.
        lost_.fetch_add(1, std::memory_order_relaxed);
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);  // another producer took this slot
      }
    }
    slot->record = std::move(record);
    slot->sequence.store(pos + 1, std::memory_order_release);
    return true;
  }

  // The owning shard: the oldest published record, or nullptr when none is (a producer that claimed the
  // next slot and has not yet filled it holds the ones behind it back until it does).
  std::shared_ptr<const EventRecord> pop() noexcept {
    Slot& slot = slots_[head_ & (kCapacity - 1)];
    if (slot.sequence.load(std::memory_order_acquire) != head_ + 1) return nullptr;
    std::shared_ptr<const EventRecord> record = std::move(slot.record);
    slot.sequence.store(head_ + kCapacity, std::memory_order_release);
    ++head_;
    return record;
  }

  // The owning shard: records dropped since the last call.
  uint64_t take_lost() noexcept { return lost_.exchange(0, std::memory_order_acq_rel); }

  // Statistics, any thread.
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  // A drain is posted and has not started yet: producers post another only when they clear it.
  std::atomic<bool> wake_pending{false};

 private:
  struct Slot {
    std::atomic<uint64_t> sequence{0};
    std::shared_ptr<const EventRecord> record;
  };
  std::unique_ptr<Slot[]> slots_;
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) uint64_t head_ = 0;  // the consumer's
  std::atomic<uint64_t> lost_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace opcuad::services
