// Alarms of node files (config/alarms.cpp, docs/CONFIGURATION.md "Alarms"): each kind becomes a condition
// with the members Part 9 gives its type, findable from its notifier; the store's ConditionSpecs say what
// the file said; every validation rule has its message; a reload keeps the NodeIds and takes new limits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include "addressspace/condition_specs.hpp"
#include "addressspace/event_types.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "ua/generated/node_ids.hpp"

namespace alarms_test {

using namespace opcuad;
using namespace opcuad::config;
using addressspace::kNoNode;
using addressspace::NodeIndex;

std::string errors_of(const std::vector<ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.to_string() + "\n";
  return s;
}

LoadResult load_nodes(const std::string& nodes) {
  LoadResult r = load_config_text(R"({"namespaces": ["urn:t"]})", "server.json", ".");
  load_node_file_text(nodes, "nodes.json", r);
  check_references(r);
  return r;
}

std::string only_error(const LoadResult& r) {
  INFO(errors_of(r.errors));
  REQUIRE(r.errors.size() == 1);
  return r.errors[0].to_string();
}

ua::NodeId id(const std::string& s) {
  return ua::NodeId(2, ua::String(s));
}

ua::String text_of(const ua::Variant& v) {
  const auto* t = v.get_if<ua::LocalizedText>();
  return t ? t->text : ua::String("(not a LocalizedText)");
}

// A tank object with a Double level, a Double setpoint and a Boolean switch; `alarms` go on the level.
std::string tank(const std::string& alarms, const std::string& top = "") {
  return R"({"namespaces": ["urn:t"], "nodes": [
    {"kind": "object", "name": "Tank1", "children": [
      {"kind": "variable", "name": "Level", "data_type": "Double", "value": 0, "alarms": [)" +
         alarms + R"(]},
      {"kind": "variable", "name": "Setpoint", "data_type": "Double", "value": 50},
      {"kind": "variable", "name": "Text", "data_type": "String", "value": ""},
      {"kind": "variable", "name": "Switch", "data_type": "Boolean", "value": false}]}])" +
         (top.empty() ? "" : R"(, "alarms": [)" + top + "]") + "}";
}

const char* kLimits = R"json({"name": "LevelLimits", "type": "exclusive_limit",
  "limits": {"high_high": 95, "high": 85, "low": 10, "low_low": 5},
  "severity": {"high_high": 900, "high": 700, "low": 600, "low_low": 800},
  "deadband": 1.5, "on_delay_ms": 200, "message": "{name}: level {value} is {state} (limit {limit})",
  "ack_roles": ["Operator", "Supervisor"]})json";

struct Built {
  explicit Built(const std::string& nodes) : loaded(load_nodes(nodes)) {
    INFO(errors_of(loaded.errors));
    REQUIRE(loaded.ok());
    p = space.reclaimer().register_participant();
    const auto errors = build_address_space(loaded.config, space, *p);
    INFO(errors_of(errors));
    REQUIRE(errors.empty());
  }
  const addressspace::NodeStore& store() const { return *space.current(); }
  NodeIndex at(const std::string& s) const { return store().find(id(s)); }
  ua::Variant value(const std::string& s) const {
    const NodeIndex n = at(s);
    REQUIRE(n != kNoNode);
    REQUIRE(store().variable(n));
    ua::DataValue dv;
    addressspace::ValueStore::read(*store().variable(n)->cell, dv);
    return dv.value;
  }
  bool has_reference(const ua::NodeId& source, uint32_t type, const ua::NodeId& target) const {
    const auto& s = store();
    const NodeIndex a = s.find(source), b = s.find(target), t = s.find(ua::NodeId(0, type));
    if (a == kNoNode || b == kNoNode) return false;
    for (const auto& r : s.references(a)) {
      if (!r.is_inverse && r.target == b && s.reference_type_node(r.type) == t) return true;
    }
    return false;
  }
  LoadResult loaded;
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* p = nullptr;
};

