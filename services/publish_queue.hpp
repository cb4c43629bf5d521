#pragma once
// The session-level half of Publish (Part 4 §5.13.1.2, §5.13.5): a session's queue of outstanding
// Publish requests (Session::publish_queue), shared by its subscriptions, and what answers them besides
// a subscription's own message (status changes, faults). publish_queue.cpp; shard-local, like the session.

#include <cstddef>
#include <cstdint>

#include "services/pending_publish.hpp"
#include "ua/status_code.hpp"

namespace opcuad::services {

struct Session;

// Drops the queued requests at the front that can no longer carry a message: those whose channel
// closed (nobody to answer) and those past their timeoutHint (answered BadTimeout).
void prune_publish_queue(Session& session);
// The output writer's fairness key for this session's Publish responses.
uint64_t publish_stream(const Session& session) noexcept;
// Queues a Publish request (the oldest is answered BadTooManyPublishRequests beyond `max_requests`),
// then hands queued requests to waiting status changes and subscriptions.
void enqueue_publish(Session& session, PendingPublish request, size_t max_requests);
// Hands queued requests to pending StatusChangeNotifications, then to subscriptions that want one
// (highest priority first, then the one waiting longest).
void serve_waiting(Session& session);
// Part 4 §5.13.8: once a session has no subscription and no status change left to report, its queued
// Publish requests are answered with BadNoSubscription.
void drop_idle_publishes(Session& session);
// Part 4 §5.6.3: once a session accepts a new SecureChannel, requests sent through the old one are
// rejected. Its Publish requests still queued are answered BadSecureChannelIdInvalid there (when that
// channel is still open), so the client is not left waiting for them; the others stay queued. Channel
// ids are never 0, so 0 rejects them all.
void reject_publishes_from_other_channels(Session& session, uint32_t channel_id);
// Answers every queued Publish request of the session with `result`.
void reject_publishes(Session& session, ua::StatusCode result);
// Deletes every subscription of the session and answers its queued Publish requests with `result`.
void close_subscriptions(Session& session, ua::StatusCode result);
// Cancel (Part 4 §5.6.5): the queued Publish requests with this requestHandle are answered
// BadRequestCancelledByClient; returns how many (the cancelCount).
uint32_t cancel_publishes(Session& session, uint32_t request_handle);

}  // namespace opcuad::services
