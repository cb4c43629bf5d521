#pragma once
// Server: the services layer behind the transport. One dispatch table keyed by the request's binary
// encoding id gives each service its handler and whether it needs an activated session; the checks
// every request shares (session and authentication token, channel binding, request decoding) happen
// once, in on_request(), before a handler runs.
//
// Threads: on_request() runs on the channel's shard thread. Each shard has a ShardState (its sessions,
// its epoch participant) that only its thread touches. Shared between shards: the counters (atomics),
// the token and subscription registries (mutexes, touched only when a session or subscription is
// created, moved or deleted, never by Read/Write/Publish or sampling), and the CellWatch (atomics,
// lock-free; see cell_watch.hpp).

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "addressspace/address_space.hpp"
#include "config/config.hpp"
#include "services/address_counter.hpp"
#include "services/cell_watch.hpp"
#include "services/login_verifier.hpp"
#include "services/sampler.hpp"
#include "services/scratch.hpp"
#include "services/service_stats.hpp"
#include "services/session.hpp"
#include "transport/events.hpp"
#include "transport/handshake_pool.hpp"
#include "transport/secure_channel.hpp"
#include "transport/security/identity.hpp"
#include "transport/service_handler.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

struct DiagnosticsArrays;  // diagnostics.hpp

// A CreateSession waiting for a slot under limits.max_unactivated_sessions(_per_address)
// (AddressCounter::wait): its request, decoded once and bounded by
// connections.max_message_size_before_session, and where to answer it.
struct WaitingSession {
  uint64_t key = 0;     // this shard's, for the grant
  uint64_t waiter = 0;  // AddressCounter's, for cancel()
  std::string address;
  std::weak_ptr<transport::SecureChannel> channel;
  uint32_t channel_id = 0;
  uint32_t request_id = 0;
  std::shared_ptr<ua::CreateSessionRequest> request;
  std::chrono::steady_clock::time_point deadline;
};

struct ShardState {
  asio::io_context* context = nullptr;
  unsigned index = 0;  // attach order; picks the shard's CellWatch bit
  addressspace::EpochReclaimer::Participant* participant = nullptr;
  // Written by this shard only, read anywhere (service_stats.hpp). Declared before the sessions, whose
  // queued Publish requests record their latency here when they are destroyed.
  ServiceStats stats;
  // shard-local: the sampling timers of this shard's monitored items. Declared before `sessions`, so it
  // outlives them: a subscription unregisters its items when it is destroyed.
  std::unique_ptr<Sampler> sampler;
  // shard-local: subscription id -> subscription, for every subscription on this shard (parked ones
  // too), kept by Subscription itself; TransferSubscriptions finds each id in O(1). Outlives `sessions`.
  std::unordered_map<uint32_t, Subscription*> subscription_index;
  // shard-local: token -> session
  std::unordered_map<ua::NodeId, std::unique_ptr<Session>> sessions;
  // shard-local: sessions closed with deleteSubscriptions FALSE (Part 4 §5.6.4). They answer no request
  // (no token finds them) and exist only to hold their subscriptions until each one's lifetime ends or a
  // session of the same user takes it with TransferSubscriptions; the sweep frees them once empty.
  std::vector<std::unique_ptr<Session>> parked;
  // shard-local: CreateSessions of this shard's channels waiting for an unactivated-session slot, oldest
  // first; the sweep answers those whose wait is over (BadTooManySessions).
  std::vector<WaitingSession> waiting_sessions;
  uint64_t last_waiting_key = 0;
  std::unique_ptr<asio::steady_timer> sweep;  // session expiry and the epoch's quiescent point
  std::mt19937_64 rng;                         // seeded from the OS; ids and nonces
  Scratch scratch;                             // shard-local: reused requests, responses, work lists
  // shard-local: the generation of the last NodeStore this shard adapted to (Server::see_store).
  uint64_t store_generation = 0;
};

