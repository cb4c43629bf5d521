// Session service set (Part 4 §5.6): CreateSession, ActivateSession, CloseSession, Cancel. The identity
// half of ActivateSession (tokens, signatures, re-activation on another channel) is session_identity.cpp.
#include <openssl/rand.h>
#include <asio/post.hpp>

#include <algorithm>
#include <cstring>
#include <optional>

#include "config/password.hpp"
#include "services/audit.hpp"
#include "services/handlers.hpp"
#include "services/publish_queue.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "services/session_crypto.hpp"
#include "services/session_events.hpp"
#include "services/subscription.hpp"
#include "services/user_token.hpp"
#include "transport/security/certificate.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;

// Session ids, authentication tokens and nonces protect sessions from other clients: they come from
// OpenSSL's CSPRNG (Part 4 §5.6.2: the authenticationToken must be unguessable). An empty value on an
// OpenSSL failure makes the caller refuse the request.
bool random_fill(void* out, size_t n) {
  return RAND_bytes(static_cast<unsigned char*>(out), static_cast<int>(n)) == 1;
}

std::optional<ua::ByteString> random_bytes(size_t n) {
  std::string bytes(n, '\0');
  if (!random_fill(bytes.data(), n)) return std::nullopt;
  return ua::ByteString(std::move(bytes));
}

std::optional<ua::Guid> random_guid() {
  ua::Guid g;
  uint8_t raw[16];
  if (!random_fill(raw, sizeof raw)) return std::nullopt;
  std::memcpy(&g.data1, raw, 4);
  std::memcpy(&g.data2, raw + 4, 2);
  std::memcpy(&g.data3, raw + 6, 2);
  std::memcpy(g.data4.data(), raw + 8, 8);
  return g;
}

}  // namespace

namespace {

// SessionSecurityDiagnosticsDataType.authenticationMechanism (Part 5 §12.12): the kind of the identity
// token the session was activated with (the UserTokenType names of Part 4 §7.43).
std::string_view authentication_mechanism(const ua::ActivateSessionRequest& request) {
  const ua::ExtensionObject& token = request.user_identity_token;
  if (token.get<ua::UserNameIdentityToken>()) return "UserName";
  if (token.get<ua::X509IdentityToken>()) return "Certificate";
  return "Anonymous";
}

void create_session(Server& server, ShardState& shard, transport::SecureChannel& channel, uint32_t request_id,
                    const ua::CreateSessionRequest& req, AddressCounter::Ticket ticket);

// Queues a CreateSession that found no unactivated-session slot (limits.max_waiting_sessions,
// max_waiting_sessions_per_address): it waits at most limits.max_session_wait_ms and its timeoutHint.
// False when waiting is off or full: the caller refuses it.
bool wait_for_slot(Server& server, Call& call, ua::CreateSessionRequest&& req) {
  double wait_ms = server.config().limits.max_session_wait_ms;
  if (const uint32_t hint = req.request_header.timeout_hint; hint != 0)
    wait_ms = std::min(wait_ms, double(hint));
  if (!(wait_ms >= 1)) return false;
  ShardState& shard = call.shard;
  const uint64_t key = ++shard.last_waiting_key;
  const std::string& address = call.channel.peer_address();
  // The grant runs on whichever thread freed the slot: it only posts to this shard.
  const uint64_t waiter = server.sessions().wait_unactivated(address, [&server, &shard, key] {
    asio::post(*shard.context, [&server, &shard, key] { grant_waiting_session(server, shard, key); });
  });
  if (!waiter) return false;
  WaitingSession w;
  w.key = key;
  w.waiter = waiter;
  w.address = address;
  w.channel = call.channel.weak_from_this();
  w.channel_id = call.channel.id();
  w.request_id = call.request_id;
  w.request = std::make_shared<ua::CreateSessionRequest>(std::move(req));
  w.deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(static_cast<int64_t>(wait_ms * 1000));
  shard.waiting_sessions.push_back(std::move(w));
  return true;
}

}  // namespace

void grant_waiting_session(Server& server, ShardState& shard, uint64_t key) {
  auto& waiting = shard.waiting_sessions;
  auto it =
      std::find_if(waiting.begin(), waiting.end(), [key](const WaitingSession& w) { return w.key == key; });
  if (it == waiting.end()) return;  // not reached: an entry leaves the list only here or after cancel()
  WaitingSession w = std::move(*it);
  waiting.erase(it);
  AddressCounter::Ticket ticket = server.sessions().adopt_unactivated(std::move(w.address));
  auto channel = w.channel.lock();
  // A channel that closed meanwhile: the ticket's release hands the slot to the next waiter.
  if (!channel || channel->state() != transport::SecureChannel::State::Open || channel->id() != w.channel_id)
    return;
  create_session(server, shard, *channel, w.request_id, *w.request, std::move(ticket));
}

