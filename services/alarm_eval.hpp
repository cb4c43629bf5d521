#pragma once
// Alarm evaluation (Part 9 §5.8; docs/CONFIGURATION.md "Alarms", docs/ARCHITECTURE.md "Alarms"): judging a
// condition's input against its limits, the condition methods' state changes (Part 9 §5.5.4-§5.5.6,
// §5.7.3-§5.7.4) and the events both produce.
//
// Every function here takes the condition's lock (addressspace::ConditionState) for its work, so any
// thread may call them for any condition; they never block otherwise. A change of state:
//   - gets a new event with a new EventId (Part 9 §5.7.3: every event has a unique EventId), whose fields
//     are the condition's member variables (Part 9 §5.5.2), the changed ones taken from the new state;
//   - writes the changed member variables' cells (ActiveState, AckedState/Id, Retain, EventId, Time,
//     Message, ...), so Read, Browse and data-change subscriptions on them see the same state;
//   - reports the cells written (the caller wakes exception-based items with Server::notify_written) and
//     whether the state file's part changed.
// A judgement that changes nothing (a value still High) costs the lock, one cell snapshot and a few
// compares, and produces nothing.
//
// The rules (opcuad's, where Part 9 leaves them to the server):
//   - limits: HighHigh when value >= HighHigh, High when >= High, LowLow when <= LowLow, Low when <= Low;
//     a state is left only once the value is back by more than the deadband;
//   - deviation: the same on input - setpoint; off-normal: active while input != normal value;
//   - an input (or setpoint) with a Bad status changes Quality only, never ActiveState;
//   - a new activation clears AckedState; Acknowledge clears ConfirmedState when Confirm is used;
//   - Retain = Enabled AND (Active OR NOT Acked OR (Confirm used AND NOT Confirmed));
//   - on-delay / off-delay: a transition of ActiveState waits until its condition held that long; the caller
//     arms a timer (Outcome::delay_ms) and judges again with `force` when it expires;
//   - a disabled condition is not judged and raises nothing until Enable, which judges it again.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "addressspace/condition_specs.hpp"
#include "addressspace/node_store.hpp"
#include "addressspace/value_store.hpp"
#include "config/roles.hpp"
#include "services/event_record.hpp"
#include "ua/status_code.hpp"

namespace opcuad::services::alarm {

// Bounds on method arguments (docs/SECURITY.md): a longer comment is BadInvalidArgument.
inline constexpr size_t kMaxCommentBytes = 1024;
// The longest Message a template expands to; the rest is cut.
inline constexpr size_t kMaxMessageBytes = 512;

// What one judgement or method call did.
struct Outcome {
  std::shared_ptr<const EventRecord> event;  // the condition event to raise, or null
  // The member variables written (at most one per field of the condition).
  static constexpr size_t kMaxCells = 64;
  std::array<const addressspace::ValueCell*, kMaxCells> cells;  // the first cell_count are set
  size_t cell_count = 0;
  uint32_t delay_ms = 0;  // > 0: judge again with `force` after this long (a pending on/off-delay)
  bool persist = false;   // a field the state file keeps changed

