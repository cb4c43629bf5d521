// opcuad-bench: closed-loop load harness for OPC UA servers, after the OPC Foundation's
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

#include "bench/bench_options.hpp"
#include "bench/blocking_client.hpp"
#include "bench/canned_server.hpp"
#include "bench/limits_scenario.hpp"
#include "bench/peer_server.hpp"
#include "bench/server_process.hpp"
#include "bench/sub_connection.hpp"
#include "bench/sub_scenario.hpp"
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
    "  --url URL             an already running server on loopback (opc.tcp://127.0.0.1:PORT); for sub it\n"
    "                        must serve the counters ns=2;i=1..N that change every sampling interval\n"
    "Load:\n"
    "  --scenario S          read | write | browse | translate | sub | connect | limits | storm | events\n"
    "                        (default read)\n"
    "  --sessions S          sessions, each on its own connection (default 10)\n"
    "  --inflight K          outstanding requests per session (default 10)\n"
    "  --nodes N             values per Read/Write, paths per Translate (default 1; browse: i=2253)\n"
    "  --read-node NODEID    read: every value is this node (e.g. i=2258, CurrentTime) instead of\n"
    "                        ns=2;s=Bench.V1 .. VN\n"
    "  --duration SECONDS    measured time (default 5)\n"
    "  --warmup SECONDS      load before measuring (default 1)\n"
    "  --threads T           client threads, one io_context each (default 1)\n"
    "Alarms (generated configuration):\n"
    "  --alarms LIST         none | limit, comma-separated: one server each, rounds alternate, ratios to\n"
    "                        the first. none: Bench.V1 .. VN declared one by one; limit: each also carries\n"
    "                        an exclusive_limit alarm (high and low outside the values written)\n"
    "  --alarm-toggle        write: every other request on a connection writes above the high limit, so\n"
    "                        each write changes every alarm's state (one session keeps the order)\n"
    "Subscriptions (--scenario sub):\n"
    "  --nodes N             monitored items, each on its own simulated counter (default 1000)\n"
    "  --sampling-interval MS  sampling interval, also the counters' interval (default 100)\n"
    "  --publishing-interval MS  (default 5 x sampling interval)\n"
    "  --publish-outstanding K  Publish requests kept outstanding per session (default 16)\n"
    "  --items-per-sub N     monitored items per subscription (default 50000)\n"
    "  --min-percent P       criterion: every item gets >= P % of window/interval samples (default 99)\n"
    "  --find-capacity       double --nodes until the criterion fails, then bisect\n"
    "  --max-items N         stop doubling here (default 1048576)\n"
    "  --max-step-seconds S  stop doubling after a step that took longer (default 60)\n"
    "Events (--scenario events): Bench.V1 .. VN, each with an exclusive_limit alarm (--nodes, default 100);\n"
    "                        one writer session keeps --inflight Writes of the N values outstanding, every\n"
    "                        other one above the High limit (N events per Write; --sessions is not used);\n"
    "                        one subscriber: an event item on the Server object, 8 select clauses, where\n"
    "                        OfType AlarmConditionType, queue 10000, --publishing-interval MS (default 20),\n"
    "                        --publish-outstanding K. Reports events/s, writes/s, server CPU us and heap\n"
    "                        allocations per event, and overflow events (lost events, counted as errors);\n"
    "                        --rounds consecutive --duration windows on the same sessions\n"
    "Sessions (--scenario connect):\n"
    "  --threads T           closed loops opening and closing sessions\n"
    "  --hold N              instead: open N sessions, each with a subscription, hold them --duration\n"
    "Storm (--scenario storm): --sessions Read-1 sessions, one request per --read-interval-ms (default 1),\n"
    "                        measured in --rounds pairs of --duration windows without and with a storm of\n"
    "                        --storm-clients closed loops opening channels + sessions (default 4); server\n"
    "                        threads default to 2 (--server-threads overrides)\n"
    "  --handshake-cpus LIST  pin every server thread but the shards (the handshake pool, ...) here,\n"
    "                        e.g. --server-threads 1 --server-cpus 0 --handshake-cpus 1 --client-cpus 1\n"
    "Security:\n"
    "  --security S          None (default) or POLICY:MODE, e.g. Basic256Sha256:SignAndEncrypt,\n"
    "                        Aes256_Sha256_RsaPss:Sign; comma-separated: one server per entry, rounds\n"
    "                        alternate, ratios to the first (load scenarios)\n"
    "  --server-certificate FILE  with --url: the server's certificate (DER) to open channels for\n"
    "  --client-pki DIR      keep the client certificate here (reused when present), e.g. to trust it\n"
    "                        once on an external server; default: a temporary folder\n"
    "Limits (--scenario limits): clients 1..128 x outstanding 1..256 of Read-1, --duration per level\n"
    "  --quick               a reduced grid (5 x 5)\n"
    "Machine:\n"
    "  --server-cpus LIST    pin the server child (e.g. 0 or 0-1)\n"
    "  --client-cpus LIST    pin the load generator\n"
    "  --server-threads N    'threads' (shards) in the generated server config (default 1)\n"
    "  --server-realtime-priority P  'scheduling.realtime_priority' in the generated config (default 0)\n"
    "Output:\n"
    "  --compare-canned      also run against the built-in canned-response ceiling server, print the ratio\n"
    "  --compare URL|node-opcua  also run against another server (a loopback URL, or node-opcua started\n"
    "                        from bench/peers/node_opcua_server.js with tests/interop/node_modules), "
    "alternating\n"
    "                        rounds, and print the ratio; exit 77 when node or node-opcua is missing\n"
    "  --rounds R            alternate R measured rounds per target (default 1); the ratio is their median\n"
    "  --json                print the results as JSON instead of the text block\n"
    "  --keep-config         keep the generated configuration directory and print its path\n"
    "  --server-diagnostics  generated config: diagnostics.enabled (the diagnostics arrays refreshed)\n"
    "  --no-server-counters  leave opcuad's diagnostics counters off (they are on in the generated config)\n"
    "  --expect-server-counters  fail unless the server's counters are readable and move (tests)\n"
    "  --max-allocs-per-op X  fail when opcuad's heap allocations per request exceed X (tests: the\n"
    "                        counts are deterministic, unlike timings)\n"
    "Child mode:\n"
    "  --serve-canned PORT   run the canned-response server (with --scenario/--nodes, or --canned-response "
    "FILE)\n";

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
      if (v && (*v == "sub" || *v == "connect" || *v == "limits" || *v == "storm" || *v == "events")) {
        o.mode = *v;
        continue;
      }
      auto s = v ? parse_scenario(*v) : std::nullopt;
      ok = s.has_value();
      if (ok) o.scenario = *s;
    } else if (a == "--sampling-interval") {
      ok = number(o.sub.sampling_interval_ms) && o.sub.sampling_interval_ms > 0;
    } else if (a == "--publishing-interval") {
      ok = number(o.sub.publishing_interval_ms) && o.sub.publishing_interval_ms > 0;
    } else if (a == "--publish-outstanding") {
      ok = number(o.sub.publish_outstanding) && o.sub.publish_outstanding > 0;
    } else if (a == "--items-per-sub") {
      ok = number(o.sub.items_per_subscription) && o.sub.items_per_subscription > 0;
    } else if (a == "--min-percent") {
      ok = number(o.sub.min_percent) && o.sub.min_percent >= 0 && o.sub.min_percent <= 100;
    } else if (a == "--find-capacity") {
      o.sub.find_capacity = true;
    } else if (a == "--max-items") {
      ok = number(o.sub.max_items) && o.sub.max_items > 0;
    } else if (a == "--max-step-seconds") {
      ok = number(o.sub.max_step_seconds) && o.sub.max_step_seconds > 0;
    } else if (a == "--hold") {
      ok = number(o.sub.hold) && o.sub.hold > 0;
    } else if (a == "--alarms") {
      auto v = value();
      ok = v.has_value() && !v->empty();
      for (std::string_view list = ok ? *v : std::string_view(); ok && !list.empty();) {
        const auto comma = list.find(',');
        const auto entry = list.substr(0, comma);
        ok = entry == "none" || entry == "limit";
        o.alarms.emplace_back(entry);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      }
    } else if (a == "--alarm-toggle") {
      o.alarm_toggle = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--sessions") {
      ok = number(o.sessions) && o.sessions > 0;
    } else if (a == "--inflight") {
      ok = number(o.inflight) && o.inflight > 0;
    } else if (a == "--nodes") {
      ok = number(o.nodes) && o.nodes > 0;
      o.nodes_given = true;
    } else if (a == "--read-node") {
      auto v = value();
      auto parsed = v ? ua::NodeId::parse(*v) : ua::Parsed<ua::NodeId>{};
      ok = parsed.value.has_value();
      if (ok) o.read_node = *parsed.value;
    } else if (a == "--duration") {
      ok = number(o.duration) && o.duration > 0;
    } else if (a == "--warmup") {
      ok = number(o.warmup) && o.warmup >= 0;
    } else if (a == "--threads") {
      ok = number(o.threads) && o.threads > 0;
    } else if (a == "--server-threads") {
      ok = number(o.server_threads) && o.server_threads > 0;
      o.server_threads_given = true;
    } else if (a == "--handshake-cpus") {
      auto v = value();
      auto cpus = v ? parse_cpu_list(*v) : std::nullopt;
      ok = cpus.has_value() && !cpus->empty();
      if (ok) o.handshake_cpus = *cpus;
    } else if (a == "--server-realtime-priority") {
      ok = number(o.server_realtime_priority) && o.server_realtime_priority <= 99;
    } else if (a == "--server-cpus" || a == "--client-cpus") {
      auto v = value();
      auto cpus = v ? parse_cpu_list(*v) : std::nullopt;
      ok = cpus.has_value() && !cpus->empty();
      if (ok) (a == "--server-cpus" ? o.server_cpus : o.client_cpus) = *cpus;
    } else if (a == "--rounds") {
      ok = number(o.rounds) && o.rounds > 0;
    } else if (a == "--compare-canned") {
      o.compare_canned = true;
    } else if (a == "--compare") {
      auto v = value();
      ok = v.has_value() && !v->empty();
      if (ok) o.compare = *v;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--keep-config") {
      o.keep_config = true;
    } else if (a == "--server-diagnostics") {
      o.server_diagnostics = true;
    } else if (a == "--no-server-counters") {
      o.server_counters = false;
    } else if (a == "--expect-server-counters") {
      o.expect_server_counters = true;
    } else if (a == "--max-allocs-per-op") {
      ok = number(o.max_allocs_per_op) && o.max_allocs_per_op >= 0;
    } else if (a == "--security") {
      auto v = value();
      ok = v.has_value() && !v->empty();
      if (ok) o.security = *v;
    } else if (a == "--server-certificate") {
      auto v = value();
      ok = v.has_value();
      if (ok) o.server_certificate = *v;
    } else if (a == "--client-pki") {
      auto v = value();
      ok = v.has_value() && !v->empty();
      if (ok) o.client_pki = *v;
    } else if (a == "--storm-clients") {
      ok = number(o.storm_clients) && o.storm_clients > 0;
    } else if (a == "--read-interval-ms") {
      ok = number(o.read_interval_ms) && o.read_interval_ms >= 0;
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
  if (!o.alarms.empty() && (!o.url.empty() || o.mode != "load")) {
    error = "--alarms only for read/write/browse/translate on a server the harness starts";
    return std::nullopt;
  }
  if (o.alarm_toggle && (o.mode != "load" || o.scenario != Scenario::Write)) {
    error = "--alarm-toggle only for --scenario write";
    return std::nullopt;
  }
  if (o.mode == "events" && !o.url.empty()) {
    error = "--scenario events starts its own server (its alarms come from the generated configuration)";
    return std::nullopt;
  }
  if (o.mode == "load" && o.threads > o.sessions) o.threads = o.sessions;
  o.sub.server = o.server;
  o.sub.url = o.url;
  o.sub.items = o.nodes_given ? o.nodes : 1000;
  o.sub.sessions = o.sessions;
  o.sub.threads = o.threads;
  o.sub.duration = o.duration;
  o.sub.warmup = o.warmup;
  o.sub.server_cpus = o.server_cpus;
  o.sub.client_cpus = o.client_cpus;
  o.sub.server_threads = o.server_threads;
  o.sub.server_realtime_priority = o.server_realtime_priority;
  o.sub.keep_config = o.keep_config;
  o.sub.json = o.json;
  o.sub.rounds = o.rounds;
  o.sub.compare = o.compare;
  return o;
}

}  // namespace

