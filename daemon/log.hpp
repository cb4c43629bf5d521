#pragma once
// Logging through fmt: "2026-11-30T05:33:13.123Z info  message", one line per call, to standard error
// or to the file of the configuration's `logging.file` (docs/CONFIGURATION.md). `logging.level` sets
// the threshold: trace < debug < info < warn < error.
//
// Under systemd, when standard error is the journal ($JOURNAL_STREAM names its device and inode,
// systemd.exec(5)), lines on standard error are "<N>message" instead: the syslog priority prefix that
// journald reads from a stream (sd-daemon(3)), N = 3 error, 4 warn, 6 info, 7 debug and trace, and no
// timestamp (the journal keeps its own). A log file keeps the timestamped form.
//
// Thread-safe without a lock: each line is one write(2) on one descriptor (O_APPEND for a file, so
// lines from several threads never interleave). reopen() (the daemon calls it on SIGHUP, after a log
// rotation renamed the file) opens the path again and dup2()s it over the same descriptor number, so a
// concurrent writer writes whole lines to the old file or the new one, never to a closed descriptor.
// Secrets (passwords, authentication tokens, nonces) are never passed here.

#include <fmt/core.h>

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

namespace opcuad::log {

enum class Level : int { Trace, Debug, Info, Warn, Error };

// "trace", "debug", "info", "warn", "error" (the configuration's names); nullopt for anything else.
std::optional<Level> parse_level(std::string_view name) noexcept;
const char* name(Level l) noexcept;  // padded to five characters

void set_level(Level l) noexcept;
Level level() noexcept;
inline bool enabled(Level l) noexcept;

// Appends to `path` from now on (created with mode 0640 when absent). Control thread, before the shards
// start or while they run. On failure, logging stays where it was and the reason is returned.
std::optional<std::string> open_file(const std::string& path);
// Opens the file of open_file() again (after a rename); nothing when logging goes to standard error.
std::optional<std::string> reopen();
// Back to standard error (tests).
void use_stderr();

// The formatted line with its timestamp and level (or its priority prefix), written with one write(2).
void emit(Level level, std::string_view message) noexcept;

enum class StderrFormat : int { Plain, Journal };
// Detected once at start (stderr_is_journal()); tests set it.
void set_stderr_format(StderrFormat f) noexcept;
StderrFormat stderr_format() noexcept;
// Whether `fd` is the stream $JOURNAL_STREAM ("<device>:<inode>") names.
bool stderr_is_journal(const char* journal_stream, int fd) noexcept;
// The syslog priority journald files a line of this level under.
int priority(Level l) noexcept;

namespace detail {
inline std::atomic<int> g_level{static_cast<int>(Level::Info)};
}  // namespace detail

inline bool enabled(Level l) noexcept {
  return static_cast<int>(l) >= detail::g_level.load(std::memory_order_relaxed);
}

template <class... Args>
void write(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (!enabled(level)) return;  // below the threshold: nothing is formatted
  emit(level, fmt::format(format, std::forward<Args>(args)...));
}

template <class... Args>
void trace(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::Trace, f, std::forward<Args>(a)...);
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::Debug, f, std::forward<Args>(a)...);
}
template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::Info, f, std::forward<Args>(a)...);
}
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::Warn, f, std::forward<Args>(a)...);
}
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... a) {
  write(Level::Error, f, std::forward<Args>(a)...);
}

}  // namespace opcuad::log
