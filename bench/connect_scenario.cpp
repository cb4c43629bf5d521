// The `connect` scenario: sessions opened per second (connect + HEL/ACK + OPN + CreateSession +
// ActivateSession + CloseSession + CLO, closed loop on each client thread), or with --hold N the number of
// concurrent sessions the server holds, each with a subscription.
#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "bench/blocking_client.hpp"
#include "bench/histogram.hpp"
#include "bench/machine.hpp"
#include "bench/server_process.hpp"
#include "bench/sub_connection.hpp"
#include "bench/sub_scenario.hpp"

namespace opcuad::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct ConnectStats {
  std::mutex mu;
  Histogram latency;                       // GUARDED_BY(mu)
  std::map<std::string, uint64_t> errors;  // GUARDED_BY(mu)
  uint64_t measured = 0;                   // GUARDED_BY(mu)
};

// One closed loop: open and close sessions until `stop`.
void connect_loop(const Endpoint& endpoint, uint32_t index, const std::atomic<int>& phase,
                  ConnectStats& stats) {
  asio::io_context ctx(1);
  Histogram latency;
  std::map<std::string, uint64_t> errors;
  uint64_t measured = 0;
  uint32_t n = 0;
  while (phase.load(std::memory_order_relaxed) != 2) {
    const auto t0 = Clock::now();
    std::string error;
    const bool ok =
        session_cycle(ctx, endpoint, "connect-" + std::to_string(index) + "-" + std::to_string(n++), error);
    const bool in_window = phase.load(std::memory_order_relaxed) == 1;
    if (!ok) {
      ++errors[error];
      if (errors.size() > 20) break;  // the server is refusing; do not spin
      continue;
    }
    if (in_window) {
      ++measured;
      latency.record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count()));
    }
  }
  std::lock_guard lock(stats.mu);
  stats.latency.merge(latency);
  for (const auto& [what, k] : errors) stats.errors[what] += k;
  stats.measured += measured;
}

int run_rate(const SubOptions& o, ChildServer& child, const Endpoint& endpoint) {
  std::atomic<int> phase{0};
  ConnectStats stats;
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < o.threads; ++t)
    threads.emplace_back([&, t] { connect_loop(endpoint, t, phase, stats); });
  std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
  const double server0 = process_cpu_seconds(child.pid());
  const double client0 = self_cpu_seconds();
  const auto t0 = Clock::now();
  phase.store(1);
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration));
  phase.store(2);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const double server1 = process_cpu_seconds(child.pid());
  const double client1 = self_cpu_seconds();
  for (auto& t : threads) t.join();
  uint64_t errors = 0;
  for (const auto& [what, k] : stats.errors) errors += k;
  const double rate = static_cast<double>(stats.measured) / seconds;
  const double server_cores = server0 >= 0 && server1 >= 0 ? (server1 - server0) / seconds : -1;
  const double server_us = server_cores >= 0 && stats.measured
                               ? (server1 - server0) * 1e6 / static_cast<double>(stats.measured)
                               : -1;
  const bool pass = errors == 0 && stats.measured > 0;
  if (o.json) {
    std::string out =
        "{\"scenario\": \"connect\", \"mode\": \"rate\", \"closed_loops\": " + std::to_string(o.threads) +
        ", \"duration_s\": " + json_number(seconds) + ", \"warmup_s\": " + json_number(o.warmup) +
        ", \"machine\": " + machine_json(current_machine()) +
        ", \"sessions\": " + std::to_string(stats.measured) + ", \"sessions_per_s\": " + json_number(rate) +
        ", \"latency_ms\": {\"p50\": " + json_number(stats.latency.quantile(0.5) / 1e6) +
        ", \"p99\": " + json_number(stats.latency.quantile(0.99) / 1e6) +
        ", \"max\": " + json_number(stats.latency.max() / 1e6) +
        "}, \"server_cpu_cores\": " + json_number(server_cores, true) +
        ", \"server_cpu_us_per_session\": " + json_number(server_us, true) +
        ", \"client_cpu_cores\": " + json_number((client1 - client0) / seconds) +
        ", \"errors\": " + std::to_string(errors) + ", \"error_kinds\": " + json_counts(stats.errors);
    out += std::string(", \"pass\": ") + (pass ? "true" : "false") + "}\n";
    std::fputs(out.c_str(), stdout);
    return pass ? 0 : 1;
  }
  std::printf("%s\n", machine_text(current_machine()).c_str());
  std::printf(
      "connect: %u closed loop(s), %.1f s: %.0f sessions opened+closed per second | latency ms p50 %.2f p99 "
      "%.2f "
      "max %.2f | server CPU %s | client CPU %.2f cores | errors %llu | %s\n",
      o.threads, seconds, rate, stats.latency.quantile(0.5) / 1e6, stats.latency.quantile(0.99) / 1e6,
      stats.latency.max() / 1e6,
      server_cores < 0
          ? "n/a"
          : (cores_text(server_cores) + ", " + std::to_string(std::lround(server_us)) + " us per session")
                .c_str(),
      (client1 - client0) / seconds, static_cast<unsigned long long>(errors), pass ? "PASS" : "FAIL");
  for (const auto& [what, k] : stats.errors)
    std::printf("  error: %s x %llu\n", what.c_str(), static_cast<unsigned long long>(k));
  return errors == 0 && stats.measured > 0 ? 0 : 1;
}

