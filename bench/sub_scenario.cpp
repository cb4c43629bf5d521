#include "bench/sub_scenario.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "bench/blocking_client.hpp"
#include "bench/machine.hpp"
#include "bench/peer_server.hpp"
#include "bench/server_counters.hpp"
#include "bench/server_process.hpp"
#include "bench/sub_connection.hpp"

namespace opcuad::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

long process_rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("VmRSS:")) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

void raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

double effective_publishing_interval(const SubOptions& o) {
  return o.publishing_interval_ms > 0 ? o.publishing_interval_ms : o.sampling_interval_ms * 5;
}

// Configuration for a `sub` or `connect` run: `variables` counters ns=2;i=1..N changing every interval,
// limits raised for `items` monitored items and `sessions` sessions.
bool write_sub_config(const std::filesystem::path& dir, const SubOptions& o, uint32_t variables,
                      uint32_t items, uint32_t sessions, std::filesystem::path& config) {
  std::ofstream nodes(dir / "nodes.json");
  nodes << R"({"namespaces": ["urn:opcuad:bench"],
 "nodes": [{"kind": "folder", "name": "Bench", "children": [
   {"kind": "variable", "name": "C{n}", "node_id": "i={n}", "count": )"
        << std::max<uint32_t>(variables, 1) << R"(, "data_type": "Double", "value": 0.0, "access": ["read"],
    "simulation": {"kind": "counter", "interval_ms": )"
        << o.sampling_interval_ms << R"(, "min": 0, "max": 1000000000000, "step": 1}}]}]}
)";
  config = dir / "opcuad.json";
  std::ofstream server(config);
  const std::string endpoints = endpoint_config_json(dir);
  if (endpoints.empty()) return false;
  server << R"({"application_uri": "urn:opcuad:bench:server",
 )" << endpoints
         << R"(,
 "threads": )"
         << o.server_threads << R"(,)"
         << (o.server_realtime_priority ? "\n \"scheduling\": {\"realtime_priority\": " +
                                              std::to_string(o.server_realtime_priority) + "},"
                                        : std::string())
         << R"(
 "limits": {"max_sessions": )"
         << sessions + 10 << R"(, "max_subscriptions": )" << sessions * 2 + items / 1000 + 100
         << R"(, "max_monitored_items": )" << items + 1000 << R"(, "max_monitored_items_per_call": )"
         << std::max<uint32_t>(o.create_batch, 1000) << R"(},
 "connections": {"max_connections_per_address": 0},
 "logging": {"level": "info"},
 "diagnostics": {"counters": true},
 "namespaces": ["urn:opcuad:bench"],
 "node_files": ["nodes.json"]}
)";
  return static_cast<bool>(nodes) && static_cast<bool>(server);
}

bool start_server(const SubOptions& o, const std::filesystem::path& dir, uint32_t variables, uint32_t items,
                  uint32_t sessions, ChildServer& child, std::string& error) {
  std::filesystem::path config;
  if (!write_sub_config(dir, o, variables, items, sessions, config)) {
    error = "cannot write the configuration in " + dir.string();
    return false;
  }
  return child.start({o.server, "--config", config.string()}, o.server_cpus, std::chrono::seconds(120),
                     error);
}

std::filesystem::path make_temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "opcuad-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return {};
  return tmpl;
}

