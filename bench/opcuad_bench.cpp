// opcuad-bench: closed-loop load harness for OPC UA servers (issue 7), after the OPC Foundation's
// ServerLoadHarness and o6-automation's opcua-benchmarks.
//
// It starts the server under test as a child process with a configuration it writes (or targets --url),
// opens S sessions on S connections, keeps K requests outstanding on each, and after a warmup measures
// throughput, latency, errors by status code, and the CPU that the server and the load generator itself
// spend per request. With --compare-canned it then runs the same load against a canned-response server
// that does no work (the loopback-plus-client ceiling) and prints the ratio.
//
// A program, not a test: it prints a result block and exits non-zero only on errors or no throughput.

#include <unistd.h>

#include <algorithm>
#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/canned_server.hpp"
#include "bench/server_process.hpp"
#include "bench/ua_client.hpp"
#include "bench/workload.hpp"

namespace opcuad::bench {
namespace {

constexpr const char* kUsage =
    "Usage: opcuad-bench [options]\n"
    "\n"
    "Target (one of):\n"
    "  --server PATH         opcuad binary to start as a child (default: ../daemon/opcuad beside this "
    "program)\n"
    "  --url URL             an already running server on loopback (opc.tcp://127.0.0.1:PORT)\n"
    "Load:\n"
    "  --scenario S          read | write | browse | translate (default read)\n"
    "  --sessions S          sessions, each on its own connection (default 10)\n"
    "  --inflight K          outstanding requests per session (default 10)\n"
    "  --nodes N             values per Read/Write, paths per Translate (default 1; browse: i=2253)\n"
    "  --duration SECONDS    measured time (default 5)\n"
    "  --warmup SECONDS      load before measuring (default 1)\n"
    "  --threads T           client threads, one io_context each (default 1)\n"
    "Machine:\n"
    "  --server-cpus LIST    pin the server child (e.g. 0 or 0-1)\n"
    "  --client-cpus LIST    pin the load generator\n"
    "  --server-threads N    'threads' (shards) in the generated server config (default 1)\n"
    "Output:\n"
    "  --compare-canned      also run against the built-in canned-response ceiling server, print the ratio\n"
    "  --rounds R            alternate R measured rounds per target (default 1); the ratio is their median\n"
    "  --json                print the results as JSON instead of the text block\n"
    "  --keep-config         keep the generated configuration directory and print its path\n"
    "Child mode:\n"
    "  --serve-canned PORT   run the canned-response server (with --scenario/--nodes, or --canned-response "
    "FILE)\n";

struct Options {
  std::string server;
  std::string url;
  Scenario scenario = Scenario::Read;
  uint32_t sessions = 10;
  uint32_t inflight = 10;
  uint32_t nodes = 1;
  double duration = 5;
  double warmup = 1;
  uint32_t threads = 1;
  std::vector<int> server_cpus;
  std::vector<int> client_cpus;
  uint32_t server_threads = 1;
  bool compare_canned = false;
  uint32_t rounds = 1;
  bool json = false;
  bool keep_config = false;
  std::optional<uint16_t> serve_canned;
  std::string canned_response;
};

struct RunResult {
  std::string target;  // "opcuad", "canned"
  std::string url;
  double seconds = 0;
  uint64_t requests = 0;
  uint64_t operations = 0;
  uint64_t references = 0;
  uint64_t response_bytes = 0;
  Histogram latency;
  ErrorCounts errors;
  std::map<std::string, uint64_t> transport_errors;
  double server_cpu = -1;  // seconds during the measurement; negative when unknown (--url)
  double client_cpu = 0;
  std::string server_problem;
  std::vector<uint8_t> sample_response;
  std::vector<double> round_rates;  // requests/s of each round

  void merge(const RunResult& r) {
    seconds += r.seconds;
    requests += r.requests;
    operations += r.operations;
    references += r.references;
    response_bytes += r.response_bytes;
    latency.merge(r.latency);
    errors.merge(r.errors);
    for (const auto& [what, n] : r.transport_errors) transport_errors[what] += n;
    server_cpu =
        server_cpu >= 0 && r.server_cpu >= 0 ? server_cpu + r.server_cpu : -1;  // a total starts at 0
    client_cpu += r.client_cpu;
    if (server_problem.empty()) server_problem = r.server_problem;
    if (sample_response.empty()) sample_response = r.sample_response;
    round_rates.push_back(r.rate(r.requests));
  }

