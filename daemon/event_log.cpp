#include "daemon/event_log.hpp"

#include <string>
#include <vector>

#include "daemon/log.hpp"

namespace opcuad {

namespace {

log::Level level_of(transport::EventLevel l) {
  return l == transport::EventLevel::Warn ? log::Level::Warn : log::Level::Info;
}

void write_suppressed(std::string_view kind, std::string_view key, uint64_t count,
                      std::chrono::milliseconds window) {
  std::string f;
  transport::append_field(f, "kind", kind);
  if (!key.empty()) transport::append_field(f, "key", key);
  transport::append_field(f, "suppressed", count);
  transport::append_field(f, "window_s", static_cast<uint64_t>(window.count() / 1000));
  log::warn("event=log.suppressed{}", f);
}

}  // namespace

void EventLog::write(const transport::Event& e) {
  const log::Level level = level_of(e.level);
  if (!log::enabled(level)) return;
  RateLimiter::Decision d;
  std::chrono::milliseconds window;
  {
    std::lock_guard lock(mutex_);
    d = limiter_.admit(e.kind, e.key, RateLimiter::Clock::now());
    window = limiter_.limits().window;
  }
  if (d.suppressed) write_suppressed(e.kind, e.key, d.suppressed, window);
  if (d.write) log::write(level, "event={}{}", e.kind, e.fields);
}

void EventLog::flush(RateLimiter::Clock::time_point now) {
  struct Dropped {
    std::string kind, key;
    uint64_t count;
  };
  std::vector<Dropped> dropped;
  std::chrono::milliseconds window;
  {
    std::lock_guard lock(mutex_);
    limiter_.flush(now, [&](std::string_view kind, std::string_view key, uint64_t n) {
      dropped.push_back({std::string(kind), std::string(key), n});
    });
    window = limiter_.limits().window;
  }
  for (const auto& d : dropped) write_suppressed(d.kind, d.key, d.count, window);  // outside the lock
}

}  // namespace opcuad
