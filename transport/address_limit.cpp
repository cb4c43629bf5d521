#include "transport/address_limit.hpp"

#include <cstring>

namespace opcuad::transport {

AddressLimit::Key AddressLimit::key_of(const asio::ip::address& address) noexcept {
  if (address.is_v4()) return asio::ip::make_address_v6(asio::ip::v4_mapped, address.to_v4()).to_bytes();
  return address.to_v6().to_bytes();
}

size_t AddressLimit::KeyHash::operator()(const Key& k) const noexcept {
  uint64_t a, b;
  std::memcpy(&a, k.data(), 8);
  std::memcpy(&b, k.data() + 8, 8);
  uint64_t h = (a ^ 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
  h ^= b + 0x94d049bb133111ebull + (h << 6) + (h >> 2);
  return static_cast<size_t>(h ^ (h >> 31));
}

bool AddressLimit::try_acquire(const asio::ip::address& address, uint32_t limit, Slot& out) {
  out.reset();
  if (limit == 0) return true;
  const Key key = key_of(address);
  std::lock_guard lock(mu_);
  uint32_t& n = counts_[key];
  if (n >= limit) return false;
  ++n;
  out = Slot(this, key);
  return true;
}

void AddressLimit::release(const Key& key) noexcept {
  std::lock_guard lock(mu_);
  auto it = counts_.find(key);
  if (it == counts_.end()) return;
  if (--it->second == 0) counts_.erase(it);
}

uint32_t AddressLimit::count(const asio::ip::address& address) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find(key_of(address));
  return it == counts_.end() ? 0 : it->second;
}

size_t AddressLimit::addresses() const {
  std::lock_guard lock(mu_);
  return counts_.size();
}

AddressLimit::Slot& AddressLimit::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = other.owner_;
    key_ = other.key_;
    other.owner_ = nullptr;
  }
  return *this;
}

void AddressLimit::Slot::reset() noexcept {
  if (owner_) owner_->release(key_);
  owner_ = nullptr;
}

}  // namespace opcuad::transport