  uint64_t error_total() const {
    uint64_t n = errors.total();
    for (const auto& [what, c] : transport_errors) n += c;
    return n;
  }
  double rate(uint64_t n) const { return seconds > 0 ? static_cast<double>(n) / seconds : 0; }
};

std::string self_path() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

template <class T>
bool parse_number(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::optional<Options> parse_options(int argc, char** argv, std::string& error) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> std::optional<std::string_view> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string_view(argv[++i]);
    };
    auto number = [&](auto& out) {
      auto v = value();
      return v && parse_number(*v, out);
    };
    bool ok = true;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--server") {
      auto v = value();
      ok = v.has_value();
      if (ok) o.server = *v;
    } else if (a == "--url") {
      auto v = value();
      ok = v.has_value();
      if (ok) o.url = *v;
    } else if (a == "--scenario") {
      auto v = value();
      auto s = v ? parse_scenario(*v) : std::nullopt;
      ok = s.has_value();
      if (ok) o.scenario = *s;
    } else if (a == "--sessions") {
      ok = number(o.sessions) && o.sessions > 0;
    } else if (a == "--inflight") {
      ok = number(o.inflight) && o.inflight > 0;
    } else if (a == "--nodes") {
      ok = number(o.nodes) && o.nodes > 0;
    } else if (a == "--duration") {
      ok = number(o.duration) && o.duration > 0;
    } else if (a == "--warmup") {
      ok = number(o.warmup) && o.warmup >= 0;
    } else if (a == "--threads") {
      ok = number(o.threads) && o.threads > 0;
    } else if (a == "--server-threads") {
      ok = number(o.server_threads) && o.server_threads > 0;
    } else if (a == "--server-cpus" || a == "--client-cpus") {
      auto v = value();
      auto cpus = v ? parse_cpu_list(*v) : std::nullopt;
      ok = cpus.has_value() && !cpus->empty();
      if (ok) (a == "--server-cpus" ? o.server_cpus : o.client_cpus) = *cpus;
    } else if (a == "--rounds") {
      ok = number(o.rounds) && o.rounds > 0;
    } else if (a == "--compare-canned") {
      o.compare_canned = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--keep-config") {
      o.keep_config = true;
    } else if (a == "--serve-canned") {
      uint16_t port = 0;
      ok = number(port);
      if (ok) o.serve_canned = port;
    } else if (a == "--canned-response") {
      auto v = value();
      ok = v.has_value();
      if (ok) o.canned_response = *v;
    } else {
      error = "unknown option '" + std::string(a) + "'";
      return std::nullopt;
    }
    if (!ok) {
      error = "missing or bad value for " + std::string(a);
      return std::nullopt;
    }
  }
  if (o.server.empty() && o.url.empty()) {
    // The build tree puts the daemon at daemon/opcuad beside bench/opcuad-bench.
    o.server =
        (std::filesystem::path(self_path()).parent_path() / "../daemon/opcuad").lexically_normal().string();
  }
  if (o.threads > o.sessions) o.threads = o.sessions;
  return o;
}

// A configuration directory for the server under test: one endpoint on a free loopback port, one shard
// unless asked otherwise, and N writable Double variables ns=2;s=Bench.V1 .. VN.
bool write_config(const std::filesystem::path& dir, const Options& o, std::filesystem::path& config) {
  const uint32_t count = std::max<uint32_t>(o.nodes, 100);
  std::ofstream nodes(dir / "nodes.json");
  nodes << R"({"namespaces": ["urn:opcuad:bench"],
 "nodes": [{"kind": "folder", "name": "Bench", "children": [
   {"kind": "variable", "name": "V{n}", "count": )"
        << count << R"(, "data_type": "Double", "value": 0.0, "access": ["read", "write"]},
   {"kind": "variable", "name": "Sine", "data_type": "Double", "value": 0.0,
    "simulation": {"kind": "sine", "period_ms": 10000, "interval_ms": 100, "min": -1, "max": 1}}]}]}
)";
  config = dir / "opcuad.json";
  std::ofstream server(config);
  const uint32_t limit = std::max<uint32_t>(o.nodes, 1000);
  server << R"({"application_uri": "urn:opcuad:bench:server",
 "endpoints": [{"url": "opc.tcp://127.0.0.1:0"}],
 "threads": )"
         << o.server_threads << R"(,
 "limits": {"max_sessions": )"
         << std::max<uint32_t>(o.sessions + 10, 100) << R"(, "max_nodes_per_read": )" << limit
         << R"(, "max_nodes_per_write": )" << limit << R"(, "max_nodes_per_translate_browse_paths": )"
         << limit << R"(},
 "logging": {"level": "info"},
 "namespaces": ["urn:opcuad:bench"],
 "node_files": ["nodes.json"]}
)";
  return static_cast<bool>(nodes) && static_cast<bool>(server);
}

