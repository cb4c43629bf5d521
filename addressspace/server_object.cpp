#include "addressspace/server_object.hpp"

#include "ua/generated/node_ids.hpp"

namespace opcuad::addressspace {

namespace {
class Writer {
 public:
  Writer(const NodeStore& s, ValueStore& v, EpochReclaimer::Participant& p, ua::DateTime now)
      : store_(s), values_(v), p_(p), now_(now) {}
  void operator()(uint32_t id, ua::Variant value) {
    const NodeIndex n = store_.find(ua::NodeId(0, id));
    if (n == kNoNode) return;
    const VariableAttributes* var = store_.variable(n);
    if (!var || !var->cell) return;
    ua::DataValue dv;
    dv.value = std::move(value);
    dv.source_timestamp = now_;
    dv.server_timestamp = now_;
    values_.write(*var->cell, dv, p_);
  }

 private:
  const NodeStore& store_;
  ValueStore& values_;
  EpochReclaimer::Participant& p_;
  ua::DateTime now_;
};

// Part 5 §12.10: ServerStatus.CurrentTime is "the current time (UTC) known by the Server": the clock
// at the read, not a value refreshed now and then.
class CurrentTimeSource final : public ValueSource {
 public:
  void compute(const ua::Variant*, ua::DateTime now, ua::Variant& out) const override { out = now; }
};

// ServerStatus (Part 5 §6.3.1) is the structure of its components: the template holds the rest (state,
// start time, build info, shutdown fields, written by set_server_state()), CurrentTime is the read time.
class ServerStatusSource final : public ValueSource {
 public:
  void compute(const ua::Variant* stored, ua::DateTime now, ua::Variant& out) const override {
    const auto* eo = stored ? stored->get_if<ua::ExtensionObject>() : nullptr;
    const auto* s = eo ? eo->get<ua::ServerStatusDataType>() : nullptr;
    if (!s) {
      out = stored ? *stored : ua::Variant{};
      return;
    }
    ua::ServerStatusDataType copy = *s;
    copy.current_time = now;
    out = ua::ExtensionObject::make(std::move(copy));
  }
};

const CurrentTimeSource kCurrentTime;
const ServerStatusSource kServerStatus;

void set_source(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p, uint32_t id,
                const ValueSource& source) {
  const NodeIndex n = store.find(ua::NodeId(0, id));
  const VariableAttributes* var = n == kNoNode ? nullptr : store.variable(n);
  if (var && var->cell) values.set_source(*var->cell, source, p);
}

std::vector<ua::String> strings(const std::vector<std::string>& v) {
  return {v.begin(), v.end()};
}

ua::ServerStatusDataType status(const ServerInfo& info, ua::DateTime now) {
  ua::ServerStatusDataType s;
  s.start_time = info.start_time;
  s.current_time = now;
  s.state = ua::ServerState::Running;
  s.build_info = info.build_info;
  return s;
}
}  // namespace

void install_server_object_values(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                                  const ServerInfo& info) {
  namespace id = ua::id;
  const ua::DateTime now = ua::DateTime::now();
  Writer w(store, values, p, now);
  w(id::Server_NamespaceArray, strings(info.namespace_uris));
  w(id::Server_ServerArray, strings(info.server_uris));
  w(id::Server_ServiceLevel, info.service_level);
  w(id::Server_Auditing, false);
  w(id::Server_ServerRedundancy_RedundancySupport, static_cast<int32_t>(ua::RedundancySupport::None));

  w(id::Server_ServerStatus, ua::ExtensionObject::make(status(info, now)));
  w(id::Server_ServerStatus_StartTime, info.start_time);
  w(id::Server_ServerStatus_CurrentTime, now);
  w(id::Server_ServerStatus_State, static_cast<int32_t>(ua::ServerState::Running));
  w(id::Server_ServerStatus_BuildInfo, ua::ExtensionObject::make(info.build_info));
  w(id::Server_ServerStatus_BuildInfo_ProductUri, info.build_info.product_uri);
  w(id::Server_ServerStatus_BuildInfo_ManufacturerName, info.build_info.manufacturer_name);
  w(id::Server_ServerStatus_BuildInfo_ProductName, info.build_info.product_name);
  w(id::Server_ServerStatus_BuildInfo_SoftwareVersion, info.build_info.software_version);
  w(id::Server_ServerStatus_BuildInfo_BuildNumber, info.build_info.build_number);
  w(id::Server_ServerStatus_BuildInfo_BuildDate, info.build_info.build_date);
  w(id::Server_ServerStatus_SecondsTillShutdown, uint32_t{0});
  w(id::Server_ServerStatus_ShutdownReason, ua::LocalizedText{});

  w(id::Server_ServerCapabilities_ServerProfileArray, strings(info.server_profiles));
  w(id::Server_ServerCapabilities_LocaleIdArray, strings(info.locale_ids));
  w(id::Server_ServerCapabilities_MinSupportedSampleRate, info.min_supported_sample_rate);
  w(id::Server_ServerCapabilities_MaxBrowseContinuationPoints, info.max_browse_continuation_points);
  w(id::Server_ServerCapabilities_MaxQueryContinuationPoints, uint16_t{0});
  w(id::Server_ServerCapabilities_MaxHistoryContinuationPoints, uint16_t{0});
  w(id::Server_ServerCapabilities_MaxArrayLength, info.max_array_length);
  w(id::Server_ServerCapabilities_MaxStringLength, info.max_string_length);
  w(id::Server_ServerCapabilities_MaxByteStringLength, info.max_byte_string_length);
  w(id::Server_ServerCapabilities_SoftwareCertificates, std::vector<ua::ExtensionObject>{});
  w(id::Server_ServerCapabilities_MaxSessions, info.max_sessions);
  w(id::Server_ServerCapabilities_MaxSubscriptions, info.max_subscriptions);
  w(id::Server_ServerCapabilities_MaxMonitoredItems, info.max_monitored_items);
  w(id::Server_ServerCapabilities_MaxSubscriptionsPerSession, info.max_subscriptions_per_session);
  w(id::Server_ServerCapabilities_MaxMonitoredItemsPerSubscription,
    info.max_monitored_items_per_subscription);
  w(id::Server_ServerCapabilities_MaxMonitoredItemsQueueSize, info.max_monitored_items_queue_size);

  const OperationLimits& l = info.operation_limits;
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerRead, l.max_nodes_per_read);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerWrite, l.max_nodes_per_write);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerMethodCall, l.max_nodes_per_method_call);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerBrowse, l.max_nodes_per_browse);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerRegisterNodes, l.max_nodes_per_register_nodes);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerTranslateBrowsePathsToNodeIds,
    l.max_nodes_per_translate_browse_paths);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerNodeManagement, l.max_nodes_per_node_management);
  w(id::Server_ServerCapabilities_OperationLimits_MaxMonitoredItemsPerCall, l.max_monitored_items_per_call);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryReadData,
    l.max_nodes_per_history_read_data);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryReadEvents,
    l.max_nodes_per_history_read_events);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryUpdateData,
    l.max_nodes_per_history_update_data);
  w(id::Server_ServerCapabilities_OperationLimits_MaxNodesPerHistoryUpdateEvents,
    l.max_nodes_per_history_update_events);

  w(id::Server_ServerDiagnostics_EnabledFlag, info.diagnostics_enabled);
  update_server_diagnostics(store, values, p, ua::ServerDiagnosticsSummaryDataType{});
  update_diagnostic_arrays(store, values, p, {}, {}, {});

  set_source(store, values, p, id::Server_ServerStatus_CurrentTime, kCurrentTime);
  set_source(store, values, p, id::Server_ServerStatus, kServerStatus);
}

