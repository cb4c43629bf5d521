#pragma once
// ConditionSpecs: the immutable specification of every alarm condition of a NodeStore (Part 9 §5.8), built
// with the store (NodeStoreBuilder::add_condition(), build()) and owned by it like its event types
// (NodeStore::condition_specs()), so each store generation, a reloaded one too, brings its own. Read by
// every shard without synchronisation.
//
// A spec says what an alarm watches and how it judges it: its condition object and type, its input
// variable (InputNode, Part 9 §5.8.2; also the ConditionSource the HasCondition reference starts from,
// Part 9 §5.12), the setpoint (ExclusiveDeviationAlarmType, Part 9 §5.8.22.3) or the node holding the
// normal value (OffNormalAlarmType's NormalState, Part 9 §5.8.24.2), the limits and their severities,
// deadband, delays, message template, whether it starts enabled, whether Confirm is used and who may
// acknowledge. The live condition state (Enabled, Active, Acked, ...) is not here: it changes while the
// store does not.
//
// Lookups: by condition NodeIndex (find(), a binary search), and by variable (watching(): the conditions
// whose input, setpoint or normal-value node it is, several per variable allowed; an index by NodeIndex,
// 4 bytes per node of the store when it has any condition, so that a Write pays no search per value).
// Those variables carry flag::kHasAlarm in their record (node.hpp).

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "addressspace/condition_state.hpp"
#include "addressspace/event_types.hpp"
#include "addressspace/node.hpp"
#include "ua/node_id.hpp"

namespace opcuad::addressspace {

class NodeStore;
class ValueCell;

// How a condition judges its input (Part 9 §5.8; docs/CONFIGURATION.md, "Alarms").
enum class ConditionKind : uint8_t {
  ExclusiveLimit,     // one limit state at a time: HighHigh, High, Low, LowLow (Part 9 §5.8.19)
  NonExclusiveLimit,  // each limit on its own (Part 9 §5.8.20)
  OffNormal,          // active while the input differs from the normal value (Part 9 §5.8.24.2)
  Deviation,          // exclusive limits on input - setpoint (Part 9 §5.8.22.3)
};

// Limit positions in ConditionSpec::limits / limit_severity / limit_mask.
namespace alarm_limit {
inline constexpr size_t kHighHigh = 0;
inline constexpr size_t kHigh = 1;
inline constexpr size_t kLow = 2;
inline constexpr size_t kLowLow = 3;
inline constexpr size_t kCount = 4;
}  // namespace alarm_limit

// What the configuration gives the builder for one condition, by NodeId (resolved by build()).
struct ConditionDecl {
  ua::NodeId condition;  // the condition object
  ua::NodeId type;       // its TypeDefinition: an alarm type (AlarmConditionType or a subtype)
  ua::NodeId input;      // InputNode and ConditionSource
  ua::NodeId reference;  // Deviation: the setpoint; OffNormal: the node holding the normal value; else null
  ConditionKind kind = ConditionKind::ExclusiveLimit;
  uint8_t limit_mask = 0;  // bit alarm_limit::k*: that limit is configured
  std::array<double, alarm_limit::kCount> limits{};
  std::array<uint16_t, alarm_limit::kCount> limit_severity{};
  uint16_t severity = 0;  // OffNormal (the limit kinds use limit_severity)
  double deadband = 0;
  // Exclusive kinds (limits, deviation): for each LimitState, the open interval (first, second) of the
  // judged number (the input, or input - setpoint) within which the state stays as it is, by the rules of
  // services/alarm_eval.cpp with the deadband (steady_bands()). Empty (first >= second) for a state the
  // limits do not have and for the other kinds. Only a shortcut for the common judgement: a value outside
  // is judged in full.
  std::array<std::pair<double, double>, 5> steady{};
  uint32_t on_delay_ms = 0, off_delay_ms = 0;
  std::string name;          // ConditionName
  std::string message;       // template (docs/CONFIGURATION.md, "Alarms")
  bool enabled = true;       // EnabledState at start
  bool confirm = false;      // ConfirmedState exists and Confirm is used (Part 9 §5.7.4)
  uint8_t ack_roles = 0xFF;  // role bits (config/roles.hpp) that may Acknowledge / Confirm
};

struct alignas(64) ConditionSpec {
  // First, on the spec's first two cache lines: what alarm::quiet() reads for every alarm a Write
  // reaches (the cells, the kind, the state and the steady bands).
  ValueCell* input_cell = nullptr;
  ValueCell* reference_cell = nullptr;
  // The live state, shared with the previous generation's spec of the same condition NodeId.
  std::shared_ptr<ConditionState> state;
  ConditionKind kind = ConditionKind::ExclusiveLimit;
  uint8_t limit_mask = 0;
  uint8_t ack_roles = 0xFF;
  bool enabled = true;
  bool confirm = false;
  uint16_t severity = 0;
  // Exclusive kinds (limits, deviation): for each LimitState, the open interval (first, second) of the
  // judged number (the input, or input - setpoint) within which the state stays as it is, by the rules of
  // services/alarm_eval.cpp with the deadband (steady_bands()). Empty (first >= second) for a state the
  // limits do not have and for the other kinds. Only a shortcut for the common judgement: a value outside
  // is judged in full.
  std::array<std::pair<double, double>, 5> steady{};
  NodeIndex node = kNoNode;  // the condition object
  EventTypeIdx type = 0;     // its type in the store's EventTypes
  NodeIndex input = kNoNode;
  NodeIndex reference = kNoNode;  // setpoint or normal-value node, kNoNode when the kind has none
  std::array<uint16_t, alarm_limit::kCount> limit_severity{};
  std::array<double, alarm_limit::kCount> limits{};
  double deadband = 0;
  uint32_t on_delay_ms = 0, off_delay_ms = 0;
  std::string name;
  std::string message;
  // The condition's member variables that are event fields of its type (EventTypes::field()), by FieldKey:
  // what a condition event reads its fields from and what a change of state writes.
  std::vector<std::pair<FieldKey, ValueCell*>> fields;  // sorted by key

