// Method service set (Part 4 §5.11): Call. Each operation is checked in the order of Part 4 §5.11.2.3's
// result codes: the object (BadNodeIdUnknown, BadNodeIdInvalid), the method and that it belongs to the
// object (BadMethodInvalid), its Executable and UserExecutable attributes (BadNotExecutable,
// BadUserAccessDenied), an implementation (BadNotImplemented), then the input arguments against the
// method's InputArguments (BadArgumentsMissing, BadTooManyArguments, BadInvalidArgument with a
// BadTypeMismatch per wrong argument in inputArgumentResults) before the method runs.
//
// Implemented: the Server object's GetMonitoredItems and ResendData (Part 5 §9.1, §9.2), and Part 9's
// condition methods: Enable, Disable, AddComment, Acknowledge, Confirm on an alarm condition, and
// ConditionRefresh / ConditionRefresh2 on ConditionType (or the Server object).
#include <algorithm>
#include <array>
#include <span>

#include "services/access_control.hpp"
#include "services/alarm_eval.hpp"
#include "services/audit.hpp"
#include "services/handlers.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "services/subscription.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using addressspace::NodeIndex;
using addressspace::NodeStore;

// The subscription `id` for a method called in `session`'s context (Part 5 §9.1, §9.2): one of another
// session is BadUserAccessDenied ("not called in the context of the Session that owns the
// Subscription"), an id nobody holds BadSubscriptionIdInvalid.
Subscription* own_subscription(Server& server, Session& session, uint32_t id, ua::StatusCode& refused) {
  if (Subscription* sub = find_subscription(session, id)) return sub;
  refused =
      server.subscriptions().shard_of(id) ? status::BadUserAccessDenied : status::BadSubscriptionIdInvalid;
  return nullptr;
}

// Part 5 §9.1: GetMonitoredItems(subscriptionId) -> (serverHandles UInt32[], clientHandles UInt32[]).
ua::StatusCode get_monitored_items(Server& server, Call& call, std::span<const ua::Variant> in,
                                   std::vector<ua::Variant>& out) {
  ua::StatusCode refused = status::Good;
  Subscription* sub = own_subscription(server, *call.session, *in[0].get_if<uint32_t>(), refused);
  if (!sub) return refused;
  std::vector<uint32_t> server_handles, client_handles;
  server_handles.reserve(sub->item_count());
  client_handles.reserve(sub->item_count());
  sub->for_each_item([&](MonitoredItem& item) {
    server_handles.push_back(item.id);
    client_handles.push_back(item.client_handle);
  });
  out.emplace_back(std::move(server_handles));
  out.emplace_back(std::move(client_handles));
  return status::Good;
}

// Part 5 §9.2: ResendData(subscriptionId): the current value of every Reporting data item is queued, so
// the subscription's next Publish carries them all (Part 4 §5.13.1.1 lists it as a way to refresh).
ua::StatusCode resend_data(Server& server, Call& call, std::span<const ua::Variant> in,
                           std::vector<ua::Variant>&) {
  ua::StatusCode refused = status::Good;
  Subscription* sub = own_subscription(server, *call.session, *in[0].get_if<uint32_t>(), refused);
  if (!sub) return refused;
  sub->queue_current_values();
  return status::Good;
}

// An implemented method. The inputs mirror the method's InputArguments property in namespace 0 (each a
// scalar of the given built-in type); `type_method` is the same method on the object's ObjectType, which
// Part 4 §5.11.2.2 lets a client call on the object too.
struct MethodImpl {
  uint32_t object;
  uint32_t method;
  uint32_t type_method;
  std::span<const ua::BuiltinType> inputs;
  ua::StatusCode (*run)(Server&, Call&, std::span<const ua::Variant> in, std::vector<ua::Variant>& out);
};

constexpr std::array<ua::BuiltinType, 1> kSubscriptionIdInput{ua::BuiltinType::UInt32};

constexpr MethodImpl kMethods[] = {
    {ua::id::Server, ua::id::Server_GetMonitoredItems, ua::id::ServerType_GetMonitoredItems,
     kSubscriptionIdInput, get_monitored_items},
    {ua::id::Server, ua::id::Server_ResendData, ua::id::ServerType_ResendData, kSubscriptionIdInput,
     resend_data},
};

const MethodImpl* find_method(const ua::NodeId& object, const ua::NodeId& method) noexcept {
  for (const MethodImpl& impl : kMethods) {
    if (object.is_ns0(impl.object) && (method.is_ns0(impl.method) || method.is_ns0(impl.type_method)))
      return &impl;
  }
  return nullptr;
}

