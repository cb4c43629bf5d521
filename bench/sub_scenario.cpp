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
bool write_sub_config(const std::filesystem::path& dir, const SubOptions& o, uint32_t variables, uint32_t items,
                      uint32_t sessions, std::filesystem::path& config) {
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
  server << R"({"application_uri": "urn:opcuad:bench:server",
 "endpoints": [{"url": "opc.tcp://127.0.0.1:0"}],
 "threads": )"
         << o.server_threads << R"(,
 "limits": {"max_sessions": )"
         << sessions + 10 << R"(, "max_subscriptions": )" << sessions * 2 + items / 1000 + 100
         << R"(, "max_monitored_items": )" << items + 1000 << R"(, "max_monitored_items_per_call": )"
         << std::max<uint32_t>(o.create_batch, 1000) << R"(},
 "logging": {"level": "warn"},
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
  return child.start({o.server, "--config", config.string()}, o.server_cpus, std::chrono::seconds(120), error);
}

std::filesystem::path make_temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "opcuad-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return {};
  return tmpl;
}

namespace {

struct StepResult {
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
  std::printf(
      "sub: %u items, sampling %g ms (revised %g), publishing %g ms (revised %g), queue %u | expected %llu "
      "samples/item in %.1f s | notifications/s %.0f | worst item %.2f %% | items passing %.4f | server CPU "
      "%.2f cores, client CPU %.2f cores | create %.2f s, %s | errors %llu | %s\n",
      r.items, o.sampling_interval_ms, r.revised_sampling, effective_publishing_interval(o), r.revised_publishing,
      r.revised_queue, static_cast<unsigned long long>(r.expected), r.window_s, r.notifications_per_s,
      r.worst_percent, r.passing_fraction, r.server_cores, r.client_cores, r.create_s,
      r.bytes_per_item >= 0 ? (std::to_string(static_cast<long>(r.bytes_per_item)) + " B RSS/item").c_str()
                            : "RSS n/a",
      static_cast<unsigned long long>(r.errors), r.pass ? "PASS" : "FAIL");
  if (r.duplicates) std::printf("  duplicate samples (same source timestamp twice): %llu\n",
                                static_cast<unsigned long long>(r.duplicates));
  for (const auto& [what, n] : r.error_kinds)
    std::printf("  error: %s x %llu\n", what.c_str(), static_cast<unsigned long long>(n));
  if (!r.problem.empty()) std::printf("  SERVER PROBLEM: %s\n", r.problem.c_str());
  if (!r.shutdown_problem.empty())
    std::printf("  server shutdown after the step: %s (not part of the criterion)\n", r.shutdown_problem.c_str());
  std::fflush(stdout);
}

StepResult run_sub_step(const SubOptions& o, uint32_t items) {
  StepResult r;
  r.items = items;
  const auto step_start = Clock::now();
  const auto dir = make_temp_dir();
  ChildServer child;
  std::string error;
  const uint32_t sessions = std::min(o.sessions, items);
  if (dir.empty() || !start_server(o, dir, items, items, sessions, child, error)) {
    r.problem = "server did not start: " + error;
    return r;
  }
  Endpoint endpoint{"opc.tcp://127.0.0.1:" + std::to_string(child.port()), child.port()};
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
  params.queue_size = static_cast<uint32_t>(std::ceil(params.publishing_interval_ms / o.sampling_interval_ms)) * 2 + 2;
  params.items_per_subscription = o.items_per_subscription;
  params.create_batch = o.create_batch;
  params.variables = items;

  const long rss0 = process_rss_kib(child.pid());
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
  const long rss1 = process_rss_kib(child.pid());
  if (rss0 > 0 && rss1 > 0) r.bytes_per_item = (rss1 - rss0) * 1024.0 / items;
  if (!connections.empty()) {
    r.revised_sampling = connections[0]->revised_sampling_interval();
    r.revised_publishing = connections[0]->revised_publishing_interval();
    r.revised_queue = connections[0]->revised_queue_size();
  }

  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  const int64_t t0 = ua::DateTime::now().ticks;
  const int64_t t1 = t0 + static_cast<int64_t>(o.duration * 1e7);
  counters.window_begin.store(t0, std::memory_order_relaxed);
  counters.window_end.store(t1, std::memory_order_relaxed);
  const double server0 = process_cpu_seconds(child.pid());
  const double client0 = self_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration));
  const double server1 = process_cpu_seconds(child.pid());
  const double client1 = self_cpu_seconds();
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
  if (server0 >= 0 && server1 >= 0) r.server_cores = (server1 - server0) / o.duration;
  r.client_cores = (client1 - client0) / o.duration;
  for (const auto& c : connections) {
    r.duplicates += c->duplicates();
    for (const auto& [what, n] : c->errors()) r.error_kinds[what] += n;
  }
  if (counters.unknown_handles) r.error_kinds["notification for an unknown client handle"] += counters.unknown_handles;
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

int run_sub_scenario(const SubOptions& o) {
  raise_fd_limit();
  if (!pin_current_thread(o.client_cpus)) {
    std::fprintf(stderr, "opcuad-bench: cannot pin the load generator to the CPUs given\n");
    return 2;
  }
  std::printf("sub: sampling %g ms, publishing %g ms, %u session(s), window %.1f s after %.1f s warmup, "
              "criterion: every item >= %g %% of its expected samples\n",
              o.sampling_interval_ms, effective_publishing_interval(o), o.sessions, o.duration, o.warmup,
              o.min_percent);
  if (!o.find_capacity) {
    StepResult r = run_sub_step(o, o.items);
    print_step(r, o);
    return r.pass ? 0 : 1;
  }
  // Double until the criterion fails (or the bound / the step-time budget is reached), then bisect.
  uint32_t pass = 0, fail = 0;
  for (uint32_t n = o.items;; n = std::min<uint64_t>(uint64_t{n} * 2, o.max_items)) {
    StepResult r = run_sub_step(o, n);
    print_step(r, o);
    if (!r.pass) {
      fail = n;
      break;
    }
    pass = n;
    if (n >= o.max_items) break;
    if (r.step_seconds > o.max_step_seconds) {
      std::printf("sub: step took %.0f s (> %.0f s): stop doubling\n", r.step_seconds, o.max_step_seconds);
      break;
    }
  }
  for (uint32_t step = 0; fail && pass && step < o.bisect_steps && fail - pass > std::max<uint32_t>(pass / 32, 1);
       ++step) {
    const uint32_t mid = pass + (fail - pass) / 2;
    StepResult r = run_sub_step(o, mid);
    print_step(r, o);
    (r.pass ? pass : fail) = mid;
  }
  if (fail)
    std::printf("sub capacity at %g ms: passes %u items, fails %u items\n", o.sampling_interval_ms, pass, fail);
  else
    std::printf("sub capacity at %g ms: passes %u items (the largest tried)\n", o.sampling_interval_ms, pass);
  return pass > 0 ? 0 : 1;
}

}  // namespace opcuad::bench
