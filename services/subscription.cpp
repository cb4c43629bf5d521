#include "services/subscription.hpp"

#include <algorithm>
#include <cmath>

#include "services/sampler.hpp"
#include "services/session.hpp"
#include "services/shard.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using Clock = std::chrono::steady_clock;

}  // namespace

Subscription::Parameters Subscription::revise(double interval_ms, uint32_t lifetime, uint32_t keep_alive,
                                              uint32_t max_notifications, uint8_t priority) noexcept {
  Parameters p;
  // NaN, 0 and negative intervals get the fastest rate (Part 4 §5.13.2.2).
  p.publishing_interval_ms = interval_ms == interval_ms && interval_ms > kMinPublishingIntervalMs
                                 ? std::min(interval_ms, kMaxPublishingIntervalMs)
                                 : kMinPublishingIntervalMs;
  p.max_keep_alive_count =
      keep_alive == 0 ? kDefaultKeepAliveCount : std::min(keep_alive, kMaxKeepAliveCount);
  // The lifetime count shall be at least three times the keep-alive count.
  p.lifetime_count = std::clamp(lifetime, 3 * p.max_keep_alive_count, kMaxLifetimeCount);
  // Honoured as given, 0 meaning no limit: what bounds a message is its size (respond()).
  p.max_notifications_per_publish = max_notifications;
  p.priority = priority;
  return p;
}

Subscription::Subscription(SubscriptionRegistry& registry, ShardState& shard, Session& session, uint32_t id,
                           const Parameters& p, bool enabled)
    : registry_(registry),
      shard_(&shard),
      session_(&session),
      id_(id),
      params_(p),
      enabled_(enabled),
      timer_(std::make_shared<asio::steady_timer>(*shard.context)) {
  lifetime_counter_ = params_.lifetime_count;
  keep_alive_counter_ = params_.max_keep_alive_count;
  registry_.place(id_, shard);
  registry_.count_publishing_interval(params_.publishing_interval_ms, +1);
  index_in(shard);
}

Subscription::~Subscription() {
  if (timer_) timer_->cancel();
  if (shard_) {
    items_.for_each([this](MonitoredItem& item) {
      shard_->sampler->remove(item);
      if (item.is_event()) unindex_event_item(*shard_, item);
    });
    unindex();
  }
  registry_.release_monitored_items(static_cast<uint32_t>(items_.size()));
  registry_.release_subscription();
  registry_.count_publishing_interval(params_.publishing_interval_ms, -1);
  registry_.forget(id_);
}

void Subscription::detach() noexcept {
  timer_.reset();  // its destruction cancels the wait; a completion already queued finds it expired
  items_.for_each([this](MonitoredItem& item) {
    shard_->sampler->remove(item);
    if (item.is_event()) unindex_event_item(*shard_, item);
  });
  unindex();
  shard_ = nullptr;
  session_ = nullptr;
}

void Subscription::index_in(ShardState& shard) {
  shard.subscription_index[id_] = this;
}

void Subscription::unindex() noexcept {
  auto it = shard_->subscription_index.find(id_);
  if (it != shard_->subscription_index.end() && it->second == this) shard_->subscription_index.erase(it);
}

void Subscription::attach(ShardState& shard, Session& session) {
  shard_ = &shard;
  session_ = &session;
  registry_.place(id_, shard);
  index_in(shard);
  timer_ = std::make_shared<asio::steady_timer>(*shard.context);
  // A sample right away: an exception-based item would otherwise miss a write made while it travelled
  // (the version check makes it free when nothing changed).
  // The store may have changed while it travelled (a reload): its cells are looked up again first.
  const addressspace::NodeStore& store = *registry_.space().current();
  items_.for_each([&](MonitoredItem& item) {
    if (item.is_event()) {
      // Its notifier and filter are those of the store it was indexed against: resolved again when the
      // store changed while it travelled.
      index_event_item(shard, item, store);
      return;
    }
    if (const addressspace::ValueCell* cell = item.resolved_cell(store, &session.access); cell != item.cell) {
      item.cell = cell;
      item.reset_sampling();
    }
    if (item.mode() == ua::MonitoringMode::Disabled) return;
    shard.sampler->add(item);
    item.sample(store);
  });
  // The new session's Publish requests count from now on (Part 4 §5.13.1.1 counters restart).
  lifetime_counter_ = params_.lifetime_count;
  keep_alive_counter_ = params_.max_keep_alive_count;
  start();
}

