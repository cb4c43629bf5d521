#include "services/shard.hpp"

#include "services/subscription.hpp"

namespace opcuad::services {

void adapt_to_store(ShardState& shard, const addressspace::NodeStore& store) {
  shard.store_generation = store.generation();
  for (auto& [id, subscription] : shard.subscription_index) subscription->resolve_items(store);
  // A point taken from `store` itself (a handler that saw it before this shard adapted) stays valid.
  auto stale = [&store](const auto& point) { return point.second.generation != store.generation(); };
  for (auto& [token, session] : shard.sessions) std::erase_if(session->continuations, stale);
  for (auto& session : shard.parked) std::erase_if(session->continuations, stale);
}

void expire_parked(ShardState& shard, std::chrono::steady_clock::time_point now) {
  std::erase_if(shard.parked, [now](const std::unique_ptr<Session>& s) {
    return s->subscriptions.empty() || now >= s->parked_until;
  });
}

}  // namespace opcuad::services
