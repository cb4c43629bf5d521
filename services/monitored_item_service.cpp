// MonitoredItem service set (Part 4 §5.12): CreateMonitoredItems, ModifyMonitoredItems,
// DeleteMonitoredItems, SetMonitoringMode, SetTriggering. Validation and revision live here; sampling,
// filtering and queueing in monitored_item.cpp, the sampling clock in sampler.cpp.
#include <algorithm>
#include <cmath>

#include "addressspace/attributes.hpp"
#include "addressspace/eu_range.hpp"
#include "addressspace/event_types.hpp"
#include "services/attribute_read.hpp"
#include "services/handlers.hpp"
#include "services/publish_queue.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "services/subscription.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using addressspace::NodeIndex;
using addressspace::NodeStore;

using addressspace::attr::kEventNotifier;
using addressspace::attr::kValue;

// Part 4 §5.12.1.2: -1 (any negative) means the subscription's publishing interval; never faster than
// the node's MinimumSamplingInterval, the configured minimum or the engine's fastest rate. 0 asks for
// exception-based sampling: granted for the Value of a Variable whose cell only the Write service
// changes (Server::wakes_on_write) when nothing sets a floor (the node's MinimumSamplingInterval 0
// allows it, Part 3 §5.6.2) and this shard has a CellWatch bit; writes then wake the item (Sampler,
// CellWatch). Other attributes never change through writes and get the fastest rate. Whole
// milliseconds, so clients asking for near-equal rates share one Sampler group.
double revise_sampling_interval(const Server& server, const Subscription& sub, const NodeStore& store,
                                NodeIndex n, uint32_t attribute_id, double requested, bool exception_based) {
  double v = requested;
  if (v != v || v < 0) v = sub.parameters().publishing_interval_ms;
  const auto* var = store.variable(n);
  const double configured = server.config().limits.min_sampling_interval_ms;
  if (v == 0 && exception_based && attribute_id == kValue && var &&
      server.wakes_on_write(store.node_id(n), var->cell) && !(var->minimum_sampling_interval > 0) &&
      !(configured > 0)) {
    return 0;
  }
  double floor = std::max(kFastestSamplingIntervalMs, configured);
  if (var && attribute_id == kValue) floor = std::max(floor, var->minimum_sampling_interval);
  return std::min(std::ceil(std::max(v, floor)), kSlowestSamplingIntervalMs);
}

bool follows_publishing(double requested) {
  return requested != requested || requested < 0;
}

// Part 4 §5.12.2: queueSize is revised into [1, the configured maximum] (MaxMonitoredItemsQueueSize).
uint32_t revise_queue_size(const Server& server, uint32_t requested) {
  const uint32_t limit =
      std::clamp<uint32_t>(server.config().limits.max_monitored_item_queue_size, 1, kMaxQueueSize);
  return std::clamp<uint32_t>(requested, 1, limit);
}

// Part 4 §5.12.1.5 for event items: 0 asks for the server's default event queue
// (limits.default_event_queue_size), anything else is revised into [1, limits.max_event_queue_size].
uint32_t revise_event_queue_size(const Server& server, uint32_t requested) {
  const auto& l = server.config().limits;
  const uint32_t limit = std::clamp<uint32_t>(l.max_event_queue_size, 1, kMaxQueueSize);
  if (requested == 0) return std::clamp<uint32_t>(l.default_event_queue_size, 1, limit);
  return std::clamp<uint32_t>(requested, 1, limit);
}

// The filter of an event item (Part 4 §7.22.3): an EventFilter, or none (the default select list).
// Any other MonitoringFilter is BadFilterNotAllowed for the EventNotifier attribute (Part 4 §5.12.2);
// what decodes as no MonitoringFilter, BadMonitoredItemFilterInvalid. On success `state` holds the
// compiled filter; on failure it is unchanged (ModifyMonitoredItems keeps the old filter).
ua::StatusCode parse_event_filter(const NodeStore& store, const ua::ExtensionObject& in,
                                  EventItemState& state, ua::ExtensionObject& result) {
  const ua::EventFilter* f = nullptr;
  if (!in.is_empty()) {
    f = in.get<ua::EventFilter>();
    if (!f) {
      return in.get<ua::DataChangeFilter>() || in.get<ua::AggregateFilter>()
                 ? status::BadFilterNotAllowed
                 : status::BadMonitoredItemFilterInvalid;
    }
  }
  ua::EventFilterResult r;
  const ua::StatusCode s = state.compile(f, store, r);
  if (!r.select_clause_results.empty() || !r.where_clause_result.element_results.empty()) {
    result = ua::ExtensionObject::make(std::move(r));
  }
  return s;
}

