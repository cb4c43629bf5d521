#include "daemon/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace opcuad::metrics {

namespace {

using transport::TransportTotals;

TransportTotals sum_transport(const transport::ShardPool& pool) {
  TransportTotals t;
  for (size_t i = 0; i < pool.size(); ++i) t.add(pool.shard(i).stats());
  return t;
}

uint32_t saturate(uint64_t v) {
  return static_cast<uint32_t>(std::min<uint64_t>(v, std::numeric_limits<uint32_t>::max()));
}

// A sample value as the text format writes it (Go's ParseFloat syntax: +Inf, -Inf, NaN).
std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}
std::string value_text(uint64_t v) {
  return fmt::format("{}", v);
}
std::string value_text(uint32_t v) {
  return fmt::format("{}", v);
}
std::string value_text(int v) {
  return fmt::format("{}", v);
}

// Prometheus text format 0.0.4: a HELP and a TYPE line per family, then its samples; label values
// escaped (backslash, double quote, newline).
class Exposition {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  template <class V>
  void sample(std::string_view name, V value) {
    fmt::format_to(std::back_inserter(out_), "{} {}\n", name, value_text(value));
  }
  template <class V>
  void sample(std::string_view name, std::string_view label, std::string_view label_value, V value) {
    fmt::format_to(std::back_inserter(out_), "{}{{{}=\"{}\"}} {}\n", name, label, escape(label_value),
                   value_text(value));
  }
  // A counter family with one sample.
  void counter(std::string_view name, std::string_view help, uint64_t value) {
    family(name, "counter", help);
    sample(name, value);
  }
  void gauge(std::string_view name, std::string_view help, double value) {
    family(name, "gauge", help);
    sample(name, value);
  }
  template <class H>
  void histogram(std::string_view name, std::string_view help, const services::HistogramTotals<H>& h) {
    family(name, "histogram", help);
    uint64_t cumulative = 0;
    for (size_t b = 0; b < H::kBuckets; ++b) {
      cumulative += h.counts[b];
      // The bound as one quotient, rounded once: 1e-06 rather than 1.0000000000000002e-06.
      fmt::format_to(std::back_inserter(out_), "{}_bucket{{le=\"{}\"}} {}\n", name,
                     value_text(static_cast<double>(H::kBaseNs << b) / 1e9), cumulative);
    }
    cumulative += h.counts[H::kBuckets];
    fmt::format_to(std::back_inserter(out_), "{}_bucket{{le=\"+Inf\"}} {}\n", name, cumulative);
    fmt::format_to(std::back_inserter(out_), "{}_sum {}\n", name,
                   value_text(static_cast<double>(h.sum_ns) * 1e-9));
    fmt::format_to(std::back_inserter(out_), "{}_count {}\n", name, cumulative);
  }
  std::string take() { return std::move(out_); }

 private:
  static std::string escape(std::string_view v) {
    std::string e;
    for (char c : v) {
      if (c == '\\')
        e += "\\\\";
      else if (c == '"')
        e += "\\\"";
      else if (c == '\n')
        e += "\\n";
      else
        e += c;
    }
    return e;
  }
  std::string out_;
};

}  // namespace

HttpServer::Handler http_routes(const Sources& s, std::chrono::milliseconds health_max_age) {
  return [s, health_max_age](std::string_view path) -> HttpServer::Response {
    if (path == "/metrics") return {200, "text/plain; version=0.0.4; charset=utf-8", render_prometheus(s)};
    if (path == "/healthz") {
      const auto oldest = s.shards.oldest_heartbeat();
      if (oldest <= health_max_age) return {200, "text/plain; charset=utf-8", "ok\n"};
      const auto ms =
          oldest == std::chrono::steady_clock::duration::max()
              ? std::string("never")
              : std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(oldest).count()) +
                    " ms ago";
      return {503, "text/plain; charset=utf-8", "a shard's event loop last turned " + ms + "\n"};
    }
    return {404, "text/plain; charset=utf-8", "Not Found\n"};
  };
}

ua::ServerDiagnosticsSummaryDataType diagnostics_summary(const transport::ShardPool& shards,
                                                         const services::Server& services) {
  return diagnostics_summary(sum_transport(shards), services.totals());
}

ua::ServerDiagnosticsSummaryDataType diagnostics_summary(const transport::TransportTotals& t,
                                                         const services::ServiceTotals& s) {
  ua::ServerDiagnosticsSummaryDataType d;
  d.server_view_count = 0;  // opcuad creates no Views
  d.current_session_count = s.current_sessions;
  d.cumulated_session_count = saturate(s.sessions_created);
  d.security_rejected_session_count = saturate(s.sessions_security_rejected);
  d.rejected_session_count = saturate(s.sessions_rejected);
  d.session_timeout_count = saturate(s.sessions_timed_out);
  d.session_abort_count = saturate(s.sessions_aborted);
  d.current_subscription_count = s.current_subscriptions;
  d.cumulated_subscription_count = saturate(s.subscriptions_created);
  d.publishing_interval_count = s.publishing_intervals;
  // Requests answered with a ServiceFault, and those of them refused for security reasons
  // (transport::is_security_fault).
  d.security_rejected_requests_count = saturate(t.security_faults);
  d.rejected_requests_count = saturate(t.service_faults);
  return d;
}

