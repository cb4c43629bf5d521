#pragma once
// The daemon's figures for operators: one Prometheus text exposition (format 0.0.4) for the HTTP
// /metrics endpoint, and the ServerDiagnosticsSummary (Part 5 §12.9) the control loop publishes once a
// second. Both are sums, taken at read time, of the per-shard counter blocks (transport::TransportStats,
// services::ServiceStats), so the request path pays nothing for them beyond its own relaxed stores.
// Every series is listed in docs/METRICS.md.
//
// Threads: any thread may call these (the blocks are relaxed atomics; ShardPool's and Server's shard
// lists do not change once the daemon runs).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "daemon/http_server.hpp"
#include "services/server.hpp"
#include "transport/shard_pool.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::metrics {

// What the daemon itself counts (the control loop writes, anyone reads).
struct DaemonCounters {
  std::atomic<uint64_t> reloads{0};          // SIGHUP reloads that took effect
  std::atomic<uint64_t> reload_failures{0};  // SIGHUP reloads refused (the running configuration kept)
};

struct Sources {
  const transport::ShardPool& shards;
  const services::Server& services;
  const DaemonCounters& daemon;
  std::chrono::system_clock::time_point started;  // opcuad_start_time_seconds
  std::string_view version;                       // opcuad_build_info{version=...}
  // opcuad_certificate_expiry_timestamp_seconds: the own certificate's notAfter (it changes only with a
  // restart, after `opcuad pki regenerate`).
  std::chrono::system_clock::time_point certificate_not_after{};
};

// The Prometheus text exposition of every opcuad_* series.
std::string render_prometheus(const Sources& s);

// The HTTP endpoint's routes: /metrics (the exposition), /healthz (200 when every shard's loop turned
// within `health_max_age`, else 503 naming the stalest shard's age), anything else 404.
HttpServer::Handler http_routes(const Sources& s, std::chrono::milliseconds health_max_age);

// ServerDiagnosticsSummary from the same counters (UInt32 fields saturate at their maximum).
ua::ServerDiagnosticsSummaryDataType diagnostics_summary(const transport::ShardPool& shards,
                                                         const services::Server& services);
ua::ServerDiagnosticsSummaryDataType diagnostics_summary(const transport::TransportTotals& transport,
                                                         const services::ServiceTotals& services);

}  // namespace opcuad::metrics
