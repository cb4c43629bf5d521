#include "daemon/password_prompt.hpp"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string_view>

namespace opcuad::cli {

namespace {

// The terminal's settings while echo is off, for the signal handler that puts them back.
termios g_saved_termios;
volatile sig_atomic_t g_echo_off = 0;

constexpr int kRestoreSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};

// Async-signal-safe: tcsetattr, signal and raise are all on the POSIX list.
extern "C" void restore_and_reraise(int sig) {
  if (g_echo_off) tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved_termios);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Echo off for its lifetime (ICANON stays on, so the line discipline still handles erase and kill).
class EchoOff {
 public:
  EchoOff() {
    if (tcgetattr(STDIN_FILENO, &g_saved_termios) != 0) return;
    struct sigaction action {};
    action.sa_handler = restore_and_reraise;
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < std::size(kRestoreSignals); ++i)
      sigaction(kRestoreSignals[i], &action, &previous_[i]);
    installed_ = true;
    termios quiet = g_saved_termios;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO | ECHONL);
    g_echo_off = 1;
    active_ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
  }
  ~EchoOff() {
    if (active_) tcsetattr(STDIN_FILENO, TCSAFLUSH, &g_saved_termios);
    g_echo_off = 0;
    if (!installed_) return;
    for (size_t i = 0; i < std::size(kRestoreSignals); ++i)
      sigaction(kRestoreSignals[i], &previous_[i], nullptr);
  }
  EchoOff(const EchoOff&) = delete;
  EchoOff& operator=(const EchoOff&) = delete;

 private:
  struct sigaction previous_[std::size(kRestoreSignals)]{};
  bool installed_ = false;  // the signal handlers
  bool active_ = false;     // echo is off
};

void say(std::string_view text) {
  // Standard error, so that standard output carries the hash alone.
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// One line from the terminal with read(2), so nothing is left in a stdio buffer. False at end of input
// or when the line is too long.
bool read_terminal_line(std::string& line, std::string& error) {
  line.clear();
  char c = 0;
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = std::string("cannot read the terminal: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) {
      error = "no password entered (end of input)";
      return false;
    }
    if (c == '\n') return true;
    if (line.size() == kMaxPasswordBytes) {
      error = "password longer than " + std::to_string(kMaxPasswordBytes) + " bytes";
      return false;
    }
    line.push_back(c);
  }
}

PasswordInput from_terminal() {
  PasswordInput result;
  std::string first;
  std::string second;
  {
    EchoOff quiet;
    say("Password: ");
    const bool got_first = read_terminal_line(first, result.error);
    say("\n");
    if (!got_first) return result;
    say("Repeat password: ");
    const bool got_second = read_terminal_line(second, result.error);
    say("\n");
    if (!got_second) return result;
  }
  if (first != second) {
    result.error = "the two passwords differ";
  } else if (first.empty()) {
    result.error = "empty password";
  } else {
    result.password = std::move(first);
  }
  std::fill(second.begin(), second.end(), '\0');
  return result;
}

PasswordInput from_stream() {
  PasswordInput result;
  std::string line;
  if (!std::getline(std::cin, line) && line.empty()) {
    result.error = "no password on standard input";
    return result;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) {
    result.error = "empty password";
  } else if (line.size() > kMaxPasswordBytes) {
    result.error = "password longer than " + std::to_string(kMaxPasswordBytes) + " bytes";
  } else {
    result.password = std::move(line);
  }
  return result;
}

}  // namespace

PasswordInput read_new_password() {
  return isatty(STDIN_FILENO) ? from_terminal() : from_stream();
}

}  // namespace opcuad::cli