void Subscription::resolve_items(const addressspace::NodeStore& store) {
  items_.for_each([&](MonitoredItem& item) {
    if (item.is_event()) {
      unindex_event_item(*shard_, item);
      index_event_item(*shard_, item, store);
      return;
    }
    const addressspace::ValueCell* cell = item.resolved_cell(store, session_ ? &session_->access : nullptr);
    if (cell == item.cell) return;
    // The Sampler keys exception-based items by cell: out with the old one, in with the new.
    const bool sampled = item.sampler_key != MonitoredItem::kNoGroup;
    if (sampled) shard_->sampler->remove(item);
    item.cell = cell;
    item.reset_sampling();
    if (!sampled) return;
    shard_->sampler->add(item);
    item.sample(store);
  });
}

void Subscription::queue_current_values() {
  const addressspace::NodeStore& store = *registry_.space().current();
  items_.for_each([&](MonitoredItem& item) {
    if (item.mode() != ua::MonitoringMode::Reporting || item.is_event()) return;  // events have no value
    item.reset_sampling();  // the current value passes whatever the filter
    item.sample(store);
  });
}

StatusChangeNotice Subscription::status_change(ua::StatusCode status) const {
  StatusChangeNotice notice;
  notice.subscription_id = id_;
  notice.message.sequence_number = next_sequence_;
  notice.message.publish_time = ua::DateTime::now();
  notice.message.notification_data.push_back(
      ua::ExtensionObject::make(ua::StatusChangeNotification{status, {}}));
  return notice;
}

void Subscription::start() {
  timer_start_ = Sampler::publishing_phase(Clock::now());  // off the sampling instants (sampler.hpp)
  tick_ = 0;
  arm_timer();
}

void Subscription::modify(const Parameters& p) {
  registry_.count_publishing_interval(params_.publishing_interval_ms, -1);
  registry_.count_publishing_interval(p.publishing_interval_ms, +1);
  params_ = p;
  ++counters_.modify;
  lifetime_counter_ = params_.lifetime_count;
  keep_alive_counter_ = params_.max_keep_alive_count;
  timer_->cancel();  // a wait already completed finds a new tick count and is ignored (on_timer)
  start();
}

void Subscription::arm_timer() {
  ++tick_;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(params_.publishing_interval_ms));
  auto due = timer_start_ + interval * tick_;
  const auto now = Clock::now();
  if (due + interval <= now) {
    tick_ = static_cast<uint64_t>((now - timer_start_) / interval) + 1;  // skip deadlines already past
    due = timer_start_ + interval * tick_;
  }
  timer_->expires_at(due);
  std::weak_ptr<Subscription> weak = weak_from_this();
  std::weak_ptr<asio::steady_timer> home = timer_;
  const uint64_t tick = tick_;
  timer_->async_wait([weak, home, tick](std::error_code ec) {
    // The timer is dropped (on this thread) before the subscription leaves the shard: an expired `home`
    // means the subscription may now belong to another thread, so it is not even locked.
    if (ec || home.expired()) return;
    auto self = weak.lock();
    // A stale completion (the timer was restarted by modify()) carries an old tick.
    if (ec || !self || self->tick_ != tick) return;
    self->on_timer();
  });
}

