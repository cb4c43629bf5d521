#pragma once
// Sampler: the sampling clock of one shard. Monitored items are grouped by sampling interval, so one
// asio::steady_timer per interval serves every item of that rate on the shard (Part 4 §5.12.1.2).
//
// Deadlines are absolute: tick k of a group is due at start + k * interval, never "one interval after
// the last sample", so sampling does not drift and a late tick does not push every later one back. A
// tick that finds itself more than one interval late skips the deadlines already past (sampling them
// again would read the same value) and counts them in missed_ticks().
//
// Exception-based items (sampling interval 0 on a Value with a cell) have no timer: they are kept by cell,
// the shard's bit is set in the CellWatch for that cell, and on_written() samples them when a writer (on
// any shard) says the cell changed. The version check in MonitoredItem::sample() makes a spurious or
// repeated wake cost one atomic load.
//
// shard-local: lives in ShardState, touched only by its shard's thread; needs no lock (the CellWatch bit
// it sets is its own, see cell_watch.hpp).

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "addressspace/address_space.hpp"
#include "services/cell_watch.hpp"

namespace opcuad::services {

struct MonitoredItem;

class Sampler {
 public:
  // `shard_index` picks this shard's bit in `watch`; beyond CellWatch::kMaxShards there is none.
  Sampler(asio::io_context& ctx, addressspace::AddressSpace& space, CellWatch& watch, unsigned shard_index)
      : ctx_(ctx),
        space_(space),
        watch_(watch),
        bit_(shard_index < CellWatch::kMaxShards ? uint64_t{1} << shard_index : 0) {}
  ~Sampler();  // REQUIRES: on the shard's thread, or after its io_context stopped
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Adds the item to the group of its sampling_interval_ms (starting the group's timer if new), or, for
  // an interval of 0, to the exception-based items of its cell (the fastest group when it has no cell or
  // this shard no bit). REQUIRES: item not in a group (sampler_key == kNoGroup).
  void add(MonitoredItem& item);
  // Takes the item out of its group, if any; an empty group's timer stops.
  void remove(MonitoredItem& item) noexcept;
  // Stops every timer (the shard is being detached); items stay registered but are no longer sampled.
  void stop() noexcept;

  // A writer says these cells changed: their exception-based items here take a sample.
  void on_written(std::span<const addressspace::ValueCell* const> cells);
  bool exception_based() const noexcept { return bit_ != 0; }

  size_t group_count() const noexcept { return groups_.size(); }
  size_t watched_cells() const noexcept { return exceptions_.size(); }
  // Items sampled by the timer of `interval_ms`.
  size_t items_at(double interval_ms) const noexcept {
    auto it = groups_.find(std::llround(interval_ms * 1000.0));
    return it == groups_.end() ? 0 : it->second->items.size();
  }
  uint64_t missed_ticks() const noexcept { return missed_ticks_; }

  // Phases (the sampling-jitter target, docs/PERFORMANCE.md). A sampling group of interval I ticks at the
  // multiples of I on the steady clock, so every group of one interval, on any shard, samples at the same
  // instants. Other periodic work on the shard keeps off those instants so a sampling tick does not queue
  // behind it:
  // - publishing timers start on the grid of the fastest sampling interval (kFastestSamplingIntervalMs)
  //   plus a microsecond: when both are due, the sample runs first and the publish right after it, with
  //   the fresh values (the timer queue hands out expired waits earliest first);
  static std::chrono::steady_clock::time_point publishing_phase(
      std::chrono::steady_clock::time_point now) noexcept;
  // - a periodic writer of interval I (the daemon's simulator) writes half an interval off the grid of I.
  static std::chrono::steady_clock::time_point writer_phase(
      std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration interval) noexcept;
  // The start of group ticks for `interval`: the last multiple of it at or before `now`.
  static std::chrono::steady_clock::time_point grid_start(
      std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration interval) noexcept {
    return now - now.time_since_epoch() % interval;
  }

  // Sampling jitter (the sampling-jitter target, docs/PERFORMANCE.md): how long after its deadline each timer
  // sample was taken. Per tick the start lateness and the duration are measured, and the tick's items are
  // taken to be sampled evenly over that duration (they are sampled one after another). Written by the
  // shard's thread only (relaxed load + store), read from any thread.
  struct Lateness {
    std::atomic<uint64_t> samples{0};     // item samples taken by timer
    std::atomic<uint64_t> over_250us{0};  // of those, taken more than 250 µs after their deadline
    std::atomic<uint64_t> over_1ms{0};
    std::atomic<uint64_t> over_5ms{0};
  };
  const Lateness& lateness() const noexcept { return lateness_; }

 private:
  struct Group {
    explicit Group(asio::io_context& ctx) : timer(ctx) {}
    std::chrono::microseconds interval{0};
    std::chrono::steady_clock::time_point start;
    uint64_t tick = 0;
    asio::steady_timer timer;
    std::vector<MonitoredItem*> items;
  };

  void arm(const std::shared_ptr<Group>& group);
  void run(Group& group);
  void add_exception(MonitoredItem& item);
  void remove_exception(MonitoredItem& item) noexcept;

  asio::io_context& ctx_;
  addressspace::AddressSpace& space_;
  CellWatch& watch_;
  const uint64_t bit_;  // this shard's CellWatch bit; 0: none
  // Exception-based items by cell, and how many watched cells fall in each CellWatch slot (the bit is
  // cleared when the last one goes).
  std::unordered_map<const addressspace::ValueCell*, std::vector<MonitoredItem*>> exceptions_;
  std::unordered_map<size_t, uint32_t> slot_cells_;
  // interval in microseconds (at most 3.6e9: fits the item's 32-bit sampler_key) -> group. A group is
  // shared with its pending wait (through a weak_ptr), so a
  // completion already queued when the group goes away finds nothing instead of freed memory.
  std::map<int64_t, std::shared_ptr<Group>> groups_;
  uint64_t missed_ticks_ = 0;
  Lateness lateness_;
  void record_lateness(size_t items, std::chrono::steady_clock::duration start,
                       std::chrono::steady_clock::duration took) noexcept;
};

}  // namespace opcuad::services
