// services_fuzz seeds.
#include "tests/fuzz/seed_corpus.hpp"

namespace opcuad::fuzz::seeds {

namespace {

// services_fuzz inputs (tests/fuzz/services_fuzz_input.hpp): one request of every service alone, then
// sequences that need earlier requests (a subscription before its items, a Browse before BrowseNext).
class ServiceSeeds {
 public:
  explicit ServiceSeeds(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
  }
  // Appends one op to the current input. The request's token is replaced by the fuzz target.
  template <class Req>
  ServiceSeeds& op(Req req, uint8_t flags = 0) {
    req.request_header = header();
    req.request_header.request_handle = ++handle_;
    ByteBuffer body;
    if (!encode_to(body, req).is_good() || body.size() > 0xffff) {
      std::fprintf(stderr, "services seed %d does not encode\n", count_);
      std::exit(1);
    }
    put(static_cast<uint8_t>(opcuad::fuzz::service_index<Req>() | flags), body.data(), body.size());
    return *this;
  }
  ServiceSeeds& wait(uint8_t ms) {
    put(opcuad::fuzz::kWaitOp, &ms, 1);
    return *this;
  }
  // Writes the current input as one seed.
  void end() {
    std::ofstream(dir_ / ("seed-" + std::to_string(count_++)), std::ios::binary)
        .write(input_.data(), static_cast<std::streamsize>(input_.size()));
    input_.clear();
  }
  template <class Req>
  void single(Req req) {
    op(std::move(req));
    end();
  }
  int count() const { return count_; }