// Whether `node` has a forward HasComponent reference to `method` (Part 3 §5.7: a method belongs to the
// object or type that has it as a component).
bool has_component(const NodeStore& store, NodeIndex node, NodeIndex method) noexcept {
  const NodeIndex has_component = store.find(ua::NodeId(0, ua::id::HasComponent));
  const int type = has_component == addressspace::kNoNode ? -1 : store.reference_type_index(has_component);
  if (type < 0) return false;
  for (const auto& r : store.references(node)) {
    if (!r.is_inverse && r.target == method && r.type == type) return true;
  }
  return false;
}

// The supertype of a type: the source of its inverse HasSubtype reference, kNoNode for a root.
NodeIndex supertype(const NodeStore& store, NodeIndex type, int has_subtype) noexcept {
  for (const auto& r : store.references(type)) {
    if (r.is_inverse && r.type == has_subtype) return r.target;
  }
  return addressspace::kNoNode;
}

// Part 4 §5.11.2.2: the method must be a component of the object or of the object's ObjectType; a
// subtype inherits the methods of its supertypes (Part 3 §6.3), so an instance of ExclusiveLimitAlarmType
// is called with AcknowledgeableConditionType's Acknowledge. The walk is bounded: a type tree deeper than
// this is a model error, not a reason to loop.
constexpr int kMaxTypeDepth = 64;

bool belongs_to(const NodeStore& store, NodeIndex object, NodeIndex method) noexcept {
  if (has_component(store, object, method)) return true;
  const NodeIndex has_type_definition = store.find(ua::NodeId(0, ua::id::HasTypeDefinition));
  const NodeIndex has_subtype_node = store.find(ua::NodeId(0, ua::id::HasSubtype));
  if (has_type_definition == addressspace::kNoNode || has_subtype_node == addressspace::kNoNode) return false;
  const int has_subtype = store.reference_type_index(has_subtype_node);
  // An ObjectType object (ConditionType for ConditionRefresh) inherits too.
  NodeIndex type = store.node_class(object) == addressspace::NodeClass::ObjectType
                       ? supertype(store, object, has_subtype)
                       : store.forward_target(object, has_type_definition);
  for (int depth = 0; type != addressspace::kNoNode && depth < kMaxTypeDepth; ++depth) {
    if (has_component(store, type, method)) return true;
    type = supertype(store, type, has_subtype);
  }
  return false;
}

// Part 4 §5.11.2.3: the argument count first, then each argument's type; a wrong one is BadTypeMismatch in
// inputArgumentResults and the operation BadInvalidArgument.
ua::StatusCode check_arguments(std::span<const ua::BuiltinType> inputs, const std::vector<ua::Variant>& args,
                               ua::CallMethodResult& r) {
  if (args.size() < inputs.size()) return status::BadArgumentsMissing;
  if (args.size() > inputs.size()) return status::BadTooManyArguments;
  bool all_good = true;
  r.input_argument_results.resize(args.size(), status::Good);
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_scalar() || args[i].type() != inputs[i]) {
      r.input_argument_results[i] = status::BadTypeMismatch;
      all_good = false;
    }
  }
  if (all_good) {
    r.input_argument_results.clear();  // only reported when something is wrong
    return status::Good;
  }
  return status::BadInvalidArgument;
}

// Part 9's condition methods: on a condition instance (Part 9 §5.5.4-§5.5.6, §5.7.3-§5.7.4) and the
// refreshes (§5.5.7-§5.5.8). The instance methods are the type's (conditions have no method nodes of
// their own, docs/CONFIGURATION.md "Alarms"), called with the condition as the ObjectId.
enum class ConditionMethod : uint8_t { None, Instance, Refresh, Refresh2 };

ConditionMethod condition_method(const ua::NodeId& method, alarm::Method& which) noexcept {
  if (method.namespace_index() != 0 || method.type() != ua::IdType::Numeric) return ConditionMethod::None;
  switch (method.numeric()) {
    case ua::id::ConditionType_Enable:
      which = alarm::Method::Enable;
      return ConditionMethod::Instance;
    case ua::id::ConditionType_Disable:
      which = alarm::Method::Disable;
      return ConditionMethod::Instance;
    case ua::id::ConditionType_AddComment:
      which = alarm::Method::AddComment;
      return ConditionMethod::Instance;
    case ua::id::AcknowledgeableConditionType_Acknowledge:
      which = alarm::Method::Acknowledge;
      return ConditionMethod::Instance;
    case ua::id::AcknowledgeableConditionType_Confirm:
      which = alarm::Method::Confirm;
      return ConditionMethod::Instance;
    case ua::id::ConditionType_ConditionRefresh:
      return ConditionMethod::Refresh;
    case ua::id::ConditionType_ConditionRefresh2:
      return ConditionMethod::Refresh2;
    default:
      return ConditionMethod::None;
  }
}

