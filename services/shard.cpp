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

void index_event_item(ShardState& shard, MonitoredItem& item, const addressspace::NodeStore& store) {
  EventItemState* ev = item.event();
  if (!ev || ev->indexed) return;
  if (ev->generation() != store.generation()) {
    // Part 4 leaves a reload's effect on items to the server: the item keeps its filter when it still
    // compiles against the new event types, and its notifier when it still is one.
    ua::EventFilterResult ignored;
    const ua::EventFilter requested = ev->requested();
    ev->notifier = addressspace::kNoNode;
    if (!store.event_types() || !ev->compile(&requested, store, ignored).is_good()) return;
    const addressspace::NodeIndex n = store.find(item.node_id());
    if (n == addressspace::kNoNode || !store.event_types()->is_notifier(n)) return;
    ev->notifier = n;
  }
  if (ev->notifier == addressspace::kNoNode) return;
  auto& list = shard.event_items[ev->notifier];
  ev->index_slot = static_cast<uint32_t>(list.size());
  list.push_back(&item);
  ev->indexed = true;
  const size_t slot = NotifierWatch::slot(ev->notifier);
  if (shard.notifier_slot_items[slot]++ == 0 && shard.notifier_watch &&
      shard.index < NotifierWatch::kMaxShards) {
    shard.notifier_watch->watch(slot, uint64_t{1} << shard.index);
  }
}

void unindex_event_item(ShardState& shard, MonitoredItem& item) noexcept {
  EventItemState* ev = item.event();
  if (!ev || !ev->indexed) return;
  ev->indexed = false;
  auto it = shard.event_items.find(ev->notifier);
  if (it == shard.event_items.end()) return;
  auto& list = it->second;
  // Swap-remove: O(1), the moved item learns its new position.
  MonitoredItem* last = list.back();
  list[ev->index_slot] = last;
  last->event()->index_slot = ev->index_slot;
  list.pop_back();
  if (list.empty()) shard.event_items.erase(it);
  const size_t slot = NotifierWatch::slot(ev->notifier);
  if (--shard.notifier_slot_items[slot] == 0 && shard.notifier_watch &&
      shard.index < NotifierWatch::kMaxShards) {
    shard.notifier_watch->unwatch(slot, uint64_t{1} << shard.index);
  }
}

}  // namespace opcuad::services
