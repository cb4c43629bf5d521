// Namespace 0 as generated from Opc.Ua.NodeSet2.xml: the folders, the Server object, the hierarchies.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <set>
#include <thread>
#include <tuple>

#include "addressspace/namespace0.hpp"
#include "addressspace/server_object.hpp"
#include "addressspace/type_check.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::addressspace;

namespace {
struct Ns0 {
  ValueStore values;
  EpochReclaimer::Participant* p = values.reclaimer().register_participant();
  std::unique_ptr<NodeStore> store;
  Ns0() {
    NodeStoreBuilder b(values, *p);
    add_namespace0(b);
    auto r = b.build();
    for (auto& e : r.errors) UNSCOPED_INFO(e);
    REQUIRE(r.errors.empty());
    store = std::move(r.store);
  }
  NodeIndex at(uint32_t id) const { return store->find(ua::NodeId(0, id)); }
  uint16_t rt(uint32_t id) const { return static_cast<uint16_t>(store->reference_type_index(at(id))); }
};
const Ns0& ns0() {
  static Ns0 instance;
  return instance;
}
}  // namespace

TEST_CASE("addressspace: namespace 0 has every node of the nodeset", "[addressspace][ns0]") {
  const auto& s = *ns0().store;
  CHECK(s.size() == namespace0_node_count());
  CHECK(s.size() > 4900);
  size_t per_class[256] = {};
  for (NodeIndex n = 0; n < s.size(); ++n) ++per_class[static_cast<uint8_t>(s.node_class(n))];
  CHECK(per_class[static_cast<uint8_t>(NodeClass::Object)] > 700);
  CHECK(per_class[static_cast<uint8_t>(NodeClass::Variable)] > 3000);
  CHECK(per_class[static_cast<uint8_t>(NodeClass::Method)] > 400);
  CHECK(per_class[static_cast<uint8_t>(NodeClass::ObjectType)] > 250);
  CHECK(per_class[static_cast<uint8_t>(NodeClass::VariableType)] > 60);
  CHECK(per_class[static_cast<uint8_t>(NodeClass::ReferenceType)] > 70);
  CHECK(per_class[static_cast<uint8_t>(NodeClass::DataType)] > 270);
}

TEST_CASE("addressspace: Root organizes Objects, Types and Views", "[addressspace][ns0]") {
  const auto& n = ns0();
  const auto& s = *n.store;
  const NodeIndex root = n.at(ua::id::RootFolder);
  REQUIRE(root != kNoNode);
  CHECK(s.browse_name(root).name == ua::String("Root"));
  CHECK(s.child(root, 0, "Objects") == n.at(ua::id::ObjectsFolder));
  CHECK(s.child(root, 0, "Types") == n.at(ua::id::TypesFolder));
  CHECK(s.child(root, 0, "Views") == n.at(ua::id::ViewsFolder));
  CHECK(s.parent(n.at(ua::id::ObjectsFolder)) == root);
  CHECK(s.forward_target(n.at(ua::id::ObjectsFolder), n.at(ua::id::HasTypeDefinition)) ==
        n.at(ua::id::FolderType));
  // Organizes is forward from Root, inverse at Objects.
  bool inverse_seen = false;
  for (const Reference& r : s.references(n.at(ua::id::ObjectsFolder))) {
    if (r.is_inverse && r.target == root && r.type == n.rt(ua::id::Organizes)) inverse_seen = true;
  }
  CHECK(inverse_seen);
  // The binary type system UaExpert browses.
  const NodeIndex binary = n.at(ua::id::OPCBinarySchema_TypeSystem);
  REQUIRE(binary != kNoNode);
  CHECK(s.child(binary, 0, "Opc.Ua") != kNoNode);
}

TEST_CASE("addressspace: the Server object has its standard children", "[addressspace][ns0]") {
  const auto& n = ns0();
  const auto& s = *n.store;
  const NodeIndex server = s.child(n.at(ua::id::ObjectsFolder), 0, "Server");
  REQUIRE(server == n.at(ua::id::Server));
  for (const char* name :
       {"ServerArray", "NamespaceArray", "ServerStatus", "ServiceLevel", "Auditing", "ServerCapabilities",
        "ServerDiagnostics", "VendorServerInfo", "ServerRedundancy", "Namespaces", "GetMonitoredItems"}) {
    INFO(name);
    CHECK(s.child(server, 0, name) != kNoNode);
  }
  const NodeIndex status = n.at(ua::id::Server_ServerStatus);
  CHECK(s.child(status, 0, "CurrentTime") == n.at(ua::id::Server_ServerStatus_CurrentTime));
  const VariableAttributes* v = s.variable(status);
  REQUIRE(v);
  CHECK(s.node_id(v->data_type) == ua::NodeId(0, ua::id::ServerStatusDataType));
  CHECK(s.has_flag(n.at(ua::id::Server), 0) == false);
  CHECK(s.record(server).event_notifier == 1);
}

