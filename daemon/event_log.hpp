#pragma once
// EventLog: writes the operator events of the transport and the services (transport/events.hpp) as
// one line each, "event=<kind> name=value ...", at info or warn, through the RateLimiter.
//
// Threads: write() is called from the shard threads (a connection accepted or closed, a session created,
// a login refused) and the control thread. Events happen per connection or session, never per request,
// so a mutex around the limiter and a formatted string per line are fine here; nothing on the request
// path calls it.

#include <mutex>

#include "daemon/rate_limiter.hpp"
#include "transport/events.hpp"

namespace opcuad {

class EventLog {
 public:
  explicit EventLog(RateLimiter::Limits limits) : limiter_(limits) {}

  void write(const transport::Event& event);
  // Reports the windows that ended with suppressed lines ("event=log.suppressed ..."); once a second.
  void flush(RateLimiter::Clock::time_point now = RateLimiter::Clock::now());

 private:
  std::mutex mutex_;
  RateLimiter limiter_;  // GUARDED_BY(mutex_)
};

}  // namespace opcuad
