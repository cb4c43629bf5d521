#include "services/session_registry.hpp"

#include <algorithm>

namespace opcuad::services {

SessionRegistry::SessionRegistry(const config::Limits& limits)
    : count_(limits.max_sessions),
      unactivated_(
          limits.max_unactivated_sessions, limits.max_unactivated_sessions_per_address,
          AddressCounter::WaitLimits{limits.max_waiting_sessions, limits.max_waiting_sessions_per_address}) {}

void SessionRegistry::add(ShardState& shard, std::unique_ptr<Session> session) {
  {
    std::lock_guard lock(owners_mutex_);
    owners_[session->authentication_token] = &shard;
  }
  const ua::NodeId token = session->authentication_token;
  shard.sessions.emplace(token, std::move(session));
}

std::unique_ptr<Session> SessionRegistry::take(ShardState& shard, const ua::NodeId& token) {
  auto it = shard.sessions.find(token);
  if (it == shard.sessions.end()) return nullptr;
  std::unique_ptr<Session> session = std::move(it->second);
  shard.sessions.erase(it);
  release();
  std::lock_guard lock(owners_mutex_);
  owners_.erase(token);
  return session;
}

SessionRegistry::Table::iterator SessionRegistry::erase(ShardState& shard, Table::iterator it) {
  {
    std::lock_guard lock(owners_mutex_);
    owners_.erase(it->first);
  }
  it = shard.sessions.erase(it);
  release();
  return it;
}

std::unique_ptr<Session> SessionRegistry::leave(ShardState& shard, Table::iterator it) {
  std::unique_ptr<Session> session = std::move(it->second);
  shard.sessions.erase(it);
  return session;
}

ShardState* SessionRegistry::owner(const ua::NodeId& token) {
  std::lock_guard lock(owners_mutex_);
  auto it = owners_.find(token);
  return it == owners_.end() ? nullptr : it->second;
}

void SessionRegistry::forget_shard(const ShardState& shard) {
  std::lock_guard lock(owners_mutex_);
  std::erase_if(owners_, [&shard](const auto& owner) { return owner.second == &shard; });
}

void SessionRegistry::forget_owners() {
  std::lock_guard lock(owners_mutex_);
  owners_.clear();
}

}  // namespace opcuad::services