// What one request's handler gets: the channel, the request id and the session (when required).
struct Call {
  transport::SecureChannel& channel;
  uint32_t request_id;
  ShardState& shard;
  Session* session;  // nullptr for services that need none

  // The largest response body this request may be answered with: the client's MaxMessageSize and
  // MaxChunkCount from Hello, and its session's maxResponseMessageSize (Part 4 §5.6.2), 0 meaning none.
  size_t max_response_body() const noexcept {
    size_t limit = channel.max_response_body();
    if (session && session->max_response_message_size) {
      limit = std::min<size_t>(limit, session->max_response_message_size);
    }
    return limit;
  }

  // Answers with `response`, or with ServiceFault BadResponseTooLarge when its encoded body is larger
  // than max_response_body() (Part 4 §5.6.2 maxResponseMessageSize, Part 6 §6.7.2.2). Handlers answer
  // through here (or send_encoded() for what they encode themselves), so the client's limits hold for
  // every service; the check is one comparison after the encoding.
  template <class T>
  void send(const T& response) const {
    ua::ByteBuffer buf = channel.acquire_buffer();
    ua::Encoder e(buf);
    ua::encode(e, ua::NodeId(0, T::binary_encoding_id));
    ua::encode(e, response);
    send_encoded(std::move(buf), e.status(), response.response_header.request_handle);
  }
  // `buf` from channel.acquire_buffer(), holding the encoded type id and response; `encoded` is the
  // encoder's status (a failed encoding is answered with it in a ServiceFault).
  void send_encoded(ua::ByteBuffer buf, ua::StatusCode encoded, uint32_t request_handle) const;
};

class Server final : public transport::ServiceHandler {
 public:
  Server(addressspace::AddressSpace& space, const config::ServerConfig& config);
  ~Server() override;

  // Registers a shard: its state is created, and a timer on it expires sessions and reports the shard's
  // quiescent point to the address space's reclaimer. Call once per shard before traffic arrives.
  void attach_shard(asio::io_context& ctx);
  // Graceful shutdown, before the channels close: on each shard's thread (via post), every queued Publish
  // request is answered with `publish_result` (BadShutdown: cancelled because the server is shutting
  // down) and every session, parked ones too, is closed with its subscriptions. Posted before the
  // transport's ERR on the same shards, so those answers are queued ahead of it.
  void end_sessions(ua::StatusCode publish_result);
  // Stops the shard timers (on each shard's thread via post; the caller joins the shards after).
  void detach_shards();

  // Exception-based sampling (Part 4 §5.12.1.2, interval 0): after writing `cells`, a writer calls this
  // to wake the shards whose items watch them. One post per interested shard per call (batch a request's
  // writes into one call); the writer's own shard (`origin`, nullptr for a thread that is no shard, such
  // as the simulator) samples at once. Takes no lock unless someone watches. Any thread.
  // REQUIRES: every shard attached before traffic (the shard list is read without a lock).
  void notify_written(ShardState* origin, std::span<const addressspace::ValueCell* const> cells);
  // Whether writes to this Value wake exception-based items: true for the configured namespaces, whose
  // writers (the Write service, the daemon's simulator) call notify_written(). Namespace 0 values are
  // written by the daemon's Server status clock, which does not, so items on them are sampled by timer.
  bool wakes_on_write(const ua::NodeId& node, const addressspace::ValueCell* cell) const noexcept;

  bool on_request(transport::SecureChannel& channel, const transport::RequestContext& ctx,
                  ua::Decoder& body) override;
  void on_channel_closed(transport::SecureChannel& channel) override;

  const config::ServerConfig& config() const noexcept { return config_; }

