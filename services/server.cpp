#include "services/server.hpp"

#include <asio/post.hpp>

#include "services/request.hpp"

namespace opcuad::services {

namespace status = ua::status;

// How a service relates to sessions (Part 4 §5.6: every service but discovery and session creation needs
// an activated session on the same secure channel).
enum class Needs : uint8_t { Nothing, Session, ActivatedSession };

struct Server::Entry {
  uint32_t type_id;
  Needs needs;
  void (*handler)(Server&, Call&, ua::Decoder&);
  std::string_view name;  // the service's name in metrics (Part 4 §5)
};

namespace {

using Entry = Server::Entry;

// The dispatch table: request binary encoding id -> handler. Services not listed (NodeManagement,
// Query, History, ...) get ServiceFault(BadServiceUnsupported) from the transport.
const Server::Entry* find_entry(uint32_t type_id) noexcept;
size_t entry_index(const Server::Entry* e) noexcept;

}  // namespace

ua::ResponseHeader response_header(const ua::RequestHeader& request, ua::StatusCode result) {
  ua::ResponseHeader h;
  set_response_header(h, request, result);
  return h;
}

void set_response_header(ua::ResponseHeader& h, const ua::RequestHeader& request, ua::StatusCode result) {
  h.timestamp = ua::DateTime::now();
  h.request_handle = request.request_handle;
  h.service_result = result;
  // The rest is empty in a fresh header; a reused one is cleared only if something was put there.
  if (!h.service_diagnostics.empty()) h.service_diagnostics = ua::DiagnosticInfo{};
  h.string_table.clear();
  if (!h.additional_header.is_empty() || !h.additional_header.type_id().is_null()) h.additional_header.reset();
}

namespace {
std::atomic<uint64_t> g_next_instance{1};
}  // namespace

namespace {
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
      unactivated_(config.limits.max_unactivated_sessions, config.limits.max_unactivated_sessions_per_address,
                   AddressCounter::WaitLimits{config.limits.max_waiting_sessions,
                                              config.limits.max_waiting_sessions_per_address}),
      logins_(std::make_unique<LoginVerifier>(config.users, login_limits(config.limits))) {}

bool Server::wakes_on_write(const ua::NodeId& node, const addressspace::ValueCell* cell) const noexcept {
  // Every writer of the configured namespaces (Write service, daemon simulator) calls notify_written();
  // namespace 0's live values are written by the daemon's status clock, which does not, and a computed
  // cell (addressspace::ValueSource) changes without any write.
  return cell && node.namespace_index() != 0 && !addressspace::ValueStore::computed(*cell);
}

// The shards go first: their sessions' subscriptions unregister themselves from members declared later.
Server::~Server() {
  logins_.reset();  // joins its threads, which post to the shards
  shards_.clear();
}

void Server::attach_shard(asio::io_context& ctx) {
  auto state = std::make_unique<ShardState>();
  state->context = &ctx;
  state->index = static_cast<unsigned>(shards_.size());
  state->participant = space_.reclaimer().register_participant();
  std::random_device rd;
  state->rng.seed((uint64_t{rd()} << 32) | rd());
  state->sweep = std::make_unique<asio::steady_timer>(ctx);
  state->sampler = std::make_unique<Sampler>(ctx, space_, watch_, state->index);
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
      session_count_.fetch_sub(closed, std::memory_order_relaxed);
      std::lock_guard lock(owners_mutex_);
      std::erase_if(owners_, [state](const auto& owner) { return owner.second == state; });
    });
  }
}

void Server::detach_shards() {
  for (auto& s : shards_) {
    ShardState* state = s.get();
    asio::post(*state->context, [state] {
      state->sweep->cancel();
      // Sessions the server ends while they are open (SessionAbortCount, Part 5 §12.9).
      stat_add(state->stats.sessions_aborted, state->sessions.size());
      state->parked.clear();
      state->sessions.clear();  // their subscriptions go with them
      state->sampler->stop();
    });
  }
  std::lock_guard lock(owners_mutex_);
  owners_.clear();
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

void Server::sweep(ShardState& shard) {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = shard.sessions.begin(); it != shard.sessions.end();) {
    if (it->second->expired(now)) {
      // Part 4 §5.6.2: an expired session and everything it holds is freed.
      report_session(*this, "session.expired", *it->second);
      {
        std::lock_guard lock(owners_mutex_);
        owners_.erase(it->first);
      }
      it = shard.sessions.erase(it);
      release_session();
      stat_add(shard.stats.sessions_timed_out);
    } else {
      ++it;
    }
  }
  expire_parked(shard, now);
  if (!shard.waiting_sessions.empty()) expire_waiting_sessions(*this, shard, now);
  see_store(shard);  // before the quiescent point: nothing of the old store survives it
  if (shard.participant) space_.reclaimer().quiescent(*shard.participant);
  shard.sweep->expires_after(std::chrono::milliseconds(250));
  shard.sweep->async_wait([this, &shard](std::error_code ec) {
    if (!ec) sweep(shard);
  });
}

