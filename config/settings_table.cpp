#include "config/settings_table.hpp"

#include <cmath>
#include <sstream>

namespace opcuad::config {

namespace {

constexpr double kU32 = std::numeric_limits<uint32_t>::max();
// Durations in milliseconds held as double: up to about 24.8 days, what a steady-clock timer takes in
// an int32 of milliseconds everywhere the value goes.
constexpr double kMaxMs = std::numeric_limits<int32_t>::max();

using L = Limits;
const Setting<L> kLimits[] = {
    {"max_sessions", &L::max_sessions},
    {"max_subscriptions", &L::max_subscriptions},
    {"max_monitored_items", &L::max_monitored_items},
    {"max_message_size", &L::max_message_size},
    {"max_chunk_count", &L::max_chunk_count},
    {"max_array_length", &L::max_array_length},
    {"max_string_length", &L::max_string_length},
    {"max_byte_string_length", &L::max_byte_string_length},
    {"max_browse_continuation_points", &L::max_browse_continuation_points, 0, 65535},
    {"min_sampling_interval_ms", &L::min_sampling_interval_ms, 0, kMaxMs},
    {"min_session_timeout_ms", &L::min_session_timeout_ms, 1, kMaxMs},
    {"max_session_timeout_ms", &L::max_session_timeout_ms, 1, kMaxMs},
    {"max_subscriptions_per_session", &L::max_subscriptions_per_session},
    {"max_monitored_items_per_subscription", &L::max_monitored_items_per_subscription},
    {"max_monitored_items_per_session", &L::max_monitored_items_per_session},
    // A queue of more than 65535 values per item is a memory bound no client needs.
    {"max_monitored_item_queue_size", &L::max_monitored_item_queue_size, 1, 65535},
    {"max_event_queue_size", &L::max_event_queue_size, 1, 65535},
    {"default_event_queue_size", &L::default_event_queue_size, 1, 65535},
    {"max_publish_requests_per_session", &L::max_publish_requests_per_session, 1, kU32},
    {"max_subscriptions_per_call", &L::max_subscriptions_per_call},
    // Below one 64 KiB chunk a Publish response would save no memory, only split values.
    {"max_publish_response_size", &L::max_publish_response_size, 65536, kU32},
    {"parked_session_lifetime_ms", &L::parked_session_lifetime_ms, 0, kMaxMs},
    {"max_parked_sessions", &L::max_parked_sessions},
    {"max_references_per_node", &L::max_references_per_node, 1, kU32},
    {"max_references_per_browse", &L::max_references_per_browse, 1, kU32},
    // Part 4 §5.8.4.4: a server should allow at least 10 matches before answering Bad_TooManyMatches.
    {"max_translate_matches", &L::max_translate_matches, 10, kU32, "(Part 4 §5.8.4.4)"},
    {"max_translate_references", &L::max_translate_references, 1, kU32},
    // Below 1 MiB even a Read of the operation limit's nodes would not decode.
    {"max_decoded_request_bytes", &L::max_decoded_request_bytes, 1 << 20, kU32},
    {"max_unactivated_sessions", &L::max_unactivated_sessions},
    {"max_unactivated_sessions_per_address", &L::max_unactivated_sessions_per_address},
    {"unactivated_session_timeout_ms", &L::unactivated_session_timeout_ms, 1, kMaxMs},
    {"max_waiting_sessions", &L::max_waiting_sessions},
    {"max_waiting_sessions_per_address", &L::max_waiting_sessions_per_address},
    {"max_session_wait_ms", &L::max_session_wait_ms, 0, 3600000},
    {"max_queued_logins", &L::max_queued_logins, 1, kU32},
    {"max_failed_logins_per_address", &L::max_failed_logins_per_address},
    {"failed_login_window_ms", &L::failed_login_window_ms, 0, kMaxMs},
};

using O = addressspace::OperationLimits;
const Setting<O> kOperations[] = {
    {"max_nodes_per_read", &O::max_nodes_per_read},
    {"max_nodes_per_write", &O::max_nodes_per_write},
    {"max_nodes_per_method_call", &O::max_nodes_per_method_call},
    {"max_nodes_per_browse", &O::max_nodes_per_browse},
    {"max_nodes_per_register_nodes", &O::max_nodes_per_register_nodes},
    {"max_nodes_per_translate_browse_paths", &O::max_nodes_per_translate_browse_paths},
    {"max_monitored_items_per_call", &O::max_monitored_items_per_call},
};

using C = Connections;
const Setting<C> kConnections[] = {
    {"max_connections", &C::max_connections},
    {"max_connections_per_address", &C::max_connections_per_address},
    // A timeout of 0 would close every connection at the first tick: at least one millisecond.
    {"hello_timeout_ms", &C::hello_timeout_ms, 1, kU32},
    {"open_timeout_ms", &C::open_timeout_ms, 1, kU32},
    {"session_activation_timeout_ms", &C::session_activation_timeout_ms, 1, kU32},
    {"max_message_size_before_session", &C::max_message_size_before_session},
    {"handshake_threads", &C::handshake_threads, 0, 256},
    {"max_queued_handshakes", &C::max_queued_handshakes, 1, 1000000},
};

using S = Security;
const Setting<S> kSecurity[] = {
    {"allow_anonymous", &S::allow_anonymous},
    {"allow_plaintext_passwords", &S::allow_plaintext_passwords},
    {"allow_deprecated_policies", &S::allow_deprecated_policies},
    {"anonymous_write", &S::anonymous_write},
};

using P = PkiConfig;
const Setting<P> kPki[] = {
    {"certificate_key_bits", &P::key_bits, 2048, 4096},  // and a multiple of 1024 (config/loader.cpp)
    {"certificate_lifetime_days", &P::lifetime_days, 1, 7300},
    {"trust_on_first_use", &P::trust_on_first_use},
    {"max_rejected_certificates", &P::max_rejected_certificates, 0, 100000},
};

const Setting<Logging> kLogging[] = {
    {"rate_limit_burst", &Logging::rate_limit_burst, 0, kMaxRateLimitBurst},
    {"rate_limit_window_s", &Logging::rate_limit_window_s, 1, kMaxRateLimitWindowS},
};

const Setting<Shutdown> kShutdown[] = {
    {"grace_period_s", &Shutdown::grace_period_s, 0, kMaxGracePeriodS},
};

const Setting<Scheduling> kScheduling[] = {
    {"pin_shards", &Scheduling::pin_shards},
    {"realtime_priority", &Scheduling::realtime_priority, 0, 99},  // SCHED_FIFO's range
};

const Setting<Diagnostics> kDiagnostics[] = {
    {"counters", &Diagnostics::counters},
    {"enabled", &Diagnostics::enabled},
};

// Each bound at least 1: a zero would refuse every scrape.
const Setting<Audit> kAudit[] = {
    {"enabled", &Audit::enabled},
};

const Setting<Http> kHttp[] = {
    {"max_connections", &Http::max_connections, 1, kU32},
    {"max_request_bytes", &Http::max_request_bytes, 1, kU32},
    {"request_timeout_ms", &Http::request_timeout_ms, 1, kU32},
    {"health_max_age_ms", &Http::health_max_age_ms, 1, kU32},
};

const Setting<ServerConfig> kTop[] = {
    {"threads", &ServerConfig::threads},  // 0: one shard per core
};

}  // namespace

namespace {
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::string range_message(double min, double max, const char* why) {
  std::string out = "out of range: must be between " + number_text(min) + " and " + number_text(max);
  if (*why) out += std::string(" ") + why;
  return out;
}

#define OPCUAD_TABLE(FN, TYPE, SECTION, ARRAY)          \
  const SettingsTable<TYPE>& FN() {                     \
    static const SettingsTable<TYPE> t{SECTION, ARRAY}; \
    return t;                                           \
  }
OPCUAD_TABLE(top_level_settings, ServerConfig, "", kTop)
OPCUAD_TABLE(limit_settings, Limits, "limits", kLimits)
OPCUAD_TABLE(operation_limit_settings, addressspace::OperationLimits, "limits", kOperations)
OPCUAD_TABLE(connection_settings, Connections, "connections", kConnections)
OPCUAD_TABLE(security_settings, Security, "security", kSecurity)
OPCUAD_TABLE(pki_settings_table, PkiConfig, "security", kPki)
OPCUAD_TABLE(logging_settings, Logging, "logging", kLogging)
OPCUAD_TABLE(shutdown_settings, Shutdown, "shutdown", kShutdown)
OPCUAD_TABLE(scheduling_settings, Scheduling, "scheduling", kScheduling)
OPCUAD_TABLE(diagnostics_settings, Diagnostics, "diagnostics", kDiagnostics)
OPCUAD_TABLE(http_settings, Http, "http", kHttp)
OPCUAD_TABLE(audit_settings, Audit, "audit", kAudit)
#undef OPCUAD_TABLE

}  // namespace opcuad::config