TEST_CASE("alarms: an exclusive limit alarm becomes an ExclusiveLimitAlarmType condition",
          "[config][alarms]") {
  Built b(tank(kLimits));
  const auto& s = b.store();
  const ua::NodeId cond = id("Tank1.Level.LevelLimits");
  const NodeIndex c = s.find(cond);
  REQUIRE(c != kNoNode);
  CHECK(s.browse_name(c) == ua::QualifiedName{2, ua::String("LevelLimits")});
  CHECK(b.has_reference(cond, ua::id::HasTypeDefinition, ua::NodeId(0, ua::id::ExclusiveLimitAlarmType)));
  // Placement: the source's HasCondition is the condition's only parent (Part 9 §5.12, §6.3).
  CHECK(b.has_reference(id("Tank1.Level"), ua::id::HasCondition, cond));
  CHECK(s.parent(c) == kNoNode);
  CHECK(b.has_reference(id("Tank1"), ua::id::HasEventSource, id("Tank1.Level")));
  CHECK(b.has_reference(ua::NodeId(0, ua::id::Server), ua::id::HasNotifier, id("Tank1")));
  CHECK(s.record(b.at("Tank1")).event_notifier == 1);
  const auto* events = s.event_types();
  REQUIRE(events);
  const auto notifiers = events->notifiers_of(b.at("Tank1.Level"));
  CHECK(std::find(notifiers.begin(), notifiers.end(), b.at("Tank1")) != notifiers.end());
  CHECK(std::find(notifiers.begin(), notifiers.end(), s.find(ua::NodeId(0, ua::id::Server))) !=
        notifiers.end());

  // Members: the type's Mandatory ones and the Optional ones the settings use, with their initial values.
  const std::string m = "Tank1.Level.LevelLimits.";
  CHECK(b.value(m + "ConditionName") == ua::Variant(ua::String("LevelLimits")));
  CHECK(b.value(m + "EventType") == ua::Variant(ua::NodeId(0, ua::id::ExclusiveLimitAlarmType)));
  CHECK(b.value(m + "SourceNode") == ua::Variant(id("Tank1.Level")));
  CHECK(b.value(m + "SourceName") == ua::Variant(ua::String("Level")));
  CHECK(b.value(m + "InputNode") == ua::Variant(id("Tank1.Level")));
  CHECK(b.value(m + "EnabledState.Id") == ua::Variant(true));
  CHECK(text_of(b.value(m + "EnabledState")) == ua::String("Enabled"));
  CHECK(text_of(b.value(m + "ActiveState")) == ua::String("Inactive"));
  CHECK(b.value(m + "Retain") == ua::Variant(false));
  CHECK(b.value(m + "ActiveState.Id") == ua::Variant(false));
  CHECK(b.value(m + "AckedState.Id") == ua::Variant(true));
  CHECK(b.value(m + "Severity") == ua::Variant(uint16_t{900}));
  CHECK(b.value(m + "ConditionClassId") == ua::Variant(ua::NodeId(0, ua::id::ProcessConditionClassType)));
  CHECK(b.value(m + "BranchId") == ua::Variant(ua::NodeId()));
  CHECK(b.value(m + "HighHighLimit") == ua::Variant(95.0));
  CHECK(b.value(m + "LowLowLimit") == ua::Variant(5.0));
  CHECK(b.value(m + "SeverityLow") == ua::Variant(uint16_t{600}));
  CHECK(b.value(m + "HighDeadband") == ua::Variant(1.5));
  CHECK(b.value(m + "OnDelay") == ua::Variant(200.0));
  for (const char* present :
       {"EventId", "Time", "ReceiveTime", "Message", "Quality", "LastSeverity", "Comment", "ClientUserId",
        "SuppressedOrShelved", "LimitState", "LimitState.CurrentState", "LimitState.CurrentState.Id",
        "LimitState.LastTransition.Id", "ActiveState.TransitionTime", "Quality.SourceTimestamp"}) {
    INFO(present);
    CHECK(b.at(m + present) != kNoNode);
  }
  for (const char* absent : {"ConfirmedState", "OffDelay", "HighHighState", "ShelvingState", "Acknowledge",
                             "LatchedState", "LocalTime"}) {
    INFO(absent);
    CHECK(b.at(m + absent) == kNoNode);
  }
  // ActiveState --HasTrueSubState--> LimitState, as the type declares (Part 9 §5.8.19.3).
  CHECK(b.has_reference(id(m + "ActiveState"), ua::id::HasTrueSubState, id(m + "LimitState")));

  // The store's spec.
  const auto* specs = s.condition_specs();
  REQUIRE(specs);
  REQUIRE(specs->size() == 1);
  const addressspace::ConditionSpec* spec = specs->find(c);
  REQUIRE(spec);
  CHECK(spec->kind == addressspace::ConditionKind::ExclusiveLimit);
  CHECK(spec->type == *events->event_type(ua::NodeId(0, ua::id::ExclusiveLimitAlarmType)));
  CHECK(spec->input == b.at("Tank1.Level"));
  CHECK(spec->input_cell == s.variable(b.at("Tank1.Level"))->cell);
  CHECK(spec->reference == kNoNode);
  CHECK(spec->limit_mask == 0x0F);
  CHECK(spec->limits == std::array<double, 4>{95, 85, 10, 5});
  CHECK(spec->limit_severity == std::array<uint16_t, 4>{900, 700, 600, 800});
  CHECK(spec->deadband == 1.5);
  CHECK(spec->on_delay_ms == 200);
  CHECK(spec->off_delay_ms == 0);
  CHECK(spec->name == "LevelLimits");
  CHECK(spec->message == "{name}: level {value} is {state} (limit {limit})");
  CHECK(spec->enabled);
  CHECK_FALSE(spec->confirm);
  CHECK(spec->ack_roles == (role::kOperator | role::kSupervisor));
  CHECK(s.has_flag(b.at("Tank1.Level"), addressspace::flag::kHasAlarm));
  CHECK_FALSE(s.has_flag(b.at("Tank1.Setpoint"), addressspace::flag::kHasAlarm));
}

