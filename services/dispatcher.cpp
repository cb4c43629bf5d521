#include "services/dispatcher.hpp"

#include <iterator>

namespace opcuad::services {

namespace status = ua::status;

namespace {

constexpr ServiceEntry kEntries[] = {
    {ua::GetEndpointsRequest::binary_encoding_id, Needs::Nothing, handle_get_endpoints, "GetEndpoints"},
    {ua::FindServersRequest::binary_encoding_id, Needs::Nothing, handle_find_servers, "FindServers"},
    {ua::CreateSessionRequest::binary_encoding_id, Needs::Nothing, handle_create_session, "CreateSession"},
    {ua::ActivateSessionRequest::binary_encoding_id, Needs::Session, handle_activate_session,
     "ActivateSession"},
    {ua::CloseSessionRequest::binary_encoding_id, Needs::Session, handle_close_session, "CloseSession"},
    {ua::CancelRequest::binary_encoding_id, Needs::ActivatedSession, handle_cancel, "Cancel"},
    {ua::ReadRequest::binary_encoding_id, Needs::ActivatedSession, handle_read, "Read"},
    {ua::WriteRequest::binary_encoding_id, Needs::ActivatedSession, handle_write, "Write"},
    {ua::BrowseRequest::binary_encoding_id, Needs::ActivatedSession, handle_browse, "Browse"},
    {ua::BrowseNextRequest::binary_encoding_id, Needs::ActivatedSession, handle_browse_next, "BrowseNext"},
    {ua::TranslateBrowsePathsToNodeIdsRequest::binary_encoding_id, Needs::ActivatedSession, handle_translate,
     "TranslateBrowsePathsToNodeIds"},
    {ua::RegisterNodesRequest::binary_encoding_id, Needs::ActivatedSession, handle_register_nodes,
     "RegisterNodes"},
    {ua::UnregisterNodesRequest::binary_encoding_id, Needs::ActivatedSession, handle_unregister_nodes,
     "UnregisterNodes"},
    {ua::CallRequest::binary_encoding_id, Needs::ActivatedSession, handle_call, "Call"},
    {ua::CreateSubscriptionRequest::binary_encoding_id, Needs::ActivatedSession, handle_create_subscription,
     "CreateSubscription"},
    {ua::ModifySubscriptionRequest::binary_encoding_id, Needs::ActivatedSession, handle_modify_subscription,
     "ModifySubscription"},
    {ua::SetPublishingModeRequest::binary_encoding_id, Needs::ActivatedSession, handle_set_publishing_mode,
     "SetPublishingMode"},
    {ua::DeleteSubscriptionsRequest::binary_encoding_id, Needs::ActivatedSession, handle_delete_subscriptions,
     "DeleteSubscriptions"},
    {ua::TransferSubscriptionsRequest::binary_encoding_id, Needs::ActivatedSession,
     handle_transfer_subscriptions, "TransferSubscriptions"},
    {ua::PublishRequest::binary_encoding_id, Needs::ActivatedSession, handle_publish, "Publish"},
    {ua::RepublishRequest::binary_encoding_id, Needs::ActivatedSession, handle_republish, "Republish"},
    {ua::CreateMonitoredItemsRequest::binary_encoding_id, Needs::ActivatedSession,
     handle_create_monitored_items, "CreateMonitoredItems"},
    {ua::ModifyMonitoredItemsRequest::binary_encoding_id, Needs::ActivatedSession,
     handle_modify_monitored_items, "ModifyMonitoredItems"},
    {ua::DeleteMonitoredItemsRequest::binary_encoding_id, Needs::ActivatedSession,
     handle_delete_monitored_items, "DeleteMonitoredItems"},
    {ua::SetMonitoringModeRequest::binary_encoding_id, Needs::ActivatedSession, handle_set_monitoring_mode,
     "SetMonitoringMode"},
    {ua::SetTriggeringRequest::binary_encoding_id, Needs::ActivatedSession, handle_set_triggering,
     "SetTriggering"},
};

static_assert(std::size(kEntries) <= kMaxServices, "ServiceStats has a slot per dispatch-table row");

}  // namespace

const ServiceEntry* Dispatcher::find(uint32_t type_id) noexcept {
  for (const ServiceEntry& e : kEntries) {
    if (e.type_id == type_id) return &e;
  }
  return nullptr;
}

size_t Dispatcher::service_count() noexcept {
  return std::size(kEntries);
}

std::string_view Dispatcher::service_name(size_t i) noexcept {
  return i < std::size(kEntries) ? kEntries[i].name : "";
}

void Dispatcher::dispatch(const ServiceEntry& entry, ShardState& shard, transport::SecureChannel& channel,
                          const transport::RequestContext& ctx, ua::Decoder& body) {
  const transport::TransportStats& transport_stats = channel.stats();
  const uint64_t faults_before = transport::TransportStats::get(transport_stats.service_faults);
  const auto start = std::chrono::steady_clock::now();
  see_store(shard, space_);
  Session* session = serve(entry, channel, ctx, shard, body, start);
  const auto took = std::chrono::steady_clock::now() - start;
  const auto service = static_cast<size_t>(&entry - kEntries);
  stat_add(shard.stats.requests[service]);
  const bool faulted = transport::TransportStats::get(transport_stats.service_faults) != faults_before;
  if (faulted) stat_add(shard.stats.faults[service]);
  // The session's own counters (Part 5 §12.11): plain increments on the session just used.
  if (session) session->counters.count(service, faulted);
  shard.stats.request_latency.record(took);
  stat_add(shard.stats.busy_ns, static_cast<uint64_t>(std::chrono::nanoseconds(took).count()));
}

Session* Dispatcher::serve(const ServiceEntry& entry, transport::SecureChannel& channel,
                           const transport::RequestContext& ctx, ShardState& shard, ua::Decoder& body,
                           std::chrono::steady_clock::time_point now) {
  // Every request starts with its RequestHeader (Part 4 §7.33): decoded here, once, into the shard's
  // reused one (a warm header allocates nothing); the handler's decode_request() takes it over.
  ua::RequestHeader& header = shard.request_header;
  header.request_handle = 0;
  ua::decode(body, header);
  Call call{channel, ctx.request_id, shard, nullptr, &header, header.request_handle};
  if (!body.ok()) {
    call.fault(decoding_fault(body));
    return nullptr;
  }
  if (entry.needs != Needs::Nothing) {
    auto it = shard.sessions.find(header.authentication_token);
    if (it == shard.sessions.end()) {
      if (entry.handler == handle_activate_session) {
        // Maybe the session lives on another shard: its client reconnected on a channel of this one.
        ua::ActivateSessionRequest request;
        call.take_header(request.request_header);
        ua::decode_after_header(body, request);
        if (!body.ok()) {
          refuse_session(shard, channel, ctx.request_id, call.request_handle, status::BadDecodingError);
        } else {
          move_and_activate(server_, channel, ctx.request_id, shard, std::move(request));
        }
        return nullptr;
      }
      call.fault(status::BadSessionIdInvalid);
      return nullptr;
    }
    Session& s = *it->second;
    if (entry.needs == Needs::ActivatedSession && !s.activated) {
      ++s.counters.unauthorized;
      call.fault(status::BadSessionNotActivated);
      return nullptr;
    }
    // The authentication token is bound to the secure channel the session was created or last activated
    // on: every request but ActivateSession (which rebinds it) must come there, CloseSession included
    // (Part 4 §5.6.3, §5.6.4).
    if (entry.handler != handle_activate_session && s.channel_id != channel.id()) {
      ++s.counters.unauthorized;
      call.fault(status::BadSecureChannelIdInvalid);
      return nullptr;
    }
    s.last_activity = now;
    call.session = &s;
  }
  entry.handler(server_, call, body);
  // Every handler but CloseSession leaves its session in place (a parked one keeps its address); the
  // asynchronous halves (a login check, a move to another shard) look it up again when they finish.
  return entry.handler == handle_close_session ? nullptr : call.session;
}

}  // namespace opcuad::services
