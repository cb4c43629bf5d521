#pragma once
// Logging to standard error through fmt: "2026-11-30T05:33:13.123Z info  message". Thread-safe (one
// fwrite per line). Secrets (passwords, authentication tokens, nonces) are never passed here.

#include <fmt/core.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace opcuad::log {

enum class Level { Debug, Info, Warn, Error };
inline Level g_level = Level::Info;

inline const char* name(Level l) {
  switch (l) {
    case Level::Debug: return "debug";
    case Level::Info: return "info ";
    case Level::Warn: return "warn ";
    default: return "error";
  }
}

template <class... Args>
void write(Level level, fmt::format_string<Args...> format, Args&&... args) {
  if (level < g_level) return;
  const auto now = std::chrono::system_clock::now();
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  std::string line = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z {} ", tm.tm_year + 1900, tm.tm_mon + 1,
                                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000), name(level));
  line += fmt::format(format, std::forward<Args>(args)...);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

template <class... Args>
void info(fmt::format_string<Args...> f, Args&&... a) { write(Level::Info, f, std::forward<Args>(a)...); }
template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... a) { write(Level::Warn, f, std::forward<Args>(a)...); }
template <class... Args>
void error(fmt::format_string<Args...> f, Args&&... a) { write(Level::Error, f, std::forward<Args>(a)...); }

}  // namespace opcuad::log
