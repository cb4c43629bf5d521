#pragma once
// AddressCounter: counts things held per client address (sessions not yet activated) against a total and
// a per-address limit, with RAII tickets, and keeps a bounded FIFO of those waiting for one to free.
// Thread-safe: a mutex guards the tables, taken only when a ticket is acquired, waited for or released
// (CreateSession, the first ActivateSession, a session's end), never on the request path. The tables hold
// an entry only for addresses holding a ticket or waiting for one, so they are bounded by the limits.

#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

namespace opcuad::services {

class AddressCounter {
 public:
  // Waiters over all addresses and of one address (0 for either: nobody waits).
  struct WaitLimits {
    uint32_t max_total;
    uint32_t max_per_address;
  };
  AddressCounter(uint32_t max_total, uint32_t max_per_address, WaitLimits wait = WaitLimits{0, 0}) noexcept
      : max_total_(max_total), max_per_address_(max_per_address), wait_(wait) {}
  AddressCounter(const AddressCounter&) = delete;
  AddressCounter& operator=(const AddressCounter&) = delete;

  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& o) noexcept : owner_(o.owner_), address_(std::move(o.address_)) { o.owner_ = nullptr; }
    Ticket& operator=(Ticket&& o) noexcept {
      if (this != &o) {
        reset();
        owner_ = o.owner_;
        address_ = std::move(o.address_);
        o.owner_ = nullptr;
      }
      return *this;
    }
    ~Ticket() { reset(); }
    explicit operator bool() const noexcept { return owner_ != nullptr; }
    void reset() noexcept {
      if (owner_) owner_->release(address_);
      owner_ = nullptr;
    }

   private:
    friend class AddressCounter;
    Ticket(AddressCounter* owner, std::string address) : owner_(owner), address_(std::move(address)) {}
    AddressCounter* owner_ = nullptr;
    std::string address_;
  };

  // A ticket for `address`, or an empty one when the total or the address's count is at its limit
  // (0: no limit), or when others of this address wait already (they come first).
  Ticket acquire(const std::string& address) {
    std::lock_guard lock(mutex_);
    auto waiting = waiting_per_address_.find(address);
    if (waiting != waiting_per_address_.end()) return {};
    if (!fits(address)) return {};
    ++per_address_[address];
    ++total_;
    return Ticket(this, address);
  }

  // Called, on the thread that freed the slot and outside the lock, when a waiter's turn has come: the
  // slot is held for it from then on, and adopt(address) turns it into its ticket.
  using Grant = std::function<void()>;
  // Queues a wait for a ticket of `address` behind the others waiting: 0 when the wait limits are reached
  // (or waiting is off), else the waiter's id for cancel(). `grant` runs exactly once unless cancel()
  // returns true first.
  uint64_t wait(const std::string& address, Grant grant) {
    std::lock_guard lock(mutex_);
    if (!wait_.max_total || !wait_.max_per_address) return 0;
    if (waiters_.size() >= wait_.max_total) return 0;
    uint32_t& n = waiting_per_address_[address];
    if (n >= wait_.max_per_address) {
      if (n == 0) waiting_per_address_.erase(address);
      return 0;
    }
    ++n;
    const uint64_t id = ++last_waiter_id_;
    waiters_.push_back(Waiter{id, address, std::move(grant)});
    return id;
  }
  // Withdraws a wait (its deadline passed, its client left): true when it was still waiting; false when
  // its grant has run or is running, which then owns the slot.
  bool cancel(uint64_t id) {
    std::lock_guard lock(mutex_);
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      if (it->id != id) continue;
      forget_waiter(it->address);
      waiters_.erase(it);
      return true;
    }
    return false;
  }
  // The ticket of a slot a grant holds for `address`.
  Ticket adopt(std::string address) { return Ticket(this, std::move(address)); }

  uint32_t total() const {
    std::lock_guard lock(mutex_);
    return total_;
  }
  uint32_t waiting() const {
    std::lock_guard lock(mutex_);
    return static_cast<uint32_t>(waiters_.size());
  }

 private:
  struct Waiter {
    uint64_t id;
    std::string address;
    Grant grant;
  };
  bool fits(const std::string& address) const {  // REQUIRES(mutex_)
    if (max_total_ && total_ >= max_total_) return false;
    if (!max_per_address_) return true;
    auto it = per_address_.find(address);
    return it == per_address_.end() || it->second < max_per_address_;
  }
  void forget_waiter(const std::string& address) {  // REQUIRES(mutex_)
    auto it = waiting_per_address_.find(address);
    if (it != waiting_per_address_.end() && --it->second == 0) waiting_per_address_.erase(it);
  }
  void release(const std::string& address) noexcept {
    Grant grant;
    {
      std::lock_guard lock(mutex_);
      auto it = per_address_.find(address);
      if (it == per_address_.end()) return;
      if (--it->second == 0) per_address_.erase(it);
      --total_;
      // The freed slot goes to the oldest waiter it fits (the same address, or any while the total was
      // the limit), which keeps each address's waiters in their order.
      for (auto w = waiters_.begin(); w != waiters_.end(); ++w) {
        if (!fits(w->address)) continue;
        ++per_address_[w->address];
        ++total_;
        forget_waiter(w->address);
        grant = std::move(w->grant);
        waiters_.erase(w);
        break;
      }
    }
    if (grant) grant();
  }

  const uint32_t max_total_;
  const uint32_t max_per_address_;
  const WaitLimits wait_;
  mutable std::mutex mutex_;
  uint32_t total_ = 0;                                             // GUARDED_BY(mutex_)
  std::unordered_map<std::string, uint32_t> per_address_;          // GUARDED_BY(mutex_)
  std::list<Waiter> waiters_;                                      // GUARDED_BY(mutex_), oldest first
  std::unordered_map<std::string, uint32_t> waiting_per_address_;  // GUARDED_BY(mutex_)
  uint64_t last_waiter_id_ = 0;                                    // GUARDED_BY(mutex_)
};

}  // namespace opcuad::services
