#include "daemon/notify.hpp"

#include <fmt/core.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace opcuad {

Notifier::Notifier(std::string socket_path) : path_(std::move(socket_path)) {
  if (path_.empty()) return;
  // sockaddr_un holds at most 107 characters and a terminator; a longer name cannot be reached.
  if (path_.size() >= sizeof(sockaddr_un::sun_path) || (path_[0] != '/' && path_[0] != '@')) {
    path_.clear();
    return;
  }
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) path_.clear();
}

Notifier::~Notifier() {
  if (fd_ >= 0) ::close(fd_);
}

Notifier Notifier::from_environment() {
  const char* p = std::getenv("NOTIFY_SOCKET");
  return Notifier(p ? std::string(p) : std::string());
}

bool Notifier::send(std::string_view state) noexcept {
  if (!active()) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.data(), path_.size());
  if (path_[0] == '@') addr.sun_path[0] = '\0';  // an abstract socket name
  const auto len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path_.size() + (path_[0] == '@' ? 0 : 1));
  for (;;) {
    const ssize_t n =
        ::sendto(fd_, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
    if (n >= 0) return true;
    if (errno != EINTR) return false;
  }
}

std::optional<std::chrono::microseconds> watchdog_interval(const char* usec, const char* pid,
                                                           pid_t self) noexcept {
  if (!usec || !*usec) return std::nullopt;
  uint64_t us = 0;
  const char* end = usec + std::strlen(usec);
  if (auto [p, ec] = std::from_chars(usec, end, us); ec != std::errc() || p != end || us == 0)
    return std::nullopt;
  if (pid && *pid) {
    int64_t owner = 0;
    const char* pend = pid + std::strlen(pid);
    if (auto [p, ec] = std::from_chars(pid, pend, owner); ec != std::errc() || p != pend || owner != self) {
      return std::nullopt;  // meant for another process (a parent that exec'd us without resetting it)
    }
  }
  // Anything beyond a day pings needlessly often rather than overflowing the clock arithmetic.
  constexpr uint64_t kDay = 86400ull * 1000000u;
  return std::chrono::microseconds(static_cast<int64_t>(std::min(us, kDay)));
}

std::optional<std::chrono::microseconds> watchdog_interval_from_environment() noexcept {
  return watchdog_interval(std::getenv("WATCHDOG_USEC"), std::getenv("WATCHDOG_PID"), ::getpid());
}

std::string monotonic_usec_line() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t us = static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
  return fmt::format("MONOTONIC_USEC={}", us);
}

}  // namespace opcuad