// Part 4 §5.13.1.2, publishing timer expiry. The lifetime counter counts expiries without a Publish
// request available (§5.13.2.2 lifetimeCount); reaching zero closes the subscription (#27).
void Subscription::on_timer() {
  auto keep = shared_from_this();  // expire() removes this subscription from its session
  const bool queued = has_request();
  if (queued) {
    lifetime_counter_ = params_.lifetime_count;
  } else if (--lifetime_counter_ == 0) {
    return expire();
  }
  arm_timer();
  const bool available = enabled_ && notifications_available();
  switch (state_) {
    case State::Normal:
      if (queued && available) {
        send_notifications(take_request());  // #5
      } else if (queued && !message_sent_) {
        send_keep_alive(take_request());  // #6: the first message
      } else if (!queued && (!message_sent_ || available)) {
        state_ = State::Late;  // #7
        late_since_ = Clock::now();
        ++counters_.late;
      } else if (message_sent_ && !available) {
        keep_alive_counter_ = params_.max_keep_alive_count;  // #8
        state_ = State::KeepAlive;
      }
      break;
    case State::Late:
      break;  // #11: waiting for a Publish request
    case State::KeepAlive:
      if (queued && available) {
        send_notifications(take_request());  // #13
        state_ = State::Normal;
      } else if (queued && keep_alive_counter_ <= 1) {
        send_keep_alive(take_request());  // #14
        keep_alive_counter_ = params_.max_keep_alive_count;
      } else if (keep_alive_counter_ > 1 && !available) {
        --keep_alive_counter_;  // #15
      } else if (!queued) {
        state_ = State::Late;  // #16
        late_since_ = Clock::now();
        ++counters_.late;
      }
      break;
  }
}

bool Subscription::wants_publish() const noexcept {
  return state_ == State::Late || (state_ == State::Normal && more_notifications_ && enabled_);
}

// A Publish request arrived for a subscription that wants one (#4, #9, #10).
void Subscription::serve(PendingPublish request) {
  lifetime_counter_ = params_.lifetime_count;
  if (enabled_ && notifications_available()) {
    send_notifications(std::move(request));
    state_ = State::Normal;
  } else {
    send_keep_alive(std::move(request));
    keep_alive_counter_ = params_.max_keep_alive_count;
    state_ = State::KeepAlive;
  }
}

bool Subscription::has_request() {
  prune_publish_queue(*session_);
  return !session_->publish_queue.empty();
}

PendingPublish Subscription::take_request() {
  PendingPublish r = std::move(session_->publish_queue.front());
  session_->publish_queue.pop_front();
  return r;
}

void Subscription::send_notifications(PendingPublish request) {
  const uint32_t sequence_number = next_sequence_;
  next_sequence_ = next_sequence_ == UINT32_MAX ? 1 : next_sequence_ + 1;  // 0 is never used (Part 4 §7.38)
  message_sent_ = true;
  ++counters_.publish_requests;
  // MoreNotifications is known only once the budget is spent, but precedes the message in the response:
  // it is patched (see respond()).
  respond(request, sequence_number, false, true,
          [this, sequence_number](ua::Encoder& e, ua::ByteBuffer& buf, size_t limit) {
            // notificationData (Part 4 §7.26): "Notifications of the same type should be grouped into one
            // NotificationData element", so at most two: the data changes and the events. Which one comes
            // first alternates with the sequence number, so neither kind can fill message after message
            // while the other waits (both share the size limit and maxNotificationsPerPublish).
            const size_t count_at = e.position();
            e.write_i32(0);
            // Part 4 §5.13.2.2 maxNotificationsPerPublish: 0 is no limit.
            size_t budget =
                params_.max_notifications_per_publish ? params_.max_notifications_per_publish : SIZE_MAX;
            size_t data = 0, events = 0;
            if (sequence_number % 2 == 1 || events_.count == 0) {
              if (data_.count > 0) data = encode_data_changes(e, buf, limit, budget, 0);
              if (events_.count > 0) events = encode_events(e, buf, limit, budget, data);
            } else {
              events = encode_events(e, buf, limit, budget, 0);
              if (data_.count > 0) data = encode_data_changes(e, buf, limit, budget, events);
            }
            e.patch_u32(count_at, static_cast<uint32_t>((data > 0) + (events > 0)));
            more_notifications_ = notifications_available();
            return more_notifications_;
          });
}

