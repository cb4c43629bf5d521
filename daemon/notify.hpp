#pragma once
// The service manager's notification protocol (sd_notify(3), systemd's "notify" service type): state
// lines such as READY=1 sent as one datagram each to the AF_UNIX socket named by $NOTIFY_SOCKET (a path,
// or an abstract name written with a leading '@').
//
// Written here rather than linked from libsystemd: the protocol is a documented datagram of text lines
// and these few lines are all of it, so the daemon needs no library, no build dependency and no
// package dependency for it, and behaves the same with or without systemd.
//
// Threads: the control thread only (send() is one sendto(2); nothing is shared).

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace opcuad {

class Notifier {
 public:
  // Inactive (every send() does nothing) when `socket_path` is empty.
  explicit Notifier(std::string socket_path);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // From $NOTIFY_SOCKET; inactive when it is unset or empty.
  static Notifier from_environment();

  bool active() const noexcept { return !path_.empty(); }
  // Sends `state` ("READY=1", "STATUS=...", several lines separated by '\n') as one datagram. False
  // when inactive or when the socket refused it (the service manager went away: nothing to report to).
  bool send(std::string_view state) noexcept;

 private:
  std::string path_;
  int fd_ = -1;
};

// The watchdog interval the service manager asks for (sd_watchdog_enabled(3)): $WATCHDOG_USEC, when it
// is a positive number and $WATCHDOG_PID is unset or names this process. nullopt otherwise.
std::optional<std::chrono::microseconds> watchdog_interval(const char* usec, const char* pid,
                                                           pid_t self) noexcept;
std::optional<std::chrono::microseconds> watchdog_interval_from_environment() noexcept;

// "MONOTONIC_USEC=<CLOCK_MONOTONIC now in µs>", what RELOADING=1 carries for systemd 253 and later
// (Type=notify-reload) to tell this reload from an earlier one.
std::string monotonic_usec_line();

}  // namespace opcuad
