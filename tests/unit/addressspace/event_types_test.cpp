// The event-type index of a NodeStore (addressspace/event_types.hpp): namespace 0's event types and
// their fields, a NodeSet2 model's own, the well-known field keys, DataTypes' built-in types, and the
// notifier lists of event sources.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "addressspace/event_types.hpp"
#include "addressspace/namespace0.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "ua/generated/node_ids.hpp"

namespace event_types_test {

using namespace opcuad;
using namespace opcuad::addressspace;

struct Built {
  ValueStore values;
  EpochReclaimer::Participant* p = values.reclaimer().register_participant();
  std::unique_ptr<NodeStore> store;
  const EventTypes* index = nullptr;
  // Namespace 0, then whatever `more` adds.
  template <class More>
  explicit Built(More more) {
    NodeStoreBuilder b(values, *p);
    add_namespace0(b);
    more(b);
    auto r = b.build();
    for (auto& e : r.errors) UNSCOPED_INFO(e);
    REQUIRE(r.errors.empty());
    store = std::move(r.store);
    index = store->event_types();
    REQUIRE(index != nullptr);
  }
  NodeIndex at(const ua::NodeId& id) const { return store->find(id); }
  NodeIndex at(uint32_t id) const { return store->find(ua::NodeId(0, id)); }
  EventTypeIdx type(uint32_t id) const {
    const auto t = index->event_type(ua::NodeId(0, id));
    REQUIRE(t.has_value());
    return *t;
  }
};

const Built& ns0() {
  static Built instance([](NodeStoreBuilder&) {});
  return instance;
}

std::vector<ua::QualifiedName> path(std::initializer_list<const char*> names, uint16_t ns = 0) {
  std::vector<ua::QualifiedName> p;
  for (const char* n : names) p.push_back({ns, ua::String(n)});
  return p;
}

TEST_CASE("event types: every subtype of BaseEventType in namespace 0, and no other type",
          "[addressspace][event_types]") {
  const Built& b = ns0();
  const NodeStore& s = *b.store;
  const EventTypes& ev = *b.index;
  const NodeIndex base = b.at(ua::id::BaseEventType);
  size_t expected = 0;
  for (NodeIndex n = 0; n < s.size(); ++n) {
    const bool is_event_type = s.node_class(n) == NodeClass::ObjectType && s.is_type_subtype(n, base);
    expected += is_event_type ? 1 : 0;
    CHECK(ev.event_type_of(n).has_value() == is_event_type);
  }
  CHECK(ev.type_count() == expected);
  CHECK(ev.type_count() > 90);
  CHECK(ev.type_id(EventTypes::kBaseEventType) == ua::NodeId(0, ua::id::BaseEventType));
  CHECK(ev.type_node(EventTypes::kBaseEventType) == base);
  for (EventTypeIdx t = 0; t < ev.type_count(); ++t) CHECK(ev.event_type(ev.type_id(t)) == t);
  CHECK_FALSE(ev.event_type(ua::NodeId(0, ua::id::BaseObjectType)).has_value());
  CHECK_FALSE(ev.event_type(ua::NodeId(0, ua::id::Server)).has_value());
  CHECK_FALSE(ev.event_type(ua::NodeId(7, 12345)).has_value());
  CHECK(ev.field_count() > event_field::kWellKnownCount);
  CHECK(ev.field_count() < 1000);
}

TEST_CASE("event types: is_subtype is the HasSubtype hierarchy", "[addressspace][event_types]") {
  const Built& b = ns0();
  const EventTypes& ev = *b.index;
  const auto exclusive_limit = b.type(ua::id::ExclusiveLimitAlarmType);
  const auto condition = b.type(ua::id::ConditionType);
  const auto base = b.type(ua::id::BaseEventType);
  CHECK(ev.is_subtype(exclusive_limit, condition));
  CHECK(ev.is_subtype(exclusive_limit, base));
  CHECK(ev.is_subtype(exclusive_limit, b.type(ua::id::LimitAlarmType)));
  CHECK(ev.is_subtype(exclusive_limit, exclusive_limit));
  CHECK_FALSE(ev.is_subtype(condition, exclusive_limit));
  CHECK_FALSE(ev.is_subtype(exclusive_limit, b.type(ua::id::AuditEventType)));
  CHECK_FALSE(ev.is_subtype(exclusive_limit, b.type(ua::id::NonExclusiveLimitAlarmType)));
  CHECK_FALSE(ev.is_subtype(static_cast<EventTypeIdx>(ev.type_count()), base));
  // Every pair against the store's own walk up the hierarchy.
  size_t pairs = 0;
  for (EventTypeIdx sub = 0; sub < ev.type_count(); ++sub) {
    for (EventTypeIdx super = 0; super < ev.type_count(); ++super) {
      const bool walked = b.store->is_type_subtype(ev.type_node(sub), ev.type_node(super));
      if (ev.is_subtype(sub, super) != walked) {
        FAIL_CHECK(ev.type_id(sub).to_string() << " / " << ev.type_id(super).to_string());
      }
      pairs += walked ? 1 : 0;
    }
  }
  CHECK(pairs > ev.type_count() * 2);
}

TEST_CASE("event types: AuditWriteUpdateEventType's own and inherited fields",
          "[addressspace][event_types]") {
  const Built& b = ns0();
  const EventTypes& ev = *b.index;
  const auto t = b.type(ua::id::AuditWriteUpdateEventType);
  auto decl = [&](std::initializer_list<const char*> p) {
    const auto names = path(p);
    const auto key = ev.field(t, names);
    return key ? ev.declaration(t, *key) : kNoNode;
  };
  CHECK(decl({"AttributeId"}) == b.at(ua::id::AuditWriteUpdateEventType_AttributeId));
  CHECK(decl({"IndexRange"}) == b.at(ua::id::AuditWriteUpdateEventType_IndexRange));
  CHECK(decl({"OldValue"}) == b.at(ua::id::AuditWriteUpdateEventType_OldValue));
  CHECK(decl({"NewValue"}) == b.at(ua::id::AuditWriteUpdateEventType_NewValue));
  CHECK(decl({"ActionTimeStamp"}) == b.at(ua::id::AuditEventType_ActionTimeStamp));
  CHECK(decl({"ClientUserId"}) == b.at(ua::id::AuditEventType_ClientUserId));
  CHECK(decl({"EventId"}) == b.at(ua::id::BaseEventType_EventId));
  CHECK(decl({"Severity"}) == b.at(ua::id::BaseEventType_Severity));
  // A field of another branch: a key exists, this type does not have it.
  const auto active = path({"ActiveState"});
  CHECK_FALSE(ev.field(t, active).has_value());
  CHECK(ev.field_key(active) == event_field::kActiveState);
  CHECK(ev.declaration(t, event_field::kActiveState) == kNoNode);
  // Its declarations are exactly its supertypes' plus its own, by ascending key.
  const auto all = ev.declarations(t);
  CHECK(
      std::is_sorted(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.field < y.field; }));
  const auto super = ev.declarations(b.type(ua::id::AuditUpdateEventType));
  CHECK(all.size() == super.size() + 4);
  // The base type's fields are BaseEventType's InstanceDeclarations.
  CHECK(ev.declarations(EventTypes::kBaseEventType).size() >= 9);
  for (const auto& d : ev.declarations(EventTypes::kBaseEventType)) {
    CHECK(b.store->parent(d.node) == b.at(ua::id::BaseEventType));
  }
}