constexpr std::array<ua::BuiltinType, 0> kNoInputs{};
constexpr std::array<ua::BuiltinType, 2> kCommentInputs{ua::BuiltinType::ByteString,
                                                        ua::BuiltinType::LocalizedText};
constexpr std::array<ua::BuiltinType, 2> kRefresh2Inputs{ua::BuiltinType::UInt32, ua::BuiltinType::UInt32};

// Enable, Disable, AddComment, Acknowledge, Confirm on condition `object`.
ua::StatusCode run_condition_method(Server& server, Call& call, const NodeStore& store, NodeIndex object,
                                    alarm::Method which, const std::vector<ua::Variant>& in) {
  // Part 9 §5.5.4, §5.7.3: called on the type node instead of a condition: BadNodeIdInvalid.
  const addressspace::ConditionSpecs* specs = store.condition_specs();
  const addressspace::ConditionSpec* spec = specs ? specs->find(object) : nullptr;
  if (!spec) return status::BadNodeIdInvalid;
  alarm::MethodCall mc;
  mc.method = which;
  if (in.size() == 2) {
    mc.event_id = in[0].get_if<ua::ByteString>();
    mc.comment = in[1].get_if<ua::LocalizedText>();
  }
  mc.user = call.session->user;
  mc.roles = call.session->access.roles;
  alarm::Outcome out;
  const ua::StatusCode result = alarm::call(store, server.space().values(), *call.shard.participant, *spec,
                                            mc, ua::DateTime::now(), out);
  if (result.is_good()) server.deliver_alarm(&call.shard, *spec, out);
  return result;
}

// ConditionRefresh (Part 9 §5.5.7) and ConditionRefresh2 (§5.5.8): a RefreshStartEvent, the retained
// conditions' current states (with the EventIds of their last events) and a RefreshEndEvent, queued into
// the subscription's event items (ConditionRefresh2: the one item) in one go, so no refresh of this
// server is ever still in progress when the call returns. A condition is queued into an item when the
// item's notifier is one of the condition's, the item's where clause passes it and the session may
// receive it (access_control::may_receive_event), as for the condition's live events.
ua::StatusCode run_refresh(Server& server, Call& call, const NodeStore& store, bool one_item,
                           const std::vector<ua::Variant>& in) {
  ua::StatusCode refused = status::Good;
  Subscription* sub = own_subscription(server, *call.session, *in[0].get_if<uint32_t>(), refused);
  if (!sub) return refused;
  ShardState& shard = call.shard;
  see_store(shard, server.space());  // the items' notifiers are NodeIndexes of the current store
  std::vector<MonitoredItem*> items;
  const uint32_t wanted = one_item ? *in[1].get_if<uint32_t>() : 0;
  bool found = false;
  sub->for_each_item([&](MonitoredItem& item) {
    if (one_item && item.id != wanted) return;
    if (item.is_event() && item.event()) {
      found = true;
      if (item.mode() != ua::MonitoringMode::Disabled) items.push_back(&item);
    }
  });
  // Part 9 §5.5.8: an unknown item, or one that is no event item, is BadMonitoredItemIdInvalid.
  if (one_item && !found) return status::BadMonitoredItemIdInvalid;
  if (!one_item && !found) return status::BadNothingToDo;
  const NodeIndex server_object = store.find(ua::NodeId(0, ua::id::Server));
  auto bracket = [&](uint32_t type) -> std::shared_ptr<const EventRecord> {
    EventBuilder b(store, ua::NodeId(0, type), server_object);
    if (!b.valid()) return nullptr;
    b.readers(0);
    return b.build();
  };
  const auto start = bracket(ua::id::RefreshStartEventType);
  const auto end = bracket(ua::id::RefreshEndEventType);
  if (start) {
    for (MonitoredItem* item : items) server.queue_event(shard, *item, *start, true);
  }
  if (const addressspace::ConditionSpecs* specs = store.condition_specs()) {
    for (const addressspace::ConditionSpec& spec : specs->all()) {
      const auto event = alarm::refresh_event(store, spec);
      if (!event ||
          !access_control::may_receive_event(store, event->source(), event->readers(), call.session->access))
        continue;
      const auto notifiers = event->notifiers();
      for (MonitoredItem* item : items) {
        if (std::binary_search(notifiers.begin(), notifiers.end(), item->event()->notifier))
          server.queue_event(shard, *item, *event, false);
      }
    }
  }
  if (end) {
    for (MonitoredItem* item : items) server.queue_event(shard, *item, *end, true);
  }
  return status::Good;
}

