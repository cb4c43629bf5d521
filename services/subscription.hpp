#pragma once
// Subscription: the state machine of Part 4 §5.13.1 (states NORMAL, LATE, KEEPALIVE; CLOSED is the
// object's destruction), its publishing timer, its monitored items and its retransmission queue. The
// session-level half of Publish, the queue of outstanding requests a session's subscriptions share, is in
// publish_queue.hpp.
//
// Publishing timers use absolute deadlines (tick k due at start + k * interval), like the Sampler.
//
// shard-local: owned by Session::subscriptions; it, its items and its timer live on the session's shard
// and are touched only by that shard's thread. A pending timer wait holds weak_ptrs, so deleting a
// subscription (DeleteSubscriptions, CloseSession, session expiry, lifetime expiry) is safe at any time.
// Of the server it reaches only its SubscriptionRegistry (subscription_registry.hpp).
//
// Moving to another shard (TransferSubscriptions, a session re-activated on another shard): detach() on
// the old shard cancels the timer and takes the items out of that shard's Sampler; the detached object,
// which then refers to no shard, is handed over through asio::post; attach() on the new shard builds a new
// timer there and registers the items with its Sampler. A live subscription is never touched by two
// shards: a timer completion already queued on the old shard finds its timer gone and does nothing.

#include <asio/steady_timer.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "services/item_table.hpp"
#include "services/monitored_item.hpp"
#include "services/pending_publish.hpp"
#include "services/publish_queue.hpp"
#include "services/service_stats.hpp"
#include "services/session_diagnostics.hpp"
#include "services/subscription_registry.hpp"
#include "transport/secure_channel.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

struct ShardState;
struct Session;

// Bounds the revised parameters are clamped into (Part 4 §5.13.2.2 lets the server choose them).
inline constexpr double kMinPublishingIntervalMs = 10;
inline constexpr double kMaxPublishingIntervalMs = 3600000;
inline constexpr uint32_t kDefaultKeepAliveCount = 10;
inline constexpr uint32_t kMaxKeepAliveCount = 10000;
inline constexpr uint32_t kMaxLifetimeCount = 100000;
// NotificationMessages kept for Republish per subscription; the oldest is dropped beyond it.
inline constexpr size_t kRetransmissionQueueSize = 16;
class Subscription : public std::enable_shared_from_this<Subscription> {
 public:
  enum class State { Normal, Late, KeepAlive };
  struct Parameters {
    double publishing_interval_ms = 0;
    uint32_t lifetime_count = 0;
    uint32_t max_keep_alive_count = 0;
    uint32_t max_notifications_per_publish = 0;  // 0: no limit (Part 4 §5.13.2.2)
    uint8_t priority = 0;
  };
  // Part 4 §5.13.2.2: clamps a request into the server's bounds; lifetime >= 3 x keep-alive.
  // maxNotificationsPerPublish is kept as the client gave it, 0 meaning no limit: a NotificationMessage
  // is bounded in bytes instead, by the client's limits and limits.max_publish_response_size (respond()).
  static Parameters revise(double interval_ms, uint32_t lifetime, uint32_t keep_alive,
                           uint32_t max_notifications, uint8_t priority) noexcept;