TEST_CASE("event types: a subtype's declaration of a path overrides its supertype's",
          "[addressspace][event_types]") {
  const Built& b = ns0();
  const EventTypes& ev = *b.index;
  const auto condition = b.type(ua::id::ConditionType);
  const auto alarm = b.type(ua::id::AlarmConditionType);
  const auto exclusive_limit = b.type(ua::id::ExclusiveLimitAlarmType);
  CHECK(ev.declaration(condition, event_field::kEnabledState) == b.at(ua::id::ConditionType_EnabledState));
  CHECK(ev.declaration(alarm, event_field::kEnabledState) == b.at(ua::id::AlarmConditionType_EnabledState));
  CHECK(ev.declaration(alarm, event_field::kActiveState) == b.at(ua::id::AlarmConditionType_ActiveState));
  CHECK(ev.declaration(exclusive_limit, event_field::kActiveState) ==
        b.at(ua::id::ExclusiveLimitAlarmType_ActiveState));
  // Not overridden below AlarmConditionType: inherited.
  CHECK(ev.declaration(exclusive_limit, event_field::kInputNode) ==
        b.at(ua::id::AlarmConditionType_InputNode));
  CHECK(ev.declaration(exclusive_limit, event_field::kAckedStateId) ==
        b.at(ua::id::AcknowledgeableConditionType_AckedState_Id));
  // A child of the overriding declaration when it has one, else the inherited one.
  const NodeIndex id = ev.declaration(exclusive_limit, event_field::kActiveStateId);
  REQUIRE(id != kNoNode);
  CHECK(b.store->browse_name(id).name == ua::String("Id"));
  const NodeIndex own_id = b.store->child(b.at(ua::id::ExclusiveLimitAlarmType_ActiveState), 0, "Id");
  CHECK(id == (own_id != kNoNode ? own_id : b.at(ua::id::AlarmConditionType_ActiveState_Id)));
  CHECK(ev.declaration(exclusive_limit, event_field::kLimitStateCurrentStateId) ==
        b.at(ua::id::ExclusiveLimitAlarmType_LimitState_CurrentState_Id));
  CHECK(ev.declaration(exclusive_limit, event_field::kLimitStateLastTransition) ==
        b.at(ua::id::ExclusiveLimitAlarmType_LimitState_LastTransition));
  CHECK(ev.declaration(exclusive_limit, event_field::kHighHighLimit) ==
        b.at(ua::id::LimitAlarmType_HighHighLimit));
  CHECK(ev.declaration(b.type(ua::id::ExclusiveDeviationAlarmType), event_field::kSetpointNode) ==
        b.at(ua::id::ExclusiveDeviationAlarmType_SetpointNode));
  // ConditionClassId: optional on BaseEventType (v1.05), declared again by ConditionType.
  CHECK(ev.declaration(EventTypes::kBaseEventType, event_field::kConditionClassId) ==
        b.at(ua::id::BaseEventType_ConditionClassId));
  CHECK(ev.declaration(condition, event_field::kConditionClassId) ==
        b.at(ua::id::ConditionType_ConditionClassId));
}

