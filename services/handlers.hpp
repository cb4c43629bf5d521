#pragma once
// The service handlers and the helpers the service sets share: what the dispatch table (dispatcher.cpp)
// calls and what one service set calls of another. They take the Server (server.hpp, above this) for
// the configuration, the registries and the security wiring.

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "services/request.hpp"
#include "services/session.hpp"
#include "services/shard.hpp"
#include "transport/secure_channel.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

class Server;
class Subscription;

// Handlers, one file per service set (*_service.cpp), each reached from the dispatch table
// (dispatcher.cpp). Each decodes its request from `body` (which starts after the RequestHeader, see
// request.hpp) with decode_request(), answers through the Call (send(), fault()), and returns nothing.
void handle_get_endpoints(Server&, Call&, ua::Decoder& body);
void handle_find_servers(Server&, Call&, ua::Decoder& body);
void handle_create_session(Server&, Call&, ua::Decoder& body);
void handle_activate_session(Server&, Call&, ua::Decoder& body);
void handle_close_session(Server&, Call&, ua::Decoder& body);
void handle_cancel(Server&, Call&, ua::Decoder& body);
void handle_read(Server&, Call&, ua::Decoder& body);
void handle_write(Server&, Call&, ua::Decoder& body);
void handle_browse(Server&, Call&, ua::Decoder& body);
void handle_browse_next(Server&, Call&, ua::Decoder& body);
void handle_translate(Server&, Call&, ua::Decoder& body);
void handle_register_nodes(Server&, Call&, ua::Decoder& body);
void handle_unregister_nodes(Server&, Call&, ua::Decoder& body);
void handle_call(Server&, Call&, ua::Decoder& body);
void handle_create_subscription(Server&, Call&, ua::Decoder& body);
void handle_modify_subscription(Server&, Call&, ua::Decoder& body);
void handle_set_publishing_mode(Server&, Call&, ua::Decoder& body);
void handle_delete_subscriptions(Server&, Call&, ua::Decoder& body);
void handle_transfer_subscriptions(Server&, Call&, ua::Decoder& body);
void handle_publish(Server&, Call&, ua::Decoder& body);
void handle_republish(Server&, Call&, ua::Decoder& body);
void handle_create_monitored_items(Server&, Call&, ua::Decoder& body);
void handle_modify_monitored_items(Server&, Call&, ua::Decoder& body);
void handle_delete_monitored_items(Server&, Call&, ua::Decoder& body);
void handle_set_monitoring_mode(Server&, Call&, ua::Decoder& body);
void handle_set_triggering(Server&, Call&, ua::Decoder& body);
// ActivateSession in two halves (Part 4 §5.6.3). resolve_identity() checks the identity token and calls
// `then(status, user)`: at once for anonymous and malformed tokens, later (on `shard`, from the
// LoginVerifier's threads) for a user name and password. activate_session() then binds the session, which
// is on this shard, to the channel as `user`.
// `server_nonce` is the session's last nonce, which an encrypted password must end with (Part 4 §7.41.2.2)
// and an X509 token's signature cover. check_client_signature() verifies the application's signature over
// serverCertificate + serverNonce on a secured channel (Good on None). resolve_identity() wipes a user name
// token's secret from `request` once it has taken it.
using IdentityDone = std::function<void(ua::StatusCode, std::string user)>;
void resolve_identity(Server& server, ShardState& shard, transport::SecureChannel& channel,
                      ua::ActivateSessionRequest& request, std::span<const uint8_t> server_nonce,
                      IdentityDone then);
ua::StatusCode check_client_signature(const Server& server, const transport::SecureChannel& channel,
                                      const ua::SignatureData& signature,
                                      std::span<const uint8_t> server_nonce);
// What a session remembers of the channel that created it, and what an activation on another channel is
// compared with: the client certificate (the leaf's SHA-1 thumbprint; none on SecurityPolicy None) and
// the security mode.
struct ChannelCredentials {
  std::optional<std::array<uint8_t, 20>> certificate;
  ua::MessageSecurityMode mode = ua::MessageSecurityMode::None;
  static ChannelCredentials of(const transport::SecureChannel& channel);
};
// Whether `session` may be activated on a channel with `credentials`, another channel than its own (Part 4
// §5.6.3): it must carry the client certificate of the channel that created the session, in a security
// mode no weaker. Good, or BadSecurityChecksFailed; the session is not touched either way.
ua::StatusCode session_rebind_refusal(const Session& session, const ChannelCredentials& credentials);
void activate_session(Server& server, ShardState& shard, transport::SecureChannel& channel,
                      uint32_t request_id, Session& session, const ua::ActivateSessionRequest& request,
                      std::string user);
// CreateSessions that wait for an unactivated-session slot (session_service.cpp), on the shard's thread:
// the grant of `key`'s slot creates its session; the sweep refuses, with BadTooManySessions, those whose
// wait is over or whose channel `closed_channel` (0: none) or another has closed.
void grant_waiting_session(Server& server, ShardState& shard, uint64_t key);
void expire_waiting_sessions(Server& server, ShardState& shard, std::chrono::steady_clock::time_point now,
                             uint32_t closed_channel = 0);
// Refuses a CreateSession or ActivateSession with `result`, counting it in the shard's RejectedSessionCount
// (and SecurityRejectedSessionCount for a security reason, transport::is_security_fault).
void refuse_session(ShardState& shard, transport::SecureChannel& channel, uint32_t request_id,
                    uint32_t handle, ua::StatusCode result);

// ActivateSession for a session that lives on another shard (its client reconnected on a channel of
// this one, session_move.cpp): the identity is checked here, then the session moves to this shard and is
// activated (Part 4 §5.6.3). Answers asynchronously.
void move_and_activate(Server& server, transport::SecureChannel& channel, uint32_t request_id, ShardState& to,
                       ua::ActivateSessionRequest request);
// CloseSession with deleteSubscriptions FALSE (Part 4 §5.6.4): the session leaves the shard's table for
// its `parked` list, Publish requests answered BadSessionClosed, its subscriptions kept for a
// TransferSubscriptions until limits.parked_session_lifetime_ms. False (nothing done) when it holds no
// subscription or the shard already parks limits.max_parked_sessions: the caller then deletes them.
bool park_session(Server& server, ShardState& shard, const ua::NodeId& token);
// Part 4 §5.12.1.2: items created or modified with a sampling interval of -1 sample at the publishing
// interval, also after ModifySubscription changed it (monitored_item_service.cpp).
void follow_publishing_interval(Server& server, Subscription& sub);

}  // namespace opcuad::services
