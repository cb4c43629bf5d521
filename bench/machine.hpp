#pragma once
// The machine a result was measured on (every result block and JSON document names it): online CPUs, the
// CPU model and the load average when the run ended. Results from a busy shared machine are not comparable
// with quiet ones; the load average says which kind this was.

#include <cstdint>
#include <map>
#include <string>

namespace opcuad::bench {

struct Machine {
  long cpus = 0;
  std::string cpu_model;          // /proc/cpuinfo "model name"; empty when unknown
  double load[3] = {-1, -1, -1};  // /proc/loadavg: 1, 5, 15 minutes
};

Machine current_machine();
// "machine: 2 CPUs (model), load average 1.02 0.88 0.70"
std::string machine_text(const Machine& m);
// {"cpus": 2, "cpu_model": "...", "load_average": [1.02, 0.88, 0.70]}
std::string machine_json(const Machine& m);

// A JSON string literal (quotes included) with ", \ and control characters escaped.
std::string json_string(const std::string& s);
// {"what": count, ...} of error kinds and their counts.
std::string json_counts(const std::map<std::string, uint64_t>& counts);
// "0.42 cores", or "n/a" for a negative "unknown" marker (a server not started by the harness).
std::string cores_text(double cores);
// A number, or null for NaN / a negative "unknown" marker when `negative_is_null`.
std::string json_number(double v, bool negative_is_null = false);

}  // namespace opcuad::bench
