#include "bench/server_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace opcuad::bench {

namespace {

// Affinity of the harness when it started, before --client-cpus narrowed it: an unpinned child gets it.
cpu_set_t initial_affinity() {
  static const cpu_set_t set = [] {
    cpu_set_t s;
    CPU_ZERO(&s);
    sched_getaffinity(0, sizeof s, &s);
    return s;
  }();
  return set;
}
[[maybe_unused]] const cpu_set_t g_initial = initial_affinity();

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::vector<int> cpus;
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    int lo = 0, hi = 0;
    auto dash = item.find('-');
    auto parse = [](std::string_view s, int& v) {
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && p == s.data() + s.size() && v >= 0 && v < CPU_SETSIZE;
    };
    if (dash == std::string_view::npos) {
      if (!parse(item, lo)) return std::nullopt;
      hi = lo;
    } else if (!parse(item.substr(0, dash), lo) || !parse(item.substr(dash + 1), hi) || hi < lo) {
      return std::nullopt;
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  return cpus;
}

bool pin_current_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

int pin_threads_except(pid_t pid, std::string_view keep_prefix, const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  int pinned = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name.starts_with(keep_prefix)) continue;
    const pid_t tid = static_cast<pid_t>(std::stol(task.path().filename().string()));
    if (sched_setaffinity(tid, sizeof set, &set) != 0) return -1;
    ++pinned;
  }
  return ec ? -1 : pinned;
}

double process_cpu_seconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return -1;
  // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
  auto close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double self_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

ChildServer::~ChildServer() {
  if (pid_ > 0) stop();
}

bool ChildServer::start(const std::vector<std::string>& argv, const std::vector<int>& cpus,
                        std::chrono::milliseconds timeout, std::string& error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  cpu_set_t set = initial_affinity();
  if (!cpus.empty()) {
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
  }
  pid_ = fork();
  if (pid_ < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  if (pid_ == 0) {
    // Child: only async-signal-safe calls until exec.
    sched_setaffinity(0, sizeof set, &set);
    dup2(fds[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, STDIN_FILENO);
      dup2(devnull, STDOUT_FILENO);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  reader_ = std::thread([this, fd = fds[0]] { drain_stderr(fd); });

  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ready_ && std::chrono::steady_clock::now() < deadline) {
    ready_cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (ready_) break;
    lock.unlock();
    const bool gone = exited_early();
    lock.lock();
    if (gone) break;
  }
  if (!ready_) {
    std::string log = log_;
    lock.unlock();
    std::string how = stop();
    if (early_status_ && WIFEXITED(*early_status_) && WEXITSTATUS(*early_status_) == 127)
      how = "cannot run " + argv[0];
    error = "the server did not start (" + (how.empty() ? std::string("no 'listening on' line") : how) +
            "):\n" + log;
    return false;
  }
  return true;
}

void ChildServer::drain_stderr(int fd) {
  static const std::regex kListening(R"(listening on opc\.tcp://127\.0\.0\.1:(\d+))");
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    std::lock_guard lock(mu_);
    log_.append(buf, static_cast<size_t>(n));
    if (!ready_) {
      std::smatch m;
      if (std::regex_search(log_, m, kListening)) {
        port_ = static_cast<uint16_t>(std::stoi(m[1]));
        ready_ = true;
        ready_cv_.notify_all();
      }
    }
    if (log_.size() > 32768) log_.erase(0, log_.size() - 16384);
  }
  close(fd);
  std::lock_guard lock(mu_);
  ready_cv_.notify_all();
}

bool ChildServer::exited_early() {
  if (pid_ <= 0) return early_status_.has_value();
  int status = 0;
  if (!early_status_ && waitpid(pid_, &status, WNOHANG) == pid_) early_status_ = status;
  return early_status_.has_value();
}

std::string ChildServer::stop() {
  if (pid_ <= 0) return "";
  int status = 0;
  if (!exited_early()) {
    kill(pid_, SIGTERM);
    bool done = false;
    // 20 s grace: an ASan build checks for leaks at exit, which on a loaded 2-CPU machine has taken over 5 s.
    for (int i = 0; i < 400 && !done; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_)
        done = true;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!done) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      if (reader_.joinable()) reader_.join();
      return "did not exit within 20 s of SIGTERM (killed)";
    }
  } else {
    status = *early_status_;
  }
  const bool early = early_status_.has_value();
  pid_ = -1;
  if (reader_.joinable()) reader_.join();
  if (WIFSIGNALED(status))
    return std::string(early ? "died during the run" : "died") + " on signal " +
           std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  if (early) return "exited during the run with status " + std::to_string(WEXITSTATUS(status));
  if (WEXITSTATUS(status) != 0) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "";
}

std::string ChildServer::log_tail() const {
  std::lock_guard lock(mu_);
  return log_;
}

}  // namespace opcuad::bench