TEST_CASE("event types: the well-known field keys name their paths", "[addressspace][event_types]") {
  const EventTypes& ev = *ns0().index;
  const std::pair<FieldKey, const char*> cases[] = {
      {event_field::kEventId, "EventId"},
      {event_field::kEventType, "EventType"},
      {event_field::kSourceNode, "SourceNode"},
      {event_field::kSourceName, "SourceName"},
      {event_field::kTime, "Time"},
      {event_field::kReceiveTime, "ReceiveTime"},
      {event_field::kLocalTime, "LocalTime"},
      {event_field::kMessage, "Message"},
      {event_field::kSeverity, "Severity"},
      {event_field::kConditionClassId, "ConditionClassId"},
      {event_field::kConditionClassName, "ConditionClassName"},
      {event_field::kConditionName, "ConditionName"},
      {event_field::kBranchId, "BranchId"},
      {event_field::kRetain, "Retain"},
      {event_field::kEnabledStateId, "EnabledState/Id"},
      {event_field::kQuality, "Quality"},
      {event_field::kLastSeverity, "LastSeverity"},
      {event_field::kComment, "Comment"},
      {event_field::kClientUserId, "ClientUserId"},
      {event_field::kAckedStateId, "AckedState/Id"},
      {event_field::kConfirmedStateId, "ConfirmedState/Id"},
      {event_field::kActiveStateId, "ActiveState/Id"},
      {event_field::kActiveStateTransitionTime, "ActiveState/TransitionTime"},
      {event_field::kInputNode, "InputNode"},
      {event_field::kLimitStateCurrentState, "LimitState/CurrentState"},
      {event_field::kLimitStateCurrentStateId, "LimitState/CurrentState/Id"},
      {event_field::kLimitStateLastTransition, "LimitState/LastTransition"},
      {event_field::kHighHighLimit, "HighHighLimit"},
      {event_field::kLowLowLimit, "LowLowLimit"},
      {event_field::kNormalState, "NormalState"},
      {event_field::kSetpointNode, "SetpointNode"},
  };
  for (const auto& [key, text] : cases) {
    CHECK(ev.field_path(key) == text);
    std::vector<ua::QualifiedName> p;
    std::string_view rest = text;
    while (!rest.empty()) {
      const size_t slash = rest.find('/');
      p.push_back({0, ua::String(rest.substr(0, slash))});
      rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    }
    CHECK(ev.field_key(p) == key);
  }
  // Every key below kWellKnownCount is well known, and the next ones are the rest of the fields.
  for (FieldKey k = 0; k < event_field::kWellKnownCount; ++k) CHECK_FALSE(ev.field_path(k).empty());
  CHECK(ev.field_path(static_cast<FieldKey>(ev.field_count())).empty());
}

TEST_CASE("event types: paths that are not fields", "[addressspace][event_types]") {
  const Built& b = ns0();
  const EventTypes& ev = *b.index;
  CHECK_FALSE(ev.field_key({}).has_value());
  CHECK_FALSE(ev.field_key(path({"NoSuchField"})).has_value());
  CHECK_FALSE(ev.field_key(path({"EventId"}, 1)).has_value());  // the namespace counts
  CHECK_FALSE(ev.field_key(path({"EventId", "Id"})).has_value());
  CHECK_FALSE(
      ev.field_key(path({"ActiveState", "Id", "Id", "Id", "Id", "Id", "Id", "Id", "Id"})).has_value());
  // Methods are not fields (Part 4 §7.22.3: Objects and Variables only).
  CHECK_FALSE(ev.field_key(path({"Acknowledge"})).has_value());
  CHECK_FALSE(ev.field_key(path({"ConditionRefresh"})).has_value());
  CHECK_FALSE(ev.field(b.type(ua::id::ConditionType), path({"Acknowledge"})).has_value());
  CHECK(ev.declaration(static_cast<EventTypeIdx>(ev.type_count()), event_field::kEventId) == kNoNode);
  CHECK_FALSE(ev.field(static_cast<EventTypeIdx>(ev.type_count()), path({"EventId"})).has_value());
}