TEST_CASE("addressspace: HasSubtype closure of the reference types is O(1) and complete",
          "[addressspace][ns0]") {
  const auto& n = ns0();
  const auto& s = *n.store;
  const uint16_t refs = n.rt(ua::id::References), hier = n.rt(ua::id::HierarchicalReferences);
  const uint16_t nonhier = n.rt(ua::id::NonHierarchicalReferences);
  CHECK(s.is_reference_subtype(n.rt(ua::id::HasComponent), hier));
  CHECK(s.is_reference_subtype(n.rt(ua::id::HasOrderedComponent), n.rt(ua::id::HasComponent)));
  CHECK(s.is_reference_subtype(n.rt(ua::id::HasProperty), n.rt(ua::id::Aggregates)));
  CHECK(s.is_reference_subtype(n.rt(ua::id::HasTypeDefinition), nonhier));
  CHECK_FALSE(s.is_reference_subtype(n.rt(ua::id::HasTypeDefinition), hier));
  CHECK_FALSE(s.is_reference_subtype(hier, n.rt(ua::id::HasComponent)));
  // Every reference type reaches References, and matches what walking the hierarchy says.
  for (NodeIndex i = 0; i < s.size(); ++i) {
    const int t = s.reference_type_index(i);
    if (t < 0) continue;
    CHECK(s.is_reference_subtype(static_cast<uint16_t>(t), refs));
    for (NodeIndex j = 0; j < s.size(); ++j) {
      const int u = s.reference_type_index(j);
      if (u < 0) continue;
      CHECK(s.is_reference_subtype(static_cast<uint16_t>(t), static_cast<uint16_t>(u)) ==
            s.is_type_subtype(i, j));
    }
  }
  CHECK(s.reference_type(n.at(ua::id::HasComponent)) != nullptr);
  CHECK(s.text(s.reference_type(n.at(ua::id::HasComponent))->inverse_name).text == ua::String("ComponentOf"));
  CHECK(s.has_flag(n.at(ua::id::References), flag::kSymmetric));
  CHECK(s.has_flag(n.at(ua::id::References), flag::kIsAbstract));
}

TEST_CASE("addressspace: object, variable and data type hierarchies close over HasSubtype",
          "[addressspace][ns0]") {
  const auto& n = ns0();
  const auto& s = *n.store;
  CHECK(s.is_type_subtype(n.at(ua::id::FolderType), n.at(ua::id::BaseObjectType)));
  CHECK(s.is_type_subtype(n.at(ua::id::ServerType), n.at(ua::id::BaseObjectType)));
  CHECK(s.is_type_subtype(n.at(ua::id::AnalogItemType), n.at(ua::id::BaseDataVariableType)));
  CHECK(s.is_type_subtype(n.at(ua::id::PropertyType), n.at(ua::id::BaseVariableType)));
  CHECK_FALSE(s.is_type_subtype(n.at(ua::id::BaseObjectType), n.at(ua::id::FolderType)));
  CHECK(s.is_data_type_subtype(n.at(ua::id::Duration), n.at(ua::id::Double)));
  CHECK(s.is_data_type_subtype(n.at(ua::id::UtcTime), n.at(ua::id::DateTime)));
  CHECK(s.is_data_type_subtype(n.at(ua::id::Int32), n.at(ua::id::Number)));
  CHECK(s.is_data_type_subtype(n.at(ua::id::ServerState), n.at(ua::id::Enumeration)));
  CHECK_FALSE(s.is_data_type_subtype(n.at(ua::id::Double), n.at(ua::id::Duration)));
  size_t data_types = 0;
  for (NodeIndex i = 0; i < s.size(); ++i) {
    if (s.node_class(i) != NodeClass::DataType) continue;
    ++data_types;
    CHECK(s.is_data_type_subtype(i, n.at(ua::id::BaseDataType)));
  }
  CHECK(data_types > 270);
}