std::string render_prometheus(const Sources& src) {
  const TransportTotals t = sum_transport(src.shards);
  const services::ServiceTotals s = src.services.totals();
  Exposition x;

  x.family("opcuad_build_info", "gauge", "Always 1; the version is a label");
  x.sample("opcuad_build_info", "version", src.version, 1);
  x.gauge("opcuad_start_time_seconds", "When the daemon started, in seconds since the Unix epoch",
          std::chrono::duration<double>(src.started.time_since_epoch()).count());
  x.gauge(
      "opcuad_certificate_expiry_timestamp_seconds",
      "When the server's application instance certificate ends (notAfter), in seconds since the Unix epoch",
      std::chrono::duration<double>(src.certificate_not_after.time_since_epoch()).count());

  // Connections and secure channels.
  x.counter("opcuad_connections_accepted_total", "TCP connections accepted", t.accepted);
  x.family("opcuad_connections_refused_total", "counter",
           "TCP connections refused (ERR BadTcpNotEnoughResources), by reason");
  for (size_t k = 0; k < t.refused.size(); ++k) {
    x.sample("opcuad_connections_refused_total", "reason", transport::kRefuseReasonNames[k], t.refused[k]);
  }
  x.gauge("opcuad_connections", "TCP connections open now", src.shards.connection_count());
  x.family("opcuad_secure_channels_opened_total", "counter", "Secure channels opened, by security policy");
  for (size_t k = 0; k < t.opened.size(); ++k) {
    x.sample("opcuad_secure_channels_opened_total", "policy", transport::kSecurityPolicyNames[k],
             t.opened[k]);
  }
  x.family("opcuad_secure_channels", "gauge", "Secure channels open now, by security policy");
  for (size_t k = 0; k < t.opened.size(); ++k) {
    x.sample("opcuad_secure_channels", "policy", transport::kSecurityPolicyNames[k],
             t.opened[k] >= t.closed[k] ? t.opened[k] - t.closed[k] : 0);
  }
  x.counter("opcuad_error_messages_sent_total", "ERR messages sent (the connection closes after each)",
            t.errors_sent);
  x.counter("opcuad_received_bytes_total", "Bytes read from OPC UA connections", t.bytes_received);
  x.counter("opcuad_sent_bytes_total", "Bytes written to OPC UA connections", t.bytes_sent);
  x.counter("opcuad_messages_sent_total", "Complete messages sent", t.messages_sent);
  x.counter("opcuad_chunks_sent_total", "Message chunks sent", t.chunks_sent);
  x.counter("opcuad_write_calls_total", "Gathered socket writes issued", t.write_calls);
  x.counter("opcuad_certificate_rejections_total", "Client certificates refused", t.certificate_rejections);

  // Sessions, subscriptions, monitored items.
  x.gauge("opcuad_sessions", "Sessions that exist now (activated or not)", s.current_sessions);
  x.gauge("opcuad_sessions_unactivated", "Sessions created and not yet activated",
          src.services.unactivated_session_count());
  x.gauge("opcuad_sessions_waiting", "CreateSession requests waiting for an unactivated-session slot",
          src.services.waiting_session_count());
  x.counter("opcuad_sessions_created_total", "Sessions created (CumulatedSessionCount)", s.sessions_created);
  x.counter("opcuad_sessions_rejected_total",
            "CreateSession and ActivateSession requests refused (RejectedSessionCount)", s.sessions_rejected);
  x.counter("opcuad_sessions_security_rejected_total",
            "CreateSession and ActivateSession requests refused for security reasons "
            "(SecurityRejectedSessionCount)",
            s.sessions_security_rejected);
  x.counter("opcuad_sessions_timed_out_total", "Sessions ended by their timeout (SessionTimeoutCount)",
            s.sessions_timed_out);
  x.counter("opcuad_sessions_aborted_total", "Sessions ended by the server (SessionAbortCount)",
            s.sessions_aborted);
  x.counter("opcuad_sessions_closed_total", "Sessions ended by CloseSession", s.sessions_closed);
  x.counter("opcuad_failed_logins_total", "User name logins refused", s.failed_logins);
  x.gauge("opcuad_subscriptions", "Subscriptions that exist now", s.current_subscriptions);
  x.gauge("opcuad_publishing_intervals",
          "Distinct publishing intervals of the subscriptions (PublishingIntervalCount)",
          s.publishing_intervals);
  x.counter("opcuad_subscriptions_created_total", "Subscriptions created (CumulatedSubscriptionCount)",
            s.subscriptions_created);
  x.gauge("opcuad_monitored_items", "Monitored items that exist now", s.current_monitored_items);
  x.counter("opcuad_monitored_items_created_total", "Monitored items created", s.monitored_items_created);

  // Events (Part 4 §5.12.1).
  x.counter("opcuad_events_queued_total", "Events queued for event monitored items (one per item reached)",
            s.events_queued);
  x.counter("opcuad_event_queue_overflows_total",
            "EventQueueOverflow events queued for event items whose queue was full", s.event_queue_overflows);
  x.family("opcuad_events_dropped_total", "counter",
           "Events a shard did not deliver: its inbox was full, or the event was raised against an address "
           "space a reload had replaced");
  x.sample("opcuad_events_dropped_total", "reason", "inbox_full", src.services.events_dropped_full());
  x.sample("opcuad_events_dropped_total", "reason", "reloaded", src.services.events_dropped_stale());

  // Requests.
  x.counter("opcuad_requests_received_total", "Service requests received, every service", t.requests);
  x.family("opcuad_requests_total", "counter", "Service requests handled, by service");
  for (size_t i = 0; i < services::Server::service_count(); ++i) {
    x.sample("opcuad_requests_total", "service", services::Server::service_name(i), s.requests[i]);
  }
  x.family("opcuad_request_faults_total", "counter",
           "Service requests answered with a ServiceFault by their handler, by service");
  for (size_t i = 0; i < services::Server::service_count(); ++i) {
    x.sample("opcuad_request_faults_total", "service", services::Server::service_name(i), s.faults[i]);
  }
  x.family("opcuad_service_faults_total", "counter",
           "ServiceFaults sent, by status code (others: \"other\")");
  for (size_t k = 0; k < t.faults.size(); ++k) {
    const std::string_view status = k < transport::kCountedFaults.size() ? transport::kCountedFaults[k].name()
                                                                         : std::string_view("other");
    x.sample("opcuad_service_faults_total", "status", status, t.faults[k]);
  }
  x.counter("opcuad_security_rejected_requests_total",
            "ServiceFaults for security reasons (SecurityRejectedRequestsCount)", t.security_faults);
  x.histogram("opcuad_request_duration_seconds", "Time a request spent in its handler on the shard",
              s.request_latency);
  x.histogram("opcuad_publish_wait_seconds",
              "Time a Publish request waited from its arrival until it was answered", s.publish_latency);

  // Sampling.
  const auto late = src.services.sampling_lateness();
  x.counter("opcuad_sampling_samples_total", "Monitored item samples taken by the sampling timers", late[0]);
  x.family("opcuad_sampling_late_samples_total", "counter",
           "Samples taken later than their deadline by more than over_seconds");
  x.sample("opcuad_sampling_late_samples_total", "over_seconds", "0.00025", late[1]);
  x.sample("opcuad_sampling_late_samples_total", "over_seconds", "0.001", late[2]);
  x.sample("opcuad_sampling_late_samples_total", "over_seconds", "0.005", late[3]);

  // Shards.
  const auto now = std::chrono::steady_clock::now();
  x.family("opcuad_shard_requests_total", "counter", "Service requests handled, by shard");
  for (size_t i = 0; i < src.services.shard_count(); ++i) {
    uint64_t n = 0;
    for (const auto& c : src.services.shard_state(i).stats.requests) n += services::stat_get(c);
    x.sample("opcuad_shard_requests_total", "shard", std::to_string(i), n);
  }
  x.family("opcuad_shard_busy_seconds_total", "counter", "Time the shard spent in request handlers");
  for (size_t i = 0; i < src.services.shard_count(); ++i) {
    x.sample("opcuad_shard_busy_seconds_total", "shard", std::to_string(i),
             static_cast<double>(services::stat_get(src.services.shard_state(i).stats.busy_ns)) * 1e-9);
  }
  x.family("opcuad_shard_connections", "gauge", "TCP connections open now, by shard");
  for (size_t i = 0; i < src.shards.size(); ++i) {
    x.sample("opcuad_shard_connections", "shard", std::to_string(i), src.shards.shard(i).load_count());
  }
  x.family("opcuad_shard_heartbeat_age_seconds", "gauge", "Time since the shard's event loop last turned");
  for (size_t i = 0; i < src.shards.size(); ++i) {
    const auto age = src.shards.shard(i).heartbeat().age(now);
    const double seconds = age == std::chrono::steady_clock::duration::max()
                               ? std::numeric_limits<double>::infinity()
                               : std::chrono::duration<double>(age).count();
    x.sample("opcuad_shard_heartbeat_age_seconds", "shard", std::to_string(i), seconds);
  }

  // The daemon.
  x.counter("opcuad_reloads_total", "Configuration reloads (SIGHUP) that took effect",
            src.daemon.reloads.load(std::memory_order_relaxed));
  x.counter("opcuad_reload_failures_total",
            "Configuration reloads refused; the running configuration kept serving",
            src.daemon.reload_failures.load(std::memory_order_relaxed));
  return x.take();
}

}  // namespace opcuad::metrics
