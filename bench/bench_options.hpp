#pragma once
// The options of opcuad-bench and the result of one load run, shared by the driver (opcuad_bench.cpp) and
// the report printer (report.cpp).

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/client_security.hpp"
#include "bench/histogram.hpp"
#include "bench/machine.hpp"
#include "bench/server_counters.hpp"
#include "bench/sub_scenario.hpp"
#include "bench/workload.hpp"
#include "ua/node_id.hpp"

namespace opcuad::bench {

struct Options {
  std::string mode = "load";  // load (read/write/browse/translate), sub, connect, limits, storm, events
  SubOptions sub;
  bool quick = false;
  std::string server;
  std::string url;
  Scenario scenario = Scenario::Read;
  uint32_t sessions = 10;
  uint32_t inflight = 10;
  uint32_t nodes = 1;
  bool nodes_given = false;
  std::optional<ua::NodeId> read_node;  // --read-node: read this node N times instead of Bench.V1 .. VN
  double duration = 5;
  double warmup = 1;
  uint32_t threads = 1;
  std::vector<int> server_cpus;
  std::vector<int> client_cpus;
  uint32_t server_threads = 1;
  bool server_threads_given = false;
  std::vector<int> handshake_cpus;        // storm: every server thread but the shards (--handshake-cpus)
  uint32_t server_realtime_priority = 0;  // generated config: scheduling.realtime_priority
  bool compare_canned = false;
  std::string compare;  // --compare: "node-opcua" or a loopback URL of another server
  uint32_t rounds = 1;
  bool json = false;
  bool keep_config = false;
  bool server_counters = true;          // generated config: "diagnostics": {"counters": true}
  bool server_diagnostics = false;      // generated config: "diagnostics": {"enabled": true} (the arrays)
  bool expect_server_counters = false;  // fail unless the server's counters are read and move
  double max_allocs_per_op = -1;        // fail when the server's heap allocations per request exceed it
  std::optional<uint16_t> serve_canned;
  std::string canned_response;
  // --security: None or POLICY:MODE, several comma-separated to compare them (one server each).
  std::string security;
  std::string server_certificate;  // --url targets: the server's certificate (DER)
  std::string client_pki;          // where the client certificate is kept (default: a temporary folder)
  // --alarms: how the generated node file declares Bench.V1 .. VN, several comma-separated to compare
  // them (one server each): "" (one bulk declaration), "none" (N explicit variables), "limit" (N explicit
  // variables, each with an exclusive_limit alarm whose limits the written values stay within).
  std::vector<std::string> alarms;
  bool alarm_toggle = false;  // --alarm-toggle: writes alternate across the alarms' high limit
  // storm
  uint32_t storm_clients = 4;   // closed loops opening secure channels + sessions during storm windows
  double read_interval_ms = 1;  // the Read sessions send one request per interval (0: closed loop)
};

struct RunResult {
  std::string target;    // "opcuad", "canned", "node-opcua", "opcuad[None]" with several --security variants
  std::string security;  // the variant it ran with, as --security names it ("None", "POLICY:MODE")
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
  std::vector<double> round_rates;         // requests/s of each round
  ServerCounterDelta counters;             // the server's own counters over the measured windows
  uint64_t allocations_since_connect = 0;  // heap allocations from before the sessions opened to the end
  RoundCpu cpu;                            // the machine during one run's window (run_load)
  std::vector<RoundCpu> round_cpus;        // ... during each round
  std::vector<double> round_server_us;     // server CPU µs per request of each round; negative: unknown

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
    counters.merge(r.counters, round_rates.empty());
    allocations_since_connect += r.allocations_since_connect;
    round_rates.push_back(r.rate(r.requests));
    round_cpus.push_back(r.cpu);
    round_server_us.push_back(
        r.requests && r.server_cpu >= 0 ? r.server_cpu * 1e6 / static_cast<double>(r.requests) : -1);
  }

  uint64_t error_total() const {
    uint64_t n = errors.total();
    for (const auto& [what, c] : transport_errors) n += c;
    return n;
  }
  double rate(uint64_t n) const { return seconds > 0 ? static_cast<double>(n) / seconds : 0; }
};

// The text block and the JSON document of a load run (read, write, browse, translate).
void print_text(const Options& o, const Workload& w, const std::vector<RunResult>& runs);
void print_json(const Options& o, const Workload& w, const std::vector<RunResult>& runs);

// The generated configuration of a load run (opcuad_bench.cpp), offering `security`'s policy and mode.
// `alarms` is one of Options::alarms ("" for the bulk declaration).
bool write_config(const std::filesystem::path& dir, const Options& o, const SecuritySettings& security,
                  std::filesystem::path& config, std::string_view alarms = {});
// The high limit of a "limit" alarm on Bench.V<k> of a run with N values per Write: above every value
// the write scenario writes (0.5 k), below the ones --alarm-toggle writes every other time.
double alarm_high_limit(uint32_t nodes);
// The queueSize the `events` subscriber asks for, and the generated configuration's max_event_queue_size
// for it (the default maximum, 1000, holds less than one publishing interval's events at the target rate).
inline constexpr uint32_t kEventsQueueSize = 10000;
// `--scenario events` (events_scenario.cpp): alarm events delivered to one subscription per second, and
// the server's CPU and heap allocations per event; returns the exit code.
int run_events(const Options& o);
// `--scenario storm` (storm_scenario.cpp): Read latency on open sessions with and without a connection
// storm, alternating windows on one server; returns the exit code.
int run_storm(const Options& o);

}  // namespace opcuad::bench