// How many more items a CreateMonitoredItems request may add to its subscription and session (the
// limits max_monitored_items_per_subscription / _per_session; 0: only the server-wide limit bounds them).
struct ItemRoom {
  uint64_t subscription = UINT64_MAX;
  uint64_t session = UINT64_MAX;
  bool take() noexcept {
    if (subscription == 0 || session == 0) return false;
    --subscription;
    --session;
    return true;
  }
};

ItemRoom item_room(const Server& server, const Session& session, const Subscription& sub) {
  const auto& limits = server.config().limits;
  ItemRoom room;
  if (const uint32_t l = limits.max_monitored_items_per_subscription) {
    room.subscription = l > sub.item_count() ? l - sub.item_count() : 0;
  }
  if (const uint32_t l = limits.max_monitored_items_per_session) {
    uint64_t held = 0;  // one pass over the session's subscriptions per request, not per item
    for (const auto& [id, s] : session.subscriptions) held += s->item_count();
    room.session = l > held ? l - held : 0;
  }
  return room;
}

// Part 4 §7.22: the filter of one item, checked against its node.
ua::StatusCode parse_filter(const NodeStore& store, NodeIndex n, uint32_t attribute_id,
                            const ua::ExtensionObject& in, ChangeFilter& out) {
  out = ChangeFilter{};
  if (in.is_empty()) return status::Good;
  // An EventFilter is for the EventNotifier attribute only (Part 4 §7.22.3).
  if (in.get<ua::EventFilter>()) return status::BadFilterNotAllowed;
  if (in.get<ua::AggregateFilter>()) return status::BadMonitoredItemFilterUnsupported;  // no aggregates
  const auto* f = in.get<ua::DataChangeFilter>();
  if (!f) return status::BadMonitoredItemFilterInvalid;
  if (attribute_id != kValue) return status::BadFilterNotAllowed;  // data change filters are for Value
  if (static_cast<uint32_t>(f->trigger) > 2) return status::BadMonitoredItemFilterInvalid;
  if (f->deadband_type > 2) return status::BadDeadbandFilterInvalid;
  out.trigger = f->trigger;
  out.deadband = static_cast<ua::DeadbandType>(f->deadband_type);
  out.deadband_value = f->deadband_value;
  if (out.deadband == ua::DeadbandType::None) return status::Good;
  // A deadband needs a numeric variable (Part 4 §7.22.2).
  const auto* var = store.variable(n);
  const NodeIndex number = store.find(ua::NodeId(0, ua::id::Number));
  if (!var || !store.is_data_type_subtype(var->data_type, number)) return status::BadFilterNotAllowed;
  if (!(f->deadband_value >= 0)) return status::BadDeadbandFilterInvalid;  // negative or NaN
  if (out.deadband == ua::DeadbandType::Absolute) {
    out.absolute = f->deadband_value;
    return status::Good;
  }
  // Percent of the EURange (Part 8 §6.2): only for a variable with an EURange property.
  if (f->deadband_value > 100) return status::BadDeadbandFilterInvalid;
  const std::optional<ua::Range> range = addressspace::eu_range(store, n);
  if (!range) return status::BadDeadbandFilterInvalid;
  out.absolute = f->deadband_value / 100.0 * (range->high - range->low);
  return status::Good;
}

bool valid_mode(ua::MonitoringMode m) {
  return static_cast<uint32_t>(m) <= 2;
}

ua::StatusCode check_item_to_monitor(const NodeStore& store, const ua::ReadValueId& rv,
                                     const UserAccess& user, NodeIndex& n, std::optional<IndexRange>& range) {
  n = store.find(rv.node_id);
  if (n == addressspace::kNoNode) return status::BadNodeIdUnknown;
  if (!has_attribute(store.node_class(n), rv.attribute_id)) return status::BadAttributeIdInvalid;
  bool ok = true;
  range = IndexRange::parse(rv.index_range.view(), ok);
  if (!ok) return status::BadIndexRangeInvalid;
  if (!rv.data_encoding.name.empty() || rv.data_encoding.namespace_index != 0) {
    if (rv.attribute_id != kValue) return status::BadDataEncodingInvalid;
    if (rv.data_encoding.namespace_index != 0 || rv.data_encoding.name.view() != "Default Binary") {
      return status::BadDataEncodingUnsupported;
    }
  }
  if (rv.attribute_id == kValue && store.node_class(n) == addressspace::NodeClass::Variable) {
    const auto* var = store.variable(n);
    if (!(var->access_level & addressspace::access::kCurrentRead)) return status::BadNotReadable;
    // The session's roles (read_roles, Part 3 §4.8), as Read checks them.
    if (!access_control::may_read_value(store, n, *var, user)) return status::BadUserAccessDenied;
  }
  return status::Good;
}