double alarm_high_limit(uint32_t nodes) {
  return std::max<uint32_t>(nodes, 100);
}

// A configuration directory for the server under test: one endpoint on a free loopback port (offering
// `security`'s policy and mode), one shard unless asked otherwise, N writable Double variables
// ns=2;s=Bench.V1 .. VN, and from a NodeSet2 file a variable ns=3;s=Bench.Record whose DataType is a
// structure of ten fields that file defines (read it with --read-node "ns=3;s=Bench.Record").
// `alarms` "none" and "limit" declare the variables one by one (a bulk declaration cannot carry alarms,
// docs/CONFIGURATION.md "Alarms"), so that the two differ only in the alarms.
bool write_config(const std::filesystem::path& dir, const Options& o, const SecuritySettings& security,
                  std::filesystem::path& config, std::string_view alarms) {
  const uint32_t count = std::max<uint32_t>(o.nodes, 100);
  std::ofstream nodes(dir / "nodes.json");
  nodes << R"({"namespaces": ["urn:opcuad:bench"],
 "nodes": [{"kind": "folder", "name": "Bench", "children": [)";
  if (alarms.empty()) {
    nodes << R"(
   {"kind": "variable", "name": "V{n}", "count": )"
          << count << R"(, "data_type": "Double", "value": 0.0, "access": ["read", "write"]},)";
  } else {
    const double high = alarm_high_limit(o.nodes);
    for (uint32_t k = 1; k <= count; ++k) {
      nodes << "\n   {\"kind\": \"variable\", \"name\": \"V" << k
            << R"(", "data_type": "Double", "value": 0.0, "access": ["read", "write"])";
      if (alarms == "limit")
        nodes << R"(, "alarms": [{"name": "Limits", "type": "exclusive_limit", "limits": {"high": )" << high
              << R"(, "low": )" << -high << "}}]";
      nodes << "},";
    }
  }
  nodes << R"(
   {"kind": "variable", "name": "Sine", "data_type": "Double", "value": 0.0,
    "simulation": {"kind": "sine", "period_ms": 10000, "interval_ms": 100, "min": -1, "max": 1}}]}]}
)";
  std::ofstream types(dir / "bench_types.xml");
  types << R"(<?xml version="1.0" encoding="utf-8"?>
