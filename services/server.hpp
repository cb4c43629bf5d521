#pragma once
// Server: the services layer behind the transport (transport::ServiceHandler). It owns what the shards
// share and wires the parts together; each part has its own header:
//   dispatcher.hpp            the dispatch table and the checks every request shares (on_request)
//   session_registry.hpp      which shard holds each session, the session limits, the waiting CreateSessions
//   subscription_registry.hpp which shard holds each subscription, the subscription and item limits
//   shard.hpp                 ShardState: what one shard's thread owns (sessions, sampler, scratch, stats)
//   handlers.hpp              the service handlers (*_service.cpp)
// The layering of services/ is in docs/ARCHITECTURE.md (tools/check_layers.py checks it): this header
// is at the top, above the handlers it dispatches to.
//
// Threads: on_request() runs on the channel's shard thread. Each shard has a ShardState that only its
// thread touches. Shared between shards: the counters (atomics), the session and subscription registries
// (mutexes, touched only when a session or subscription is created, moved or deleted, never by
// Read/Write/Publish or sampling), and the CellWatch (atomics, lock-free; see cell_watch.hpp).

#include <asio/io_context.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "addressspace/address_space.hpp"
#include "config/config.hpp"
#include "services/alarm_eval.hpp"
#include "services/cell_watch.hpp"
#include "services/dispatcher.hpp"
#include "services/event_record.hpp"
#include "services/login_verifier.hpp"
#include "services/sampler.hpp"
#include "services/service_stats.hpp"
#include "services/session_registry.hpp"
#include "services/shard.hpp"
#include "services/subscription_registry.hpp"
#include "transport/events.hpp"
#include "transport/handshake_pool.hpp"
#include "transport/secure_channel.hpp"
#include "transport/security/identity.hpp"
#include "transport/service_handler.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

// The one transport profile opcuad's endpoints offer (Part 7: UA TCP, UA Secure Conversation, UA Binary).
inline constexpr std::string_view kTcpBinaryProfile =
    "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary";

