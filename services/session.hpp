#pragma once
// Session state (Part 4 §5.6). A session lives on the shard of the secure channel it is bound to and is
// touched only by that shard's thread.
//
// shard-local: owned by ShardState::sessions.

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "addressspace/node_store.hpp"
#include "config/roles.hpp"
#include "services/address_counter.hpp"
#include "services/pending_publish.hpp"
#include "services/session_diagnostics.hpp"
#include "ua/node_id.hpp"

namespace opcuad::services {

class Subscription;  // subscription.hpp, above this: a session holds its subscriptions by pointer

// A Browse that returned part of a node's references (Part 4 §7.9). It remembers the generation of the
// store it walked (never its address: a reload frees that store, and a later one may be allocated at the
// same address), so a structural change makes the continuation point invalid instead of wrong:
// BrowseNext answers BadContinuationPointInvalid. `node` and `next_reference` index that store only.
struct BrowseContinuation {
  uint64_t generation = 0;  // addressspace::NodeStore::generation()
  addressspace::NodeIndex node = addressspace::kNoNode;
  uint32_t next_reference = 0;  // position in store->references(node)
  int reference_type = -1;      // dense index, -1 = all
  bool include_subtypes = true;
  addressspace::BrowseDirection direction = addressspace::BrowseDirection::Forward;
  uint32_t node_class_mask = 0;
  uint32_t result_mask = 0;
  uint32_t max_references = 0;
};

// What a session's user may do with Values (Part 3 §4.8): its well-known roles, and whether it may write at
// all (security.anonymous_write). The default (everyone, writing) is for callers without a session.
struct UserAccess {
  config::RoleSet roles = config::role::kEveryone;
  bool may_write = true;
  // The server's (Server::role_table()); set for every session. A variable's roles themselves are in its
  // VariableAttributes (published with the store); without a table, a variable with roles is refused.
  const config::RoleTable* table = nullptr;
};

struct Session {
  ua::NodeId session_id;
  ua::NodeId authentication_token;  // secret: never logged
  std::string name;
  uint32_t channel_id = 0;  // the secure channel it is bound to
  double timeout_ms = 0;
  // Until its first activation a session lives at most this long (limits.unactivated_session_timeout_ms)
  // and holds a ticket against the limits on sessions not yet activated.
  double activation_timeout_ms = 0;
  AddressCounter::Ticket unactivated;
  std::chrono::steady_clock::time_point last_activity;
  bool activated = false;
  std::string user;                                   // empty for anonymous
  UserAccess access{config::role::kAnonymous, true};  // set at each activation from the user's roles
  // The last nonce sent (CreateSession, then each ActivateSession, Part 4 §5.6.3): the next activation's
  // client signature and encrypted password must be over it.
  ua::ByteString server_nonce;
  uint32_t max_response_message_size = 0;
  // Who the client said it is and where it came from, at CreateSession: TransferSubscriptions between
  // anonymous sessions needs both to match (transfer_service.cpp).
  std::string client_application_uri;
  std::string client_application_name;  // for the operator log only
  std::string client_address;
  // The channel that created the session: its client certificate (the leaf's SHA-1 thumbprint; none on
  // SecurityPolicy None) and its security mode. An activation on another channel must bring the same
  // certificate in a mode no weaker (Part 4 §5.6.3, session_rebind_refusal() in handlers.hpp).
  std::optional<std::array<uint8_t, 20>> creator_certificate;
  ua::MessageSecurityMode creator_mode = ua::MessageSecurityMode::None;
  // Diagnostics (Part 5 §12.11, §12.12; session_diagnostics.hpp): what the client described, and the
  // per-service request counters the Dispatcher bumps.
  SessionDescription described;
  SessionCounters counters;
  std::unordered_map<std::string, BrowseContinuation> continuations;  // key: continuation point bytes
  uint64_t next_continuation = 1;
  // Subscriptions (Part 4 §5.13): they and the Publish requests they answer die with the session;
  // TransferSubscriptions moves a subscription to another session (transfer_service.cpp). Declared last
  // so they go first: a subscription refers to its session while it lives.
  std::deque<PendingPublish> publish_queue;       // outstanding Publish requests, oldest first
  std::deque<StatusChangeNotice> status_changes;  // of subscriptions closed by their lifetime
  std::map<uint32_t, std::shared_ptr<Subscription>> subscriptions;
  // Parked (closed with deleteSubscriptions FALSE, Part 4 §5.6.4): freed with its subscriptions at this
  // time (limits.parked_session_lifetime_ms) unless they were transferred or ended before.
  std::chrono::steady_clock::time_point parked_until = std::chrono::steady_clock::time_point::max();

  bool expired(std::chrono::steady_clock::time_point now) const noexcept {
    const double limit = activated ? timeout_ms : std::min(timeout_ms, activation_timeout_ms);
    return now - last_activity > std::chrono::duration<double, std::milli>(limit);
  }
};

// The session's own subscription `id`, or nullptr (one of another session is not found here).
inline Subscription* find_subscription(Session& session, uint32_t id) noexcept {
  auto it = session.subscriptions.find(id);
  return it == session.subscriptions.end() ? nullptr : it->second.get();
}

}  // namespace opcuad::services
