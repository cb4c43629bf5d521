#pragma once
// CellWatch: which shards have exception-based monitored items (sampling interval 0, Part 4 §5.12.1.2)
// on which value cells, so that a write wakes only those shards, without a lock on the write path.
//
// A fixed table of atomic shard bitmasks indexed by a hash of the cell's address (cells never move). Two
// cells may share a slot: a writer then wakes a shard that watches the other cell, which finds no item
// for the written cell and does nothing. Shard i owns bit i (shards 0..63; a shard beyond has no bit and
// samples interval-0 items at the fastest rate instead). Only shard i's thread sets or clears bit i,
// counting the cells it watches per slot (Sampler), so bits never need a lock.
//
// Ordering (a store-buffer pattern): the writer stores the cell, then a seq_cst fence, then loads the
// mask; a watcher sets its bit, then a seq_cst fence, then takes its first sample. Whatever the
// interleaving, the watcher's first sample sees the write or the writer sees the bit.
//
// Thread-safe: any thread reads, each shard writes its own bit.

#include <atomic>
#include <cstdint>
#include <memory>

#include "addressspace/value_store.hpp"

namespace opcuad::services {

class CellWatch {
 public:
  static constexpr size_t kSlotBits = 16;  // 64 Ki slots, 512 KiB
  static constexpr unsigned kMaxShards = 64;

  CellWatch() : masks_(std::make_unique<std::atomic<uint64_t>[]>(size_t{1} << kSlotBits)) {}

  static size_t slot(const addressspace::ValueCell* cell) noexcept {
    // Cells are 64-byte aligned: drop the zero bits, then a Fibonacci hash spreads neighbours.
    const uint64_t a = reinterpret_cast<uintptr_t>(cell) >> 6;
    return static_cast<size_t>((a * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits));
  }

  // The watching shard, on its thread. watch() is followed by a fence (see Ordering above).
  void watch(size_t slot, uint64_t bit) noexcept {
    masks_[slot].fetch_or(bit, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  void unwatch(size_t slot, uint64_t bit) noexcept {
    masks_[slot].fetch_and(~bit, std::memory_order_relaxed);
  }

  // The writer, after storing the cell (and after one fence per batch: fence()).
  static void fence() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
  uint64_t watchers(const addressspace::ValueCell* cell) const noexcept {
    return masks_[slot(cell)].load(std::memory_order_relaxed);
  }

 private:
  std::unique_ptr<std::atomic<uint64_t>[]> masks_;
};

}  // namespace opcuad::services
