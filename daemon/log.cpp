#include "daemon/log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

namespace opcuad::log {

namespace {
// The descriptor lines go to: 2, or one opened by open_file() and kept for the life of the process
// (reopen() replaces the file behind it with dup2, so its number never changes while writers use it).
std::atomic<int> g_fd{STDERR_FILENO};
std::mutex g_control;  // open_file / reopen / use_stderr against each other (control thread only)
std::string g_path;    // guarded by g_control
int g_file_fd = -1;    // guarded by g_control

// O_APPEND: every write lands at the end, whole (Linux, regular files). Created 0640 whatever the
// umask: the log may name clients and nodes, which is not for every local user.
int open_append(const std::string& path, std::string& why) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd >= 0) {
    ::fchmod(fd, 0640);
    return fd;
  }
  if (errno == EEXIST) fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) why = "cannot open log file " + path + ": " + std::strerror(errno);
  return fd;
}
void write_all(int fd, const std::string& line) noexcept {
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to report a failing log
    p += n;
    left -= static_cast<size_t>(n);
  }
}

StderrFormat detect_format() noexcept {
  return stderr_is_journal(std::getenv("JOURNAL_STREAM"), STDERR_FILENO) ? StderrFormat::Journal
                                                                         : StderrFormat::Plain;
}
std::atomic<int> g_format{static_cast<int>(detect_format())};
}  // namespace

bool stderr_is_journal(const char* journal_stream, int fd) noexcept {
  if (!journal_stream || !*journal_stream) return false;
  unsigned long long dev = 0, ino = 0;
  char tail = 0;
  if (std::sscanf(journal_stream, "%llu:%llu%c", &dev, &ino, &tail) != 2) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  // The variable is inherited by children whose standard error may go elsewhere: it counts only when
  // it names this very stream.
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

void set_stderr_format(StderrFormat f) noexcept {
  g_format.store(static_cast<int>(f), std::memory_order_relaxed);
}
StderrFormat stderr_format() noexcept {
  return static_cast<StderrFormat>(g_format.load(std::memory_order_relaxed));
}

int priority(Level l) noexcept {
  switch (l) {
    case Level::Error:
      return 3;
    case Level::Warn:
      return 4;
    case Level::Info:
      return 6;
    default:
      return 7;
  }
}

std::optional<Level> parse_level(std::string_view n) noexcept {
  if (n == "trace") return Level::Trace;
  if (n == "debug") return Level::Debug;
  if (n == "info") return Level::Info;
  if (n == "warn") return Level::Warn;
  if (n == "error") return Level::Error;
  return std::nullopt;
}

const char* name(Level l) noexcept {
  switch (l) {
    case Level::Trace:
      return "trace";
    case Level::Debug:
      return "debug";
    case Level::Info:
      return "info ";
    case Level::Warn:
      return "warn ";
    default:
      return "error";
  }
}

void set_level(Level l) noexcept {
  detail::g_level.store(static_cast<int>(l), std::memory_order_relaxed);
}
Level level() noexcept {
  return static_cast<Level>(detail::g_level.load(std::memory_order_relaxed));
}

std::optional<std::string> open_file(const std::string& path) {
  std::lock_guard lock(g_control);
  std::string why;
  const int fd = open_append(path, why);
  if (fd < 0) return why;
  if (g_file_fd >= 0) {
    ::dup2(fd, g_file_fd);  // the same number stays in use: see reopen()
    ::close(fd);
  } else {
    g_file_fd = fd;
  }
  g_path = path;
  g_fd.store(g_file_fd, std::memory_order_release);
  return std::nullopt;
}

std::optional<std::string> reopen() {
  std::lock_guard lock(g_control);
  if (g_file_fd < 0 || g_fd.load(std::memory_order_relaxed) != g_file_fd) return std::nullopt;
  std::string why;
  const int fd = open_append(g_path, why);
  if (fd < 0) return why;  // keep writing to the renamed file rather than nowhere
  ::dup2(fd, g_file_fd);
  ::close(fd);
  return std::nullopt;
}

void use_stderr() {
  std::lock_guard lock(g_control);
  g_fd.store(STDERR_FILENO, std::memory_order_release);
}

void emit(Level level, std::string_view message) noexcept {
  const int target = g_fd.load(std::memory_order_acquire);
  if (target == STDERR_FILENO && stderr_format() == StderrFormat::Journal) {
    try {
      std::string line = fmt::format("<{}>", priority(level));
      line += message;
      line += '\n';
      write_all(target, line);
    } catch (...) {
    }
    return;
  }
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  try {
    std::string line =
        fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z {} ", tm.tm_year + 1900, tm.tm_mon + 1,
                    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000), name(level));
    line += message;
    line += '\n';
    write_all(target, line);
  } catch (...) {
    // Out of memory while formatting: the line is lost, the caller is not disturbed.
  }
}

}  // namespace opcuad::log
