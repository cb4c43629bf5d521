#include "bench/bench_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/machine.hpp"
#include "ua/status_code.hpp"

namespace opcuad::bench {

namespace {

// ---- output

std::string group(double v) {
  auto n = static_cast<uint64_t>(std::llround(v));
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

// The median over rounds of a / b requests/s, each ratio taken within one round (the rounds alternate).
double median_ratio(const RunResult& a, const RunResult& b) {
  std::vector<double> ratios;
  for (size_t i = 0; i < std::min(a.round_rates.size(), b.round_rates.size()); ++i)
    if (b.round_rates[i] > 0) ratios.push_back(a.round_rates[i] / b.round_rates[i]);
  if (ratios.empty()) return 0;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  return n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
}

std::string ratio_or_na(double v, int digits) {
  return v < 0 ? std::string("n/a") : fixed(v, digits);
}

std::string json_number_or_null(double v) {
  if (v < 0) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

// The server's own counters (bench/server_counters.hpp), or n/a for a server without them.
void print_counters_text(const RunResult& r) {
  const ServerCounterDelta& c = r.counters;
  std::printf("  server allocs/op  %s  (heap allocations per request, from the server's counters)\n",
              ratio_or_na(c.per_request(ServerCounter::HeapAllocations), 3).c_str());
  std::printf("  bytes alloc'd/op  %s\n",
              ratio_or_na(c.per_request(ServerCounter::HeapBytesAllocated), 1).c_str());
  std::printf("  write syscalls    %s per response (%s chunks per message, %s server requests counted)\n",
              ratio_or_na(c.per_message(ServerCounter::WriteCalls), 4).c_str(),
              ratio_or_na(c.per_message(ServerCounter::ChunksSent), 3).c_str(),
              c.available ? group(static_cast<double>(c[ServerCounter::RequestsReceived])).c_str() : "n/a");
}

// The servers under test (one per --security variant) come first in `runs`, named opcuad or server.
bool under_test(const RunResult& r) {
  return r.target == "opcuad" || r.target == "server" || r.target.starts_with("opcuad[") ||
         r.target.starts_with("server[");
}

// What a comparison target (canned, a peer) is held against: the server under test with the same
// security variant, else the first.
size_t reference_of(const std::vector<RunResult>& runs, size_t i) {
  for (size_t j = 0; j < runs.size() && under_test(runs[j]); ++j)
    if (runs[j].security == runs[i].security) return j;
  return 0;
}

// Medians over the rounds of the machine's steal and of the other processes' CPU; negative: unknown.
double median_steal(const RunResult& r) {
  std::vector<double> v;
  for (const auto& c : r.round_cpus)
    if (c.steal_percent >= 0) v.push_back(c.steal_percent);
  return v.empty() ? -1 : median(v);
}
double median_other(const RunResult& r) {
  std::vector<double> v;
  for (const auto& c : r.round_cpus)
    if (c.other_cores >= 0) v.push_back(c.other_cores);
  return v.empty() ? -1 : median(v);
}
double median_server_us(const RunResult& r) {
  std::vector<double> v;
  for (double x : r.round_server_us)
    if (x >= 0) v.push_back(x);
  return v.empty() ? -1 : median(v);
}
size_t high_steal_rounds(const RunResult& r) {
  return static_cast<size_t>(std::count_if(r.round_cpus.begin(), r.round_cpus.end(),
                                           [](const RoundCpu& c) { return c.high_steal(); }));
}

// The machine during the rounds: steal and the CPU of other processes, each round's value when there are
// several, a round above kHighStealPercent marked with '*'.
void print_machine_cpu_text(const RunResult& r, bool server_known) {
  const double steal = median_steal(r), other = median_other(r);
  std::printf("  steal             %s", steal < 0 ? "n/a" : (fixed(steal, 1) + " % of the CPU time").c_str());
  if (r.round_cpus.size() > 1) {
    std::printf("  (rounds");
    for (const auto& c : r.round_cpus)
      std::printf(" %s%s", c.steal_percent < 0 ? "n/a" : fixed(c.steal_percent, 1).c_str(),
                  c.high_steal() ? "*" : "");
    std::printf(")");
  }
  if (high_steal_rounds(r) > 0)
    std::printf("\n                    * more than %g %% steal: the host ran other work on this VM's CPUs",
                kHighStealPercent);
  std::printf("\n  other processes   %s", cores_text(other).c_str());
  if (r.round_cpus.size() > 1) {
    std::printf("  (rounds");
    for (const auto& c : r.round_cpus)
      std::printf(" %s", c.other_cores < 0 ? "n/a" : fixed(c.other_cores, 2).c_str());
    std::printf(")");
  }
  std::printf("%s\n", server_known ? "" : "  (the server included: the harness did not start it)");
}

// One row per target: median requests/s and server CPU per request side by side, so that a faster
// target that only got more of the machine shows as such.
void print_comparison_table(const std::vector<RunResult>& runs) {
  size_t width = 6;
  for (const auto& r : runs) width = std::max(width, r.target.size());
  const size_t rounds = runs.empty() ? 0 : runs[0].round_rates.size();
  std::printf("\ncomparison (medians of %zu round(s)):\n", rounds);
  std::printf("  %-*s  %12s  %14s  %12s  %7s\n", static_cast<int>(width), "target", "requests/s",
              "server us/req", "server cores", "steal");
  for (const auto& r : runs) {
    const double us = median_server_us(r), steal = median_steal(r);
    const double seconds = r.seconds > 0 ? r.seconds : 1;
    std::printf("  %-*s  %12s  %14s  %12s  %7s\n", static_cast<int>(width), r.target.c_str(),
                group(median(r.round_rates)).c_str(), us < 0 ? "n/a" : fixed(us, 2).c_str(),
                r.server_cpu < 0 ? "n/a" : fixed(r.server_cpu / seconds, 2).c_str(),
                steal < 0 ? "n/a" : (fixed(steal, 1) + (high_steal_rounds(r) ? " %*" : " %")).c_str());
  }
}

}  // namespace

// The server's counters as JSON members (null when the server does not have them).
static std::string counters_json(const RunResult& r) {
  const ServerCounterDelta& c = r.counters;
  std::string s = "\"server_counters\": ";
  if (!c.available)
    s += "null";
  else
    s += "{\"requests\": " + std::to_string(c[ServerCounter::RequestsReceived]) +
         ", \"allocations\": " + std::to_string(c[ServerCounter::HeapAllocations]) +
         ", \"bytes_allocated\": " + std::to_string(c[ServerCounter::HeapBytesAllocated]) +
         ", \"messages_sent\": " + std::to_string(c[ServerCounter::MessagesSent]) +
         ", \"chunks_sent\": " + std::to_string(c[ServerCounter::ChunksSent]) +
         ", \"write_calls\": " + std::to_string(c[ServerCounter::WriteCalls]) +
         ", \"bytes_sent\": " + std::to_string(c[ServerCounter::BytesSent]) + "}";
  s += ", \"server_allocs_per_request\": " +
       json_number_or_null(c.per_request(ServerCounter::HeapAllocations));
  s += ", \"server_bytes_allocated_per_request\": " +
       json_number_or_null(c.per_request(ServerCounter::HeapBytesAllocated));
  s += ", \"write_syscalls_per_response\": " + json_number_or_null(c.per_message(ServerCounter::WriteCalls));
  return s;
}

void print_text(const Options& o, const Workload& w, const std::vector<RunResult>& runs) {
  std::printf(
      "opcuad-bench: %s, %u session(s) x %u in flight, %u %s per request, %u client thread(s), "
      "%u round(s) of %.1f s measured after %.1f s warmup, security %s\n",
      std::string(scenario_name(o.scenario)).c_str(), o.sessions, o.inflight, w.operations_per_request(),
      o.scenario == Scenario::Browse      ? "node (i=2253, both directions)"
      : o.scenario == Scenario::Translate ? "path(s)"
      : w.read_node()                     ? ("value(s) of " + w.read_node()->to_string()).c_str()
                                          : "value(s)",
      o.threads, o.rounds, o.duration, o.warmup, o.security.empty() ? "None" : o.security.c_str());
  std::printf("%s\n", machine_text(current_machine()).c_str());
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (const auto& r : runs) {
    std::printf("\n[%s] %s\n", r.target.c_str(), r.url.c_str());
    std::printf("  requests/s        %s\n", group(r.rate(r.requests)).c_str());
    std::printf("  values/s          %s\n", group(r.rate(r.operations)).c_str());
    if (r.round_rates.size() > 1) {
      std::printf("  rounds req/s     ");
      for (size_t k = 0; k < r.round_rates.size(); ++k)
        std::printf(" %s%s", group(r.round_rates[k]).c_str(),
                    k < r.round_cpus.size() && r.round_cpus[k].high_steal() ? "*" : "");
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
    print_counters_text(r);
    print_machine_cpu_text(r, r.server_cpu >= 0);
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
  if (runs.size() > 1) print_comparison_table(runs);
  for (size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].requests == 0) continue;
    if (under_test(runs[i])) {
      // A security variant (--security A,B): its share of the first variant's throughput and CPU cost.
      const double ratio = median_ratio(runs[0], runs[i]);
      const auto us = [](const RunResult& r) {
        return r.requests && r.server_cpu >= 0 ? r.server_cpu * 1e6 / static_cast<double>(r.requests) : 0.0;
      };
      std::printf(
          "%sratio %s / %s: %s (requests/s, median of %zu round pair(s)); server us per request %s / %s\n",
          i == 1 ? "\n" : "", runs[i].target.c_str(), runs[0].target.c_str(),
          fixed(ratio > 0 ? 1 / ratio : 0, 3).c_str(),
          std::min(runs[0].round_rates.size(), runs[i].round_rates.size()), fixed(us(runs[i]), 2).c_str(),
          fixed(us(runs[0]), 2).c_str());
      continue;
    }
    const RunResult& ref = runs[reference_of(runs, i)];
    std::printf("%sratio %s / %s: %s%s (requests/s, median of %zu round pair(s))\n", i == 1 ? "\n" : "",
                ref.target.c_str(), runs[i].target.c_str(), fixed(median_ratio(ref, runs[i]), 3).c_str(),
                runs[i].target == "canned" ? " of the ceiling" : "",
                std::min(ref.round_rates.size(), runs[i].round_rates.size()));
  }
}

static std::string json_escape(const std::string& s) {
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
      "{\"scenario\": \"%s\", \"security\": \"%s\", \"sessions\": %u, \"inflight\": %u, "
      "\"operations_per_request\": %u, \"read_node\": %s, "
      "\"client_threads\": %u, \"duration_s\": %g, \"warmup_s\": %g, \"rounds\": %u, \"machine\": %s, "
      "\"high_steal_percent\": %g, \"runs\": [",
      std::string(scenario_name(o.scenario)).c_str(), o.security.empty() ? "None" : o.security.c_str(),
      o.sessions, o.inflight, w.operations_per_request(),
      w.read_node() ? ("\"" + w.read_node()->to_string() + "\"").c_str() : "null", o.threads, o.duration,
      o.warmup, o.rounds, machine_json(current_machine()).c_str(), kHighStealPercent);
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    std::printf(
        "%s\n  {\"target\": \"%s\", \"security\": \"%s\", \"url\": \"%s\", \"seconds\": %.4f, \"requests\": "
        "%llu, "
        "\"requests_per_s\": %.1f, \"values_per_s\": %.1f, \"references\": %llu, "
        "\"latency_us\": {\"p50\": %s, \"p90\": %s, \"p99\": %s, \"p99_9\": %s, \"max\": %s}, "
        "\"response_bytes_per_request\": %.1f, \"server_cpu_s\": %.3f, \"server_cpu_us_per_request\": %.3f, "
        "\"client_cpu_s\": %.3f, \"client_cpu_us_per_request\": %.3f, \"errors\": %llu, "
        "\"median_round_requests_per_s\": %.1f, \"service_errors\": {",
        i ? "," : "", r.target.c_str(), r.security.c_str(), r.url.c_str(), r.seconds,
        static_cast<unsigned long long>(r.requests), r.rate(r.requests), r.rate(r.operations),
        static_cast<unsigned long long>(r.references), micros(r.latency.quantile(0.5)).c_str(),
        micros(r.latency.quantile(0.9)).c_str(), micros(r.latency.quantile(0.99)).c_str(),
        micros(r.latency.quantile(0.999)).c_str(), micros(r.latency.max()).c_str(),
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
    std::printf("}, %s", counters_json(r).c_str());
    // The machine during the rounds (machine.hpp): medians, and every round beside its throughput.
    std::printf(
        ", \"median_round_server_cpu_us_per_request\": %s, \"steal_percent\": %s, "
        "\"other_cpu_cores\": %s, \"high_steal_rounds\": %zu, \"round_details\": [",
        json_number(median_server_us(r), true).c_str(), json_number(median_steal(r), true).c_str(),
        json_number(median_other(r), true).c_str(), high_steal_rounds(r));
    for (size_t k = 0; k < r.round_rates.size(); ++k) {
      const RoundCpu c = k < r.round_cpus.size() ? r.round_cpus[k] : RoundCpu{};
      std::printf(
          "%s{\"requests_per_s\": %.1f, \"server_cpu_us_per_request\": %s, \"steal_percent\": %s, "
          "\"other_cpu_cores\": %s, \"high_steal\": %s}",
          k ? ", " : "", r.round_rates[k],
          json_number(k < r.round_server_us.size() ? r.round_server_us[k] : -1, true).c_str(),
          json_number(c.steal_percent, true).c_str(), json_number(c.other_cores, true).c_str(),
          c.high_steal() ? "true" : "false");
    }
    std::printf("], \"server_problem\": \"%s\"}", json_escape(r.server_problem).c_str());
  }
  std::printf("\n]");
  // Ratios of the requests/s of each target's reference (the first target; for canned and peers the server
  // under test with the same security) to its own (median of the round pairs).
  std::printf(", \"ratios\": {");
  for (size_t i = 1; i < runs.size(); ++i) {
    const RunResult& ref = under_test(runs[i]) ? runs[0] : runs[reference_of(runs, i)];
    std::printf("%s\"%s\": %.4f", i > 1 ? ", " : "", json_escape(runs[i].target).c_str(),
                runs[i].requests ? median_ratio(ref, runs[i]) : 0.0);
  }
  std::printf("}");
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].target == "canned" && runs[i].requests > 0)
      std::printf(", \"ratio_to_ceiling\": %.4f", median_ratio(runs[0], runs[i]));
  std::printf("}\n");
}

}  // namespace opcuad::bench