  // Security wiring (the daemon, from its PKI; tests). REQUIRES: called before the first request, and
  // `identity` outlives the Server. Without an identity the server has no certificate: secure endpoints
  // and encrypted user tokens cannot be offered (security_problems() says so).
  void set_identity(const security::ServerIdentity* identity) noexcept { identity_ = identity; }
  const security::ServerIdentity* identity() const noexcept { return identity_; }
  // Validates X509IdentityToken certificates against the user trust list (Part 4 §7.41.5); unset: X509
  // user tokens are neither offered nor accepted.
  void set_user_certificate_validator(security::CertificateValidator v) { user_validator_ = std::move(v); }
  const security::CertificateValidator& user_certificate_validator() const noexcept {
    return user_validator_;
  }
  // The threads for the RSA private-key work of the session services (CreateSession's signature, an
  // encrypted password's decryption: 1-10 ms each), so a shard keeps serving its other sessions meanwhile
  // (docs/SECURITY.md). The daemon passes its HandshakePool; unset (unit tests), the work runs inline.
  // REQUIRES: `pool` outlives the Server's traffic (the daemon stops it before the shards).
  void set_crypto_pool(transport::HandshakePool* pool) noexcept { crypto_pool_ = pool; }
  transport::HandshakePool* crypto_pool() const noexcept { return crypto_pool_; }
  // What makes the configured security impossible with this wiring (a secure endpoint, or users whose
  // passwords must be encrypted, without a server certificate): the daemon refuses to start when any.
  std::vector<std::string> security_problems() const;
  // The user token policies of one endpoint offer (Part 4 §7.42), and the one `policy_id` names there.
  std::vector<ua::UserTokenPolicy> user_token_policies(const config::SecurityOffer& offer,
                                                       bool allow_anonymous) const;
  // The secure policy that encrypts secrets on endpoints that do not (None, Sign): the strongest
  // non-deprecated policy any endpoint offers, else Basic256Sha256.
  const security::Policy& user_token_policy() const noexcept;
  // The read_roles / write_roles of the address space's variables (config::build_address_space() fills
  // it). REQUIRES: set before the first request; read without a lock by every shard afterwards.
  void set_role_table(config::RoleTable roles) { roles_ = std::move(roles); }
  const config::RoleTable& role_table() const noexcept { return roles_; }

  // Operator events (transport/events.hpp): sessions created, activated, closed, expired; failed logins.
  // Set before traffic; called on the session's shard (once per session event, never per request).
  void set_events(transport::EventSink sink) { events_ = std::move(sink); }
  const transport::EventSink& events() const noexcept { return events_; }
  addressspace::AddressSpace& space() noexcept { return space_; }
  uint32_t session_count() const noexcept { return session_count_.load(std::memory_order_relaxed); }
  // Shard i's sampler, in attach order (diagnostics and tests; touch it on that shard's thread only).
  const Sampler& sampler(size_t shard) const noexcept { return *shards_[shard]->sampler; }
  // Shard i's state, in attach order (tests; touch it on that shard's thread only).
  const ShardState& shard_state(size_t shard) const noexcept { return *shards_[shard]; }

  // The diagnostics arrays (diagnostics.hpp), off the request path: each shard copies its sessions' and
  // subscriptions' entries on its own thread (one post per shard), and `done` runs on `reply_to` with
  // all of them once every shard answered. A shard that is stopped never answers: `done` does not run.
  // REQUIRES: every shard attached.
  void collect_diagnostics(asio::io_context& reply_to, std::function<void(DiagnosticsArrays&)> done);

  // The endpoints this server offers, with `url` (the one the client dialled) as their address when it
  // names one of ours; see discovery_service.cpp.
  std::vector<ua::EndpointDescription> endpoints(std::string_view url) const;
  // This server's description, its discovery URLs published for a client that dialled `url` (as above).
  ua::ApplicationDescription application_description(std::string_view url) const;

