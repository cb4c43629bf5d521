#include "daemon/rate_limiter.hpp"

namespace opcuad {

RateLimiter::Decision RateLimiter::admit(std::string_view kind, std::string_view key, Clock::time_point now) {
  if (limits_.burst == 0) return {};
  std::string k;
  k.reserve(kind.size() + 1 + key.size());
  k.append(kind).push_back('\0');
  k.append(key);
  auto it = windows_.find(k);
  if (it == windows_.end()) {
    if (windows_.size() >= limits_.max_keys) {
      k.resize(kind.size() + 1);
      k.push_back('*');  // the kind's shared overflow window
      it = windows_.find(k);
    }
    if (it == windows_.end()) it = windows_.emplace(std::move(k), Window{now, 0}).first;
  }
  Window& w = it->second;
  Decision d;
  if (now - w.start >= limits_.window) {
    if (w.seen > limits_.burst) d.suppressed = w.seen - limits_.burst;
    w = Window{now, 0};
  }
  ++w.seen;
  d.write = w.seen <= limits_.burst;
  return d;
}

}  // namespace opcuad
