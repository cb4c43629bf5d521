// Alarm evaluation (services/alarm_eval.hpp): the condition state machine of Part 9 on real conditions built
// from node-file JSON: limit states with deadband and transitions, Retain, the methods and their status
// codes, delays, quality, and the member variables that follow the state.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include "addressspace/condition_specs.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "config/roles.hpp"
#include "services/alarm_eval.hpp"
#include "tests/unit/services/allocation_counter.hpp"
#include "ua/generated/node_ids.hpp"

namespace alarm_eval_test {

using namespace opcuad;
using namespace opcuad::services;
using addressspace::ConditionSpec;
using addressspace::kNoNode;
using addressspace::NodeIndex;
namespace field = addressspace::event_field;
namespace status = ua::status;

ua::NodeId id(const std::string& s) {
  return ua::NodeId(2, ua::String(s));
}

std::string errors_of(const std::vector<config::ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.to_string() + "\n";
  return s;
}

// A tank with a Double level carrying `alarms`, a setpoint and a mode.
struct Plant {
  explicit Plant(const std::string& alarms, const std::string& mode_alarms = "") {
    loaded = config::load_config_text(R"({"namespaces": ["urn:t"]})", "server.json", ".");
    const std::string nodes = R"({"namespaces": ["urn:t"], "nodes": [
      {"kind": "object", "name": "Tank1", "children": [
        {"kind": "variable", "name": "Level", "data_type": "Double", "value": 50, "access": ["read", "write"],
         "alarms": [)" + alarms +
                              R"(]},
        {"kind": "variable", "name": "Setpoint", "data_type": "Double", "value": 50},
        {"kind": "variable", "name": "Mode", "data_type": "Int32", "value": 1)" +
                              (mode_alarms.empty() ? "" : R"(, "alarms": [)" + mode_alarms + "]") + "}]}]}";
    config::load_node_file_text(nodes, "nodes.json", loaded);
    config::check_references(loaded);
    INFO(errors_of(loaded.errors));
    REQUIRE(loaded.ok());
    p = space.reclaimer().register_participant();
    const auto errors = config::build_address_space(loaded.config, space, *p);
    INFO(errors_of(errors));
    REQUIRE(errors.empty());
  }
  const addressspace::NodeStore& store() const { return *space.current(); }
  const ConditionSpec& spec(const std::string& condition) const {
    const NodeIndex n = store().find(id(condition));
    REQUIRE(n != kNoNode);
    const ConditionSpec* s = store().condition_specs()->find(n);
    REQUIRE(s);
    return *s;
  }
  void write(const std::string& variable, ua::Variant v, ua::StatusCode st = ua::StatusCode(0)) {
    const NodeIndex n = store().find(id(variable));
    REQUIRE(n != kNoNode);
    ua::DataValue dv;
    dv.value = std::move(v);
    dv.status = st;
    dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
    space.values().write(*store().variable(n)->cell, dv, *p);
  }
  ua::Variant read(const std::string& variable) const {
    const NodeIndex n = store().find(id(variable));
    REQUIRE(n != kNoNode);
    ua::DataValue dv;
    addressspace::ValueStore::read(*store().variable(n)->cell, dv);
    return dv.value;
  }
  alarm::Outcome judge(const ConditionSpec& c, ua::DateTime now = ua::DateTime::now(), bool force = false,
                       bool delay_expired = false) {
    return alarm::evaluate(store(), space.values(), *p, c, now, force, delay_expired);
  }
  ua::StatusCode call(const ConditionSpec& c, alarm::Method m, const ua::ByteString* event_id = nullptr,
                      const ua::LocalizedText* comment = nullptr,
                      config::RoleSet roles = config::role::kEveryone, alarm::Outcome* out = nullptr) {
    alarm::MethodCall mc;
    mc.method = m;
    mc.event_id = event_id;
    mc.comment = comment;
    mc.user = "operator1";
    mc.roles = roles;
    alarm::Outcome o;
    const ua::StatusCode s = alarm::call(store(), space.values(), *p, c, mc, ua::DateTime::now(), o);
    if (out) *out = std::move(o);
    return s;
  }
  config::LoadResult loaded;
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* p = nullptr;
};

const ua::Variant& field_of(const alarm::Outcome& o, FieldKey key) {
  REQUIRE(o.event);
  static const ua::Variant null;
  const ua::Variant* v = o.event->field(key);
  return v ? *v : null;
}

std::string text(const ua::Variant& v) {
  const auto* t = v.get_if<ua::LocalizedText>();
  return t ? std::string(t->text.view()) : "(not a LocalizedText)";
}

ua::ByteString event_id(const alarm::Outcome& o) {
  const auto* b = field_of(o, field::kEventId).get_if<ua::ByteString>();
  REQUIRE(b);
  return *b;
}

const char* kLimits = R"json({"name": "LevelLimits", "type": "exclusive_limit",
  "limits": {"high_high": 95, "high": 85, "low": 10, "low_low": 5},
  "severity": {"high_high": 900, "high": 700, "low": 600, "low_low": 800},
  "deadband": 1.5, "message": "{name}: level {value} is {state} (limit {limit})",
  "ack_roles": ["Operator", "Supervisor"]})json";

TEST_CASE("alarm eval: exclusive limits, deadband, transitions, acknowledgement and Retain",
          "[alarms][services]") {
  Plant plant(kLimits);
  const ConditionSpec& c = plant.spec("Tank1.Level.LevelLimits");
  const std::string m = "Tank1.Level.LevelLimits.";

  // Inside the limits: nothing happens, and an unchanged input is not judged again.
  CHECK_FALSE(plant.judge(c, ua::DateTime::now(), true).event);
  plant.write("Tank1.Level", 90.0);
  alarm::Outcome high = plant.judge(c);
  REQUIRE(high.event);
  CHECK(high.persist);
  CHECK(field_of(high, field::kActiveStateId) == ua::Variant(true));
  CHECK(text(field_of(high, field::kActiveState)) == "Active");
  CHECK(field_of(high, field::kAckedStateId) == ua::Variant(false));
  CHECK(text(field_of(high, field::kLimitStateCurrentState)) == "High");
  CHECK(field_of(high, field::kLimitStateCurrentStateId) ==
        ua::Variant(ua::NodeId(0, ua::id::ExclusiveLimitStateMachineType_High)));
  CHECK(field_of(high, field::kSeverity) == ua::Variant(uint16_t{700}));
  CHECK(field_of(high, field::kRetain) == ua::Variant(true));
  CHECK(text(field_of(high, field::kMessage)) == "LevelLimits: level 90 is High (limit 85)");
  CHECK(field_of(high, kThisNodeField) == ua::Variant(id("Tank1.Level.LevelLimits")));
  CHECK(field_of(high, field::kSourceNode) == ua::Variant(id("Tank1.Level")));
  // The member variables follow the state.
  CHECK(plant.read(m + "ActiveState.Id") == ua::Variant(true));
  CHECK(plant.read(m + "Retain") == ua::Variant(true));
  CHECK(plant.read(m + "EventId") == ua::Variant(event_id(high)));
  CHECK(high.cell_count > 5);
  CHECK_FALSE(plant.judge(c).event);  // same version: not judged

  plant.write("Tank1.Level", 96.0);
  alarm::Outcome hh = plant.judge(c);
  REQUIRE(hh.event);
  CHECK(text(field_of(hh, field::kLimitStateCurrentState)) == "HighHigh");
  CHECK(field_of(hh, field::kLimitStateLastTransitionId) ==
        ua::Variant(ua::NodeId(0, ua::id::ExclusiveLimitStateMachineType_HighToHighHigh)));
  CHECK(field_of(hh, field::kSeverity) == ua::Variant(uint16_t{900}));
  CHECK(field_of(hh, field::kLastSeverity) == ua::Variant(uint16_t{700}));
  CHECK(event_id(hh) != event_id(high));

  // Within the deadband of HighHigh (95 - 1.5): still HighHigh, no event.
  plant.write("Tank1.Level", 94.0);
  CHECK_FALSE(plant.judge(c).event);
  plant.write("Tank1.Level", 93.0);
  alarm::Outcome back = plant.judge(c);
  REQUIRE(back.event);
  CHECK(text(field_of(back, field::kLimitStateCurrentState)) == "High");
  CHECK(field_of(back, field::kLimitStateLastTransitionId) ==
        ua::Variant(ua::NodeId(0, ua::id::ExclusiveLimitStateMachineType_HighHighToHigh)));

  // Back to normal while unacknowledged: inactive, still retained.
  plant.write("Tank1.Level", 50.0);
  alarm::Outcome normal = plant.judge(c);
  REQUIRE(normal.event);
  CHECK(field_of(normal, field::kActiveStateId) == ua::Variant(false));
  CHECK(field_of(normal, field::kLimitStateCurrentState).is_empty());
  CHECK(field_of(normal, field::kRetain) == ua::Variant(true));
  REQUIRE(alarm::refresh_event(plant.store(), c));
  CHECK(*alarm::refresh_event(plant.store(), c)->field(field::kEventId) == ua::Variant(event_id(normal)));

  // Acknowledge: the EventId of the last event only, the roles of ack_roles only.
  const ua::ByteString old = event_id(high), last = event_id(normal);
  const ua::LocalizedText comment{ua::String("en"), ua::String("seen")};
  CHECK(plant.call(c, alarm::Method::Acknowledge, &old, &comment) == status::BadEventIdUnknown);
  CHECK(plant.call(c, alarm::Method::Acknowledge, &last, &comment, config::role::kObserver) ==
        status::BadUserAccessDenied);
  alarm::Outcome acked;
  REQUIRE(plant.call(c, alarm::Method::Acknowledge, &last, &comment, config::role::kOperator, &acked) ==
          status::Good);
  CHECK(field_of(acked, field::kAckedStateId) == ua::Variant(true));
  CHECK(field_of(acked, field::kRetain) == ua::Variant(false));
  CHECK(text(field_of(acked, field::kComment)) == "seen");
  CHECK(field_of(acked, field::kClientUserId) == ua::Variant(ua::String("operator1")));
  CHECK(plant.read(m + "AckedState.Id") == ua::Variant(true));
  CHECK_FALSE(alarm::refresh_event(plant.store(), c));  // not retained any more
  const ua::ByteString after = event_id(acked);
  CHECK(plant.call(c, alarm::Method::Acknowledge, &after, nullptr) == status::BadConditionBranchAlreadyAcked);
}

TEST_CASE("alarm eval: Disable, Enable, AddComment and their status codes", "[alarms][services]") {
  Plant plant(kLimits);
  const ConditionSpec& c = plant.spec("Tank1.Level.LevelLimits");
  plant.write("Tank1.Level", 3.0);
  alarm::Outcome lowlow = plant.judge(c);
  REQUIRE(lowlow.event);
  CHECK(text(field_of(lowlow, field::kLimitStateCurrentState)) == "LowLow");
  const ua::ByteString id1 = event_id(lowlow);

  const ua::LocalizedText null_comment;
  const ua::LocalizedText long_comment{ua::String("en"),
                                       ua::String(std::string(alarm::kMaxCommentBytes + 1, 'x'))};
  CHECK(plant.call(c, alarm::Method::AddComment, &id1, &null_comment) == status::BadInvalidArgument);
  CHECK(plant.call(c, alarm::Method::AddComment, &id1, &long_comment) == status::BadInvalidArgument);
  CHECK(plant.call(c, alarm::Method::Confirm, &id1, &null_comment) ==
        status::BadMethodInvalid);  // no confirm
  const ua::LocalizedText note{ua::String("en"), ua::String("pump checked")};
  alarm::Outcome commented;
  REQUIRE(plant.call(c, alarm::Method::AddComment, &id1, &note, config::role::kEveryone, &commented) ==
          status::Good);
  CHECK(text(field_of(commented, field::kComment)) == "pump checked");
  CHECK(field_of(commented, field::kAckedStateId) == ua::Variant(false));  // a comment acknowledges nothing
  // Only the member variables the comment changed are written (and their items woken): the comment,
  // who made it and when, and the event's own EventId, Time and ReceiveTime; never the unchanged states.
  auto wrote = [&](const alarm::Outcome& o, FieldKey key) {
    const addressspace::ValueCell* cell = c.field_cell(key);
    REQUIRE(cell);
    return std::find(o.written().begin(), o.written().end(), cell) != o.written().end();
  };
  CHECK(wrote(commented, field::kComment));
  CHECK(wrote(commented, field::kEventId));
  CHECK_FALSE(wrote(commented, field::kActiveStateId));
  CHECK_FALSE(wrote(commented, field::kActiveState));
  CHECK_FALSE(wrote(commented, field::kAckedStateId));
  CHECK_FALSE(wrote(commented, field::kEnabledState));
  CHECK_FALSE(wrote(commented, field::kSeverity));
  CHECK(wrote(lowlow, field::kActiveStateId));
  // EventIds: 16 bytes, one process prefix, never the same twice.
  const ua::ByteString id_c = event_id(commented);
  REQUIRE(id_c.size() == 16);
  REQUIRE(id1.size() == 16);
  CHECK(id_c.view().substr(0, 8) == id1.view().substr(0, 8));
  CHECK(id_c != id1);

  alarm::Outcome disabled;
  REQUIRE(plant.call(c, alarm::Method::Disable, nullptr, nullptr, config::role::kEveryone, &disabled) ==
          status::Good);
  CHECK(field_of(disabled, field::kEnabledStateId) == ua::Variant(false));
  CHECK(field_of(disabled, field::kRetain) == ua::Variant(false));
  CHECK(plant.call(c, alarm::Method::Disable) == status::BadConditionAlreadyDisabled);
  const ua::ByteString id2 = event_id(disabled);
  CHECK(plant.call(c, alarm::Method::Acknowledge, &id2, &note) == status::BadConditionDisabled);
  CHECK_FALSE(alarm::refresh_event(plant.store(), c));
  // Disabled: not judged.
  plant.write("Tank1.Level", 50.0);
  CHECK_FALSE(plant.judge(c).event);
  plant.write("Tank1.Level", 97.0);
  CHECK_FALSE(plant.judge(c).event);

  // Enable judges the input as it is now, in the Enable's own event.
  alarm::Outcome enabled;
  REQUIRE(plant.call(c, alarm::Method::Enable, nullptr, nullptr, config::role::kEveryone, &enabled) ==
          status::Good);
  CHECK(field_of(enabled, field::kEnabledStateId) == ua::Variant(true));
  CHECK(text(field_of(enabled, field::kLimitStateCurrentState)) == "HighHigh");
  CHECK(plant.call(c, alarm::Method::Enable) == status::BadConditionAlreadyEnabled);
}

TEST_CASE("alarm eval: off-normal with Confirm, a Bad input, on-delay", "[alarms][services]") {
  Plant plant(R"({"name": "Delayed", "type": "exclusive_limit", "limits": {"high": 80}, "on_delay_ms": 200})",
              R"({"name": "NotAuto", "type": "off_normal", "normal_value": 1, "severity": 300,
                  "message": "{name}: mode {value} is {state}", "confirm": true})");
  const ConditionSpec& mode = plant.spec("Tank1.Mode.NotAuto");
  plant.write("Tank1.Mode", int32_t{3});
  alarm::Outcome on = plant.judge(mode);
  REQUIRE(on.event);
  CHECK(text(field_of(on, field::kMessage)) == "NotAuto: mode 3 is Active");
  CHECK(field_of(on, field::kConfirmedStateId) == ua::Variant(true));
  plant.write("Tank1.Mode", int32_t{1});
  alarm::Outcome off = plant.judge(mode);
  REQUIRE(off.event);
  ua::ByteString id = event_id(off);
  CHECK(plant.call(mode, alarm::Method::Confirm, &id, nullptr) == status::BadConditionBranchAlreadyConfirmed);
  alarm::Outcome acked;
  REQUIRE(plant.call(mode, alarm::Method::Acknowledge, &id, nullptr, config::role::kEveryone, &acked) ==
          status::Good);
  CHECK(field_of(acked, field::kConfirmedStateId) == ua::Variant(false));
  CHECK(field_of(acked, field::kRetain) == ua::Variant(true));  // waits for the confirmation
  id = event_id(acked);
  alarm::Outcome confirmed;
  REQUIRE(plant.call(mode, alarm::Method::Confirm, &id, nullptr, config::role::kEveryone, &confirmed) ==
          status::Good);
  CHECK(field_of(confirmed, field::kConfirmedStateId) == ua::Variant(true));
  CHECK(field_of(confirmed, field::kRetain) == ua::Variant(false));

