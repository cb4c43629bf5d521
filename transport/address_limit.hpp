#pragma once
// AddressLimit: how many connections each client IP address holds, for max_connections_per_address.
// Touched when a connection is accepted (the listener's thread) and when it ends (its shard's thread),
// under one mutex; never on the request path.

#include <asio/ip/address.hpp>

#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace opcuad::transport {

class AddressLimit {
 public:
  // An address as 16 bytes; an IPv4 address and its IPv4-mapped IPv6 form (a dual-stack socket) are the
  // same key. Every IPv6 address counts on its own: hosts of one /64 are often distinct machines of a LAN.
  using Key = std::array<uint8_t, 16>;
  static Key key_of(const asio::ip::address& address) noexcept;

  // One connection slot of an address, released when destroyed. Move-only; empty when default-made.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : owner_(other.owner_), key_(other.key_) { other.owner_ = nullptr; }
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { reset(); }
    void reset() noexcept;
    explicit operator bool() const noexcept { return owner_ != nullptr; }

   private:
    friend class AddressLimit;
    Slot(AddressLimit* owner, const Key& key) : owner_(owner), key_(key) {}
    AddressLimit* owner_ = nullptr;
    Key key_{};
  };

  // True with a slot in `out` when the address holds fewer than `limit` connections (limit 0: no limit,
  // nothing counted, `out` left empty); false when it is at the limit.
  bool try_acquire(const asio::ip::address& address, uint32_t limit, Slot& out);
  uint32_t count(const asio::ip::address& address) const;
  size_t addresses() const;  // addresses holding at least one slot

 private:
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept;
  };
  void release(const Key& key) noexcept;

  mutable std::mutex mu_;
  std::unordered_map<Key, uint32_t, KeyHash> counts_;  // GUARDED_BY(mu_); entries at zero are erased
};

}  // namespace opcuad::transport