void expire_waiting_sessions(Server& server, ShardState& shard, std::chrono::steady_clock::time_point now,
                             uint32_t closed_channel) {
  auto& waiting = shard.waiting_sessions;
  for (size_t i = 0; i < waiting.size();) {
    WaitingSession& w = waiting[i];
    std::shared_ptr<transport::SecureChannel> channel =
        w.channel_id == closed_channel ? nullptr : w.channel.lock();
    const bool gone = !channel || channel->state() != transport::SecureChannel::State::Open;
    // A waiter whose cancel() fails has its grant posted already: grant_waiting_session() takes it.
    if ((gone || now >= w.deadline) && server.sessions().cancel_wait(w.waiter)) {
      if (!gone) {
        report_session_refused(server.events(), w.address, "max_unactivated_sessions");
        refuse_session(shard, *channel, w.request_id, w.request->request_header.request_handle,
                       status::BadTooManySessions);
      }
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void refuse_session(ShardState& shard, transport::SecureChannel& channel, uint32_t request_id,
                    uint32_t handle, ua::StatusCode result) {
  stat_add(shard.stats.sessions_rejected);
  if (transport::is_security_fault(result)) stat_add(shard.stats.sessions_security_rejected);
  channel.send_fault(request_id, handle, result);
}

void handle_create_session(Server& server, Call& call, ua::Decoder& body) {
  ua::CreateSessionRequest req;
  if (!decode_request(call, body, req)) return;
  const uint32_t handle = req.request_header.request_handle;
  const security::ServerIdentity* identity = server.identity();
  const bool secure = secured(call.channel);
  if (secure) {
    // Part 4 §5.6.2: on a secured channel the client proves it holds the channel's certificate: its nonce
    // (32..128 bytes), its certificate (the same as the channel's) and its ApplicationUri (the
    // certificate's) are checked before anything is reserved or signed.
    if (req.client_nonce.size() < 32 || req.client_nonce.size() > 128) {
      return refuse_session(call.shard, call.channel, call.request_id, handle, status::BadNonceInvalid);
    }
    const std::span<const uint8_t> leaf = security::leaf_certificate(req.client_certificate.bytes());
    const std::span<const uint8_t> channel_leaf = call.channel.client_certificate();
    if (leaf.empty() || !std::equal(leaf.begin(), leaf.end(), channel_leaf.begin(), channel_leaf.end())) {
      return refuse_session(call.shard, call.channel, call.request_id, handle,
                            status::BadSecurityChecksFailed);
    }
    const auto uri = certificate_application_uri(leaf);
    if (!uri || *uri != req.client_description.application_uri.view()) {
      return refuse_session(call.shard, call.channel, call.request_id, handle,
                            status::BadCertificateUriInvalid);
    }
    if (!identity)
      return refuse_session(call.shard, call.channel, call.request_id, handle,
                            status::BadSecurityChecksFailed);
  }
  // A session not yet activated counts against its own, smaller limits (total and per client address),
  // so unauthenticated clients cannot fill the session table (docs/SECURITY.md). Beyond them the request
  // waits for a slot, within its own bounds, before it is refused.
  AddressCounter::Ticket ticket = server.sessions().reserve_unactivated(call.channel.peer_address());
  if (!ticket) {
    if (wait_for_slot(server, call, std::move(req))) return;  // `req` is gone only when it waits
    report_session_refused(server.events(), call.channel.peer_address(), "max_unactivated_sessions");
    return refuse_session(call.shard, call.channel, call.request_id, handle, status::BadTooManySessions);
  }
  create_session(server, call.shard, call.channel, call.request_id, req, std::move(ticket));
}

namespace {

// The audit event of a session created (audit.enabled).
void audit_created(Server& server, const Session& s, const ua::ByteString& certificate,
                   std::string_view entry) {
  if (!server.auditing()) return;
  server.raise_event(
      audit::create_session({*server.space().current(), server.config().application_uri, entry}, &s,
                            s.channel_id, certificate, s.timeout_ms, status::Good));
}

// CreateSession past its checks, holding its unactivated-session ticket: now or when a wait ends.
void create_session(Server& server, ShardState& shard, transport::SecureChannel& channel, uint32_t request_id,
                    const ua::CreateSessionRequest& req, AddressCounter::Ticket ticket) {
  const uint32_t handle = req.request_header.request_handle;
  const security::ServerIdentity* identity = server.identity();
  const bool secure = secured(channel);
  auto session_guid = random_guid();
  auto token_guid = random_guid();
  auto nonce = random_bytes(32);
  if (!session_guid || !token_guid || !nonce) {
    return refuse_session(shard, channel, request_id, handle, status::BadInternalError);
  }
  if (!server.sessions().reserve()) {
    report_session_refused(server.events(), channel.peer_address(), "max_sessions");
    return refuse_session(shard, channel, request_id, handle, status::BadTooManySessions);
  }
  auto s = std::make_unique<Session>();
  s->session_id = ua::NodeId(1, *session_guid);
  s->authentication_token = ua::NodeId(0, *token_guid);
  s->name = std::string(req.session_name.view().substr(0, 256));
  s->channel_id = channel.id();
  const auto& limits = server.config().limits;
  const double requested = req.requested_session_timeout;
  s->timeout_ms = requested == requested ? std::clamp(requested, limits.min_session_timeout_ms,
                                                      limits.max_session_timeout_ms)
                                         : limits.max_session_timeout_ms;  // NaN: the server chooses
  s->activation_timeout_ms = limits.unactivated_session_timeout_ms;
  s->unactivated = std::move(ticket);
  s->last_activity = std::chrono::steady_clock::now();
  s->server_nonce = std::move(*nonce);
  s->max_response_message_size = req.max_response_message_size;
  s->client_application_uri = std::string(req.client_description.application_uri.view().substr(0, 4096));
  s->client_application_name =
      std::string(req.client_description.application_name.text.view().substr(0, 256));
  s->client_address = channel.peer_address();
  const ChannelCredentials creator = ChannelCredentials::of(channel);
  s->creator_certificate = creator.certificate;
  s->creator_mode = creator.mode;
  s->described.connected = ua::DateTime::now();
  s->described.server_uri = std::string(req.server_uri.view().substr(0, 4096));
  s->described.endpoint_url = std::string(req.endpoint_url.view().substr(0, 4096));
  s->described.product_uri = std::string(req.client_description.product_uri.view().substr(0, 4096));
  s->described.application_type = req.client_description.application_type;

  ua::CreateSessionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.session_id = s->session_id;
  resp.authentication_token = s->authentication_token;
  resp.revised_session_timeout = s->timeout_ms;
  resp.server_nonce = s->server_nonce;
  resp.server_certificate = identity ? ua::ByteString::from_bytes(identity->certificate) : ua::ByteString();
  resp.server_endpoints = server.endpoints(req.endpoint_url.view());
  resp.max_request_message_size = server.config().limits.max_message_size;
  if (!secure) {
    report_session(server.events(), "session.created", *s);
    audit_created(server, *s, req.client_certificate, req.request_header.audit_entry_id.view());
    server.sessions().add(shard, std::move(s));
    stat_add(shard.stats.sessions_created);
    return channel.send(request_id, resp);
  }
  server.sessions().add(shard, std::move(s));

  // serverSignature: clientCertificate + clientNonce signed with the channel policy's algorithm, off this
  // shard. The session waits in the table meanwhile, unusable (its token is only in this response) and
  // holding its reservations; if the channel closes first it goes with the channel's other unactivated
  // sessions.
  const security::Policy& policy = channel.security_policy();
  auto sign = [policy = &policy, key = identity->private_key,
               signed_bytes = concat(req.client_certificate.bytes(), req.client_nonce.bytes())] {
    std::vector<uint8_t> signature(security::rsa_key_bytes(key.get()));
    if (signature.empty() || !security::asymmetric_sign(*policy, key.get(), signed_bytes, signature))
      signature.clear();
    return signature;
  };
  auto pending = std::make_shared<ua::CreateSessionResponse>(std::move(resp));
  // What the audit event needs of the request, kept only when auditing.
  ua::ByteString audit_certificate = server.auditing() ? req.client_certificate : ua::ByteString();
  std::string audit_entry = server.auditing() ? std::string(req.request_header.audit_entry_id.view()) : "";
  auto send = [&server, &shard, policy = &policy, weak = channel.weak_from_this(), request_id, handle,
               pending, audit_certificate = std::move(audit_certificate),
               audit_entry = std::move(audit_entry)](std::vector<uint8_t> signature) {
    auto open = weak.lock();
    if (!open || open->state() != transport::SecureChannel::State::Open) return;
    auto it = shard.sessions.find(pending->authentication_token);
    if (it == shard.sessions.end()) {  // expired meanwhile (limits.unactivated_session_timeout_ms)
      return refuse_session(shard, *open, request_id, handle, status::BadTimeout);
    }
    if (signature.empty()) {
      server.sessions().take(shard, pending->authentication_token);
      return refuse_session(shard, *open, request_id, handle, status::BadInternalError);
    }
    report_session(server.events(), "session.created", *it->second);
    audit_created(server, *it->second, audit_certificate, audit_entry);
    stat_add(shard.stats.sessions_created);
    pending->server_signature.algorithm = ua::String(std::string(policy->asymmetric_signature_uri));
    pending->server_signature.signature = ua::ByteString::from_bytes(signature);
    open->send(request_id, *pending);
  };
  if (!offload(server, shard, std::move(sign), std::move(send))) {
    server.sessions().take(shard, pending->authentication_token);
    refuse_session(shard, channel, request_id, handle, status::BadServerTooBusy);
  }
}

}  // namespace

void activate_session(Server& server, ShardState& shard, transport::SecureChannel& channel,
                      uint32_t request_id, Session& s, const ua::ActivateSessionRequest& req,
                      std::string user) {
  const uint32_t handle = req.request_header.request_handle;
  // Part 4 §5.6.3: the first activation comes on the channel that created the session; moving a session
  // to a new channel needs the same user.
  if (!s.activated && s.channel_id != channel.id()) {
    return refuse_session(shard, channel, request_id, handle, status::BadSecureChannelIdInvalid);
  }
  if (s.activated && s.channel_id != channel.id()) {
    if (const ua::StatusCode refused = session_rebind_refusal(s, ChannelCredentials::of(channel));
        !refused.is_good())
      return refuse_session(shard, channel, request_id, handle, refused);
    if (user != s.user)
      return refuse_session(shard, channel, request_id, handle, status::BadUserAccessDenied);
  }
  auto nonce = random_bytes(32);
  if (!nonce) return refuse_session(shard, channel, request_id, handle, status::BadInternalError);
  if (s.activated && s.channel_id != channel.id()) reject_publishes_from_other_channels(s, channel.id());
  s.channel_id = channel.id();  // (re)binds the session to this channel
  // Roles (Part 3 §4.8.2): anonymous sessions have Anonymous; a user AuthenticatedUser and its own.
  s.access =
      UserAccess{config::role::kAnonymous, server.config().security.anonymous_write, &server.role_table()};
  if (!user.empty()) {
    for (const auto& u : server.config().users) {
      if (u.name == user) s.access = UserAccess{u.roles, true, &server.role_table()};
    }
  }
  s.described.security_mode = channel.security_mode();
  s.described.security_policy_uri = channel.security_policy().uri;
  const std::span<const uint8_t> certificate = channel.client_certificate();
  if (!std::equal(certificate.begin(), certificate.end(), s.described.client_certificate.bytes().begin(),
                  s.described.client_certificate.bytes().end())) {
    s.described.client_certificate = ua::ByteString::from_bytes(certificate);
  }
  s.described.authentication = authentication_mechanism(req);
  // Another user now owns the session's subscriptions (Part 4 §5.6.3): each item is checked against the
  // new user's roles, as a reload checks them. One the new user may not read samples BadUserAccessDenied
  // once, then waits for a user or a reload that may read it (MonitoredItem::sample).
  const bool identity_changed = s.activated && user != s.user;
  s.user = std::move(user);
  if (identity_changed && !s.subscriptions.empty()) {
    const addressspace::NodeStore& store = *server.space().current();
    for (auto& [id, subscription] : s.subscriptions) subscription->resolve_items(store);
  }
  s.activated = true;
  s.unactivated.reset();
  channel.set_session_active();
  s.last_activity = std::chrono::steady_clock::now();
  s.server_nonce = std::move(*nonce);
  report_session(server.events(), "session.activated", s);
  if (server.auditing()) {
    server.raise_event(audit::activate_session({*server.space().current(), server.config().application_uri,
                                                req.request_header.audit_entry_id.view()},
                                               s, s.user, req.user_identity_token, s.channel_id,
                                               status::Good));
  }
  ua::ActivateSessionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.server_nonce = s.server_nonce;
  channel.send(request_id, resp);
}

void handle_activate_session(Server& server, Call& call, ua::Decoder& body) {
  // Kept until the identity is known: a user name's password is checked off this thread.
  auto req = std::make_shared<ua::ActivateSessionRequest>();
  if (!decode_request(call, body, *req)) return;
  if (call.session->channel_id != call.channel.id()) {
    // Another channel than the session's: refused before any signature or password is checked.
    const ua::StatusCode refused =
        !call.session->activated
            ? ua::StatusCode(status::BadSecureChannelIdInvalid)
            : session_rebind_refusal(*call.session, ChannelCredentials::of(call.channel));
    if (!refused.is_good()) {
      return refuse_session(call.shard, call.channel, call.request_id, req->request_header.request_handle,
                            refused);
    }
  }
  // Part 4 §5.6.3: the client signs serverCertificate + the last serverNonce; the user token is checked
  // against that nonce as well. A new nonce is issued only by a successful activation.
  const ua::ByteString nonce = call.session->server_nonce;
  const ua::StatusCode signed_ok =
      check_client_signature(server, call.channel, req->client_signature, nonce.bytes());
  if (!signed_ok.is_good()) {
    return refuse_session(call.shard, call.channel, call.request_id, req->request_header.request_handle,
                          signed_ok);
  }
  ShardState& shard = call.shard;
  const uint32_t request_id = call.request_id;
  std::weak_ptr<transport::SecureChannel> weak = call.channel.weak_from_this();
  resolve_identity(
      server, shard, call.channel, *req, nonce.bytes(),
      [&server, &shard, weak, request_id, req, nonce](ua::StatusCode identity, std::string user) {
        auto channel = weak.lock();
        if (!channel || channel->state() != transport::SecureChannel::State::Open) return;
        const uint32_t handle = req->request_header.request_handle;
        if (!identity.is_good()) {
          // A refused identity is what an auditor looks for first (Part 4 §6.5.3).
          auto it = shard.sessions.find(req->request_header.authentication_token);
          if (server.auditing() && it != shard.sessions.end()) {
            server.raise_event(audit::activate_session(
                {*server.space().current(), server.config().application_uri,
                 req->request_header.audit_entry_id.view()},
                *it->second, {}, req->user_identity_token, it->second->channel_id, identity));
          }
          return refuse_session(shard, *channel, request_id, handle, identity);
        }
        // The session may have ended or moved while the password was checked.
        auto it = shard.sessions.find(req->request_header.authentication_token);
        if (it == shard.sessions.end()) {
          return refuse_session(shard, *channel, request_id, handle, status::BadSessionIdInvalid);
        }
        // Another activation used this nonce meanwhile: this one's proof is stale.
        if (it->second->server_nonce != nonce) {
          return refuse_session(shard, *channel, request_id, handle, status::BadIdentityTokenRejected);
        }
        activate_session(server, shard, *channel, request_id, *it->second, *req, std::move(user));
      });
}

void handle_close_session(Server& server, Call& call, ua::Decoder& body) {
  ua::CloseSessionRequest req;
  if (!decode_request(call, body, req)) return;
  ua::CloseSessionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  // Part 4 §5.6.4: outstanding requests (queued Publishes) are answered BadSessionClosed. With
  // deleteSubscriptions FALSE the subscriptions outlive the session for a while (park_session), so that
  // a later session of the same user can take them over with TransferSubscriptions (the usual reconnect
  // of a client whose session was lost).
  report_session(server.events(), "session.closed", *call.session);
  if (server.auditing()) {
    server.raise_event(audit::close_session({*server.space().current(), server.config().application_uri,
                                             req.request_header.audit_entry_id.view()},
                                            *call.session, false));
  }
  if (req.delete_subscriptions ||
      !park_session(server, call.shard, req.request_header.authentication_token)) {
    close_subscriptions(*call.session, status::BadSessionClosed);
    server.sessions().take(call.shard, req.request_header.authentication_token);
  }
  stat_add(call.shard.stats.sessions_closed);
  call.channel.send(call.request_id, resp);
}

void handle_cancel(Server&, Call& call, ua::Decoder& body) {
  ua::CancelRequest req;
  if (!decode_request(call, body, req)) return;
  // Part 4 §5.6.5: every other service completes before the next request is read, so only queued Publish
  // requests can be pending.
  ua::CancelResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.cancel_count = cancel_publishes(*call.session, req.request_handle);
  call.channel.send(call.request_id, resp);
}

}  // namespace opcuad::services