  // A Bad input changes Quality only.
  plant.write("Tank1.Mode", int32_t{7}, status::BadSensorFailure);
  alarm::Outcome bad = plant.judge(mode);
  REQUIRE(bad.event);
  CHECK(field_of(bad, field::kQuality) == ua::Variant(status::BadSensorFailure));
  CHECK(field_of(bad, field::kActiveStateId) == ua::Variant(false));

  // On-delay: the activation waits; a judgement before the delay is over takes nothing.
  const ConditionSpec& delayed = plant.spec("Tank1.Level.Delayed");
  plant.write("Tank1.Level", 90.0);
  const ua::DateTime t0 = ua::DateTime::now();
  alarm::Outcome wait = plant.judge(delayed, t0);
  CHECK_FALSE(wait.event);
  CHECK(wait.delay_ms == 200);
  plant.write("Tank1.Level", 91.0);
  alarm::Outcome again = plant.judge(delayed, ua::DateTime{t0.ticks + 50 * 10000});
  CHECK_FALSE(again.event);
  CHECK(again.delay_ms == 0);  // its timer is armed already
  alarm::Outcome early = plant.judge(delayed, ua::DateTime{t0.ticks + 150 * 10000}, true, true);
  CHECK_FALSE(early.event);
  CHECK(early.delay_ms == 50);
  alarm::Outcome taken = plant.judge(delayed, ua::DateTime{t0.ticks + 200 * 10000}, true, true);
  REQUIRE(taken.event);
  CHECK(field_of(taken, field::kActiveStateId) == ua::Variant(true));
  // Back below before an off-delay... there is none: inactive at once.
  plant.write("Tank1.Level", 50.0);
  alarm::Outcome gone = plant.judge(delayed);
  REQUIRE(gone.event);
  CHECK(field_of(gone, field::kActiveStateId) == ua::Variant(false));
  // A value that returns before the on-delay is over cancels the activation.
  plant.write("Tank1.Level", 90.0);
  const ua::DateTime t1 = ua::DateTime::now();
  CHECK(plant.judge(delayed, t1).delay_ms == 200);
  plant.write("Tank1.Level", 50.0);
  CHECK_FALSE(plant.judge(delayed, ua::DateTime{t1.ticks + 100 * 10000}).event);
  CHECK_FALSE(plant.judge(delayed, ua::DateTime{t1.ticks + 300 * 10000}, true, true).event);
  // A client that flips the input across the limit without end arms no more than one timer.
  uint32_t armed = 0;
  for (int i = 0; i < 1000; ++i) {
    plant.write("Tank1.Level", i % 2 ? 50.0 : 90.0);
    if (plant.judge(delayed, ua::DateTime{t1.ticks + (400 + i) * 10000}).delay_ms > 0) ++armed;
  }
  CHECK(armed == 1);
}

TEST_CASE("alarm eval: non-exclusive limits and deviation from a setpoint", "[alarms][services]") {
  Plant plant(R"({"name": "Bands", "type": "non_exclusive_limit", "limits": {"high_high": 95, "high": 85},
                  "severity": {"high_high": 900, "high": 500}},
                 {"name": "Dev", "type": "deviation", "setpoint_node": "s=Tank1.Setpoint",
                  "limits": {"high": 10, "low": -10}})");
  const ConditionSpec& bands = plant.spec("Tank1.Level.Bands");
  const ConditionSpec& dev = plant.spec("Tank1.Level.Dev");
  plant.write("Tank1.Level", 97.0);
  alarm::Outcome both = plant.judge(bands);
  REQUIRE(both.event);
  CHECK(field_of(both, field::kHighHighStateId) == ua::Variant(true));
  CHECK(field_of(both, field::kHighStateId) == ua::Variant(true));
  CHECK(field_of(both, field::kSeverity) == ua::Variant(uint16_t{900}));
  CHECK(text(field_of(both, field::kMessage)) == "Bands is HighHigh");  // no template: the default
  alarm::Outcome above = plant.judge(dev);
  REQUIRE(above.event);
  CHECK(text(field_of(above, field::kLimitStateCurrentState)) == "High");
  // The setpoint follows the level: the deviation is gone.
  plant.write("Tank1.Setpoint", 95.0);
  alarm::Outcome near = plant.judge(dev);
  REQUIRE(near.event);
  CHECK(field_of(near, field::kActiveStateId) == ua::Variant(false));
  plant.write("Tank1.Level", 90.0);
  alarm::Outcome one = plant.judge(bands);
  REQUIRE(one.event);
  CHECK(field_of(one, field::kHighHighStateId) == ua::Variant(false));
  CHECK(field_of(one, field::kHighStateId) == ua::Variant(true));
}

