#include "services/server.hpp"

#include <algorithm>
#include <cassert>
#include <cstdlib>

#include <asio/post.hpp>

#include "services/access_control.hpp"
#include "services/audit.hpp"
#include "services/handlers.hpp"
#include "services/publish_queue.hpp"
#include "services/session_events.hpp"
#include "services/subscription.hpp"
#include "transport/security/asymmetric.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::services {

namespace {

std::atomic<uint64_t> g_next_instance{1};

LoginVerifier::Limits login_limits(const config::Limits& l) {
  LoginVerifier::Limits v;
  v.max_queued = l.max_queued_logins;
  v.max_failures = l.max_failed_logins_per_address;
  v.failure_window = std::chrono::milliseconds(static_cast<int64_t>(l.failed_login_window_ms));
  return v;
}

}  // namespace

Server::Server(addressspace::AddressSpace& space, const config::ServerConfig& config)
    : space_(space),
      config_(config),
      instance_(g_next_instance.fetch_add(1, std::memory_order_relaxed)),
      sessions_(config.limits),
      subscriptions_(space, config.limits.max_subscriptions, config.limits.max_monitored_items,
                     config.limits.max_publish_response_size),
      dispatcher_(*this, space),
      logins_(std::make_unique<LoginVerifier>(config.users, login_limits(config.limits))) {}

bool Server::wakes_on_write(const ua::NodeId& node, const addressspace::ValueCell* cell) const noexcept {
  // Every writer of the configured namespaces (Write service, daemon simulator) calls notify_written();
  // namespace 0's live values are written by the daemon's status clock, which does not, and a computed
  // cell (addressspace::ValueSource) changes without any write.
  return cell && node.namespace_index() != 0 && !addressspace::ValueStore::computed(*cell);
}

// The shards go first: their sessions' subscriptions give their slots back to the registries.
Server::~Server() {
  logins_.reset();  // joins its threads, which post to the shards
  shards_.clear();
}

void Server::attach_shard(asio::io_context& ctx) {
  auto state = std::make_unique<ShardState>();
  state->context = &ctx;
  state->index = static_cast<unsigned>(shards_.size());
  state->participant = space_.reclaimer().register_participant(/*hurried=*/true);
  state->sweep = std::make_unique<asio::steady_timer>(ctx);
  state->reclaim = std::make_unique<asio::steady_timer>(ctx);
  state->sampler = std::make_unique<Sampler>(ctx, space_, watch_, state->index);
  state->notifier_watch = &notifier_watch_;
  state->event_batch.reserve(EventInbox::kCapacity);
  ShardState* s = state.get();
  shards_.push_back(std::move(state));
  // Start the sweep on the shard's own thread.
  asio::post(ctx, [this, s] { sweep(*s); });
}

void Server::end_sessions(ua::StatusCode publish_result) {
  for (auto& s : shards_) {
    ShardState* state = s.get();
    asio::post(*state->context, [this, state, publish_result] {
      for (auto& [token, session] : state->sessions) {
        for (PendingPublish& p : session->publish_queue) p.fault(publish_result);
        session->publish_queue.clear();
      }
      const auto closed = static_cast<uint32_t>(state->sessions.size());
      state->sessions.clear();  // their subscriptions go with them
      state->parked.clear();
      sessions_.release(closed);
      sessions_.forget_shard(*state);
    });
  }
}

void Server::detach_shards() {
  for (auto& s : shards_) {
    ShardState* state = s.get();
    asio::post(*state->context, [state] {
      // cancel() alone is not enough: a sweep whose timer expired while the shard was busy (ending
      // thousands of sessions in one handler, end_sessions()) may already be queued to run with success.
      // The flag makes that completion a no-op instead of a re-arm that would keep the shard alive.
      state->detached = true;
      state->sweep->cancel();
      state->reclaim->cancel();
      for (auto& timer : state->alarm_timers) timer->cancel();  // pending alarm delays end with the shard
      // Sessions the server ends while they are open (SessionAbortCount, Part 5 §12.9).
      stat_add(state->stats.sessions_aborted, state->sessions.size());
      state->parked.clear();
      state->sessions.clear();  // their subscriptions go with them
      state->sampler->stop();
    });
  }
  sessions_.forget_owners();
}