namespace {

// The server a step runs against: opcuad started with a generated configuration, node-opcua started from
// bench/peers, or a server already running at `url` (which must have the counters ns=2;i=1..N).
struct SubTarget {
  std::string name;  // opcuad, node-opcua, server (--url), peer (--compare URL)
  std::string url;   // server and peer only
};

struct StepResult {
  std::string target;
  uint32_t items = 0;
  bool ran = false;
  bool pass = false;
  double window_s = 0;
  uint64_t expected = 0;
  double worst_percent = 0;
  double passing_fraction = 0;
  double notifications_per_s = 0;
  double server_cores = -1;
  double client_cores = 0;
  // PublishResponses with data in the window (by their publishTime), per second, and the notifications
  // each carried on average; the server's CPU time per notification received (-1: n/a).
  double messages_per_s = 0;
  double notifications_per_message = 0;
  double server_us_per_notification = -1;
  RoundCpu cpu;  // the machine's steal and other processes during the window (machine.hpp)
  // From the server's own counters (opcuad only; -1: n/a): heap allocations per notification received by
  // the harness in the window, and gathered socket writes per message sent.
  double allocs_per_notification = -1;
  double writes_per_message = -1;
  // Sampling jitter from the server's counters (-1: n/a): the percentage of timer item samples taken
  // more than 250 µs / 1 ms / 5 ms after their deadline. The sampling-jitter target of docs/PERFORMANCE.md
  // (p99 < 1 ms) holds when late_1ms_percent < 1.
  double sampled_items = -1;
  double late_250us_percent = -1;
  double late_1ms_percent = -1;
  double late_5ms_percent = -1;
  double create_s = 0;
  double bytes_per_item = -1;
  double revised_sampling = 0;
  double revised_publishing = 0;
  uint32_t revised_queue = 0;
  uint64_t duplicates = 0;
  uint64_t errors = 0;
  std::map<std::string, uint64_t> error_kinds;
  std::string problem;
  std::string shutdown_problem;
  double step_seconds = 0;
};

void print_step(const StepResult& r, const SubOptions& o) {
  if (o.json) return;  // reported at the end
  std::printf(
      "sub [%s]: %u items, sampling %g ms (revised %g), publishing %g ms (revised %g), queue %u | expected "
      "%llu "
      "samples/item in %.1f s | notifications/s %.0f | worst item %.2f %% | items passing %.4f | server CPU "
      "%s, client CPU %.2f cores | create %.2f s, %s | errors %llu | %s\n",
      r.target.c_str(), r.items, o.sampling_interval_ms, r.revised_sampling, effective_publishing_interval(o),
      r.revised_publishing, r.revised_queue, static_cast<unsigned long long>(r.expected), r.window_s,
      r.notifications_per_s, r.worst_percent, r.passing_fraction, cores_text(r.server_cores).c_str(),
      r.client_cores, r.create_s,
      r.bytes_per_item >= 0 ? (std::to_string(static_cast<long>(r.bytes_per_item)) + " B RSS/item").c_str()
                            : "RSS n/a",
      static_cast<unsigned long long>(r.errors), r.pass ? "PASS" : "FAIL");
  char per_notification[48] = "n/a";
  if (r.server_us_per_notification >= 0)
    std::snprintf(per_notification, sizeof per_notification, "%.3f us per notification",
                  r.server_us_per_notification);
  std::printf("  publish: %.0f responses/s with data, %.0f notifications per response; server CPU %s\n",
              r.messages_per_s, r.notifications_per_message, per_notification);
  if (r.allocs_per_notification >= 0 || r.writes_per_message >= 0)
    std::printf(
        "  server counters: %.3f heap allocations per notification, %.3f write syscalls per message\n",
        r.allocs_per_notification, r.writes_per_message);
  else
    std::printf("  server counters: n/a\n");
  char steal[32] = "n/a";
  if (r.cpu.steal_percent >= 0) std::snprintf(steal, sizeof steal, "%.1f %%", r.cpu.steal_percent);
  std::printf("  machine during the window: steal %s%s, other processes %s\n", steal,
              r.cpu.high_steal() ? " (more than 5 %: the host ran other work on this VM's CPUs)" : "",
              cores_text(r.cpu.other_cores).c_str());
  if (r.late_1ms_percent >= 0)
    std::printf(
        "  sampling lateness: %.0f item samples by timer; %.3f %% taken > 250 us after their deadline, "
        "%.3f %% > 1 ms, %.3f %% > 5 ms (p99 < 1 ms: %s)\n",
        r.sampled_items, r.late_250us_percent, r.late_1ms_percent, r.late_5ms_percent,
        r.late_1ms_percent < 1 ? "yes" : "no");
  if (r.duplicates)
    std::printf("  duplicate samples (same source timestamp twice): %llu\n",
                static_cast<unsigned long long>(r.duplicates));
  for (const auto& [what, n] : r.error_kinds)
    std::printf("  error: %s x %llu\n", what.c_str(), static_cast<unsigned long long>(n));
  if (!r.problem.empty()) std::printf("  SERVER PROBLEM: %s\n", r.problem.c_str());
  if (!r.shutdown_problem.empty())
    std::printf("  server shutdown after the step: %s (not part of the criterion)\n",
                r.shutdown_problem.c_str());
  std::fflush(stdout);
}

StepResult run_sub_step(const SubOptions& o, uint32_t items, const SubTarget& target) {
  StepResult r;
  r.target = target.name;
  r.items = items;
  const auto step_start = Clock::now();
  const auto dir = make_temp_dir();
  ChildServer child;
  std::string error;
  const uint32_t sessions = std::min(o.sessions, items);
  Endpoint endpoint;
  if (target.name == "opcuad") {
    if (dir.empty() || !start_server(o, dir, items, items, sessions, child, error)) {
      r.problem = "server did not start: " + error;
      return r;
    }
  } else if (target.name == "node-opcua") {
    PeerNodes nodes;
    nodes.variables = 1;
    nodes.counters = items;
    nodes.counter_interval_ms = o.sampling_interval_ms;
    nodes.sessions = sessions + 10;
    std::vector<std::string> argv;
    if (!node_opcua_command(free_loopback_port(), nodes, argv, error) ||
        !child.start(argv, o.server_cpus, std::chrono::seconds(120), error)) {
      r.problem = "node-opcua did not start: " + error;
      return r;
    }
  } else if (!parse_loopback_url(target.url, endpoint, error)) {
    r.problem = error;
    return r;
  }
  if (child.pid() > 0) {
    endpoint.port = child.port();
    endpoint.url = "opc.tcp://127.0.0.1:" + std::to_string(endpoint.port);
  }
  // --security applies to opcuad and a --url server; node-opcua and a --compare peer stay on None (and
  // are still asked for their anonymous policyId).
  static const SecuritySettings none;
  const bool secured_target = target.name == "opcuad" || target.name == "server";
  if (!attach_security(endpoint, target.name == "opcuad" ? dir : std::filesystem::path(), error,
                       secured_target ? security_settings() : none)) {
    r.problem = error;
    child.stop();
    return r;
  }
  SubCounters counters(items);
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<std::unique_ptr<SubConnection>> connections;
  const uint32_t threads = std::max<uint32_t>(1, std::min(o.threads, sessions));
  for (uint32_t t = 0; t < threads; ++t) contexts.push_back(std::make_unique<asio::io_context>(1));
  using Guard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<Guard> guards;
  for (auto& c : contexts) guards.push_back(asio::make_work_guard(*c));
  std::vector<std::thread> workers;
  for (auto& c : contexts) workers.emplace_back([&c] { c->run(); });

  SubParameters params;
  params.sampling_interval_ms = o.sampling_interval_ms;
  params.publishing_interval_ms = effective_publishing_interval(o);
  params.queue_size =
      static_cast<uint32_t>(std::ceil(params.publishing_interval_ms / o.sampling_interval_ms)) * 2 + 2;
  params.items_per_subscription = o.items_per_subscription;
  params.create_batch = o.create_batch;
  params.variables = items;

  const long rss0 = child.pid() > 0 ? process_rss_kib(child.pid()) : -1;
  const auto create_start = Clock::now();
  for (uint32_t s = 0; s < sessions; ++s) {
    const uint32_t first = static_cast<uint32_t>(uint64_t{items} * s / sessions);
    const uint32_t last = static_cast<uint32_t>(uint64_t{items} * (s + 1) / sessions);
    auto c = std::make_unique<SubConnection>(*contexts[s % threads], counters);
    if (!c->setup(endpoint, "sub-" + std::to_string(s), params, first, last, error)) {
      ++r.error_kinds["session " + std::to_string(s) + " setup: " + error];
      continue;
    }
    asio::post(*contexts[s % threads], [p = c.get(), k = o.publish_outstanding] { p->start(k); });
    connections.push_back(std::move(c));
  }
  r.create_s = seconds_since(create_start);
  const long rss1 = child.pid() > 0 ? process_rss_kib(child.pid()) : -1;
  if (rss0 > 0 && rss1 > 0) r.bytes_per_item = (rss1 - rss0) * 1024.0 / items;
  if (!connections.empty()) {
    r.revised_sampling = connections[0]->revised_sampling_interval();
    r.revised_publishing = connections[0]->revised_publishing_interval();
    r.revised_queue = connections[0]->revised_queue_size();
  }

  CounterProbe probe;
  const bool probing = probe.open(endpoint);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  const auto snapshot0 = probing ? probe.read() : std::nullopt;
  const int64_t t0 = ua::DateTime::now().ticks;
  const int64_t t1 = t0 + static_cast<int64_t>(o.duration * 1e7);
  counters.window_begin.store(t0, std::memory_order_relaxed);
  counters.window_end.store(t1, std::memory_order_relaxed);
  const CpuSnapshot cpu0 = cpu_snapshot(child.pid());
  const double server0 = process_cpu_seconds(child.pid());
  const double client0 = self_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration));
  const double server1 = process_cpu_seconds(child.pid());
  const double client1 = self_cpu_seconds();
  r.cpu = round_cpu(cpu0, cpu_snapshot(child.pid()), o.duration);
  const auto snapshot1 = snapshot0 ? probe.read() : std::nullopt;
  probe.close();
  const ServerCounterDelta server_counters = counter_delta(snapshot0, snapshot1);
  // Samples of the window's end still travel: wait two publishing intervals and a margin.
  std::this_thread::sleep_for(
      std::chrono::duration<double>(std::min(2 * params.publishing_interval_ms / 1000, 5.0) + 0.5));
  for (size_t i = 0; i < connections.size(); ++i)
    asio::post(*contexts[i % threads], [p = connections[i].get()] { p->stop(); });
  guards.clear();
  for (auto& w : workers) w.join();

  r.ran = true;
  r.window_s = o.duration;
  r.expected = static_cast<uint64_t>(std::llround(o.duration * 1000 / o.sampling_interval_ms));
  uint64_t total = 0, passing = 0;
  uint32_t worst = UINT32_MAX;
  const double needed = std::ceil(o.min_percent / 100 * static_cast<double>(r.expected) - 1e-9);
  for (uint32_t i = 0; i < items; ++i) {
    const uint32_t n = counters.count[i];
    total += n;
    worst = std::min(worst, n);
    if (n >= needed) ++passing;
  }
  r.worst_percent = r.expected ? 100.0 * worst / static_cast<double>(r.expected) : 0;
  r.passing_fraction = static_cast<double>(passing) / items;
  r.notifications_per_s = static_cast<double>(total) / o.duration;
  if (server_counters.available && total > 0)
    r.allocs_per_notification =
        static_cast<double>(server_counters[ServerCounter::HeapAllocations]) / static_cast<double>(total);
  r.writes_per_message = server_counters.per_message(ServerCounter::WriteCalls);
  if (server_counters.available && server_counters[ServerCounter::SampledItems] > 0) {
    const double n = static_cast<double>(server_counters[ServerCounter::SampledItems]);
    r.sampled_items = n;
    r.late_250us_percent = 100.0 * static_cast<double>(server_counters[ServerCounter::SampledLate250us]) / n;
    r.late_1ms_percent = 100.0 * static_cast<double>(server_counters[ServerCounter::SampledLate1ms]) / n;
    r.late_5ms_percent = 100.0 * static_cast<double>(server_counters[ServerCounter::SampledLate5ms]) / n;
  }
  if (child.pid() > 0 && server0 >= 0 && server1 >= 0) r.server_cores = (server1 - server0) / o.duration;
  r.client_cores = (client1 - client0) / o.duration;
  if (r.server_cores >= 0 && total > 0)
    r.server_us_per_notification = r.server_cores * 1e6 / r.notifications_per_s;
  uint64_t messages = 0, carried = 0;
  for (const auto& c : connections) {
    messages += c->window_messages();
    carried += c->window_message_notifications();
    r.duplicates += c->duplicates();
    for (const auto& [what, n] : c->errors()) r.error_kinds[what] += n;
  }
  r.messages_per_s = static_cast<double>(messages) / o.duration;
  if (messages > 0)
    r.notifications_per_message = static_cast<double>(carried) / static_cast<double>(messages);
  if (counters.unknown_handles)
    r.error_kinds["notification for an unknown client handle"] += counters.unknown_handles;
  for (const auto& [what, n] : r.error_kinds) r.errors += n;
  // A crash during the run fails the step; a slow exit afterwards is reported but does not change the
  // verdict on the samples that were delivered.
  if (child.exited_early()) r.problem = child.stop() + "\n" + child.log_tail();
  const auto stop_begin = Clock::now();
  std::string how = child.stop();
  if (r.problem.empty() && !how.empty())
    r.shutdown_problem = how + " (after " + std::to_string(seconds_since(stop_begin)).substr(0, 4) + " s)";
  if (o.keep_config)
    std::fprintf(stderr, "opcuad-bench: configuration kept in %s\n", dir.c_str());
  else
    std::filesystem::remove_all(dir);
  r.pass = r.errors == 0 && r.problem.empty() && passing == items && connections.size() == sessions;
  r.step_seconds = seconds_since(step_start);
  return r;
}

}  // namespace

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One round for one target: a single step, or a capacity search (double until the criterion fails, or the
// bound / the step-time budget is reached, then bisect).
struct RoundResult {
  std::vector<StepResult> steps;
  bool searched = false;
  uint32_t passes = 0;  // largest passing item count (capacity search)
  uint32_t fails = 0;   // smallest failing one; 0 when none failed
  bool pass() const { return searched ? passes > 0 : !steps.empty() && steps.back().pass; }
};

RoundResult run_round(const SubOptions& o, const SubTarget& target) {
  RoundResult round;
  if (!o.find_capacity) {
    round.steps.push_back(run_sub_step(o, o.items, target));
    print_step(round.steps.back(), o);
    return round;
  }
  round.searched = true;
  uint32_t& pass = round.passes;
  uint32_t& fail = round.fails;
  for (uint32_t n = o.items;; n = std::min<uint64_t>(uint64_t{n} * 2, o.max_items)) {
    round.steps.push_back(run_sub_step(o, n, target));
    const StepResult& r = round.steps.back();
    print_step(r, o);
    if (!r.pass) {
      fail = n;
      break;
    }
    pass = n;
    if (n >= o.max_items) break;
    if (r.step_seconds > o.max_step_seconds) {
      if (!o.json)
        std::printf("sub [%s]: step took %.0f s (> %.0f s): stop doubling\n", target.name.c_str(),
                    r.step_seconds, o.max_step_seconds);
      break;
    }
  }
  for (uint32_t step = 0;
       fail && pass && step < o.bisect_steps && fail - pass > std::max<uint32_t>(pass / 32, 1); ++step) {
    const uint32_t mid = pass + (fail - pass) / 2;
    round.steps.push_back(run_sub_step(o, mid, target));
    print_step(round.steps.back(), o);
    (round.steps.back().pass ? pass : fail) = mid;
  }
  if (!o.json) {
    if (fail)
      std::printf("sub capacity [%s] at %g ms: passes %u items, fails %u items\n", target.name.c_str(),
                  o.sampling_interval_ms, pass, fail);
    else
      std::printf("sub capacity [%s] at %g ms: passes %u items (the largest tried)\n", target.name.c_str(),
                  o.sampling_interval_ms, pass);
  }
  return round;
}

// The figure a round is compared by: the capacity found, or the notifications/s of its one step.
double round_figure(const RoundResult& r) {
  if (r.searched) return r.passes;
  return r.steps.empty() ? 0 : r.steps.back().notifications_per_s;
}

std::string step_json(const StepResult& r) {
  std::string s = "{\"items\": " + std::to_string(r.items) + ", \"pass\": " + (r.pass ? "true" : "false") +
                  ", \"ran\": " + (r.ran ? "true" : "false") + ", \"window_s\": " + json_number(r.window_s) +
                  ", \"expected_samples_per_item\": " + std::to_string(r.expected) +
                  ", \"notifications_per_s\": " + json_number(r.notifications_per_s) +
                  ", \"worst_item_percent\": " + json_number(r.worst_percent) +
                  ", \"items_passing_fraction\": " + json_number(r.passing_fraction) +
                  ", \"server_cpu_cores\": " + json_number(r.server_cores, true) +
                  ", \"client_cpu_cores\": " + json_number(r.client_cores) +
                  ", \"server_cpu_us_per_notification\": " + json_number(r.server_us_per_notification, true) +
                  ", \"publish_responses_per_s\": " + json_number(r.messages_per_s) +
                  ", \"notifications_per_response\": " + json_number(r.notifications_per_message) +
                  ", \"steal_percent\": " + json_number(r.cpu.steal_percent, true) +
                  ", \"other_cpu_cores\": " + json_number(r.cpu.other_cores, true) +
                  ", \"high_steal\": " + (r.cpu.high_steal() ? "true" : "false") +
                  ", \"server_allocs_per_notification\": " + json_number(r.allocs_per_notification, true) +
                  ", \"write_syscalls_per_message\": " + json_number(r.writes_per_message, true) +
                  ", \"sampled_items\": " + json_number(r.sampled_items, true) +
                  ", \"sampling_late_250us_percent\": " + json_number(r.late_250us_percent, true) +
                  ", \"sampling_late_1ms_percent\": " + json_number(r.late_1ms_percent, true) +
                  ", \"sampling_late_5ms_percent\": " + json_number(r.late_5ms_percent, true) +
                  ", \"create_s\": " + json_number(r.create_s) +
                  ", \"rss_bytes_per_item\": " + json_number(r.bytes_per_item, true) +
                  ", \"revised_sampling_interval_ms\": " + json_number(r.revised_sampling) +
                  ", \"revised_publishing_interval_ms\": " + json_number(r.revised_publishing) +
                  ", \"revised_queue_size\": " + std::to_string(r.revised_queue) +
                  ", \"duplicates\": " + std::to_string(r.duplicates) +
                  ", \"errors\": " + std::to_string(r.errors) +
                  ", \"error_kinds\": " + json_counts(r.error_kinds);
  s += ", \"server_problem\": " + json_string(r.problem) +
       ", \"shutdown_problem\": " + json_string(r.shutdown_problem) +
       ", \"step_s\": " + json_number(r.step_seconds) + "}";
  return s;
}

}  // namespace