void sleep_seconds(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

// Drives the load against one server and measures it.
RunResult run_load(const Endpoint& endpoint, const Workload& workload, const Options& o, pid_t server_pid,
                   ChildServer* child) {
  RunResult result;
  result.url = endpoint.url;
  std::atomic<int> phase{static_cast<int>(Phase::Warmup)};
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<std::unique_ptr<LoadStats>> stats;
  for (uint32_t t = 0; t < o.threads; ++t) {
    contexts.push_back(std::make_unique<asio::io_context>(1));
    stats.push_back(std::make_unique<LoadStats>());
  }
  std::vector<std::unique_ptr<LoadConnection>> connections;
  const asio::ip::tcp::endpoint target(asio::ip::make_address_v4("127.0.0.1"), endpoint.port);
  for (uint32_t s = 0; s < o.sessions; ++s) {
    const uint32_t t = s % o.threads;
    auto c = std::make_unique<LoadConnection>(*contexts[t], workload, *stats[t], phase);
    asio::error_code ec;
    c->socket().connect(target, ec);
    SessionInfo info;
    std::string error;
    if (ec) error = "connect: " + ec.message();
    if (!ec && !open_session(c->socket(), endpoint, "bench-" + std::to_string(s), info, error))
      ec = asio::error::fault;
    if (ec) {
      ++result.transport_errors["session " + std::to_string(s) + ": " + error];
      continue;
    }
    asio::post(*contexts[t], [c = c.get(), info, k = o.inflight] { c->start(info, k); });
    connections.push_back(std::move(c));
  }
  std::vector<std::thread> threads;
  for (auto& ctx : contexts) threads.emplace_back([&ctx] { ctx->run(); });

  sleep_seconds(o.warmup);
  const double server0 = server_pid > 0 ? process_cpu_seconds(server_pid) : -1;
  const double client0 = self_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  phase.store(static_cast<int>(Phase::Measure), std::memory_order_relaxed);
  sleep_seconds(o.duration);
  phase.store(static_cast<int>(Phase::Stop), std::memory_order_relaxed);
  const auto t1 = std::chrono::steady_clock::now();
  const double server1 = server_pid > 0 ? process_cpu_seconds(server_pid) : -1;
  const double client1 = self_cpu_seconds();

  // Drain: every connection stops once its outstanding requests are answered. A server that stalls gets
  // 3 s, then the rest is counted as unanswered.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  auto all_finished = [&] {
    return std::all_of(connections.begin(), connections.end(), [](const auto& c) { return c->finished(); });
  };
  while (!all_finished() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (uint32_t i = 0; i < connections.size(); ++i) {
    auto* c = connections[i].get();
    asio::post(*contexts[i % o.threads], [c] { c->force_close(); });
  }
  for (auto& t : threads) t.join();

  result.seconds = std::chrono::duration<double>(t1 - t0).count();
  if (server0 >= 0 && server1 >= 0) result.server_cpu = server1 - server0;
  result.client_cpu = client1 - client0;
  for (auto& s : stats) {
    result.requests += s->requests;
    result.operations += s->operations;
    result.references += s->references;
    result.response_bytes += s->response_bytes;
    result.latency.merge(s->latency);
    result.errors.merge(s->errors);
    for (const auto& [what, n] : s->transport_errors) result.transport_errors[what] += n;
  }
  for (const auto& c : connections) {
    if (!c->sample_response().empty()) {
      result.sample_response = c->sample_response();
      break;
    }
  }
  if (child && child->exited_early()) result.server_problem = child->stop();
  return result;
}

// ---- output

std::string group(double v) {
  auto n = static_cast<uint64_t>(v + 0.5);
  const std::string digits = std::to_string(n);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string micros(uint64_t ns) {
  return fixed(static_cast<double>(ns) / 1000.0, 1);
}

std::string status_name(uint32_t code) {
  ua::StatusCode s(code);
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08X", code);
  return std::string(s.name()) + " (" + hex + ")";
}

// The median over rounds of server / ceiling requests/s, each ratio taken within one round pair.
double median_ratio(const std::vector<RunResult>& runs) {
  if (runs.size() != 2) return 0;
  std::vector<double> ratios;
  for (size_t i = 0; i < std::min(runs[0].round_rates.size(), runs[1].round_rates.size()); ++i)
    if (runs[1].round_rates[i] > 0) ratios.push_back(runs[0].round_rates[i] / runs[1].round_rates[i]);
  if (ratios.empty()) return 0;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  return n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void print_text(const Options& o, const Workload& w, const std::vector<RunResult>& runs) {
  std::printf(
      "opcuad-bench: %s, %u session(s) x %u in flight, %u %s per request, %u client thread(s), "
      "%u round(s) of %.1f s measured after %.1f s warmup\n",
      std::string(scenario_name(o.scenario)).c_str(), o.sessions, o.inflight, w.operations_per_request(),
      o.scenario == Scenario::Browse      ? "node (i=2253, both directions)"
      : o.scenario == Scenario::Translate ? "path(s)"
                                          : "value(s)",
      o.threads, o.rounds, o.duration, o.warmup);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (const auto& r : runs) {
    std::printf("\n[%s] %s\n", r.target.c_str(), r.url.c_str());
    std::printf("  requests/s        %s\n", group(r.rate(r.requests)).c_str());
    std::printf("  values/s          %s\n", group(r.rate(r.operations)).c_str());
    if (r.round_rates.size() > 1) {
      std::printf("  rounds req/s     ");
      for (double x : r.round_rates) std::printf(" %s", group(x).c_str());
      std::printf("  (median %s)\n", group(median(r.round_rates)).c_str());
    }
    if (o.scenario == Scenario::Browse)
      std::printf(
          "  references/req    %s\n",
          fixed(r.requests ? static_cast<double>(r.references) / static_cast<double>(r.requests) : 0, 1)
              .c_str());
    std::printf("  latency us        p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
                micros(r.latency.quantile(0.5)).c_str(), micros(r.latency.quantile(0.9)).c_str(),
                micros(r.latency.quantile(0.99)).c_str(), micros(r.latency.quantile(0.999)).c_str(),
                micros(r.latency.max()).c_str());
    std::printf(
        "  response bytes    %s per request\n",
        group(r.requests ? static_cast<double>(r.response_bytes) / static_cast<double>(r.requests) : 0)
            .c_str());
    const double seconds = r.seconds > 0 ? r.seconds : 1;  // a run that never started has no time
    if (r.server_cpu >= 0)
      std::printf("  server CPU        %s cores, %s us per request\n",
                  fixed(r.server_cpu / seconds, 2).c_str(),
                  fixed(r.requests ? r.server_cpu * 1e6 / static_cast<double>(r.requests) : 0, 2).c_str());
    const double client_cores = r.client_cpu / seconds;
    const size_t client_limit = o.client_cpus.empty() ? static_cast<size_t>(cpus) : o.client_cpus.size();
    std::printf("  client CPU        %s cores, %s us per request%s\n", fixed(client_cores, 2).c_str(),
                fixed(r.requests ? r.client_cpu * 1e6 / static_cast<double>(r.requests) : 0, 2).c_str(),
                client_cores > 0.9 * static_cast<double>(std::min<size_t>(client_limit, o.threads))
                    ? "  (the load generator is saturated: client-bound)"
                    : "");
    std::printf("  errors            %s\n", group(static_cast<double>(r.error_total())).c_str());
    for (const auto& [code, n] : r.errors.service)
      std::printf("    service   %-48s %s\n", status_name(code).c_str(),
                  group(static_cast<double>(n)).c_str());
    for (const auto& [code, n] : r.errors.operation)
      std::printf("    operation %-48s %s\n", status_name(code).c_str(),
                  group(static_cast<double>(n)).c_str());
    for (const auto& [what, n] : r.transport_errors)
      std::printf("    transport %-48s %s\n", what.c_str(), group(static_cast<double>(n)).c_str());
    if (!r.server_problem.empty()) std::printf("  SERVER PROBLEM    %s\n", r.server_problem.c_str());
  }
  if (runs.size() == 2 && runs[1].requests > 0)
    std::printf("\nratio %s / %s: %s of the ceiling (requests/s, median of %zu round pair(s))\n",
                runs[0].target.c_str(), runs[1].target.c_str(), fixed(median_ratio(runs), 3).c_str(),
                std::min(runs[0].round_rates.size(), runs[1].round_rates.size()));
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

void print_json(const Options& o, const Workload& w, const std::vector<RunResult>& runs) {
  std::printf(
      "{\"scenario\": \"%s\", \"sessions\": %u, \"inflight\": %u, \"operations_per_request\": %u, "
      "\"client_threads\": %u, \"duration_s\": %g, \"warmup_s\": %g, \"runs\": [",
      std::string(scenario_name(o.scenario)).c_str(), o.sessions, o.inflight, w.operations_per_request(),
      o.threads, o.duration, o.warmup);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    std::printf(
        "%s\n  {\"target\": \"%s\", \"url\": \"%s\", \"seconds\": %.4f, \"requests\": %llu, "
        "\"requests_per_s\": %.1f, \"values_per_s\": %.1f, \"references\": %llu, "
        "\"latency_us\": {\"p50\": %s, \"p90\": %s, \"p99\": %s, \"p99_9\": %s, \"max\": %s}, "
        "\"response_bytes_per_request\": %.1f, \"server_cpu_s\": %.3f, \"server_cpu_us_per_request\": %.3f, "
        "\"client_cpu_s\": %.3f, \"client_cpu_us_per_request\": %.3f, \"errors\": %llu, "
        "\"median_round_requests_per_s\": %.1f, \"service_errors\": {",
        i ? "," : "", r.target.c_str(), r.url.c_str(), r.seconds, static_cast<unsigned long long>(r.requests),
        r.rate(r.requests), r.rate(r.operations), static_cast<unsigned long long>(r.references),
        micros(r.latency.quantile(0.5)).c_str(), micros(r.latency.quantile(0.9)).c_str(),
        micros(r.latency.quantile(0.99)).c_str(), micros(r.latency.quantile(0.999)).c_str(),
        micros(r.latency.max()).c_str(),
        r.requests ? static_cast<double>(r.response_bytes) / static_cast<double>(r.requests) : 0.0,
        r.server_cpu,
        r.requests && r.server_cpu >= 0 ? r.server_cpu * 1e6 / static_cast<double>(r.requests) : 0.0,
        r.client_cpu, r.requests ? r.client_cpu * 1e6 / static_cast<double>(r.requests) : 0.0,
        static_cast<unsigned long long>(r.error_total()), median(r.round_rates));
    auto codes = [](const std::map<uint32_t, uint64_t>& m) {
      bool first = true;
      for (const auto& [code, n] : m) {
        std::printf("%s\"%s\": %llu", first ? "" : ", ", std::string(ua::StatusCode(code).name()).c_str(),
                    static_cast<unsigned long long>(n));
        first = false;
      }
    };
    codes(r.errors.service);
    std::printf("}, \"operation_errors\": {");
    codes(r.errors.operation);
    std::printf("}, \"transport_errors\": {");
    bool first = true;
    for (const auto& [what, n] : r.transport_errors) {
      std::printf("%s\"%s\": %llu", first ? "" : ", ", json_escape(what).c_str(),
                  static_cast<unsigned long long>(n));
      first = false;
    }
    std::printf("}, \"server_problem\": \"%s\"}", json_escape(r.server_problem).c_str());
  }
  std::printf("\n]");
  if (runs.size() == 2 && runs[1].requests > 0)
    std::printf(", \"ratio_to_ceiling\": %.4f", median_ratio(runs));
  std::printf("}\n");
}

// A server the load runs against: a child process we started, or a URL.
struct Target {
  std::string name;
  Endpoint endpoint;
  std::unique_ptr<ChildServer> child;
  RunResult total;
};

bool start_child(Target& t, const std::vector<std::string>& argv, const Options& o) {
  t.child = std::make_unique<ChildServer>();
  std::string error;
  if (!t.child->start(argv, o.server_cpus, std::chrono::seconds(60), error)) {
    t.total.server_problem = error;
    t.child.reset();
    return false;
  }
  t.endpoint.port = t.child->port();
  t.endpoint.url = "opc.tcp://127.0.0.1:" + std::to_string(t.endpoint.port);
  return true;
}

void run_round(Target& t, const Workload& w, const Options& o) {
  RunResult r = run_load(t.endpoint, w, o, t.child ? t.child->pid() : -1, t.child.get());
  if (!r.server_problem.empty() && t.child) r.server_problem += "\n" + t.child->log_tail();
  t.total.merge(r);
}

void stop_child(Target& t) {
  if (!t.child) return;
  std::string how = t.child->stop();
  if (!how.empty() && t.total.server_problem.empty())
    t.total.server_problem = how + "\n" + t.child->log_tail();
}

int run(const Options& o) {
  const Workload workload(o.scenario, o.nodes, 2);
  if (o.serve_canned) {
    CannedResponse canned = synthesize_canned(workload);
    if (!o.canned_response.empty() && !load_canned(o.canned_response, canned)) {
      std::fprintf(stderr, "opcuad-bench: cannot load %s\n", o.canned_response.c_str());
      return 2;
    }
    return run_canned_server(*o.serve_canned, std::move(canned));
  }

  if (!pin_current_thread(o.client_cpus)) {
    std::fprintf(stderr, "opcuad-bench: cannot pin the load generator to the CPUs given\n");
    return 2;
  }
  std::filesystem::path dir;
  {
    std::string tmpl = (std::filesystem::temp_directory_path() / "opcuad-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      std::perror("opcuad-bench: mkdtemp");
      return 2;
    }
    dir = tmpl;
  }
  Target server;
  server.total.server_cpu = 0;
  Target canned;
  canned.name = "canned";
  canned.total.server_cpu = 0;
  bool started = true;
  if (!o.url.empty()) {
    server.name = "server";
    std::string error;
    if (!parse_loopback_url(o.url, server.endpoint, error)) {
      std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
      std::filesystem::remove_all(dir);
      return 2;
    }
  } else {
    server.name = "opcuad";
    std::filesystem::path config;
    if (!write_config(dir, o, config)) {
      std::fprintf(stderr, "opcuad-bench: cannot write the configuration in %s\n", dir.c_str());
      std::filesystem::remove_all(dir);
      return 2;
    }
    started = start_child(server, {o.server, "--config", config.string()}, o);
  }
  server.total.url = server.endpoint.url;
  server.total.target = server.name;
  canned.total.target = canned.name;
  // Rounds alternate between the two servers, so that noise from the shared machine falls on both alike.
  for (uint32_t round = 0; started && round < o.rounds; ++round) {
    run_round(server, workload, o);
    if (!server.total.server_problem.empty()) break;
    if (!o.compare_canned) continue;
    if (round == 0) {
      // Replay the real server's own response, so the ceiling moves exactly as many bytes.
      std::vector<std::string> argv = {
          self_path(), "--serve-canned",       "0", "--scenario", std::string(scenario_name(o.scenario)),
          "--nodes",   std::to_string(o.nodes)};
      CannedResponse captured;
      const auto file = (dir / "canned-response.bin").string();
      if (make_canned(workload.request_type_id(), server.total.sample_response, captured) &&
          save_canned(file, captured)) {
        argv.push_back("--canned-response");
        argv.push_back(file);
      }
      if (!start_child(canned, argv, o)) break;
      canned.total.url = canned.endpoint.url;
    }
    run_round(canned, workload, o);
  }
  stop_child(server);
  stop_child(canned);
  std::vector<RunResult> runs = {std::move(server.total)};
  if (o.compare_canned) runs.push_back(std::move(canned.total));

  if (o.json)
    print_json(o, workload, runs);
  else
    print_text(o, workload, runs);
  std::fflush(stdout);

  if (o.keep_config)
    std::fprintf(stderr, "opcuad-bench: configuration kept in %s\n", dir.c_str());
  else
    std::filesystem::remove_all(dir);

  bool failed = false;
  for (const auto& r : runs) {
    if (r.requests == 0 || r.error_total() > 0 || !r.server_problem.empty()) {
      failed = true;
      std::fprintf(stderr, "opcuad-bench: %s: %s\n", r.target.c_str(),
                   r.requests == 0             ? "no throughput"
                   : !r.server_problem.empty() ? "server problem"
                                               : "errors");
      if (!r.server_problem.empty()) std::fprintf(stderr, "%s\n", r.server_problem.c_str());
    }
  }
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace opcuad::bench

int main(int argc, char** argv) {
  std::string error;
  auto options = opcuad::bench::parse_options(argc, argv, error);
  if (!options) {
    std::fprintf(stderr, "opcuad-bench: %s\n\n%s", error.c_str(), opcuad::bench::kUsage);
    return 2;
  }
  return opcuad::bench::run(*options);
}