// An event item (Part 4 §5.12.1.1: an Object or View, AttributeId EventNotifier). Its node must be a
// notifier, i.e. have SubscribeToEvents in its EventNotifier (Part 3 §5.5.1); Part 4 §5.12.2 names no
// code for one that is not, and the attribute itself exists, so BadNotSupported. Events are pushed, not
// sampled: revisedSamplingInterval 0, and the item is not in the Sampler but in its shard's index of
// event items by notifier (shard.hpp).
void create_event_item(Server& server, Subscription& sub, const NodeStore& store, NodeIndex n,
                       const ua::MonitoredItemCreateRequest& in, ItemRoom& room,
                       ua::MonitoredItemCreateResult& out) {
  const auto& params = in.requested_parameters;
  const addressspace::EventTypes* types = store.event_types();
  if (!types || !types->is_notifier(n)) {
    out.status_code = status::BadNotSupported;
    return;
  }
  auto state = std::make_unique<EventItemState>();
  out.status_code = parse_event_filter(store, params.filter, *state, out.filter_result);
  if (!out.status_code.is_good()) return;
  ItemRoom left = room;
  if (!left.take() || !server.subscriptions().reserve_monitored_item()) {
    out.status_code = status::BadTooManyMonitoredItems;
    out.filter_result = {};
    return;
  }
  room = left;
  state->notifier = n;
  MonitoredItem item;
  item.set_node_id(in.item_to_monitor.node_id);
  item.attribute_id = static_cast<uint8_t>(kEventNotifier);
  item.client_handle = params.client_handle;
  item.set_mode_value(in.monitoring_mode);
  item.sampling_interval_ms = 0;
  item.set_event(std::move(state));
  item.configure_queue(revise_event_queue_size(server, params.queue_size), params.discard_oldest);
  MonitoredItem& added = sub.add_item(std::move(item));
  index_event_item(*sub.shard(), added, store);
  out.monitored_item_id = added.id;
  out.revised_sampling_interval = 0;
  out.revised_queue_size = added.queue_capacity();
}

void create_one(Server& server, Subscription& sub, const NodeStore& store,
                const ua::MonitoredItemCreateRequest& in, ua::TimestampsToReturn timestamps,
                bool exception_based, ItemRoom& room, ua::MonitoredItemCreateResult& out) {
  NodeIndex n = addressspace::kNoNode;
  std::optional<IndexRange> range;
  out.status_code =
      check_item_to_monitor(store, in.item_to_monitor,
                            sub.session() ? sub.session()->access : UserAccess{0, false, nullptr}, n, range);
  if (!out.status_code.is_good()) return;
  if (!valid_mode(in.monitoring_mode)) {
    out.status_code = status::BadMonitoringModeInvalid;
    return;
  }
  const auto& params = in.requested_parameters;
  if (in.item_to_monitor.attribute_id == kEventNotifier) {
    return create_event_item(server, sub, store, n, in, room, out);
  }
  ChangeFilter filter;
  out.status_code = parse_filter(store, n, in.item_to_monitor.attribute_id, params.filter, filter);
  if (!out.status_code.is_good()) return;
  // Part 4 §5.12.2: beyond the subscription's, the session's or the server's limit, BadTooManyMonitoredItems.
  ItemRoom left = room;
  if (!left.take() || !server.subscriptions().reserve_monitored_item()) {
    out.status_code = status::BadTooManyMonitoredItems;
    return;
  }
  room = left;
  MonitoredItem item;
  item.set_filter(filter);
  item.set_node_id(in.item_to_monitor.node_id);
  // has_attribute() accepted it: attribute ids are small (Part 6 §A.1).
  item.attribute_id = static_cast<uint8_t>(in.item_to_monitor.attribute_id);
  item.set_range(std::move(range));
  if (item.attribute_id == kValue) {
    if (const auto* var = store.variable(n)) item.cell = var->cell;
    // A diagnostics array (Part 5 §8.2.10) samples through the reader's filter (diagnostics.hpp).
    item.session_scoped = store.has_flag(n, addressspace::flag::kSessionScoped);
  }
  item.client_handle = params.client_handle;
  item.set_mode_value(in.monitoring_mode);
  item.set_timestamps(timestamps);
  item.sampling_interval_ms = static_cast<uint32_t>(revise_sampling_interval(
      server, sub, store, n, item.attribute_id, params.sampling_interval, exception_based));
  item.follows_publishing = follows_publishing(params.sampling_interval);
  item.configure_queue(revise_queue_size(server, params.queue_size), params.discard_oldest);
  MonitoredItem& added = sub.add_item(std::move(item));
  out.monitored_item_id = added.id;
  out.revised_sampling_interval = added.sampling_interval_ms;
  out.revised_queue_size = added.queue_capacity();
}