namespace {

// A notificationData element (Part 4 §7.26: an ExtensionObject with a binary body) whose body starts with
// the array of its notifications: opened before they are encoded, then closed with their count or left out.
class NotificationElement {
 public:
  NotificationElement(ua::Encoder& e, uint32_t encoding_id) : e_(e), start_(e.position()) {
    ua::encode(e, ua::NodeId(0, encoding_id));
    e.write_u8(1);  // body is a ByteString
    length_at_ = e.position();
    e.write_u32(0);
    count_at_ = e.position();
    e.write_u32(0);
  }
  // After the body's last field: the array's count and the body's length.
  void close(uint32_t count) {
    e_.patch_u32(count_at_, count);
    e_.patch_u32(length_at_, static_cast<uint32_t>(e_.position() - length_at_ - 4));
  }
  // Nothing to say: the element is left out.
  void drop(ua::ByteBuffer& buf) { buf.resize(start_); }

 private:
  ua::Encoder& e_;
  size_t start_;
  size_t length_at_ = 0;
  size_t count_at_ = 0;
};

}  // namespace

// A DataChangeNotification (Part 4 §7.25.2) of the data items' queued values, in ready-list order.
size_t Subscription::encode_data_changes(ua::Encoder& e, ua::ByteBuffer& buf, size_t limit, size_t& budget,
                                         size_t before) {
  NotificationElement element(e, ua::DataChangeNotification::binary_encoding_id);
  uint32_t count = 0;
  bool full = false;  // the next notification would pass the size limit
  ReadyList& list = data_;
  size_t i = list.head;
  const size_t listed = list.entries.size();
  const ReadyEntry* ready = list.entries.data();
  for (; i < listed; ++i) {
    // The items, their extras and their oldest queued values are scattered over memory: fetched a few
    // entries ahead (as Sampler::run does), their cache misses overlap. A stale entry's slot is still
    // an item of the ItemTable, whose pages never move.
    if (i + 8 < listed) __builtin_prefetch(ready[i + 8].item);
    if (i + 4 < listed && ready[i + 4].item->extras) __builtin_prefetch(ready[i + 4].item->extras.get());
    if (i + 2 < listed) prefetch_oldest(*ready[i + 2].item);
    const ReadyEntry entry = ready[i];
    MonitoredItem* item = entry.item;
    if (item->id != entry.id) continue;  // removed since it was listed
    if (!item->ready) {
      item->listed = false;
      continue;
    }
    while (!full && budget > 0 && !item->queue_empty()) {
      const size_t mark = e.position();
      item->encode_oldest(e);
      if (e.position() > limit) {
        // Part 4 §5.13.5.2: what does not fit waits for the next message (MoreNotifications); the
        // value stays queued. A value too large for any message is dropped, and the client told so
        // by a notification with BadResponseTooLarge in its place, so the queue always moves on.
        buf.resize(mark);
        full = true;
        if (count + before > 0) break;
        encode_too_large(e, *item);
      }
      item->drop_front();
      ++count;
      --budget;
    }
    if (!item->queue_empty()) break;  // full or out of budget: the rest waits, this entry first
    item->ready = false;
    item->listed = false;
    --list.count;
  }
  consume_ready(list, i);
  if (count == 0) {
    element.drop(buf);
    return 0;
  }
  counters_.data_change_notifications += count;
  e.write_i32(0);  // diagnosticInfos
  element.close(count);
  return count;
}

