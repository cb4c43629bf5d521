#pragma once
// The validated configuration: what the JSON server file and node files say, as plain structs.
//
// load_config() reads the server file, expands its node-file globs, parses every node file and checks
// everything it can before the daemon touches a socket: unknown keys, wrong JSON types, unknown
// namespaces, DataTypes and type definitions, duplicate NodeIds, dangling parents, initial values that
// do not fit their DataType. Every problem is collected (file, JSON pointer, reason); the daemon refuses
// to start when there is any. docs/CONFIGURATION.md describes the format; config/opcuad.schema.json is
// its JSON Schema.

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "addressspace/node_store_builder.hpp"
#include "addressspace/server_object.hpp"
#include "config/roles.hpp"
#include "transport/security/policy.hpp"
#include "ua/generated/types.hpp"
#include "ua/node_id.hpp"
#include "ua/variant.hpp"

namespace opcuad::config {

struct ConfigError {
  std::string file;  // "<default>" for the built-in configuration
  std::string path;  // JSON pointer, e.g. /nodes/0/children/3/value
  std::string reason;
  std::string to_string() const { return file + ": " + (path.empty() ? "/" : path) + ": " + reason; }
  friend bool operator==(const ConfigError&, const ConfigError&) = default;
};

// MessageSecurityMode (Part 4 §7.20), with the values of ua::MessageSecurityMode.
enum class SecurityMode : uint8_t { None = 1, Sign = 2, SignAndEncrypt = 3 };

// One policy / mode pair an endpoint offers: one EndpointDescription each (Part 4 §7.14).
struct SecurityOffer {
  security::PolicyId policy = security::PolicyId::None;
  SecurityMode mode = SecurityMode::None;
  friend bool operator==(const SecurityOffer&, const SecurityOffer&) = default;
};

struct Endpoint {
  std::string url = "opc.tcp://0.0.0.0:4840";
  // As configured; `offers` is what they mean: every policy with every mode, where None pairs only with
  // None and a secure policy only with Sign / SignAndEncrypt (docs/CONFIGURATION.md, "endpoints").
  std::vector<std::string> security_policies{"None"};
  std::vector<std::string> security_modes{"None"};
  std::vector<SecurityOffer> offers{SecurityOffer{}};
  bool allow_anonymous = true;  // endpoints[].allow_anonymous, default security.allow_anonymous
  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

struct User {
  std::string name;
  std::string password_hash;  // pbkdf2-sha256$<iterations>$<salt>$<hash> (config/password.hpp); may be empty
  // The SHA-1 thumbprint of the user's X.509 certificate (X509IdentityToken, Part 4 §7.41.5); a user with
  // one logs in with that certificate, validated against the user trust list.
  std::optional<std::array<uint8_t, 20>> certificate_thumbprint;
  RoleSet roles = role::kAuthenticatedUser;  // AuthenticatedUser plus the configured ones
  friend bool operator==(const User&, const User&) = default;
};

// Server-wide security settings (docs/CONFIGURATION.md, "security").
struct Security {
  bool allow_anonymous = true;             // the default of endpoints[].allow_anonymous
  bool allow_plaintext_passwords = false;  // a UserName token policy None on None endpoints (insecure)
  bool allow_deprecated_policies = false;  // Basic128Rsa15, Basic256 (Part 7 deprecates them)
  bool anonymous_write = false;            // true: anonymous sessions may Write (warned at every start)
  friend bool operator==(const Security&, const Security&) = default;
};

struct Limits {
  uint32_t max_sessions = 1000;
  uint32_t max_subscriptions = 1000;
  uint32_t max_monitored_items = 100000;
  uint32_t max_message_size = 16 * 1024 * 1024;
  uint32_t max_chunk_count = 4096;
  uint32_t max_array_length = 65535;
  uint32_t max_string_length = 1 << 20;
  uint32_t max_byte_string_length = 1 << 20;
  uint16_t max_browse_continuation_points = 100;
  // CreateSession revises the requested session timeout into [min, max] (Part 4 §5.6.2).
  double min_session_timeout_ms = 10000;
  double max_session_timeout_ms = 3600000;
  double min_sampling_interval_ms = 0;
  // Subscriptions (Part 4 §5.12, §5.13; those with a ServerCapabilities property, Part 5 §6.3.2, are
  // published there). 0 for the two item limits: only max_monitored_items bounds them.
  uint32_t max_subscriptions_per_session = 100;       // BadTooManySubscriptions
  uint32_t max_monitored_items_per_subscription = 0;  // BadTooManyMonitoredItems
  uint32_t max_monitored_items_per_session = 0;       // BadTooManyMonitoredItems
  uint32_t max_monitored_item_queue_size = 1000;      // queueSize revised down to it; 1..65535
  // Event items (Part 4 §5.12.1.5): their queueSize is revised down to max_event_queue_size; 0 asks for
  // default_event_queue_size (at most the maximum). 1..65535 each.
  uint32_t max_event_queue_size = 1000;
  uint32_t default_event_queue_size = 100;
  uint32_t max_publish_requests_per_session = 32;  // BadTooManyPublishRequests for the oldest
  uint32_t max_subscriptions_per_call = 1000;      // ids per SetPublishingMode/Delete/Transfer
  // The largest PublishResponse body the server builds, whatever the client accepts (its
  // maxResponseMessageSize, MaxMessageSize and MaxChunkCount may only lower it): what does not fit waits
  // for the next message (MoreNotifications). It bounds the memory of one response: its encoding, its
  // chunks while they are sent, its copy kept for Republish (docs/SECURITY.md).
  uint32_t max_publish_response_size = 4u << 20;
  // Sessions closed with deleteSubscriptions FALSE (Part 4 §5.6.4) keep their subscriptions for a
  // TransferSubscriptions at most this long, and at most this many such sessions per shard.
  double parked_session_lifetime_ms = 300000;
  uint32_t max_parked_sessions = 100;
  addressspace::OperationLimits operations;
  // Work and memory one request may cost (docs/SECURITY.md lists each with the status a client gets).
  uint32_t max_references_per_node = 10000;        // per node and Browse page; the rest: continuation point
  uint32_t max_references_per_browse = 100000;     // per Browse / BrowseNext response, over all its nodes
  uint32_t max_translate_matches = 1000;           // targets per browse path (BadTooManyMatches)
  uint32_t max_translate_references = 1000000;     // references one Translate request examines
  uint32_t max_decoded_request_bytes = 32u << 20;  // decoded form of one request (BadEncodingLimitsExceeded)
  // Sessions before their first ActivateSession (BadTooManySessions beyond these), and how long one may
  // wait for it.
  uint32_t max_unactivated_sessions = 64;
  uint32_t max_unactivated_sessions_per_address = 16;
  double unactivated_session_timeout_ms = 10000;
  // A CreateSession beyond those two waits for a slot (the oldest waiter first) at most max_session_wait_ms
  // and its request's timeoutHint; at most this many wait per address and in total (0 for either: none
  // waits). Beyond any of these: BadTooManySessions.
  uint32_t max_waiting_sessions = 1024;
  uint32_t max_waiting_sessions_per_address = 256;
  double max_session_wait_ms = 10000;
  // User-name logins (checked off the shard threads): checks waiting at most (BadServerTooBusy), and
  // failed logins per client address within the window before that address is refused
  // (BadUserAccessDenied) until the window has passed.
  uint32_t max_queued_logins = 32;
  uint32_t max_failed_logins_per_address = 5;
  double failed_login_window_ms = 60000;
  friend bool operator==(const Limits&, const Limits&) = default;
};

// Connections and secure channels before a session exists (docs/CONFIGURATION.md, "connections"):
// what an unauthenticated client may hold. transport::TransportConfig applies them.
struct Connections {
  uint32_t max_connections = 10000;
  uint32_t max_connections_per_address = 256;        // 0: no limit
  uint32_t hello_timeout_ms = 10000;                 // connect -> HEL
  uint32_t open_timeout_ms = 10000;                  // HEL -> OPN
  uint32_t session_activation_timeout_ms = 30000;    // OPN -> a session activated on the channel
  uint32_t max_message_size_before_session = 65536;  // 0: limits.max_message_size
  // The RSA private-key work of handshakes runs on its own threads (docs/SECURITY.md): how many (0: half
  // the CPUs, at least one), and how many handshakes may wait for them (beyond: BadTcpNotEnoughResources).
  uint32_t handshake_threads = 0;
  uint32_t max_queued_handshakes = 256;
  friend bool operator==(const Connections&, const Connections&) = default;
};

// Server-internal counters for load harnesses (docs/CONFIGURATION.md, "diagnostics"). Off by default:
// counting heap allocations costs a little on every allocation.
struct Diagnostics {
  bool counters = false;  // the ns=1;s=Diagnostics.* UInt64 variables (addressspace/server_object.hpp)
  // The value Server.ServerDiagnostics.EnabledFlag starts with (Part 5 §6.3.3): while it is TRUE the daemon
  // refreshes the session and subscription diagnostics arrays once a second (services/diagnostics.hpp).
  // An administrator (config::role::kAdministrators) may switch it with a Write while the server runs.
  bool enabled = false;
  friend bool operator==(const Diagnostics&, const Diagnostics&) = default;
};
// Audit events (Part 4 §6.5; Part 5 §6.4.3-§6.4.27): sessions created, activated and closed, logins
// refused, writes and method calls, as events from the Server object that only sessions with an
// administrative role (config::role::kAdministrators: SecurityAdmin, ConfigureAdmin) receive.
struct Audit {
  bool enabled = false;
  friend bool operator==(const Audit&, const Audit&) = default;
};
// How often the daemon refreshes those counters (also their MinimumSamplingInterval).
inline constexpr double kCounterRefreshMs = 100;

// The HTTP endpoint for health checks and Prometheus metrics (docs/CONFIGURATION.md, "http";
// daemon/http_server.hpp). Absent from the server file: no endpoint. It is a network service too, so
// every request is bounded.
struct Http {
  std::string listen = "127.0.0.1:9464";  // host:port, [v6 address]:port; loopback unless written otherwise
  uint32_t max_connections = 4;           // concurrent connections; more get 503 at once
  uint32_t max_request_bytes = 8192;      // request line and headers; larger: 431
  uint32_t request_timeout_ms = 5000;     // from accept to the last byte of the answer
  uint32_t health_max_age_ms = 2000;      // /healthz is 503 when a shard's loop has not turned for this long
  friend bool operator==(const Http&, const Http&) = default;
};
// Splits "host:port" or "[v6]:port" (port 0..65535); false when it is neither.
bool split_listen_address(std::string_view text, std::string& host, uint16_t& port);

// How shard threads run (docs/CONFIGURATION.md, "scheduling"); transport::ShardScheduling applies it.
struct Scheduling {
  bool pin_shards = false;    // shard k on the k-th CPU the daemon may use
  int realtime_priority = 0;  // 1..99: SCHED_FIFO at this priority; 0: the normal scheduler
  friend bool operator==(const Scheduling&, const Scheduling&) = default;
};

// The PKI: own certificate and trust lists (docs/CONFIGURATION.md, "security"; docs/SECURITY.md,
// "Certificates and trust"). config::pki_settings() turns it into security::PkiSettings.
struct PkiConfig {
  // Resolved by the loader: security.pki_directory relative to the server file, else
  // $STATE_DIRECTORY/pki, else pki beside the server file (built-in configuration: the XDG state folder).
  std::filesystem::path directory;
  uint32_t key_bits = 2048;         // 2048..4096
  uint32_t lifetime_days = 1825;    // 1..7300
  bool trust_on_first_use = false;  // labs only; warned at every start
  uint32_t max_rejected_certificates = 100;
  // Added to the subjectAltName of a newly generated certificate, after the endpoints' host names and
  // addresses (gethostname() for a wildcard listening address).
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  friend bool operator==(const PkiConfig&, const PkiConfig&) = default;
};

struct Logging {
  std::string level = "info";  // trace, debug, info, warn, error
  std::string file;            // empty: standard error
  // Operator events (connections, sessions, failed logins): at most this many lines per event kind and
  // key (a client address, mostly) in each window, then one "suppressed" line. 0: no limit.
  uint32_t rate_limit_burst = 20;
  uint32_t rate_limit_window_s = 10;
  friend bool operator==(const Logging&, const Logging&) = default;
};
inline constexpr int64_t kMaxRateLimitBurst = 100000;
inline constexpr int64_t kMaxRateLimitWindowS = 3600;

// What SIGTERM/SIGINT does (docs/CONFIGURATION.md, "shutdown"): ServerStatus.State becomes Shutdown and
// SecondsTillShutdown counts down over the grace period before sessions and channels close (Part 5
// §12.10: the shutdown "should be delayed for a configurable time" so clients can disconnect in order).
struct Shutdown {
  uint32_t grace_period_s = 5;  // 0: close at once
  friend bool operator==(const Shutdown&, const Shutdown&) = default;
};
// Upper bound of shutdown.grace_period_s: well inside systemd's default stop timeout (90 s).
inline constexpr int64_t kMaxGracePeriodS = 60;

enum class SimulationKind : uint8_t { Counter, Ramp, Sine, Square, Random };

struct Simulation {
  SimulationKind kind = SimulationKind::Sine;
  double interval_ms = 1000;  // how often the timer updates the value
  double period_ms = 10000;   // ramp, sine, square
  double min = 0;
  double max = 100;
  double step = 1;  // counter
  friend bool operator==(const Simulation&, const Simulation&) = default;
};

// Method: only the copy of a method instance declaration of a NodeSet2 type (docs/CONFIGURATION.md,
// "Instances of imported types"); a node file cannot declare one.
enum class NodeKind : uint8_t { Folder, Object, Variable, Property, Method };

// What a node file's "members" says about one member of an instance of a NodeSet2 type, found by its
// browse path below the instance (docs/CONFIGURATION.md, "Instances of imported types"). Naming an
// Optional instance declaration creates it; the given settings replace the declaration's.
struct MemberSettings {
  std::string browse_path;  // BrowseNames joined by '/', as written
  std::string json_path;    // the JSON pointer of its settings object
  std::optional<ua::LocalizedText> display_name, description;
  std::optional<uint8_t> access_level;
  std::optional<RoleSet> read_roles, write_roles;
  std::optional<double> minimum_sampling_interval;
  std::optional<bool> historizing;
  std::optional<Simulation> simulation;
  std::string value_json;  // the "value" as JSON text, converted once the member's DataType is known
  friend bool operator==(const MemberSettings&, const MemberSettings&) = default;
};

// One node of a node file, resolved: ids, types and the initial value are final.
struct NodeDecl {
  NodeKind kind = NodeKind::Object;
  ua::NodeId node_id;
  ua::NodeId parent;
  ua::NodeId reference_type;  // HasComponent, Organizes (under folders) or HasProperty
  ua::QualifiedName browse_name;
  ua::LocalizedText display_name;
  ua::LocalizedText description;
  ua::NodeId type_definition;
  // Variables and properties
  ua::NodeId data_type;
  int32_t value_rank = -1;
  std::vector<uint32_t> array_dimensions;
  ua::Variant value;
  uint8_t access_level = 1;
  RoleSet read_roles = role::kEveryone;   // read_roles in the node file
  RoleSet write_roles = role::kEveryone;  // write_roles
  double minimum_sampling_interval = 0;
  bool historizing = false;
  std::optional<Simulation> simulation;
  // A member of an instance whose InstanceDeclaration has no Value (a NodeSet2 file's without <Value>):
  // while `value` stays empty it reads Bad_NoValue, as the declaration does (Part 6 §F.8).
  bool no_value = false;
  // Bulk: `count` nodes whose name, display name and derived id have {n} replaced by start .. start+count-1.
  uint32_t count = 0;
  uint32_t start = 0;
  std::string id_pattern;  // an explicit bulk NodeId with {n}, e.g. "ns=2;s=Sensor{n}"; else derived ids
  std::string type_name;   // a type definition named by a file's object_types, resolved by check_references()
  // A type definition written as a NodeId or "<namespace URI>:<BrowseName>", resolved by check_references()
  // once every file is read (it may name a type of a NodeSet2 file); empty when resolved at parse time.
  std::string type_ref;
  std::vector<MemberSettings> members;  // "members": only for instances of a NodeSet2 type
  // A DataType written as a NodeId outside namespace 0 or "<namespace URI>:<BrowseName>" (a NodeSet2
  // file's), resolved like type_ref; the "value" waits in value_json, as JSON text, until then.
  std::string data_type_ref;
  std::string value_json;
  std::string file;  // where it was declared, for messages
  std::string path;
  bool is_type = false;  // an ObjectType declared by the file (kind is Object)
  bool is_abstract = false;
  // Object: EventNotifier SubscribeToEvents (Part 3 §5.5.1), from "event_notifier" or because it is the
  // notifier of an alarm's input (config/alarms.cpp).
  bool event_notifier = false;
};

// The alarm types a node file can declare (docs/CONFIGURATION.md, "Alarms"; Part 9 §5.8).
enum class AlarmKind : uint8_t {
  ExclusiveLimit,     // ExclusiveLimitAlarmType (Part 9 §5.8.19.3)
  NonExclusiveLimit,  // NonExclusiveLimitAlarmType (Part 9 §5.8.20)
  OffNormal,          // OffNormalAlarmType (Part 9 §5.8.24.2) with normal_value or normal_node
  Discrete,           // OffNormalAlarmType over a Boolean input whose normal value is FALSE
  Trip,               // TripAlarmType (Part 9 §5.8.24.4), likewise
  Deviation,          // ExclusiveDeviationAlarmType (Part 9 §5.8.22.3) with setpoint_node
};
// Limit order in AlarmDecl::limits and the severities: HighHigh, High, Low, LowLow.
inline constexpr size_t kAlarmLimitCount = 4;
// Bounds of an alarm's settings (docs/CONFIGURATION.md, "Alarms").
inline constexpr int64_t kMaxAlarmDelayMs = 3600000;  // on_delay_ms, off_delay_ms: one hour
inline constexpr size_t kMaxAlarmMessageBytes = 512;  // the message template
inline constexpr size_t kMaxAlarmNameBytes = 256;     // ConditionName

// One alarm of a node file: on a variable ("alarms") or in the file's top-level "alarms" list ("input").
// parse time fills the settings; expand_alarms() resolves the nodes and adds the condition's nodes.
struct AlarmDecl {
  std::string name;       // ConditionName, also the condition object's BrowseName
  ua::NodeId id;          // the condition's NodeId (derived from the input's when not written)
  bool id_given = false;  // "id" written
  ua::NodeId input;       // the input variable (InputNode) and ConditionSource
  AlarmKind kind = AlarmKind::ExclusiveLimit;
  std::array<std::optional<double>, kAlarmLimitCount> limits;  // limit and deviation alarms
  std::array<uint16_t, kAlarmLimitCount> limit_severity{900, 700, 700, 900};
  uint16_t severity = 500;  // the other kinds
  double deadband = 0;
  bool deadband_given = false;
  uint32_t on_delay_ms = 0, off_delay_ms = 0;
  bool on_delay_given = false, off_delay_given = false;
  std::string message;  // template: {name} {value} {limit} {state} (docs/CONFIGURATION.md, "Alarms")
  bool enabled = true;
  bool confirm = false;
  RoleSet ack_roles = role::kEveryone;  // who may Acknowledge / Confirm (and comment)
  std::string normal_value_json;        // off_normal: the value, as JSON text, converted at expansion
  ua::NodeId normal_node;               // off_normal: a variable holding the normal value
  ua::NodeId setpoint_node;             // deviation
  std::string event_type_ref;           // "event_type" as written; empty: the kind's type
  // Set by expand_alarms():
  ua::NodeId type;          // the condition's type (the kind's, or event_type)
  ua::NodeId normal_state;  // off_normal / discrete / trip: the node NormalState names
  bool expanded = false;
  std::string file;  // where it was declared, for messages
  std::string path;
};

// A reference between nodes of the node files, the NodeSet2 files or namespace 0 that is not a node
// declaration's link to its parent (the alarms' HasEventSource and HasNotifier, Part 9 §6.3).
struct ExtraReference {
  ua::NodeId source, type, target;  // forward: source --type--> target
  friend bool operator==(const ExtraReference&, const ExtraReference&) = default;
};

// What the NodeSet2 node files (`*.xml`, docs/CONFIGURATION.md "NodeSet2 node files") give the address
// space: their models, nodes and references with NodeIds in the server's namespace indexes, each with
// the file and line it came from.
struct ImportedModel {
  std::string uri;
  std::string version;
  ua::DateTime publication_date;
  uint32_t file = 0;  // index into ImportedModels::files
  uint32_t line = 0;  // of its <Model>
};
// A value kept out of line, one pointer while absent (copies copy the value): for the attributes few
// imported nodes have.
template <class T>
class OutOfLine {
 public:
  OutOfLine() = default;
  OutOfLine(const OutOfLine& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  OutOfLine(OutOfLine&&) noexcept = default;
  OutOfLine& operator=(const OutOfLine& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  OutOfLine& operator=(OutOfLine&&) noexcept = default;
  OutOfLine& operator=(T v) {
    p_ = std::make_unique<T>(std::move(v));
    return *this;
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  const T& operator*() const noexcept { return *p_; }
  T& operator*() noexcept { return *p_; }
  const T* operator->() const noexcept { return p_.get(); }
  T* operator->() noexcept { return p_.get(); }
  void reset() noexcept { p_.reset(); }

 private:
  std::unique_ptr<T> p_;
};

// An imported node's attributes (Part 3 §5), those of addressspace::NodeSpec that a NodeSet2 file can
// give, in some 500 bytes instead of a NodeSpec's 800: the attributes few nodes have (Description,
// InverseName, ArrayDimensions, DataTypeDefinition) are kept out of line, and the NodeSpec is made only
// when the node is added to a NodeStoreBuilder (to_node_spec). Fields as NodeSpec's.
struct ImportedSpec {
  ua::NodeId node_id;
  ua::QualifiedName browse_name;
  ua::LocalizedText display_name;
  OutOfLine<ua::LocalizedText> description;   // absent: the null LocalizedText
  OutOfLine<ua::LocalizedText> inverse_name;  // ReferenceType; absent: the null LocalizedText
  // Variable, VariableType
  ua::NodeId data_type = ua::NodeId(0, ua::id::BaseDataType);
  OutOfLine<std::vector<uint32_t>> array_dimensions;  // absent: none
  std::optional<ua::DataValue> value;                 // initial Value
  OutOfLine<ua::ExtensionObject> definition;          // DataType
  double minimum_sampling_interval = 0;
  uint32_t write_mask = 0;
  uint32_t access_level_ex = 0;
  int32_t value_rank = -2;
  addressspace::NodeClass node_class = addressspace::NodeClass::Object;
  uint8_t event_notifier = 0;  // Object, View
  uint8_t access_level = addressspace::access::kCurrentRead;
  uint8_t user_access_level = addressspace::access::kCurrentRead;
  bool contains_no_loops = false;  // View
  bool is_abstract = false;        // types
  bool symmetric = false;          // ReferenceType
  bool executable = true;          // Method
  bool user_executable = true;     // Method
  bool historizing = false;
  bool no_value = false;  // a Variable without <Value>: reads Bad_NoValue (NodeSpec::no_value)

  // array_dimensions, or an empty list when it is absent.
  const std::vector<uint32_t>& dimensions() const;
  // Sets every field of `into` (a NodeSpec reused from node to node keeps its strings' room).
  void to_node_spec(addressspace::NodeSpec& into) const;
};
struct ImportedNode {
  ImportedSpec spec;
  uint32_t file = 0;
  uint32_t line = 0;
};
// A reference, forward: source --type--> target. Its NodeIds are indexes into ImportedModels::ids (read
// them with ImportedModels::id()): a node has some four references, and three NodeIds each would cost a
// 1,000,000-node model more memory than its nodes (docs/PERFORMANCE.md, "Loading companion
// specifications").
struct ImportedReference {
  uint32_t source = 0, type = 0, target = 0;
  uint32_t file = 0;
  uint32_t line = 0;
};
// A reference the steps of resolve_nodesets() create, with its NodeIds, until ImportedModels interns them.
struct CreatedReference {
  ua::NodeId source, type, target;  // forward: source --type--> target
  uint32_t file = 0;
  uint32_t line = 0;
};
// An ExtensionObject value whose TypeId is no encoding of a structure with a resolved definition (the
// values of the structures the loaded models define are encoded to their Default Binary body): served as
// the file wrote it, an ExtensionObject with an XmlElement body (Part 6 §5.2.2.15) whose TypeId is the
// server's NodeId of the file's encoding node. Listed so that nothing is kept undecoded unseen.
struct UndecodedValue {
  ua::NodeId node;      // the Variable or VariableType
  ua::NodeId encoding;  // the ExtensionObject's TypeId
  uint32_t file = 0;
  uint32_t line = 0;
};
// The <Definition> of a DataType a NodeSet2 file defines (Part 6 Annex F, DataTypeDefinition), its
// fields' DataTypes in the server's NodeIds; resolve_nodesets() turns it into the DataType node's
// DataTypeDefinition attribute (Part 3 §5.8.3, NodeSpec::definition): a StructureDefinition with the
// supertypes' fields first (Part 3 §8.48), or an EnumDefinition for an enumeration or an OptionSet.
struct ImportedDefinition {
  struct Field {
    ua::StructureField
        field;  // Name, Description, DataType, ValueRank, ArrayDimensions, MaxStringLength, IsOptional
    ua::LocalizedText display_name;
    int64_t value = 0;
    bool has_value = false;
    bool allow_subtypes = false;
    uint32_t line = 0;
  };
  ua::NodeId data_type;
  std::vector<Field> fields;  // as the file lists them: the type's own
  bool is_union = false;
  bool is_option_set = false;
  uint32_t file = 0;
  uint32_t line = 0;
};
struct ImportedModels {
  std::vector<std::string> files;     // in load order (RequiredModels first)
  std::vector<ImportedModel> models;  // in load order
  std::vector<ImportedNode> nodes;
  std::vector<ImportedReference> references;
  std::vector<UndecodedValue> undecoded;
  std::vector<ImportedDefinition> definitions;  // one per DataType with a <Definition>, in file order
  // The NodeIds of the references, each once, in the order first named.
  std::vector<ua::NodeId> ids;
  // Open addressing over `ids` for intern(), linear probing. A slot holds a numeric NodeId itself
  // (namespace and identifier) and any other's hash, so that most probes read no NodeId of `ids` (each
  // a cache miss in a table of a million).
  struct IdSlot {
    uint64_t key = 0;
    uint32_t index = 0;    // into ids, + 1; 0: a free slot
    uint32_t numeric = 0;  // 1: `key` is a numeric NodeId
  };
  std::vector<IdSlot> id_slots;

  std::string where(uint32_t file, uint32_t line) const {
    return files[file] + ": line " + std::to_string(line);
  }
  const ua::NodeId& id(uint32_t i) const { return ids[i]; }
  // The index of `id` in `ids`, added when it is not there yet.
  uint32_t intern(const ua::NodeId& id);
  // Appends the reference source --type--> target.
  void add_reference(const ua::NodeId& source, const ua::NodeId& type, const ua::NodeId& target,
                     uint32_t file, uint32_t line);
};

struct ServerConfig {
  std::string application_uri = "urn:opcuad:server";
  std::string product_uri = "https://github.com/opcuad/opcuad";
  std::string application_name = "opcuad";
  std::vector<Endpoint> endpoints{Endpoint{}};
  // The host name published in endpoint URLs in place of a wildcard listening address (0.0.0.0, [::]);
  // empty: the host the client dialled.
  std::string advertised_hostname;
  uint32_t threads = 0;  // 0: one shard per core
  Scheduling scheduling;
  Limits limits;
  Connections connections;
  Security security;
  PkiConfig pki;
  std::vector<User> users;
  Logging logging;
  Shutdown shutdown;
  Diagnostics diagnostics;
  Audit audit;
  // Where the alarm conditions' state is kept across restarts (docs/OPERATIONS.md, "Alarm state"): not a
  // setting; conditions.state in $STATE_DIRECTORY, else beside the server file (the built-in configuration:
  // in $XDG_STATE_HOME/opcuad, ~/.local/state/opcuad, else the working directory).
  std::filesystem::path condition_state_file;
  std::optional<Http> http;
  std::vector<std::string> namespaces;  // the NamespaceArray: [0] ns0, [1] application_uri, then the rest
  std::vector<std::string> node_file_patterns;
  std::vector<std::filesystem::path> node_files;  // what the patterns matched, sorted
  std::vector<NodeDecl> nodes;                    // in declaration order (parents before children)
  ImportedModels imported;                        // from the NodeSet2 node files
  std::vector<AlarmDecl> alarms;                  // the node files' alarms (conditions in `nodes`)
  std::vector<ExtraReference> references;         // added by the alarms
  std::vector<ua::NodeId> imported_notifiers;     // NodeSet2 objects an alarm makes notifiers
};

struct NodeSetDocument;  // a parsed NodeSet2 file waiting for its models' load order (nodeset_file.cpp)

struct LoadResult {
  ServerConfig config;
  std::vector<ConfigError> errors;
  bool unparsed_files = false;  // a node file was not JSON: its nodes are absent, not dangling
  std::vector<std::shared_ptr<NodeSetDocument>> nodesets;  // read, not yet resolved (resolve_nodesets)
  bool ok() const noexcept { return errors.empty(); }
};

// Reads and validates a server file and the node files it names (paths relative to the server file).
LoadResult load_config(const std::filesystem::path& server_file);
// The same from text (node file patterns are resolved against base_dir).
LoadResult load_config_text(const std::string& json, const std::string& file_name,
                            const std::filesystem::path& base_dir);
// Node files given as text, added to a server configuration (used by tests and the default config).
void load_node_file_text(const std::string& json, const std::string& file_name, LoadResult& into);
// A NodeSet2 file given as text: parsed, its NamespaceUris appended to the NamespaceArray; its nodes are
// resolved by resolve_nodesets() once every file is read. load_config() calls both.
void load_nodeset_file_text(std::string text, const std::string& file_name, LoadResult& into);
// Orders the NodeSet2 files read so far by their RequiredModels, checks the required versions and
// publication dates, and turns their nodes into result.config.imported (errors: file, line, reason).
void resolve_nodesets(LoadResult& result);
// Checks that need every node file at once: duplicate NodeIds and dangling parents; it resolves the type
// definitions written as NodeIds or qualified names first and gives the instances of NodeSet2 types their
// members (instantiate_imported_types). load_config() calls it.
void check_references(LoadResult& result);
// Resolves NodeDecl::type_ref and NodeDecl::data_type_ref and appends the members of every instance of a
// NodeSet2 type to result.config.nodes (config/instances.cpp); errors: file, JSON path, reason.
void instantiate_imported_types(LoadResult& result);
// Resolves the alarms' nodes and appends each alarm's condition (its object and members) to
// result.config.nodes, with the references and notifiers that make it findable (config/alarms.cpp).
// check_references() calls it after instantiate_imported_types().
void expand_alarms(LoadResult& result);

// What the daemon logs as a warning at every start (docs/SECURITY.md): deprecated policies offered,
// passwords accepted in clear, anonymous writes.
std::vector<std::string> security_warnings(const ServerConfig& c);

// Resolves a namespace URI to its index in `namespaces` (the NamespaceArray being loaded, read at each call,
// so it sees namespaces appended later). REQUIRES: `namespaces` outlives the resolver.
ua::NodeId::NamespaceResolver namespace_resolver(const std::vector<std::string>& namespaces);

// The NodeId of element n of a bulk declaration.
ua::NodeId bulk_node_id(const NodeDecl& d, uint32_t n, const ua::NodeId::NamespaceResolver& resolver);

// The built-in configuration used when opcuad runs without --config: opc.tcp://0.0.0.0:4840,
// SecurityPolicy None, anonymous access, and a demo namespace with simulated and writable variables of
// every built-in type.
ServerConfig default_config();

// Files matching a glob (`*` and `?` in the last path component only, e.g. nodes.d/*.json), sorted.
std::vector<std::filesystem::path> expand_glob(const std::filesystem::path& base_dir,
                                               const std::string& pattern);

}  // namespace opcuad::config
