// Event filters compiled against the real namespace 0 (services/event_schema.hpp over
// addressspace/event_types.hpp): the clauses alarm clients send resolve, the ones that cannot select
// anything get their own status, and OfType follows the real type tree.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "addressspace/event_types.hpp"
#include "addressspace/namespace0.hpp"
#include "addressspace/node_store_builder.hpp"
#include "services/event_schema.hpp"
#include "ua/generated/node_ids.hpp"

// A namespace of its own: the unit tests are built as unity sources.
namespace opcuad::services::event_schema_test {
namespace {

namespace status = ua::status;
namespace id = ua::id;
namespace field = addressspace::event_field;

struct Namespace0 {
  addressspace::ValueStore values;
  addressspace::EpochReclaimer::Participant* p = values.reclaimer().register_participant();
  std::unique_ptr<addressspace::NodeStore> store;
  Namespace0() {
    addressspace::NodeStoreBuilder b(values, *p);
    addressspace::add_namespace0(b);
    auto r = b.build();
    REQUIRE(r.errors.empty());
    store = std::move(r.store);
    REQUIRE(store->event_types());
  }
};

const addressspace::EventTypes& types() {
  static const Namespace0 ns0;
  return *ns0.store->event_types();
}

ua::SimpleAttributeOperand clause(const std::string& path, uint32_t type = id::BaseEventType,
                                  uint32_t attribute = 13) {
  ua::SimpleAttributeOperand o;
  o.type_definition_id = ua::NodeId(0, type);
  size_t b = 0;
  while (!path.empty() && b <= path.size()) {
    const size_t e = std::min(path.find('/', b), path.size());
    o.browse_path.push_back(ua::QualifiedName{0, ua::String(path.substr(b, e - b))});
    b = e + 1;
  }
  o.attribute_id = attribute;
  return o;
}

ua::ContentFilterElement of_type(uint32_t type) {
  return ua::ContentFilterElement{
      ua::FilterOperator::OfType,
      {ua::ExtensionObject::make(ua::LiteralOperand{ua::Variant(ua::NodeId(0, type))})}};
}

// An event of a namespace-0 type with a few fields set.
class Event : public EventView {
 public:
  explicit Event(uint32_t type) : type_(*types().event_type(ua::NodeId(0, type))) {}
  Event& set(FieldKey k, ua::Variant v) {
    if (values_.size() <= k) values_.resize(k + 1u);
    values_[k] = std::move(v);
    return *this;
  }
  EventTypeIdx type() const override { return type_; }
  const ua::Variant* field(FieldKey k) const override {
    return k < values_.size() && !values_[k].is_empty() ? &values_[k] : nullptr;
  }

 private:
  EventTypeIdx type_;
  std::vector<ua::Variant> values_;
};

}  // namespace

TEST_CASE("event schema: an alarm list's clauses resolve against namespace 0", "[filter][event_schema]") {
  const StoreEventSchema schema(types());
  ua::EventFilter f;
  // BaseEventType clauses of fields the subtypes declare (Part 4 §7.22.3), a named type's own field, and
  // the ConditionId clause (Part 9 §5.5.2).
  for (const char* p :
       {"EventId", "EventType", "SourceNode", "Time", "Message", "Severity", "ConditionName", "Retain",
        "EnabledState/Id", "AckedState/Id", "ActiveState/Id", "LimitState/CurrentState"})
    f.select_clauses.push_back(clause(p));
  f.select_clauses.push_back(clause("LimitState/CurrentState/Id", id::ExclusiveLimitAlarmType));
  f.select_clauses.push_back(clause("", id::ConditionType, 1));
  f.where_clause.elements.push_back(of_type(id::AcknowledgeableConditionType));
  const FilterCompilation c = compile(f, schema, FilterLimits{});
  CHECK(c.status == status::Good);
  CHECK(c.result_empty());

  Event alarm(id::ExclusiveLimitAlarmType);
  alarm.set(field::kSeverity, ua::Variant(uint16_t{700})).set(field::kActiveStateId, ua::Variant(true));
  CHECK(matches(c.filter, alarm));
  ua::Variant scratch;
  CHECK(selected_value(c.filter, 5, alarm, scratch) == ua::Variant(uint16_t{700}));
  CHECK(selected_value(c.filter, 10, alarm, scratch) == ua::Variant(true));
  CHECK(selected_value(c.filter, 0, alarm, scratch).is_empty());  // not set on this event
  // A system event is no condition: OfType drops it.
  CHECK_FALSE(matches(c.filter, Event(id::SystemStatusChangeEventType)));
  CHECK(matches(c.filter, Event(id::OffNormalAlarmType)));
}

TEST_CASE("event schema: clauses that select nothing get their own status", "[filter][event_schema]") {
  const StoreEventSchema schema(types());
  ua::EventFilter f;
  f.select_clauses.push_back(clause("EventId"));
  f.select_clauses.push_back(clause("ActiveState", id::SystemEventType));    // not a SystemEventType field
  f.select_clauses.push_back(clause("Severity", id::DataTypeEncodingType));  // not an event type
  f.select_clauses.push_back(clause("Severity", 999999));                    // no such node
  const FilterCompilation c = compile(f, schema, FilterLimits{});
  CHECK(c.status == status::Good);  // one clause is valid (Part 4 §7.22.3)
  REQUIRE(c.result.select_clause_results.size() == 4);
  CHECK(c.result.select_clause_results[0] == status::Good);
  for (size_t i = 1; i < 4; ++i) {
    INFO(i);
    CHECK_FALSE(c.result.select_clause_results[i].is_good());
  }
}

}  // namespace opcuad::services::event_schema_test
