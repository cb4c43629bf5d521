#include "transport/channel_id.hpp"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <stdexcept>

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

// The keys and the start come from OpenSSL's generator; a daemon whose generator fails does not start
// (ids an attacker could predict would let it aim at other clients' channels).
ChannelIdSource::ChannelIdSource() {
  uint32_t seed[5];
  if (RAND_bytes(reinterpret_cast<unsigned char*>(seed), sizeof seed) != 1) {
    throw std::runtime_error("RAND_bytes failed: no random secure channel ids");
  }
  for (size_t i = 0; i < keys_.size(); ++i) keys_[i] = seed[i];
  counter_.store(seed[4], std::memory_order_relaxed);
  OPENSSL_cleanse(seed, sizeof seed);
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
