#pragma once
// AddressSpace: the published NodeStore plus the ValueStore its variables point into.
//
// Shards call current() at the start of a loop turn and use that store until they call
// quiescent() at the end of it. publish() swaps a new store in and retires the old one, which the
// EpochReclaimer frees once every shard has passed a quiescent point. The ValueStore outlives every
// NodeStore (stores hold ValueCell pointers).
//
// Each published store gets the next generation number (NodeStore::generation()). A shard that keeps
// anything derived from a store across loop turns (a browse continuation point; the value cells its
// monitored items sample) compares the current store's generation with the one it last saw, once per
// request or sweep: one acquire load and one compare, no lock. Comparing store addresses would not do:
// a new store may be allocated where a freed old one was.

#include <atomic>
#include <memory>

#include "addressspace/node_store.hpp"
#include "addressspace/value_store.hpp"

namespace opcuad::addressspace {

class AddressSpace {
 public:
  explicit AddressSpace(size_t value_partitions = 16) : values_(value_partitions) {}
  ~AddressSpace() { delete current_.load(std::memory_order_acquire); }
  AddressSpace(const AddressSpace&) = delete;
  AddressSpace& operator=(const AddressSpace&) = delete;

  // Any participant thread; valid until that thread's next quiescent point.
  const NodeStore* current() const noexcept { return current_.load(std::memory_order_acquire); }
  ValueStore& values() noexcept { return values_; }
  EpochReclaimer& reclaimer() noexcept { return values_.reclaimer(); }

  // Control plane: makes `store` current; the old store is retired through `p`.
  void publish(std::unique_ptr<NodeStore> store, EpochReclaimer::Participant& p) {
    store->generation_ = ++generation_;  // before the release below makes the store visible
    const NodeStore* old = current_.exchange(store.release(), std::memory_order_acq_rel);
    if (old) values_.reclaimer().retire(p, old);
  }

 private:
  ValueStore values_;  // declared first: destroyed after the store and the reclaimer's retired stores
  std::atomic<const NodeStore*> current_{nullptr};
  uint64_t generation_ = 0;  // control plane only (publish)
};

}  // namespace opcuad::addressspace