TEST_CASE("addressspace: DataType compatibility for Write", "[addressspace][ns0]") {
  const auto& n = ns0();
  const auto& s = *n.store;
  auto accepts = [&](uint32_t dt, const ua::Variant& v) { return data_type_accepts(s, n.at(dt), v); };
  CHECK(accepts(ua::id::Duration, 1.5));
  CHECK(accepts(ua::id::Double, 1.5));
  CHECK_FALSE(accepts(ua::id::Int32, 1.5));
  CHECK(accepts(ua::id::Int32, int32_t{3}));
  CHECK(accepts(ua::id::Number, int32_t{3}));
  CHECK(accepts(ua::id::Number, 2.5f));
  CHECK_FALSE(accepts(ua::id::Number, ua::String("x")));
  CHECK(accepts(ua::id::BaseDataType, ua::String("x")));
  CHECK(accepts(ua::id::UtcTime, ua::DateTime::now()));
  CHECK(accepts(ua::id::ServerState, int32_t{0}));
  CHECK(accepts(ua::id::LocaleId, ua::String("en")));
  CHECK(accepts(ua::id::Range, ua::ExtensionObject::make(ua::Range{0, 1})));
  CHECK_FALSE(accepts(ua::id::Range, ua::ExtensionObject::make(ua::EUInformation{})));
  CHECK(accepts(ua::id::Structure, ua::ExtensionObject::make(ua::Range{0, 1})));
  CHECK(value_rank_accepts(-1, {}, 1.0));
  CHECK_FALSE(value_rank_accepts(-1, {}, std::vector<double>{1.0}));
  CHECK(value_rank_accepts(1, {}, std::vector<double>{1.0}));
  const uint32_t max2[] = {2};
  CHECK_FALSE(value_rank_accepts(1, max2, std::vector<double>{1, 2, 3}));
  CHECK(value_rank_accepts(2, {}, ua::Variant::matrix(std::vector<double>{1, 2, 3, 4}, {2, 2})));
  CHECK_FALSE(value_rank_accepts(1, {}, ua::Variant::matrix(std::vector<double>{1, 2, 3, 4}, {2, 2})));
}

TEST_CASE("addressspace: DataTypeDefinition of structures and enumerations", "[addressspace][ns0]") {
  const auto& n = ns0();
  const auto& s = *n.store;
  const auto* def = s.data_type_definition(n.at(ua::id::BuildInfo));
  REQUIRE(def);
  const auto* sd = def->get<ua::StructureDefinition>();
  REQUIRE(sd);
  REQUIRE(sd->fields.size() == 6);
  CHECK(sd->fields[0].name == ua::String("ProductUri"));
  CHECK(sd->fields[5].data_type == ua::NodeId(0, ua::id::UtcTime));
  CHECK(sd->default_encoding_id == ua::NodeId(0, ua::id::BuildInfo_Encoding_DefaultBinary));
  CHECK(sd->base_data_type == ua::NodeId(0, ua::id::Structure));
  const auto* ed = s.data_type_definition(n.at(ua::id::ServerState));
  REQUIRE(ed);
  const auto* e = ed->get<ua::EnumDefinition>();
  REQUIRE(e);
  REQUIRE(e->fields.size() == 8);
  CHECK(e->fields[7].name == ua::String("Unknown"));
  CHECK(e->fields[7].value == 7);
  // Values from the nodeset: EnumStrings / EnumValues, method arguments.
  const NodeIndex es = s.child(n.at(ua::id::ServerState), 0, "EnumStrings");
  REQUIRE(es != kNoNode);
  ua::DataValue dv;
  ValueStore::read(*s.variable(es)->cell, dv);
  const auto* names = dv.value.get_if<std::vector<ua::LocalizedText>>();
  REQUIRE(names);
  CHECK(names->size() == 8);
  CHECK((*names)[0].text == ua::String("Running"));
}