TEST_CASE("event types: the built-in type of a DataType", "[addressspace][event_types]") {
  const EventTypes& ev = *ns0().index;
  auto of = [&](uint32_t id) { return ev.builtin_of_data_type(ua::NodeId(0, id)); };
  CHECK(of(ua::id::Double) == ua::BuiltinType::Double);
  CHECK(of(ua::id::Duration) == ua::BuiltinType::Double);
  CHECK(of(ua::id::UtcTime) == ua::BuiltinType::DateTime);
  CHECK(of(ua::id::LocaleId) == ua::BuiltinType::String);
  CHECK(of(ua::id::NodeClass) == ua::BuiltinType::Int32);
  CHECK(of(ua::id::Enumeration) == ua::BuiltinType::Int32);
  CHECK(of(ua::id::Range) == ua::BuiltinType::ExtensionObject);
  CHECK(of(ua::id::Structure) == ua::BuiltinType::ExtensionObject);
  CHECK(of(ua::id::BaseDataType) == ua::BuiltinType::Variant);
  CHECK(of(ua::id::Number) == ua::BuiltinType::Variant);
  CHECK(of(ua::id::UInteger) == ua::BuiltinType::Variant);
  CHECK(of(ua::id::StatusCode) == ua::BuiltinType::StatusCode);
  CHECK_FALSE(of(ua::id::BaseEventType).has_value());
  CHECK_FALSE(of(ua::id::BaseEventType_EventId).has_value());
  CHECK_FALSE(ev.builtin_of_data_type(ua::NodeId(9, 1)).has_value());
}

// A store of its own: the reference types the index needs and a BaseEventType that lacks most fields.
NodeStoreBuilder::Result broken_base_event_type(ValueStore& values, EpochReclaimer::Participant& p,
                                                bool with_base) {
  NodeStoreBuilder b(values, p);
  auto ref_type = [&](uint32_t id, const char* name) {
    NodeSpec r;
    r.node_id = ua::NodeId(0, id);
    r.node_class = NodeClass::ReferenceType;
    r.browse_name = {0, name};
    REQUIRE(b.add_node(r));
  };
  ref_type(ua::id::HasSubtype, "HasSubtype");
  ref_type(ua::id::HasComponent, "HasComponent");
  ref_type(ua::id::HasProperty, "HasProperty");
  ref_type(ua::id::HasModellingRule, "HasModellingRule");
  NodeSpec rule;
  rule.node_id = ua::NodeId(0, ua::id::ModellingRule_Mandatory);
  rule.browse_name = {0, "Mandatory"};
  REQUIRE(b.add_node(rule));
  if (with_base) {
    NodeSpec type;
    type.node_id = ua::NodeId(0, ua::id::BaseEventType);
    type.node_class = NodeClass::ObjectType;
    type.browse_name = {0, "BaseEventType"};
    REQUIRE(b.add_node(type));
    NodeSpec v;
    v.node_id = ua::NodeId(0, ua::id::BaseEventType_EventId);
    v.node_class = NodeClass::Variable;
    v.browse_name = {0, "EventId"};
    v.data_type = ua::NodeId(0, ua::id::BaseDataType);
    REQUIRE(b.add_node(v));
    NodeSpec dt;
    dt.node_id = ua::NodeId(0, ua::id::BaseDataType);
    dt.node_class = NodeClass::DataType;
    dt.browse_name = {0, "BaseDataType"};
    REQUIRE(b.add_node(dt));
    b.add_reference(type.node_id, ua::NodeId(0, ua::id::HasProperty), v.node_id);
    b.add_reference(v.node_id, ua::NodeId(0, ua::id::HasModellingRule), rule.node_id);
  }
  return b.build();
}

TEST_CASE("event types: a well-known field missing from namespace 0 fails the build",
          "[addressspace][event_types]") {
  ValueStore values;
  auto* p = values.reclaimer().register_participant();
  auto broken = event_types_test::broken_base_event_type(values, *p, true);
  CHECK(broken.store == nullptr);
  REQUIRE_FALSE(broken.errors.empty());
  std::string all;
  for (const auto& e : broken.errors) all += e + "\n";
  CHECK_THAT(all, Catch::Contains("ns=0;i=2041 does not declare the field EventType"));
  CHECK_THAT(all, Catch::Contains("ns=0;i=2782 is not a subtype of BaseEventType"));
  CHECK_THAT(all, !Catch::Contains("field EventId"));
  // A store without BaseEventType (no namespace 0) has an empty index, and no error.
  auto bare = event_types_test::broken_base_event_type(values, *p, false);
  REQUIRE(bare.errors.empty());
  REQUIRE(bare.store->event_types() != nullptr);
  CHECK(bare.store->event_types()->type_count() == 0);
  CHECK_FALSE(bare.store->event_types()->event_type(ua::NodeId(0, ua::id::BaseEventType)).has_value());
  CHECK(bare.store->event_types()->field_key(path({"EventId"})) == event_field::kEventId);
  CHECK(bare.store->event_types()->notifiers_of(0).empty());  // no Server object
}

