// The `events` scenario: how many alarm events one subscription receives per second, and what each costs
// the server. The target it measures (docs/PERFORMANCE.md, "Targets"): events delivered to one
// subscription with eight select clauses and an OfType where clause, at least 200,000 per second per core,
// with no heap allocation per event in steady state.
//
// The server is the write scenario's with --alarms limit: Bench.V1 .. VN, each with an exclusive_limit
// alarm. One writer session keeps --inflight Writes of the N values outstanding and, as --alarm-toggle
// does, writes every other time above the High limit, so that each Write moves every alarm between High
// and normal and raises N events (the server handles one session's requests in order). One subscriber
// session has one subscription with one event item on the Server object (i=2253, AttributeId
// EventNotifier) whose EventFilter selects EventId, EventType, SourceNode, SourceName, Time, Message,
// Severity (BaseEventType) and the ConditionId (ConditionType, empty browse path, AttributeId NodeId;
// Part 9 §5.5.2), where OfType AlarmConditionType. It keeps --publish-outstanding Publish requests
// outstanding, acknowledges every NotificationMessage and counts the EventFieldLists of each
// EventNotificationList; those whose EventType is EventQueueOverflowEventType (Part 4 §5.12.1.5) mark
// events the server lost, and count apart, as errors.
//
// After --warmup, --rounds consecutive windows of --duration on the same sessions: per window the events
// received (by arrival), the writes answered, the server's CPU time and its own heap-allocation counter.
#include <algorithm>
#include <array>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_options.hpp"
#include "bench/blocking_client.hpp"
#include "bench/machine.hpp"
#include "bench/publish_reader.hpp"
#include "bench/server_counters.hpp"
#include "bench/server_process.hpp"
#include "bench/sub_connection.hpp"
#include "bench/ua_client.hpp"
#include "bench/wire_client.hpp"
#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kEventNotifierAttribute = 12;  // Part 6 §A.1: AttributeId EventNotifier
constexpr uint32_t kNodeIdAttribute = 1;
constexpr uint32_t kSelectAttribute = 13;
constexpr uint32_t kClientHandle = 1;
constexpr size_t kSelectClauses = 8;
constexpr size_t kEventTypeField = 1;    // the second select clause
constexpr size_t kConditionIdField = 7;  // the last one
// 20 ms: at the target rate a 50 ms interval gathers more events than an item's queue holds by bytes
// (docs/PERFORMANCE.md, "Events delivered to a subscription").
constexpr double kDefaultPublishingMs = 20;

// The filter of the target: seven BaseEventType fields (Part 5 §6.4.2), the ConditionId, OfType
// AlarmConditionType (Part 4 §7.7.3; ExclusiveLimitAlarmType is one of its subtypes).
ua::EventFilter event_filter() {
  ua::EventFilter f;
  for (const char* name :
       {"EventId", "EventType", "SourceNode", "SourceName", "Time", "Message", "Severity"}) {
    ua::SimpleAttributeOperand o;
    o.type_definition_id = ua::NodeId(0, ua::id::BaseEventType);
    o.browse_path.push_back(ua::QualifiedName{0, ua::String(name)});
    o.attribute_id = kSelectAttribute;
    f.select_clauses.push_back(std::move(o));
  }
  ua::SimpleAttributeOperand condition_id;
  condition_id.type_definition_id = ua::NodeId(0, ua::id::ConditionType);
  condition_id.attribute_id = kNodeIdAttribute;
  f.select_clauses.push_back(std::move(condition_id));
  f.where_clause.elements.push_back(ua::ContentFilterElement{
      ua::FilterOperator::OfType,
      {ua::ExtensionObject::make(
          ua::LiteralOperand{ua::Variant(ua::NodeId(0, ua::id::AlarmConditionType))})}});
  return f;
}

// What the subscriber received in one window.
struct EventWindow {
  uint64_t events = 0;     // EventFieldLists, the overflow events not included
  uint64_t overflows = 0;  // EventQueueOverflowEventType events
  uint64_t responses = 0;  // PublishResponses that carried an EventNotificationList
  uint64_t bytes = 0;      // their message bodies
};

