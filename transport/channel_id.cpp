#include "transport/channel_id.hpp"

#include <random>

namespace opcuad::transport {

namespace {

uint16_t round_function(uint16_t half, uint32_t key) noexcept {
  uint32_t x = (half ^ key) * 0x9E3779B1u;
  x ^= x >> 15;
  x *= 0x85EBCA77u;
  x ^= x >> 13;
  return static_cast<uint16_t>(x ^ (x >> 16));
}

}  // namespace

ChannelIdSource::ChannelIdSource() {
  std::random_device rd;  // /dev/urandom on Linux
  for (auto& k : keys_) k = rd();
  counter_.store(rd(), std::memory_order_relaxed);
}

uint32_t ChannelIdSource::permute(uint32_t x) const noexcept {
  uint16_t left = static_cast<uint16_t>(x >> 16), right = static_cast<uint16_t>(x);
  for (uint32_t key : keys_) {
    uint16_t next = left ^ round_function(right, key);
    left = right;
    right = next;
  }
  return static_cast<uint32_t>(left) << 16 | right;
}

uint32_t ChannelIdSource::next() noexcept {
  for (;;) {
    uint32_t id = permute(counter_.fetch_add(1, std::memory_order_relaxed));
    if (id != 0) return id;  // the one counter value mapping to 0 is skipped
  }
}

}  // namespace opcuad::transport
