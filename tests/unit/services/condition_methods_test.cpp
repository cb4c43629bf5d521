// Alarms through the services (Part 9): a Write that crosses a limit raises the condition's event on the
// writer's shard, Call runs Acknowledge and AddComment on the condition with the EventId a client saw, and
// ConditionRefresh / ConditionRefresh2 bracket the retained conditions with RefreshStart and RefreshEnd.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/generated/node_ids.hpp"

// A namespace of its own: the unit tests are built as unity sources.
namespace opcuad::services::condition_methods_test {
namespace {

using namespace opcuad::services::test;
namespace status = ua::status;
namespace id = ua::id;

const ua::NodeId kServer(0, id::Server);

ua::SimpleAttributeOperand clause(std::vector<std::string> path, uint32_t attribute = 13,
                                  uint32_t type = id::BaseEventType) {
  ua::SimpleAttributeOperand o;
  o.type_definition_id = ua::NodeId(0, type);
  for (auto& p : path) o.browse_path.push_back(ua::QualifiedName{0, ua::String(p)});
  o.attribute_id = attribute;
  return o;
}

// EventType, ConditionId (the empty path with AttributeId NodeId, Part 9 §5.5.2), EventId, ActiveState/Id,
// AckedState/Id, Retain, Message.
ua::ExtensionObject alarm_filter() {
  std::vector<ua::SimpleAttributeOperand> select = {
      clause({"EventType"}),
      clause({}, 1, id::ConditionType),
      clause({"EventId"}),
      clause({"ActiveState", "Id"}, 13, id::AlarmConditionType),
      clause({"AckedState", "Id"}, 13, id::AcknowledgeableConditionType),
      clause({"Retain"}, 13, id::ConditionType),
      clause({"Message"})};
  return ua::ExtensionObject::make(ua::EventFilter{std::move(select), {}});
}

struct Plant {
  Plant()
      : h("", R"({"namespaces": ["urn:app"], "nodes": [
          {"kind": "object", "name": "Tank", "children": [
            {"kind": "variable", "name": "Level", "data_type": "Double", "value": 50, "access": ["read", "write"],
             "alarms": [{"name": "Limits", "type": "exclusive_limit", "limits": {"high": 85, "low": 10},
                         "message": "level {value} is {state}"}]}]}]})") {
    REQUIRE(h.login().is_good());
    const auto& uris = h.loaded.config.namespaces;
    ns = static_cast<uint16_t>(std::find(uris.begin(), uris.end(), "urn:app") - uris.begin());
  }
  ua::NodeId node(const std::string& s) const { return ua::NodeId(ns, ua::String(s)); }
  ua::StatusCode write_level(double v) {
    ua::WriteRequest w;
    ua::WriteValue wv;
    wv.node_id = node("Tank.Level");
    wv.attribute_id = 13;
    wv.value.value = ua::Variant(v);
    w.nodes_to_write.push_back(wv);
    auto r = h.call<ua::WriteResponse>(w);
    REQUIRE(r.results.size() == 1);
    return r.results[0];
  }
  std::vector<ua::CallMethodResult> call(std::vector<ua::CallMethodRequest> methods) {
    ua::CallRequest req;
    req.methods_to_call = std::move(methods);
    auto resp = h.call<ua::CallResponse>(req);
    REQUIRE(resp.results.size() == req.methods_to_call.size());
    return resp.results;
  }
  ua::CallMethodRequest acknowledge(const ua::Variant& event_id, const std::string& comment) const {
    return ua::CallMethodRequest{
        node("Tank.Level.Limits"),
        ua::NodeId(0, id::AcknowledgeableConditionType_Acknowledge),
        {event_id, ua::Variant(ua::LocalizedText{ua::String("en"), ua::String(comment)})}};
  }
  ServiceHarness h;
  uint16_t ns = 0;
};

uint32_t event_type(const ua::EventFieldList& e) {
  const auto* t = e.event_fields[0].get_if<ua::NodeId>();
  return t && t->namespace_index() == 0 && t->type() == ua::IdType::Numeric ? t->numeric() : 0;
}