int run_hold(const SubOptions& o, ChildServer& child, const Endpoint& endpoint) {
  asio::io_context ctx(1);
  struct Held {
    std::unique_ptr<asio::ip::tcp::socket> socket;
    SessionInfo info;
  };
  std::vector<Held> held;
  held.reserve(o.hold);
  std::map<std::string, uint64_t> errors;
  const long rss0 = process_rss_kib(child.pid());
  const auto t0 = Clock::now();
  uint32_t consecutive_failures = 0;
  for (uint32_t i = 0; i < o.hold && consecutive_failures < 10; ++i) {
    Held h{std::make_unique<asio::ip::tcp::socket>(ctx), {}};
    std::string error;
    bool ok = connect_session(*h.socket, endpoint, "hold-" + std::to_string(i), h.info, error, 3600000);
    if (ok) {
      ua::CreateSubscriptionRequest cs;
      cs.requested_publishing_interval = 1000;
      cs.requested_max_keep_alive_count = 100;
      cs.requested_lifetime_count = 100000;
      cs.publishing_enabled = true;
      ua::CreateSubscriptionResponse created;
      ok = blocking_call(*h.socket, h.info, 10, cs, created, error);
      if (!ok) error = "CreateSubscription: " + error;
    }
    if (!ok) {
      ++errors["session " + std::to_string(i) + ": " + error];
      ++consecutive_failures;
      continue;
    }
    consecutive_failures = 0;
    held.push_back(std::move(h));
    if ((i + 1) % 2000 == 0 && !o.json) {
      std::printf("  %u sessions open after %.1f s\n", i + 1,
                  std::chrono::duration<double>(Clock::now() - t0).count());
      std::fflush(stdout);
    }
  }
  const double open_s = std::chrono::duration<double>(Clock::now() - t0).count();
  const long rss1 = process_rss_kib(child.pid());
  std::this_thread::sleep_for(std::chrono::duration<double>(o.duration));
  // Every held session must still answer: a Read of ServerStatus.State (i=2259) on each.
  uint32_t alive = 0;
  for (auto& h : held) {
    ua::ReadRequest read;
    ua::ReadValueId v;
    v.node_id = ua::NodeId(0, 2259);
    v.attribute_id = 13;
    read.nodes_to_read.push_back(v);
    ua::ReadResponse resp;
    std::string error;
    if (blocking_call(*h.socket, h.info, 11, read, resp, error) && resp.results.size() == 1 &&
        resp.results[0].status.is_good())
      ++alive;
    else
      ++errors["held session did not answer: " + error];
  }
  uint64_t error_total = 0;
  for (const auto& [what, k] : errors) error_total += k;
  const bool pass = error_total == 0 && alive == o.hold && !child.exited_early();
  const double rss_delta_kib = rss0 > 0 && rss1 > 0 ? static_cast<double>(rss1 - rss0) : -1;
  const double bytes_per_session =
      rss_delta_kib >= 0 && !held.empty() ? rss_delta_kib * 1024.0 / held.size() : -1;
  if (o.json) {
    std::string out =
        "{\"scenario\": \"connect\", \"mode\": \"hold\", \"requested\": " + std::to_string(o.hold) +
        ", \"held\": " + std::to_string(held.size()) + ", \"machine\": " + machine_json(current_machine()) +
        ", \"open_s\": " + json_number(open_s) +
        ", \"sessions_opened_per_s\": " + json_number(open_s > 0 ? held.size() / open_s : 0) +
        ", \"held_s\": " + json_number(o.duration) + ", \"answered_read\": " + std::to_string(alive) +
        ", \"server_rss_delta_kib\": " + json_number(rss_delta_kib, true) +
        ", \"server_rss_bytes_per_session\": " + json_number(bytes_per_session, true) +
        ", \"errors\": " + std::to_string(error_total) + ", \"error_kinds\": " + json_counts(errors);
    out += std::string(", \"pass\": ") + (pass ? "true" : "false") + "}\n";
    std::fputs(out.c_str(), stdout);
    return pass ? 0 : 1;
  }
  std::printf("%s\n", machine_text(current_machine()).c_str());
  std::printf(
      "connect --hold: %u of %u sessions opened, each with a subscription, in %.1f s (%.0f/s); %u answered a "
      "Read "
      "after %.1f s held | server RSS +%.0f KiB (%.0f bytes per session) | errors %llu | %s\n",
      static_cast<uint32_t>(held.size()), o.hold, open_s, held.size() / open_s, alive, o.duration,
      rss_delta_kib, bytes_per_session, static_cast<unsigned long long>(error_total), pass ? "PASS" : "FAIL");
  size_t shown = 0;
  for (const auto& [what, k] : errors) {
    if (++shown > 10) break;
    std::printf("  error: %s x %llu\n", what.c_str(), static_cast<unsigned long long>(k));
  }
  return pass ? 0 : 1;
}

}  // namespace

