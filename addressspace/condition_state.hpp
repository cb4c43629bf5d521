#pragma once
// ConditionState: the live state of one alarm condition (Part 9 §5.5.2 ConditionType, §5.7.2
// AcknowledgeableConditionType, §5.8.2 AlarmConditionType), what changes while the NodeStore does not:
// Enabled, Active with its limit sub-states, Acked, Confirmed, Severity, Quality, Comment, the user of the
// last method call and the EventId of the condition's last event.
//
// One record per condition NodeId, shared by every store generation that has the condition (each
// generation's ConditionSpec holds a shared_ptr to it; NodeStoreBuilder hands the previous store's record
// to the new spec of the same NodeId), so a reload keeps the state as it keeps value cells.
//
// Threads: any shard evaluates a condition (the Write that changed its input runs on the writer's shard,
// docs/ARCHITECTURE.md "Alarms"), so the record has a lock word taken with one exchange; whoever holds it
// reads and changes the fields below it. Holders never block, allocate only when a state changes, and
// never take another condition's lock, so the lock is held for microseconds and uncontended in practice.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "addressspace/event_types.hpp"
#include "ua/bytes.hpp"
#include "ua/scalars.hpp"
#include "ua/status_code.hpp"
#include "ua/text.hpp"
#include "ua/variant.hpp"

namespace opcuad::addressspace {

// ExclusiveLimitAlarmType's LimitState (Part 9 §5.8.19.2); None while the alarm is inactive. The same
// numbering as the state file's (daemon/condition_state_file.hpp).
enum class LimitState : uint8_t { None = 0, HighHigh = 1, High = 2, Low = 3, LowLow = 4 };

struct ConditionState {
  void lock() noexcept {
    // Sequentially consistent: a judgement without the lock (services/alarm_eval.cpp) relies on a taker
    // reading the input after its exchange.
    while (locked.exchange(true, std::memory_order_seq_cst)) {
      while (locked.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() noexcept { locked.store(false, std::memory_order_release); }

  std::atomic<bool> locked{false};
  // Written under the lock, read without it: the summary of the fields a judgement compares
  // (services/alarm_eval.cpp), and whether `initialised` is set.
  std::atomic<uint64_t> summary{0};
  std::atomic<bool> initialised_flag{false};

  // Under the lock.
  bool initialised = false;  // set from the spec or the state file before the first evaluation
  bool enabled = true;
  bool active = false;
  bool acked = true;
  bool confirmed = true;
  LimitState limit_state = LimitState::None;  // exclusive limit and deviation alarms
  uint8_t limit_bits = 0;                     // non-exclusive: bit alarm_limit::k* is active
  uint8_t last_transition = 0;                // exclusive: the LimitState/LastTransition (0 none)
  uint16_t severity = 0;
  uint16_t last_severity = 0;
  ua::StatusCode quality;
  ua::DateTime active_time;   // ActiveState/TransitionTime: "active since" while active
  ua::DateTime enabled_time;  // EnabledState/TransitionTime
  ua::DateTime acked_time;
  ua::DateTime confirmed_time;
  ua::DateTime severity_time;  // LastSeverity/SourceTimestamp
  ua::DateTime quality_time;   // Quality/SourceTimestamp
  ua::DateTime transition_time;
  ua::DateTime comment_time;  // Comment/SourceTimestamp
  ua::DateTime event_time;    // Time of the last event
  ua::LocalizedText comment;
  ua::String client_user_id;
  ua::ByteString event_id;  // of the last event: what Acknowledge, Confirm and AddComment must name
  std::string message;      // Message of the last event
  // The event fields of the condition's member variables the state does not own (ConditionName,
  // ConditionClassId, InputNode, the limits, ...), sorted by key: read from their cells by the first event
  // of a store generation and shared by the records of every later one (services/alarm_eval.cpp). Those
  // variables are read-only to clients and only a reload (a new generation) writes them, so the table
  // holds until the generation changes.
  std::shared_ptr<const std::vector<std::pair<FieldKey, ua::Variant>>> member_fields;
  uint64_t member_fields_generation = 0;
  const void* member_fields_spec = nullptr;  // the ConditionSpec it was read for (stores of generation 0)
  // The input and reference versions last judged (ValueStore::version): an unchanged value is not judged
  // twice.
  uint64_t input_version = 0;
  uint64_t reference_version = 0;
  // A transition waiting for its on-delay or off-delay (Part 9 §5.8.2 OnDelay, OffDelay).
  bool pending = false;
  bool pending_active = false;  // the ActiveState it waits to take
  ua::DateTime pending_since;
  bool timer_armed = false;  // a delay timer for this condition is armed (at most one at a time)
};

// Holds a condition's lock for a scope.
class ConditionLock {
 public:
  explicit ConditionLock(ConditionState& s) noexcept : s_(s) { s_.lock(); }
  ~ConditionLock() { s_.unlock(); }
  ConditionLock(const ConditionLock&) = delete;
  ConditionLock& operator=(const ConditionLock&) = delete;

 private:
  ConditionState& s_;
};

}  // namespace opcuad::addressspace