  // REQUIRES: a subscription slot reserved in `registry` (released by the destructor).
  Subscription(SubscriptionRegistry& registry, ShardState& shard, Session& session, uint32_t id,
               const Parameters& p, bool enabled);
  ~Subscription();
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  // Starts the publishing timer. Separate from the constructor: it needs shared_from_this().
  void start();
  // Leaves the current shard (on its thread): timer cancelled, items out of its Sampler, no session.
  void detach() noexcept;
  // Joins `shard` and `session` (on that shard's thread) and restarts the timer there, counters reset.
  // REQUIRES: detach() was called.
  void attach(ShardState& shard, Session& session);
  // Part 4 §5.13.7 sendInitialValues: every Reporting item queues its current value.
  void queue_current_values();
  // A reload published `store` (Server::see_store, on this shard's thread): each Value item whose NodeId
  // has another cell there (a new DataType) or none (the node is gone) moves to it, forgets its last
  // sample and samples at once, so it reports the new value, or BadNodeIdUnknown once. Items of nodes
  // that are unchanged keep their cells: nothing happens to them.
  void resolve_items(const addressspace::NodeStore& store);
  // A StatusChangeNotification of this subscription (BadTimeout on expiry, GoodSubscriptionTransferred
  // for the session it left); it carries the next sequence number without using it, like a keep-alive.
  StatusChangeNotice status_change(ua::StatusCode status) const;
  uint32_t id() const noexcept { return id_; }
  Session* session() const noexcept { return session_; }  // nullptr while detached
  ShardState* shard() const noexcept { return shard_; }   // nullptr while detached
  State state() const noexcept { return state_; }
  const Parameters& parameters() const noexcept { return params_; }
  bool publishing_enabled() const noexcept { return enabled_; }
  // ModifySubscription (Part 4 §5.13.3): new parameters, counters reset, timer restarted.
  void modify(const Parameters& p);
  // SetPublishingMode (Part 4 §5.13.4), counted as EnableCount / DisableCount (Part 5 §12.15).
  void set_publishing_enabled(bool enabled) noexcept {
    enabled_ = enabled;
    ++(enabled ? counters_.enable : counters_.disable);
  }

  // Diagnostics (Part 5 §12.15; session_diagnostics.hpp): its counters, and the state machine's own.
  SubscriptionCounters& counters() noexcept { return counters_; }
  const SubscriptionCounters& counters() const noexcept { return counters_; }
  uint32_t lifetime_counter() const noexcept { return lifetime_counter_; }
  uint32_t keep_alive_counter() const noexcept { return keep_alive_counter_; }
  uint32_t next_sequence_number() const noexcept { return next_sequence_; }
  size_t unacknowledged_count() const noexcept { return retained_count_; }
  size_t disabled_item_count() const noexcept { return disabled_items_; }

  // Monitored items.
  MonitoredItem* item(uint32_t item_id) noexcept;
  size_t item_count() const noexcept { return items_.size(); }
  template <class F>
  void for_each_item(F&& f) {
    items_.for_each(f);
  }
  // Stores the item, assigns the id, and applies its mode (sampling it at once unless Disabled).
  // REQUIRES: a monitored item slot reserved in the registry (released when the item is removed).
  MonitoredItem& add_item(MonitoredItem&& item);
  bool remove_item(uint32_t item_id);
  // Part 4 §5.12.4: Disabled stops sampling and empties the queue; leaving Disabled samples at once.
  void set_mode(MonitoredItem& item, ua::MonitoringMode mode);
  // After the item's sampling interval changed: it moves to the matching sampler group.
  void resample(MonitoredItem& item);
  // The item queued a value: it becomes reportable, and so do the items it triggers.
  void on_item_queued(MonitoredItem& item);

  // Publish.
  // True when a Publish request should be handed to this subscription now: it is LATE, or it sent a
  // message with MoreNotifications (Part 4 §5.13.1.2 transitions #4, #9, #10).
  bool wants_publish() const noexcept;
  std::chrono::steady_clock::time_point waiting_since() const noexcept { return late_since_; }
  void serve(PendingPublish request);  // REQUIRES: wants_publish()
  ua::StatusCode acknowledge(uint32_t sequence_number);
  // The encoded NotificationMessage kept for Republish (valid until the next Publish of this
  // subscription), or BadMessageNotAvailable.
  ua::StatusCode republish(uint32_t sequence_number, std::span<const uint8_t>& out) const;
  // For TransferSubscriptions (Publish encodes them in place).
  std::vector<uint32_t> available_sequence_numbers() const;

