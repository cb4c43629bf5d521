#include "bench/machine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/server_process.hpp"

namespace opcuad::bench {

Machine current_machine() {
  Machine m;
  m.cpus = sysconf(_SC_NPROCESSORS_ONLN);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!line.starts_with("model name")) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) m.cpu_model = line.substr(line.find_first_not_of(" \t", colon + 1));
    break;
  }
  std::ifstream loadavg("/proc/loadavg");
  if (!(loadavg >> m.load[0] >> m.load[1] >> m.load[2])) m.load[0] = m.load[1] = m.load[2] = -1;
  return m;
}

std::string machine_text(const Machine& m) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "machine: %ld CPU(s)%s%s%s, load average %.2f %.2f %.2f", m.cpus,
                m.cpu_model.empty() ? "" : " (", m.cpu_model.c_str(), m.cpu_model.empty() ? "" : ")",
                m.load[0], m.load[1], m.load[2]);
  return buf;
}

std::string machine_json(const Machine& m) {
  return "{\"cpus\": " + std::to_string(m.cpus) + ", \"cpu_model\": " + json_string(m.cpu_model) +
         ", \"load_average\": [" + json_number(m.load[0], true) + ", " + json_number(m.load[1], true) + ", " +
         json_number(m.load[2], true) + "]}";
}

MachineTicks machine_ticks() {
  MachineTicks t;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  if (!(stat >> cpu) || cpu != "cpu") return t;
  // user nice system idle iowait irq softirq steal (guest and guest_nice are already in user and nice).
  uint64_t v[8] = {};
  for (auto& x : v)
    if (!(stat >> x)) return t;
  for (const auto x : v) t.total += x;
  t.idle = v[3] + v[4];
  t.steal = v[7];
  t.ok = true;
  return t;
}

CpuSnapshot cpu_snapshot(int server) {
  CpuSnapshot s;
  s.machine = machine_ticks();
  if (server > 0) s.server_seconds = process_cpu_seconds(server);
  s.self_seconds = process_cpu_seconds(getpid());
  return s;
}

RoundCpu round_cpu(const CpuSnapshot& start, const CpuSnapshot& end, double seconds) {
  RoundCpu r;
  if (!start.machine.ok || !end.machine.ok || end.machine.total <= start.machine.total || seconds <= 0)
    return r;
  const auto total = static_cast<double>(end.machine.total - start.machine.total);
  const auto idle = static_cast<double>(end.machine.idle - start.machine.idle);
  const auto steal = static_cast<double>(end.machine.steal - start.machine.steal);
  r.steal_percent = 100 * steal / total;
  const auto tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  double own = 0;
  if (start.self_seconds >= 0 && end.self_seconds >= 0) own += end.self_seconds - start.self_seconds;
  if (start.server_seconds >= 0 && end.server_seconds >= 0) own += end.server_seconds - start.server_seconds;
  // Ticks are counted per CPU and per process at different moments, so a quiet machine can come out a
  // tick below zero.
  r.other_cores = std::max(0.0, ((total - idle - steal) / tick - own) / seconds);
  return r;
}

std::string json_counts(const std::map<std::string, uint64_t>& counts) {
  std::string out = "{";
  for (const auto& [what, n] : counts) {
    if (out.size() > 1) out += ", ";
    out += json_string(what) + ": " + std::to_string(n);
  }
  return out + "}";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v, bool negative_is_null) {
  if (std::isnan(v) || std::isinf(v) || (negative_is_null && v < 0)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string cores_text(double cores) {
  if (cores < 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f cores", cores);
  return buf;
}

namespace {

// The inode of the socket listening on `port` in one /proc/net/tcp* table; 0 when none. Each line is
// "sl local_address rem_address st ... inode", the address as hex "ADDR:PORT", state 0A = LISTEN.
uint64_t listening_inode(const char* table, uint16_t port) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the heading
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
    uint64_t inode = 0;
    if (!(f >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode))
      continue;
    const auto colon = local.rfind(':');
    if (state != "0A" || colon == std::string::npos) continue;
    if (std::stoul(local.substr(colon + 1), nullptr, 16) == port) return inode;
  }
  return 0;
}

}  // namespace

int listener_pid(uint16_t port) {
  uint64_t inode = listening_inode("/proc/net/tcp", port);
  if (inode == 0) inode = listening_inode("/proc/net/tcp6", port);
  if (inode == 0) return -1;
  const std::string wanted = "socket:[" + std::to_string(inode) + "]";
  std::error_code ec;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fd_ec;
    for (const auto& fd : std::filesystem::directory_iterator(proc.path() / "fd", fd_ec)) {
      std::error_code link_ec;
      if (std::filesystem::read_symlink(fd.path(), link_ec).string() == wanted) return std::stoi(name);
    }
  }
  return -1;
}

}  // namespace opcuad::bench