void modify_one(Server& server, Subscription& sub, const NodeStore& store,
                const ua::MonitoredItemModifyRequest& in, ua::TimestampsToReturn timestamps,
                bool exception_based, ua::MonitoredItemModifyResult& out) {
  MonitoredItem* item = sub.item(in.monitored_item_id);
  if (!item) {
    out.status_code = status::BadMonitoredItemIdInvalid;
    return;
  }
  const NodeIndex n = store.find(item->node_id());
  if (n == addressspace::kNoNode) {
    out.status_code = status::BadNodeIdUnknown;
    return;
  }
  const auto& params = in.requested_parameters;
  if (item->is_event()) {
    // A new filter replaces the old one only when it compiles (Part 4 §5.12.3 leaves the failed case to
    // the server: the item keeps working as it was).
    EventItemState& ev = item->make_event();
    if (!store.event_types()) {
      out.status_code = status::BadNotSupported;
      return;
    }
    out.status_code = parse_event_filter(store, params.filter, ev, out.filter_result);
    if (!out.status_code.is_good()) return;
    // Compiled against the current store: the item is indexed by its notifier there.
    unindex_event_item(*sub.shard(), *item);
    ev.notifier = n;
    if (!store.event_types()->is_notifier(n)) ev.notifier = addressspace::kNoNode;
    index_event_item(*sub.shard(), *item, store);
    item->client_handle = params.client_handle;
    item->configure_queue(revise_event_queue_size(server, params.queue_size), params.discard_oldest);
    out.revised_sampling_interval = 0;
    out.revised_queue_size = item->queue_capacity();
    return;
  }
  ChangeFilter filter;
  out.status_code = parse_filter(store, n, item->attribute_id, params.filter, filter);
  if (!out.status_code.is_good()) return;
  item->set_filter(filter);
  item->client_handle = params.client_handle;
  // Before the queue is reconfigured: a value moving from a queue of one into a longer one takes the
  // new TimestampsToReturn, like every later value (queued values keep the ones they were queued with).
  item->set_timestamps(timestamps);
  item->configure_queue(revise_queue_size(server, params.queue_size), params.discard_oldest);
  const auto interval = static_cast<uint32_t>(revise_sampling_interval(
      server, sub, store, n, item->attribute_id, params.sampling_interval, exception_based));
  item->follows_publishing = follows_publishing(params.sampling_interval);
  if (interval != item->sampling_interval_ms) {
    item->sampling_interval_ms = interval;
    sub.resample(*item);
  }
  out.revised_sampling_interval = item->sampling_interval_ms;
  out.revised_queue_size = item->queue_capacity();
}

// The request-level checks every service of this set starts with; answers the fault itself.
template <class Req>
Subscription* subscription_for(Call& call, const Req& req) {
  Subscription* sub = find_subscription(*call.session, req.subscription_id);
  if (!sub) {
    call.fault(status::BadSubscriptionIdInvalid);
  }
  return sub;
}

}  // namespace

void follow_publishing_interval(Server& server, Subscription& sub) {
  const NodeStore& store = *server.space().current();
  sub.for_each_item([&](MonitoredItem& item) {
    if (!item.follows_publishing) return;
    const NodeIndex n = store.find(item.node_id());
    if (n == addressspace::kNoNode) return;
    const auto interval =
        static_cast<uint32_t>(revise_sampling_interval(server, sub, store, n, item.attribute_id, -1, false));
    if (interval == item.sampling_interval_ms) return;
    item.sampling_interval_ms = interval;
    sub.resample(item);
  });
}

void handle_create_monitored_items(Server& server, Call& call, ua::Decoder& body) {
  ua::CreateMonitoredItemsRequest req;
  if (!decode_request(call, body, req)) return;
  const uint32_t limit = server.config().limits.operations.max_monitored_items_per_call;
  if (!check_operation_count(call, req.items_to_create.size(), limit)) return;
  Subscription* sub = subscription_for(call, req);
  if (!sub) return;
  if (static_cast<uint32_t>(req.timestamps_to_return) > 3) {
    return call.fault(status::BadTimestampsToReturnInvalid);
  }
  const NodeStore& store = *server.space().current();
  ua::CreateMonitoredItemsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.resize(req.items_to_create.size());
  ItemRoom room = item_room(server, *call.session, *sub);
  for (size_t i = 0; i < req.items_to_create.size(); ++i) {
    create_one(server, *sub, store, req.items_to_create[i], req.timestamps_to_return,
               call.shard.sampler->exception_based(), room, resp.results[i]);
  }
  call.send(resp);
}

