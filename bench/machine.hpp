#pragma once
// The machine a result was measured on (every result block and JSON document names it): online CPUs, the
// CPU model and the load average when the run ended. Results from a busy shared machine are not comparable
// with quiet ones; the load average says which kind this was.

#include <cstdint>
#include <map>
#include <string>

namespace opcuad::bench {

struct Machine {
  long cpus = 0;
  std::string cpu_model;          // /proc/cpuinfo "model name"; empty when unknown
  double load[3] = {-1, -1, -1};  // /proc/loadavg: 1, 5, 15 minutes
};

Machine current_machine();
// "machine: 2 CPUs (model), load average 1.02 0.88 0.70"
std::string machine_text(const Machine& m);
// {"cpus": 2, "cpu_model": "...", "load_average": [1.02, 0.88, 0.70]}
std::string machine_json(const Machine& m);

// The machine's CPU time from /proc/stat's "cpu" line, in clock ticks summed over every CPU. The load
// average cannot tell a busy neighbour inside the VM from a host that runs other VMs on our CPUs; these
// two can: steal is the time a vCPU wanted to run and the hypervisor ran something else, and the busy time
// that neither the server nor the harness used belongs to other processes here.
struct MachineTicks {
  uint64_t total = 0;  // user nice system idle iowait irq softirq steal: the first eight values
  uint64_t idle = 0;   // idle + iowait
  uint64_t steal = 0;  // the eighth value
  bool ok = false;
};
MachineTicks machine_ticks();

// What a window's CPU accounting starts and ends with.
struct CpuSnapshot {
  MachineTicks machine;
  double server_seconds = -1;  // utime + stime of the server (/proc/PID/stat); negative when unknown
  double self_seconds = -1;    // of the harness, all its threads (/proc/self/stat)
};
// `server` <= 0: a server the harness did not start (--url, --compare URL).
CpuSnapshot cpu_snapshot(int server);

// The process that listens on TCP `port` of this machine (/proc/net/tcp and tcp6 name the listening
// socket's inode, /proc/PID/fd the process holding it): how the harness measures the CPU time of a server
// it did not start (--url, --compare URL). -1 when no readable process holds it (another user's, without
// the right to read its /proc/PID/fd).
int listener_pid(uint16_t port);

// A round above this share of steal is marked in the text block and in --json ("high_steal").
inline constexpr double kHighStealPercent = 5;

struct RoundCpu {
  double steal_percent = -1;  // steal / total ticks of the window, all CPUs; negative when unreadable
  // Busy ticks (total - idle - iowait - steal) minus the server's and the harness's, in cores over the
  // window: other processes of this machine. With an unknown server it includes that server.
  double other_cores = -1;
  bool high_steal() const noexcept { return steal_percent > kHighStealPercent; }
};
RoundCpu round_cpu(const CpuSnapshot& start, const CpuSnapshot& end, double seconds);

// A JSON string literal (quotes included) with ", \ and control characters escaped.
std::string json_string(const std::string& s);
// {"what": count, ...} of error kinds and their counts.
std::string json_counts(const std::map<std::string, uint64_t>& counts);
// "0.42 cores", or "n/a" for a negative "unknown" marker (a server not started by the harness).
std::string cores_text(double cores);
// A number, or null for NaN / a negative "unknown" marker when `negative_is_null`.
std::string json_number(double v, bool negative_is_null = false);

}  // namespace opcuad::bench
