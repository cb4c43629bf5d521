// Call (Part 4 §5.11) with the Server object's standard methods GetMonitoredItems and ResendData
// (Part 5 §9.1, §9.2): per-operation checks of the object, the method and each input argument, the
// owning session's rule, and what the two methods do.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;
namespace id = ua::id;

namespace {

ua::CallMethodRequest method(uint32_t method_id, std::vector<ua::Variant> args,
                             uint32_t object = id::Server) {
  return ua::CallMethodRequest{ua::NodeId(0, object), ua::NodeId(0, method_id), std::move(args)};
}

template <class Side>
std::vector<ua::CallMethodResult> call(Side& side, std::vector<ua::CallMethodRequest> methods) {
  ua::CallRequest c;
  c.methods_to_call = std::move(methods);
  auto resp = side.template call<ua::CallResponse>(c);
  REQUIRE(resp.results.size() == c.methods_to_call.size());
  return resp.results;
}

const std::vector<uint32_t>& uint32_array(const ua::Variant& v) {
  const auto* a = v.get_if<std::vector<uint32_t>>();
  REQUIRE(a);
  return *a;
}

}  // namespace

TEST_CASE("Call: the methods and their arguments are exposed in namespace 0", "[services][call]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  for (uint32_t m : {id::Server_GetMonitoredItems, id::Server_ResendData}) {
    CHECK(h.read(ua::NodeId(0, m), 21).value == ua::Variant(true));  // Executable
    CHECK(h.read(ua::NodeId(0, m), 22).value == ua::Variant(true));  // UserExecutable
  }
  for (uint32_t p : {id::Server_GetMonitoredItems_InputArguments, id::Server_ResendData_InputArguments}) {
    const auto v = h.read(ua::NodeId(0, p)).value;
    const auto* args = v.get_if<std::vector<ua::ExtensionObject>>();
    REQUIRE(args);
    REQUIRE(args->size() == 1);
    const auto* arg = (*args)[0].get<ua::Argument>();
    REQUIRE(arg);
    CHECK(arg->name.view() == "SubscriptionId");
    CHECK(arg->data_type == ua::NodeId(0, id::UInt32));
  }
  const auto out = h.read(ua::NodeId(0, id::Server_GetMonitoredItems_OutputArguments)).value;
  const auto* args = out.get_if<std::vector<ua::ExtensionObject>>();
  REQUIRE(args);
  REQUIRE(args->size() == 2);
  CHECK((*args)[0].get<ua::Argument>()->name.view() == "ServerHandles");
  CHECK((*args)[1].get<ua::Argument>()->name.view() == "ClientHandles");
}

TEST_CASE("Call: GetMonitoredItems returns the server and client handles", "[services][call]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  const auto a = monitor(h, sub, {plant(".Speed"), 71});
  const auto b = monitor(h, sub, {plant(".Count"), 72});
  REQUIRE(a.status_code.is_good());
  REQUIRE(b.status_code.is_good());
  const uint32_t empty = subscribe(h).subscription_id;

  auto r =
      call(h, {method(id::Server_GetMonitoredItems, {sub}), method(id::Server_GetMonitoredItems, {empty}),
               method(id::ServerType_GetMonitoredItems, {sub})});  // the ObjectType's method, on the object
  for (size_t i : {size_t{0}, size_t{2}}) {
    REQUIRE(r[i].status_code == status::Good);
    CHECK(r[i].input_argument_results.empty());
    REQUIRE(r[i].output_arguments.size() == 2);
    auto server_handles = uint32_array(r[i].output_arguments[0]);
    auto client_handles = uint32_array(r[i].output_arguments[1]);
    REQUIRE(server_handles.size() == 2);
    REQUIRE(client_handles.size() == 2);
    // In the same order: each server handle with its client handle.
    for (size_t k = 0; k < 2; ++k) {
      if (server_handles[k] == a.monitored_item_id)
        CHECK(client_handles[k] == 71);
      else if (server_handles[k] == b.monitored_item_id)
        CHECK(client_handles[k] == 72);
      else
        FAIL("unknown server handle " << server_handles[k]);
    }
  }
  REQUIRE(r[1].status_code == status::Good);
  REQUIRE(r[1].output_arguments.size() == 2);
  CHECK(uint32_array(r[1].output_arguments[0]).empty());
  CHECK(uint32_array(r[1].output_arguments[1]).empty());
}

