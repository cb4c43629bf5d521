#pragma once
// SecureChannelIds: unique among the live channels of this process and unpredictable across restarts.
// A counter goes through a keyed 32-bit permutation (a 4-round Feistel network with random round keys):
// a bijection, so distinct counters give distinct ids, and without the keys the next id cannot be guessed.
// Thread-safe: shards draw ids concurrently (only on OpenSecureChannel, never per request).

#include <array>
#include <atomic>
#include <cstdint>

namespace opcuad::transport {

class ChannelIdSource {
 public:
  ChannelIdSource();  // random keys and start
  ChannelIdSource(std::array<uint32_t, 4> keys, uint32_t start) noexcept : keys_(keys), counter_(start) {}

  // Never 0 (0 means "no channel" on the wire).
  uint32_t next() noexcept;
  // Token ids, also never 0; they need only be unique per channel, and are unpredictable too.
  uint32_t random_token_start() noexcept { return next(); }

 private:
  uint32_t permute(uint32_t x) const noexcept;
  std::array<uint32_t, 4> keys_;
  std::atomic<uint32_t> counter_;
};

}  // namespace opcuad::transport