void set_namespace_array(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                         const std::vector<std::string>& uris) {
  Writer w(store, values, p, ua::DateTime::now());
  w(ua::id::Server_NamespaceArray, strings(uris));
}

void set_server_state(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                      ua::ServerState state, uint32_t seconds_till_shutdown,
                      const ua::LocalizedText& reason) {
  const ua::DateTime now = ua::DateTime::now();
  Writer w(store, values, p, now);
  w(ua::id::Server_ServerStatus_State, static_cast<int32_t>(state));
  w(ua::id::Server_ServerStatus_SecondsTillShutdown, seconds_till_shutdown);
  w(ua::id::Server_ServerStatus_ShutdownReason, reason);
  const NodeIndex n = store.find(ua::NodeId(0, ua::id::Server_ServerStatus));
  const VariableAttributes* var = n == kNoNode ? nullptr : store.variable(n);
  if (!var || !var->cell) return;
  ua::DataValue dv;
  ValueStore::read(*var->cell, dv);
  const auto* eo = dv.value.get_if<ua::ExtensionObject>();
  const auto* s = eo ? eo->get<ua::ServerStatusDataType>() : nullptr;
  if (!s) return;
  ua::ServerStatusDataType copy = *s;
  copy.state = state;
  copy.seconds_till_shutdown = seconds_till_shutdown;
  copy.shutdown_reason = reason;
  copy.current_time = now;
  w(ua::id::Server_ServerStatus, ua::ExtensionObject::make(std::move(copy)));
}

void update_server_diagnostics(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                               const ua::ServerDiagnosticsSummaryDataType& s) {
  namespace id = ua::id;
  Writer w(store, values, p, ua::DateTime::now());
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary, ua::ExtensionObject::make(s));
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_ServerViewCount, s.server_view_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSessionCount, s.current_session_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_CumulatedSessionCount, s.cumulated_session_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_SecurityRejectedSessionCount,
    s.security_rejected_session_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_RejectedSessionCount, s.rejected_session_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_SessionTimeoutCount, s.session_timeout_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_SessionAbortCount, s.session_abort_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_CurrentSubscriptionCount,
    s.current_subscription_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_CumulatedSubscriptionCount,
    s.cumulated_subscription_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_PublishingIntervalCount,
    s.publishing_interval_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_SecurityRejectedRequestsCount,
    s.security_rejected_requests_count);
  w(id::Server_ServerDiagnostics_ServerDiagnosticsSummary_RejectedRequestsCount, s.rejected_requests_count);
}