  std::span<const addressspace::ValueCell* const> written() const noexcept {
    return {cells.data(), cell_count};
  }
};

// Sets a condition that was never judged to its configured start (Enabled as configured, inactive,
// acknowledged, confirmed), unless the state file gave it one. Idempotent.
void initialise(const addressspace::ConditionSpec& spec);

// Judges `spec`'s input (and setpoint or normal value) as they are now. Without `force`, an input whose
// version did not change since the last judgement is not judged again. `delay_expired`: the call of the
// timer Outcome::delay_ms asked for (a pending transition is taken, or its timer armed again for the rest).
// At start and after a reload (`force` without `delay_expired`) a judgement that changes nothing still
// writes the member variables from the state (the one the state file restored), without an event.
Outcome evaluate(const addressspace::NodeStore& store, addressspace::ValueStore& values,
                 addressspace::EpochReclaimer::Participant& p, const addressspace::ConditionSpec& spec,
                 ua::DateTime now, bool force, bool delay_expired = false);

// The condition methods called on a condition instance (Part 9 §5.5.4-§5.5.6, §5.7.3-§5.7.4).
enum class Method : uint8_t { Enable, Disable, AddComment, Acknowledge, Confirm };

struct MethodCall {
  Method method = Method::Acknowledge;
  const ua::ByteString* event_id = nullptr;    // AddComment, Acknowledge, Confirm
  const ua::LocalizedText* comment = nullptr;  // likewise
  std::string_view user;                       // ClientUserId: the session's user ("" anonymous)
  config::RoleSet roles = 0;                   // the caller's roles, against the spec's ack_roles
};

namespace detail {
// ConditionState::summary: what a judgement compares against, published under the lock at the end of
// every change so that the common judgement (nothing changes) needs no lock. Bits 0-7 flags, 8-15 the
// limit state, 16-23 the non-exclusive bits, 32-63 the Quality.
inline constexpr uint64_t kSummaryValid = 1, kSummaryEnabled = 2, kSummaryActive = 4, kSummaryPending = 8;
// quiet() for the cases its inline part does not decide: the whole judgement without the lock.
bool quiet_slow(const addressspace::ConditionSpec& c);
}  // namespace detail

// True when judging `spec`'s inputs as they are now would change nothing, found without the lock and
// without building an Outcome (the common case of a Write, Server::evaluate_alarms); false when it may
// change something (evaluate() then decides). REQUIRES: as evaluate() without `force`. Inline: it runs
// for every alarm a Write reaches.
inline bool quiet(const addressspace::ConditionSpec& c) {
  if (!c.state || !c.input_cell) return true;
  const addressspace::ConditionState& s = *c.state;
  if (!s.initialised_flag.load(std::memory_order_acquire)) return false;
  if (c.kind == addressspace::ConditionKind::ExclusiveLimit ||
      c.kind == addressspace::ConditionKind::Deviation) {
    // The common case in a few loads and compares: the number (input, or input - setpoint) inside the
    // interval its held state keeps (ConditionSpec::steady), with the Quality unchanged; the same
    // reasoning as the judgement without the lock in alarm_eval.cpp (the lock word first, then the
    // summary, then the values).
    if (s.locked.load(std::memory_order_acquire)) return false;
    const uint64_t sum = s.summary.load(std::memory_order_acquire);
    if ((sum & (detail::kSummaryValid | detail::kSummaryPending)) != detail::kSummaryValid) return false;
    if (!(sum & detail::kSummaryEnabled)) return true;  // disabled: not judged
    double x = 0, setpoint = 0;
    ua::StatusCode quality, reference;
    const size_t state = (sum >> 8) & 0xFF;
    if (state < c.steady.size() && addressspace::ValueStore::number(*c.input_cell, x, quality) &&
        (!c.reference_cell || addressspace::ValueStore::number(*c.reference_cell, setpoint, reference))) {
      if (reference.is_bad() && !quality.is_bad()) quality = reference;
      if (!quality.is_bad() && quality.value() == static_cast<uint32_t>(sum >> 32) &&
          c.steady[state].first < x - setpoint && x - setpoint < c.steady[state].second)
        return true;
    }
  }
  return detail::quiet_slow(c);
}

// Runs `call` on `spec`. The status codes of Part 9: BadUserAccessDenied (roles), BadConditionDisabled,
// BadConditionAlreadyEnabled / BadConditionAlreadyDisabled, BadEventIdUnknown (not the EventId of the
// condition's last event), BadConditionBranchAlreadyAcked / BadConditionBranchAlreadyConfirmed,
// BadInvalidArgument (AddComment without a comment, a comment above kMaxCommentBytes), BadMethodInvalid
// (Confirm on a condition without ConfirmedState). Good: `out` holds the event and the cells written.
ua::StatusCode call(const addressspace::NodeStore& store, addressspace::ValueStore& values,
                    addressspace::EpochReclaimer::Participant& p, const addressspace::ConditionSpec& spec,
                    const MethodCall& call, ua::DateTime now, Outcome& out);

// The condition's current state as an event that carries the EventId and Time of its last event
// (ConditionRefresh, Part 9 §5.5.7 and §4.5: a client acknowledges with that EventId), or null when the
// condition is not retained (Retain FALSE, or disabled).
std::shared_ptr<const EventRecord> refresh_event(const addressspace::NodeStore& store,
                                                 const addressspace::ConditionSpec& spec);

// Retain (above) of a state. REQUIRES: the caller holds the state's lock.
bool retained(const addressspace::ConditionSpec& spec, const addressspace::ConditionState& s) noexcept;

}  // namespace opcuad::services::alarm
