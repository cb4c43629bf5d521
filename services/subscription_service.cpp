// Subscription service set (Part 4 §5.13): CreateSubscription, ModifySubscription, SetPublishingMode,
// DeleteSubscriptions, Publish, Republish. The state machine itself is in subscription.cpp.
#include <atomic>

#include "services/request.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;

// Subscription ids are unique in the process, so TransferSubscriptions can find any of them (through
// Server::subscription_shard()).
std::atomic<uint32_t> g_next_subscription_id{1};

Subscription* find_subscription(Session& session, uint32_t id) {
  auto it = session.subscriptions.find(id);
  return it == session.subscriptions.end() ? nullptr : it->second.get();
}

}  // namespace

void handle_create_subscription(Server& server, Call& call, ua::Decoder& body) {
  ua::CreateSubscriptionRequest req;
  if (!decode_request(call, body, req)) return;
  if (!server.reserve_subscription()) {
    return call.channel.send_fault(call.request_id, req.request_header.request_handle, status::BadTooManySubscriptions);
  }
  const auto params = Subscription::revise(req.requested_publishing_interval, req.requested_lifetime_count,
                                           req.requested_max_keep_alive_count, req.max_notifications_per_publish,
                                           req.priority);
  uint32_t id = g_next_subscription_id.fetch_add(1, std::memory_order_relaxed);
  if (id == 0) id = g_next_subscription_id.fetch_add(1, std::memory_order_relaxed);  // 0 is never an id
  auto sub = std::make_shared<Subscription>(server, call.shard, *call.session, id, params, req.publishing_enabled);
  call.session->subscriptions.emplace(id, sub);
  sub->start();
  ua::CreateSubscriptionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.subscription_id = id;
  resp.revised_publishing_interval = params.publishing_interval_ms;
  resp.revised_lifetime_count = params.lifetime_count;
  resp.revised_max_keep_alive_count = params.max_keep_alive_count;
  call.channel.send(call.request_id, resp);
}

void handle_modify_subscription(Server& server, Call& call, ua::Decoder& body) {
  ua::ModifySubscriptionRequest req;
  if (!decode_request(call, body, req)) return;
  Subscription* sub = find_subscription(*call.session, req.subscription_id);
  if (!sub) {
    return call.channel.send_fault(call.request_id, req.request_header.request_handle, status::BadSubscriptionIdInvalid);
  }
  const auto params = Subscription::revise(req.requested_publishing_interval, req.requested_lifetime_count,
                                           req.requested_max_keep_alive_count, req.max_notifications_per_publish,
                                           req.priority);
  sub->modify(params);
  follow_publishing_interval(server, *sub);
  ua::ModifySubscriptionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.revised_publishing_interval = params.publishing_interval_ms;
  resp.revised_lifetime_count = params.lifetime_count;
  resp.revised_max_keep_alive_count = params.max_keep_alive_count;
  call.channel.send(call.request_id, resp);
}

void handle_set_publishing_mode(Server&, Call& call, ua::Decoder& body) {
  ua::SetPublishingModeRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.request_header, req.subscription_ids.size(), 0)) return;
  ua::SetPublishingModeResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.reserve(req.subscription_ids.size());
  for (uint32_t id : req.subscription_ids) {
    Subscription* sub = find_subscription(*call.session, id);
    if (sub) sub->set_publishing_enabled(req.publishing_enabled);
    resp.results.push_back(sub ? status::Good : status::BadSubscriptionIdInvalid);
  }
  call.channel.send(call.request_id, resp);
}

void handle_delete_subscriptions(Server&, Call& call, ua::Decoder& body) {
  ua::DeleteSubscriptionsRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.request_header, req.subscription_ids.size(), 0)) return;
  Session& session = *call.session;
  ua::DeleteSubscriptionsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.reserve(req.subscription_ids.size());
  for (uint32_t id : req.subscription_ids) {
    resp.results.push_back(session.subscriptions.erase(id) ? status::Good : status::BadSubscriptionIdInvalid);
  }
  call.channel.send(call.request_id, resp);
  drop_idle_publishes(session);
}

void handle_publish(Server&, Call& call, ua::Decoder& body) {
  // Decoded into the same object every time, so its acknowledgement array keeps its capacity.
  thread_local ua::PublishRequest req;
  if (!decode_request(call, body, req)) return;
  Session& session = *call.session;
  if (session.subscriptions.empty() && session.status_changes.empty()) {
    return call.channel.send_fault(call.request_id, req.request_header.request_handle, status::BadNoSubscription,
                                   publish_stream(session));
  }
  PendingPublish pending;
  pending.channel = call.channel.weak_from_this();
  pending.request_id = call.request_id;
  pending.request_handle = req.request_header.request_handle;
  if (req.request_header.timeout_hint > 0) {
    pending.expires = std::chrono::steady_clock::now() + std::chrono::milliseconds(req.request_header.timeout_hint);
  }
  // Acknowledgements are processed when the request arrives (Part 4 §5.13.5.2), one result each.
  for (const auto& ack : req.subscription_acknowledgements) {
    Subscription* sub = find_subscription(session, ack.subscription_id);
    pending.ack_results.push_back(sub ? sub->acknowledge(ack.sequence_number) : status::BadSubscriptionIdInvalid);
  }
  enqueue_publish(session, std::move(pending));
}

void handle_republish(Server&, Call& call, ua::Decoder& body) {
  ua::RepublishRequest req;
  if (!decode_request(call, body, req)) return;
  Subscription* sub = find_subscription(*call.session, req.subscription_id);
  std::span<const uint8_t> message;
  ua::StatusCode s =
      sub ? sub->republish(req.retransmit_sequence_number, message) : status::BadSubscriptionIdInvalid;
  if (!s.is_good()) return call.channel.send_fault(call.request_id, req.request_header.request_handle, s);
  // RepublishResponse {ResponseHeader, NotificationMessage}: the message goes out as it was first encoded.
  ua::ByteBuffer buf = call.channel.acquire_buffer();
  ua::Encoder e(buf);
  ua::encode(e, ua::NodeId(0, ua::RepublishResponse::binary_encoding_id));
  ua::encode(e, response_header(req.request_header));
  e.write_raw(message.data(), message.size());
  call.channel.send_response(call.request_id, std::move(buf));
}

}  // namespace opcuad::services