constexpr const char* kModel = R"(<?xml version="1.0" encoding="utf-8"?>
<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd">
  <NamespaceUris><Uri>urn:test:events</Uri></NamespaceUris>
  <Models><Model ModelUri="urn:test:events" Version="1.0" /></Models>
  <Aliases>
    <Alias Alias="HasSubtype">i=45</Alias>
    <Alias Alias="HasComponent">i=47</Alias>
    <Alias Alias="HasProperty">i=46</Alias>
    <Alias Alias="HasModellingRule">i=37</Alias>
    <Alias Alias="HasTypeDefinition">i=40</Alias>
    <Alias Alias="HasNotifier">i=48</Alias>
    <Alias Alias="HasEventSource">i=36</Alias>
    <Alias Alias="Organizes">i=35</Alias>
  </Aliases>
  <UAObjectType NodeId="ns=1;i=1000" BrowseName="1:TankEventType">
    <DisplayName>TankEventType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=2041</Reference></References>
  </UAObjectType>
  <UAVariable NodeId="ns=1;i=1001" BrowseName="1:Level" ParentNodeId="ns=1;i=1000" DataType="i=11">
    <DisplayName>Level</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=68</Reference>
      <Reference ReferenceType="HasModellingRule">i=78</Reference>
      <Reference ReferenceType="HasProperty" IsForward="false">ns=1;i=1000</Reference>
    </References>
  </UAVariable>
  <UAVariable NodeId="ns=1;i=1002" BrowseName="Severity" ParentNodeId="ns=1;i=1000" DataType="i=5">
    <DisplayName>Severity</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=68</Reference>
      <Reference ReferenceType="HasModellingRule">i=78</Reference>
      <Reference ReferenceType="HasProperty" IsForward="false">ns=1;i=1000</Reference>
    </References>
  </UAVariable>
  <UAObject NodeId="ns=1;i=1003" BrowseName="1:Details" ParentNodeId="ns=1;i=1000">
    <DisplayName>Details</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=58</Reference>
      <Reference ReferenceType="HasModellingRule">i=80</Reference>
      <Reference ReferenceType="HasComponent" IsForward="false">ns=1;i=1000</Reference>
    </References>
  </UAObject>
  <UAVariable NodeId="ns=1;i=1004" BrowseName="1:Code" ParentNodeId="ns=1;i=1003" DataType="i=6">
    <DisplayName>Code</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=63</Reference>
      <Reference ReferenceType="HasModellingRule">i=78</Reference>
      <Reference ReferenceType="HasComponent" IsForward="false">ns=1;i=1003</Reference>
    </References>
  </UAVariable>
  <UAVariable NodeId="ns=1;i=1005" BrowseName="1:Scratch" ParentNodeId="ns=1;i=1000" DataType="i=6">
    <DisplayName>Scratch</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=68</Reference>
      <Reference ReferenceType="HasProperty" IsForward="false">ns=1;i=1000</Reference>
    </References>
  </UAVariable>
  <UAObjectType NodeId="ns=1;i=1010" BrowseName="1:TankOverflowEventType">
    <DisplayName>TankOverflowEventType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">ns=1;i=1000</Reference></References>
  </UAObjectType>
  <UAVariable NodeId="ns=1;i=1011" BrowseName="1:Volume" ParentNodeId="ns=1;i=1010" DataType="i=11">
    <DisplayName>Volume</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=68</Reference>
      <Reference ReferenceType="HasModellingRule">i=78</Reference>
      <Reference ReferenceType="HasProperty" IsForward="false">ns=1;i=1010</Reference>
    </References>
  </UAVariable>
  <UAObjectType NodeId="ns=1;i=1020" BrowseName="1:TankLevelAlarmType">
    <DisplayName>TankLevelAlarmType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=9341</Reference></References>
  </UAObjectType>
  <UAVariable NodeId="ns=1;i=1021" BrowseName="1:Tank" ParentNodeId="ns=1;i=1020" DataType="i=17">
    <DisplayName>Tank</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=68</Reference>
      <Reference ReferenceType="HasModellingRule">i=78</Reference>
      <Reference ReferenceType="HasProperty" IsForward="false">ns=1;i=1020</Reference>
    </References>
  </UAVariable>
  <UAObjectType NodeId="ns=1;i=1030" BrowseName="1:TankType">
    <DisplayName>TankType</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=58</Reference></References>
  </UAObjectType>
  <UADataType NodeId="ns=1;i=3000" BrowseName="1:Percent">
    <DisplayName>Percent</DisplayName>
    <References><Reference ReferenceType="HasSubtype" IsForward="false">i=11</Reference></References>
  </UADataType>
  <UAObject NodeId="ns=1;i=5000" BrowseName="1:Plant" EventNotifier="1">
    <DisplayName>Plant</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=58</Reference>
      <Reference ReferenceType="Organizes" IsForward="false">i=85</Reference>
      <Reference ReferenceType="HasNotifier" IsForward="false">i=2253</Reference>
      <Reference ReferenceType="HasEventSource">ns=1;i=5001</Reference>
    </References>
  </UAObject>
  <UAVariable NodeId="ns=1;i=5001" BrowseName="1:Level" ParentNodeId="ns=1;i=5000" DataType="i=11">
    <DisplayName>Level</DisplayName>
    <References>
      <Reference ReferenceType="HasTypeDefinition">i=63</Reference>
      <Reference ReferenceType="HasComponent" IsForward="false">ns=1;i=5000</Reference>
    </References>
  </UAVariable>
