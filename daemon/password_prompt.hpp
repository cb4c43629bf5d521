#pragma once
// Reading a new password for `opcuad hash-password`. From a terminal: prompted on standard error, read
// with echo off (termios), asked twice and compared; the terminal's settings are restored even when a
// signal (Ctrl-C) ends the program. From anything else (a pipe, a file): the first line of standard
// input, without its line ending.

#include <optional>
#include <string>

namespace opcuad::cli {

// The longest password accepted, in bytes (PBKDF2 takes any length; this only stops a runaway input).
inline constexpr size_t kMaxPasswordBytes = 4096;

struct PasswordInput {
  std::optional<std::string> password;  // empty optional: `error` says why
  std::string error;
};

PasswordInput read_new_password();

}  // namespace opcuad::cli