TEST_CASE("alarm eval: the quick judgement of a Write agrees with the full one, deadband and bounds included",
          "[alarms][services]") {
  Plant plant(kLimits);
  const ConditionSpec& c = plant.spec("Tank1.Level.LevelLimits");
  using addressspace::LimitState;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  auto band = [&](LimitState s) { return c.steady[static_cast<size_t>(s)]; };
  // HighHigh 95, High 85, Low 10, LowLow 5, deadband 1.5.
  CHECK(band(LimitState::None) == std::pair<double, double>(10, 85));
  CHECK(band(LimitState::High) == std::pair<double, double>(83.5, 95));
  CHECK(band(LimitState::HighHigh) == std::pair<double, double>(93.5, kInf));
  CHECK(band(LimitState::Low) == std::pair<double, double>(5, 11.5));
  CHECK(band(LimitState::LowLow) == std::pair<double, double>(-kInf, 6.5));

  // Up and down through every limit in quarter steps, bounds and deadbands included: whenever the quick
  // judgement says nothing changes, the full judgement raises nothing.
  plant.judge(c, ua::DateTime::now(), true);
  size_t quiet = 0, events = 0;
  auto step = [&](double v) {
    INFO("value " << v);
    plant.write("Tank1.Level", v);
    const bool q = alarm::quiet(c);
    const bool changed = plant.judge(c).event != nullptr;
    if (q) CHECK_FALSE(changed);
    quiet += q ? 1 : 0;
    events += changed ? 1 : 0;
  };
  for (double v = 50; v <= 100; v += 0.25) step(v);
  for (double v = 100; v >= 0; v -= 0.25) step(v);
  for (double v = 0; v <= 50; v += 0.25) step(v);
  // High, HighHigh; High (below 93.5), inactive (below 83.5), Low, LowLow; Low (6.5), inactive (11.5).
  CHECK(events == 8);
  CHECK(quiet > 700);
  // A Bad input is never quick: it changes Quality.
  plant.write("Tank1.Level", 50.0, ua::status::BadSensorFailure);
  CHECK_FALSE(alarm::quiet(c));
}

