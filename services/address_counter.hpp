#pragma once
// AddressCounter: counts things held per client address (sessions not yet activated) against a total and
// a per-address limit, with RAII tickets. Thread-safe: a mutex guards the table, taken only when a ticket
// is acquired or released (CreateSession, the first ActivateSession, a session's end), never on the
// request path. The table holds an entry only for addresses holding a ticket, so it is bounded by the
// total limit.

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace opcuad::services {

class AddressCounter {
 public:
  AddressCounter(uint32_t max_total, uint32_t max_per_address) noexcept
      : max_total_(max_total), max_per_address_(max_per_address) {}
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
  // (0: no limit).
  Ticket acquire(const std::string& address) {
    std::lock_guard lock(mutex_);
    if (max_total_ && total_ >= max_total_) return {};
    uint32_t& n = per_address_[address];
    if (max_per_address_ && n >= max_per_address_) return {};
    ++n;
    ++total_;
    return Ticket(this, address);
  }
  uint32_t total() const {
    std::lock_guard lock(mutex_);
    return total_;
  }

 private:
  void release(const std::string& address) noexcept {
    std::lock_guard lock(mutex_);
    auto it = per_address_.find(address);
    if (it == per_address_.end()) return;
    if (--it->second == 0) per_address_.erase(it);
    --total_;
  }

  const uint32_t max_total_;
  const uint32_t max_per_address_;
  mutable std::mutex mutex_;
  uint32_t total_ = 0;                                     // GUARDED_BY(mutex_)
  std::unordered_map<std::string, uint32_t> per_address_;  // GUARDED_BY(mutex_)
};

}  // namespace opcuad::services
