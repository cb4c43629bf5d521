#include "bench/bench_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "bench/machine.hpp"
#include "ua/status_code.hpp"

namespace opcuad::bench {

namespace {

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
    print_counters_text(r);
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
  for (size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].requests == 0) continue;
    if (runs[i].target.find('[') != std::string::npos) {
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
    std::printf("%sratio %s / %s: %s%s (requests/s, median of %zu round pair(s))\n", i == 1 ? "\n" : "",
                runs[0].target.c_str(), runs[i].target.c_str(),
                fixed(median_ratio(runs[0], runs[i]), 3).c_str(),
                runs[i].target == "canned" ? " of the ceiling" : "",
                std::min(runs[0].round_rates.size(), runs[i].round_rates.size()));
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
      "\"operations_per_request\": %u, "
      "\"client_threads\": %u, \"duration_s\": %g, \"warmup_s\": %g, \"rounds\": %u, \"machine\": %s, "
      "\"runs\": [",
      std::string(scenario_name(o.scenario)).c_str(), o.security.empty() ? "None" : o.security.c_str(),
      o.sessions, o.inflight, w.operations_per_request(), o.threads, o.duration, o.warmup, o.rounds,
      machine_json(current_machine()).c_str());
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
    std::printf("}, %s, \"server_problem\": \"%s\"}", counters_json(r).c_str(),
                json_escape(r.server_problem).c_str());
  }
  std::printf("\n]");
  // Ratios of the first target's requests/s to each other's (median of the round pairs).
  std::printf(", \"ratios\": {");
  for (size_t i = 1; i < runs.size(); ++i)
    std::printf("%s\"%s\": %.4f", i > 1 ? ", " : "", json_escape(runs[i].target).c_str(),
                runs[i].requests ? median_ratio(runs[0], runs[i]) : 0.0);
  std::printf("}");
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].target == "canned" && runs[i].requests > 0)
      std::printf(", \"ratio_to_ceiling\": %.4f", median_ratio(runs[0], runs[i]));
  std::printf("}\n");
}

}  // namespace opcuad::bench