// An EventNotificationList (Part 4 §7.25.3) of the event items' queued EventFieldLists, in ready-list
// order: each is the item's clientHandle and the bytes its queue holds (event_item.hpp).
size_t Subscription::encode_events(ua::Encoder& e, ua::ByteBuffer& buf, size_t limit, size_t& budget,
                                   size_t before) {
  NotificationElement element(e, ua::EventNotificationList::binary_encoding_id);
  uint32_t count = 0;
  bool full = false;
  ReadyList& list = events_;
  size_t i = list.head;
  const size_t listed = list.entries.size();
  for (; i < listed; ++i) {
    const ReadyEntry entry = list.entries[i];
    MonitoredItem* item = entry.item;
    if (item->id != entry.id) continue;  // removed since it was listed
    if (!item->ready) {
      item->listed = false;
      continue;
    }
    EventItemState& ev = *item->event();
    while (!full && budget > 0 && !ev.empty()) {
      const size_t mark = e.position();
      e.write_u32(item->client_handle);
      e.write_raw(ev.front().data(), ev.front().size());
      if (e.position() > limit) {
        // What does not fit waits for the next message. An event too large for any message (only with
        // a client limit below EventItemState::kMaxEventBytes) is dropped, so the queue moves on.
        buf.resize(mark);
        full = true;
        if (count + before > 0) break;
        ++counters_.events_too_large;
      } else {
        ++count;
        --budget;
      }
      ev.pop_front();
    }
    item->pending = !ev.empty();
    if (!ev.empty()) break;  // full or out of budget: the rest waits, this entry first
    item->ready = false;
    item->listed = false;
    --list.count;
  }
  consume_ready(list, i);
  if (count == 0) {
    element.drop(buf);
    return 0;
  }
  counters_.event_notifications += count;
  element.close(count);
  return count;
}

void Subscription::encode_too_large(ua::Encoder& e, const MonitoredItem& item) {
  // MonitoredItemNotification {clientHandle, DataValue{StatusCode}}: mask 0x02 (status only).
  e.write_u32(item.client_handle);
  e.write_u8(0x02);
  e.write_u32(status::BadResponseTooLarge.value());
}

void Subscription::send_keep_alive(PendingPublish request) {
  // A keep-alive carries the sequence number the next NotificationMessage will have, and no data
  // (Part 4 §7.25).
  message_sent_ = true;
  more_notifications_ = false;
  ++counters_.publish_requests;
  respond(request, next_sequence_, false, false, [](ua::Encoder& e, ua::ByteBuffer&, size_t) {
    e.write_i32(0);
    return false;
  });
}

