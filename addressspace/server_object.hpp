#pragma once
// Live values of the Server object (i=2253, Part 5 §6.3.1): ServerStatus and its children, the
// NamespaceArray and ServerArray, ServiceLevel, Auditing, ServerCapabilities with the real configured
// operation limits, ServerRedundancy and the ServerDiagnostics summary counters.
//
// install_server_object_values() writes them once after the store is built (control plane) and makes
// ServerStatus and ServerStatus.CurrentTime computed cells (value_store.hpp, ValueSource): they read as
// the clock at the moment of the Read or sample. The daemon publishes state changes with
// set_server_state() and counters with update_server_diagnostics().

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "addressspace/node_store.hpp"
#include "addressspace/node_store_builder.hpp"
#include "addressspace/value_store.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::addressspace {

struct OperationLimits {
  uint32_t max_nodes_per_read = 10000;
  uint32_t max_nodes_per_write = 10000;
  uint32_t max_nodes_per_method_call = 1000;
  uint32_t max_nodes_per_browse = 10000;
  uint32_t max_nodes_per_register_nodes = 10000;
  uint32_t max_nodes_per_translate_browse_paths = 10000;
  uint32_t max_nodes_per_node_management = 0;
  uint32_t max_monitored_items_per_call = 10000;
  uint32_t max_nodes_per_history_read_data = 0;
  uint32_t max_nodes_per_history_read_events = 0;
  uint32_t max_nodes_per_history_update_data = 0;
  uint32_t max_nodes_per_history_update_events = 0;
  friend bool operator==(const OperationLimits&, const OperationLimits&) = default;
};

inline constexpr const char* kMicroEmbeddedDevice2017Profile =
    "http://opcfoundation.org/UA-Profile/Server/MicroEmbeddedDevice2017";

struct ServerInfo {
  std::vector<std::string> namespace_uris;  // [0] is http://opcfoundation.org/UA/, [1] the server's URI
  std::vector<std::string> server_uris;     // ServerArray; [0] is the server's application URI
  ua::BuildInfo build_info;
  ua::DateTime start_time;
  uint8_t service_level = 255;
  std::vector<std::string> locale_ids{"en"};
  // ServerCapabilities.ServerProfileArray (Part 5 §6.3.2): only profiles the server fully implements.
  // Micro Embedded Device 2017 (Part 7 §6.6.67) is the Nano Embedded Device 2017 profile (the Core 2017
  // Server Facet: SecurityPolicy None, anonymous and user name tokens, Read, Browse, FindServers and
  // GetEndpoints, one session; plus UA-TCP UA-SC UA-Binary) with the Embedded DataChange Subscription
  // Server Facet and two parallel sessions. Larger profiles (Embedded UA 2017, Standard UA 2017) need
  // facets this server does not serve in full (events, methods of the Server object), so they are not
  // claimed.
  std::vector<std::string> server_profiles{kMicroEmbeddedDevice2017Profile};
  // The ServerCapabilities the configuration's limits set (config::server_info() copies config::Limits,
  // whose initializers are the defaults; 0 here means "no limit" to a client).
  uint16_t max_browse_continuation_points = 0;
  uint32_t max_array_length = 0;
  uint32_t max_string_length = 0;
  uint32_t max_byte_string_length = 0;
  double min_supported_sample_rate = 0;  // ms; 0 = exception-based sampling supported
  uint32_t max_sessions = 0;
  uint32_t max_subscriptions = 0;
  uint32_t max_monitored_items = 0;
  // Part 5 §6.3.2 (0: no limit of its own).
  uint32_t max_subscriptions_per_session = 0;
  uint32_t max_monitored_items_per_subscription = 0;
  uint32_t max_monitored_items_queue_size = 0;
  OperationLimits operation_limits;
  bool diagnostics_enabled = false;  // ServerDiagnostics.EnabledFlag at start (Part 5 §6.3.3)
};

// REQUIRES: `store` contains namespace 0. Values whose node is absent are skipped.
void install_server_object_values(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                                  const ServerInfo& info);
// Server.NamespaceArray (Part 5 §6.3.1): a reload may append namespaces (a new node file's), never change
// the index of one in use.
void set_namespace_array(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                         const std::vector<std::string>& uris);
void set_server_state(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                      ua::ServerState state, uint32_t seconds_till_shutdown, const ua::LocalizedText& reason);
void update_server_diagnostics(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                               const ua::ServerDiagnosticsSummaryDataType& summary);

// The diagnostics arrays (Part 5 §8.2.10): SessionsDiagnosticsSummary.SessionDiagnosticsArray and
// .SessionSecurityDiagnosticsArray, ServerDiagnostics.SubscriptionDiagnosticsArray, every entry, all with
// one timestamp (readers see their part, services/diagnostics.hpp). Empty arrays are their value while
// diagnostics are off. Control plane (the daemon's control loop).
void update_diagnostic_arrays(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                              std::vector<ua::ExtensionObject> sessions,
                              std::vector<ua::ExtensionObject> security,
                              std::vector<ua::ExtensionObject> subscriptions);
// ServerDiagnostics.EnabledFlag as it reads now (a client with an administrative role may have written it).
bool diagnostics_enabled(const NodeStore& store);

// opcuad's own counters for load harnesses (config "diagnostics": {"counters": true};
// docs/CONFIGURATION.md): read-only UInt64 variables in namespace 1 (the server's namespace), components
// of the Object ns=1;s=Diagnostics, itself a component of Server.ServerDiagnostics (i=2274). They sit below
// ServerDiagnostics rather than the Server object, so a Browse of i=2253 returns the same references either
// way (the harness browses it).
enum class DiagnosticCounter : uint8_t {
  HeapAllocations,
  HeapBytesAllocated,
  RequestsReceived,
  MessagesSent,
  ChunksSent,
  WriteCalls,
  BytesSent,
  // Sampling jitter (services::Sampler::Lateness): item samples by timer, and those taken more than
  // 250 µs / 1 ms / 5 ms after their deadline.
  SampledItems,
  SampledLate250us,
  SampledLate1ms,
  SampledLate5ms,
};
inline constexpr size_t kCounterCount = 11;
inline constexpr const char* kCountersObjectId = "Diagnostics";  // ns=1;s=Diagnostics
// The string part of counter c's NodeId (ns=1;s=<this>), e.g. "Diagnostics.HeapAllocations".
const char* counter_node_id(DiagnosticCounter c);
using CounterValues = std::array<uint64_t, kCounterCount>;  // indexed by Counter

// Adds the Object and its variables (initial value 0). REQUIRES: namespace 0 was added to `b` before.
void add_counter_nodes(NodeStoreBuilder& b, double refresh_interval_ms);

// Writes every counter with one timestamp. Resolves the cells on first use; writes nothing (and returns
// false) when the store has no counter nodes. Scalars up to 8 bytes live inline in the cells, so a refresh
// does not allocate. Threads: the caller's participant; one writer thread (the daemon's control loop).
class CounterPublisher {
 public:
  bool publish(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
               const CounterValues& v, ua::DateTime now);

 private:
  const NodeStore* resolved_for_ = nullptr;
  std::array<ValueCell*, kCounterCount> cells_{};
};

}  // namespace opcuad::addressspace