#ifndef OPCUAD_ALLOCATION_COUNTER_OFF
TEST_CASE("alarm eval: a condition moving in and out of its limit allocates nothing once warm",
          "[alarms][services]") {
  // A short name, so that the default Message ("L is High") fits a string's own storage.
  Plant plant(R"json({"name": "L", "type": "exclusive_limit", "limits": {"high": 85, "low": 10}})json");
  const ConditionSpec& c = plant.spec("Tank1.Level.L");
  size_t events = 0;
  auto round = [&](int i) {
    plant.write("Tank1.Level", i % 2 ? 90.0 : 50.0);
    alarm::Outcome out = plant.judge(c);
    events += out.event ? 1 : 0;
    out = alarm::Outcome();  // the record goes back to this thread's pool
    plant.space.reclaimer().quiescent(*plant.p);
  };
  for (int i = 0; i < 32; ++i) round(i);  // warm: pools, kept boxes, the shared member fields
  const ua::Variant high = plant.read("Tank1.Level.L.ActiveState");
  events = 0;
  opcuad::test::g_allocations = 0;
  opcuad::test::g_counting = true;
  for (int i = 0; i < 64; ++i) round(i);
  opcuad::test::g_counting = false;
  CHECK(events == 64);  // every round moved the alarm
  CHECK(opcuad::test::g_allocations == 0);
  CHECK(plant.read("Tank1.Level.L.ActiveState") == high);  // the member variables still follow the state
}
#endif

}  // namespace alarm_eval_test