TEST_CASE("Call: input arguments are checked per argument", "[services][call]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  auto r =
      call(h, {method(id::Server_GetMonitoredItems, {}), method(id::Server_GetMonitoredItems, {sub, sub}),
               method(id::Server_GetMonitoredItems, {int32_t(sub)}),
               method(id::Server_ResendData, {ua::Variant(std::vector<uint32_t>{sub})}),
               method(id::Server_ResendData, {ua::Variant()}),
               method(id::Server_GetMonitoredItems, {uint32_t(sub ^ 0x5a5a5a5a)})});
  CHECK(r[0].status_code == status::BadArgumentsMissing);
  CHECK(r[1].status_code == status::BadTooManyArguments);
  for (size_t i : {size_t{2}, size_t{3}, size_t{4}}) {
    INFO(i);
    CHECK(r[i].status_code == status::BadInvalidArgument);
    REQUIRE(r[i].input_argument_results.size() == 1);
    CHECK(r[i].input_argument_results[0] == status::BadTypeMismatch);
    CHECK(r[i].output_arguments.empty());
  }
  CHECK(r[5].status_code == status::BadSubscriptionIdInvalid);
}

TEST_CASE("Call: objects and methods that cannot be called", "[services][call]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  auto r =
      call(h, {method(id::Server_GetMonitoredItems, {sub}, id::ObjectsFolder),        // not its component
               method(id::Server_ServerStatus, {}),                                   // not a method
               method(id::Server_GetMonitoredItems, {sub}, id::Server_ServerStatus),  // not an object
               ua::CallMethodRequest{ua::NodeId(2, 1), ua::NodeId(0, id::Server_GetMonitoredItems), {}},
               method(id::Server_SetSubscriptionDurable, {sub, uint32_t{1}})});  // a method not implemented
  CHECK(r[0].status_code == status::BadMethodInvalid);
  CHECK(r[1].status_code == status::BadMethodInvalid);
  CHECK(r[2].status_code == status::BadNodeIdInvalid);
  CHECK(r[3].status_code == status::BadNodeIdUnknown);
  CHECK(r[4].status_code == status::BadNotImplemented);
}

TEST_CASE("Call: another session's subscription is BadUserAccessDenied", "[services][call]") {
  asio::io_context ctx2;  // outlives the server, which keeps timers on it
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t mine = subscribe(h).subscription_id;
  REQUIRE(monitor(h, mine, {plant(".Speed"), 7}).status_code.is_good());
  SecondShard other(h, ctx2);
  other.login();
  // Part 5 §9.1, §9.2: not called in the context of the session that owns the subscription.
  auto r = call(other, {method(id::Server_GetMonitoredItems, {mine}), method(id::Server_ResendData, {mine})});
  CHECK(r[0].status_code == status::BadUserAccessDenied);
  CHECK(r[0].output_arguments.empty());
  CHECK(r[1].status_code == status::BadUserAccessDenied);
  // Its owner still may.
  auto own = call(h, {method(id::Server_GetMonitoredItems, {mine})});
  CHECK(own[0].status_code == status::Good);
}

TEST_CASE("Call: ResendData makes the next Publish carry every current value", "[services][call]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, {plant(".Speed"), 1}).status_code.is_good());
  REQUIRE(monitor(h, sub, {plant(".Count"), 2}).status_code.is_good());
  REQUIRE(monitor(h, sub, {plant(".Name"), 3, 10, 1, true, {}, ua::MonitoringMode::Sampling})
              .status_code.is_good());
  // The initial values, then nothing changes: keep-alives only.
  auto first = next_changes(h);
  CHECK(first.size() == 2);
  auto idle = publish(h);
  CHECK(changes(idle).empty());

  auto r = call(h, {method(id::Server_ResendData, {sub})});
  REQUIRE(r[0].status_code == status::Good);
  CHECK(r[0].output_arguments.empty());
  auto resent = changes(publish(h));
  REQUIRE(resent.size() == 2);  // the Reporting items only (Part 5 §9.2)
  std::vector<uint32_t> handles{resent[0].client_handle, resent[1].client_handle};
  std::sort(handles.begin(), handles.end());
  CHECK(handles == std::vector<uint32_t>{1, 2});
  for (const auto& n : resent) {
    if (n.client_handle == 1) CHECK(n.value.value == ua::Variant(10.0));
    if (n.client_handle == 2) CHECK(n.value.value == ua::Variant(int32_t{1}));
  }
}

