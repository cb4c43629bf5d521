#pragma once
// The `sub` scenario (the capacity measure of docs/PERFORMANCE.md): N monitored items on N simulated counters
// that change every sampling interval; counts the distinct samples each item receives over the measured
// window and passes when every item got >= min_percent of window / interval. `find_capacity` doubles N until
// the criterion fails, then bisects. Also `connect` (sessions opened per second, and sessions held, each with
// a subscription), which shares the server setup. Both can target a running server (--url) instead.

#include <cstdint>
#include <string>
#include <vector>

namespace opcuad::bench {

struct SubOptions {
  std::string server;  // opcuad binary, started once per step with a generated configuration
  std::string url;     // instead: a server already running on loopback (sub: with the counters ns=2;i=1..N)
  uint32_t items = 1000;
  uint32_t sessions = 10;
  uint32_t threads = 1;               // client threads
  double sampling_interval_ms = 100;  // also the counters' interval_ms
  double publishing_interval_ms = 0;  // 0: 5 x sampling interval
  uint32_t publish_outstanding = 16;  // Publish requests kept outstanding per session (the server keeps 32)
  uint32_t items_per_subscription = 50000;
  uint32_t create_batch = 20000;  // items per CreateMonitoredItems call
  double duration = 10;
  double warmup = 2;
  double min_percent = 99;
  bool find_capacity = false;
  uint32_t max_items = 1048576;
  double max_step_seconds = 60;
  uint32_t bisect_steps = 4;
  std::vector<int> server_cpus;
  std::vector<int> client_cpus;
  uint32_t server_threads = 1;
  uint32_t server_realtime_priority = 0;
  bool keep_config = false;
  bool json = false;    // one JSON document instead of the text lines
  uint32_t rounds = 1;  // repeat the step (or the capacity search) and print medians
  std::string compare;  // sub: also run against "node-opcua" or a loopback URL, alternating rounds
  // connect
  uint32_t hold = 0;  // 0: measure the open/close rate; else hold this many sessions with a subscription
};

// Runs `sub` (one step or --find-capacity); prints the results; returns the exit code.
int run_sub_scenario(const SubOptions& o);
// Runs `connect` (rate, or --hold N); prints the results; returns the exit code.
int run_connect_scenario(const SubOptions& o);

}  // namespace opcuad::bench
