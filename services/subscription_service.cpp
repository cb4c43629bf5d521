// Subscription service set (Part 4 §5.13): CreateSubscription, ModifySubscription, SetPublishingMode,
// DeleteSubscriptions, Publish, Republish. The state machine itself is in subscription.cpp.
#include <openssl/rand.h>

#include <cstring>

#include "services/handlers.hpp"
#include "services/publish_queue.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "services/subscription.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;

// Subscription ids are unique in the process, so TransferSubscriptions can find any of them (through
// Server::subscription_shard()), and random (OpenSSL's generator), so that a client cannot guess the ids
// of other sessions' subscriptions from its own (Part 4 §5.13.7 lets any session ask for any id).
// Uniqueness is checked against the server's registry; two shards drawing the same id in the same
// microsecond (a 2^-32 chance per pair) is the only gap.
// 0 when OpenSSL's generator fails: the request is refused rather than given a guessable id.
uint32_t new_subscription_id(Server& server, ShardState& shard) {
  for (;;) {
    uint32_t id = 0;
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&id), sizeof id) != 1) return 0;
    if (id != 0 && !shard.subscription_index.count(id) && !server.subscriptions().shard_of(id))
      return id;  // 0 is never an id
  }
}

}  // namespace

void handle_create_subscription(Server& server, Call& call, ua::Decoder& body) {
  ua::CreateSubscriptionRequest req;
  if (!decode_request(call, body, req)) return;
  // Part 4 §5.13.2: beyond the session's limit (MaxSubscriptionsPerSession) or the server's.
  const uint32_t per_session = server.config().limits.max_subscriptions_per_session;
  if ((per_session != 0 && call.session->subscriptions.size() >= per_session) ||
      !server.subscriptions().reserve_subscription()) {
    return call.fault(status::BadTooManySubscriptions);
  }
  const auto params = Subscription::revise(req.requested_publishing_interval, req.requested_lifetime_count,
                                           req.requested_max_keep_alive_count,
                                           req.max_notifications_per_publish, req.priority);
  const uint32_t id = new_subscription_id(server, call.shard);
  if (id == 0) {
    server.subscriptions().release_subscription();
    return call.fault(status::BadInternalError);
  }
  stat_add(call.shard.stats.subscriptions_created);
  auto sub = std::make_shared<Subscription>(server.subscriptions(), call.shard, *call.session, id, params,
                                            req.publishing_enabled);
  call.session->subscriptions.emplace(id, sub);
  sub->start();
  ua::CreateSubscriptionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.subscription_id = id;
  resp.revised_publishing_interval = params.publishing_interval_ms;
  resp.revised_lifetime_count = params.lifetime_count;
  resp.revised_max_keep_alive_count = params.max_keep_alive_count;
  call.send(resp);
}

void handle_modify_subscription(Server& server, Call& call, ua::Decoder& body) {
  ua::ModifySubscriptionRequest req;
  if (!decode_request(call, body, req)) return;
  Subscription* sub = find_subscription(*call.session, req.subscription_id);
  if (!sub) {
    return call.fault(status::BadSubscriptionIdInvalid);
  }
  const auto params = Subscription::revise(req.requested_publishing_interval, req.requested_lifetime_count,
                                           req.requested_max_keep_alive_count,
                                           req.max_notifications_per_publish, req.priority);
  sub->modify(params);
  follow_publishing_interval(server, *sub);
  ua::ModifySubscriptionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.revised_publishing_interval = params.publishing_interval_ms;
  resp.revised_lifetime_count = params.lifetime_count;
  resp.revised_max_keep_alive_count = params.max_keep_alive_count;
  call.send(resp);
}

void handle_set_publishing_mode(Server& server, Call& call, ua::Decoder& body) {
  ua::SetPublishingModeRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.subscription_ids.size(),
                             server.config().limits.max_subscriptions_per_call)) {
    return;
  }
  ua::SetPublishingModeResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.reserve(req.subscription_ids.size());
  for (uint32_t id : req.subscription_ids) {
    Subscription* sub = find_subscription(*call.session, id);
    if (sub) sub->set_publishing_enabled(req.publishing_enabled);
    resp.results.push_back(sub ? status::Good : status::BadSubscriptionIdInvalid);
  }
  call.send(resp);
}

void handle_delete_subscriptions(Server& server, Call& call, ua::Decoder& body) {
  ua::DeleteSubscriptionsRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.subscription_ids.size(),
                             server.config().limits.max_subscriptions_per_call)) {
    return;
  }
  Session& session = *call.session;
  ua::DeleteSubscriptionsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.reserve(req.subscription_ids.size());
  for (uint32_t id : req.subscription_ids) {
    resp.results.push_back(session.subscriptions.erase(id) ? status::Good : status::BadSubscriptionIdInvalid);
  }
  call.send(resp);
  drop_idle_publishes(session);
}

void handle_publish(Server& server, Call& call, ua::Decoder& body) {
  // Decoded into the same object every time, so its acknowledgement array keeps its capacity.
  thread_local ua::PublishRequest req;
  if (!decode_request(call, body, req)) return;
  Session& session = *call.session;
  if (session.subscriptions.empty() && session.status_changes.empty()) {
    return call.fault(status::BadNoSubscription, publish_stream(session));
  }
  PendingPublish pending(call.channel.weak_from_this(), call.request_id, req.request_header.request_handle,
                         publish_stream(session), &call.shard.stats.publish_latency);
  if (req.request_header.timeout_hint > 0) {
    pending.expires =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(req.request_header.timeout_hint);
  }
  // Acknowledgements are processed when the request arrives (Part 4 §5.13.5.2), one result each.
  for (const auto& ack : req.subscription_acknowledgements) {
    Subscription* sub = find_subscription(session, ack.subscription_id);
    pending.ack_results.push_back(sub ? sub->acknowledge(ack.sequence_number)
                                      : status::BadSubscriptionIdInvalid);
  }
  enqueue_publish(session, std::move(pending), server.config().limits.max_publish_requests_per_session);
}

void handle_republish(Server&, Call& call, ua::Decoder& body) {
  ua::RepublishRequest req;
  if (!decode_request(call, body, req)) return;
  Subscription* sub = find_subscription(*call.session, req.subscription_id);
  std::span<const uint8_t> message;
  ua::StatusCode s =
      sub ? sub->republish(req.retransmit_sequence_number, message) : status::BadSubscriptionIdInvalid;
  if (sub) {
    // Part 5 §12.15: one message asked for per request (RepublishMessageRequestCount is the same count).
    ++sub->counters().republish_requests;
    if (s.is_good()) ++sub->counters().republished;
  }
  if (!s.is_good()) return call.fault(s);
  // RepublishResponse {ResponseHeader, NotificationMessage}: the message goes out as it was first encoded.
  ua::ByteBuffer buf = call.channel.acquire_buffer();
  ua::Encoder e(buf);
  ua::encode(e, ua::NodeId(0, ua::RepublishResponse::binary_encoding_id));
  ua::encode(e, response_header(req.request_header));
  e.write_raw(message.data(), message.size());
  call.send_encoded(std::move(buf), e.status());
}

}  // namespace opcuad::services