ua::CallMethodResult call_method(Server& server, Call& call, const NodeStore& store,
                                 const ua::CallMethodRequest& m) {
  ua::CallMethodResult r;
  const NodeIndex object = store.find(m.object_id);
  if (object == addressspace::kNoNode) {
    r.status_code = status::BadNodeIdUnknown;
    return r;
  }
  const auto object_class = store.node_class(object);
  if (object_class != addressspace::NodeClass::Object &&
      object_class != addressspace::NodeClass::ObjectType) {
    r.status_code = status::BadNodeIdInvalid;
    return r;
  }
  alarm::Method which = alarm::Method::Enable;
  const ConditionMethod condition = condition_method(m.method_id, which);
  // ConditionRefresh is ConditionType's (Part 9 §5.5.7); clients also call it on the Server object, which
  // is accepted.
  const bool refresh_on_server =
      (condition == ConditionMethod::Refresh || condition == ConditionMethod::Refresh2) &&
      m.object_id.is_ns0(ua::id::Server);
  const NodeIndex method = store.find(m.method_id);
  if (method == addressspace::kNoNode || store.node_class(method) != addressspace::NodeClass::Method ||
      (!refresh_on_server && !belongs_to(store, object, method))) {
    r.status_code = status::BadMethodInvalid;
    return r;
  }
  if (!store.has_flag(method, addressspace::flag::kExecutable)) {
    r.status_code = status::BadNotExecutable;
    return r;
  }
  if (!access_control::user_executable(store, method, call.session->access)) {
    r.status_code = status::BadUserAccessDenied;
    return r;
  }
  if (condition != ConditionMethod::None) {
    const std::span<const ua::BuiltinType> inputs =
        condition == ConditionMethod::Refresh    ? std::span<const ua::BuiltinType>(kSubscriptionIdInput)
        : condition == ConditionMethod::Refresh2 ? std::span<const ua::BuiltinType>(kRefresh2Inputs)
        : which == alarm::Method::Enable || which == alarm::Method::Disable
            ? std::span<const ua::BuiltinType>(kNoInputs)
            : std::span<const ua::BuiltinType>(kCommentInputs);
    r.status_code = check_arguments(inputs, m.input_arguments, r);
    if (!r.status_code.is_good()) return r;
    if (condition == ConditionMethod::Instance) {
      // Part 9 §5.5.4: the instance methods are not called on the ConditionType node (BadNodeIdInvalid).
      r.status_code = object_class == addressspace::NodeClass::ObjectType
                          ? status::BadNodeIdInvalid
                          : run_condition_method(server, call, store, object, which, m.input_arguments);
    } else {
      r.status_code =
          run_refresh(server, call, store, condition == ConditionMethod::Refresh2, m.input_arguments);
    }
    return r;
  }
  const MethodImpl* impl = find_method(m.object_id, m.method_id);
  if (!impl) {
    r.status_code = status::BadNotImplemented;
    return r;
  }
  r.status_code = check_arguments(impl->inputs, m.input_arguments, r);
  if (r.status_code.is_good()) r.status_code = impl->run(server, call, m.input_arguments, r.output_arguments);
  return r;
}

}  // namespace

void handle_call(Server& server, Call& call, ua::Decoder& body) {
  const uint32_t limit = server.config().limits.operations.max_nodes_per_method_call;
  if (!precheck_operation_count(call, body, {}, limit)) return;
  ua::CallRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.methods_to_call.size(), limit)) return;
  const auto& store = *server.space().current();
  ua::CallResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.reserve(req.methods_to_call.size());
  for (const auto& m : req.methods_to_call) {
    resp.results.push_back(call_method(server, call, store, m));
    if (server.auditing()) {  // AuditUpdateMethodEventType (Part 5 §6.4.27), refused calls too
      server.raise_event(audit::method_call(
          {store, server.config().application_uri, req.request_header.audit_entry_id.view()}, *call.session,
          store.find(m.object_id), m.method_id, m.input_arguments, resp.results.back().status_code));
    }
  }
  call.send(resp);
}

}  // namespace opcuad::services