void Server::adapt_to_store(ShardState& shard, const addressspace::NodeStore& store) {
  shard.store_generation = store.generation();
  for (auto& [id, subscription] : shard.subscription_index) subscription->resolve_items(store);
  // A point taken from `store` itself (a handler that saw it before this shard adapted) stays valid.
  auto stale = [&store](const auto& point) { return point.second.generation != store.generation(); };
  for (auto& [token, session] : shard.sessions) std::erase_if(session->continuations, stale);
  for (auto& session : shard.parked) std::erase_if(session->continuations, stale);
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
  // An io_context nobody attached: attach it now (tests that drive one channel directly).
  attach_shard(channel.context());
  cached = shards_.back().get();
  cached_for = instance_;
  return *cached;
}

bool Server::reserve_session() noexcept {
  uint32_t n = session_count_.load(std::memory_order_relaxed);
  do {
    if (n >= config_.limits.max_sessions) return false;
  } while (!session_count_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  return true;
}

void Server::release_session() noexcept { session_count_.fetch_sub(1, std::memory_order_relaxed); }

bool Server::reserve_subscription() noexcept {
  uint32_t n = subscription_count_.load(std::memory_order_relaxed);
  do {
    if (n >= config_.limits.max_subscriptions) return false;
  } while (!subscription_count_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  return true;
}

bool Server::reserve_monitored_item() noexcept {
  uint32_t n = monitored_item_count_.load(std::memory_order_relaxed);
  do {
    if (n >= config_.limits.max_monitored_items) return false;
  } while (!monitored_item_count_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  monitored_items_created_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void Server::add_session(ShardState& shard, std::unique_ptr<Session> session) {
  {
    std::lock_guard lock(owners_mutex_);
    owners_[session->authentication_token] = &shard;
  }
  const ua::NodeId token = session->authentication_token;
  shard.sessions.emplace(token, std::move(session));
}

void Server::remove_session(ShardState& shard, const ua::NodeId& token) { take_session(shard, token); }

std::unique_ptr<Session> Server::take_session(ShardState& shard, const ua::NodeId& token) {
  auto it = shard.sessions.find(token);
  if (it == shard.sessions.end()) return nullptr;
  std::unique_ptr<Session> session = std::move(it->second);
  shard.sessions.erase(it);
  release_session();
  std::lock_guard lock(owners_mutex_);
  owners_.erase(token);
  return session;
}

void Server::register_subscription(uint32_t id, ShardState& shard) {
  std::lock_guard lock(subscription_owners_mutex_);
  subscription_owners_[id] = &shard;
}

void Server::unregister_subscription(uint32_t id) noexcept {
  std::lock_guard lock(subscription_owners_mutex_);
  subscription_owners_.erase(id);
}

void Server::count_publishing_interval(double interval_ms, int delta) {
  std::lock_guard lock(intervals_mutex_);
  if (delta > 0) {
    ++intervals_[interval_ms];
  } else if (auto it = intervals_.find(interval_ms); it != intervals_.end() && --it->second == 0) {
    intervals_.erase(it);
  }
  publishing_interval_count_.store(static_cast<uint32_t>(intervals_.size()), std::memory_order_relaxed);
}

ShardState* Server::subscription_shard(uint32_t id) {
  std::lock_guard lock(subscription_owners_mutex_);
  auto it = subscription_owners_.find(id);
  return it == subscription_owners_.end() ? nullptr : it->second;
}

void Server::move_and_activate(transport::SecureChannel& channel, uint32_t request_id, ShardState& to,
                               ua::ActivateSessionRequest request) {
  const ua::NodeId token = request.request_header.authentication_token;
  ShardState* from = nullptr;
  {
    std::lock_guard lock(owners_mutex_);
    auto it = owners_.find(token);
    if (it != owners_.end()) from = it->second;
  }
  if (!from || from == &to) {
    return refuse_session(to, channel, request_id, request.request_header.request_handle,
                          status::BadSessionIdInvalid);
  }
  // Part 4 §5.6.3: the identity is checked first, here, and the session moves only when it belongs to
  // that user, so a failed attempt leaves the session where it was, untouched. The channel may close in
  // between: a moved session then stays on this shard, where the client may activate it again. The
  // client signature and the user token are over the session's last nonce, which lives on its shard: it
  // is fetched from there first, and the move is refused if another activation replaced it meanwhile.
  // The new channel's certificate and mode are compared with the creating channel's first, before any
  // signature or password is checked (session_rebind_refusal()).
  auto req = std::make_shared<ua::ActivateSessionRequest>(std::move(request));
  std::weak_ptr<transport::SecureChannel> weak = channel.weak_from_this();
  asio::post(*from->context, [this, from, &to, weak, request_id, req,
                              credentials = ChannelCredentials::of(channel)] {
    ua::ByteString nonce;
    ua::StatusCode refused = status::Good;
    auto found = from->sessions.find(req->request_header.authentication_token);
    if (found == from->sessions.end()) {
      refused = status::BadSessionIdInvalid;
    } else if (!found->second->activated) {
      refused = status::BadSecureChannelIdInvalid;  // its first activation belongs to its own channel
    } else if (refused = session_rebind_refusal(*found->second, credentials); refused.is_good()) {
      nonce = found->second->server_nonce;
    }
    asio::post(*to.context, [this, from, &to, weak, request_id, req, nonce, refused] {
      auto ch = weak.lock();
      if (!ch || ch->state() != transport::SecureChannel::State::Open) return;
      const uint32_t handle = req->request_header.request_handle;
      if (!refused.is_good()) return refuse_session(to, *ch, request_id, handle, refused);
      const ua::StatusCode signed_ok =
          check_client_signature(*this, *ch, req->client_signature, nonce.bytes());
      if (!signed_ok.is_good()) return refuse_session(to, *ch, request_id, handle, signed_ok);
      resolve_identity(
          *this, to, *ch, *req, nonce.bytes(),
          [this, from, &to, weak, request_id, req, nonce](ua::StatusCode identity, std::string user) {
            if (!identity.is_good()) {
              if (auto ch = weak.lock())
                refuse_session(to, *ch, request_id, req->request_header.request_handle, identity);
              return;
            }
            asio::post(*from->context, [this, from, &to, weak, request_id, req, nonce,
                                        user = std::move(user)]() mutable {
              std::shared_ptr<Session> moving;
              ua::StatusCode refused = status::Good;
              auto it = from->sessions.find(req->request_header.authentication_token);
              if (it == from->sessions.end()) {
                refused = status::BadSessionIdInvalid;
              } else if (!it->second->activated) {
                refused =
                    status::BadSecureChannelIdInvalid;  // its first activation belongs to its own channel
              } else if (it->second->user != user) {
                refused = status::BadUserAccessDenied;
              } else if (it->second->server_nonce != nonce) {
                refused = status::BadIdentityTokenRejected;  // activated again meanwhile: this proof is stale
              } else {
                // Subscriptions move with the session: their timers and sampler registrations belong to this
                // shard, so they leave it here (detach) and are rebuilt on the new one (attach) below. The
                // Publish requests queued on the old channel (which lives here) are rejected on it, as that
                // channel's requests now are (Part 4 §5.6.3); pending status changes move along.
                reject_publishes_from_other_channels(*it->second, 0);
                for (auto& [id, sub] : it->second->subscriptions) sub->detach();
                moving = std::move(it->second);
                from->sessions.erase(it);
              }
              asio::post(*to.context, [this, &to, weak, request_id, moving, refused, req,
                                       user = std::move(user)]() mutable {
                auto ch = weak.lock();
                if (!moving) {
                  if (ch) refuse_session(to, *ch, request_id, req->request_header.request_handle, refused);
                  return;
                }
                auto owned = std::make_unique<Session>(std::move(*moving));
                Session& session = *owned;
                for (auto& [id, sub] : session.subscriptions) sub->attach(to, session);
                add_session(to, std::move(owned));
                if (ch && ch->state() == transport::SecureChannel::State::Open) {
                  activate_session(*this, to, *ch, request_id, session, *req, std::move(user));
                }
              });
            });
          });
    });
  });
}

bool Server::on_request(transport::SecureChannel& channel, const transport::RequestContext& ctx, ua::Decoder& body) {
  const Entry* entry = find_entry(ctx.type_id);
  if (!entry) return false;
  ShardState& shard = shard_of(channel);
  // Counted per service on the shard's own block: a fault sent while the handler ran shows as a step of
  // the shard's fault counter, and the handler's time is one clock read more (the session check's read is
  // the start). No allocation, no locked instruction.
  const transport::TransportStats& transport_stats = channel.stats();
  const uint64_t faults_before = transport::TransportStats::get(transport_stats.service_faults);
  const auto start = std::chrono::steady_clock::now();
  see_store(shard);
  Session* session = serve(*entry, channel, ctx, shard, body, start);
  const auto took = std::chrono::steady_clock::now() - start;
  const size_t service = entry_index(entry);
  stat_add(shard.stats.requests[service]);
  const bool faulted = transport::TransportStats::get(transport_stats.service_faults) != faults_before;
  if (faulted) stat_add(shard.stats.faults[service]);
  // The session's own counters (Part 5 §12.11): plain increments on the session just used.
  if (session) session->counters.count(service, faulted);
  shard.stats.request_latency.record(took);
  stat_add(shard.stats.busy_ns, static_cast<uint64_t>(std::chrono::nanoseconds(took).count()));
  return true;
}

Session* Server::serve(const Entry& service, transport::SecureChannel& channel,
                       const transport::RequestContext& ctx, ShardState& shard, ua::Decoder& body,
                       std::chrono::steady_clock::time_point now) {
  const Entry* entry = &service;
  Call call{channel, ctx.request_id, shard, nullptr};
  if (entry->needs != Needs::Nothing) {
    // Every request starts with its RequestHeader: read it once here for the session checks.
    // RequestHeader starts {AuthenticationToken NodeId, Timestamp DateTime, RequestHandle UInt32, ...}:
    // read just those (the handler decodes the whole request anyway). The token's buffer is reused.
    thread_local ua::NodeId token;
    ua::Decoder peek = body;
    ua::decode(peek, token);
    peek.read_u64();
    const uint32_t request_handle = peek.read_u32();
    if (!peek.ok()) {
      channel.send_fault(ctx.request_id, 0, status::BadDecodingError);
      return nullptr;
    }
    auto it = shard.sessions.find(token);
    if (it == shard.sessions.end()) {
      if (entry->handler == handle_activate_session) {
        // Maybe the session lives on another shard: its client reconnected on a channel of this one.
        ua::ActivateSessionRequest request;
        ua::decode(body, request);
        if (!body.ok()) {
          refuse_session(shard, channel, ctx.request_id, request_handle, status::BadDecodingError);
        } else {
          move_and_activate(channel, ctx.request_id, shard, std::move(request));
        }
        return nullptr;
      }
      channel.send_fault(ctx.request_id, request_handle, status::BadSessionIdInvalid);
      return nullptr;
    }
    Session& s = *it->second;
    if (entry->needs == Needs::ActivatedSession && !s.activated) {
      ++s.counters.unauthorized;
      channel.send_fault(ctx.request_id, request_handle, status::BadSessionNotActivated);
      return nullptr;
    }
    // The authentication token is bound to the secure channel the session was created or last activated
    // on: every request but ActivateSession (which rebinds it) must come there, CloseSession included
    // (Part 4 §5.6.3, §5.6.4).
    if (entry->handler != handle_activate_session && s.channel_id != channel.id()) {
      ++s.counters.unauthorized;
      channel.send_fault(ctx.request_id, request_handle, status::BadSecureChannelIdInvalid);
      return nullptr;
    }
    s.last_activity = now;
    call.session = &s;
  }
  entry->handler(*this, call, body);
  // Every handler but CloseSession leaves its session in place (a parked one keeps its address); the
  // asynchronous halves (a login check, a move to another shard) look it up again when they finish.
  return entry->handler == handle_close_session ? nullptr : call.session;
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
    {
      std::lock_guard lock(owners_mutex_);
      owners_.erase(it->first);
    }
    it = shard.sessions.erase(it);
    release_session();
  }
}

namespace {

constexpr Entry kEntries[] = {
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

size_t entry_index(const Entry* e) noexcept {
  return static_cast<size_t>(e - kEntries);
}

const Entry* find_entry(uint32_t type_id) noexcept {
  for (const Entry& e : kEntries) {
    if (e.type_id == type_id) return &e;
  }
  return nullptr;
}

}  // namespace

size_t Server::service_count() noexcept {
  return std::size(kEntries);
}
std::string_view Server::service_name(size_t i) noexcept {
  return i < std::size(kEntries) ? kEntries[i].name : "";
}

ServiceTotals Server::totals() const noexcept {
  ServiceTotals t;
  for (const auto& shard : shards_) t.add(shard->stats);
  t.monitored_items_created = monitored_items_created_.load(std::memory_order_relaxed);
  t.current_sessions = session_count();
  t.current_subscriptions = subscription_count();
  t.current_monitored_items = monitored_item_count();
  t.publishing_intervals = publishing_interval_count();
  return t;
}

}  // namespace opcuad::services
