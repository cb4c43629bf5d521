// The `storm` scenario: does a connection storm (clients opening secure channels and sessions as fast as
// they can) slow the Reads of sessions that are already open? One server (two shards unless
// --server-threads says otherwise); --sessions Read-1 sessions each send one request per
// --read-interval-ms; the run alternates windows without and with the storm (--rounds pairs of
// --duration), so both halves of a pair see the same machine, and reports the Read latency of each
// window and their ratio.
//
// The storm's own client work (its RSA signatures and decryptions, ~3 private-key operations per
// session) runs at the lowest CPU priority (nice 19), so that on a machine shared with the server it
// takes CPU from the server only where the server leaves it idle: what the ratio shows is the server's
// handshake work competing with its own request path.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/bench_options.hpp"
#include "bench/blocking_client.hpp"
#include "bench/machine.hpp"
#include "bench/server_process.hpp"
#include "bench/sub_connection.hpp"
#include "bench/ua_client.hpp"

namespace opcuad::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct StormState {
  std::atomic<bool> storming{false};
  std::atomic<bool> stop{false};
  const std::atomic<int>* phase = nullptr;
  std::vector<std::atomic<uint64_t>> opened;  // per window: sessions the storm completed in it
  std::mutex mu;
  std::map<std::string, uint64_t> errors;  // GUARDED_BY(mu)
  Histogram session_latency;               // GUARDED_BY(mu), ns, storm windows only
  explicit StormState(size_t windows) : opened(windows) {}
};

// One storm client: connect, HEL, OPN, CreateSession, ActivateSession, CloseSession, CLO, again.
void storm_loop(const Endpoint& endpoint, uint32_t index, StormState& st) {
  // The lowest priority for this thread only (Linux: a nice value per thread id).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  asio::io_context ctx(1);
  std::map<std::string, uint64_t> errors;
  Histogram latency;
  uint32_t n = 0;
  while (!st.stop.load(std::memory_order_relaxed)) {
    if (!st.storming.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    const auto t0 = Clock::now();
    std::string error;
    if (!session_cycle(ctx, endpoint, "storm-" + std::to_string(index) + "-" + std::to_string(n++), error)) {
      ++errors[error];
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a refusing server: do not spin
      continue;
    }
    const int phase = st.phase->load(std::memory_order_relaxed) - kFirstWindow;
    if (phase >= 0 && static_cast<size_t>(phase) < st.opened.size() && phase % 2 == 1) {
      st.opened[static_cast<size_t>(phase)].fetch_add(1, std::memory_order_relaxed);
      latency.record(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count()));
    }
  }
  std::lock_guard lock(st.mu);
  for (const auto& [what, k] : errors) st.errors[what] += k;
  st.session_latency.merge(latency);
}

void sleep_seconds(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

}  // namespace

