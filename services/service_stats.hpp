#pragma once
// Per-shard service counters and latency histograms. Like transport::TransportStats: written only by
// the shard's own thread (relaxed load + store, no locked instruction, no allocation), read and summed
// by anyone (Server::totals(), the HTTP /metrics handler, the ServerDiagnosticsSummary refresh).
// docs/METRICS.md says what each one means.

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace opcuad::services {

using StatCounter = std::atomic<uint64_t>;

inline void stat_add(StatCounter& c, uint64_t n = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
inline uint64_t stat_get(const StatCounter& c) noexcept {
  return c.load(std::memory_order_relaxed);
}

// A log2 histogram of durations: bucket b counts values <= kBaseNs * 2^b (b < kBuckets), the last slot
// the rest (+Inf). Fixed size, so recording is an index computation and two stores.
template <size_t Buckets, uint64_t BaseNs>
struct Log2Histogram {
  static constexpr size_t kBuckets = Buckets;
  static constexpr uint64_t kBaseNs = BaseNs;
  std::array<StatCounter, kBuckets + 1> counts{};
  StatCounter sum_ns{0};

  static constexpr size_t bucket(uint64_t ns) noexcept {
    if (ns <= kBaseNs) return 0;
    // ns in (base * 2^(b-1), base * 2^b]  <=>  bit_width((ns - 1) / base) == b
    const size_t b = static_cast<size_t>(std::bit_width((ns - 1) / kBaseNs));
    return b < kBuckets ? b : kBuckets;
  }
  // The upper bound of bucket b in seconds (b < kBuckets).
  static constexpr double upper_seconds(size_t b) noexcept {
    return static_cast<double>(kBaseNs << b) * 1e-9;
  }
  void record(std::chrono::steady_clock::duration d) noexcept {
    const auto ns = static_cast<uint64_t>(std::max<int64_t>(0, std::chrono::nanoseconds(d).count()));
    stat_add(counts[bucket(ns)]);
    stat_add(sum_ns, ns);
  }
};

// Request handling time on the shard: 1 µs .. ~1 s (2^20 µs).
using RequestLatency = Log2Histogram<21, 1000>;
// Publish: queued until answered, 1 ms .. ~65 s (2^16 ms); a Publish waits for its subscription's
// next publishing cycle (or keep-alive), so this shows publishing intervals and starvation.
using PublishLatency = Log2Histogram<17, 1000000>;

// How many service slots there are: one per dispatch-table row (Server::service_names()).
inline constexpr size_t kMaxServices = 32;

struct alignas(64) ServiceStats {
  // Per service (index: dispatch-table row): requests handled and those answered with a ServiceFault
  // while the handler ran (asynchronous answers, such as a Publish that times out in its queue, count in
  // the transport's fault table only).
  std::array<StatCounter, kMaxServices> requests{};
  std::array<StatCounter, kMaxServices> faults{};
  StatCounter busy_ns{0};  // time spent in handlers: this shard's load
  // Sessions (Part 5 §12.9 ServerDiagnosticsSummaryDataType).
  StatCounter sessions_created{0};            // CumulatedSessionCount
  StatCounter sessions_rejected{0};           // RejectedSessionCount (security ones included)
  StatCounter sessions_security_rejected{0};  // SecurityRejectedSessionCount
  StatCounter sessions_timed_out{0};          // SessionTimeoutCount
  StatCounter sessions_aborted{0};            // SessionAbortCount
  StatCounter sessions_closed{0};             // CloseSession
  StatCounter failed_logins{0};               // user name and password refused
  StatCounter subscriptions_created{0};       // CumulatedSubscriptionCount
  StatCounter events_queued{0};               // events queued for event items (each item counts)
  StatCounter event_queue_overflows{0};       // EventQueueOverflow events queued
  RequestLatency request_latency;
  PublishLatency publish_latency;
};

// Every shard's ServiceStats summed (Server::totals()), with the server-wide counts beside them.
template <class H>
struct HistogramTotals {
  std::array<uint64_t, H::kBuckets + 1> counts{};
  uint64_t sum_ns = 0;
  void add(const H& h) noexcept {
    for (size_t b = 0; b < counts.size(); ++b) counts[b] += stat_get(h.counts[b]);
    sum_ns += stat_get(h.sum_ns);
  }
  uint64_t count() const noexcept {
    uint64_t n = 0;
    for (uint64_t c : counts) n += c;
    return n;
  }
};

struct ServiceTotals {
  std::array<uint64_t, kMaxServices> requests{};
  std::array<uint64_t, kMaxServices> faults{};
  uint64_t busy_ns = 0;
  uint64_t sessions_created = 0;
  uint64_t sessions_rejected = 0;
  uint64_t sessions_security_rejected = 0;
  uint64_t sessions_timed_out = 0;
  uint64_t sessions_aborted = 0;
  uint64_t sessions_closed = 0;
  uint64_t failed_logins = 0;
  uint64_t subscriptions_created = 0;
  uint64_t monitored_items_created = 0;
  uint64_t events_queued = 0;
  uint64_t event_queue_overflows = 0;
  uint32_t current_sessions = 0;
  uint32_t current_subscriptions = 0;
  uint32_t current_monitored_items = 0;
  uint32_t publishing_intervals = 0;  // distinct publishing intervals of the live subscriptions
  HistogramTotals<RequestLatency> request_latency;
  HistogramTotals<PublishLatency> publish_latency;

  void add(const ServiceStats& s) noexcept {
    for (size_t i = 0; i < kMaxServices; ++i) {
      requests[i] += stat_get(s.requests[i]);
      faults[i] += stat_get(s.faults[i]);
    }
    busy_ns += stat_get(s.busy_ns);
    sessions_created += stat_get(s.sessions_created);
    sessions_rejected += stat_get(s.sessions_rejected);
    sessions_security_rejected += stat_get(s.sessions_security_rejected);
    sessions_timed_out += stat_get(s.sessions_timed_out);
    sessions_aborted += stat_get(s.sessions_aborted);
    sessions_closed += stat_get(s.sessions_closed);
    failed_logins += stat_get(s.failed_logins);
    subscriptions_created += stat_get(s.subscriptions_created);
    events_queued += stat_get(s.events_queued);
    event_queue_overflows += stat_get(s.event_queue_overflows);
    request_latency.add(s.request_latency);
    publish_latency.add(s.publish_latency);
  }
};

}  // namespace opcuad::services
