// The alarm condition specifications a NodeStore is built with (addressspace/condition_specs.hpp): lookups
// by condition and by watched variable, the kHasAlarm flag, and the declarations build() refuses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "addressspace/condition_specs.hpp"
#include "addressspace/namespace0.hpp"
#include "addressspace/node_store_builder.hpp"
#include "ua/generated/node_ids.hpp"

namespace condition_specs_test {

using namespace opcuad;
using namespace opcuad::addressspace;

ua::NodeId id(const char* s) {
  return ua::NodeId(1, ua::String(s));
}

// Namespace 0, an object, three Double variables (In, In2, Sp) and condition objects C1..C3.
void add_nodes(NodeStoreBuilder& b) {
  NodeSpec o;
  o.node_class = NodeClass::Object;
  for (const char* name : {"C1", "C2", "C3"}) {
    o.node_id = id(name);
    o.browse_name = ua::QualifiedName{1, ua::String(name)};
    REQUIRE(b.add_node(o));
    b.add_reference(id(name), ua::NodeId(0, ua::id::HasTypeDefinition),
                    ua::NodeId(0, ua::id::ExclusiveLimitAlarmType));
  }
  NodeSpec v;
  v.node_class = NodeClass::Variable;
  v.data_type = ua::NodeId(0, ua::id::Double);
  v.value_rank = -1;
  for (const char* name : {"In", "In2", "Sp"}) {
    v.node_id = id(name);
    v.browse_name = ua::QualifiedName{1, ua::String(name)};
    REQUIRE(b.add_node(v));
    b.add_reference(ua::NodeId(0, ua::id::ObjectsFolder), ua::NodeId(0, ua::id::Organizes), id(name));
  }
}

ConditionDecl decl(const char* condition, const char* input,
                   uint32_t type = ua::id::ExclusiveLimitAlarmType) {
  ConditionDecl d;
  d.condition = id(condition);
  d.type = ua::NodeId(0, type);
  d.input = id(input);
  d.limit_mask = 0x02;
  d.limits[alarm_limit::kHigh] = 80;
  d.limit_severity[alarm_limit::kHigh] = 700;
  d.name = condition;
  d.message = "{name} is {state}";
  d.ack_roles = 0x08;
  return d;
}

struct Built {
  ValueStore values;
  EpochReclaimer::Participant* p = values.reclaimer().register_participant();
  NodeStoreBuilder::Result result;
  template <class More>
  explicit Built(More more) {
    NodeStoreBuilder b(values, *p);
    add_namespace0(b);
    add_nodes(b);
    more(b);
    result = b.build();
  }
  const NodeStore& store() const { return *result.store; }
  NodeIndex at(const char* s) const { return result.store->find(id(s)); }
};

TEST_CASE("condition specs: found by condition and by the variables they watch", "[addressspace][alarms]") {
  Built b([](NodeStoreBuilder& nb) {
    nb.add_condition(decl("C1", "In"));
    ConditionDecl dev = decl("C2", "In", ua::id::ExclusiveDeviationAlarmType);
    dev.kind = ConditionKind::Deviation;
    dev.reference = id("Sp");
    nb.add_condition(dev);
    nb.add_condition(decl("C3", "In2", ua::id::NonExclusiveLimitAlarmType));
  });
  for (const auto& e : b.result.errors) UNSCOPED_INFO(e);
  REQUIRE(b.result.errors.empty());
  const auto& s = b.store();
  const ConditionSpecs* specs = s.condition_specs();
  REQUIRE(specs);
  CHECK(specs->size() == 3);
  const ConditionSpec* c1 = specs->find(b.at("C1"));
  REQUIRE(c1);
  CHECK(c1->node == b.at("C1"));
  CHECK(c1->input == b.at("In"));
  CHECK(c1->input_cell == s.variable(b.at("In"))->cell);
  CHECK(c1->reference == kNoNode);
  CHECK(c1->reference_cell == nullptr);
  CHECK(c1->has_limit(alarm_limit::kHigh));
  CHECK_FALSE(c1->has_limit(alarm_limit::kHighHigh));
  CHECK(c1->limits[alarm_limit::kHigh] == 80);
  CHECK(c1->limit_severity[alarm_limit::kHigh] == 700);
  CHECK(c1->name == "C1");
  CHECK(c1->message == "{name} is {state}");
  CHECK(c1->ack_roles == 0x08);
  CHECK(c1->type == *s.event_types()->event_type(ua::NodeId(0, ua::id::ExclusiveLimitAlarmType)));
  const ConditionSpec* c2 = specs->find(b.at("C2"));
  REQUIRE(c2);
  CHECK(c2->kind == ConditionKind::Deviation);
  CHECK(c2->reference == b.at("Sp"));
  CHECK(c2->reference_cell == s.variable(b.at("Sp"))->cell);
  CHECK(specs->find(b.at("In")) == nullptr);
  CHECK(specs->find(kNoNode) == nullptr);

  // Watching: In by C1 and C2, Sp by C2, In2 by C3.
  auto names = [&](NodeIndex n) {
    std::vector<std::string> out;
    for (uint32_t i : specs->watching(n)) out.push_back(specs->all()[i].name);
    std::sort(out.begin(), out.end());
    return out;
  };
  CHECK(names(b.at("In")) == std::vector<std::string>{"C1", "C2"});
  CHECK(names(b.at("Sp")) == std::vector<std::string>{"C2"});
  CHECK(names(b.at("In2")) == std::vector<std::string>{"C3"});
  CHECK(specs->watching(b.at("C1")).empty());
  for (const char* v : {"In", "In2", "Sp"}) CHECK(s.has_flag(b.at(v), flag::kHasAlarm));
  CHECK_FALSE(s.has_flag(s.find(ua::NodeId(0, ua::id::Server_ServerStatus_State)), flag::kHasAlarm));
}

TEST_CASE("condition specs: a store without alarms has an empty table", "[addressspace][alarms]") {
  Built b([](NodeStoreBuilder&) {});
  REQUIRE(b.result.errors.empty());
  REQUIRE(b.store().condition_specs());
  CHECK(b.store().condition_specs()->size() == 0);
  CHECK(b.store().condition_specs()->watching(b.at("In")).empty());
  CHECK_FALSE(b.store().has_flag(b.at("In"), flag::kHasAlarm));
}

TEST_CASE("condition specs: declarations that do not fit the store are build errors",
          "[addressspace][alarms]") {
  auto errors = [](auto more) {
    Built b(more);
    CHECK(b.result.store == nullptr);
    return b.result.errors;
  };
  CHECK(errors([](NodeStoreBuilder& b) { b.add_condition(decl("C1", "C2")); }) ==
        std::vector<std::string>{"condition ns=1;s=C1: its input ns=1;s=C2 is not a Variable"});
  CHECK(errors([](NodeStoreBuilder& b) { b.add_condition(decl("In", "In2")); }) ==
        std::vector<std::string>{"condition ns=1;s=In is not an Object"});
  CHECK(errors([](NodeStoreBuilder& b) { b.add_condition(decl("C1", "In", ua::id::ConditionType)); }) ==
        std::vector<std::string>{
            "condition ns=1;s=C1: its type i=2782 is not an alarm type (AlarmConditionType or a subtype)"});
  CHECK(errors([](NodeStoreBuilder& b) {
          b.add_condition(decl("C1", "In"));
          b.add_condition(decl("C1", "In2"));
        }) == std::vector<std::string>{"condition ns=1;s=C1 is declared twice"});
}

}  // namespace condition_specs_test