TEST_CASE("alarms: every kind, several alarms on one input, the top-level list", "[config][alarms]") {
  Built b(tank(R"({"name": "Hi", "type": "non_exclusive_limit", "limits": {"high": 80, "low": 20},
                   "confirm": true, "enabled": false, "off_delay_ms": 1000},
                  {"name": "Dev", "type": "deviation", "limits": {"high": 5, "low": -5},
                   "setpoint_node": "s=Tank1.Setpoint"},
                  {"name": "NotZero", "type": "off_normal", "normal_value": 0, "severity": 300},
                  {"name": "AtSetpoint", "id": "i=5000", "type": "off_normal", "normal_node": "s=Tank1.Setpoint"})",
               R"({"name": "Tripped", "input": "s=Tank1.Switch", "type": "trip", "severity": 1000},
                 {"name": "On", "input": "s=Tank1.Switch", "type": "discrete"})"));
  const auto& s = b.store();
  const auto* specs = s.condition_specs();
  REQUIRE(specs);
  CHECK(specs->size() == 6);
  CHECK(specs->watching(b.at("Tank1.Level")).size() == 4);
  CHECK(specs->watching(b.at("Tank1.Switch")).size() == 2);
  CHECK(specs->watching(b.at("Tank1.Setpoint")).size() == 2);  // deviation setpoint, normal node
  CHECK(specs->watching(b.at("Tank1.Text")).empty());
  CHECK(s.has_flag(b.at("Tank1.Setpoint"), addressspace::flag::kHasAlarm));

  // Non-exclusive: the sub-states of the configured limits, ConfirmedState, OffDelay; disabled at start.
  const std::string hi = "Tank1.Level.Hi.";
  CHECK(b.has_reference(id("Tank1.Level.Hi"), ua::id::HasTypeDefinition,
                        ua::NodeId(0, ua::id::NonExclusiveLimitAlarmType)));
  CHECK(b.value(hi + "HighState.Id") == ua::Variant(false));
  CHECK(text_of(b.value(hi + "HighState")) == ua::String("High inactive"));
  CHECK(b.at(hi + "HighHighState") == kNoNode);
  CHECK(b.at(hi + "LimitState") == kNoNode);
  CHECK(b.value(hi + "ConfirmedState.Id") == ua::Variant(true));
  CHECK(b.value(hi + "OffDelay") == ua::Variant(1000.0));
  CHECK(b.value(hi + "EnabledState.Id") == ua::Variant(false));
  CHECK(text_of(b.value(hi + "EnabledState")) == ua::String("Disabled"));
  const auto* hs = specs->find(b.at("Tank1.Level.Hi"));
  REQUIRE(hs);
  CHECK(hs->limit_mask == 0x06);
  CHECK(hs->confirm);
  CHECK_FALSE(hs->enabled);
  CHECK(hs->ack_roles == role::kEveryone);

  // Deviation: SetpointNode names the setpoint, which the spec watches too.
  CHECK(b.value("Tank1.Level.Dev.SetpointNode") == ua::Variant(id("Tank1.Setpoint")));
  const auto* dev = specs->find(b.at("Tank1.Level.Dev"));
  REQUIRE(dev);
  CHECK(dev->kind == addressspace::ConditionKind::Deviation);
  CHECK(dev->reference == b.at("Tank1.Setpoint"));
  CHECK(dev->reference_cell == s.variable(b.at("Tank1.Setpoint"))->cell);

  // Off-normal with a value: a NormalValue property of the input's DataType that NormalState names.
  CHECK(b.value("Tank1.Level.NotZero.NormalValue") == ua::Variant(0.0));
  CHECK(b.value("Tank1.Level.NotZero.NormalState") == ua::Variant(id("Tank1.Level.NotZero.NormalValue")));
  CHECK(b.value("Tank1.Level.NotZero.Severity") == ua::Variant(uint16_t{300}));
  const auto* nz = specs->find(b.at("Tank1.Level.NotZero"));
  REQUIRE(nz);
  CHECK(nz->kind == addressspace::ConditionKind::OffNormal);
  CHECK(nz->severity == 300);
  CHECK(nz->reference == b.at("Tank1.Level.NotZero.NormalValue"));
  // ... with a node, and an explicit id (members derived from it).
  const NodeIndex at_sp = s.find(ua::NodeId(2, 5000));
  REQUIRE(at_sp != kNoNode);
  CHECK(specs->find(at_sp)->reference == b.at("Tank1.Setpoint"));
  CHECK(s.find(ua::NodeId(2, ua::String("ns=2;i=5000.NormalState"))) != kNoNode);

  // Trip and discrete: Boolean input, normal FALSE.
  CHECK(b.has_reference(id("Tank1.Switch.Tripped"), ua::id::HasTypeDefinition,
                        ua::NodeId(0, ua::id::TripAlarmType)));
  CHECK(b.has_reference(id("Tank1.Switch.On"), ua::id::HasTypeDefinition,
                        ua::NodeId(0, ua::id::OffNormalAlarmType)));
  CHECK(b.value("Tank1.Switch.On.NormalValue") == ua::Variant(false));
  CHECK(b.has_reference(id("Tank1"), ua::id::HasEventSource, id("Tank1.Switch")));
}