void handle_modify_monitored_items(Server& server, Call& call, ua::Decoder& body) {
  ua::ModifyMonitoredItemsRequest req;
  if (!decode_request(call, body, req)) return;
  const uint32_t limit = server.config().limits.operations.max_monitored_items_per_call;
  if (!check_operation_count(call, req.items_to_modify.size(), limit)) return;
  Subscription* sub = subscription_for(call, req);
  if (!sub) return;
  if (static_cast<uint32_t>(req.timestamps_to_return) > 3) {
    return call.fault(status::BadTimestampsToReturnInvalid);
  }
  const NodeStore& store = *server.space().current();
  ua::ModifyMonitoredItemsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.resize(req.items_to_modify.size());
  for (size_t i = 0; i < req.items_to_modify.size(); ++i) {
    modify_one(server, *sub, store, req.items_to_modify[i], req.timestamps_to_return,
               call.shard.sampler->exception_based(), resp.results[i]);
  }
  call.send(resp);
}

void handle_delete_monitored_items(Server& server, Call& call, ua::Decoder& body) {
  ua::DeleteMonitoredItemsRequest req;
  if (!decode_request(call, body, req)) return;
  const uint32_t limit = server.config().limits.operations.max_monitored_items_per_call;
  if (!check_operation_count(call, req.monitored_item_ids.size(), limit)) return;
  Subscription* sub = subscription_for(call, req);
  if (!sub) return;
  ua::DeleteMonitoredItemsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.reserve(req.monitored_item_ids.size());
  for (uint32_t id : req.monitored_item_ids) {
    resp.results.push_back(sub->remove_item(id) ? status::Good : status::BadMonitoredItemIdInvalid);
  }
  call.send(resp);
}

void handle_set_monitoring_mode(Server& server, Call& call, ua::Decoder& body) {
  ua::SetMonitoringModeRequest req;
  if (!decode_request(call, body, req)) return;
  const uint32_t limit = server.config().limits.operations.max_monitored_items_per_call;
  if (!check_operation_count(call, req.monitored_item_ids.size(), limit)) return;
  Subscription* sub = subscription_for(call, req);
  if (!sub) return;
  if (!valid_mode(req.monitoring_mode)) {
    return call.fault(status::BadMonitoringModeInvalid);
  }
  ua::SetMonitoringModeResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.reserve(req.monitored_item_ids.size());
  for (uint32_t id : req.monitored_item_ids) {
    MonitoredItem* item = sub->item(id);
    if (item) sub->set_mode(*item, req.monitoring_mode);
    resp.results.push_back(item ? status::Good : status::BadMonitoredItemIdInvalid);
  }
  call.send(resp);
}

void handle_set_triggering(Server& server, Call& call, ua::Decoder& body) {
  ua::SetTriggeringRequest req;
  if (!decode_request(call, body, req)) return;
  const uint32_t limit = server.config().limits.operations.max_monitored_items_per_call;
  if (!check_operation_count(call, req.links_to_add.size() + req.links_to_remove.size(), limit)) {
    return;
  }
  Subscription* sub = subscription_for(call, req);
  if (!sub) return;
  MonitoredItem* trigger = sub->item(req.triggering_item_id);
  if (!trigger) {
    return call.fault(status::BadMonitoredItemIdInvalid);
  }
  ua::SetTriggeringResponse resp;
  set_response_header(resp.response_header, req.request_header);
  // Part 4 §5.12.5: removals are applied before additions. The links are a set: each operation is O(1),
  // however many links the item has.
  std::unordered_set<uint32_t>& links = trigger->triggered_links();
  resp.remove_results.reserve(req.links_to_remove.size());
  for (uint32_t id : req.links_to_remove) {
    resp.remove_results.push_back(links.erase(id) ? status::Good : status::BadMonitoredItemIdInvalid);
  }
  resp.add_results.reserve(req.links_to_add.size());
  for (uint32_t id : req.links_to_add) {
    if (!sub->item(id)) {
      resp.add_results.push_back(status::BadMonitoredItemIdInvalid);
      continue;
    }
    links.insert(id);
    resp.add_results.push_back(status::Good);
  }
  trigger->drop_unneeded_extras();
  call.send(resp);
}

}  // namespace opcuad::services