// The subscriber: blocking setup, then an asynchronous Publish loop (wire_client.hpp), as SubConnection
// does for data changes. Counts into window i while the phase is kFirstWindow + i.
//
// shard-local: runs on the thread of its io_context; the main thread reads its counts after that thread
// has been joined.
class EventConnection : private WireClient<EventConnection> {
 public:
  EventConnection(asio::io_context& ctx, const std::atomic<int>& phase, size_t windows)
      : WireClient(ctx), phase_(phase), windows_(windows) {}
  using WireClient::socket;

  bool setup(const Endpoint& endpoint, double publishing_interval_ms, uint32_t queue_size,
             std::string& error) {
    if (!connect_session(socket(), endpoint, "events-subscriber", session(), error)) return false;
    ua::CreateSubscriptionRequest cs;
    cs.requested_publishing_interval = publishing_interval_ms;
    cs.requested_max_keep_alive_count = 10;
    cs.requested_lifetime_count = 1000;
    cs.max_notifications_per_publish = 0;  // no count limit (Part 4 §5.13.2.2), as in sub_connection.cpp
    cs.publishing_enabled = true;
    ua::CreateSubscriptionResponse created;
    if (!blocking_call(socket(), session(), next_request_id_++, cs, created, error)) {
      error = "CreateSubscription: " + error;
      return false;
    }
    revised_publishing_ = created.revised_publishing_interval;
    ua::CreateMonitoredItemsRequest req;
    req.subscription_id = created.subscription_id;
    req.timestamps_to_return = ua::TimestampsToReturn::Neither;
    ua::MonitoredItemCreateRequest item;
    item.item_to_monitor.node_id = ua::NodeId(0, ua::id::Server);
    item.item_to_monitor.attribute_id = kEventNotifierAttribute;
    item.monitoring_mode = ua::MonitoringMode::Reporting;
    item.requested_parameters.client_handle = kClientHandle;
    item.requested_parameters.filter = ua::ExtensionObject::make(event_filter());
    item.requested_parameters.queue_size = queue_size;
    item.requested_parameters.discard_oldest = true;
    req.items_to_create.push_back(std::move(item));
    ua::CreateMonitoredItemsResponse resp;
    if (!blocking_call(socket(), session(), next_request_id_++, req, resp, error)) {
      error = "CreateMonitoredItems: " + error;
      return false;
    }
    if (resp.results.size() != 1) {
      error = "CreateMonitoredItems: " + std::to_string(resp.results.size()) + " results for 1 item";
      return false;
    }
    const auto& result = resp.results.front();
    if (!result.status_code.is_good()) {
      error = "CreateMonitoredItems: item status " + std::string(result.status_code.name());
      return false;
    }
    // Part 4 §7.22.3: an EventFilterResult only when a clause or an element is not Good.
    if (const auto* fr = result.filter_result.get<ua::EventFilterResult>()) {
      for (size_t i = 0; i < fr->select_clause_results.size(); ++i) {
        if (!fr->select_clause_results[i].is_good()) {
          error = "CreateMonitoredItems: select clause " + std::to_string(i) + " " +
                  std::string(fr->select_clause_results[i].name());
          return false;
        }
      }
      for (const auto& r : fr->where_clause_result.element_results) {
        if (!r.status_code.is_good()) {
          error = "CreateMonitoredItems: where clause " + std::string(r.status_code.name());
          return false;
        }
      }
    }
    revised_queue_ = result.revised_queue_size;
    return true;
  }

  // On the io_context's thread.
  void start(uint32_t publish_outstanding) {
    for (uint32_t i = 0; i < std::max<uint32_t>(publish_outstanding, 1); ++i) send_publish();
    start_wire();
  }
  void stop() noexcept { close_wire(); }

  double revised_publishing_interval() const noexcept { return revised_publishing_; }
  uint32_t revised_queue_size() const noexcept { return revised_queue_; }
  const std::vector<EventWindow>& windows() const noexcept { return windows_; }
  // Over the whole run, warmup included.
  const EventWindow& total() const noexcept { return total_; }
  const std::map<std::string, uint64_t>& errors() const noexcept { return errors_; }

 private:
  friend WireClient;
  void on_message(const MessageChunk& m) {
    if (m.chunk_type == 'C') return;
    if (m.chunk_type == 'A') {
      ++errors_["aborted Publish response"];
      return;
    }
    handle_response(m.message);
  }
  void on_wire_error(const std::string& what) { fail(what); }