<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd"
           xmlns:uax="http://opcfoundation.org/UA/2008/02/Types.xsd">
  <NamespaceUris><Uri>urn:opcuad:bench:types</Uri></NamespaceUris>
  <Models><Model ModelUri="urn:opcuad:bench:types" Version="1.0" /></Models>
  <UADataType NodeId="ns=1;i=3001" BrowseName="1:BenchRecord">
    <DisplayName>BenchRecord</DisplayName>
    <References><Reference ReferenceType="i=45" IsForward="false">i=22</Reference></References>
    <Definition Name="1:BenchRecord">
      <Field Name="Id" DataType="i=6" /><Field Name="Name" DataType="i=12" /><Field Name="Value" DataType="i=11" />
      <Field Name="Low" DataType="i=11" /><Field Name="High" DataType="i=11" /><Field Name="Count" DataType="i=7" />
      <Field Name="Time" DataType="i=294" /><Field Name="Ok" DataType="i=1" /><Field Name="Unit" DataType="i=12" />
      <Field Name="Quality" DataType="i=19" />
    </Definition>
  </UADataType>
  <UAVariable NodeId="ns=1;s=Bench.Record" BrowseName="1:Record" DataType="ns=1;i=3001" AccessLevel="3">
    <DisplayName>Record</DisplayName>
    <References><Reference ReferenceType="i=47" IsForward="false">i=85</Reference></References>
    <Value><uax:ExtensionObject><uax:TypeId><uax:Identifier>ns=1;i=3001</uax:Identifier></uax:TypeId>
      <uax:Body><BenchRecord xmlns="urn:opcuad:bench:types"><Id>7</Id><Name>pump-7</Name><Value>21.5</Value>
        <Low>0</Low><High>100</High><Count>42</Count><Time>2024-05-01T12:00:00Z</Time><Ok>true</Ok>
        <Unit>degC</Unit><Quality><uax:Code>0</uax:Code></Quality></BenchRecord></uax:Body>
    </uax:ExtensionObject></Value>
  </UAVariable>