TEST_CASE("conditions: a Write raises the alarm, Acknowledge answers it, ConditionRefresh repeats it",
          "[services][alarms]") {
  Plant p;
  const uint32_t sub = subscribe(p.h).subscription_id;
  ItemSpec item{kServer, 5, 0, 100, true, alarm_filter(), ua::MonitoringMode::Reporting, 12};
  const ua::MonitoredItemCreateResult created = monitor(p.h, sub, item);
  REQUIRE(created.status_code.is_good());

  REQUIRE(p.write_level(90.0).is_good());
  auto raised = next_events(p.h);
  REQUIRE(raised.size() == 1);
  const ua::EventFieldList& e = raised[0];
  CHECK(event_type(e) == id::ExclusiveLimitAlarmType);
  CHECK(e.event_fields[1] == ua::Variant(p.node("Tank.Level.Limits")));
  CHECK(e.event_fields[3] == ua::Variant(true));
  CHECK(e.event_fields[4] == ua::Variant(false));
  CHECK(e.event_fields[5] == ua::Variant(true));
  const ua::Variant& event_id = e.event_fields[2];

  // The condition's variables read as the event said.
  {
    ua::ReadRequest r;
    r.nodes_to_read.push_back(ua::ReadValueId{p.node("Tank.Level.Limits.ActiveState.Id"), 13, {}, {}});
    auto resp = p.h.call<ua::ReadResponse>(r);
    REQUIRE(resp.results.size() == 1);
    CHECK(resp.results[0].value == ua::Variant(true));
  }

  // An EventId the condition never had, then the right one; the instance method on the type node.
  auto refused = p.call({p.acknowledge(ua::Variant(ua::ByteString(std::string(16, 'x'))), "no"),
                         ua::CallMethodRequest{ua::NodeId(0, id::ExclusiveLimitAlarmType),
                                               ua::NodeId(0, id::AcknowledgeableConditionType_Acknowledge),
                                               {event_id, ua::Variant(ua::LocalizedText{})}}});
  CHECK(refused[0].status_code == status::BadEventIdUnknown);
  CHECK(refused[1].status_code == status::BadNodeIdInvalid);
  CHECK(p.call({p.acknowledge(event_id, "seen")})[0].status_code == status::Good);
  auto acked = next_events(p.h);
  REQUIRE(acked.size() == 1);
  CHECK(acked[0].event_fields[4] == ua::Variant(true));
  CHECK(acked[0].event_fields[5] == ua::Variant(true));  // still active
  CHECK(acked[0].event_fields[2] != event_id);
  CHECK(p.call({p.acknowledge(acked[0].event_fields[2], "again")})[0].status_code ==
        status::BadConditionBranchAlreadyAcked);

  // ConditionRefresh as the .NET client calls it (ConditionType) and on the Server object.
  for (const ua::NodeId& object : {ua::NodeId(0, id::ConditionType), kServer}) {
    auto r = p.call({ua::CallMethodRequest{
        object, ua::NodeId(0, id::ConditionType_ConditionRefresh), {ua::Variant(sub)}}});
    CHECK(r[0].status_code == status::Good);
    auto refreshed = next_events(p.h);
    REQUIRE(refreshed.size() == 3);
    CHECK(event_type(refreshed[0]) == id::RefreshStartEventType);
    CHECK(refreshed[1].event_fields[1] == ua::Variant(p.node("Tank.Level.Limits")));
    CHECK(refreshed[1].event_fields[2] == acked[0].event_fields[2]);  // the last event's EventId
    CHECK(event_type(refreshed[2]) == id::RefreshEndEventType);
  }
  // ConditionRefresh2 with an item that is no event item, and an unknown subscription.
  auto bad = p.call({ua::CallMethodRequest{ua::NodeId(0, id::ConditionType),
                                           ua::NodeId(0, id::ConditionType_ConditionRefresh2),
                                           {ua::Variant(sub), ua::Variant(uint32_t{999})}},
                     ua::CallMethodRequest{ua::NodeId(0, id::ConditionType),
                                           ua::NodeId(0, id::ConditionType_ConditionRefresh),
                                           {ua::Variant(sub + 100)}}});
  CHECK(bad[0].status_code == status::BadMonitoredItemIdInvalid);
  CHECK(bad[1].status_code == status::BadSubscriptionIdInvalid);

  // Back to normal and acknowledged: no longer retained, so a refresh is only the bracket.
  REQUIRE(p.write_level(50.0).is_good());
  auto normal = next_events(p.h);
  REQUIRE(normal.size() == 1);
  CHECK(normal[0].event_fields[3] == ua::Variant(false));
  CHECK(normal[0].event_fields[5] == ua::Variant(false));
  REQUIRE(p.call({ua::CallMethodRequest{ua::NodeId(0, id::ConditionType),
                                        ua::NodeId(0, id::ConditionType_ConditionRefresh2),
                                        {ua::Variant(sub), ua::Variant(created.monitored_item_id)}}})[0]
              .status_code.is_good());
  auto bracket = next_events(p.h);
  REQUIRE(bracket.size() == 2);
  CHECK(event_type(bracket[0]) == id::RefreshStartEventType);
  CHECK(event_type(bracket[1]) == id::RefreshEndEventType);
}

}  // namespace
}  // namespace opcuad::services::condition_methods_test