  // Session bookkeeping shared by the session services.
  // A ticket against limits.max_unactivated_sessions (per address and in total); empty when either is
  // reached. A session holds it until its first activation.
  AddressCounter::Ticket reserve_unactivated(const std::string& address) { return unactivated_.acquire(address); }
  uint32_t unactivated_session_count() const { return unactivated_.total(); }
  // When no ticket is free: a place in the FIFO of limits.max_waiting_sessions(_per_address), see
  // AddressCounter::wait; 0 when it is full.
  uint64_t wait_unactivated(const std::string& address, AddressCounter::Grant grant) {
    return unactivated_.wait(address, std::move(grant));
  }
  bool cancel_unactivated_wait(uint64_t waiter) { return unactivated_.cancel(waiter); }
  AddressCounter::Ticket adopt_unactivated(std::string address) { return unactivated_.adopt(std::move(address)); }
  uint32_t waiting_session_count() const { return unactivated_.waiting(); }
  LoginVerifier& logins() noexcept { return *logins_; }
  bool reserve_session() noexcept;
  void release_session() noexcept;
  // Server-wide limits of config::Limits (max_subscriptions, max_monitored_items); any shard.
  bool reserve_subscription() noexcept;
  void release_subscription() noexcept { subscription_count_.fetch_sub(1, std::memory_order_relaxed); }
  bool reserve_monitored_item() noexcept;
  void release_monitored_items(uint32_t n) noexcept { monitored_item_count_.fetch_sub(n, std::memory_order_relaxed); }
  uint32_t subscription_count() const noexcept { return subscription_count_.load(std::memory_order_relaxed); }
  // Sampling lateness summed over the shards (Sampler::Lateness): {samples, > 250 µs, > 1 ms, > 5 ms}.
  // Any thread. REQUIRES: every shard attached.
  std::array<uint64_t, 4> sampling_lateness() const noexcept;
  uint32_t monitored_item_count() const noexcept { return monitored_item_count_.load(std::memory_order_relaxed); }
  // Every shard's ServiceStats summed, with the current counts. Any thread. REQUIRES: every shard attached.
  ServiceTotals totals() const noexcept;
  // The dispatch table's services, in the order of ServiceStats::requests.
  static size_t service_count() noexcept;
  static std::string_view service_name(size_t i) noexcept;
  size_t shard_count() const noexcept { return shards_.size(); }
  void add_session(ShardState& shard, std::unique_ptr<Session> session);
  void remove_session(ShardState& shard, const ua::NodeId& token);
  // Like remove_session(), but hands the session over instead of freeing it (nullptr: no such session).
  std::unique_ptr<Session> take_session(ShardState& shard, const ua::NodeId& token);
  // ActivateSession for a session that lives on another shard (its client reconnected on a channel of
  // this one): the session moves here, then is activated (Part 4 §5.6.3). Answers asynchronously.
  void move_and_activate(transport::SecureChannel& channel, uint32_t request_id, ShardState& to,
                         ua::ActivateSessionRequest request);
  // Which shard holds each subscription, for TransferSubscriptions (transfer_service.cpp). Touched when
  // a subscription is created, deleted or moved, never by Publish or sampling.
  void register_subscription(uint32_t id, ShardState& shard);
  void unregister_subscription(uint32_t id) noexcept;
  ShardState* subscription_shard(uint32_t id);
  // The live subscriptions' publishing intervals (PublishingIntervalCount, Part 5 §12.9: how many
  // distinct ones the server serves now). `delta` +1 when a subscription takes `interval_ms`, -1 when it
  // leaves it. Touched by create, modify and delete only.
  void count_publishing_interval(double interval_ms, int delta);
  uint32_t publishing_interval_count() const noexcept {
    return publishing_interval_count_.load(std::memory_order_relaxed);
  }

  struct Entry;  // a dispatch table row (server.cpp)

 private:
  ShardState& shard_of(transport::SecureChannel& channel);
  // on_request() past the counters: the shared session checks, then the handler. `now` is the
  // request's arrival (the session's last activity). Returns the request's session when it is still
  // alive after the handler (nullptr: none, or CloseSession freed it).
  Session* serve(const Entry& entry, transport::SecureChannel& channel, const transport::RequestContext& ctx,
                 ShardState& shard, ua::Decoder& body, std::chrono::steady_clock::time_point now);
  void sweep(ShardState& shard);
  // A reload publishes a new NodeStore; each shard adapts to it the first time it sees it, before a
  // request or at its sweep (at most 250 ms later; the old store is freed only after the shard's next
  // quiescent point, which follows its sweep): monitored items move to the new store's cells
  // (Subscription::resolve_items) and browse continuation points into the old store are dropped
  // (a BrowseNext for one then gets BadContinuationPointInvalid). In steady state this costs one acquire
  // load and a compare; no lock.
  void see_store(ShardState& shard) {
    const addressspace::NodeStore* store = space_.current();
    if (store && store->generation() != shard.store_generation) [[unlikely]]
      adapt_to_store(shard, *store);
  }
  void adapt_to_store(ShardState& shard, const addressspace::NodeStore& store);