  void send_publish() {
    ua::PublishRequest req;
    set_request_header(req.request_header, session().authentication_token, next_request_id_, 0);
    for (auto [sub, seq] : acks_) req.subscription_acknowledgements.push_back({sub, seq});
    acks_.clear();
    if (!append_request(outgoing(), transport::MessageType::Message, session(), next_request_id_++, req))
      fail("cannot seal a Publish request");
  }

  // PublishResponse (Part 4 §5.13.5), read in place down to the EventFieldLists (Part 4 §7.25.3): each
  // event's fields are decoded into the same eight Variants, of which the EventType and the ConditionId
  // are looked at.
  void handle_response(std::span<const uint8_t> body) {
    const int phase = phase_.load(std::memory_order_relaxed);
    EventWindow* window = phase >= kFirstWindow && static_cast<size_t>(phase - kFirstWindow) < windows_.size()
                              ? &windows_[static_cast<size_t>(phase - kFirstWindow)]
                              : nullptr;
    PublishHead head;
    const PublishRead r = read_publish_response(
        body, errors_, head, [&](const PublishHead&, const ua::NodeId& body_type, ua::Decoder& inner) {
          if (!body_type.is_ns0(ua::EventNotificationList::binary_encoding_id)) return false;
          count_events(inner, window, body.size());
          return true;
        });
    if (r == PublishRead::Unexpected) return;
    if (r == PublishRead::Read && head.data_count > 0) {
      // Part 4 §5.13.1.1: a NotificationMessage's sequence number is one more than the previous one's.
      if (last_sequence_ != 0 && head.sequence != last_sequence_ + 1)
        ++errors_["notification message sequence gap"];
      last_sequence_ = head.sequence;
      acks_.emplace_back(head.subscription_id, head.sequence);
    }
    send_publish();
  }

  // EventNotificationList: Int32 n, then n x (UInt32 clientHandle, Int32 m, m Variants).
  void count_events(ua::Decoder& d, EventWindow* window, size_t response_bytes) {
    const int32_t n = d.read_i32();
    uint64_t events = 0, overflows = 0;
    for (int32_t i = 0; i < n && d.ok(); ++i) {
      if (d.read_u32() != kClientHandle) ++errors_["event for an unknown client handle"];
      const int32_t fields = d.read_i32();
      if (fields != static_cast<int32_t>(kSelectClauses))
        ++errors_["event with " + std::to_string(fields) + " fields instead of 8"];
      for (int32_t k = 0; k < fields && d.ok(); ++k)
        ua::decode(d, fields_[std::min<size_t>(static_cast<size_t>(k), kSelectClauses - 1)]);
      const auto* event_type = fields > static_cast<int32_t>(kEventTypeField)
                                   ? fields_[kEventTypeField].get_if<ua::NodeId>()
                                   : nullptr;
      if (!event_type) {
        ++errors_["event without an EventType NodeId"];
      } else if (event_type->is_ns0(ua::id::EventQueueOverflowEventType)) {
        ++overflows;
      } else {
        ++events;
        // The where clause let only conditions through: each has its ConditionId (Part 9 §5.5.2).
        const auto* condition = fields == static_cast<int32_t>(kSelectClauses)
                                    ? fields_[kConditionIdField].get_if<ua::NodeId>()
                                    : nullptr;
        if (!condition || condition->is_null()) ++errors_["alarm event without a ConditionId"];
      }
    }
    total_.events += events;
    total_.overflows += overflows;
    ++total_.responses;
    total_.bytes += response_bytes;
    if (window) {
      window->bytes += response_bytes;
      window->events += events;
      window->overflows += overflows;
      ++window->responses;
    }
  }

  void fail(const std::string& what) {
    if (wire_closed()) return;
    ++errors_[what];
    stop();
  }

  const std::atomic<int>& phase_;
  uint32_t next_request_id_ = 100;
  double revised_publishing_ = 0;
  uint32_t revised_queue_ = 0;
  std::array<ua::Variant, kSelectClauses> fields_;
  std::vector<EventWindow> windows_;
  EventWindow total_;
  std::map<std::string, uint64_t> errors_;
  uint32_t last_sequence_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> acks_;
};

