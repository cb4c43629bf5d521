#pragma once
// Sampler: the sampling clock of one shard. Monitored items are grouped by sampling interval, so one
// asio::steady_timer per interval serves every item of that rate on the shard (Part 4 §5.12.1.2).
//
// Deadlines are absolute: tick k of a group is due at start + k * interval, never "one interval after
// the last sample", so sampling does not drift and a late tick does not push every later one back. A
// tick that finds itself more than one interval late skips the deadlines already past (sampling them
// again would read the same value) and counts them in missed_ticks().
//
// shard-local: lives in ShardState, touched only by its shard's thread; needs no lock.

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "addressspace/address_space.hpp"

namespace opcuad::services {

struct MonitoredItem;

class Sampler {
 public:
  Sampler(asio::io_context& ctx, addressspace::AddressSpace& space) : ctx_(ctx), space_(space) {}
  ~Sampler();  // REQUIRES: on the shard's thread, or after its io_context stopped
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Adds the item to the group of its sampling_interval_ms (starting the group's timer if new).
  // REQUIRES: item not in a group (sampler_key < 0).
  void add(MonitoredItem& item);
  // Takes the item out of its group, if any; an empty group's timer stops.
  void remove(MonitoredItem& item) noexcept;
  // Stops every timer (the shard is being detached); items stay registered but are no longer sampled.
  void stop() noexcept;

  size_t group_count() const noexcept { return groups_.size(); }
  uint64_t missed_ticks() const noexcept { return missed_ticks_; }

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

  asio::io_context& ctx_;
  addressspace::AddressSpace& space_;
  // interval in microseconds -> group. A group is shared with its pending wait (through a weak_ptr), so a
  // completion already queued when the group goes away finds nothing instead of freed memory.
  std::map<int64_t, std::shared_ptr<Group>> groups_;
  uint64_t missed_ticks_ = 0;
};

}  // namespace opcuad::services