TEST_CASE("addressspace: live Server object values", "[addressspace][ns0]") {
  Ns0 n;  // a private copy: this test writes values
  ServerInfo info;
  info.namespace_uris = {kNamespace0Uri, "urn:opcuad:test"};
  info.server_uris = {"urn:opcuad:test"};
  info.build_info.product_name = "opcuad";
  info.start_time = ua::DateTime::from_unix_ms(1000);
  info.operation_limits.max_nodes_per_read = 1234;
  install_server_object_values(*n.store, n.values, *n.p, info);
  auto read = [&](uint32_t id) {
    ua::DataValue dv;
    const NodeIndex i = n.at(id);
    REQUIRE(i != kNoNode);
    ValueStore::read(*n.store->variable(i)->cell, dv);
    return dv.value;
  };
  const auto ns = read(ua::id::Server_NamespaceArray);
  REQUIRE(ns.get_if<std::vector<ua::String>>());
  CHECK(ns.get_if<std::vector<ua::String>>()->at(1) == ua::String("urn:opcuad:test"));
  CHECK(*read(ua::id::Server_ServerCapabilities_OperationLimits_MaxNodesPerRead).get_if<uint32_t>() == 1234);
  CHECK(*read(ua::id::Server_Auditing).get_if<bool>() == false);
  CHECK(*read(ua::id::Server_ServerRedundancy_RedundancySupport).get_if<int32_t>() == 0);
  CHECK(*read(ua::id::Server_ServerStatus_State).get_if<int32_t>() == 0);
  CHECK(*read(ua::id::Server_ServiceLevel).get_if<uint8_t>() == 255);
  CHECK(read(ua::id::Server_ServerStatus_BuildInfo_ProductName).get_if<ua::String>()->view() == "opcuad");
  const auto status = read(ua::id::Server_ServerStatus);
  const auto* st = status.get_if<ua::ExtensionObject>()->get<ua::ServerStatusDataType>();
  REQUIRE(st);
  CHECK(st->start_time.to_unix_ms() == 1000);
  CHECK(st->build_info.product_name == ua::String("opcuad"));
  // Every written value fits its variable's DataType.
  for (uint32_t id :
       {ua::id::Server_NamespaceArray, ua::id::Server_ServerStatus, ua::id::Server_ServiceLevel,
        ua::id::Server_ServerStatus_CurrentTime, ua::id::Server_ServerRedundancy_RedundancySupport,
        ua::id::Server_ServerCapabilities_MinSupportedSampleRate}) {
    INFO(id);
    const auto* var = n.store->variable(n.at(id));
    CHECK(check_value(*n.store, *var, read(id)).is_good());
  }
}

TEST_CASE("addressspace: no reference is stored twice", "[addressspace][ns0]") {
  // The nodeset declares most references at both ends; each must still appear once per direction.
  const NodeStore& s = *ns0().store;
  size_t duplicates = 0;
  for (NodeIndex n = 0; n < s.size(); ++n) {
    std::set<std::tuple<NodeIndex, uint16_t, bool>> seen;
    for (const auto& r : s.references(n)) duplicates += !seen.insert({r.target, r.type, r.is_inverse}).second;
  }
  CHECK(duplicates == 0);
  const NodeIndex server = s.find(ua::NodeId(0, 2253));
  size_t server_status = 0;
  for (const auto& r : s.references(server)) server_status += s.node_id(r.target) == ua::NodeId(0, 2256);
  CHECK(server_status == 1);
}

namespace {
// Milliseconds between a DateTime and the system clock now (positive: `t` is in the past).
double age_ms(ua::DateTime t) {
  return static_cast<double>(ua::DateTime::now().ticks - t.ticks) / 1e4;
}
}  // namespace

