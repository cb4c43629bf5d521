#pragma once
// Rate limiting of repeated operator events (docs/CONFIGURATION.md, "logging"): per event kind and key
// (e.g. login.failed from one address), at most `burst` lines per window; the rest are counted and
// reported as one "suppressed" line when the window is over. A client that retries a wrong password in a
// loop, or opens connections in a loop, thus costs a few lines per window, not one line per attempt.
//
// The table is bounded (max_keys): when it is full of live windows, a new key shares its kind's overflow
// window (key "*"), so hostile keys cannot grow it. Not thread-safe: EventLog guards it with a mutex.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace opcuad {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    uint32_t burst = 20;  // lines per window and key; 0: no limit
    std::chrono::milliseconds window{10000};
    size_t max_keys = 4096;
  };
  struct Decision {
    bool write = true;        // write this occurrence
    uint64_t suppressed = 0;  // occurrences dropped in this key's window that just ended (report them first)
  };

  explicit RateLimiter(Limits limits) : limits_(limits) {}

  Decision admit(std::string_view kind, std::string_view key, Clock::time_point now);

  // Ends every window older than the window length: calls report(kind, key, count) for those that
  // dropped something, and forgets them all. The daemon calls it once a second.
  template <class F>
  void flush(Clock::time_point now, F&& report) {
    for (auto it = windows_.begin(); it != windows_.end();) {
      if (now - it->second.start < limits_.window) {
        ++it;
        continue;
      }
      if (it->second.seen > limits_.burst) {
        const std::string& k = it->first;
        const size_t split = k.find('\0');
        report(std::string_view(k).substr(0, split), std::string_view(k).substr(split + 1),
               it->second.seen - limits_.burst);
      }
      it = windows_.erase(it);
    }
  }

  size_t keys() const noexcept { return windows_.size(); }
  const Limits& limits() const noexcept { return limits_; }

 private:
  struct Window {
    Clock::time_point start;
    uint64_t seen = 0;
  };
  Limits limits_;
  std::unordered_map<std::string, Window> windows_;  // kind '\0' key -> its window
};

}  // namespace opcuad
