#pragma once
// The `limits` scenario, after o6-automation's server_limits: a grid of clients x outstanding requests,
// each level a short closed-loop run of Read-1. A level fails on > 1 % errors, a p99 above 10x the 1x1
// level's p99, or a throughput below 0.5x the previous level (the previous outstanding count with the same
// clients; for outstanding 1, the previous client count).

#include <cstdint>
#include <functional>
#include <string>

namespace opcuad::bench {

struct LimitsLevel {
  uint32_t clients = 0;
  uint32_t outstanding = 0;
  uint64_t requests = 0;  // answered during the measured time
  uint64_t errors = 0;
  double rate = 0;                  // requests/s
  uint64_t p99_ns = 0;              // latency
  double writes_per_response = -1;  // the server's counters (bench/server_counters.hpp); -1: n/a
  double allocs_per_request = -1;
  std::string problem;  // the server died, ...
};

using LimitsRunner = std::function<LimitsLevel(uint32_t clients, uint32_t outstanding)>;

// Runs the grid (reduced with `quick`), prints a table with PASS/FAIL per level (or, with `json`, one JSON
// document at the end); returns the exit code.
int run_limits_grid(bool quick, bool json, const LimitsRunner& run);

// Sessions the grid opens in all (the server's max_sessions must allow them: sessions outlive their
// connection until they time out).
uint32_t limits_total_sessions(bool quick);

}  // namespace opcuad::bench
