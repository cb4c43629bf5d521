// ActivateSession of a session that lives on another shard than the channel it arrives on (its client
// reconnected, Part 4 §5.6.3): the checks run where the state they need lives, and the session moves
// only once they passed.
#include <asio/post.hpp>

#include <memory>

#include "services/handlers.hpp"
#include "services/server.hpp"
#include "services/subscription.hpp"

namespace opcuad::services {

namespace status = ua::status;

void move_and_activate(Server& server, transport::SecureChannel& channel, uint32_t request_id, ShardState& to,
                       ua::ActivateSessionRequest request) {
  const ua::NodeId token = request.request_header.authentication_token;
  ShardState* from = server.sessions().owner(token);
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
  asio::post(*from->context, [&server, from, &to, weak, request_id, req,
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
    asio::post(*to.context, [&server, from, &to, weak, request_id, req, nonce, refused] {
      auto ch = weak.lock();
      if (!ch || ch->state() != transport::SecureChannel::State::Open) return;
      const uint32_t handle = req->request_header.request_handle;
      if (!refused.is_good()) return refuse_session(to, *ch, request_id, handle, refused);
      const ua::StatusCode signed_ok =
          check_client_signature(server, *ch, req->client_signature, nonce.bytes());
      if (!signed_ok.is_good()) return refuse_session(to, *ch, request_id, handle, signed_ok);
      resolve_identity(
          server, to, *ch, *req, nonce.bytes(),
          [&server, from, &to, weak, request_id, req, nonce](ua::StatusCode identity, std::string user) {
            if (!identity.is_good()) {
              if (auto ch = weak.lock())
                refuse_session(to, *ch, request_id, req->request_header.request_handle, identity);
              return;
            }
            asio::post(*from->context, [&server, from, &to, weak, request_id, req, nonce,
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
                moving = server.sessions().leave(*from, it);
              }
              asio::post(*to.context, [&server, &to, weak, request_id, moving, refused, req,
                                       user = std::move(user)]() mutable {
                auto ch = weak.lock();
                if (!moving) {
                  if (ch) refuse_session(to, *ch, request_id, req->request_header.request_handle, refused);
                  return;
                }
                auto owned = std::make_unique<Session>(std::move(*moving));
                Session& session = *owned;
                for (auto& [id, sub] : session.subscriptions) sub->attach(to, session);
                server.sessions().add(to, std::move(owned));
                if (ch && ch->state() == transport::SecureChannel::State::Open) {
                  activate_session(server, to, *ch, request_id, session, *req, std::move(user));
                }
              });
            });
          });
    });
  });
}

}  // namespace opcuad::services
