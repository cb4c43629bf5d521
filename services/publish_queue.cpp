// The session-level half of Publish (Part 4 §5.13.5): the queue of outstanding Publish requests that a
// session's subscriptions share.
#include "services/publish_queue.hpp"

#include <optional>

#include "services/session.hpp"
#include "services/subscription.hpp"

namespace opcuad::services {

namespace status = ua::status;

void prune_publish_queue(Session& session) {
  using Clock = std::chrono::steady_clock;
  auto& q = session.publish_queue;
  const auto now = Clock::now();
  while (!q.empty()) {
    PendingPublish& r = q.front();
    const bool open = r.open_channel() != nullptr;
    if (open && r.expires >= now) return;
    r.fault(status::BadTimeout);  // nothing is sent on a closed channel
    q.pop_front();
  }
}

uint64_t publish_stream(const Session& session) noexcept {
  const uint64_t h = std::hash<ua::NodeId>{}(session.session_id);
  return h == 0 ? 1 : h;  // 0 is the channel's own stream
}

void enqueue_publish(Session& session, PendingPublish request, size_t max_requests) {
  auto& q = session.publish_queue;
  while (!q.empty() && q.size() >= std::max<size_t>(max_requests, 1)) {
    // Part 4 §5.13.5.1: the oldest request is answered with BadTooManyPublishRequests.
    q.front().fault(status::BadTooManyPublishRequests);
    q.pop_front();
  }
  q.push_back(std::move(request));
  serve_waiting(session);
}

void serve_waiting(Session& session) {
  auto& q = session.publish_queue;
  auto take = [&]() -> std::optional<PendingPublish> {
    prune_publish_queue(session);
    if (q.empty()) return std::nullopt;
    PendingPublish r = std::move(q.front());
    q.pop_front();
    return r;
  };
  while (!session.status_changes.empty() && !q.empty()) {
    auto r = take();
    if (!r) break;
    StatusChangeNotice& notice = session.status_changes.front();
    ua::PublishResponse resp;
    resp.response_header.timestamp = ua::DateTime::now();
    resp.response_header.request_handle = r->request_handle();
    resp.subscription_id = notice.subscription_id;
    resp.notification_message = std::move(notice.message);
    resp.results = r->ack_results.to_vector();
    r->send(resp);
    session.status_changes.pop_front();
  }
  while (!q.empty()) {
    Subscription* best = nullptr;
    for (auto& [id, sub] : session.subscriptions) {
      if (!sub->wants_publish()) continue;
      if (!best || sub->parameters().priority > best->parameters().priority ||
          (sub->parameters().priority == best->parameters().priority &&
           sub->waiting_since() < best->waiting_since())) {
        best = sub.get();
      }
    }
    if (!best) return;
    auto r = take();
    if (!r) return;
    best->serve(std::move(*r));
  }
}

void drop_idle_publishes(Session& session) {
  if (!session.subscriptions.empty() || !session.status_changes.empty()) return;
  for (auto& r : session.publish_queue) r.fault(status::BadNoSubscription);
  session.publish_queue.clear();
}

void reject_publishes_from_other_channels(Session& session, uint32_t channel_id) {
  std::erase_if(session.publish_queue, [&](PendingPublish& r) {
    auto ch = r.open_channel();
    if (ch && ch->id() == channel_id) return false;
    r.fault(status::BadSecureChannelIdInvalid);
    return true;
  });
}

void reject_publishes(Session& session, ua::StatusCode result) {
  for (auto& r : session.publish_queue) r.fault(result);
  session.publish_queue.clear();
}

uint32_t cancel_publishes(Session& session, uint32_t request_handle) {
  uint32_t n = 0;
  std::erase_if(session.publish_queue, [&](PendingPublish& r) {
    if (r.request_handle() != request_handle) return false;
    r.fault(status::BadRequestCancelledByClient);
    ++n;
    return true;
  });
  return n;
}

void close_subscriptions(Session& session, ua::StatusCode result) {
  reject_publishes(session, result);
  session.status_changes.clear();
  session.subscriptions.clear();
}

}  // namespace opcuad::services