  // Fills `steady` from the kind, limits and deadband.
  void steady_bands() noexcept;
  // The cell of the member variable at field `key`, or nullptr.
  ValueCell* field_cell(FieldKey key) const noexcept;
  bool has_limit(size_t which) const noexcept { return ((limit_mask >> which) & 1) != 0; }
};

class ConditionSpecs {
 public:
  struct BuildResult {
    std::shared_ptr<const ConditionSpecs> specs;  // null when errors is not empty
    std::vector<std::string> errors;
  };
  // The specs of `decls` in `s` (final references) with its event types `events` (may be null when there
  // are no decls). A condition of `previous` (the store `s` replaces, or null) with the same NodeId hands
  // its ConditionState on; the others get a new one. Errors: a NodeId that is not a node of the expected
  // class, a type that is no alarm type, a condition declared twice.
  static BuildResult build(const NodeStore& s, const EventTypes* events, std::vector<ConditionDecl> decls,
                           const NodeStore* previous = nullptr);

  size_t size() const noexcept { return specs_.size(); }
  // All specs, by ascending condition NodeIndex.
  std::span<const ConditionSpec> all() const noexcept { return specs_; }
  // The spec of condition object `condition`, or nullptr.
  const ConditionSpec* find(NodeIndex condition) const noexcept;
  // The positions in all() of the conditions whose input, setpoint or normal-value node is `variable`
  // (empty for any other node).
  std::span<const uint32_t> watching(NodeIndex variable) const noexcept {
    if (static_cast<size_t>(variable) + 1 >= watch_begin_.size()) return {};
    const uint32_t begin = watch_begin_[variable];
    return {watchers_.data() + begin, watch_begin_[variable + 1] - begin};
  }

 private:
  std::vector<ConditionSpec> specs_;
  // The conditions watching node n are all()[watchers_[i]] for i in [watch_begin_[n], watch_begin_[n + 1]);
  // empty when there is no condition.
  std::vector<uint32_t> watch_begin_;
  std::vector<uint32_t> watchers_;
};

}  // namespace opcuad::addressspace
