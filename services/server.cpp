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
};

namespace {

using Entry = Server::Entry;

// The dispatch table: request binary encoding id -> handler. Services not listed (NodeManagement,
// Query, History, ...) get ServiceFault(BadServiceUnsupported) from the transport.
const Server::Entry* find_entry(uint32_t type_id) noexcept;

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
      unactivated_(config.limits.max_unactivated_sessions, config.limits.max_unactivated_sessions_per_address),
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
    } else {
      ++it;
    }
  }
  expire_parked(shard, now);
  if (shard.participant) space_.reclaimer().quiescent(*shard.participant);
  shard.sweep->expires_after(std::chrono::milliseconds(250));
  shard.sweep->async_wait([this, &shard](std::error_code ec) {
    if (!ec) sweep(shard);
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
    return channel.send_fault(request_id, request.request_header.request_handle, status::BadSessionIdInvalid);
  }
  // Part 4 §5.6.3: the identity is checked first, here, and the session moves only when it belongs to
  // that user, so a failed attempt leaves the session where it was, untouched. The channel may close in
  // between: a moved session then stays on this shard, where the client may activate it again.
  auto req = std::make_shared<ua::ActivateSessionRequest>(std::move(request));
  std::weak_ptr<transport::SecureChannel> weak = channel.weak_from_this();
  resolve_identity(*this, to, channel, req->user_identity_token,
                   [this, from, &to, weak, request_id, req](ua::StatusCode identity, std::string user) {
    if (!identity.is_good()) {
      if (auto ch = weak.lock()) ch->send_fault(request_id, req->request_header.request_handle, identity);
      return;
    }
    asio::post(*from->context, [this, from, &to, weak, request_id, req, user = std::move(user)]() mutable {
      std::shared_ptr<Session> moving;
      ua::StatusCode refused = status::Good;
      auto it = from->sessions.find(req->request_header.authentication_token);
      if (it == from->sessions.end()) {
        refused = status::BadSessionIdInvalid;
      } else if (!it->second->activated) {
        refused = status::BadSecureChannelIdInvalid;  // its first activation belongs to its own channel
      } else if (it->second->user != user) {
        refused = status::BadUserAccessDenied;
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
      asio::post(*to.context, [this, &to, weak, request_id, moving, refused, req, user = std::move(user)]() mutable {
        auto ch = weak.lock();
        if (!moving) {
          if (ch) ch->send_fault(request_id, req->request_header.request_handle, refused);
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
}

bool Server::on_request(transport::SecureChannel& channel, const transport::RequestContext& ctx, ua::Decoder& body) {
  const Entry* entry = find_entry(ctx.type_id);
  if (!entry) return false;
  ShardState& shard = shard_of(channel);
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
      return true;
    }
    auto it = shard.sessions.find(token);
    if (it == shard.sessions.end()) {
      if (entry->handler == handle_activate_session) {
        // Maybe the session lives on another shard: its client reconnected on a channel of this one.
        ua::ActivateSessionRequest request;
        ua::decode(body, request);
        if (!body.ok()) {
          channel.send_fault(ctx.request_id, request_handle, status::BadDecodingError);
        } else {
          move_and_activate(channel, ctx.request_id, shard, std::move(request));
        }
        return true;
      }
      channel.send_fault(ctx.request_id, request_handle, status::BadSessionIdInvalid);
      return true;
    }
    Session& s = *it->second;
    if (entry->needs == Needs::ActivatedSession && !s.activated) {
      channel.send_fault(ctx.request_id, request_handle, status::BadSessionNotActivated);
      return true;
    }
    // The authentication token is bound to the secure channel the session was created or last activated
    // on: every request but ActivateSession (which rebinds it) must come there, CloseSession included
    // (Part 4 §5.6.3, §5.6.4).
    if (entry->handler != handle_activate_session && s.channel_id != channel.id()) {
      channel.send_fault(ctx.request_id, request_handle, status::BadSecureChannelIdInvalid);
      return true;
    }
    s.last_activity = std::chrono::steady_clock::now();
    call.session = &s;
  }
  entry->handler(*this, call, body);
  return true;
}

void Server::on_channel_closed(transport::SecureChannel&) {
  // Sessions outlive their channel (Part 4 §5.6): a client may reactivate them on a new channel
  // before they time out. Nothing to do until subscriptions need their channel.
}

namespace {

constexpr Entry kEntries[] = {
    {ua::GetEndpointsRequest::binary_encoding_id, Needs::Nothing, handle_get_endpoints},
    {ua::FindServersRequest::binary_encoding_id, Needs::Nothing, handle_find_servers},
    {ua::CreateSessionRequest::binary_encoding_id, Needs::Nothing, handle_create_session},
    {ua::ActivateSessionRequest::binary_encoding_id, Needs::Session, handle_activate_session},
    {ua::CloseSessionRequest::binary_encoding_id, Needs::Session, handle_close_session},
    {ua::CancelRequest::binary_encoding_id, Needs::ActivatedSession, handle_cancel},
    {ua::ReadRequest::binary_encoding_id, Needs::ActivatedSession, handle_read},
    {ua::WriteRequest::binary_encoding_id, Needs::ActivatedSession, handle_write},
    {ua::BrowseRequest::binary_encoding_id, Needs::ActivatedSession, handle_browse},
    {ua::BrowseNextRequest::binary_encoding_id, Needs::ActivatedSession, handle_browse_next},
    {ua::TranslateBrowsePathsToNodeIdsRequest::binary_encoding_id, Needs::ActivatedSession, handle_translate},
    {ua::RegisterNodesRequest::binary_encoding_id, Needs::ActivatedSession, handle_register_nodes},
    {ua::UnregisterNodesRequest::binary_encoding_id, Needs::ActivatedSession, handle_unregister_nodes},
    {ua::CallRequest::binary_encoding_id, Needs::ActivatedSession, handle_call},
    {ua::CreateSubscriptionRequest::binary_encoding_id, Needs::ActivatedSession, handle_create_subscription},
    {ua::ModifySubscriptionRequest::binary_encoding_id, Needs::ActivatedSession, handle_modify_subscription},
    {ua::SetPublishingModeRequest::binary_encoding_id, Needs::ActivatedSession, handle_set_publishing_mode},
    {ua::DeleteSubscriptionsRequest::binary_encoding_id, Needs::ActivatedSession, handle_delete_subscriptions},
    {ua::TransferSubscriptionsRequest::binary_encoding_id, Needs::ActivatedSession, handle_transfer_subscriptions},
    {ua::PublishRequest::binary_encoding_id, Needs::ActivatedSession, handle_publish},
    {ua::RepublishRequest::binary_encoding_id, Needs::ActivatedSession, handle_republish},
    {ua::CreateMonitoredItemsRequest::binary_encoding_id, Needs::ActivatedSession, handle_create_monitored_items},
    {ua::ModifyMonitoredItemsRequest::binary_encoding_id, Needs::ActivatedSession, handle_modify_monitored_items},
    {ua::DeleteMonitoredItemsRequest::binary_encoding_id, Needs::ActivatedSession, handle_delete_monitored_items},
    {ua::SetMonitoringModeRequest::binary_encoding_id, Needs::ActivatedSession, handle_set_monitoring_mode},
    {ua::SetTriggeringRequest::binary_encoding_id, Needs::ActivatedSession, handle_set_triggering},
};

const Entry* find_entry(uint32_t type_id) noexcept {
  for (const Entry& e : kEntries) {
    if (e.type_id == type_id) return &e;
  }
  return nullptr;
}

}  // namespace

}  // namespace opcuad::services