 private:
  void arm_timer();
  void on_timer();
  bool notifications_available() const noexcept { return data_.count > 0 || events_.count > 0; }
  bool has_request();
  PendingPublish take_request();  // REQUIRES: has_request()
  void send_notifications(PendingPublish request);
  void send_keep_alive(PendingPublish request);
  // Encodes a PublishResponse: the NotificationMessage is written by `message(encoder, buffer, limit)`
  // (data changes from the item queues, or nothing for a keep-alive), which keeps the buffer at most
  // `limit` bytes long (the size bound) and returns MoreNotifications. A data message is encoded into its
  // retransmission slot and kept there for Republish; a keep-alive into a chunk buffer.
  template <class F>
  void respond(PendingPublish& request, uint32_t sequence_number, bool more, bool retain, F&& message);
  static void encode_too_large(ua::Encoder& e, const MonitoredItem& item);
  struct ReadyList;
  // The notificationData elements of a message (Part 4 §7.25.2): a DataChangeNotification of the data
  // items' queues, an EventNotificationList of the event items'. Each writes its ExtensionObject at the
  // encoder's position, stops at `limit` or when `budget` is spent, and returns how many notifications
  // it wrote (0: nothing was written, the element is left out); `before` counts the notifications
  // already in the message (an event that fits no message is dropped only when it would be alone).
  size_t encode_data_changes(ua::Encoder& e, ua::ByteBuffer& buf, size_t limit, size_t& budget,
                             size_t before);
  size_t encode_events(ua::Encoder& e, ua::ByteBuffer& buf, size_t limit, size_t& budget, size_t before);
  void expire();
  ReadyList& list_of(const MonitoredItem& item) noexcept { return item.is_event() ? events_ : data_; }
  void make_ready(MonitoredItem& item);
  void unready(MonitoredItem& item) noexcept;
  static void compact_ready(ReadyList& list) noexcept;
  void compact_ready(const MonitoredItem& item) noexcept { compact_ready(list_of(item)); }
  static void consume_ready(ReadyList& list,
                            size_t head) noexcept;  // the entries before `head` were reported
  void index_in(ShardState& shard);
  void unindex() noexcept;

  SubscriptionRegistry& registry_;
  ShardState* shard_;  // nullptr while detached
  Session* session_;   // nullptr while detached
  const uint32_t id_;
  Parameters params_;
  bool enabled_;
  State state_ = State::Normal;
  // Part 4 §5.13.1.1 counters.
  uint32_t lifetime_counter_ = 0;
  uint32_t keep_alive_counter_ = 0;
  bool message_sent_ = false;
  bool more_notifications_ = false;
  std::chrono::steady_clock::time_point late_since_;
  uint32_t next_sequence_ = 1;
  // Retransmission queue: NotificationMessages, oldest first, in a ring whose buffers are reused (a
  // ByteBuffer never shrinks), so keeping a message allocates nothing once the buffers are warm. Each
  // buffer holds the whole PublishResponse the message was sent in (respond() encodes into it); the
  // message is bytes [message_at, message_at + message_size) of it.
  struct Retained {
    uint32_t sequence_number = 0;
    size_t message_at = 0;
    size_t message_size = 0;
    ua::ByteBuffer bytes;
  };
  std::array<Retained, kRetransmissionQueueSize> retained_;
  size_t retained_head_ = 0;
  size_t retained_count_ = 0;
  Retained& retained_at(size_t i) noexcept { return retained_[(retained_head_ + i) % retained_.size()]; }
  const Retained& retained_at(size_t i) const noexcept {
    return retained_[(retained_head_ + i) % retained_.size()];
  }
  // Publishing timer: tick k due at timer_start_ + k * interval. Shared with its pending wait only as a
  // weak_ptr: detach() drops it, so a completion still queued on the old shard sees it expired.
  std::shared_ptr<asio::steady_timer> timer_;
  std::chrono::steady_clock::time_point timer_start_;
  uint64_t tick_ = 0;
  // Items, and those with reportable values in the order they became reportable. An entry is stale when
  // its item was removed (the slot's id differs) or is no longer ready; `count` counts the live ones.
  // The list is entries[head, end): a message that stops early (its size or count limit) leaves the
  // rest where it is and the next one starts there, so splitting a large backlog over many messages
  // costs O(1) per entry, not a walk of the whole list per message.
  ItemTable items_;
  struct ReadyEntry {
    MonitoredItem* item;
    uint32_t id;
  };
  struct ReadyList {
    std::vector<ReadyEntry> entries;
    size_t head = 0;
    size_t count = 0;
  };
  ReadyList data_;    // data items (DataChangeNotification)
  ReadyList events_;  // event items (EventNotificationList)
  uint32_t next_item_id_ = 1;
  size_t disabled_items_ = 0;  // items in MonitoringMode Disabled (kept by add_item, remove_item, set_mode)
  SubscriptionCounters counters_;
};

}  // namespace opcuad::services
