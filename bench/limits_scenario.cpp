#include "bench/limits_scenario.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "bench/machine.hpp"

namespace opcuad::bench {

namespace {

std::vector<uint32_t> grid_clients(bool quick) {
  if (quick) return {1, 4, 16, 64, 128};
  return {1, 2, 4, 8, 16, 32, 64, 128};
}
std::vector<uint32_t> grid_outstanding(bool quick) {
  if (quick) return {1, 4, 16, 64, 256};
  return {1, 2, 4, 8, 16, 32, 64, 128, 256};
}

}  // namespace

uint32_t limits_total_sessions(bool quick) {
  uint32_t n = 0;
  for (uint32_t c : grid_clients(quick)) n += c * static_cast<uint32_t>(grid_outstanding(quick).size());
  return n;
}

namespace {
std::string ratio_text(double v) {
  if (v < 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}
}  // namespace

int run_limits_grid(bool quick, bool json, const LimitsRunner& run) {
  if (!json) {
    std::printf(
        "limits: Read-1, clients x outstanding per client; a level fails on > 1 %% errors, p99 > 10x the "
        "1x1 p99, or throughput < 0.5x the previous level\n");
    std::printf("%s\n", machine_text(current_machine()).c_str());
    std::printf("%8s %12s %12s %12s %12s %10s %10s %10s %8s  %s\n", "clients", "outstanding", "req/s",
                "p99 us", "N/X us", "errors", "writes/rsp", "allocs/req", "result", "why");
  }
  std::string levels_json;
  double base_p99 = 0;
  double previous_row_first = 0;
  uint32_t failed = 0, levels = 0;
  // p99 failures at levels where the mean latency a closed loop must have (Little's law: N requests in
  // flight over X requests/s) is already above the bound: at that throughput no server can pass them.
  uint32_t queueing_bound = 0;
  for (uint32_t clients : grid_clients(quick)) {
    double previous = previous_row_first;
    bool first_in_row = true;
    for (uint32_t outstanding : grid_outstanding(quick)) {
      LimitsLevel l = run(clients, outstanding);
      const uint64_t total = l.requests + l.errors;
      std::string why;
      if (!l.problem.empty()) why += "server problem; ";
      if (l.requests == 0) why += "no throughput; ";
      if (total && static_cast<double>(l.errors) > 0.01 * static_cast<double>(total)) why += "errors > 1 %; ";
      if (base_p99 == 0 && clients == 1 && outstanding == 1) base_p99 = static_cast<double>(l.p99_ns);
      const double in_flight = static_cast<double>(clients) * outstanding;
      const double mean_ns = l.rate > 0 ? in_flight / l.rate * 1e9 : 0;  // Little's law
      if (base_p99 > 0 && static_cast<double>(l.p99_ns) > 10 * base_p99) {
        why += "p99 > 10x 1x1; ";
        if (mean_ns > 10 * base_p99) ++queueing_bound;
      }
      if (previous > 0 && l.rate < 0.5 * previous) why += "throughput < 0.5x previous; ";
      const bool pass = why.empty();
      failed += pass ? 0 : 1;
      ++levels;
      if (json) {
        levels_json +=
            std::string(levels > 1 ? ",\n  " : "\n  ") + "{\"clients\": " + std::to_string(clients) +
            ", \"outstanding\": " + std::to_string(outstanding) +
            ", \"requests\": " + std::to_string(l.requests) + ", \"requests_per_s\": " + json_number(l.rate) +
            ", \"p99_us\": " + json_number(static_cast<double>(l.p99_ns) / 1e3) +
            ", \"littles_law_mean_us\": " + json_number(mean_ns / 1e3) +
            ", \"errors\": " + std::to_string(l.errors) +
            ", \"write_syscalls_per_response\": " + json_number(l.writes_per_response, true) +
            ", \"server_allocs_per_request\": " + json_number(l.allocs_per_request, true) +
            ", \"pass\": " + (pass ? "true" : "false") + ", \"why\": " + json_string(why) +
            ", \"server_problem\": " + json_string(l.problem) + "}";
      } else {
        std::printf("%8u %12u %12.0f %12.1f %12.1f %10llu %10s %10s %8s  %s\n", clients, outstanding, l.rate,
                    l.p99_ns / 1e3, mean_ns / 1e3, static_cast<unsigned long long>(l.errors),
                    ratio_text(l.writes_per_response).c_str(), ratio_text(l.allocs_per_request).c_str(),
                    pass ? "PASS" : "FAIL", why.c_str());
        if (!l.problem.empty()) std::printf("  %s\n", l.problem.c_str());
        std::fflush(stdout);
      }
      previous = l.rate;
      if (first_in_row) previous_row_first = l.rate;
      first_in_row = false;
    }
  }
  if (json) {
    std::printf(
        "{\"scenario\": \"limits\", \"quick\": %s, \"machine\": %s, \"levels\": [%s\n], "
        "\"levels_passing\": %u, \"levels_total\": %u, \"p99_failures_at_queueing_bound\": %u, "
        "\"pass\": %s}\n",
        quick ? "true" : "false", machine_json(current_machine()).c_str(), levels_json.c_str(),
        levels - failed, levels, queueing_bound, failed ? "false" : "true");
  } else {
    std::printf("limits: %u of %u levels pass: %s\n", levels - failed, levels, failed ? "FAIL" : "PASS");
    if (queueing_bound)
      std::printf(
          "  %u p99 failure(s) at levels where N/X, the mean latency Little's law gives a closed loop of N "
          "requests in flight at X requests/s, already exceeds 10x the 1x1 p99\n",
          queueing_bound);
  }
  return failed ? 1 : 0;
}

}  // namespace opcuad::bench