std::array<uint64_t, 4> Server::sampling_lateness() const noexcept {
  std::array<uint64_t, 4> sum{};
  for (const auto& shard : shards_) {
    if (!shard->sampler) continue;
    const Sampler::Lateness& l = shard->sampler->lateness();
    sum[0] += l.samples.load(std::memory_order_relaxed);
    sum[1] += l.over_250us.load(std::memory_order_relaxed);
    sum[2] += l.over_1ms.load(std::memory_order_relaxed);
    sum[3] += l.over_5ms.load(std::memory_order_relaxed);
  }
  return sum;
}

void Server::notify_written(ShardState* origin, std::span<const addressspace::ValueCell* const> cells) {
  // Shard-local scratch of the calling thread: no allocation once warm, none at all when nobody watches.
  thread_local std::vector<uint64_t> masks;
  masks.clear();
  CellWatch::fence();  // the cells were stored before; see cell_watch.hpp
  uint64_t any = 0;
  for (const addressspace::ValueCell* cell : cells) {
    masks.push_back(watch_.watchers(cell));
    any |= masks.back();
  }
  if (any == 0) return;
  for (auto& s : shards_) {
    ShardState* shard = s.get();
    if (shard->index >= CellWatch::kMaxShards || !(any & (uint64_t{1} << shard->index))) continue;
    const uint64_t bit = uint64_t{1} << shard->index;
    std::vector<const addressspace::ValueCell*> batch;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (masks[i] & bit) batch.push_back(cells[i]);
    }
    if (shard == origin) {
      shard->sampler->on_written(batch);
    } else {
      asio::post(*shard->context, [shard, batch = std::move(batch)] { shard->sampler->on_written(batch); });
    }
  }
}

void Server::raise_event(std::shared_ptr<const EventRecord> record) {
  if (!record) return;
  uint64_t any = 0;
  for (const addressspace::NodeIndex n : record->notifiers()) any |= notifier_watch_.watchers(n);
  if (any == 0) return;
  for (auto& s : shards_) {
    ShardState* shard = s.get();
    // A shard past the watch's 64 bits has none: it gets every event somebody watches and checks it.
    if (shard->index < NotifierWatch::kMaxShards && !(any & (uint64_t{1} << shard->index))) continue;
    EventInbox& in = shard->inbox;
    if (!in.push(record)) continue;  // full: the drain that is pending reports the loss
    if (!in.wake_pending.exchange(true, std::memory_order_acq_rel)) {
      asio::post(*shard->context, [this, shard] { drain_events(*shard); });
    }
  }
}

void Server::audit_certificate(std::span<const uint8_t> chain, ua::StatusCode status,
                               std::string_view action) {
  if (!auditing() || shards_.empty()) return;
  std::span<const uint8_t> leaf = security::leaf_certificate(chain);
  if (leaf.empty()) leaf = chain;  // not DER: what the client sent
  // One byte past the bound is enough for the record to leave it out (audit::kMaxCertificateBytes).
  leaf = leaf.first(std::min(leaf.size(), audit::kMaxCertificateBytes + 1));
  ShardState* first = shards_.front().get();
  asio::post(*first->context, [this, first, der = std::vector<uint8_t>(leaf.begin(), leaf.end()), status,
                               action = std::string(action)] {
    if (first->detached) return;
    raise_event(
        audit::certificate_rejected({*space_.current(), config_.application_uri, {}}, der, status, action));
  });
}

void Server::on_certificate_refused(transport::SecureChannel& /*channel*/, std::span<const uint8_t> chain,
                                    ua::StatusCode status) {
  audit_certificate(chain, status, "SecureChannel/OpenSecureChannel");
}

uint64_t Server::events_dropped() const noexcept {
  return events_dropped_full() + events_dropped_stale();
}

uint64_t Server::events_dropped_full() const noexcept {
  uint64_t n = 0;
  for (const auto& s : shards_) n += s->inbox.dropped();
  return n;
}

uint64_t Server::events_dropped_stale() const noexcept {
  uint64_t n = 0;
  for (const auto& s : shards_) n += s->events_stale.load(std::memory_order_relaxed);
  return n;
}