TEST_CASE("Call: a Method an instance of a NodeSet2 type got from its type is BadNotImplemented",
          "[services][call]") {
  // tests/unit/config/nodesets/instances.xml: MachineType has a Mandatory Method Start with InputArguments.
  const std::string types =
      (std::filesystem::path(OPCUAD_SOURCE_DIR) / "tests/unit/config/nodesets/instances.xml").string();
  ServiceHarness h("",
                   R"({"namespaces": ["urn:app"], "nodes": [
                        {"kind": "object", "name": "M1", "type_definition": "urn:inst:MachineType"}]})",
                   "\"node_files\": [\"" + types + "\"]");
  REQUIRE(h.login().is_good());
  const auto& uris = h.loaded.config.namespaces;
  const auto app = static_cast<uint16_t>(std::find(uris.begin(), uris.end(), "urn:app") - uris.begin());
  const auto inst = static_cast<uint16_t>(std::find(uris.begin(), uris.end(), "urn:inst") - uris.begin());
  const ua::NodeId object(app, ua::String("M1")), start(app, ua::String("M1.Start"));
  CHECK(h.read(start, 21).value == ua::Variant(true));  // Executable, as the declaration
  const auto args = h.read(ua::NodeId(app, ua::String("M1.Start.InputArguments"))).value;
  REQUIRE(args.get_if<std::vector<ua::ExtensionObject>>());
  auto r = call(h, {ua::CallMethodRequest{object, start, {ua::Variant(1.0)}},
                    ua::CallMethodRequest{object, ua::NodeId(inst, 7001), {ua::Variant(1.0)}},  // the type's
                    ua::CallMethodRequest{ua::NodeId(0, id::ObjectsFolder), start, {}}});
  CHECK(r[0].status_code == status::BadNotImplemented);
  CHECK(r[1].status_code == status::BadNotImplemented);
  CHECK(r[2].status_code == status::BadMethodInvalid);  // not a component of the Objects folder
}

TEST_CASE("Call: a Method of a supertype belongs to the instances and the subtypes (Part 3 §6.3)",
          "[services][call]") {
  // An object of ExclusiveLimitAlarmType (i=9341) has Acknowledge (i=9111) from AcknowledgeableConditionType
  // three supertypes up; ConditionRefresh (i=3875) is ConditionType's, called on its subtypes too.
  ServiceHarness h("", R"({"namespaces": ["urn:app"], "nodes": [
                        {"kind": "object", "name": "Alarm", "type_definition": "i=9341"}]})");
  REQUIRE(h.login().is_good());
  const auto& uris = h.loaded.config.namespaces;
  const auto app = static_cast<uint16_t>(std::find(uris.begin(), uris.end(), "urn:app") - uris.begin());
  const ua::NodeId alarm(app, ua::String("Alarm"));
  const ua::Variant event_id(ua::ByteString(std::string(16, 'x'))), comment(ua::LocalizedText{});
  auto r =
      call(h, {ua::CallMethodRequest{
                   alarm, ua::NodeId(0, id::AcknowledgeableConditionType_Acknowledge), {event_id, comment}},
               method(id::ConditionType_ConditionRefresh, {uint32_t{1}}, id::ExclusiveLimitAlarmType),
               method(id::ConditionType_ConditionRefresh, {uint32_t{1}}, id::ConditionType),
               // Neither the Server nor the FolderType has them.
               method(id::AcknowledgeableConditionType_Acknowledge, {event_id, comment}),
               ua::CallMethodRequest{ua::NodeId(0, id::ObjectsFolder),
                                     ua::NodeId(0, id::ConditionType_ConditionRefresh),
                                     {uint32_t{1}}}});
  // They reach their implementations: this object is of an alarm type but no configured alarm (no state
  // to acknowledge), and subscription 1 does not exist.
  CHECK(r[0].status_code == status::BadNodeIdInvalid);
  CHECK(r[1].status_code == status::BadSubscriptionIdInvalid);
  CHECK(r[2].status_code == status::BadSubscriptionIdInvalid);
  CHECK(r[3].status_code == status::BadMethodInvalid);
  CHECK(r[4].status_code == status::BadMethodInvalid);
}