// One measured window, with what the server and the machine did during it.
struct EventRound {
  double seconds = 0;
  EventWindow received;
  uint64_t writes = 0;
  double server_cpu = -1;  // seconds
  double client_cpu = 0;
  RoundCpu cpu;
  ServerCounterDelta counters;

  double rate(double n) const { return seconds > 0 ? n / seconds : 0; }
  double events_per_s() const { return rate(static_cast<double>(received.events)); }
  double writes_per_s() const { return rate(static_cast<double>(writes)); }
  double events_per_write() const {
    return writes ? static_cast<double>(received.events) / static_cast<double>(writes) : -1;
  }
  double events_per_response() const {
    return received.responses ? static_cast<double>(received.events) / static_cast<double>(received.responses)
                              : -1;
  }
  double bytes_per_event() const {
    return received.events ? static_cast<double>(received.bytes) / static_cast<double>(received.events) : -1;
  }
  double server_cores() const { return server_cpu >= 0 && seconds > 0 ? server_cpu / seconds : -1; }
  double server_us_per_event() const {
    return server_cpu >= 0 && received.events ? server_cpu * 1e6 / static_cast<double>(received.events) : -1;
  }
  // The whole server's allocations (the writes, the alarms, the events and the Publish responses) per
  // event received; -1 without the counters.
  double per_event(ServerCounter c) const {
    return counters.available && received.events
               ? static_cast<double>(counters[c]) / static_cast<double>(received.events)
               : -1;
  }
};