// On the shard: every record of its inbox to every event item on one of the record's notifiers. An item
// sits on one notifier and a record's notifiers are distinct, so each item sees each event once.
void Server::drain_events(ShardState& shard) {
  EventInbox& in = shard.inbox;
  in.wake_pending.store(false, std::memory_order_release);  // a record pushed from now on posts again
  // At most one ring's worth per drain, so that producers that never stop cannot hold the shard here.
  for (size_t i = 0; i < EventInbox::kCapacity; ++i) {
    auto record = in.pop();
    if (!record) break;
    shard.event_batch.push_back(std::move(record));  // reserved: no allocation
  }
  const uint64_t lost = in.take_lost();
  if (shard.event_batch.size() == EventInbox::kCapacity &&
      !in.wake_pending.exchange(true, std::memory_order_acq_rel)) {
    asio::post(*shard.context, [this, s = &shard] { drain_events(*s); });  // more may be waiting
  }
  if (shard.detached) return shard.event_batch.clear();
  see_store(shard, space_);
  const addressspace::NodeStore* store = space_.current();
  // Part 4 §5.12.1.5: the EventQueueOverflowEventType event an item's full queue gets; built once per
  // drain, when first needed.
  std::shared_ptr<const EventRecord> overflow;
  auto overflow_view = [&]() -> const EventView& {
    if (!overflow) overflow = overflow_event(*store);
    return *overflow;
  };
  auto queue = [&](MonitoredItem& item, const EventView* event) {
    EventItemState& ev = *item.event();
    const bool overflowed = event ? ev.add(*event, item.queue_capacity(), item.discard_oldest, overflow_view)
                                  : ev.note_loss(item.queue_capacity(), item.discard_oldest, overflow_view);
    if (overflowed) {
      ++item.subscription->counters().event_queue_overflows;
      stat_add(shard.stats.event_queue_overflows);
    }
    if (event) stat_add(shard.stats.events_queued);
    item.pending = !ev.empty();
    if (item.pending) item.subscription->on_item_queued(item);
  };
  if (lost > 0) {
    // Records were dropped for this shard (its inbox was full): any item may have lost one.
    for (auto& [notifier, items] : shard.event_items) {
      for (MonitoredItem* item : items) {
        if (item->mode() != ua::MonitoringMode::Disabled) queue(*item, nullptr);
      }
    }
  }
  for (const auto& record : shard.event_batch) {
    if (record->generation() != shard.store_generation) {
      // Its type and notifiers are indexes of a store this shard has left (a reload in between).
      shard.events_stale.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    for (const addressspace::NodeIndex n : record->notifiers()) {
      auto it = shard.event_items.find(n);
      if (it == shard.event_items.end()) continue;
      for (MonitoredItem* item : it->second) {
        if (item->mode() == ua::MonitoringMode::Disabled) continue;
        const Session* session = item->subscription->session();
        if (!session ||
            !access_control::may_receive_event(*store, record->source(), record->readers(), session->access))
          continue;
        if (!item->event()->matches(*record)) continue;
        queue(*item, record.get());
      }
    }
  }
  shard.event_batch.clear();
}

std::shared_ptr<const EventRecord> Server::overflow_event(const addressspace::NodeStore& store) {
  // Part 5 §6.4.34: SourceNode the Server object, SourceName "Internal/EventQueueOverflow".
  EventBuilder b(store, ua::NodeId(0, ua::id::EventQueueOverflowEventType),
                 store.find(ua::NodeId(0, ua::id::Server)));
  std::shared_ptr<const EventRecord> out;
  if (b.valid()) {
    b.set(addressspace::event_field::kSourceName, ua::Variant(ua::String("Internal/EventQueueOverflow")));
    b.message("Event queue overflow");
    out = b.build();
  }
  if (!out) out = std::make_shared<const EventRecord>();  // no event types: an empty event
  return out;
}

void Server::queue_event(ShardState& shard, MonitoredItem& item, const EventRecord& event, bool unfiltered) {
  EventItemState* ev = item.event();
  if (!ev || item.mode() == ua::MonitoringMode::Disabled) return;
  if (!unfiltered && !ev->matches(event)) return;
  std::shared_ptr<const EventRecord> overflow;
  auto overflow_view = [&]() -> const EventView& {
    if (!overflow) overflow = overflow_event(*space_.current());
    return *overflow;
  };
  if (ev->add(event, item.queue_capacity(), item.discard_oldest, overflow_view)) {
    ++item.subscription->counters().event_queue_overflows;
    stat_add(shard.stats.event_queue_overflows);
  }
  stat_add(shard.stats.events_queued);
  item.pending = !ev->empty();
  if (item.pending) item.subscription->on_item_queued(item);
}

void Server::evaluate_alarms(ShardState* origin, const addressspace::NodeStore& store,
                             std::span<const addressspace::NodeIndex> inputs,
                             addressspace::EpochReclaimer::Participant& p) {
  const addressspace::ConditionSpecs* specs = store.condition_specs();
  if (!specs) return;
  // The written values before any look at a condition's lock word (alarm_eval.cpp, judging without the
  // lock).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  ua::DateTime now;  // read from the clock when a condition needs judging under its lock
  for (const addressspace::NodeIndex input : inputs) {
    for (const uint32_t i : specs->watching(input)) {
      const addressspace::ConditionSpec& spec = specs->all()[i];
      if (alarm::quiet(spec)) continue;
      if (now.is_null()) now = ua::DateTime::now();
      alarm::Outcome out = alarm::evaluate(store, space_.values(), p, spec, now, false);
      deliver_alarm(origin, spec, out);
    }
  }
}

void Server::evaluate_all_alarms(addressspace::EpochReclaimer::Participant& p) {
  const addressspace::NodeStore* store = space_.current();
  const addressspace::ConditionSpecs* specs = store ? store->condition_specs() : nullptr;
  if (!specs) return;
  const ua::DateTime now = ua::DateTime::now();
  for (const addressspace::ConditionSpec& spec : specs->all()) {
    alarm::Outcome out = alarm::evaluate(*store, space_.values(), p, spec, now, true);
    deliver_alarm(nullptr, spec, out);
  }
}

void Server::deliver_alarm(ShardState* origin, const addressspace::ConditionSpec& spec, alarm::Outcome& out) {
  if (out.persist) condition_changes_.fetch_add(1, std::memory_order_acq_rel);
  if (out.event) raise_event(std::move(out.event));
  if (out.cell_count > 0) notify_written(origin, out.written());
  if (out.delay_ms == 0 || shards_.empty()) return;
  const addressspace::NodeStore* store = space_.current();
  ua::NodeId condition = store->node_id(spec.node);
  if (origin) return arm_alarm_delay(*origin, std::move(condition), out.delay_ms);
  ShardState* first = shards_.front().get();
  asio::post(*first->context, [this, first, condition = std::move(condition), ms = out.delay_ms]() mutable {
    arm_alarm_delay(*first, std::move(condition), ms);
  });
}

// On `shard`: judges the condition again once its delay is over (the store may have been reloaded
// meanwhile: the condition is found again by NodeId).
void Server::arm_alarm_delay(ShardState& shard, ua::NodeId condition, uint32_t delay_ms) {
  if (shard.detached) return;
  auto timer = std::make_shared<asio::steady_timer>(*shard.context, std::chrono::milliseconds(delay_ms));
  shard.alarm_timers.push_back(timer);
  timer->async_wait([this, &shard, timer, condition = std::move(condition)](std::error_code ec) {
    auto& timers = shard.alarm_timers;
    if (auto it = std::find(timers.begin(), timers.end(), timer); it != timers.end()) {
      *it = std::move(timers.back());
      timers.pop_back();
    }
    if (ec || shard.detached || !shard.participant) return;
    const addressspace::NodeStore* store = space_.current();
    const addressspace::ConditionSpecs* specs = store->condition_specs();
    const addressspace::ConditionSpec* spec = specs ? specs->find(store->find(condition)) : nullptr;
    if (!spec) return;
    alarm::Outcome out =
        alarm::evaluate(*store, space_.values(), *shard.participant, *spec, ua::DateTime::now(), true, true);
    deliver_alarm(&shard, *spec, out);
  });
}

void Server::sweep(ShardState& shard) {
  if (shard.detached) return;  // see detach_shards()
  const auto now = std::chrono::steady_clock::now();
  for (auto it = shard.sessions.begin(); it != shard.sessions.end();) {
    if (it->second->expired(now)) {
      // Part 4 §5.6.2: an expired session and everything it holds is freed.
      report_session(events_, "session.expired", *it->second);
      if (auditing()) {
        raise_event(
            audit::close_session({*space_.current(), config_.application_uri, {}}, *it->second, true));
      }
      it = sessions_.erase(shard, it);
      stat_add(shard.stats.sessions_timed_out);
    } else {
      ++it;
    }
  }
  expire_parked(shard, now);
  if (!shard.waiting_sessions.empty()) expire_waiting_sessions(*this, shard, now);
  see_store(shard, space_);  // before the quiescent point: nothing of the old store survives it
  if (shard.participant) space_.reclaimer().quiescent(*shard.participant);
  reclaim_soon(shard);
  shard.sweep->expires_after(std::chrono::milliseconds(250));
  shard.sweep->async_wait([this, &shard](std::error_code ec) {
    if (!ec) sweep(shard);
  });
}

void Server::reclaim_soon(ShardState& shard) {
  if (shard.reclaiming || shard.detached || !shard.participant || space_.reclaimer().waiting() == 0) return;
  shard.reclaiming = true;
  shard.reclaim->expires_after(kReclaimPeriod);
  shard.reclaim->async_wait([this, &shard](std::error_code ec) {
    shard.reclaiming = false;
    if (ec || shard.detached) return;
    see_store(shard, space_);  // as in sweep(): nothing of an old store survives the quiescent point
    space_.reclaimer().quiescent(*shard.participant);
    reclaim_soon(shard);
  });
}

ShardState& Server::shard_of(transport::SecureChannel& channel) {
  // Keyed by instance id, not address: a later Server may reuse a destroyed one's address.
  thread_local ShardState* cached = nullptr;
  thread_local uint64_t cached_for = 0;
  if (cached_for == instance_ && cached->context == &channel.context()) return *cached;
  for (auto& s : shards_) {
    if (s->context == &channel.context()) {
      cached = s.get();
      cached_for = instance_;
      return *s;
    }
  }
  // Every shard is attached before traffic (attach_shard(); the daemon and every test harness do so): a
  // channel on an io_context nobody attached is a wiring error, never something to repair on the request
  // path.
  assert(false && "a channel on an io_context that was not attached to the Server");
  std::abort();
}

bool Server::on_request(transport::SecureChannel& channel, const transport::RequestContext& ctx,
                        ua::Decoder& body) {
  const ServiceEntry* entry = Dispatcher::find(ctx.type_id);
  if (!entry) return false;
  ShardState& shard = shard_of(channel);
  dispatcher_.dispatch(*entry, shard, channel, ctx, body);
  if (space_.reclaimer().waiting() != 0 && shard.participant) [[unlikely]] {
    // The request is over and holds nothing: a quiescent point, so that the boxes a stream of Writes
    // replaces come back to this thread after a request or two instead of after a period.
    see_store(shard, space_);
    space_.reclaimer().quiescent(*shard.participant);
    reclaim_soon(shard);
  }
  return true;
}

void Server::on_channel_closed(transport::SecureChannel& channel) {
  // An activated session outlives its channel (Part 4 §5.6): its client may re-activate it on a new
  // channel before it times out. One never activated cannot be: its first ActivateSession must come on
  // the channel that created it (Part 4 §5.6.3), so it is dropped now instead of holding its slot and its
  // ticket against max_unactivated_sessions until unactivated_session_timeout_ms. Such sessions are few
  // (that limit), so the shard's table is walked only while some exist anywhere.
  // A CreateSession of this channel still waiting for a slot is withdrawn at once.
  if (unactivated_session_count() == 0 && waiting_session_count() == 0) return;
  ShardState& shard = shard_of(channel);
  const uint32_t id = channel.id();
  if (!shard.waiting_sessions.empty()) {
    expire_waiting_sessions(*this, shard, std::chrono::steady_clock::time_point::min(), id);
  }
  for (auto it = shard.sessions.begin(); it != shard.sessions.end();) {
    const Session& s = *it->second;
    if (s.activated || s.channel_id != id) {
      ++it;
      continue;
    }
    it = sessions_.erase(shard, it);
  }
}

ServiceTotals Server::totals() const noexcept {
  ServiceTotals t;
  for (const auto& shard : shards_) t.add(shard->stats);
  t.monitored_items_created = subscriptions_.monitored_items_created();
  t.current_sessions = session_count();
  t.current_subscriptions = subscription_count();
  t.current_monitored_items = monitored_item_count();
  t.publishing_intervals = publishing_interval_count();
  return t;
}

}  // namespace opcuad::services
