#pragma once
// The server under test as a child process: started pinned to CPUs, ready once it logs the port it
// listens on, stopped with SIGTERM. Also the CPU accounting the harness reports (/proc, getrusage).

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace opcuad::bench {

// "0", "0,2", "1-3" -> CPU numbers; nullopt on a malformed list.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);
// Pins the calling thread (and every thread it creates later) to `cpus`. Empty: no change.
bool pin_current_thread(const std::vector<int>& cpus);

// Pins every thread of process `pid` whose name (/proc/PID/task/TID/comm) does not start with `keep_prefix`
// to `cpus`: the storm's split, with the shards ("opcuad-shard0", ...) on their CPU and the handshake
// pool and every other thread of the server on the harness's. Returns the number of threads pinned, -1 on
// an error.
int pin_threads_except(pid_t pid, std::string_view keep_prefix, const std::vector<int>& cpus);

// User + system CPU seconds of a process (all threads), from /proc/<pid>/stat; negative if unreadable.
double process_cpu_seconds(pid_t pid);
// User + system CPU seconds of this process (getrusage).
double self_cpu_seconds();

class ChildServer {
 public:
  ChildServer() = default;
  ChildServer(const ChildServer&) = delete;
  ChildServer& operator=(const ChildServer&) = delete;
  ~ChildServer();

  // Runs argv[0] with argv, its affinity set to `cpus` (empty: every CPU this process may use), and waits
  // up to `timeout` until its standard error says "listening on opc.tcp://127.0.0.1:PORT".
  bool start(const std::vector<std::string>& argv, const std::vector<int>& cpus,
             std::chrono::milliseconds timeout, std::string& error);
  uint16_t port() const noexcept { return port_; }
  pid_t pid() const noexcept { return pid_; }
  // Exited (crashed) on its own while we were measuring?
  bool exited_early();
  // SIGTERM, then SIGKILL after a grace period. Returns "" for a clean exit, else how it ended.
  std::string stop();
  // The tail of its standard error, for error reports.
  std::string log_tail() const;

 private:
  void drain_stderr(int fd);

  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::optional<int> early_status_;
  std::thread reader_;
  mutable std::mutex mu_;
  std::string log_;                   // GUARDED_BY(mu_); the last 16 KiB
  bool ready_ = false;                // GUARDED_BY(mu_)
  std::condition_variable ready_cv_;  // signalled when the log names the port, or the pipe closes
};

}  // namespace opcuad::bench