</UANodeSet>
)";
  config = dir / "opcuad.json";
  std::ofstream server(config);
  const uint32_t limit = std::max<uint32_t>(o.nodes, 1000);
  // shutdown.grace_period_s 0: the harness stops its server with SIGTERM and gives it 5 s
  // (server_process.cpp).
  const std::string endpoints = endpoint_config_json(dir, security);
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
         << std::max<uint32_t>((o.sessions + 1) * o.rounds + 10, 100) << R"(, "max_nodes_per_read": )"
         << limit << R"(, "max_nodes_per_write": )" << limit
         << R"(, "max_nodes_per_translate_browse_paths": )" << limit
         << (o.mode == "events" ? R"(, "max_event_queue_size": )" + std::to_string(kEventsQueueSize)
                                : std::string())
         << R"(},
 "connections": {"max_connections_per_address": 0},
 "logging": {"level": "info"},
 "shutdown": {"grace_period_s": 0},
 "diagnostics": {"counters": )"
         << (o.server_counters ? "true" : "false") << (o.server_diagnostics ? R"(, "enabled": true)" : "")
         << R"(},
 "namespaces": ["urn:opcuad:bench"],
 "node_files": ["nodes.json", "bench_types.xml"]}
)";
  return static_cast<bool>(nodes) && static_cast<bool>(types) && static_cast<bool>(server);
}

