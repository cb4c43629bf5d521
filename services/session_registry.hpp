#pragma once
// SessionRegistry: the sessions' part of the server that all shards share. A session itself lives in its
// shard's table (ShardState::sessions), touched by that shard's thread only; the registry knows which
// shard holds each session (for an ActivateSession that arrives on another shard, Part 4 §5.6.3), counts
// the sessions against limits.max_sessions and the sessions not yet activated against
// limits.max_unactivated_sessions(_per_address), with the queue of CreateSessions waiting for one of
// those (address_counter.hpp).
//
// Every session enters and leaves its shard's table through here (add, take, erase), so the owner table
// and the count follow the tables exactly. Threads: any shard, each on its own ShardState. The owner
// table takes a mutex, touched only by CreateSession, CloseSession, expiry and a move, never on the
// request path (a request finds its session in its shard's own table).

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "config/config.hpp"
#include "services/address_counter.hpp"
#include "services/bounded_counter.hpp"
#include "services/shard.hpp"

namespace opcuad::services {

class SessionRegistry {
 public:
  using Table = decltype(ShardState::sessions);

  // limits.max_sessions is read live (bounded_counter.hpp), the unactivated-session limits once.
  // REQUIRES: `limits` outlives the registry.
  explicit SessionRegistry(const config::Limits& limits);
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // limits.max_sessions: a slot is reserved before a session is made and given back when it is freed
  // (take(), erase(), or release() for a shard's sessions freed at shutdown).
  bool reserve() noexcept { return count_.try_acquire(); }
  void release(uint32_t n = 1) noexcept { count_.release(n); }
  uint32_t count() const noexcept { return count_.count(); }

  // A ticket against limits.max_unactivated_sessions (per address and in total); empty when either is
  // reached. A session holds it until its first activation.
  AddressCounter::Ticket reserve_unactivated(const std::string& address) {
    return unactivated_.acquire(address);
  }
  uint32_t unactivated_count() const { return unactivated_.total(); }
  // When no ticket is free: a place in the FIFO of limits.max_waiting_sessions(_per_address), see
  // AddressCounter::wait; 0 when it is full.
  uint64_t wait_unactivated(const std::string& address, AddressCounter::Grant grant) {
    return unactivated_.wait(address, std::move(grant));
  }
  bool cancel_wait(uint64_t waiter) { return unactivated_.cancel(waiter); }
  AddressCounter::Ticket adopt_unactivated(std::string address) {
    return unactivated_.adopt(std::move(address));
  }
  uint32_t waiting_count() const { return unactivated_.waiting(); }

  // Puts `session` into `shard`'s table, holding a reserved slot (or the one it brought from another
  // shard), and records the shard as its owner.
  void add(ShardState& shard, std::unique_ptr<Session> session);
  // Takes the session out of `shard`'s table and gives its slot back (nullptr: no such session).
  std::unique_ptr<Session> take(ShardState& shard, const ua::NodeId& token);
  // Frees the session at `it` of `shard`'s table (expiry, a closed channel), its slot given back; the
  // next entry.
  Table::iterator erase(ShardState& shard, Table::iterator it);
  // Takes the session at `it` out of `shard`'s table for add() on another shard: it keeps its slot, and
  // its owner stays `shard` until that add().
  std::unique_ptr<Session> leave(ShardState& shard, Table::iterator it);
  // The shard holding the session of this authentication token, or nullptr.
  ShardState* owner(const ua::NodeId& token);
  // Forgets the owners that are `shard` (its sessions are being freed at shutdown), or every owner.
  void forget_shard(const ShardState& shard);
  void forget_owners();

 private:
  BoundedCounter count_;
  AddressCounter unactivated_;
  std::mutex owners_mutex_;
  std::unordered_map<ua::NodeId, ShardState*> owners_;  // GUARDED_BY(owners_mutex_)
};

}  // namespace opcuad::services
