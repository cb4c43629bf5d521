#pragma once
// NotifierWatch: which shards have event monitored items on which notifiers (Part 3 HasNotifier; an
// event item watches one Object or View, Part 4 §5.12.1.1), so that raising an event posts it only to
// the shards that may deliver it, without a lock.
//
// A fixed table of atomic shard bitmasks indexed by a hash of the notifier's NodeIndex. Two notifiers may
// share a slot: a shard that watches the other one then receives the event and finds no item for it.
// Shard i owns bit i (shards 0..63; a shard beyond gets every event whose notifiers have a watcher, and
// checks them itself). Only shard i's thread sets or clears bit i, counting its items per slot
// (ShardState::notifier_slot_items), so the bits need no lock.
//
// Ordering: an event raised while an item is being created may miss it (the item did not exist yet when
// the producer looked); relaxed loads and stores are enough.
//
// Thread-safe: any thread reads, each shard writes its own bit.

#include <atomic>
#include <cstdint>
#include <memory>

#include "addressspace/node.hpp"

namespace opcuad::services {

class NotifierWatch {
 public:
  static constexpr size_t kSlotBits = 12;  // 4 Ki slots, 32 KiB
  static constexpr size_t kSlots = size_t{1} << kSlotBits;
  static constexpr unsigned kMaxShards = 64;

  NotifierWatch() : masks_(std::make_unique<std::atomic<uint64_t>[]>(kSlots)) {}

  static size_t slot(addressspace::NodeIndex n) noexcept {
    return static_cast<size_t>((uint64_t{n} * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits));
  }
  // Bit `bit` of the watching shard, on its thread.
  void watch(size_t slot, uint64_t bit) noexcept { masks_[slot].fetch_or(bit, std::memory_order_relaxed); }
  void unwatch(size_t slot, uint64_t bit) noexcept {
    masks_[slot].fetch_and(~bit, std::memory_order_relaxed);
  }
  uint64_t watchers(addressspace::NodeIndex n) const noexcept {
    return masks_[slot(n)].load(std::memory_order_relaxed);
  }

 private:
  std::unique_ptr<std::atomic<uint64_t>[]> masks_;
};

}  // namespace opcuad::services
