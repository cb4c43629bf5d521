#pragma once
// What a session holds of the Publish service (Part 4 §5.13.5) before any subscription takes it: the
// Publish requests it has not answered yet (PendingPublish, with their acknowledgement results) and the
// status changes of subscriptions closed by their lifetime. Session holds them by value; the subscription
// that answers a request (subscription.hpp) is above this.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "services/service_stats.hpp"
#include "transport/secure_channel.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

// Outstanding Publish requests per session: limits.max_publish_requests_per_session (config.hpp). Keep it
// below the transport's max_owed_responses: a channel stops reading beyond that, and the client must still
// get BadTooManyPublishRequests back.

// The acknowledgement results of one Publish request (Part 4 §5.13.5.2): inline up to kInline (one per
// subscription of the session is usual), so holding a request allocates nothing in the common case.
class AckResults {
 public:
  void push_back(ua::StatusCode s) {
    if (n_ < kInline) {
      inline_[n_] = s;
    } else {
      more_.push_back(s);
    }
    ++n_;
  }
  size_t size() const noexcept { return n_; }
  ua::StatusCode operator[](size_t i) const noexcept { return i < kInline ? inline_[i] : more_[i - kInline]; }
  void encode(ua::Encoder& e) const {
    e.write_i32(static_cast<int32_t>(n_));
    for (size_t i = 0; i < n_; ++i) e.write_u32((*this)[i].value());
  }
  std::vector<ua::StatusCode> to_vector() const {
    std::vector<ua::StatusCode> out;
    for (size_t i = 0; i < n_; ++i) out.push_back((*this)[i]);
    return out;
  }

 private:
  static constexpr size_t kInline = 4;
  std::array<ua::StatusCode, kInline> inline_{};
  size_t n_ = 0;
  std::vector<ua::StatusCode> more_;
};

// A Publish request waiting for a subscription to need it (Part 4 §5.13.5), and its claim on an answer.
// The channel counts every request as owed until a response to it is written, and stops reading beyond
// max_owed_responses (docs/ARCHITECTURE.md, back-pressure); a request dropped unanswered would stay owed
// for the channel's life. So a PendingPublish answers exactly once by construction: through fault() or
// send_*(), or, when it is destroyed unanswered (its session expired or was freed), with BadSessionClosed
// (Part 4 §5.6.4 answers a closed session's outstanding requests so). A moved-from request owes nothing.
// Answers go only to a channel that is still open; a closed channel owes nobody.
// shard-local: answered on the shard of the channel it came on (its session's shard).
class PendingPublish {
 public:
  PendingPublish() = default;
  PendingPublish(std::weak_ptr<transport::SecureChannel> channel, uint32_t request_id,
                 uint32_t request_handle, uint64_t stream, PublishLatency* latency = nullptr)
      : channel_(std::move(channel)),
        request_id_(request_id),
        request_handle_(request_handle),
        stream_(stream),
        owed_(true),
        latency_(latency),
        queued_(latency ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  PendingPublish(PendingPublish&& o) noexcept { take(o); }
  PendingPublish& operator=(PendingPublish&& o) noexcept {
    if (this != &o) {
      fault(ua::status::BadSessionClosed);
      take(o);
    }
    return *this;
  }
  PendingPublish(const PendingPublish&) = delete;
  PendingPublish& operator=(const PendingPublish&) = delete;
  ~PendingPublish() { fault(ua::status::BadSessionClosed); }

  uint32_t request_id() const noexcept { return request_id_; }
  uint32_t request_handle() const noexcept { return request_handle_; }
  bool owed() const noexcept { return owed_; }
  // The channel, when it is still open (nullptr otherwise).
  std::shared_ptr<transport::SecureChannel> open_channel() const;
  // Answers with a ServiceFault (nothing once answered).
  void fault(ua::StatusCode result) noexcept;
  // Answers with an encoded response from the channel's acquire_buffer().
  void send_encoded(transport::SecureChannel& channel, ua::ByteBuffer encoded);
  // Answers with a response encoded in a buffer the caller keeps (kSymmetricPrefix bytes of headroom,
  // then the body): the channel sends copies of it (SecureChannel::send_response_copy).
  void send_copy(transport::SecureChannel& channel, const ua::ByteBuffer& encoded);
  // Answers with a generated response structure.
  template <class T>
  void send(const T& response) {
    if (!owed_) return;
    answered();
    if (auto ch = open_channel()) ch->send(request_id_, response, stream_);
  }

  AckResults ack_results;
  // From the RequestHeader's timeoutHint; max(): none. A request dequeued after it is answered BadTimeout
  // instead of carrying a message (Part 4 §5.13.1.4 DequeuePublishReq).
  std::chrono::steady_clock::time_point expires = std::chrono::steady_clock::time_point::max();

 private:
  // Marks the request answered and records how long it waited (its shard's PublishLatency).
  void answered() noexcept {
    owed_ = false;
    if (latency_) latency_->record(std::chrono::steady_clock::now() - queued_);
  }
  void take(PendingPublish& o) noexcept {
    channel_ = std::move(o.channel_);
    request_id_ = o.request_id_;
    request_handle_ = o.request_handle_;
    stream_ = o.stream_;
    owed_ = o.owed_;
    o.owed_ = false;
    ack_results = std::move(o.ack_results);
    expires = o.expires;
    latency_ = o.latency_;
    queued_ = o.queued_;
  }

  std::weak_ptr<transport::SecureChannel> channel_;  // the channel it came on
  uint32_t request_id_ = 0;
  uint32_t request_handle_ = 0;
  uint64_t stream_ = 0;  // the output writer's fairness key (publish_stream())
  bool owed_ = false;
  PublishLatency* latency_ = nullptr;  // the shard's histogram (answered on that shard, see above)
  std::chrono::steady_clock::time_point queued_;
};

// The StatusChangeNotification of a subscription its lifetime closed, waiting for the next Publish.
struct StatusChangeNotice {
  uint32_t subscription_id = 0;
  ua::NotificationMessage message;
};

}  // namespace opcuad::services