// PublishResponse (Part 4 §5.13.5.2), field by field as the generated codec would write it:
//   NodeId | ResponseHeader | subscriptionId | availableSequenceNumbers | moreNotifications |
//   NotificationMessage {sequenceNumber, publishTime, notificationData} | results | diagnosticInfos
template <class F>
void Subscription::respond(PendingPublish& request, uint32_t sequence_number, bool more, bool retain,
                           F&& message) {
  auto ch = request.open_channel();
  // The queue as it will be once this message is kept (the oldest may then have been dropped).
  const bool drops_oldest = retain && retained_count_ == retained_.size();
  // A data message is encoded straight into the retransmission slot it will be kept in, whose buffer
  // keeps its capacity: no copy for Republish, and no growing buffer per message however large (up to
  // limits.max_publish_response_size). The channel sends copies of it as chunks. A keep-alive is encoded
  // into a chunk buffer and sent as it is. Without a channel the message is still built: its
  // notifications are consumed and a data message is kept for Republish.
  thread_local ua::ByteBuffer orphan;
  Retained* slot =
      retain ? &retained_[(retained_head_ + (drops_oldest ? 0 : retained_count_)) % retained_.size()]
             : nullptr;
  ua::ByteBuffer buf = slot ? std::move(slot->bytes) : ch ? ch->acquire_buffer() : std::move(orphan);
  if (slot || !ch) {
    buf.clear();
    buf.resize(transport::kSymmetricPrefix);  // the headroom of acquire_buffer()
  }
  const size_t body_at = buf.size();
  ua::Encoder e(buf);
  ua::encode(e, ua::NodeId(0, ua::PublishResponse::binary_encoding_id));
  thread_local ua::ResponseHeader header;  // default fields encode without allocating
  header.timestamp = ua::DateTime::now();
  header.request_handle = request.request_handle();
  ua::encode(e, header);
  e.write_u32(id_);
  const size_t available = retained_count_ - (drops_oldest ? 1 : 0) + (retain ? 1 : 0);
  e.write_i32(static_cast<int32_t>(available));
  for (size_t i = drops_oldest ? 1 : 0; i < retained_count_; ++i) e.write_u32(retained_at(i).sequence_number);
  if (retain) e.write_u32(sequence_number);
  const size_t more_at = e.position();
  e.write_u8(more ? 1 : 0);
  const size_t message_at = e.position();
  e.write_u32(sequence_number);
  ua::encode(e, ua::DateTime::now());
  // Where the notifications must end for the response body to fit: the server's own bound
  // (limits.max_publish_response_size, so a client that accepts anything, 0 everywhere, still gets
  // messages of bounded memory), the client's maxResponseMessageSize (Part 4 §5.6.2) and the channel's
  // MaxMessageSize / MaxChunkCount (Part 6 §7.1.2.3). After the notifications come the
  // DataChangeNotification's diagnosticInfos, the results and the diagnosticInfos.
  size_t max_body = registry_.max_publish_response_size();
  if (ch) max_body = std::min(max_body, ch->max_response_body());
  if (const uint32_t m = session_->max_response_message_size; m != 0 && m < max_body) max_body = m;
  const size_t trailer = 4 + 4 + 4 * request.ack_results.size() + 4;
  const size_t limit = body_at + (max_body > trailer ? max_body - trailer : 0);
  if (message(e, buf, limit)) buf.data()[more_at] = 1;
  const size_t message_size = e.position() - message_at;
  request.ack_results.encode(e);
  e.write_i32(0);  // diagnosticInfos
  if (slot) {
    if (drops_oldest) {
      retained_head_ = (retained_head_ + 1) % retained_.size();
      --retained_count_;
      ++counters_.discarded;  // never acknowledged (Part 5 §12.15 DiscardedMessageCount)
    }
    ++retained_count_;  // `slot` is now retained_at(retained_count_ - 1)
    slot->sequence_number = sequence_number;
    slot->message_at = message_at;
    slot->message_size = message_size;
    slot->bytes = std::move(buf);
    if (!ch) return request.fault(status::BadSecureChannelClosed);  // nobody to answer: the claim ends
    if (!e.status().is_good()) return request.fault(e.status());
    return request.send_copy(*ch, slot->bytes);
  }
  if (!ch) {
    orphan = std::move(buf);
    return request.fault(status::BadSecureChannelClosed);  // nobody to answer: the claim ends
  }
  if (!e.status().is_good()) return request.fault(e.status());
  request.send_encoded(*ch, std::move(buf));
}

void Subscription::expire() {
  // Part 4 §5.13.1.2 #27: StatusChangeNotification with BadTimeout, then the subscription is gone.
  Session& session = *session_;
  session.status_changes.push_back(status_change(status::BadTimeout));
  session.subscriptions.erase(id_);  // the caller's shared_ptr keeps this alive until it returns
  serve_waiting(session);
}

ua::StatusCode Subscription::acknowledge(uint32_t sequence_number) {
  for (size_t i = 0; i < retained_count_; ++i) {
    if (retained_at(i).sequence_number != sequence_number) continue;
    // Close the gap by swapping towards the back, so every buffer stays in the ring with its capacity.
    for (size_t j = i; j + 1 < retained_count_; ++j) std::swap(retained_at(j), retained_at(j + 1));
    --retained_count_;
    return status::Good;
  }
  return status::BadSequenceNumberUnknown;
}

ua::StatusCode Subscription::republish(uint32_t sequence_number, std::span<const uint8_t>& out) const {
  for (size_t i = 0; i < retained_count_; ++i) {
    const Retained& r = retained_at(i);
    if (r.sequence_number == sequence_number) {
      out = {r.bytes.data() + r.message_at, r.message_size};
      return status::Good;
    }
  }
  return status::BadMessageNotAvailable;
}

std::vector<uint32_t> Subscription::available_sequence_numbers() const {
  std::vector<uint32_t> out;
  out.reserve(retained_count_);
  for (size_t i = 0; i < retained_count_; ++i) out.push_back(retained_at(i).sequence_number);
  return out;
}

}  // namespace opcuad::services