TEST_CASE("alarms: event_notifier objects are notifiers of the notifiers below them", "[config][alarms]") {
  Built b(R"({"namespaces": ["urn:t"], "nodes": [
    {"kind": "folder", "name": "Plant", "event_notifier": true, "children": [
      {"kind": "object", "name": "Tank", "children": [
        {"kind": "variable", "name": "Level", "data_type": "Int32", "value": 0,
         "alarms": [{"name": "L", "type": "exclusive_limit", "limits": {"high": 10}}]}]}]},
    {"kind": "variable", "name": "Loose", "data_type": "Float", "value": 0,
     "alarms": [{"name": "L", "type": "exclusive_limit", "limits": {"low": 1}}]}]})");
  CHECK(b.has_reference(id("Plant"), ua::id::HasNotifier, id("Plant.Tank")));
  CHECK(b.has_reference(ua::NodeId(0, ua::id::Server), ua::id::HasNotifier, id("Plant")));
  CHECK_FALSE(b.has_reference(ua::NodeId(0, ua::id::Server), ua::id::HasNotifier, id("Plant.Tank")));
  CHECK(b.store().record(b.at("Plant")).event_notifier == 1);
  // A variable right below Objects: an event source of the Server object itself.
  CHECK(b.has_reference(ua::NodeId(0, ua::id::Server), ua::id::HasEventSource, id("Loose")));
  const auto notifiers = b.store().event_types()->notifiers_of(b.at("Plant.Tank.Level"));
  CHECK(std::find(notifiers.begin(), notifiers.end(), b.at("Plant")) != notifiers.end());
}