</UANodeSet>
)";

config::LoadResult load(bool with_model) {
  config::LoadResult r = config::load_config_text("{}", "server.json", ".");
  if (with_model) config::load_nodeset_file_text(kModel, "events.xml", r);
  config::resolve_nodesets(r);
  config::check_references(r);
  for (const auto& e : r.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(r.errors.empty());
  return r;
}

uint16_t namespace_of(const config::ServerConfig& c, const std::string& uri) {
  for (size_t i = 0; i < c.namespaces.size(); ++i) {
    if (c.namespaces[i] == uri) return static_cast<uint16_t>(i);
  }
  FAIL("namespace " << uri << " not loaded");
  return 0;
}

TEST_CASE("event types: a NodeSet2 model's event types and their fields", "[addressspace][event_types]") {
  const config::LoadResult r = event_types_test::load(true);
  AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  REQUIRE(config::build_address_space(r.config, space, *p).empty());
  const NodeStore& s = *space.current();
  const EventTypes& ev = *s.event_types();
  const uint16_t ns = event_types_test::namespace_of(r.config, "urn:test:events");
  const auto tank = ev.event_type(ua::NodeId(ns, 1000));
  const auto overflow = ev.event_type(ua::NodeId(ns, 1010));
  const auto alarm = ev.event_type(ua::NodeId(ns, 1020));
  REQUIRE(tank);
  REQUIRE(overflow);
  REQUIRE(alarm);
  CHECK_FALSE(ev.event_type(ua::NodeId(ns, 1030)).has_value());  // an ObjectType, not an event type
  CHECK(ev.is_subtype(*tank, EventTypes::kBaseEventType));
  CHECK(ev.is_subtype(*overflow, *tank));
  CHECK_FALSE(ev.is_subtype(*tank, *overflow));
  const auto condition = *ev.event_type(ua::NodeId(0, ua::id::ConditionType));
  const auto exclusive_limit = *ev.event_type(ua::NodeId(0, ua::id::ExclusiveLimitAlarmType));
  CHECK_FALSE(ev.is_subtype(*tank, condition));
  CHECK(ev.is_subtype(*alarm, exclusive_limit));
  CHECK(ev.is_subtype(*alarm, condition));
  CHECK(ev.type_count() == ns0().index->type_count() + 3);

  auto at = [&](uint32_t id) { return s.find(ua::NodeId(ns, id)); };
  // Own fields, a nested one with its namespace, an override of BaseEventType.Severity.
  CHECK(ev.declaration(*tank, *ev.field(*tank, path({"Level"}, ns))) == at(1001));
  const std::vector<ua::QualifiedName> code = {{ns, ua::String("Details")}, {ns, ua::String("Code")}};
  REQUIRE(ev.field(*tank, code));
  CHECK(ev.declaration(*tank, *ev.field(*tank, code)) == at(1004));
  CHECK(ev.field_path(*ev.field_key(code)) ==
        std::to_string(ns) + ":Details/" + std::to_string(ns) + ":Code");
  CHECK(ev.declaration(*tank, event_field::kSeverity) == at(1002));
  CHECK(ev.declaration(EventTypes::kBaseEventType, event_field::kSeverity) ==
        s.find(ua::NodeId(0, ua::id::BaseEventType_Severity)));
  CHECK(ev.declaration(*tank, event_field::kEventId) == s.find(ua::NodeId(0, ua::id::BaseEventType_EventId)));
  // Not an InstanceDeclaration (no ModellingRule): not a field.
  CHECK_FALSE(ev.field_key(path({"Scratch"}, ns)).has_value());
  CHECK_FALSE(ev.field(*tank, path({"Level"})).has_value());  // namespace 0: another name
  // Inherited through the model's own subtype, and through namespace 0's alarm types.
  CHECK(ev.declaration(*overflow, *ev.field_key(path({"Level"}, ns))) == at(1001));
  CHECK(ev.declaration(*overflow, event_field::kSeverity) == at(1002));
  CHECK(ev.declaration(*overflow, *ev.field(*overflow, path({"Volume"}, ns))) == at(1011));
  CHECK_FALSE(ev.field(*tank, path({"Volume"}, ns)).has_value());
  CHECK(ev.declaration(*alarm, *ev.field(*alarm, path({"Tank"}, ns))) == at(1021));
  CHECK(ev.declaration(*alarm, event_field::kLimitStateCurrentState) ==
        s.find(ua::NodeId(0, ua::id::ExclusiveLimitAlarmType_LimitState_CurrentState)));
  CHECK(ev.declaration(*alarm, event_field::kActiveState) ==
        s.find(ua::NodeId(0, ua::id::ExclusiveLimitAlarmType_ActiveState)));
  // The model's DataType and notifier.
  CHECK(ev.builtin_of_data_type(ua::NodeId(ns, 3000)) == ua::BuiltinType::Double);
  CHECK(ev.is_notifier(at(5000)));
  const NodeIndex server = s.find(ua::NodeId(0, ua::id::Server));
  const std::vector<NodeIndex> expected = {std::min(server, at(5000)), std::max(server, at(5000))};
  const auto level = ev.notifiers_of(at(5001));
  CHECK(std::vector<NodeIndex>(level.begin(), level.end()) == expected);
  space.reclaimer().go_offline(*p);
}

TEST_CASE("event types: a reload builds the new store's own index", "[addressspace][event_types]") {
  const config::LoadResult first = event_types_test::load(false);
  const config::LoadResult second = event_types_test::load(true);
  AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  REQUIRE(config::build_address_space(first.config, space, *p).empty());
  const NodeStore* before = space.current();
  const EventTypes* old_index = before->event_types();
  REQUIRE(old_index != nullptr);
  const size_t old_types = old_index->type_count();
  const uint64_t old_generation = before->generation();
  const uint16_t ns = event_types_test::namespace_of(second.config, "urn:test:events");
  CHECK_FALSE(old_index->event_type(ua::NodeId(ns, 1000)).has_value());

  const auto outcome = config::reload_address_space(first.config, second.config, space, *p);
  for (const auto& e : outcome.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(outcome.errors.empty());
  const NodeStore* after = space.current();
  REQUIRE(after->generation() > old_generation);
  const EventTypes* new_index = after->event_types();
  REQUIRE(new_index != nullptr);
  CHECK(new_index != old_index);
  CHECK(new_index->type_count() == old_types + 3);
  const auto tank = new_index->event_type(ua::NodeId(ns, 1000));
  REQUIRE(tank);
  CHECK(new_index->field(*tank, path({"Level"}, ns)).has_value());
  // The old store (not yet freed: this thread has not passed a quiescent point) keeps its own.
  CHECK(old_index->type_count() == old_types);
  CHECK_FALSE(old_index->event_type(ua::NodeId(ns, 1000)).has_value());
  space.reclaimer().go_offline(*p);
}

// Objects and variables over namespace 0 for the notifier tests.
struct Notifiers {
  static ua::NodeId id(const char* name) { return ua::NodeId(1, ua::String(name)); }
  static void object(NodeStoreBuilder& b, const char* name, bool notifier) {
    NodeSpec o;
    o.node_id = id(name);
    o.node_class = NodeClass::Object;
    o.browse_name = {1, name};
    o.event_notifier = notifier ? 0x01 : 0x04;  // 0x04: HistoryRead alone does not make a notifier
    REQUIRE(b.add_node(o));
    b.add_reference(o.node_id, ua::NodeId(0, ua::id::HasTypeDefinition),
                    ua::NodeId(0, ua::id::BaseObjectType));
  }
  static void variable(NodeStoreBuilder& b, const char* name) {
    NodeSpec v;
    v.node_id = id(name);
    v.node_class = NodeClass::Variable;
    v.browse_name = {1, name};
    v.data_type = ua::NodeId(0, ua::id::Double);
    REQUIRE(b.add_node(v));
  }
  static void ref(NodeStoreBuilder& b, const char* from, uint32_t type, const char* to) {
    b.add_reference(std::string_view(from) == "Server" ? ua::NodeId(0, ua::id::Server) : id(from),
                    ua::NodeId(0, type), id(to));
  }
};

TEST_CASE("event types: notifier lists follow HasNotifier and HasEventSource up to the Server",
          "[addressspace][event_types]") {
  using N = event_types_test::Notifiers;
  const Built b([](NodeStoreBuilder& nb) {
    // A ReferenceType of the model's own below HasEventSource.
    NodeSpec rt;
    rt.node_id = N::id("HasAlarmSource");
    rt.node_class = NodeClass::ReferenceType;
    rt.browse_name = {1, "HasAlarmSource"};
    REQUIRE(nb.add_node(rt));
    nb.add_reference(ua::NodeId(0, ua::id::HasEventSource), ua::NodeId(0, ua::id::HasSubtype), rt.node_id);
    // Server -> Area -> Tank -> Level; Area -> Pump (not a notifier) -> Motor; TankFarm -> Tank too.
    for (const char* o : {"Area", "Tank", "TankFarm", "Loop1", "Loop2", "Self"}) N::object(nb, o, true);
    N::object(nb, "Pump", false);
    N::object(nb, "Quiet", false);
    for (const char* v : {"Level", "Motor", "Alone", "InLoop", "Custom"}) N::variable(nb, v);
    N::ref(nb, "Server", ua::id::HasNotifier, "Area");
    N::ref(nb, "Area", ua::id::HasNotifier, "Tank");
    N::ref(nb, "TankFarm", ua::id::HasNotifier, "Tank");
    N::ref(nb, "Tank", ua::id::HasEventSource, "Level");
    N::ref(nb, "Area", ua::id::HasEventSource, "Pump");
    N::ref(nb, "Pump", ua::id::HasEventSource, "Motor");
    // A loop (Part 3 forbids it; it must not hang) and a reference to itself.
    N::ref(nb, "Loop1", ua::id::HasNotifier, "Loop2");
    N::ref(nb, "Loop2", ua::id::HasNotifier, "Loop1");
    N::ref(nb, "Loop2", ua::id::HasEventSource, "InLoop");
    N::ref(nb, "Self", ua::id::HasNotifier, "Self");
    nb.add_reference(N::id("Quiet"), N::id("HasAlarmSource"), N::id("Custom"));
    nb.add_reference(N::id("Area"), N::id("HasAlarmSource"), N::id("Quiet"));
    // Not event references: Organizes does not carry events.
    nb.add_reference(N::id("Tank"), ua::NodeId(0, ua::id::Organizes), N::id("Alone"));
  });
  const EventTypes& ev = *b.index;
  const NodeIndex server = b.at(ua::id::Server);
  auto n = [&](const char* name) { return b.at(N::id(name)); };
  auto list = [&](NodeIndex source) {
    const auto l = ev.notifiers_of(source);
    CHECK(std::is_sorted(l.begin(), l.end()));
    CHECK(std::adjacent_find(l.begin(), l.end()) == l.end());
    return std::set<NodeIndex>(l.begin(), l.end());
  };
  using Set = std::set<NodeIndex>;
  CHECK(ev.is_notifier(server));
  CHECK(ev.is_notifier(n("Area")));
  CHECK_FALSE(ev.is_notifier(n("Pump")));
  CHECK_FALSE(ev.is_notifier(n("Level")));
  CHECK(list(n("Level")) == Set{server, n("Area"), n("Tank"), n("TankFarm")});
  CHECK(list(n("Tank")) == Set{server, n("Area"), n("Tank"), n("TankFarm")});
  CHECK(list(n("Area")) == Set{server, n("Area")});
  CHECK(list(n("TankFarm")) == Set{server, n("TankFarm")});
  CHECK(list(n("Motor")) == Set{server, n("Area")});  // through Pump, which is no notifier itself
  CHECK(list(n("Pump")) == Set{server, n("Area")});
  CHECK(list(n("Custom")) == Set{server, n("Area")});  // a subtype of HasEventSource
  CHECK(list(n("InLoop")) == Set{server, n("Loop1"), n("Loop2")});
  CHECK(list(n("Loop1")) == Set{server, n("Loop1"), n("Loop2")});
  CHECK(list(n("Self")) == Set{server, n("Self")});
  CHECK(list(n("Alone")) == Set{server});
  CHECK(list(server) == Set{server});
  CHECK(list(b.at(ua::id::ObjectsFolder)) == Set{server});
  // Tank and Level have the same notifiers: one list.
  CHECK(ev.notifiers_of(n("Tank")).data() == ev.notifiers_of(n("Level")).data());
  CHECK(ev.notifiers_of(n("Alone")).data() == ev.notifiers_of(server).data());
}

TEST_CASE("event types: a thousand sources below one notifier share its list",
          "[addressspace][event_types]") {
  using N = event_types_test::Notifiers;
  static std::vector<std::string> names;
  for (int i = static_cast<int>(names.size()); i < 1000; ++i) names.push_back("V" + std::to_string(i));
  const Built b([](NodeStoreBuilder& nb) {
    N::object(nb, "Area", true);
    N::ref(nb, "Server", ua::id::HasNotifier, "Area");
    for (const auto& v : names) {
      N::variable(nb, v.c_str());
      N::ref(nb, "Area", ua::id::HasEventSource, v.c_str());
    }
  });
  const EventTypes& ev = *b.index;
  const auto first = ev.notifiers_of(b.at(N::id("V0")));
  CHECK(first.size() == 2);
  for (const auto& v : names) CHECK(ev.notifiers_of(b.at(N::id(v.c_str()))).data() == first.data());
  CHECK(ev.list_count() <= ns0().index->list_count() + 1);
  CHECK(ev.source_count() >= 1001);
}

}  // namespace event_types_test