void update_diagnostic_arrays(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                              std::vector<ua::ExtensionObject> sessions,
                              std::vector<ua::ExtensionObject> security,
                              std::vector<ua::ExtensionObject> subscriptions) {
  namespace id = ua::id;
  Writer w(store, values, p, ua::DateTime::now());
  w(id::Server_ServerDiagnostics_SessionsDiagnosticsSummary_SessionDiagnosticsArray, std::move(sessions));
  w(id::Server_ServerDiagnostics_SessionsDiagnosticsSummary_SessionSecurityDiagnosticsArray,
    std::move(security));
  w(id::Server_ServerDiagnostics_SubscriptionDiagnosticsArray, std::move(subscriptions));
}

bool diagnostics_enabled(const NodeStore& store) {
  const NodeIndex n = store.find(ua::NodeId(0, ua::id::Server_ServerDiagnostics_EnabledFlag));
  const VariableAttributes* var = n == kNoNode ? nullptr : store.variable(n);
  if (!var || !var->cell) return false;
  ua::DataValue dv;
  ValueStore::read(*var->cell, dv);
  const bool* on = dv.value.get_if<bool>();
  return on && *on;
}

const char* counter_node_id(DiagnosticCounter c) {
  static constexpr const char* kIds[kCounterCount] = {
      "Diagnostics.HeapAllocations", "Diagnostics.HeapBytesAllocated", "Diagnostics.RequestsReceived",
      "Diagnostics.MessagesSent",    "Diagnostics.ChunksSent",         "Diagnostics.WriteCalls",
      "Diagnostics.BytesSent",       "Diagnostics.SampledItems",       "Diagnostics.SampledLate250us",
      "Diagnostics.SampledLate1ms",  "Diagnostics.SampledLate5ms",
  };
  return kIds[static_cast<size_t>(c)];
}

void add_counter_nodes(NodeStoreBuilder& b, double refresh_interval_ms) {
  namespace id = ua::id;
  const ua::NodeId object(1, ua::String(kCountersObjectId));
  const ua::NodeId has_component(0, id::HasComponent);
  const ua::NodeId has_type_definition(0, id::HasTypeDefinition);
  NodeSpec spec;
  spec.node_id = object;
  spec.node_class = NodeClass::Object;
  spec.browse_name = ua::QualifiedName{1, ua::String("OpcuadCounters")};
  spec.display_name = ua::LocalizedText{ua::String(), ua::String("OpcuadCounters")};
  b.add_node(spec);
  b.add_reference(ua::NodeId(0, id::Server_ServerDiagnostics), has_component, object);
  b.add_reference(object, has_type_definition, ua::NodeId(0, id::BaseObjectType));
  for (size_t i = 0; i < kCounterCount; ++i) {
    const std::string full = counter_node_id(static_cast<DiagnosticCounter>(i));
    const std::string name = full.substr(full.find('.') + 1);
    spec = NodeSpec{};
    spec.node_id = ua::NodeId(1, ua::String(full));
    spec.node_class = NodeClass::Variable;
    spec.browse_name = ua::QualifiedName{1, ua::String(name)};
    spec.display_name = ua::LocalizedText{ua::String(), ua::String(name)};
    spec.data_type = ua::NodeId(0, id::UInt64);
    spec.value_rank = -1;
    spec.minimum_sampling_interval = refresh_interval_ms;
    ua::DataValue dv;
    dv.value = uint64_t{0};
    dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
    spec.value = std::move(dv);
    b.add_node(spec);
    b.add_reference(object, has_component, spec.node_id);
    b.add_reference(spec.node_id, has_type_definition, ua::NodeId(0, id::BaseDataVariableType));
  }
}

bool CounterPublisher::publish(const NodeStore& store, ValueStore& values, EpochReclaimer::Participant& p,
                               const CounterValues& v, ua::DateTime now) {
  if (resolved_for_ != &store) {
    resolved_for_ = &store;
    for (size_t i = 0; i < kCounterCount; ++i) {
      const NodeIndex n =
          store.find(ua::NodeId(1, ua::String(counter_node_id(static_cast<DiagnosticCounter>(i)))));
      const VariableAttributes* var = n == kNoNode ? nullptr : store.variable(n);
      cells_[i] = var ? var->cell : nullptr;
    }
  }
  if (!cells_[0]) return false;
  ua::DataValue dv;
  dv.source_timestamp = now;
  dv.server_timestamp = now;
  for (size_t i = 0; i < kCounterCount; ++i) {
    if (!cells_[i]) continue;
    dv.value = v[i];
    values.write(*cells_[i], dv, p);
  }
  return true;
}

}  // namespace opcuad::addressspace