TEST_CASE("alarms: one message per validation rule", "[config][alarms][validation]") {
  auto on_level = [](const std::string& alarm) { return only_error(load_nodes(tank(alarm))); };
  const std::string at = "nodes.json: /nodes/0/children/0/alarms/0";
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 1}, "colour": 1})") ==
        at + "/colour: unknown key \"colour\"");
  CHECK(on_level(R"({"type": "exclusive_limit", "limits": {"high": 1}})") ==
        at + ": missing required key \"name\"");
  CHECK(on_level(R"({"name": "", "type": "exclusive_limit", "limits": {"high": 1}})") ==
        at + "/name: must have 1 to 256 bytes");
  CHECK(on_level(R"({"name": "A", "type": "sometimes"})") ==
        at + "/type: unknown alarm type \"sometimes\" (exclusive_limit, non_exclusive_limit, off_normal, "
             "discrete, trip, deviation)");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit"})") == at + ": missing required key \"limits\"");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {}})") ==
        at + "/limits: at least one of high_high, high, low, low_low is needed");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5, "low": 5}})") ==
        at + "/limits/low: must be less than high");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 1, "hihg": 5}})") ==
        at + "/limits/hihg: unknown key \"hihg\"");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5},
                    "severity": {"high": 1001}})") ==
        at + "/severity/high: out of range: must be between 1 and 1000");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5},
                    "severity": {"low": 100}})") == at + "/severity/low: there is no low limit");
  CHECK(on_level(R"({"name": "A", "type": "off_normal", "normal_value": 1, "severity": 0})") ==
        at + "/severity: out of range: must be between 1 and 1000");
  CHECK(on_level(R"({"name": "A", "type": "off_normal", "normal_value": 1, "limits": {"high": 1}})") ==
        at + "/limits: \"off_normal\" alarms have no limits");
  CHECK(on_level(R"({"name": "A", "type": "off_normal", "normal_value": 1, "deadband": 1})") ==
        at + "/deadband: \"off_normal\" alarms have no deadband");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "deadband": -1})") ==
        at + "/deadband: must be a finite number >= 0");
  CHECK(on_level(
            R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "on_delay_ms": 3600001})") ==
        at + "/on_delay_ms: out of range: must be between 0 and 3600000 (one hour)");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "message": ")" +
                 std::string(513, 'x') + "\"}") == at + "/message: longer than 512 bytes");
  CHECK(
      on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "message": "{valeu}"})") ==
      at + "/message: unknown placeholder \"{valeu}\" (placeholders: {name}, {value}, {state}, {limit})");
  CHECK(on_level(R"({"name": "A", "type": "off_normal", "normal_value": 1, "message": "{limit}"})") ==
        at + "/message: {limit} applies only to limit and deviation alarms");
  CHECK(
      on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "ack_roles": ["Boss"]})") ==
      at + "/ack_roles: " + unknown_role("Boss"));
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "ack_roles": []})") ==
        at + "/ack_roles: an empty list would let nobody acknowledge: omit the key instead");
  CHECK(on_level(R"({"name": "A", "type": "off_normal"})") ==
        at + ": an \"off_normal\" alarm needs \"normal_value\" or \"normal_node\"");
  CHECK(on_level(
            R"({"name": "A", "type": "off_normal", "normal_value": 1, "normal_node": "s=Tank1.Setpoint"})") ==
        at + ": give either \"normal_value\" or \"normal_node\", not both");
  CHECK(on_level(R"({"name": "A", "type": "deviation", "limits": {"high": 5}})") ==
        at + ": missing required key \"setpoint_node\"");
  CHECK(on_level(
            R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "setpoint_node": "s=X"})") ==
        at + "/setpoint_node: only \"deviation\" alarms have a setpoint");
  CHECK(on_level(
            R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "input": "s=Tank1.Level"})") ==
        at + "/input: an alarm of a variable watches that variable: \"input\" is for the file's top-level "
             "\"alarms\" list");
  // Checked once every file is read.
  CHECK(on_level(
            R"({"name": "A", "type": "deviation", "limits": {"high": 5}, "setpoint_node": "s=Nowhere"})") ==
        at + "/setpoint_node: the setpoint ns=2;s=Nowhere does not exist");
  CHECK(
      on_level(
          R"({"name": "A", "type": "deviation", "limits": {"high": 5}, "setpoint_node": "s=Tank1.Text"})") ==
      at + "/setpoint_node: the setpoint ns=2;s=Tank1.Text is not a numeric scalar variable");
  CHECK(on_level(R"({"name": "A", "type": "trip"})") ==
        at + ": a \"trip\" alarm needs a Boolean scalar input; ns=2;s=Tank1.Level is not one");
  CHECK(on_level(R"({"name": "A", "type": "off_normal", "normal_value": "high"})") ==
        at + "/normal_value: value does not fit DataType Double");
  CHECK(on_level(R"({"name": "A", "type": "off_normal", "normal_node": "s=Tank1.Switch"})") ==
        at + "/normal_node: the normal node ns=2;s=Tank1.Switch does not hold values of the input's DataType "
             "and "
             "shape");
  CHECK(on_level(
            R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "event_type": "i=9341x"})") ==
        at + "/event_type: unknown ObjectType \"i=9341x\" (a NodeId or \"<namespace URI>:<BrowseName>\")");
  CHECK(on_level(
            R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}, "event_type": "i=10751"})") ==
        at + "/event_type: \"i=10751\" is not a subtype of ExclusiveLimitAlarmType");
  CHECK(on_level(R"({"name": "A", "type": "exclusive_limit", "limits": {"high": 5}},
                    {"name": "A", "type": "exclusive_limit", "limits": {"low": 5}})") ==
        "nodes.json: /nodes/0/children/0/alarms/1/name: the input already has an alarm named \"A\"");
  CHECK(on_level(
            R"({"name": "A", "id": "s=Tank1.Setpoint", "type": "exclusive_limit", "limits": {"high": 5}})") ==
        at + ": duplicate NodeId ns=2;s=Tank1.Setpoint, first declared in nodes.json at "
             "/nodes/0/children/1");
  // The top-level list.
  CHECK(only_error(load_nodes(tank("", R"({"name": "A", "type": "trip"})"))) ==
        "nodes.json: /alarms/0: missing required key \"input\"");
  CHECK(only_error(load_nodes(tank("", R"({"name": "A", "type": "trip", "input": "s=Gone"})"))) ==
        "nodes.json: /alarms/0/input: the input ns=2;s=Gone does not exist");
  CHECK(only_error(load_nodes(tank("", R"({"name": "A", "type": "trip", "input": "s=Tank1"})"))) ==
        "nodes.json: /alarms/0/input: the input ns=2;s=Tank1 is not a variable");
  CHECK(only_error(load_nodes(tank("", R"({"name": "A", "type": "trip", "input": "i=2256"})"))) ==
        "nodes.json: /alarms/0/input: the input ns=2;i=2256 does not exist");
  // Where alarms and event_notifier may be.
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "object", "name": "O", "alarms": []}]})")) ==
        "nodes.json: /nodes/0/alarms: only variables have \"alarms\"");
  CHECK(
      only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V{n}", "count": 2, "data_type": "Double", "alarms": []}]})")) ==
      "nodes.json: /nodes/0/alarms: a bulk declaration cannot have alarms: list them in the file's top-level "
      "\"alarms\"");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Double", "event_notifier": true}]})")) ==
        "nodes.json: /nodes/0/event_notifier: only objects and folders have \"event_notifier\"");
  CHECK(
      only_error(load_nodes(R"({"namespaces": ["urn:t"], "object_types": [
          {"name": "T", "children": [{"kind": "variable", "name": "V", "data_type": "Double", "alarms": []}]}]})")) ==
      "nodes.json: /object_types/0/children/0/alarms: not in object types: declare alarms on the instances' "
      "variables");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Double", "alarms": {}}]})")) ==
        "nodes.json: /nodes/0/alarms: expected an array, got an object");
}

