// Session service set (Part 4 §5.6): CreateSession, ActivateSession, CloseSession, Cancel.
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "config/password.hpp"
#include "services/request.hpp"
#include "services/session_events.hpp"

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

void resolve_identity(Server& server, ShardState& shard, transport::SecureChannel& channel,
                      const ua::ExtensionObject& token, IdentityDone done) {
  const auto& cfg = server.config();
  // Every refusal is an operator event with the claimed user name and the address (never the password).
  const auto* claimed = token.get<ua::UserNameIdentityToken>();
  IdentityDone then =
      [&server, peer = channel.peer_address(),
       user = claimed ? std::string(claimed->user_name.view().substr(0, transport::kMaxFieldValue))
                      : std::string(),
       done = std::move(done)](ua::StatusCode result, std::string who) {
        if (!result.is_good()) report_login_failed(server, peer, user, result);
        done(result, std::move(who));
      };
  if (token.is_empty()) {
    // Part 4 §5.6.3: a null token means anonymous.
    if (!cfg.allow_anonymous) return then(status::BadIdentityTokenRejected, {});
    return then(status::Good, {});
  }
  if (const auto* anon = token.get<ua::AnonymousIdentityToken>()) {
    if (!cfg.allow_anonymous) return then(status::BadIdentityTokenRejected, {});
    if (!anon->policy_id.empty() && anon->policy_id.view() != "anonymous") return then(status::BadIdentityTokenInvalid, {});
    return then(status::Good, {});
  }
  if (const auto* login = token.get<ua::UserNameIdentityToken>()) {
    if (cfg.users.empty() || login->policy_id.view() != "username") return then(status::BadIdentityTokenInvalid, {});
    // With SecurityPolicy None the password arrives unencrypted; encrypted secrets come with security.
    if (!login->encryption_algorithm.empty()) return then(status::BadIdentityTokenInvalid, {});
    // The password check runs on the verifier's threads; `then` comes back to this shard.
    return server.logins().submit(channel.peer_address(), std::string(login->user_name.view()),
                                  std::string(login->password.view()), *shard.context, std::move(then));
  }
  then(status::BadIdentityTokenInvalid, {});
}

void handle_create_session(Server& server, Call& call, ua::Decoder& body) {
  ua::CreateSessionRequest req;
  if (!decode_request(call, body, req)) return;
  const uint32_t handle = req.request_header.request_handle;
  // A session not yet activated counts against its own, smaller limits (total and per client address),
  // so unauthenticated clients cannot fill the session table (docs/SECURITY.md).
  AddressCounter::Ticket ticket = server.reserve_unactivated(call.channel.peer_address());
  if (!ticket) {
    report_session_refused(server, call.channel.peer_address(), "max_unactivated_sessions");
    return call.channel.send_fault(call.request_id, handle, status::BadTooManySessions);
  }
  auto session_guid = random_guid();
  auto token_guid = random_guid();
  auto nonce = random_bytes(32);
  if (!session_guid || !token_guid || !nonce) return call.channel.send_fault(call.request_id, handle, status::BadInternalError);
  if (!server.reserve_session()) {
    report_session_refused(server, call.channel.peer_address(), "max_sessions");
    return call.channel.send_fault(call.request_id, handle, status::BadTooManySessions);
  }
  auto s = std::make_unique<Session>();
  ShardState& shard = call.shard;
  s->session_id = ua::NodeId(1, *session_guid);
  s->authentication_token = ua::NodeId(0, *token_guid);
  s->name = std::string(req.session_name.view().substr(0, 256));
  s->channel_id = call.channel.id();
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
  s->client_address = call.channel.peer_address();

  ua::CreateSessionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.session_id = s->session_id;
  resp.authentication_token = s->authentication_token;
  resp.revised_session_timeout = s->timeout_ms;
  resp.server_nonce = s->server_nonce;
  resp.server_certificate = ua::ByteString();
  resp.server_endpoints = server.endpoints(req.endpoint_url.view());
  resp.max_request_message_size = server.config().limits.max_message_size;
  report_session(server, "session.created", *s);
  server.add_session(shard, std::move(s));
  call.channel.send(call.request_id, resp);
}

void activate_session(Server& server, ShardState&, transport::SecureChannel& channel, uint32_t request_id,
                      Session& s, const ua::ActivateSessionRequest& req, std::string user) {
  const uint32_t handle = req.request_header.request_handle;
  // Part 4 §5.6.3: the first activation comes on the channel that created the session; moving a session
  // to a new channel needs the same user.
  if (!s.activated && s.channel_id != channel.id()) {
    return channel.send_fault(request_id, handle, status::BadSecureChannelIdInvalid);
  }
  if (s.activated && s.channel_id != channel.id() && user != s.user) {
    return channel.send_fault(request_id, handle, status::BadUserAccessDenied);
  }
  auto nonce = random_bytes(32);
  if (!nonce) return channel.send_fault(request_id, handle, status::BadInternalError);
  if (s.activated && s.channel_id != channel.id()) reject_publishes_from_other_channels(s, channel.id());
  s.channel_id = channel.id();  // (re)binds the session to this channel
  s.user = std::move(user);
  s.activated = true;
  s.unactivated.reset();
  channel.set_session_active();
  s.last_activity = std::chrono::steady_clock::now();
  s.server_nonce = std::move(*nonce);
  report_session(server, "session.activated", s);
  ua::ActivateSessionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.server_nonce = s.server_nonce;
  channel.send(request_id, resp);
}

void handle_activate_session(Server& server, Call& call, ua::Decoder& body) {
  // Kept until the identity is known: a user name's password is checked off this thread.
  auto req = std::make_shared<ua::ActivateSessionRequest>();
  if (!decode_request(call, body, *req)) return;
  if (!call.session->activated && call.session->channel_id != call.channel.id()) {
    return call.channel.send_fault(call.request_id, req->request_header.request_handle,
                                   status::BadSecureChannelIdInvalid);
  }
  ShardState& shard = call.shard;
  const uint32_t request_id = call.request_id;
  std::weak_ptr<transport::SecureChannel> weak = call.channel.weak_from_this();
  resolve_identity(server, shard, call.channel, req->user_identity_token,
                   [&server, &shard, weak, request_id, req](ua::StatusCode identity, std::string user) {
                     auto channel = weak.lock();
                     if (!channel || channel->state() != transport::SecureChannel::State::Open) return;
                     const uint32_t handle = req->request_header.request_handle;
                     if (!identity.is_good()) return channel->send_fault(request_id, handle, identity);
                     // The session may have ended or moved while the password was checked.
                     auto it = shard.sessions.find(req->request_header.authentication_token);
                     if (it == shard.sessions.end()) {
                       return channel->send_fault(request_id, handle, status::BadSessionIdInvalid);
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
  report_session(server, "session.closed", *call.session);
  if (req.delete_subscriptions ||
      !park_session(server, call.shard, req.request_header.authentication_token)) {
    close_subscriptions(*call.session, status::BadSessionClosed);
    server.remove_session(call.shard, req.request_header.authentication_token);
  }
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
