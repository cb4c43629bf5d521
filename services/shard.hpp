#pragma once
// ShardState: everything one shard's thread owns (docs/ARCHITECTURE.md, Threads): its sessions, parked
// sessions and waiting CreateSessions, its sampler, its subscription index, its scratch and its
// counters. Only that thread touches it, so none of it is locked; what the shards share lives in the
// registries (session_registry.hpp, subscription_registry.hpp).

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "addressspace/address_space.hpp"
#include "services/address_counter.hpp"
#include "services/event_inbox.hpp"
#include "services/event_record.hpp"
#include "services/notifier_watch.hpp"
#include "services/sampler.hpp"
#include "services/scratch.hpp"
#include "services/service_stats.hpp"
#include "services/session.hpp"
#include "transport/secure_channel.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

class Subscription;
struct MonitoredItem;

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
  std::unique_ptr<asio::steady_timer> sweep;    // session expiry and the epoch's quiescent point
  std::unique_ptr<asio::steady_timer> reclaim;  // the quick quiescent points (Server::reclaim_soon)
  bool reclaiming = false;                      // shard-local: `reclaim` is armed
  // shard-local: set by Server::detach_shards(); from then on the sweep runs no more and never re-arms,
  // so the shard can run out of work and be joined (docs/ARCHITECTURE.md, Threads: Shutdown).
  bool detached = false;
  Scratch scratch;  // shard-local: reused requests, responses, work lists
  // shard-local: the RequestHeader of the request being dispatched, decoded once (dispatcher.cpp) and
  // handed to the handler's request (request.hpp, Call::take_header); reused, so it keeps its buffers.
  ua::RequestHeader request_header;
  // shard-local: the generation of the last NodeStore this shard adapted to (see_store).
  uint64_t store_generation = 0;
  // Events. shard-local: notifier (a NodeIndex of store_generation's store) -> this shard's event items
  // on it (each item's position in its list is EventItemState::index_slot);
  // items per NotifierWatch slot, which own this shard's bit there; the drain's batch (reused).
  std::unordered_map<addressspace::NodeIndex, std::vector<MonitoredItem*>> event_items;
  std::vector<uint32_t> notifier_slot_items = std::vector<uint32_t>(NotifierWatch::kSlots);
  std::vector<std::shared_ptr<const EventRecord>> event_batch;
  NotifierWatch* notifier_watch = nullptr;  // the Server's
  EventInbox inbox;                         // written by producers (any thread), drained here
  std::atomic<uint64_t> events_stale{0};    // raised against a store generation this shard had left
  // Alarms. shard-local: the conditions watching the variables a Write of this shard just stored
  // (reused), and the timers of pending on/off-delays armed here (Server::evaluate_alarms).
  std::vector<addressspace::NodeIndex> alarm_inputs;
  std::vector<std::shared_ptr<asio::steady_timer>> alarm_timers;
};

// An event item joins (or leaves) its shard's index: its notifier and filter are resolved in `store`
// first when they were compiled against another generation (a reload, a subscription moved while one
// happened). An item whose notifier is gone or whose filter no longer compiles stays out of the index
// and receives nothing. REQUIRES: item.is_event().
void index_event_item(ShardState& shard, MonitoredItem& item, const addressspace::NodeStore& store);
void unindex_event_item(ShardState& shard, MonitoredItem& item) noexcept;

// A reload publishes a new NodeStore; each shard adapts to it the first time it sees it, before a
// request or at its sweep (at most 250 ms later; the old store is freed only after the shard's next
// quiescent point, which always follows a see_store: Server::sweep, Server::reclaim_soon, on_request):
// monitored items move to the new store's cells (Subscription::resolve_items) and browse continuation points
// into the old store are dropped (a BrowseNext for one then gets BadContinuationPointInvalid). In steady
// state this costs one acquire load and a compare; no lock.
void adapt_to_store(ShardState& shard, const addressspace::NodeStore& store);
inline void see_store(ShardState& shard, const addressspace::AddressSpace& space) {
  const addressspace::NodeStore* store = space.current();
  if (store && store->generation() != shard.store_generation) [[unlikely]]
    adapt_to_store(shard, *store);
}

// The shard's sweep: frees parked sessions (Part 4 §5.6.4, closed with deleteSubscriptions FALSE) that
// hold nothing any more or whose limits.parked_session_lifetime_ms has passed, with their subscriptions.
void expire_parked(ShardState& shard, std::chrono::steady_clock::time_point now);

}  // namespace opcuad::services