TEST_CASE("alarms: a reload with a changed limit keeps the NodeIds and brings a new spec",
          "[config][alarms][reload]") {
  Built b(tank(kLimits));
  const auto* before = b.space.current();
  const NodeIndex c = b.at("Tank1.Level.LevelLimits");
  REQUIRE(c != kNoNode);
  CHECK(before->condition_specs()->find(c)->limits[1] == 85);
  const auto* high_cell = before->variable(b.at("Tank1.Level.LevelLimits.HighLimit"))->cell;
  std::string changed = tank(kLimits);
  changed.replace(changed.find("\"high\": 85"), 10, "\"high\": 80");
  LoadResult next = load_nodes(changed);
  REQUIRE(next.ok());
  const ReloadOutcome out = reload_address_space(b.loaded.config, next.config, b.space, *b.p);
  INFO(errors_of(out.errors));
  REQUIRE(out.errors.empty());
  const auto* after = b.space.current();
  REQUIRE(after != before);
  // The same nodes under the same NodeIds: nothing added or removed.
  CHECK(out.diff.added == 0);
  CHECK(out.diff.removed == 0);
  CHECK(out.values_reset == 1);  // HighLimit's value
  const NodeIndex c2 = after->find(id("Tank1.Level.LevelLimits"));
  REQUIRE(c2 != kNoNode);
  const auto* spec = after->condition_specs()->find(c2);
  REQUIRE(spec);
  CHECK(spec->limits[1] == 80);
  CHECK(spec->limits[0] == 95);
  CHECK(after->variable(after->find(id("Tank1.Level.LevelLimits.HighLimit")))->cell == high_cell);
  CHECK(b.value("Tank1.Level.LevelLimits.HighLimit") == ua::Variant(80.0));
}

}  // namespace alarms_test

