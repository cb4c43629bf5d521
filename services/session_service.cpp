// Session service set (Part 4 §5.6): CreateSession, ActivateSession, CloseSession, Cancel.
#include <algorithm>
#include <cstring>

#include "config/password.hpp"
#include "services/request.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;

ua::ByteString random_bytes(ShardState& shard, size_t n) {
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t r = shard.rng();
    std::memcpy(bytes.data() + i, &r, std::min<size_t>(8, n - i));
  }
  return ua::ByteString(std::move(bytes));
}

ua::Guid random_guid(ShardState& shard) {
  ua::Guid g;
  uint64_t a = shard.rng(), b = shard.rng();
  g.data1 = static_cast<uint32_t>(a);
  g.data2 = static_cast<uint16_t>(a >> 32);
  g.data3 = static_cast<uint16_t>(a >> 48);
  std::memcpy(g.data4.data(), &b, 8);
  return g;
}

// Checks the identity token against the endpoint's policies and the configured users. Returns the user
// name ("" for anonymous) through `user`. Passwords are compared against salted hashes and never logged.
ua::StatusCode check_identity(const Server& server, const ua::ExtensionObject& token, std::string& user) {
  const auto& cfg = server.config();
  if (token.is_empty()) {
    // Part 4 §5.6.3: a null token means anonymous.
    if (!cfg.allow_anonymous) return status::BadIdentityTokenRejected;
    user.clear();
    return status::Good;
  }
  if (const auto* anon = token.get<ua::AnonymousIdentityToken>()) {
    if (!cfg.allow_anonymous) return status::BadIdentityTokenRejected;
    if (!anon->policy_id.empty() && anon->policy_id.view() != "anonymous") return status::BadIdentityTokenInvalid;
    user.clear();
    return status::Good;
  }
  if (const auto* login = token.get<ua::UserNameIdentityToken>()) {
    if (cfg.users.empty() || login->policy_id.view() != "username") return status::BadIdentityTokenInvalid;
    // With SecurityPolicy None the password arrives unencrypted; encrypted secrets come with security.
    if (!login->encryption_algorithm.empty()) return status::BadIdentityTokenInvalid;
    for (const auto& u : cfg.users) {
      if (u.name == login->user_name.view()) {
        if (!config::verify_password(login->password.view(), u.password_hash)) break;
        user = u.name;
        return status::Good;
      }
    }
    return status::BadUserAccessDenied;
  }
  return status::BadIdentityTokenInvalid;
}

}  // namespace

void handle_create_session(Server& server, Call& call, ua::Decoder& body) {
  ua::CreateSessionRequest req;
  if (!decode_request(call, body, req)) return;
  if (!server.reserve_session()) {
    return call.channel.send_fault(call.request_id, req.request_header.request_handle, status::BadTooManySessions);
  }
  auto s = std::make_unique<Session>();
  ShardState& shard = call.shard;
  s->session_id = ua::NodeId(1, random_guid(shard));
  s->authentication_token = ua::NodeId(0, random_guid(shard));
  s->name = std::string(req.session_name.view().substr(0, 256));
  s->channel_id = call.channel.id();
  const auto& limits = server.config().limits;
  const double requested = req.requested_session_timeout;
  s->timeout_ms = requested == requested ? std::clamp(requested, limits.min_session_timeout_ms,
                                                      limits.max_session_timeout_ms)
                                         : limits.max_session_timeout_ms;  // NaN: the server chooses
  s->last_activity = std::chrono::steady_clock::now();
  s->server_nonce = random_bytes(shard, 32);
  s->max_response_message_size = req.max_response_message_size;
  s->client_application_uri = std::string(req.client_description.application_uri.view().substr(0, 4096));
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
  server.add_session(shard, std::move(s));
  call.channel.send(call.request_id, resp);
}

void activate_session(Server& server, ShardState& shard, transport::SecureChannel& channel, uint32_t request_id,
                      Session& s, const ua::ActivateSessionRequest& req) {
  std::string user;
  ua::StatusCode identity = check_identity(server, req.user_identity_token, user);
  if (!identity.is_good()) return channel.send_fault(request_id, req.request_header.request_handle, identity);
  if (s.activated && s.channel_id != channel.id() && user != s.user) {
    // Part 4 §5.6.3: moving a session to a new channel needs the same user.
    return channel.send_fault(request_id, req.request_header.request_handle, status::BadUserAccessDenied);
  }
  if (s.activated && s.channel_id != channel.id()) reject_publishes_from_other_channels(s, channel.id());
  s.channel_id = channel.id();  // (re)binds the session to this channel
  s.user = std::move(user);
  s.activated = true;
  channel.set_session_active();
  s.last_activity = std::chrono::steady_clock::now();
  s.server_nonce = random_bytes(shard, 32);
  ua::ActivateSessionResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.server_nonce = s.server_nonce;
  channel.send(request_id, resp);
}

void handle_activate_session(Server& server, Call& call, ua::Decoder& body) {
  ua::ActivateSessionRequest req;
  if (!decode_request(call, body, req)) return;
  activate_session(server, call.shard, call.channel, call.request_id, *call.session, req);
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