namespace {

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
  // The server's own counters (opcuad with diagnostics.counters): a snapshot before the load sessions
  // open, one as the window starts and one as it ends.
  CounterProbe probe;
  std::optional<ServerCounterValues> at_connect;
  if (probe.open(endpoint)) at_connect = probe.read();
  std::vector<std::unique_ptr<LoadConnection>> connections;
  for (uint32_t s = 0; s < o.sessions; ++s) {
    const uint32_t t = s % o.threads;
    auto c = std::make_unique<LoadConnection>(*contexts[t], workload, *stats[t], phase);
    SessionInfo info;
    std::string error;
    if (!connect_session(c->socket(), endpoint, "bench-" + std::to_string(s), info, error)) {
      ++result.transport_errors["session " + std::to_string(s) + ": " + error];
      continue;
    }
    asio::post(*contexts[t], [c = c.get(), info, k = o.inflight] { c->start(info, k); });
    connections.push_back(std::move(c));
  }
  std::vector<std::thread> threads;
  for (auto& ctx : contexts) threads.emplace_back([&ctx] { ctx->run(); });

  sleep_seconds(o.warmup);
  const auto counters0 = at_connect ? probe.read() : std::nullopt;
  const CpuSnapshot cpu0 = cpu_snapshot(server_pid);
  const double server0 = server_pid > 0 ? process_cpu_seconds(server_pid) : -1;
  const double client0 = self_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  phase.store(static_cast<int>(Phase::Measure), std::memory_order_relaxed);
  sleep_seconds(o.duration);
  const auto counters1 = counters0 ? probe.read() : std::nullopt;
  phase.store(static_cast<int>(Phase::Stop), std::memory_order_relaxed);
  const auto t1 = std::chrono::steady_clock::now();
  const double server1 = server_pid > 0 ? process_cpu_seconds(server_pid) : -1;
  const double client1 = self_cpu_seconds();
  const CpuSnapshot cpu1 = cpu_snapshot(server_pid);
  result.cpu = round_cpu(cpu0, cpu1, std::chrono::duration<double>(t1 - t0).count());
  probe.close();
  result.counters = counter_delta(counters0, counters1);
  if (at_connect && counters1) {
    const auto i = static_cast<size_t>(ServerCounter::HeapAllocations);
    result.allocations_since_connect = (*counters1)[i] - (*at_connect)[i];
  }

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

// A server the load runs against: a child process we started, or a URL.
// The node-opcua peer is one process for every --security variant, so its child is shared.
struct Target {
  std::string name;
  Endpoint endpoint;
  std::shared_ptr<ChildServer> child;
  int pid = -1;  // a server the harness did not start: the process listening on its port, when readable
  RunResult total;
};

bool start_child(Target& t, const std::vector<std::string>& argv, const Options& o) {
  t.child = std::make_shared<ChildServer>();
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
  RunResult r = run_load(t.endpoint, w, o, t.child ? t.child->pid() : t.pid, t.child.get());
  if (!r.server_problem.empty() && t.child) r.server_problem += "\n" + t.child->log_tail();
  t.total.merge(r);
}

void stop_child(Target& t) {
  if (!t.child) return;
  std::string how = t.child->stop();
  if (!how.empty() && t.total.server_problem.empty())
    t.total.server_problem = how + "\n" + t.child->log_tail();
}

// `limits`: one server for the whole grid; each level a short closed-loop Read-1 run (run_load).
int run_limits(const Options& in) {
  raise_fd_limit();
  if (!pin_current_thread(in.client_cpus)) {
    std::fprintf(stderr, "opcuad-bench: cannot pin the load generator to the CPUs given\n");
    return 2;
  }
  Options o = in;
  o.scenario = Scenario::Read;
  o.nodes = 1;
  o.sessions = limits_total_sessions(o.quick) + 10;  // sessions outlive their connections
  const Workload workload(o.scenario, o.nodes, 2);
  Target server;
  server.name = "opcuad";
  const auto dir = make_temp_dir();
  if (!o.url.empty()) {
    std::string error;
    if (!parse_loopback_url(o.url, server.endpoint, error) || !attach_security(server.endpoint, {}, error)) {
      std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
      return 2;
    }
  } else {
    std::filesystem::path config;
    std::string error;
    if (dir.empty() || !write_config(dir, o, security_settings(), config) ||
        !start_child(server, {o.server, "--config", config.string()}, o) ||
        !attach_security(server.endpoint, dir, server.total.server_problem)) {
      std::fprintf(stderr, "opcuad-bench: the server did not start: %s\n",
                   server.total.server_problem.c_str());
      stop_child(server);
      return 1;
    }
  }
  const int rc = run_limits_grid(o.quick, o.json, [&](uint32_t clients, uint32_t outstanding) {
    Options l = o;
    l.sessions = clients;
    l.inflight = outstanding;
    l.threads = std::min(o.threads, clients);
    RunResult r =
        run_load(server.endpoint, workload, l, server.child ? server.child->pid() : -1, server.child.get());
    LimitsLevel level;
    level.clients = clients;
    level.outstanding = outstanding;
    level.requests = r.requests;
    level.errors = r.error_total();
    level.rate = r.rate(r.requests);
    level.p99_ns = r.latency.quantile(0.99);
    level.writes_per_response = r.counters.per_message(ServerCounter::WriteCalls);
    level.allocs_per_request = r.counters.per_request(ServerCounter::HeapAllocations);
    level.problem = r.server_problem;
    return level;
  });
  stop_child(server);
  if (!server.total.server_problem.empty())
    std::fprintf(o.json ? stderr : stdout, "SERVER PROBLEM: %s\n", server.total.server_problem.c_str());
  if (!dir.empty()) std::filesystem::remove_all(dir);
  return server.total.server_problem.empty() ? rc : 1;
}

int run(const Options& o) {
  if (o.mode == "sub") return run_sub_scenario(o.sub);
  if (o.mode == "connect") return run_connect_scenario(o.sub);
  if (o.mode == "limits") return run_limits(o);
  if (o.mode == "storm") return run_storm(o);
  if (o.mode == "events") return run_events(o);
  raise_fd_limit();
  Workload workload(o.scenario, o.nodes, 2);
  if (o.read_node) workload.set_read_node(*o.read_node);
  if (o.alarm_toggle) workload.set_alternate_offset(2 * alarm_high_limit(o.nodes));
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
  // One server under test per security variant (--security A,B,...; None when none is given).
  std::vector<SecuritySettings> none_only(1);
  const std::vector<SecuritySettings>& variants =
      security_variants().empty() ? none_only : security_variants();
  // And one per --alarms entry (main() allows several of only one of the two lists).
  const std::vector<std::string> alarms = o.alarms.empty() ? std::vector<std::string>{""} : o.alarms;
  const size_t server_count = std::max(variants.size(), alarms.size());
  auto security_of = [&](size_t i) -> const SecuritySettings& {
    return variants[std::min(i, variants.size() - 1)];
  };
  auto alarms_of = [&](size_t i) -> const std::string& { return alarms[std::min(i, alarms.size() - 1)]; };
  std::vector<Target> servers(server_count);
  Target canned;
  canned.name = "canned";
  canned.total.server_cpu = 0;
  bool started = true;
  for (size_t i = 0; started && i < server_count; ++i) {
    Target& server = servers[i];
    server.total.server_cpu = 0;
    const std::string suffix = variants.size() > 1 ? "[" + variants[i].name() + "]"
                               : alarms.size() > 1 ? "[alarms " + alarms[i] + "]"
                                                   : std::string();
    std::string error;
    if (!o.url.empty()) {
      server.name = "server" + suffix;
      if (!parse_loopback_url(o.url, server.endpoint, error) ||
          !attach_security(server.endpoint, {}, error, security_of(i))) {
        std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
        std::filesystem::remove_all(dir);
        return 2;
      }
      server.pid = listener_pid(server.endpoint.port);
    } else {
      server.name = "opcuad" + suffix;
      const auto server_dir = server_count > 1 ? dir / ("server-" + std::to_string(i)) : dir;
      std::filesystem::path config;
      std::error_code ec;
      std::filesystem::create_directories(server_dir, ec);
      if (!write_config(server_dir, o, security_of(i), config, alarms_of(i))) {
        std::fprintf(stderr, "opcuad-bench: cannot write the configuration in %s\n", server_dir.c_str());
        for (auto& t : servers) stop_child(t);
        std::filesystem::remove_all(dir);
        return 2;
      }
      started = start_child(server, {o.server, "--config", config.string()}, o);
      if (started && !attach_security(server.endpoint, server_dir, error, security_of(i))) {
        server.total.server_problem = error;
        started = false;
      }
    }
  }
  Target& server = servers.front();
  // --compare: another server, started now (node-opcua) or already running (URL), measured over each
  // --security variant as opcuad is. Its certificate comes from its GetEndpoints (attach_security), so the
  // peers' settings are copies without --server-certificate, which names the --url server's.
  std::vector<SecuritySettings> peer_variants(variants.begin(), variants.end());
  for (auto& v : peer_variants) v.server_certificate_file.clear();
  std::vector<Target> peers(o.compare.empty() ? 0 : variants.size());
  if (started && !peers.empty()) {
    std::string error;
    const bool node_opcua = o.compare == "node-opcua";
    for (size_t i = 0; i < peers.size(); ++i) {
      peers[i].name = std::string(node_opcua ? "node-opcua" : "peer") +
                      (variants.size() > 1 ? "[" + variants[i].name() + "]" : std::string());
      peers[i].total.server_cpu = node_opcua ? 0 : -1;
    }
    if (node_opcua) {
      PeerNodes nodes;
      nodes.variables = std::max<uint32_t>(o.nodes, 100);
      // Sessions of earlier rounds stay open until they time out: room for every round's sessions + probe.
      nodes.sessions = ((o.sessions + 1) * o.rounds + 10) * static_cast<uint32_t>(variants.size());
      for (const auto& v : variants) nodes.security.push_back(v.name());
      std::vector<std::string> argv;
      if (!node_opcua_command(free_loopback_port(), nodes, argv, error)) {
        std::fprintf(stderr, "opcuad-bench: --compare node-opcua: %s\n", error.c_str());
        for (auto& t : servers) stop_child(t);
        std::filesystem::remove_all(dir);
        return kPeerUnavailableExit;
      }
      started = start_child(peers[0], argv, o);
      if (!started)
        std::fprintf(stderr, "opcuad-bench: node-opcua did not start: %s\n",
                     peers[0].total.server_problem.c_str());
      for (size_t i = 1; started && i < peers.size(); ++i) {
        peers[i].child = peers[0].child;
        peers[i].endpoint.port = peers[0].endpoint.port;
        peers[i].endpoint.url = peers[0].endpoint.url;
      }
    } else {
      for (auto& p : peers) {
        if (!parse_loopback_url(o.compare, p.endpoint, error)) {
          std::fprintf(stderr, "opcuad-bench: --compare: %s\n", error.c_str());
          for (auto& t : servers) stop_child(t);
          std::filesystem::remove_all(dir);
          return 2;
        }
        // Its CPU time, as for a server the harness starts, when its process can be found.
        p.pid = listener_pid(p.endpoint.port);
        if (p.pid > 0) p.total.server_cpu = 0;
      }
    }
    for (size_t i = 0; started && i < peers.size(); ++i) {
      if (!attach_security(peers[i].endpoint, {}, error, peer_variants[i])) {
        std::fprintf(stderr, "opcuad-bench: --compare %s: %s\n", peers[i].name.c_str(), error.c_str());
        peers[i].total.server_problem = error;
        started = false;
      }
      peers[i].total.url = peers[i].endpoint.url;
      peers[i].total.target = peers[i].name;
    }
  }
  for (auto& t : servers) {
    t.total.url = t.endpoint.url;
    t.total.target = t.name;
  }
  canned.total.target = canned.name;
  // Rounds alternate between the servers, so that noise from the shared machine falls on all alike.
  bool problem = false;
  for (uint32_t round = 0; started && !problem && round < o.rounds; ++round) {
    for (auto& t : servers) {
      run_round(t, workload, o);
      if (!t.total.server_problem.empty()) problem = true;
    }
    if (problem) break;
    for (auto& p : peers) {
      run_round(p, workload, o);
      if (!p.total.server_problem.empty()) problem = true;
    }
    if (problem) break;
    if (!o.compare_canned) continue;
    if (round == 0) {
      // Replay the real server's own response, so the ceiling moves exactly as many bytes (the canned
      // server speaks SecurityPolicy None only).
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
  for (auto& t : servers) stop_child(t);
  stop_child(canned);
  for (auto& p : peers) stop_child(p);
  std::vector<RunResult> runs;
  for (size_t i = 0; i < servers.size(); ++i) {
    servers[i].total.security = security_of(i).name();
    runs.push_back(std::move(servers[i].total));
  }
  if (o.compare_canned) {
    canned.total.security = "None";
    runs.push_back(std::move(canned.total));
  }
  for (size_t i = 0; i < peers.size(); ++i) {
    peers[i].total.security = variants[i].name();
    runs.push_back(std::move(peers[i].total));
  }

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
  if (o.expect_server_counters) {
    const RunResult& r = runs[0];
    const char* why = !r.counters.available                              ? "not readable"
                      : r.counters[ServerCounter::RequestsReceived] == 0 ? "RequestsReceived did not move"
                      : r.counters[ServerCounter::WriteCalls] == 0       ? "WriteCalls did not move"
                      : r.counters[ServerCounter::MessagesSent] == 0     ? "MessagesSent did not move"
                      : r.allocations_since_connect == 0                 ? "HeapAllocations did not move"
                                                                         : nullptr;
    if (why) {
      failed = true;
      std::fprintf(stderr, "opcuad-bench: %s: server counters %s\n", r.target.c_str(), why);
    }
  }
  for (size_t i = 0; o.max_allocs_per_op >= 0 && i < servers.size(); ++i) {
    const double allocs = runs[i].counters.per_request(ServerCounter::HeapAllocations);
    if (allocs < 0 || allocs > o.max_allocs_per_op) {
      failed = true;
      std::fprintf(stderr,
                   "opcuad-bench: %s: %.4f heap allocations per request, more than --max-allocs-per-op %g\n",
                   runs[i].target.c_str(), allocs, o.max_allocs_per_op);
    }
  }
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
  // --security: the variants, and one client certificate for the secured ones.
  namespace bench = opcuad::bench;
  std::vector<bench::SecuritySettings> variants;
  std::filesystem::path temporary_pki;
  if (!options->security.empty()) {
    std::string_view list = options->security;
    bool any_secured = false;
    while (!list.empty()) {
      const auto comma = list.find(',');
      auto s = bench::parse_security(list.substr(0, comma), error);
      if (!s) {
        std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
        return 2;
      }
      s->server_certificate_file = options->server_certificate;
      any_secured = any_secured || s->secured();
      variants.push_back(std::move(*s));
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
    if (variants.size() > 1 && options->alarms.size() > 1) {
      std::fprintf(stderr, "opcuad-bench: several --security variants or several --alarms, not both\n");
      return 2;
    }
    if (variants.size() > 1 && options->mode != "load") {
      std::fprintf(stderr,
                   "opcuad-bench: several --security variants only for read/write/browse/translate\n");
      return 2;
    }
    if (any_secured) {
      std::filesystem::path pki = options->client_pki;
      if (pki.empty()) pki = temporary_pki = bench::make_temp_dir();
      bench::SecuritySettings client;
      if (pki.empty() || !bench::load_or_make_client_certificate(client, pki, error)) {
        std::fprintf(stderr, "opcuad-bench: %s\n", error.c_str());
        return 2;
      }
      for (auto& v : variants) {
        v.certificate = client.certificate;
        v.private_key = client.private_key;
        v.directory = client.directory;
      }
      if (!options->client_pki.empty())
        std::fprintf(stderr, "opcuad-bench: client certificate %s\n",
                     (pki / bench::kBenchCertificateName).c_str());
    }
  }
  bench::set_security_variants(std::move(variants));
  const int rc = bench::run(*options);
  if (!temporary_pki.empty()) std::filesystem::remove_all(temporary_pki);
  return rc;
}