 private:
  void put(uint8_t selector, const void* body, size_t n) {
    input_ += static_cast<char>(selector);
    input_ += static_cast<char>(n & 0xff);
    input_ += static_cast<char>(n >> 8);
    input_.append(static_cast<const char*>(body), n);
  }
  std::filesystem::path dir_;
  std::string input_;
  uint32_t handle_ = 0;
  int count_ = 0;
};

// Nodes of the default configuration (config/default_config.cpp) and of namespace 0.
NodeId demo(const char* path) {
  return NodeId(2, String(std::string("Demo.") + path));
}
constexpr uint32_t kRoot = 84, kObjects = 85, kServer = 2253, kServerStatus = 2256, kCurrentTime = 2258,
                   kHierarchicalReferences = 33, kGetMonitoredItems = 11492;

ReadRequest service_read() {
  ReadRequest r;
  r.timestamps_to_return = TimestampsToReturn::Both;
  r.nodes_to_read = {
      ReadValueId{NodeId(0, kCurrentTime), 13, String(), {}},
      ReadValueId{NodeId(0, kServer), 3, String(), {}},
      ReadValueId{NodeId(0, kServerStatus), 13, String(), {}},
      ReadValueId{demo("Static.Double"), 13, String(), {}},
      ReadValueId{demo("Static.DoubleArray"), 13, String("1:2"), {}},
      ReadValueId{demo("Static.Int32Matrix"), 13, String("0,1:2"), {}},
      ReadValueId{demo("Simulation.Temperature"), 13, String(), QualifiedName{0, String("Default Binary")}}};
  return r;
}

WriteRequest service_write() {
  WriteRequest w;
  auto value = [](Variant v) {
    DataValue dv;
    dv.value = std::move(v);
    return dv;
  };
  w.nodes_to_write = {
      WriteValue{demo("Static.Double"), 13, String(), value(Variant(4.5))},
      WriteValue{demo("Static.DoubleArray"), 13, String("1"), value(Variant(std::vector<double>{9}))},
      WriteValue{demo("Static.String"), 13, String(), value(Variant(String("fuzz")))},
      WriteValue{demo("Static.Variant"), 13, String(), value(Variant(int32_t{7}))},
      WriteValue{demo("Simulation.Temperature"), 13, String(), value(Variant(30.0))}};
  return w;
}

BrowseRequest service_browse(uint32_t max_references) {
  BrowseRequest b;
  b.requested_max_references_per_node = max_references;
  b.nodes_to_browse = {BrowseDescription{NodeId(0, kObjects), BrowseDirection::Forward,
                                         NodeId(0, kHierarchicalReferences), true, 0, 63},
                       BrowseDescription{NodeId(0, kServer), BrowseDirection::Both, NodeId(), true, 0, 63},
                       BrowseDescription{demo("Static"), BrowseDirection::Forward,
                                         NodeId(0, kHierarchicalReferences), true, 2, 63}};
  return b;
}

// A continuation point as the server makes them: the session's counter, from 1.
ByteString continuation_point(uint64_t n) {
  std::string key(8, '\0');
  std::memcpy(key.data(), &n, 8);
  return ByteString(key);
}

BrowseNextRequest service_browse_next(bool release, uint64_t point) {
  BrowseNextRequest b;
  b.release_continuation_points = release;
  b.continuation_points = {continuation_point(point)};
  return b;
}

TranslateBrowsePathsToNodeIdsRequest service_translate() {
  auto path = [](NodeId start, std::vector<QualifiedName> names) {
    BrowsePath p;
    p.starting_node = std::move(start);
    for (auto& n : names) {
      p.relative_path.elements.push_back(
          RelativePathElement{NodeId(0, kHierarchicalReferences), false, true, std::move(n)});
    }
    return p;
  };
  TranslateBrowsePathsToNodeIdsRequest t;
  t.browse_paths = {
      path(NodeId(0, kRoot),
           {QualifiedName{0, String("Objects")}, QualifiedName{0, String("Server")},
            QualifiedName{0, String("ServerStatus")}, QualifiedName{0, String("CurrentTime")}}),
      path(NodeId(0, kObjects), {QualifiedName{2, String("Demo")}, QualifiedName{2, String("Static")},
                                 QualifiedName{2, String("Double")}}),
      path(NodeId(0, kObjects), {QualifiedName{2, String("Missing")}})};
  return t;
}

RegisterNodesRequest service_register() {
  RegisterNodesRequest r;
  r.nodes_to_register = {demo("Static.Double"), NodeId(0, kCurrentTime)};
  return r;
}

UnregisterNodesRequest service_unregister() {
  UnregisterNodesRequest r;
  r.nodes_to_unregister = {demo("Static.Double"), NodeId(0, kCurrentTime)};
  return r;
}

CallRequest service_call() {
  CallRequest c;
  c.methods_to_call = {
      CallMethodRequest{NodeId(0, kServer), NodeId(0, kGetMonitoredItems), {Variant(uint32_t{1})}}};
  return c;
}

CreateSubscriptionRequest service_create_subscription() {
  CreateSubscriptionRequest c;
  c.requested_publishing_interval = 10;
  c.requested_lifetime_count = 300;
  c.requested_max_keep_alive_count = 3;
  c.publishing_enabled = true;
  return c;
}

// Subscription id 1 is the input's first subscription (the fuzz target maps it).
ModifySubscriptionRequest service_modify_subscription() {
  ModifySubscriptionRequest m;
  m.subscription_id = 1;
  m.requested_publishing_interval = 20;
  m.requested_lifetime_count = 60;
  m.requested_max_keep_alive_count = 5;
  m.max_notifications_per_publish = 2;
  m.priority = 3;
  return m;
}

SetPublishingModeRequest service_set_publishing_mode(bool enabled) {
  SetPublishingModeRequest s;
  s.publishing_enabled = enabled;
  s.subscription_ids = {1};
  return s;
}

PublishRequest service_publish(uint32_t acknowledge = 0) {
  PublishRequest p;
  if (acknowledge) p.subscription_acknowledgements = {SubscriptionAcknowledgement{1, acknowledge}};
  return p;
}

RepublishRequest service_republish() {
  RepublishRequest r;
  r.subscription_id = 1;
  r.retransmit_sequence_number = 1;
  return r;
}

DeleteSubscriptionsRequest service_delete_subscriptions() {
  DeleteSubscriptionsRequest d;
  d.subscription_ids = {1};
  return d;
}

TransferSubscriptionsRequest service_transfer() {
  TransferSubscriptionsRequest t;
  t.subscription_ids = {1};
  t.send_initial_values = true;
  return t;
}

// Event items on the Server object (Part 4 §7.22.3): a select list with the ConditionId form, fields of
// subtypes and a path no type declares, and a where clause of And, Or, OfType, Between, Like, InList and
// Cast; a second item with the default filter.
CreateMonitoredItemsRequest service_create_event_items() {
  auto clause = [](uint32_t type, const char* name, uint32_t attribute = 13) {
    SimpleAttributeOperand c;
    c.type_definition_id = NodeId(0, type);
    if (*name) c.browse_path.push_back(QualifiedName{0, String(name)});
    c.attribute_id = attribute;
    return c;
  };
  auto literal = [](Variant v) { return ExtensionObject::make(LiteralOperand{std::move(v)}); };
  auto element = [](uint32_t i) { return ExtensionObject::make(ElementOperand{i}); };
  auto field = [&](const char* name) { return ExtensionObject::make(clause(2041, name)); };
  EventFilter f;
  f.select_clauses = {clause(2782, "", 1),     clause(2041, "EventId"),     clause(2041, "EventType"),
                      clause(2041, "Message"), clause(2041, "Severity"),    clause(11446, "SystemState"),
                      clause(2133, "Changes"), clause(2041, "NoSuchField"), clause(2052, "ClientUserId")};
  f.where_clause.elements = {
      {FilterOperator::And, {element(1), element(2)}},
      {FilterOperator::OfType, {literal(Variant(NodeId(0, 2041)))}},
      {FilterOperator::Or, {element(3), element(4)}},
      {FilterOperator::Between,
       {field("Severity"), literal(Variant(uint16_t{1})), literal(Variant(int32_t{1000}))}},
      {FilterOperator::And, {element(5), element(6)}},
      {FilterOperator::Like, {field("SourceName"), literal(Variant(String("Ser%[a-z]_r")))}},
      {FilterOperator::InList, {element(7), literal(Variant(true)), literal(Variant(String("1")))}},
      {FilterOperator::Cast, {field("Severity"), literal(Variant(NodeId(0, 12)))}},
  };
  auto item = [](uint32_t handle, uint32_t queue, ExtensionObject filter) {
    MonitoredItemCreateRequest m;
    m.item_to_monitor = ReadValueId{NodeId(0, 2253), 12, String(), {}};
    m.monitoring_mode = MonitoringMode::Reporting;
    m.requested_parameters.client_handle = handle;
    m.requested_parameters.queue_size = queue;
    m.requested_parameters.discard_oldest = handle % 2 == 0;
    m.requested_parameters.filter = std::move(filter);
    return m;
  };
  CreateMonitoredItemsRequest c;
  c.subscription_id = 1;
  c.timestamps_to_return = TimestampsToReturn::Neither;
  c.items_to_create = {item(10, 2, ExtensionObject::make(std::move(f))), item(11, 0, {})};
  return c;
}

// The alarms the services fuzz target adds to the default configuration (services_fuzz.cpp, kAlarmNodes).
NodeId alarms(const char* path) {
  return NodeId(2, String(std::string("Alarms.") + path));
}
constexpr uint32_t kConditionType = 2782, kConditionRefresh = 3875, kConditionRefresh2 = 12912,
                   kEnable = 9027, kDisable = 9028, kAddComment = 9029, kAcknowledge = 9111, kConfirm = 9113;

// Alarms.Level (exclusive limit alarm: high_high 95, high 85, low 10, low_low 5, deadband 1) and
// Alarms.Mode (off normal alarm, normal value 1).
WriteRequest service_write_alarms(double level, int32_t mode) {
  WriteRequest w;
  DataValue l, m;
  l.value = Variant(level);
  m.value = Variant(mode);
  w.nodes_to_write = {WriteValue{alarms("Level"), 13, String(), l},
                      WriteValue{alarms("Mode"), 13, String(), m}};
  return w;
}

// An event item on the Server object selecting what the condition methods need: EventId (which the fuzz
// target keeps for Acknowledge and Confirm), the ConditionId, the states and the event's text.
CreateMonitoredItemsRequest service_create_alarm_items() {
  auto clause = [](uint32_t type, std::vector<const char*> path, uint32_t attribute = 13) {
    SimpleAttributeOperand c;
    c.type_definition_id = NodeId(0, type);
    for (const char* p : path) c.browse_path.push_back(QualifiedName{0, String(p)});
    c.attribute_id = attribute;
    return c;
  };
  EventFilter f;
  f.select_clauses = {clause(2041, {"EventId"}),
                      clause(2041, {"EventType"}),
                      clause(kConditionType, {}, 1),
                      clause(2915, {"ActiveState", "Id"}),
                      clause(2881, {"AckedState", "Id"}),
                      clause(2881, {"ConfirmedState", "Id"}),
                      clause(kConditionType, {"EnabledState", "Id"}),
                      clause(kConditionType, {"Retain"}),
                      clause(9341, {"LimitState", "CurrentState"}),
                      clause(kConditionType, {"Comment"}),
                      clause(2041, {"Message"}),
                      clause(2041, {"Severity"})};
  // Conditions only: OfType ConditionType.
  f.where_clause.elements = {
      {FilterOperator::OfType, {ExtensionObject::make(LiteralOperand{Variant(NodeId(0, kConditionType))})}}};
  MonitoredItemCreateRequest m;
  m.item_to_monitor = ReadValueId{NodeId(0, kServer), 12, String(), {}};
  m.monitoring_mode = MonitoringMode::Reporting;
  m.requested_parameters.client_handle = 20;
  m.requested_parameters.queue_size = 16;
  m.requested_parameters.discard_oldest = true;
  m.requested_parameters.filter = ExtensionObject::make(std::move(f));
  CreateMonitoredItemsRequest c;
  c.subscription_id = 1;
  c.timestamps_to_return = TimestampsToReturn::Both;
  c.items_to_create = {std::move(m)};
  return c;
}

// Acknowledge, Confirm or AddComment on a condition: `event` of one byte n is the n-th newest EventId
// the input has seen (services_fuzz_input.hpp), anything else goes as it is.
ByteString seen(uint8_t n) {
  return ByteString(std::string(1, static_cast<char>(n)));
}
CallMethodRequest condition_call(uint32_t method, const char* condition, ByteString event,
                                 const char* comment) {
  return CallMethodRequest{
      alarms(condition),
      NodeId(0, method),
      {Variant(std::move(event)), Variant(LocalizedText{String("en"), String(comment)})}};
}
CallMethodRequest condition_switch(uint32_t method, const char* condition) {
  return CallMethodRequest{alarms(condition), NodeId(0, method), {}};
}
CallMethodRequest condition_refresh(uint32_t subscription) {
  return CallMethodRequest{NodeId(0, kConditionType), NodeId(0, kConditionRefresh), {Variant(subscription)}};
}
CallMethodRequest condition_refresh2(uint32_t subscription, uint32_t item) {
  return CallMethodRequest{
      NodeId(0, kConditionType), NodeId(0, kConditionRefresh2), {Variant(subscription), Variant(item)}};
}
CallRequest service_calls(std::vector<CallMethodRequest> methods) {
  CallRequest c;
  c.methods_to_call = std::move(methods);
  return c;
}

CreateMonitoredItemsRequest service_create_items() {
  auto item = [](NodeId node, uint32_t attribute, uint32_t handle, double interval, uint32_t queue,
                 ExtensionObject filter = {}) {
    MonitoredItemCreateRequest m;
    m.item_to_monitor = ReadValueId{std::move(node), attribute, String(), {}};
    m.monitoring_mode = MonitoringMode::Reporting;
    m.requested_parameters.client_handle = handle;
    m.requested_parameters.sampling_interval = interval;
    m.requested_parameters.queue_size = queue;
    m.requested_parameters.discard_oldest = true;
    m.requested_parameters.filter = std::move(filter);
    return m;
  };
  CreateMonitoredItemsRequest c;
  c.subscription_id = 1;
  c.timestamps_to_return = TimestampsToReturn::Both;
  c.items_to_create = {
      item(demo("Static.Double"), 13, 1, 0, 1), item(NodeId(0, kCurrentTime), 13, 2, 10, 5),
      item(demo("Simulation.Temperature"), 13, 3, 10, 2,
           ExtensionObject::make(DataChangeFilter{DataChangeTrigger::StatusValue, 1, 0.5})),
      item(demo("Static.DoubleArray"), 13, 4, 0, 3,
           ExtensionObject::make(DataChangeFilter{DataChangeTrigger::StatusValueTimestamp, 0, 0})),
      item(NodeId(0, kServer), 3, 5, 100, 1)};
  return c;
}

ModifyMonitoredItemsRequest service_modify_items() {
  auto modify = [](uint32_t id, double interval, uint32_t queue, ExtensionObject filter = {}) {
    MonitoredItemModifyRequest m;
    m.monitored_item_id = id;
    m.requested_parameters.client_handle = 10 + id;
    m.requested_parameters.sampling_interval = interval;
    m.requested_parameters.queue_size = queue;
    m.requested_parameters.filter = std::move(filter);
    return m;
  };
  ModifyMonitoredItemsRequest m;
  m.subscription_id = 1;
  m.timestamps_to_return = TimestampsToReturn::Source;
  m.items_to_modify = {
      modify(1, 20, 4),
      modify(3, 0, 1, ExtensionObject::make(DataChangeFilter{DataChangeTrigger::StatusValue, 2, 10}))};
  return m;
}

DeleteMonitoredItemsRequest service_delete_items() {
  DeleteMonitoredItemsRequest d;
  d.subscription_id = 1;
  d.monitored_item_ids = {2, 5};
  return d;
}

SetMonitoringModeRequest service_set_monitoring_mode(MonitoringMode mode) {
  SetMonitoringModeRequest s;
  s.subscription_id = 1;
  s.monitoring_mode = mode;
  s.monitored_item_ids = {1, 4};
  return s;
}

SetTriggeringRequest service_set_triggering() {
  SetTriggeringRequest s;
  s.subscription_id = 1;
  s.triggering_item_id = 1;
  s.links_to_add = {4, 5};
  s.links_to_remove = {3};
  return s;
}

CancelRequest service_cancel() {
  CancelRequest c;
  c.request_handle = 1;
  return c;
}

CloseSessionRequest service_close_session(bool delete_subscriptions) {
  CloseSessionRequest c;
  c.delete_subscriptions = delete_subscriptions;
  return c;
}

ActivateSessionRequest service_activate() {
  ActivateSessionRequest a;
  a.locale_ids = {String("en")};
  a.user_identity_token = ExtensionObject::make(AnonymousIdentityToken{String("anonymous")});
  return a;
}

CreateSessionRequest service_create_session() {
  CreateSessionRequest c;
  c.client_description.application_uri = String("urn:fuzz:client");
  c.client_description.application_type = ApplicationType::Client;
  c.endpoint_url = String("opc.tcp://localhost:4840");
  c.session_name = String("seed");
  c.client_nonce = ByteString(std::string(32, 'n'));
  c.requested_session_timeout = 60000;
  return c;
}

GetEndpointsRequest service_get_endpoints() {
  GetEndpointsRequest g;
  g.endpoint_url = String("opc.tcp://localhost:4840");
  g.profile_uris = {String("http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary")};
  return g;
}

FindServersRequest service_find_servers() {
  FindServersRequest f;
  f.endpoint_url = String("opc.tcp://localhost:4840");
  f.server_uris = {String("urn:opcuad:server")};
  return f;
}

}  // namespace

void write_service_seeds(const std::filesystem::path& dir) {
  ServiceSeeds s(dir);
  // Every service alone, in the order of opcuad::fuzz::Services.
  s.single(service_read());
  s.single(service_write());
  s.single(service_browse(0));
  s.single(service_browse_next(false, 1));
  s.single(service_translate());
  s.single(service_register());
  s.single(service_unregister());
  s.single(service_call());
  s.single(service_create_subscription());
  s.single(service_modify_subscription());
  s.single(service_set_publishing_mode(false));
  s.single(service_publish());
  s.single(service_republish());
  s.single(service_delete_subscriptions());
  s.single(service_transfer());
  s.single(service_create_items());
  s.single(service_modify_items());
  s.single(service_delete_items());
  s.single(service_set_monitoring_mode(MonitoringMode::Sampling));
  s.single(service_set_triggering());
  s.single(service_cancel());
  s.single(service_close_session(true));
  s.single(service_activate());
  s.single(service_create_session());
  s.single(service_get_endpoints());
  s.single(service_find_servers());
  if (s.count() != static_cast<int>(opcuad::fuzz::kServiceCount)) {
    std::fprintf(stderr, "a service has no seed\n");
    std::exit(1);
  }
  // Browse in pieces: continuation points, BrowseNext, release.
  s.op(service_browse(1)).op(service_browse_next(false, 1)).op(service_browse_next(true, 2)).end();
  // A subscription's life: items, publishing, acknowledgement, republish, changes, deletion.
  s.op(service_create_subscription())
      .op(service_create_items())
      .op(service_publish())
      .op(service_publish())
      .wait(12)
      .op(service_publish(1))
      .op(service_republish())
      .op(service_write())
      .op(service_modify_items())
      .op(service_set_triggering())
      .op(service_set_monitoring_mode(MonitoringMode::Sampling))
      .wait(12)
      .op(service_publish(2))
      .op(service_modify_subscription())
      .op(service_set_publishing_mode(false))
      .op(service_delete_items())
      .op(service_delete_subscriptions())
      .end();
  // Event items: events raised at each wait (services_fuzz.cpp) and by the audited write fill their
  // queues past their size; Publish carries them.
  s.op(service_create_subscription())
      .op(service_create_event_items())
      .op(service_write())
      .wait(12)
      .op(service_publish())
      .wait(12)
      .wait(12)
      .op(service_publish(1))
      .op(service_delete_subscriptions())
      .end();
  // A session closed without deleting its subscription; the next session takes it over.
  s.op(service_create_subscription())
      .op(service_create_items())
      .op(service_close_session(false))
      .op(service_transfer())
      .op(service_publish())
      .wait(12)
      .end();
  // The client reconnects on the second channel (another shard): its session and subscription move there.
  s.op(service_create_subscription())
      .op(service_create_items())
      .op(service_publish())
      .op(service_activate(), opcuad::fuzz::kSecondChannel)
      .op(service_publish(), opcuad::fuzz::kSecondChannel)
      .op(service_read())
      .op(service_read(), opcuad::fuzz::kSecondChannel)
      .wait(12)
      .op(service_transfer(), opcuad::fuzz::kSecondChannel)
      .op(service_activate())
      .op(service_delete_subscriptions())
      .end();
  // Across shards: a parked subscription on the first shard, taken over from a session on the second.
  s.op(service_create_subscription())
      .op(service_create_items())
      .op(service_close_session(false))
      .op(service_activate(), opcuad::fuzz::kSecondChannel)
      .op(service_transfer(), opcuad::fuzz::kSecondChannel)
      .op(service_publish(), opcuad::fuzz::kSecondChannel)
      .wait(12)
      .end();
  // Alarms (Part 9): the inputs written across their limits raise the conditions' events; the client
  // acknowledges, confirms and comments with the EventIds it received, refreshes, disables (a write while
  // disabled raises nothing) and enables again.
  s.op(service_create_subscription())
      .op(service_create_alarm_items())
      .op(service_write_alarms(90, 2))
      .wait(12)
      .op(service_publish())
      .wait(12)
      // Each acknowledgement is a new event with a new EventId (Level's first, then Mode's).
      .op(service_calls({condition_call(kAcknowledge, "Level.Limits", seen(1), "seen"),
                         condition_call(kAcknowledge, "Mode.NotAuto", seen(0), "seen")}))
      .op(service_publish(1))
      .wait(12)
      .op(service_calls({condition_call(kConfirm, "Mode.NotAuto", seen(0), "done"),
                         condition_call(kAddComment, "Level.Limits", seen(1), "a comment")}))
      .op(service_write_alarms(97, 3))
      .op(service_calls({condition_refresh(1)}))
      .op(service_publish(2))
      .op(service_calls({condition_refresh2(1, 1)}))
      .op(service_write_alarms(50, 1))
      .op(service_calls(
          {condition_switch(kDisable, "Level.Limits"), condition_switch(kDisable, "Mode.NotAuto")}))
      .op(service_write_alarms(2, 4))
      .op(service_calls(
          {condition_switch(kEnable, "Level.Limits"), condition_switch(kEnable, "Mode.NotAuto")}))
      .wait(12)
      .op(service_publish(3))
      .op(service_delete_subscriptions())
      .end();
  // The same methods with EventIds the server never sent, arguments of the wrong kind or number, on a
  // node that is no condition and on the type; refreshes of a subscription that is not the session's.
  s.op(service_write_alarms(4, 0))
      .op(service_calls(
          {condition_call(kAcknowledge, "Level.Limits", ByteString("not-an-event-id-0123"), "x"),
           condition_call(kConfirm, "Mode.NotAuto", ByteString(), ""),
           condition_call(kAddComment, "Level.Limits", ByteString(""), ""),
           condition_call(kAcknowledge, "Level", seen(0), "not a condition"),
           CallMethodRequest{NodeId(0, kConditionType), NodeId(0, kAcknowledge), {}},
           CallMethodRequest{alarms("Level.Limits"), NodeId(0, kAddComment), {Variant(int32_t{1})}},
           condition_switch(kDisable, "Level.Limits"), condition_switch(kDisable, "Level.Limits"),
           condition_call(kAcknowledge, "Level.Limits", seen(0), "disabled"),
           condition_switch(kEnable, "Level.Limits"), condition_switch(kEnable, "Level.Limits"),
           condition_refresh(999), condition_refresh2(1, 77),
           CallMethodRequest{NodeId(0, kConditionType), NodeId(0, kConditionRefresh), {}}}))
      .op(service_write_alarms(50, 1))
      .end();
  // Writes across the limits on both shards (the second channel), with an event item and a refresh.
  s.op(service_create_subscription())
      .op(service_create_alarm_items())
      .op(service_write_alarms(86, 2))
      .op(service_write_alarms(96, 1), opcuad::fuzz::kSecondChannel)
      .op(service_write_alarms(84.5, 2))
      .op(service_write_alarms(7, 1), opcuad::fuzz::kSecondChannel)
      .op(service_write_alarms(3, 2))
      .op(service_write_alarms(50, 1))
      .op(service_publish())
      .op(service_calls({condition_refresh(1)}))
      .wait(12)
      .op(service_publish(1))
      .op(service_calls({condition_call(kAcknowledge, "Level.Limits", seen(3), "an older event")}))
      .op(service_delete_subscriptions())
      .end();
  // Session and discovery services together, then the session checks: a raw body, and a request whose
  // token is not the session's.
  s.op(service_create_session())
      .op(service_activate())
      .op(service_get_endpoints())
      .op(service_find_servers())
      .op(service_register())
      .op(service_unregister())
      .op(service_cancel())
      .op(service_read(), opcuad::fuzz::kRawBody)
      .op(service_read(), opcuad::fuzz::kKeepToken)
      .end();
  std::printf("wrote %d services seeds\n", s.count());
}

// An input too large for the fuzzing corpus (it would raise libFuzzer's max_len for every input), replayed
// as a test: a request in two chunks and a response in several (Part 6 §6.7.2), both reassembled.
void write_large_service_input(const std::filesystem::path& dir) {
  ServiceSeeds s(dir);
  WriteRequest w;
  DataValue text;
  text.value = Variant(String(std::string(61000, 'x')));
  w.nodes_to_write = {WriteValue{demo("Static.String"), 13, String(), text}};
  ReadRequest r;
  for (int i = 0; i < 3; ++i) r.nodes_to_read.push_back(ReadValueId{demo("Static.String"), 13, String(), {}});
  s.op(w).op(r).end();
}

}  // namespace opcuad::fuzz::seeds