// Part 5 §12.10: CurrentTime is the server's clock at the read, for the variable and for the
// CurrentTime member of the ServerStatus structure alike; no timer has to refresh them.
TEST_CASE("addressspace: ServerStatus.CurrentTime and ServerStatus are the clock at the read",
          "[addressspace][ns0][current_time]") {
  Ns0 n;
  ServerInfo info;
  info.namespace_uris = {kNamespace0Uri, "urn:opcuad:test"};
  info.start_time = ua::DateTime::from_unix_ms(1000);
  info.build_info.product_name = "opcuad";
  info.build_info.build_date = ua::DateTime::from_unix_ms(500);
  install_server_object_values(*n.store, n.values, *n.p, info);
  auto read_time = [&]() {
    ua::DataValue dv;
    ValueStore::read(*n.store->variable(n.at(ua::id::Server_ServerStatus_CurrentTime))->cell, dv);
    REQUIRE(dv.value.get_if<ua::DateTime>());
    CHECK(dv.source_timestamp == *dv.value.get_if<ua::DateTime>());
    return *dv.value.get_if<ua::DateTime>();
  };
  auto read_status = [&]() {
    ua::DataValue dv;
    ValueStore::read(*n.store->variable(n.at(ua::id::Server_ServerStatus))->cell, dv);
    const auto* eo = dv.value.get_if<ua::ExtensionObject>();
    REQUIRE(eo);
    const auto* st = eo->get<ua::ServerStatusDataType>();
    REQUIRE(st);
    return *st;
  };
  // Two reads 20 ms apart are as far apart as the clock says (the steady clock measures the sleep).
  auto elapsed_ms = [](std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
  };
  auto start = std::chrono::steady_clock::now();
  const ua::DateTime t1 = read_time();
  CHECK(std::abs(age_ms(t1)) < 5);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const ua::DateTime t2 = read_time();
  double elapsed = elapsed_ms(start);
  CHECK(std::abs(age_ms(t2)) < 5);
  const double gap = static_cast<double>(t2.ticks - t1.ticks) / 1e4;
  CHECK(gap >= 20);
  CHECK(gap <= elapsed + 2);

  start = std::chrono::steady_clock::now();
  const ua::ServerStatusDataType s1 = read_status();
  CHECK(std::abs(age_ms(s1.current_time)) < 5);
  CHECK(s1.start_time.to_unix_ms() == 1000);
  CHECK(s1.state == ua::ServerState::Running);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const ua::ServerStatusDataType s2 = read_status();
  elapsed = elapsed_ms(start);
  CHECK(std::abs(age_ms(s2.current_time)) < 5);
  const double status_gap = static_cast<double>(s2.current_time.ticks - s1.current_time.ticks) / 1e4;
  CHECK(status_gap >= 20);
  CHECK(status_gap <= elapsed + 2);

  // The structure and its component variables agree (Part 5 §6.3.1: the components expose its fields).
  auto read_var = [&](uint32_t id) {
    ua::DataValue dv;
    ValueStore::read(*n.store->variable(n.at(id))->cell, dv);
    return dv.value;
  };
  const auto build = read_var(ua::id::Server_ServerStatus_BuildInfo);
  REQUIRE(build.get_if<ua::ExtensionObject>());
  REQUIRE(build.get_if<ua::ExtensionObject>()->get<ua::BuildInfo>());
  CHECK(*build.get_if<ua::ExtensionObject>()->get<ua::BuildInfo>() == s2.build_info);
  CHECK(*read_var(ua::id::Server_ServerStatus_StartTime).get_if<ua::DateTime>() == s2.start_time);
  CHECK(*read_var(ua::id::Server_ServerStatus_State).get_if<int32_t>() == static_cast<int32_t>(s2.state));

  // A state change is kept by the computed structure, which still reads the clock.
  set_server_state(*n.store, n.values, *n.p, ua::ServerState::Shutdown, 5, ua::LocalizedText{"en", "bye"});
  const ua::ServerStatusDataType s3 = read_status();
  CHECK(s3.state == ua::ServerState::Shutdown);
  CHECK(s3.seconds_till_shutdown == 5);
  CHECK(std::abs(age_ms(s3.current_time)) < 5);
  CHECK(std::abs(age_ms(read_time())) < 5);
  CHECK(*read_var(ua::id::Server_ServerStatus_State).get_if<int32_t>() == static_cast<int32_t>(s3.state));
  CHECK(*read_var(ua::id::Server_ServerStatus_SecondsTillShutdown).get_if<uint32_t>() == 5);
}

// Part 5 §6.3.2: ServerProfileArray names only profiles opcuad implements (server_object.hpp says why).
TEST_CASE("addressspace: ServerProfileArray claims Micro Embedded Device 2017 only", "[addressspace][ns0]") {
  Ns0 n;
  install_server_object_values(*n.store, n.values, *n.p, ServerInfo{});
  ua::DataValue dv;
  ValueStore::read(*n.store->variable(n.at(ua::id::Server_ServerCapabilities_ServerProfileArray))->cell, dv);
  const auto* profiles = dv.value.get_if<std::vector<ua::String>>();
  REQUIRE(profiles);
  CHECK(*profiles == std::vector<ua::String>{
                         ua::String("http://opcfoundation.org/UA-Profile/Server/MicroEmbeddedDevice2017")});
}