int run_storm(const Options& in) {
  raise_fd_limit();
  Options o = in;
  o.scenario = Scenario::Read;
  if (!o.server_threads_given) o.server_threads = 2;  // by default, a two-shard server
  if (!pin_current_thread(o.client_cpus)) {
    std::fprintf(stderr, "opcuad-bench: cannot pin the load generator to the CPUs given\n");
    return 2;
  }
  const Workload workload(o.scenario, o.nodes, 2);
  ChildServer child;
  Endpoint endpoint;
  std::string error;
  const auto dir = make_temp_dir();
  if (!o.url.empty()) {
    if (!parse_loopback_url(o.url, endpoint, error) || !attach_security(endpoint, {}, error)) {
      std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
      return 2;
    }
  } else {
    std::filesystem::path config;
    if (dir.empty() || !write_config(dir, o, security_settings(), config) ||
        !child.start({o.server, "--config", config.string()}, o.server_cpus, std::chrono::seconds(60),
                     error)) {
      std::fprintf(stderr, "opcuad-bench: the server did not start: %s\n", error.c_str());
      return 1;
    }
    endpoint.port = child.port();
    endpoint.url = "opc.tcp://127.0.0.1:" + std::to_string(endpoint.port);
    // The split of docs/PERFORMANCE.md ("Connection storm"): the shards keep --server-cpus, every other
    // server thread (the handshake pool doing the RSA work, ...) goes to --handshake-cpus.
    if (!o.handshake_cpus.empty() && pin_threads_except(child.pid(), "opcuad-shard", o.handshake_cpus) < 0) {
      std::fprintf(stderr, "opcuad-bench: cannot pin the server's threads to --handshake-cpus\n");
      child.stop();
      return 1;
    }
    if (!attach_security(endpoint, dir, error)) {
      std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
      child.stop();
      return 1;
    }
  }

  const size_t windows = 2 * static_cast<size_t>(o.rounds);
  std::atomic<int> phase{static_cast<int>(Phase::Warmup)};
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<std::unique_ptr<LoadStats>> stats;
  for (uint32_t t = 0; t < o.threads; ++t) {
    contexts.push_back(std::make_unique<asio::io_context>(1));
    stats.push_back(std::make_unique<LoadStats>());
    stats.back()->windows.resize(windows);
  }
  std::map<std::string, uint64_t> setup_errors;
  std::vector<std::unique_ptr<LoadConnection>> connections;
  const auto pace = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::milli>(o.read_interval_ms));
  for (uint32_t s = 0; s < o.sessions; ++s) {
    const uint32_t t = s % o.threads;
    auto c = std::make_unique<LoadConnection>(*contexts[t], workload, *stats[t], phase);
    SessionInfo info;
    if (!connect_session(c->socket(), endpoint, "read-" + std::to_string(s), info, error)) {
      ++setup_errors["session " + std::to_string(s) + ": " + error];
      continue;
    }
    asio::post(*contexts[t], [c = c.get(), info, k = o.inflight, pace] { c->start(info, k, pace); });
    connections.push_back(std::move(c));
  }
  std::vector<std::thread> threads;
  for (auto& ctx : contexts) threads.emplace_back([&ctx] { ctx->run(); });

  StormState storm(windows);
  storm.phase = &phase;
  std::vector<std::thread> storm_threads;
  for (uint32_t i = 0; i < o.storm_clients; ++i)
    storm_threads.emplace_back([&, i] { storm_loop(endpoint, i, storm); });

  // Per window: seconds, server and client CPU.
  struct Window {
    double seconds = 0, server_cpu = -1, client_cpu = 0;
  };
  std::vector<Window> measured(windows);
  auto measure = [&](size_t w) {
    const pid_t pid = child.pid();
    const double server0 = pid > 0 ? process_cpu_seconds(pid) : -1;
    const double client0 = self_cpu_seconds();
    const auto t0 = Clock::now();
    phase.store(kFirstWindow + static_cast<int>(w), std::memory_order_relaxed);
    sleep_seconds(o.duration);
    phase.store(static_cast<int>(Phase::Warmup), std::memory_order_relaxed);
    measured[w].seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (server0 >= 0) measured[w].server_cpu = process_cpu_seconds(pid) - server0;
    measured[w].client_cpu = self_cpu_seconds() - client0;
  };
  sleep_seconds(o.warmup);
  for (uint32_t r = 0; r < o.rounds; ++r) {
    measure(2 * r);
    storm.storming.store(true);
    sleep_seconds(0.5);  // the storm reaches its pace
    measure(2 * r + 1);
    storm.storming.store(false);
    sleep_seconds(1.0);  // handshakes in progress finish before the next quiet window
  }
  phase.store(static_cast<int>(Phase::Stop), std::memory_order_relaxed);
  storm.stop.store(true);
  for (auto& t : storm_threads) t.join();
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  auto all_finished = [&] {
    return std::all_of(connections.begin(), connections.end(), [](const auto& c) { return c->finished(); });
  };
  while (!all_finished() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (uint32_t i = 0; i < connections.size(); ++i) {
    auto* c = connections[i].get();
    asio::post(*contexts[i % o.threads], [c] { c->force_close(); });
  }
  for (auto& t : threads) t.join();
  std::string how = child.pid() > 0 ? child.stop() : std::string();

  // Merge the client threads' windows.
  std::vector<WindowStats> merged(windows);
  ErrorCounts read_errors;
  std::map<std::string, uint64_t> transport_errors = setup_errors;
  for (auto& s : stats) {
    for (size_t w = 0; w < windows; ++w) {
      merged[w].requests += s->windows[w].requests;
      merged[w].latency.merge(s->windows[w].latency);
    }
    read_errors.merge(s->errors);
    for (const auto& [what, n] : s->transport_errors) transport_errors[what] += n;
  }
  uint64_t errors = read_errors.total();
  for (const auto& [what, n] : transport_errors) errors += n;
  uint64_t storm_errors = 0;
  for (const auto& [what, n] : storm.errors) storm_errors += n;

  std::printf(
      "opcuad-bench: storm, security %s, %u server thread(s), %u Read-%u session(s) at one request per %g "
      "ms, "
      "%u storm client(s) (nice 19), %u round(s) of %.1f s without + %.1f s with the storm\n",
      security_settings().name().c_str(), o.server_threads, o.sessions, o.nodes, o.read_interval_ms,
      o.storm_clients, o.rounds, o.duration, o.duration);
  std::printf("%s\n", machine_text(current_machine()).c_str());
  std::vector<double> p50_ratio, p99_ratio, rates, base_p50, base_p99, storm_p50, storm_p99;
  for (uint32_t r = 0; r < o.rounds; ++r) {
    const auto& b = merged[2 * r];
    const auto& s = merged[2 * r + 1];
    const Window& wb = measured[2 * r];
    const Window& ws = measured[2 * r + 1];
    const double rate =
        static_cast<double>(storm.opened[2 * r + 1].load()) / (ws.seconds > 0 ? ws.seconds : 1);
    const double b50 = b.latency.quantile(0.5) / 1e3, b99 = b.latency.quantile(0.99) / 1e3;
    const double s50 = s.latency.quantile(0.5) / 1e3, s99 = s.latency.quantile(0.99) / 1e3;
    std::printf(
        "  round %u  quiet: %llu reads, p50 %.0f us, p99 %.0f us, server %.2f cores | storm: %.0f "
        "sessions/s, %llu "
        "reads, p50 %.0f us, p99 %.0f us, server %.2f cores, client %.2f cores | p99 ratio %.2f\n",
        r + 1, static_cast<unsigned long long>(b.requests), b50, b99,
        wb.server_cpu >= 0 ? wb.server_cpu / wb.seconds : -1, rate,
        static_cast<unsigned long long>(s.requests), s50, s99,
        ws.server_cpu >= 0 ? ws.server_cpu / ws.seconds : -1, ws.client_cpu / ws.seconds,
        b99 > 0 ? s99 / b99 : 0);
    rates.push_back(rate);
    base_p50.push_back(b50);
    base_p99.push_back(b99);
    storm_p50.push_back(s50);
    storm_p99.push_back(s99);
    if (b50 > 0) p50_ratio.push_back(s50 / b50);
    if (b99 > 0) p99_ratio.push_back(s99 / b99);
  }
  std::printf(
      "medians of %u round(s): storm %.0f secure sessions opened+closed per second (session p50 %.1f ms, p99 "
      "%.1f "
      "ms); "
      "Read p50 %.0f -> %.0f us (ratio %.2f), p99 %.0f -> %.0f us (ratio %.2f; target <= 2)\n",
      o.rounds, median(rates), storm.session_latency.quantile(0.5) / 1e6,
      storm.session_latency.quantile(0.99) / 1e6, median(base_p50), median(storm_p50), median(p50_ratio),
      median(base_p99), median(storm_p99), median(p99_ratio));
  std::printf("errors: reads %llu, storm sessions %llu\n", static_cast<unsigned long long>(errors),
              static_cast<unsigned long long>(storm_errors));
  for (const auto& [what, n] : transport_errors)
    std::printf("  read transport %s x %llu\n", what.c_str(), static_cast<unsigned long long>(n));
  size_t shown = 0;
  for (const auto& [what, n] : storm.errors)
    if (++shown <= 10) std::printf("  storm %s x %llu\n", what.c_str(), static_cast<unsigned long long>(n));
  if (!how.empty()) std::printf("SERVER PROBLEM: %s\n%s\n", how.c_str(), child.log_tail().c_str());
  if (!o.keep_config && !dir.empty()) std::filesystem::remove_all(dir);
  uint64_t reads = 0;
  for (const auto& w : merged) reads += w.requests;
  return errors == 0 && storm_errors == 0 && how.empty() && reads > 0 ? 0 : 1;
}

}  // namespace opcuad::bench
