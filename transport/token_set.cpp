// TokenSet (token_set.hpp): issue, renewal, switch-over and expiry of a channel's security tokens.
#include "transport/token_set.hpp"

#include <algorithm>

namespace opcuad::transport {

SecurityToken TokenSet::make(uint32_t lifetime_ms, Clock::time_point now) {
  SecurityToken t;
  t.token_id = next_token_id_++;
  if (t.token_id == 0) t.token_id = next_token_id_++;  // 0 means "no token" on the wire
  t.created_at = ua::DateTime::now();
  t.lifetime_ms = lifetime_ms;
  t.expires = now + std::chrono::milliseconds(lifetime_ms) * 5 / 4;
  return t;
}

SecurityToken& TokenSet::issue(uint32_t lifetime_ms, Clock::time_point now) {
  tokens_[0] = make(lifetime_ms, now);
  count_ = 1;
  return tokens_[0];
}

SecurityToken& TokenSet::renew(uint32_t lifetime_ms, Clock::time_point now) {
  // Out of room (a client renewing again and again without switching): drop the oldest token it has not
  // used, keeping tokens_[0], the one it secures its messages with.
  if (count_ == kMaxTokens) {
    std::move(tokens_.begin() + 2, tokens_.end(), tokens_.begin() + 1);
    --count_;
  }
  tokens_[count_] = make(lifetime_ms, now);
  return tokens_[count_++];
}

const SecurityToken* TokenSet::find(uint32_t token_id) const noexcept {
  for (uint32_t i = 0; i < count_; ++i) {
    if (tokens_[i].token_id == token_id) return &tokens_[i];
  }
  return nullptr;
}

bool TokenSet::accept(uint32_t token_id) noexcept {
  if (token_id == tokens_[0].token_id) return true;  // the token in use: every message but the switch
  for (uint32_t i = 1; i < count_; ++i) {
    if (tokens_[i].token_id == token_id) {
      // The client switched to a newer token: the older ones are no longer accepted (Part 6 §6.7.4), and
      // responses are secured with this one from now on.
      std::move(tokens_.begin() + i, tokens_.begin() + count_, tokens_.begin());
      count_ -= i;
      return true;
    }
  }
  return false;
}

void TokenSet::expire(Clock::time_point now) noexcept {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < count_; ++i) {
    if (i + 1 == count_ || now <= tokens_[i].expires) tokens_[kept++] = tokens_[i];
  }
  count_ = kept;
}

}  // namespace opcuad::transport