void pause_seconds(double s) {
  std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

std::string number_or_na(double v, int digits) {
  if (v < 0) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int run_events(const Options& in) {
  raise_fd_limit();
  Options o = in;
  o.scenario = Scenario::Write;
  if (!o.nodes_given) o.nodes = 100;
  const double publishing_ms =
      o.sub.publishing_interval_ms > 0 ? o.sub.publishing_interval_ms : kDefaultPublishingMs;
  if (!pin_current_thread(o.client_cpus)) {
    std::fprintf(stderr, "opcuad-bench: cannot pin the load generator to the CPUs given\n");
    return 2;
  }
  Workload workload(Scenario::Write, o.nodes, 2);
  workload.set_alternate_offset(2 * alarm_high_limit(o.nodes));
  const auto dir = make_temp_dir();
  ChildServer child;
  std::string error;
  std::filesystem::path config;
  if (dir.empty() || !write_config(dir, o, security_settings(), config, "limit") ||
      !child.start({o.server, "--config", config.string()}, o.server_cpus, std::chrono::seconds(120),
                   error)) {
    std::fprintf(stderr, "opcuad-bench: the server did not start: %s\n", error.c_str());
    if (!dir.empty()) std::filesystem::remove_all(dir);
    return 1;
  }
  Endpoint endpoint;
  endpoint.port = child.port();
  endpoint.url = "opc.tcp://127.0.0.1:" + std::to_string(endpoint.port);
  auto give_up = [&](const std::string& what) {
    std::fprintf(stderr, "opcuad-bench: events: %s\n", what.c_str());
    std::string how = child.stop();
    if (!how.empty())
      std::fprintf(stderr, "opcuad-bench: server: %s\n%s\n", how.c_str(), child.log_tail().c_str());
    if (!o.keep_config) std::filesystem::remove_all(dir);
    return 1;
  };
  if (!attach_security(endpoint, dir, error)) return give_up(error);

  // The subscriber on the first client thread, the writer on the last (the same one with --threads 1).
  const size_t windows = o.rounds;
  std::atomic<int> phase{static_cast<int>(Phase::Warmup)};
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (uint32_t t = 0; t < std::min<uint32_t>(o.threads, 2); ++t)
    contexts.push_back(std::make_unique<asio::io_context>(1));
  EventConnection subscriber(*contexts.front(), phase, windows);
  if (!subscriber.setup(endpoint, publishing_ms, kEventsQueueSize, error))
    return give_up("subscriber: " + error);
  LoadStats stats;
  stats.windows.resize(windows);
  LoadConnection writer(*contexts.back(), workload, stats, phase);
  SessionInfo info;
  if (!connect_session(writer.socket(), endpoint, "events-writer", info, error))
    return give_up("writer: " + error);
  CounterProbe probe;
  const bool probing = probe.open(endpoint);

  using Guard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<Guard> guards;
  for (auto& c : contexts) guards.push_back(asio::make_work_guard(*c));
  asio::post(*contexts.front(), [&subscriber, k = o.sub.publish_outstanding] { subscriber.start(k); });
  asio::post(*contexts.back(), [&writer, info, k = o.inflight] { writer.start(info, k); });
  std::vector<std::thread> threads;
  for (auto& c : contexts) threads.emplace_back([&c] { c->run(); });

  pause_seconds(o.warmup);
  std::vector<EventRound> rounds(windows);
  for (size_t w = 0; w < windows; ++w) {
    EventRound& r = rounds[w];
    const auto counters0 = probing ? probe.read() : std::nullopt;
    const CpuSnapshot cpu0 = cpu_snapshot(child.pid());
    const double server0 = process_cpu_seconds(child.pid());
    const double client0 = self_cpu_seconds();
    const auto t0 = Clock::now();
    phase.store(kFirstWindow + static_cast<int>(w), std::memory_order_relaxed);
    pause_seconds(o.duration);
    phase.store(static_cast<int>(Phase::Warmup), std::memory_order_relaxed);
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    const double server1 = process_cpu_seconds(child.pid());
    r.client_cpu = self_cpu_seconds() - client0;
    r.cpu = round_cpu(cpu0, cpu_snapshot(child.pid()), r.seconds);
    if (server0 >= 0 && server1 >= 0) r.server_cpu = server1 - server0;
    r.counters = counter_delta(counters0, counters0 ? probe.read() : std::nullopt);
  }
  probe.close();
  phase.store(static_cast<int>(Phase::Stop), std::memory_order_relaxed);
  // The writer stops once its outstanding Writes are answered; a stalled server gets 3 s.
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  while (!writer.finished() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const bool drained = writer.finished();
  asio::post(*contexts.back(), [&writer] { writer.force_close(); });
  // The events of the last Writes still travel: two publishing intervals and a margin, as `sub` waits.
  pause_seconds(std::min(2 * subscriber.revised_publishing_interval() / 1000, 5.0) + 0.5);
  asio::post(*contexts.front(), [&subscriber] { subscriber.stop(); });
  guards.clear();
  for (auto& t : threads) t.join();
  for (size_t w = 0; w < windows; ++w) {
    rounds[w].received = subscriber.windows()[w];
    rounds[w].writes = stats.windows[w].requests;
  }

  // Every Write but the first (inside the limits, as the initial values are) moves every alarm: N events
  // each. Known only when every Write sent was answered. A figure, not a check: it relies on the wait above.
  const uint64_t writes_answered = stats.completed.load(std::memory_order_relaxed);
  const int64_t expected =
      drained && writes_answered > 0 ? static_cast<int64_t>((writes_answered - 1) * uint64_t{o.nodes}) : -1;
  const auto received = static_cast<int64_t>(subscriber.total().events);

  std::string problem;
  if (child.exited_early()) problem = child.stop() + "\n" + child.log_tail();
  const std::string how = child.stop();
  if (problem.empty() && !how.empty()) problem = how + "\n" + child.log_tail();
  std::map<std::string, uint64_t> errors = subscriber.errors();
  for (const auto& [code, n] : stats.errors.service)
    errors["Write " + std::string(ua::StatusCode(code).name())] += n;
  for (const auto& [code, n] : stats.errors.operation)
    errors["Write result " + std::string(ua::StatusCode(code).name())] += n;
  for (const auto& [what, n] : stats.transport_errors) errors["writer: " + what] += n;
  const uint64_t overflows = subscriber.total().overflows;
  uint64_t error_total = overflows;
  for (const auto& [what, n] : errors) error_total += n;
  uint64_t window_events = 0;
  for (const auto& r : rounds) window_events += r.received.events;

  std::vector<double> events_s, writes_s, us_event, allocs_event, cores;
  for (const auto& r : rounds) {
    events_s.push_back(r.events_per_s());
    writes_s.push_back(r.writes_per_s());
    if (r.server_us_per_event() >= 0) us_event.push_back(r.server_us_per_event());
    if (r.per_event(ServerCounter::HeapAllocations) >= 0)
      allocs_event.push_back(r.per_event(ServerCounter::HeapAllocations));
    if (r.server_cores() >= 0) cores.push_back(r.server_cores());
  }
  auto median_or_unknown = [](const std::vector<double>& v) { return v.empty() ? -1.0 : median(v); };
  const bool pass = window_events > 0 && error_total == 0 && problem.empty();
  const Machine machine = current_machine();

  if (o.json) {
    std::string out =
        "{\"scenario\": \"events\", \"security\": " + json_string(security_settings().name()) +
        ", \"nodes\": " + std::to_string(o.nodes) + ", \"inflight\": " + std::to_string(o.inflight) +
        ", \"select_clauses\": " + std::to_string(kSelectClauses) +
        ", \"publishing_interval_ms\": " + json_number(publishing_ms) +
        ", \"revised_publishing_interval_ms\": " + json_number(subscriber.revised_publishing_interval()) +
        ", \"queue_size\": " + std::to_string(kEventsQueueSize) +
        ", \"revised_queue_size\": " + std::to_string(subscriber.revised_queue_size()) +
        ", \"publish_outstanding\": " + std::to_string(o.sub.publish_outstanding) +
        ", \"client_threads\": " + std::to_string(contexts.size()) +
        ", \"duration_s\": " + json_number(o.duration) + ", \"warmup_s\": " + json_number(o.warmup) +
        ", \"rounds\": " + std::to_string(o.rounds) + ", \"machine\": " + machine_json(machine) +
        ", \"round_details\": [";
    for (size_t w = 0; w < rounds.size(); ++w) {
      const EventRound& r = rounds[w];
      out +=
          std::string(w ? ", " : "") + "\n  {\"seconds\": " + json_number(r.seconds) +
          ", \"events\": " + std::to_string(r.received.events) +
          ", \"events_per_s\": " + json_number(r.events_per_s()) +
          ", \"overflow_events\": " + std::to_string(r.received.overflows) +
          ", \"writes\": " + std::to_string(r.writes) +
          ", \"writes_per_s\": " + json_number(r.writes_per_s()) +
          ", \"events_per_write\": " + json_number(r.events_per_write(), true) +
          ", \"publish_responses_with_events\": " + std::to_string(r.received.responses) +
          ", \"events_per_response\": " + json_number(r.events_per_response(), true) +
          ", \"response_bytes_per_event\": " + json_number(r.bytes_per_event(), true) +
          ", \"server_cpu_cores\": " + json_number(r.server_cores(), true) +
          ", \"server_cpu_us_per_event\": " + json_number(r.server_us_per_event(), true) +
          ", \"client_cpu_cores\": " + json_number(r.seconds > 0 ? r.client_cpu / r.seconds : 0) +
          ", \"server_allocs_per_event\": " + json_number(r.per_event(ServerCounter::HeapAllocations), true) +
          ", \"server_bytes_allocated_per_event\": " +
          json_number(r.per_event(ServerCounter::HeapBytesAllocated), true) +
          ", \"steal_percent\": " + json_number(r.cpu.steal_percent, true) +
          ", \"other_cpu_cores\": " + json_number(r.cpu.other_cores, true) +
          ", \"high_steal\": " + (r.cpu.high_steal() ? "true" : "false") + "}";
    }
    out += "\n], \"median\": {\"events_per_s\": " + json_number(median(events_s)) +
           ", \"writes_per_s\": " + json_number(median(writes_s)) +
           ", \"server_cpu_cores\": " + json_number(median_or_unknown(cores), true) +
           ", \"server_cpu_us_per_event\": " + json_number(median_or_unknown(us_event), true) +
           ", \"server_allocs_per_event\": " + json_number(median_or_unknown(allocs_event), true) +
           "}, \"writes_answered\": " + std::to_string(writes_answered) +
           ", \"events_expected\": " + (expected >= 0 ? std::to_string(expected) : std::string("null")) +
           ", \"events_received\": " + std::to_string(received) + ", \"events_missing\": " +
           (expected >= 0 ? std::to_string(expected - received) : std::string("null")) +
           ", \"overflow_events\": " + std::to_string(overflows) +
           ", \"errors\": " + std::to_string(error_total) + ", \"error_kinds\": " + json_counts(errors) +
           ", \"server_problem\": " + json_string(problem) + ", \"pass\": " + (pass ? "true" : "false") +
           "}\n";
    std::fputs(out.c_str(), stdout);
  } else {
    std::printf(
        "opcuad-bench: events, 1 writer session x %u in flight, each Write of %u values moving %u "
        "exclusive-limit alarms across their High limit; 1 subscriber, 1 event item on the Server object "
        "(%zu select clauses, where OfType AlarmConditionType), publishing %g ms (revised %g), queue %u "
        "(revised %u), %u Publish outstanding; %u round(s) of %.1f s after %.1f s warmup, security %s\n",
        o.inflight, o.nodes, o.nodes, kSelectClauses, publishing_ms, subscriber.revised_publishing_interval(),
        kEventsQueueSize, subscriber.revised_queue_size(), o.sub.publish_outstanding, o.rounds, o.duration,
        o.warmup, security_settings().name().c_str());
    std::printf("%s\n", machine_text(machine).c_str());
    for (size_t w = 0; w < rounds.size(); ++w) {
      const EventRound& r = rounds[w];
      const double client_cores = r.seconds > 0 ? r.client_cpu / r.seconds : 0;
      std::printf(
          "  round %zu: %.0f events/s (%s per write, %s per Publish response, %s bytes each), %.0f writes/s "
          "| "
          "server %s cores, %s us per event, %s allocations per event | client %.2f cores%s | overflow "
          "events %llu | steal "
          "%s %%%s, other processes %s\n",
          w + 1, r.events_per_s(), number_or_na(r.events_per_write(), 1).c_str(),
          number_or_na(r.events_per_response(), 0).c_str(), number_or_na(r.bytes_per_event(), 0).c_str(),
          r.writes_per_s(), number_or_na(r.server_cores(), 2).c_str(),
          number_or_na(r.server_us_per_event(), 3).c_str(),
          number_or_na(r.per_event(ServerCounter::HeapAllocations), 2).c_str(), client_cores,
          client_cores > 0.9 * static_cast<double>(contexts.size()) ? " (client-bound)" : "",
          static_cast<unsigned long long>(r.received.overflows), number_or_na(r.cpu.steal_percent, 1).c_str(),
          r.cpu.high_steal() ? "*" : "", cores_text(r.cpu.other_cores).c_str());
    }
    std::printf(
        "medians of %u round(s): %.0f events/s, %.0f writes/s, server %s cores, %s us per event (%s events/s "
        "per server core), %s server allocations per event\n",
        o.rounds, median(events_s), median(writes_s), number_or_na(median_or_unknown(cores), 2).c_str(),
        number_or_na(median_or_unknown(us_event), 3).c_str(),
        us_event.empty() ? "n/a" : number_or_na(1e6 / median(us_event), 0).c_str(),
        number_or_na(median_or_unknown(allocs_event), 2).c_str());
    std::printf("overflow events (EventQueueOverflowEventType: events the server lost): %llu\n",
                static_cast<unsigned long long>(overflows));
    if (expected >= 0)
      std::printf(
          "whole run: %llu Writes answered, %lld events expected (%u per Write after the first), %lld "
          "received, %lld missing\n",
          static_cast<unsigned long long>(writes_answered), static_cast<long long>(expected), o.nodes,
          static_cast<long long>(received), static_cast<long long>(expected - received));
    else
      std::printf("whole run: %lld events received (Writes were left unanswered: none expected)\n",
                  static_cast<long long>(received));
    std::printf("errors: %llu\n", static_cast<unsigned long long>(error_total));
    for (const auto& [what, n] : errors)
      std::printf("  error: %s x %llu\n", what.c_str(), static_cast<unsigned long long>(n));
    if (window_events == 0) std::printf("no event arrived in the measured windows\n");
    if (!problem.empty()) std::printf("SERVER PROBLEM: %s\n", problem.c_str());
  }
  std::fflush(stdout);
  if (o.keep_config)
    std::fprintf(stderr, "opcuad-bench: configuration kept in %s\n", dir.c_str());
  else
    std::filesystem::remove_all(dir);
  return pass ? 0 : 1;
}

}  // namespace opcuad::bench