int run_sub_scenario(const SubOptions& o) {
  raise_fd_limit();
  if (!pin_current_thread(o.client_cpus)) {
    std::fprintf(stderr, "opcuad-bench: cannot pin the load generator to the CPUs given\n");
    return 2;
  }
  std::vector<SubTarget> targets = {o.url.empty() ? SubTarget{"opcuad", ""} : SubTarget{"server", o.url}};
  if (o.compare == "node-opcua") {
    std::vector<std::string> argv;
    std::string error;
    if (!node_opcua_command(1, PeerNodes{}, argv, error)) {
      std::fprintf(stderr, "opcuad-bench: --compare node-opcua: %s\n", error.c_str());
      return kPeerUnavailableExit;
    }
    targets.push_back({"node-opcua", ""});
  } else if (!o.compare.empty()) {
    targets.push_back({"peer", o.compare});
  }
  if (!o.json) {
    std::printf(
        "sub: sampling %g ms, publishing %g ms, %u session(s), window %.1f s after %.1f s warmup, "
        "criterion: every item >= %g %% of its expected samples, %u round(s)\n",
        o.sampling_interval_ms, effective_publishing_interval(o), o.sessions, o.duration, o.warmup,
        o.min_percent, o.rounds);
    std::printf("%s\n", machine_text(current_machine()).c_str());
  }
  // rounds[t][k]: round k of target t. Rounds alternate between the targets.
  std::vector<std::vector<RoundResult>> rounds(targets.size());
  for (uint32_t k = 0; k < o.rounds; ++k)
    for (size_t t = 0; t < targets.size(); ++t) rounds[t].push_back(run_round(o, targets[t]));

  const char* figure = o.find_capacity ? "capacity (items passing)" : "notifications/s";
  std::vector<double> medians;
  for (size_t t = 0; t < targets.size(); ++t) {
    std::vector<double> figures, cores;
    for (const auto& r : rounds[t]) {
      figures.push_back(round_figure(r));
      if (!r.steps.empty() && r.steps.back().server_cores >= 0) cores.push_back(r.steps.back().server_cores);
    }
    medians.push_back(median_of(figures));
    if (!o.json && (o.rounds > 1 || targets.size() > 1)) {
      std::printf("sub [%s]: %s per round", targets[t].name.c_str(), figure);
      for (double f : figures) std::printf(" %.0f", f);
      std::printf("  (median %.0f)", medians.back());
      if (!cores.empty()) std::printf(", server CPU median %.2f cores", median_of(cores));
      std::printf("\n");
    }
  }
  if (!o.json) {
    for (size_t t = 1; t < targets.size(); ++t)
      if (medians[t] > 0)
        std::printf("ratio %s / %s: %.3f (%s, medians of %u round(s))\n", targets[0].name.c_str(),
                    targets[t].name.c_str(), medians[0] / medians[t], figure, o.rounds);
  } else {
    std::string out =
        "{\"scenario\": \"sub\", \"sampling_interval_ms\": " + json_number(o.sampling_interval_ms) +
        ", \"publishing_interval_ms\": " + json_number(effective_publishing_interval(o)) +
        ", \"sessions\": " + std::to_string(o.sessions) + ", \"duration_s\": " + json_number(o.duration) +
        ", \"warmup_s\": " + json_number(o.warmup) + ", \"min_percent\": " + json_number(o.min_percent) +
        ", \"find_capacity\": " + (o.find_capacity ? "true" : "false") +
        ", \"rounds\": " + std::to_string(o.rounds) + ", \"machine\": " + machine_json(current_machine()) +
        ", \"targets\": [";
    for (size_t t = 0; t < targets.size(); ++t) {
      out +=
          std::string(t ? ", " : "") + "\n  {\"target\": " + json_string(targets[t].name) + ", \"rounds\": [";
      for (size_t k = 0; k < rounds[t].size(); ++k) {
        const RoundResult& r = rounds[t][k];
        out += std::string(k ? ", " : "") + "{\"pass\": " + (r.pass() ? "true" : "false");
        if (r.searched)
          out += ", \"capacity_passes\": " + std::to_string(r.passes) +
                 ", \"capacity_fails\": " + (r.fails ? std::to_string(r.fails) : std::string("null"));
        out += ", \"steps\": [";
        for (size_t i = 0; i < r.steps.size(); ++i) out += (i ? ", " : "") + step_json(r.steps[i]);
        out += "]}";
      }
      out += std::string("], \"median\": ") + json_number(medians[t]) + "}";
    }
    out += std::string("\n], \"median_of\": \"") + (o.find_capacity ? "capacity" : "notifications_per_s") +
           "\", \"ratios\": {";
    for (size_t t = 1; t < targets.size(); ++t)
      out += (t > 1 ? ", " : "") + json_string(targets[t].name) + ": " +
             (medians[t] > 0 ? json_number(medians[0] / medians[t]) : std::string("null"));
    out += "}}\n";
    std::fputs(out.c_str(), stdout);
  }
  bool ok = true;
  for (const auto& target_rounds : rounds)
    for (const auto& r : target_rounds) ok = ok && r.pass();
  return ok ? 0 : 1;
}

}  // namespace opcuad::bench
