#pragma once
// TokenSet: a secure channel's security tokens (Part 4 §5.5.2, Part 6 §6.7.4): the one the client secures
// its messages with, and the newer ones renewals issued that it has not used yet.
//
// Tokens are kept oldest first. tokens_[0] is in use (responses are secured with it); a token is accepted
// until it expires or the client uses a newer one, whichever comes first (Part 6 §6.7.4: once the client
// uses the new token the old one is no longer accepted). Every token but the newest ends on its own
// lifetime; the newest expiring ends the channel (the channel's tick checks newest_expired()). A renewal
// beyond kMaxTokens drops the oldest unused token, never the one in use. Expiry is checked by the tick,
// not per message, so the request path reads no clock; a token lives up to one tick past its expiry.
//
// shard-local: owned by one SecureChannel; no locks, no allocation.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>

#include "transport/security/crypto.hpp"
#include "ua/scalars.hpp"

namespace opcuad::transport {

// The symmetric keys of one token (Part 6 §6.7.5): what the client secures its messages with (we verify
// and decrypt) and what we secure ours with.
struct TokenKeys {
  security::SymmetricCipher receive;
  security::SymmetricCipher send;
};

struct SecurityToken {
  uint32_t token_id = 0;
  std::shared_ptr<TokenKeys> keys;  // null on a None channel
  ua::DateTime created_at;
  uint32_t lifetime_ms = 0;
  std::chrono::steady_clock::time_point expires;  // created + lifetime * 1.25 (renewal grace)
};

class TokenSet {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr uint32_t kMaxTokens = 3;

  // Token ids count up from `first_token_id` (random per channel, ChannelIdSource), skipping 0.
  explicit TokenSet(uint32_t first_token_id) noexcept : next_token_id_(first_token_id) {}

  // OpenSecureChannel Issue: the channel's first token, alone in the set. `lifetime_ms` is the revised
  // lifetime (revise_token_lifetime()); the token is accepted for 25% longer, the renewal grace.
  SecurityToken& issue(uint32_t lifetime_ms, Clock::time_point now);
  // OpenSecureChannel Renew: a newer token beside the ones still valid.
  SecurityToken& renew(uint32_t lifetime_ms, Clock::time_point now);

  // The token with this id among the valid ones; nullptr for an unknown (or expired) id, which the
  // channel answers BadSecureChannelTokenUnknown.
  const SecurityToken* find(uint32_t token_id) const noexcept;
  // A chunk secured with `token_id` verified: when it is a newer token, the client switched to it and the
  // older ones are dropped. False for an unknown id.
  bool accept(uint32_t token_id) noexcept;
  // Drops every token but the newest whose lifetime (with its grace) ended by `now`.
  void expire(Clock::time_point now) noexcept;
  bool newest_expired(Clock::time_point now) const noexcept { return now > newest().expires; }

  const SecurityToken& in_use() const noexcept { return tokens_[0]; }
  const SecurityToken& newest() const noexcept { return tokens_[count_ - 1]; }
  uint32_t size() const noexcept { return count_; }

 private:
  SecurityToken make(uint32_t lifetime_ms, Clock::time_point now);

  // Before the first Issue the set holds one empty token (id 0); no symmetric chunk is accepted then.
  std::array<SecurityToken, kMaxTokens> tokens_{};
  uint32_t count_ = 1;
  uint32_t next_token_id_;
};

}  // namespace opcuad::transport
