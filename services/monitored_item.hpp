#pragma once
// MonitoredItem (Part 4 §5.12.1): what one item samples, how it decides that a sample is a change worth
// reporting (DataChangeFilter, §7.22.2), and the bounded queue its notifications wait in (§5.12.1.5).
//
// shard-local: owned by its Subscription (Subscription::items), sampled by its shard's Sampler, and
// touched only by that shard's thread.

#include <cstdint>
#include <optional>
#include <vector>

#include "addressspace/node_store.hpp"
#include "addressspace/value_store.hpp"
#include "services/index_range.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

class Subscription;

// Part 4 §7.39: InfoType DataValue (bit 10) with the Overflow bit (bit 7), set on the StatusCode of the
// value next to the one a full queue lost.
inline constexpr uint32_t kOverflowInfoBits = 0x480;
// The largest queue a monitored item gets (queueSize is revised down to it).
inline constexpr uint32_t kMaxQueueSize = 1000;
// The fastest sampling the engine serves by timer (the 100 Hz of issue 6). A requested 0 means
// exception-based sampling on write (Part 4 §5.12.1.2): granted for Values (revised to 0, woken by
// writes), otherwise revised up to this.
inline constexpr double kFastestSamplingIntervalMs = 10;
inline constexpr double kSlowestSamplingIntervalMs = 3600000;

// A decoded DataChangeFilter (Part 4 §7.22.2); the default (no filter) is StatusValue without deadband.
struct ChangeFilter {
  ua::DataChangeTrigger trigger = ua::DataChangeTrigger::StatusValue;
  ua::DeadbandType deadband = ua::DeadbandType::None;
  double deadband_value = 0;  // as requested (engineering units, or percent of the EURange)
  double absolute = 0;        // the deadband in engineering units
};

// Does `next` differ from the last reported value enough to be reported (trigger, then deadband)?
bool passes_filter(const ChangeFilter& f, const ua::DataValue& last, const ua::DataValue& next);

// A bounded FIFO of DataValues with the overflow semantics of Part 4 §5.12.1.5: when full, discardOldest
// drops the oldest value and flags the new oldest; otherwise the newest is replaced and the replacement
// flagged. A queue of one always holds the newest value and never flags overflow.
class NotificationQueue {
 public:
  void configure(uint32_t capacity, bool discard_oldest);  // keeps the newest values that fit
  void push(ua::DataValue value);
  ua::DataValue pop();  // REQUIRES: !empty()
  void clear() noexcept;
  bool empty() const noexcept { return count_ == 0; }
  size_t size() const noexcept { return count_; }
  uint32_t capacity() const noexcept { return capacity_; }
  bool discard_oldest() const noexcept { return discard_oldest_; }

 private:
  ua::DataValue& at(size_t i) noexcept { return ring_[(head_ + i) % ring_.size()]; }
  std::vector<ua::DataValue> ring_;  // grows to capacity_, then used as a ring
  size_t head_ = 0;
  size_t count_ = 0;
  uint32_t capacity_ = 1;
  bool discard_oldest_ = true;
};

struct MonitoredItem {
  // Fixed at creation.
  uint32_t id = 0;
  Subscription* subscription = nullptr;
  ua::NodeId node_id;
  uint32_t attribute_id = 13;
  std::optional<IndexRange> range;
  const addressspace::ValueCell* cell = nullptr;  // the Value cell (attribute Value only); never freed

  // Set by Create/Modify/SetMonitoringMode.
  uint32_t client_handle = 0;
  ua::MonitoringMode mode = ua::MonitoringMode::Disabled;
  double sampling_interval_ms = 0;
  bool follows_publishing = false;  // asked for -1: tracks the publishing interval (Part 4 §5.12.1.2)
  ua::TimestampsToReturn timestamps = ua::TimestampsToReturn::Both;
  ChangeFilter filter;
  NotificationQueue queue;
  std::vector<uint32_t> triggered;  // SetTriggering links (Part 4 §5.12.1.6)

  // Sampling state.
  uint64_t last_version = ~uint64_t{0};  // the cell's version at the last sample; ~0: none yet
  bool has_last = false;                 // the first sample is always reported (the initial value)
  ua::DataValue last;                    // the last value queued, for the filter
  bool ready = false;                    // on its subscription's ready list
  int64_t sampler_key = -1;              // the Sampler group it is in; -1: none
  size_t sampler_slot = 0;

  // Takes one sample; queues it when it passes the filter and tells the subscription.
  void sample(const addressspace::NodeStore& store);
  // Forget the last sample, so the next one is reported whatever its value (a mode change from Disabled).
  void reset_sampling() noexcept {
    last_version = ~uint64_t{0};
    has_last = false;
  }
};

}  // namespace opcuad::services