int run_connect_scenario(const SubOptions& o) {
  raise_fd_limit();
  if (!pin_current_thread(o.client_cpus)) {
    std::fprintf(stderr, "opcuad-bench: cannot pin the load generator to the CPUs given\n");
    return 2;
  }
  ChildServer child;
  std::string error;
  Endpoint endpoint;
  std::filesystem::path dir;
  if (!o.url.empty()) {
    if (!parse_loopback_url(o.url, endpoint, error)) {
      std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
      return 2;
    }
  } else {
    dir = make_temp_dir();
    const uint32_t sessions = std::max<uint32_t>(o.hold, o.threads) + 100;
    if (dir.empty() || !start_server(o, dir, 1, 1000, sessions, child, error)) {
      std::fprintf(stderr, "opcuad-bench: server did not start: %s\n", error.c_str());
      return 1;
    }
    endpoint.port = child.port();
    endpoint.url = "opc.tcp://127.0.0.1:" + std::to_string(endpoint.port);
  }
  if (!attach_security(endpoint, dir, error)) {
    std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
    child.stop();
    return 1;
  }
  int rc = o.hold ? run_hold(o, child, endpoint) : run_rate(o, child, endpoint);
  std::string how = child.stop();
  if (!how.empty()) {
    std::fprintf(o.json ? stderr : stdout, "SERVER PROBLEM: %s\n%s\n", how.c_str(), child.log_tail().c_str());
    rc = 1;
  }
  if (!o.keep_config && !dir.empty()) std::filesystem::remove_all(dir);
  return rc;
}

}  // namespace opcuad::bench