namespace alarms_test {

TEST_CASE("alarms: on variables of a NodeSet2 file, by the top-level list", "[config][alarms]") {
  const std::filesystem::path fixtures =
      std::filesystem::path(OPCUAD_SOURCE_DIR) / "tests/unit/config/nodesets";
  LoadResult r = load_config_text(R"({"namespaces": ["urn:t"], "node_files": ["base.xml", "machine.xml"]})",
                                  "server.json", fixtures);
  INFO(errors_of(r.errors));
  REQUIRE(r.ok());
  load_node_file_text(R"({"namespaces": ["urn:t"], "alarms": [
      {"name": "Low", "input": "nsu=http://example.com/machine/;i=6", "type": "exclusive_limit",
       "limits": {"low": -100000}},
      {"name": "Stuck", "id": "s=MachineStuck", "input": "nsu=http://example.com/machine/;i=1", "type": "trip"}]})",
                      "nodes.json", r);
  check_references(r);
  INFO(errors_of(r.errors));
  REQUIRE(r.ok());
  addressspace::AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  const auto errors = build_address_space(r.config, space, *p);
  INFO(errors_of(errors));
  REQUIRE(errors.empty());
  const auto& s = *space.current();
  const auto& uris = r.config.namespaces;
  const auto machine_ns = static_cast<uint16_t>(
      std::find(uris.begin(), uris.end(), "http://example.com/machine/") - uris.begin());
  const ua::NodeId machine(machine_ns, ua::String("Machine"));
  const ua::NodeId int32(machine_ns, 6);
  // The condition in the input's namespace, its id derived from the input's NodeId text.
  const ua::NodeId low(machine_ns, ua::String(int32.to_string() + ".Low"));
  const NodeIndex c = s.find(low);
  REQUIRE(c != kNoNode);
  REQUIRE(s.condition_specs()->find(c));
  CHECK(s.condition_specs()->find(c)->input == s.find(int32));
  CHECK(s.find(ua::NodeId(2, ua::String("MachineStuck"))) != kNoNode);
  CHECK(s.has_flag(s.find(int32), addressspace::flag::kHasAlarm));
  // The NodeSet2 file's object is the notifier.
  const auto notifiers = s.event_types()->notifiers_of(s.find(int32));
  CHECK(std::find(notifiers.begin(), notifiers.end(), s.find(machine)) != notifiers.end());
  CHECK(s.record(s.find(machine)).event_notifier == 1);
}

}  // namespace alarms_test