struct DiagnosticsArrays;  // diagnostics.hpp

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
  // Stops the shard timers (on each shard's thread via post; the caller joins the shards after). The
  // sweep stops for good, even when its timer had already expired and its completion was queued when
  // this runs, so it cannot keep the shard's io_context from running out of work.
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

  // Events (Part 4 §5.12.1, Part 3 HasEventSource / HasNotifier): `record` goes to every event item
  // watching one of its notifiers. Any thread; never blocks on delivery: each shard whose NotifierWatch
  // bit is set for one of the notifiers gets the record in its EventInbox (bounded: past it the record
  // is dropped for that shard and its items get an overflow event) and one posted drain while none is
  // pending. On the shard the drain evaluates each item's where clause and queues its EventFieldList
  // (drain_events). A null record (a failed build) is ignored.
  // REQUIRES: every shard attached before traffic (the shard list is read without a lock).
  void raise_event(std::shared_ptr<const EventRecord> record);
  // Records dropped for full inboxes, and records of a store generation a shard had left, summed.
  uint64_t events_dropped() const noexcept;
  uint64_t events_dropped_full() const noexcept;   // for a full inbox
  uint64_t events_dropped_stale() const noexcept;  // raised against a store generation a shard had left

  // Alarms (alarm_eval.hpp; docs/ARCHITECTURE.md "Alarms"). After storing into variables of `store` that
  // carry flag::kHasAlarm (`inputs`), a writer calls this on its own thread: each condition watching one
  // of them is judged there, and what changed is delivered (deliver_alarm). `origin` is the writer's
  // shard, nullptr for a thread that is no shard (the simulator). Any participant thread (`p`).
  void evaluate_alarms(ShardState* origin, const addressspace::NodeStore& store,
                       std::span<const addressspace::NodeIndex> inputs,
                       addressspace::EpochReclaimer::Participant& p);
  // Every condition of the current store judged as its input is now, changed or not: at start (after the
  // state file was read) and after a reload (new limits). The control thread.
  void evaluate_all_alarms(addressspace::EpochReclaimer::Participant& p);
  // Delivers what a judgement or a condition method did: the event raised, the items on the condition's
  // member variables woken, the timer of a pending on/off-delay armed (on `origin`, else on the first
  // shard), the state file's change counter moved.
  void deliver_alarm(ShardState* origin, const addressspace::ConditionSpec& spec, alarm::Outcome& out);
  // Changes of condition state the state file keeps, since start: the daemon writes the file when this
  // moves. Any thread.
  uint64_t condition_changes() const noexcept { return condition_changes_.load(std::memory_order_acquire); }
  // Queues `event` into event item `item` of `shard`, as the drain does: the item's where clause first
  // unless `unfiltered` (RefreshStartEvent and RefreshEndEvent, Part 9 §4.5), overflow handled, the
  // subscription told. On the item's shard.
  void queue_event(ShardState& shard, MonitoredItem& item, const EventRecord& event, bool unfiltered);

  bool on_request(transport::SecureChannel& channel, const transport::RequestContext& ctx,
                  ua::Decoder& body) override;
  void on_channel_closed(transport::SecureChannel& channel) override;
  // Audited as "SecureChannel/OpenSecureChannel" (audit_certificate).
  void on_certificate_refused(transport::SecureChannel& channel, std::span<const uint8_t> chain,
                              ua::StatusCode status) override;

  const config::ServerConfig& config() const noexcept { return config_; }
  // Audit events (audit.enabled; services/audit.hpp): raise `record` when auditing is on.
  bool auditing() const noexcept { return config_.audit.enabled; }
  // A certificate the server refused (audit::certificate_rejected; `chain` leaf first), raised when
  // auditing is on. Any thread (the channel's certificate is judged on a handshake worker): the record is
  // built on the first shard, which reads the store.
  void audit_certificate(std::span<const uint8_t> chain, ua::StatusCode status, std::string_view action);

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
  // Shard i's sampler, in attach order (diagnostics and tests; touch it on that shard's thread only).
  const Sampler& sampler(size_t shard) const noexcept { return *shards_[shard]->sampler; }
  // Shard i's state, in attach order (tests; touch it on that shard's thread only).
  const ShardState& shard_state(size_t shard) const noexcept { return *shards_[shard]; }
  ShardState& shard_state(size_t shard) noexcept { return *shards_[shard]; }

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

  // The shared parts (session_registry.hpp, subscription_registry.hpp); any shard.
  SessionRegistry& sessions() noexcept { return sessions_; }
  const SessionRegistry& sessions() const noexcept { return sessions_; }
  SubscriptionRegistry& subscriptions() noexcept { return subscriptions_; }
  const SubscriptionRegistry& subscriptions() const noexcept { return subscriptions_; }
  LoginVerifier& logins() noexcept { return *logins_; }

  // The current counts (metrics, diagnostics, tests); any thread.
  uint32_t session_count() const noexcept { return sessions_.count(); }
  uint32_t unactivated_session_count() const { return sessions_.unactivated_count(); }
  uint32_t waiting_session_count() const { return sessions_.waiting_count(); }
  uint32_t subscription_count() const noexcept { return subscriptions_.subscription_count(); }
  uint32_t monitored_item_count() const noexcept { return subscriptions_.monitored_item_count(); }
  // PublishingIntervalCount (Part 5 §12.9): how many distinct publishing intervals the server serves now.
  uint32_t publishing_interval_count() const noexcept { return subscriptions_.publishing_interval_count(); }
  // Sampling lateness summed over the shards (Sampler::Lateness): {samples, > 250 µs, > 1 ms, > 5 ms}.
  // Any thread. REQUIRES: every shard attached.
  std::array<uint64_t, 4> sampling_lateness() const noexcept;
  // Every shard's ServiceStats summed, with the current counts. Any thread. REQUIRES: every shard attached.
  ServiceTotals totals() const noexcept;
  // The dispatch table's services, in the order of ServiceStats::requests.
  static size_t service_count() noexcept { return Dispatcher::service_count(); }
  static std::string_view service_name(size_t i) noexcept { return Dispatcher::service_name(i); }
  size_t shard_count() const noexcept { return shards_.size(); }

 private:
  ShardState& shard_of(transport::SecureChannel& channel);
  void sweep(ShardState& shard);
  // While any participant has retired objects waiting (EpochReclaimer::waiting), the shard passes a
  // quiescent point every kReclaimPeriod instead of only at its 250 ms sweep: the grace period is as long
  // as the slowest participant's period, and the boxes a Write replaced come back to the writer's
  // thread (ValueStore's kept boxes) only when it ends. Idle otherwise.
  void reclaim_soon(ShardState& shard);
  static constexpr std::chrono::milliseconds kReclaimPeriod{2};
  void drain_events(ShardState& shard);
  void arm_alarm_delay(ShardState& shard, ua::NodeId condition, uint32_t delay_ms);
  // The EventQueueOverflowEventType event of `store` (Part 4 §5.12.1.5), built on first use per call site.
  static std::shared_ptr<const EventRecord> overflow_event(const addressspace::NodeStore& store);

  addressspace::AddressSpace& space_;
  const config::ServerConfig& config_;
  const security::ServerIdentity* identity_ = nullptr;
  security::CertificateValidator user_validator_;
  transport::HandshakePool* crypto_pool_ = nullptr;
  config::RoleTable roles_;
  CellWatch watch_;               // which shards watch which value cells (exception-based items)
  NotifierWatch notifier_watch_;  // which shards have event items on which notifiers
  std::atomic<uint64_t> condition_changes_{0};
  const uint64_t instance_;  // unique per Server in this process (keys the per-thread shard cache)
  // Declared before the shards, which ~Server frees first: their sessions and subscriptions give their
  // slots back to these when they are destroyed.
  SessionRegistry sessions_;
  SubscriptionRegistry subscriptions_;
  Dispatcher dispatcher_;
  std::vector<std::unique_ptr<ShardState>> shards_;
  transport::EventSink events_;
  std::unique_ptr<LoginVerifier> logins_;  // destroyed first (~Server): its threads post to the shards
};

}  // namespace opcuad::services