  addressspace::AddressSpace& space_;
  const config::ServerConfig& config_;
  const security::ServerIdentity* identity_ = nullptr;
  security::CertificateValidator user_validator_;
  transport::HandshakePool* crypto_pool_ = nullptr;
  config::RoleTable roles_;
  CellWatch watch_;          // which shards watch which value cells (exception-based items)
  const uint64_t instance_;  // unique per Server in this process (keys the per-thread shard cache)
  std::vector<std::unique_ptr<ShardState>> shards_;
  AddressCounter unactivated_;
  transport::EventSink events_;
  std::unique_ptr<LoginVerifier> logins_;  // destroyed first (~Server): its threads post to the shards
  std::atomic<uint32_t> session_count_{0};
  std::atomic<uint32_t> subscription_count_{0};
  std::atomic<uint32_t> monitored_item_count_{0};
  std::atomic<uint64_t> monitored_items_created_{0};  // cumulated; bumped beside the reservation
  // Which shard holds each session. Touched only by CreateSession, CloseSession, expiry and a session
  // move, never on the request path (requests find their session in their shard's own table).
  std::mutex owners_mutex_;
  std::unordered_map<ua::NodeId, ShardState*> owners_;  // GUARDED_BY(owners_mutex_)
  std::mutex intervals_mutex_;
  std::map<double, uint32_t> intervals_;  // GUARDED_BY(intervals_mutex_): interval -> subscriptions
  std::atomic<uint32_t> publishing_interval_count_{0};
  std::mutex subscription_owners_mutex_;
  std::unordered_map<uint32_t, ShardState*> subscription_owners_;  // GUARDED_BY(subscription_owners_mutex_)
};

// Handlers, one file per service set. Each decodes its request from `body`, answers through
// call.channel, and returns nothing; a request that fails to decode is answered by the dispatcher.
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
// serverCertificate + serverNonce on a secured channel (Good on None).
using IdentityDone = std::function<void(ua::StatusCode, std::string user)>;
void resolve_identity(Server& server, ShardState& shard, transport::SecureChannel& channel,
                      const ua::ActivateSessionRequest& request, std::span<const uint8_t> server_nonce,
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

// Operator events about sessions (session_events.cpp): `kind` is session.created, session.activated,
// session.closed or session.expired; the session's id, name, user, client application and address go in
// the fields (quoted and bounded: the client chose them).
void report_session(const Server& server, std::string_view kind, const Session& session);
// A refused identity at ActivateSession (at warn, rate-limited by address): the user name it claimed
// ("" for anonymous; "certificate <thumbprint>" for an X509 token), never the password, and for a refused
// user certificate the validator's reason.
void report_login_failed(const Server& server, std::string_view peer, std::string_view user,
                         ua::StatusCode status, std::string_view reason = {});

// A response header for `request`: the handle echoed, the server's timestamp, a service result.
ua::ResponseHeader response_header(const ua::RequestHeader& request, ua::StatusCode result = ua::status::Good);
// The same, written over `h` in place: what a handler does with its reused response, so a warm response
// header costs a clock read and three stores (assigning a fresh one moved a DiagnosticInfo and an
// ExtensionObject, about a sixth of a Read-1 request's instructions).
void set_response_header(ua::ResponseHeader& h, const ua::RequestHeader& request,
                         ua::StatusCode result = ua::status::Good);

}  // namespace opcuad::services
