// Configuration: the examples and the built-in default load and build; each validation rule reports
// its exact message; passwords, simulation and globs.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "addressspace/type_check.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "config/password.hpp"
#include "config/reload_settings.hpp"
#include "config/settings_table.hpp"
#include "config/simulation.hpp"
#include "transport/config.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::config;

namespace {
const std::filesystem::path kRoot = OPCUAD_SOURCE_DIR;

std::string errors_of(const std::vector<ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.to_string() + "\n";
  return s;
}

// Builds the address space of a configuration and checks every configured variable's value fits.
void build_and_check(const ServerConfig& c) {
  addressspace::AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  const auto errors = build_address_space(c, space, *p);
  INFO(errors_of(errors));
  REQUIRE(errors.empty());
  const auto& store = *space.current();
  for (const NodeDecl& d : c.nodes) {
    if (d.count || d.is_type) continue;
    const auto n = store.find(d.node_id);
    INFO(d.node_id.to_string());
    REQUIRE(n != addressspace::kNoNode);
    if (const auto* v = store.variable(n)) {
      ua::DataValue dv;
      addressspace::ValueStore::read(*v->cell, dv);
      CHECK(dv.value == d.value);
      CHECK(addressspace::check_value(store, *v, dv.value).is_good());
    }
  }
}

// A server file with one node file given as text.
LoadResult load_nodes(const std::string& nodes) {
  LoadResult r = load_config_text(R"({"namespaces": ["urn:t"]})", "server.json", ".");
  load_node_file_text(nodes, "nodes.json", r);
  check_references(r);
  return r;
}

std::string only_error(const LoadResult& r) {
  INFO(errors_of(r.errors));
  REQUIRE(r.errors.size() == 1);
  return r.errors[0].to_string();
}
}  // namespace

TEST_CASE("config: the built-in default configuration", "[config]") {
  const ServerConfig c = default_config();
  REQUIRE(c.endpoints.size() == 1);
  CHECK(c.endpoints[0].url == "opc.tcp://0.0.0.0:4840");
  CHECK(c.endpoints[0].security_policies == std::vector<std::string>{"None"});
  CHECK(c.security.allow_anonymous);
  CHECK(c.namespaces ==
        std::vector<std::string>{"http://opcfoundation.org/UA/", "urn:opcuad:server", "urn:opcuad:demo"});
  // Every built-in type 1..21 and ExtensionObject has a writable demo variable.
  std::set<uint32_t> types;
  size_t simulated = 0;
  for (const auto& d : c.nodes) {
    if (d.kind != NodeKind::Variable) continue;
    if (d.simulation) ++simulated;
    if (d.access_level & addressspace::access::kCurrentWrite) types.insert(d.data_type.numeric());
  }
  for (uint32_t t = 1; t <= 22; ++t) {
    if (t == 22) t = ua::id::Range;
    INFO(t);
    CHECK(types.count(t) == 1);
  }
  CHECK(simulated >= 6);
  build_and_check(c);
  addressspace::AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  REQUIRE(build_address_space(c, space, *p).empty());
  const auto& s = *space.current();
  CHECK(s.find(ua::NodeId(2, "Demo.Sensors.Sensor100")) != addressspace::kNoNode);
  const auto temp = s.find(ua::NodeId(2, "Demo.Simulation.Temperature"));
  REQUIRE(temp != addressspace::kNoNode);
  CHECK(s.forward_target(temp, s.find(ua::NodeId(0, ua::id::HasTypeDefinition))) ==
        s.find(ua::NodeId(0, ua::id::AnalogItemType)));
  CHECK(s.child(temp, 0, "EURange") != addressspace::kNoNode);
  CHECK(s.child(temp, 0, "EngineeringUnits") != addressspace::kNoNode);
  CHECK(s.parent(s.find(ua::NodeId(2, "Demo"))) == s.find(ua::NodeId(0, ua::id::ObjectsFolder)));
}

TEST_CASE("config: every example configuration loads and builds", "[config][examples]") {
  for (const char* file : {"config/examples/minimal.json", "config/examples/plant/opcuad.json"}) {
    INFO(file);
    const LoadResult r = load_config(kRoot / file);
    INFO(errors_of(r.errors));
    REQUIRE(r.ok());
    build_and_check(r.config);
  }
  const LoadResult plant = load_config(kRoot / "config/examples/plant/opcuad.json");
  CHECK(plant.config.node_files.size() == 2);
  CHECK(plant.config.limits.operations.max_nodes_per_read == 5000);
  CHECK(plant.config.users.size() == 1);
  CHECK(verify_password("secret", plant.config.users[0].password_hash));
  // A real secure endpoint (Basic256Sha256 and Aes256_Sha256_RsaPss, SignAndEncrypt) without anonymous
  // access.
  REQUIRE(plant.config.endpoints.size() == 2);
  CHECK(plant.config.endpoints[0].offers.size() == 2);
  CHECK(plant.config.endpoints[0].offers[0].mode == SecurityMode::SignAndEncrypt);
  CHECK(!plant.config.endpoints[0].allow_anonymous);
  CHECK(!plant.config.security.anonymous_write);
  CHECK(plant.config.users[0].roles == (role::kAuthenticatedUser | role::kOperator));
  addressspace::AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  RoleTable roles;
  REQUIRE(build_address_space(plant.config, space, *p, {}, &roles).empty());
  const auto& s = *space.current();
  CHECK(s.find(ua::NodeId(2, "Line1.Sensors.Sensor1000")) != addressspace::kNoNode);
  CHECK(s.find(ua::NodeId(2, 1001)) != addressspace::kNoNode);
  REQUIRE(roles.count(ua::NodeId(2, "Line1.Pump1.Running")));
  CHECK(roles[ua::NodeId(2, "Line1.Pump1.Running")].write == (role::kOperator | role::kSupervisor));
  CHECK(roles[ua::NodeId(2, "Line1.Pump1.Running")].read == role::kEveryone);
  const auto pump = s.find(ua::NodeId(2, "Line1.Pump1"));
  const auto pump_type = s.find(ua::NodeId(2, "PumpType"));
  REQUIRE(pump_type != addressspace::kNoNode);
  CHECK(s.node_class(pump_type) == addressspace::NodeClass::ObjectType);
  CHECK(s.forward_target(pump, s.find(ua::NodeId(0, ua::id::HasTypeDefinition))) == pump_type);
  CHECK(s.is_type_subtype(pump_type, s.find(ua::NodeId(0, ua::id::BaseObjectType))));
  // OperationLimits come from the configuration.
  ua::DataValue dv;
  addressspace::ValueStore::read(
      *s.variable(s.find(ua::NodeId(0, ua::id::Server_ServerCapabilities_OperationLimits_MaxNodesPerRead)))
           ->cell,
      dv);
  CHECK(*dv.value.get_if<uint32_t>() == 5000);

  // The machinery example names the DI and Machinery NodeSet2 files below nodesets/ beside its server file
  // (its README): here a link to the companion specifications of OPCUAD_NODESETS_DIR.
  const std::filesystem::path nodesets = OPCUAD_NODESETS_DIR;
  if (!std::filesystem::exists(nodesets / "Machinery/Opc.Ua.Machinery.NodeSet2.xml")) {
    WARN("no companion specifications in " << nodesets.string() << ": config/examples/machinery not loaded");
    return;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "opcuad-example-machinery";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* f : {"opcuad.json", "machine.json"})
    std::filesystem::copy_file(kRoot / "config/examples/machinery" / f, dir / f);
  std::filesystem::create_directory_symlink(std::filesystem::absolute(nodesets), dir / "nodesets");
  const LoadResult machinery = load_config(dir / "opcuad.json");
  INFO(errors_of(machinery.errors));
  REQUIRE(machinery.ok());
  build_and_check(machinery.config);
  addressspace::AddressSpace mspace;
  auto* mp = mspace.reclaimer().register_participant();
  REQUIRE(build_address_space(machinery.config, mspace, *mp).empty());
  const auto& ms = *mspace.current();
  const auto example =
      static_cast<uint16_t>(std::find(machinery.config.namespaces.begin(), machinery.config.namespaces.end(),
                                      "urn:example:machinery") -
                            machinery.config.namespaces.begin());
  for (const char* id : {"Press1.Identification.Manufacturer", "Press1.Identification.SerialNumber",
                         "Press1.Identification.YearOfConstruction",
                         "Press1.MachineryItemState.CurrentState.Id", "Press1.Monitoring.Pressure"}) {
    INFO(id);
    CHECK(ms.find(ua::NodeId(example, ua::String(id))) != addressspace::kNoNode);
  }
  mspace.reclaimer().go_offline(*mp);
  std::filesystem::remove_all(dir);
}

TEST_CASE("config: every JSON example in docs/CONFIGURATION.md loads", "[config][examples]") {
  std::ifstream in(kRoot / "docs/CONFIGURATION.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  size_t blocks = 0;
  for (size_t at = doc.find("```json\n"); at != std::string::npos; at = doc.find("```json\n", at)) {
    at += 8;
    const size_t end = doc.find("```", at);
    const std::string block = doc.substr(at, end - at);
    ++blocks;
    INFO(block);
    // A node file declares nodes or types; anything else is (part of) a server file.
    const bool server =
        block.find("\"nodes\"") == std::string::npos && block.find("\"object_types\"") == std::string::npos;
    LoadResult r;
    if (block.find("http://opcfoundation.org/UA/Machinery/") != std::string::npos) {
      // Instances and DataTypes of Machinery's models: over the DI, Machinery (and Machinery Result)
      // files of OPCUAD_NODESETS_DIR.
      const std::filesystem::path nodesets = OPCUAD_NODESETS_DIR;
      if (!std::filesystem::exists(nodesets / "Machinery/Opc.Ua.Machinery.NodeSet2.xml")) {
        WARN("no companion specifications in " << nodesets.string() << ": example not loaded");
        at = end + 3;
        continue;
      }
      std::string files = "\"" + (nodesets / "DI/Opc.Ua.Di.NodeSet2.xml").string() + "\", \"" +
                          (nodesets / "Machinery/Opc.Ua.Machinery.NodeSet2.xml").string() + "\"";
      if (block.find("http://opcfoundation.org/UA/Machinery/Result/") != std::string::npos)
        files +=
            ", \"" + (nodesets / "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml").string() + "\"";
      r = load_config_text(R"({"node_files": [)" + files + "]}", "doc", kRoot);
      load_node_file_text(block, "nodes.json", r);
      check_references(r);
    } else {
      r = server ? load_config_text(block, "doc", kRoot / "config/examples/plant") : load_nodes(block);
    }
    INFO(errors_of(r.errors));
    CHECK(r.ok());
    if (r.ok() && !server) build_and_check(r.config);
    at = end + 3;
  }
  CHECK(blocks >= 3);
}

TEST_CASE("config: one message per validation rule", "[config][validation]") {
  CHECK(only_error(load_nodes(R"({"nodes": [{"kind": "folder", "name": "A", "colour": "red"}]})")) ==
        "nodes.json: /nodes/0/colour: unknown key \"colour\"");
  CHECK(only_error(load_nodes(R"({"nodes": [{"kind": "folder", "name": 7}]})")) ==
        "nodes.json: /nodes/0/name: expected a string, got an integer");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "folder", "name": "A", "node_id": "s=X"}, {"kind": "folder", "name": "B", "node_id": "s=X"}]})")) ==
        "nodes.json: /nodes/1: duplicate NodeId ns=2;s=X, first declared in nodes.json at /nodes/0");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"parent": "nsu=urn:t;s=Nowhere", "kind": "folder", "name": "A"}]})")) ==
        "nodes.json: /nodes/0/parent: parent ns=2;s=Nowhere does not exist");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Int32", "value": 1.5}]})")) ==
        "nodes.json: /nodes/0/value: value does not fit DataType Int32");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Range", "value": {"low": 0, "hihg": 1}}]})")) ==
        "nodes.json: /nodes/0/value: value does not fit DataType Range: unknown key \"hihg\" (low, high)");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "EUInformation", "value": {"unit_id": "C"}}]})")) ==
        "nodes.json: /nodes/0/value: value does not fit DataType EUInformation: \"unit_id\" must be an "
        "integer");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "LocalizedText", "value_rank": 1,
           "value": ["a", {"locale": "en", "txt": "b"}]}]})")) ==
        "nodes.json: /nodes/0/value: element 1 does not fit DataType LocalizedText: unknown key \"txt\" "
        "(locale, text)");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "folder", "name": "A", "namespace": "urn:nope"}]})")) ==
        "nodes.json: /nodes/0/namespace: unknown namespace \"urn:nope\"");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Dubble"}]})")) ==
        "nodes.json: /nodes/0/data_type: unknown DataType \"Dubble\"");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "object", "name": "O", "type_definition": "PumpTyp"}]})")) ==
        "nodes.json: /nodes/0/type_definition: unknown type definition \"PumpTyp\"");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [{"kind": "folder"}]})")) ==
        "nodes.json: /nodes/0: missing required key \"name\"");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Double", "value": [1, 2]}]})")) ==
        "nodes.json: /nodes/0/value: value must be a scalar: ValueRank is -1");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Double", "simulation": {"kind": "saw"}}]})")) ==
        "nodes.json: /nodes/0/simulation/kind: unknown simulation kind \"saw\" (counter, ramp, sine, square, "
        "random)");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "V", "data_type": "Byte", "value": 300}]})")) ==
        "nodes.json: /nodes/0/value: value does not fit DataType Byte");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
          {"kind": "variable", "name": "Sensor", "count": 3, "data_type": "Double"}]})")) ==
        "nodes.json: /nodes/0/name: a bulk declaration's name must contain {n}");
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"], "nodes": [{"kind": "folder", "name": "A",)"))
            .starts_with("nodes.json: /: invalid JSON: "));
  CHECK(only_error(load_nodes(R"({"namespaces": ["urn:t"],
    "nodes": [{"kind": "folder", "name": "A",}]})")) ==
        "nodes.json: /: invalid JSON: parse error at line 2, column 46: syntax error while parsing object "
        "key - "
        "unexpected '}'; expected string literal");
  CHECK(only_error(load_config_text(R"({"endpoints": [{"url": "http://x"}]})", "s.json", ".")) ==
        "s.json: /endpoints/0/url: invalid endpoint URL: the URL must start with opc.tcp://");
  CHECK(
      only_error(load_config_text(
          R"({"users": [{"name": "a", "password": "x", "password_hash": "pbkdf2-sha256$1$YQ==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}]})",
          "s.json", ".")) ==
      "s.json: /users/0/password: clear-text passwords are not accepted: use password_hash");
  CHECK(only_error(load_config_text(R"({"threads": -1})", "s.json", ".")) ==
        "s.json: /threads: out of range: must be between 0 and 4294967295");
  CHECK(only_error(load_config_text(R"({"node_files": ["missing.json"]})", "s.json", ".")) ==
        "s.json: /node_files/0: node file \"missing.json\" does not exist");
}

TEST_CASE("config: all errors are reported at once", "[config][validation]") {
  const LoadResult r = load_nodes(R"({"namespaces": ["urn:t"], "nodes": [
      {"kind": "folder", "name": "A", "x": 1},
      {"kind": "variable", "name": "V", "data_type": "Int32", "value": "no"},
      {"parent": "nsu=urn:t;s=Gone", "kind": "folder", "name": "B"}]})");
  CHECK(r.errors.size() == 3);
}

TEST_CASE("config: passwords are stored as PBKDF2-HMAC-SHA256 hashes", "[config][password]") {
  const std::string h = hash_password("correct horse", 1000);
  CHECK(h.starts_with("pbkdf2-sha256$1000$"));
  CHECK(is_password_hash(h));
  CHECK(verify_password("correct horse", h));
  CHECK_FALSE(verify_password("correct horsE", h));
  CHECK(hash_password("x", 1000) != hash_password("x", 1000));  // salted
  // RFC 7914 §11 test vector for PBKDF2-HMAC-SHA256 ("passwd", "salt", 1 iteration), first 32 bytes.
  CHECK(hash_password_with_salt("passwd", "salt", 1) ==
        "pbkdf2-sha256$1$c2FsdA==$VawEblbjCJ/sFpHCJUS2BflBhSFt3gRl5oudV8INrLw=");
  CHECK_FALSE(is_password_hash("plain"));
  CHECK_FALSE(verify_password("", "pbkdf2-sha256$0$c2FsdA==$AA=="));
}

TEST_CASE("config: simulated values as a function of time", "[config][simulation]") {
  Simulation s;
  s.min = 0;
  s.max = 10;
  s.period_ms = 1000;
  s.interval_ms = 100;
  s.kind = SimulationKind::Sine;
  CHECK(simulate(s, 0) == Approx(5));
  CHECK(simulate(s, 250) == Approx(10));
  CHECK(simulate(s, 750) == Approx(0).margin(1e-9));
  s.kind = SimulationKind::Ramp;
  CHECK(simulate(s, 0) == Approx(0));
  CHECK(simulate(s, 500) == Approx(5));
  CHECK(simulate(s, 1500) == Approx(5));
  s.kind = SimulationKind::Square;
  CHECK(simulate(s, 100) == 10);
  CHECK(simulate(s, 600) == 0);
  s.kind = SimulationKind::Counter;
  s.step = 5;
  CHECK(simulate(s, 0) == 0);
  CHECK(simulate(s, 150) == 5);
  CHECK(simulate(s, 250) == 10);
  CHECK(simulate(s, 300) == 0);  // wraps after max
  s.kind = SimulationKind::Random;
  const double a = simulate(s, 10, 1), b = simulate(s, 20, 1), c = simulate(s, 110, 1);
  CHECK(a == b);  // same interval, same value
  CHECK(a != c);
  CHECK(simulate(s, 10, 2) != a);
  for (int t = 0; t < 100000; t += 100) {
    const double v = simulate(s, t, 3);
    CHECK((v >= 0 && v < 10));
  }
  CHECK(*simulate_as(s, ua::BuiltinType::Byte, 0, 1).get_if<uint8_t>() <= 10);
  s.kind = SimulationKind::Ramp;
  s.max = 1000;
  CHECK(*simulate_as(s, ua::BuiltinType::Int16, 500).get_if<int16_t>() == 500);
}

TEST_CASE("config: node file globs", "[config]") {
  const auto files = expand_glob(kRoot / "config/examples/plant", "nodes.d/*.json");
  REQUIRE(files.size() == 2);
  CHECK(files[0].filename() == "10-line1.json");
  CHECK(files[1].filename() == "20-sensors.json");
  CHECK(expand_glob(kRoot / "config/examples/plant", "nodes.d/2?-*.json").size() == 1);
  CHECK(expand_glob(kRoot / "config/examples/plant", "nodes.d/*.yaml").empty());
}

TEST_CASE("config: diagnostics.enabled is the initial EnabledFlag", "[config][diagnostics]") {
  CHECK_FALSE(default_config().diagnostics.enabled);
  CHECK_FALSE(load_config_text("{}", "s.json", ".").config.diagnostics.enabled);
  const LoadResult on = load_config_text(R"({"diagnostics": {"enabled": true}})", "s.json", ".");
  REQUIRE(on.ok());
  CHECK(on.config.diagnostics.enabled);
  CHECK_FALSE(on.config.diagnostics.counters);
  CHECK(only_error(load_config_text(R"({"diagnostics": {"enabled": 1}})", "s.json", ".")) ==
        "s.json: /diagnostics/enabled: expected a boolean, got an integer");
}

TEST_CASE("config: diagnostics counters switch", "[config][diagnostics]") {
  CHECK_FALSE(default_config().diagnostics.counters);
  CHECK_FALSE(load_config_text("{}", "s.json", ".").config.diagnostics.counters);
  const LoadResult on = load_config_text(R"({"diagnostics": {"counters": true}})", "s.json", ".");
  REQUIRE(on.ok());
  CHECK(on.config.diagnostics.counters);
  CHECK(only_error(load_config_text(R"({"diagnostics": {"counters": "yes"}})", "s.json", ".")) ==
        "s.json: /diagnostics/counters: expected a boolean, got a string");
  CHECK(only_error(load_config_text(R"({"diagnostics": {"allocations": true}})", "s.json", ".")) ==
        "s.json: /diagnostics/allocations: unknown key \"allocations\"");
  CHECK(only_error(load_config_text(R"({"diagnostics": true})", "s.json", ".")) ==
        "s.json: /diagnostics: expected an object, got a boolean");

  // The counter nodes exist exactly when the switch is on.
  for (const bool counters : {false, true}) {
    ServerConfig c = on.config;
    c.diagnostics.counters = counters;
    addressspace::AddressSpace space;
    auto* p = space.reclaimer().register_participant();
    REQUIRE(build_address_space(c, space, *p).empty());
    const auto& s = *space.current();
    INFO(counters);
    CHECK((s.find(ua::NodeId(1, ua::String("Diagnostics.HeapAllocations"))) != addressspace::kNoNode) ==
          counters);
    CHECK((s.find(ua::NodeId(1, ua::String("Diagnostics"))) != addressspace::kNoNode) == counters);
  }
}

TEST_CASE("config: shard scheduling", "[config][scheduling]") {
  CHECK_FALSE(default_config().scheduling.pin_shards);
  CHECK(default_config().scheduling.realtime_priority == 0);
  const LoadResult on =
      load_config_text(R"({"scheduling": {"pin_shards": true, "realtime_priority": 10}})", "s.json", ".");
  REQUIRE(on.ok());
  CHECK(on.config.scheduling.pin_shards);
  CHECK(on.config.scheduling.realtime_priority == 10);
  CHECK(only_error(load_config_text(R"({"scheduling": {"realtime_priority": 100}})", "s.json", ".")) ==
        "s.json: /scheduling/realtime_priority: out of range: must be between 0 and 99");
  CHECK(only_error(load_config_text(R"({"scheduling": {"realtime_priority": -1}})", "s.json", ".")) ==
        "s.json: /scheduling/realtime_priority: out of range: must be between 0 and 99");
  CHECK(only_error(load_config_text(R"({"scheduling": {"pin": true}})", "s.json", ".")) ==
        "s.json: /scheduling/pin: unknown key \"pin\"");
}

TEST_CASE("config: logging rate limits", "[config][logging]") {
  CHECK(default_config().logging.rate_limit_burst == 20);
  CHECK(default_config().logging.rate_limit_window_s == 10);
  const LoadResult r =
      load_config_text(R"({"logging": {"rate_limit_burst": 0, "rate_limit_window_s": 3600}})", "s.json", ".");
  REQUIRE(r.ok());
  CHECK(r.config.logging.rate_limit_burst == 0);
  CHECK(r.config.logging.rate_limit_window_s == 3600);
  CHECK(only_error(load_config_text(R"({"logging": {"rate_limit_burst": 100001}})", "s.json", ".")) ==
        "s.json: /logging/rate_limit_burst: out of range: must be between 0 and 100000");
  CHECK(only_error(load_config_text(R"({"logging": {"rate_limit_window_s": 0}})", "s.json", ".")) ==
        "s.json: /logging/rate_limit_window_s: out of range: must be between 1 and 3600");
  CHECK(only_error(load_config_text(R"({"logging": {"rate_limit_window_s": 3601}})", "s.json", ".")) ==
        "s.json: /logging/rate_limit_window_s: out of range: must be between 1 and 3600");
}

TEST_CASE("config: shutdown grace period", "[config][shutdown]") {
  CHECK(default_config().shutdown.grace_period_s == 5);
  const LoadResult zero = load_config_text(R"({"shutdown": {"grace_period_s": 0}})", "s.json", ".");
  REQUIRE(zero.ok());
  CHECK(zero.config.shutdown.grace_period_s == 0);
  const LoadResult most = load_config_text(R"({"shutdown": {"grace_period_s": 60}})", "s.json", ".");
  REQUIRE(most.ok());
  CHECK(most.config.shutdown.grace_period_s == 60);
  CHECK(only_error(load_config_text(R"({"shutdown": {"grace_period_s": 61}})", "s.json", ".")) ==
        "s.json: /shutdown/grace_period_s: out of range: must be between 0 and 60");
  CHECK(only_error(load_config_text(R"({"shutdown": {"grace_period_s": -1}})", "s.json", ".")) ==
        "s.json: /shutdown/grace_period_s: out of range: must be between 0 and 60");
  CHECK(only_error(load_config_text(R"({"shutdown": {"grace": 3}})", "s.json", ".")) ==
        "s.json: /shutdown/grace: unknown key \"grace\"");
}

TEST_CASE("config: connection limits before a session", "[config][connections]") {
  // The built-in defaults are the transport's own.
  const Connections d = default_config().connections;
  const transport::TransportConfig t;
  CHECK(d.max_connections == t.max_connections);
  CHECK(d.max_connections_per_address == t.max_connections_per_address);
  CHECK(std::chrono::milliseconds(d.hello_timeout_ms) == t.hello_timeout);
  CHECK(std::chrono::milliseconds(d.open_timeout_ms) == t.open_timeout);
  CHECK(std::chrono::milliseconds(d.session_activation_timeout_ms) == t.session_activation_timeout);
  CHECK(d.max_message_size_before_session == t.max_message_size_before_session);
  CHECK(d.max_connections_per_address == 256);
  CHECK(d.session_activation_timeout_ms == 30000);
  CHECK(d.max_message_size_before_session == 65536);
  CHECK(d.handshake_threads == 0);
  CHECK(d.max_queued_handshakes == 256);

  const LoadResult r =
      load_config_text(R"({"connections": {"max_connections": 500, "max_connections_per_address": 0,
      "hello_timeout_ms": 2000, "open_timeout_ms": 3000, "session_activation_timeout_ms": 45000,
      "max_message_size_before_session": 131072, "handshake_threads": 4, "max_queued_handshakes": 9}})",
                       "s.json", ".");
  INFO(errors_of(r.errors));
  REQUIRE(r.ok());
  CHECK(r.config.connections.max_connections == 500);
  CHECK(r.config.connections.max_connections_per_address == 0);
  CHECK(r.config.connections.hello_timeout_ms == 2000);
  CHECK(r.config.connections.open_timeout_ms == 3000);
  CHECK(r.config.connections.session_activation_timeout_ms == 45000);
  CHECK(r.config.connections.max_message_size_before_session == 131072);
  CHECK(r.config.connections.handshake_threads == 4);
  CHECK(r.config.connections.max_queued_handshakes == 9);
  CHECK(only_error(load_config_text(R"({"connections": {"handshake_threads": 257}})", "s.json", ".")) ==
        "s.json: /connections/handshake_threads: out of range: must be between 0 and 256");
  CHECK(only_error(load_config_text(R"({"connections": {"max_queued_handshakes": 0}})", "s.json", ".")) ==
        "s.json: /connections/max_queued_handshakes: out of range: must be between 1 and 1000000");

  CHECK(only_error(load_config_text(R"({"connections": {"open_timeout_ms": 0}})", "s.json", ".")) ==
        "s.json: /connections/open_timeout_ms: out of range: must be between 1 and 4294967295");
  CHECK(only_error(
            load_config_text(R"({"connections": {"session_activation_timeout_ms": -5}})", "s.json", ".")) ==
        "s.json: /connections/session_activation_timeout_ms: out of range: must be between 1 and 4294967295");
  CHECK(only_error(
            load_config_text(R"({"connections": {"max_connections_per_address": -1}})", "s.json", ".")) ==
        "s.json: /connections/max_connections_per_address: out of range: must be between 0 and 4294967295");
  CHECK(only_error(load_config_text(R"({"connections": {"per_address": 3}})", "s.json", ".")) ==
        "s.json: /connections/per_address: unknown key \"per_address\"");
}

TEST_CASE("config: endpoint URLs go through the one URL parser", "[config][validation]") {
  auto load = [](const std::string& url) {
    return load_config_text(R"({"endpoints": [{"url": ")" + url + R"("}]})", "s.json", ".");
  };
  for (const char* good : {"opc.tcp://0.0.0.0:4840", "opc.tcp://[::]:4840", "opc.tcp://[::1]:0",
                           "opc.tcp://host/ua", "opc.tcp://plant-gw"}) {
    INFO(good);
    CHECK(load(good).ok());
  }
  CHECK(only_error(load("opc.tcp://:4840")) ==
        "s.json: /endpoints/0/url: invalid endpoint URL: the URL has no host (use 0.0.0.0 or [::] for every "
        "interface)");
  CHECK(only_error(load("opc.tcp://host:70000")) ==
        "s.json: /endpoints/0/url: invalid endpoint URL: the port is above 65535");
  CHECK(only_error(load("opc.tcp://host:x")) ==
        "s.json: /endpoints/0/url: invalid endpoint URL: the port is not a decimal number");
  CHECK(only_error(load("opc.tcp://::1:4840")) ==
        "s.json: /endpoints/0/url: invalid endpoint URL: an IPv6 address must be written in brackets, e.g. "
        "opc.tcp://[::1]:4840");

  CHECK(load_config_text(R"({"advertised_hostname": "gw.example"})", "s.json", ".").ok());
  CHECK(load_config_text(R"({"advertised_hostname": "fd00::1"})", "s.json", ".").ok());
  CHECK(load_config_text(R"({"advertised_hostname": "[fd00::1]"})", "s.json", ".").ok());
  CHECK(only_error(load_config_text(R"({"advertised_hostname": "gw:4840"})", "s.json", "."))
            .starts_with("s.json: /advertised_hostname: not a host name or address: "));
  CHECK(only_error(load_config_text(R"({"advertised_hostname": "gw/x"})", "s.json", ".")) ==
        "s.json: /advertised_hostname: not a host name or address: it contains '/'");
}

TEST_CASE("config: logging settings", "[config][logging]") {
  const LoadResult r =
      load_config_text(R"({"logging": {"level": "debug", "file": "/var/log/opcuad.log"}})", "s.json", ".");
  REQUIRE(r.ok());
  CHECK(r.config.logging.level == "debug");
  CHECK(r.config.logging.file == "/var/log/opcuad.log");
  for (const char* level : {"trace", "debug", "info", "warn", "error"}) {
    INFO(level);
    CHECK(load_config_text(std::string(R"({"logging": {"level": ")") + level + R"("}})", "s.json", ".").ok());
  }
  CHECK(default_config().logging.level == "info");
  CHECK(default_config().logging.file.empty());
  CHECK(only_error(load_config_text(R"({"logging": {"level": "verbose"}})", "s.json", ".")) ==
        "s.json: /logging/level: unknown log level \"verbose\" (trace, debug, info, warn, error)");
  CHECK(only_error(load_config_text(R"({"logging": {"level": "INFO"}})", "s.json", ".")) ==
        "s.json: /logging/level: unknown log level \"INFO\" (trace, debug, info, warn, error)");
  CHECK(only_error(load_config_text(R"({"logging": {"file": 3}})", "s.json", "."))
            .starts_with("s.json: /logging/file: "));
  CHECK(only_error(load_config_text(R"({"logging": {"rotate": true}})", "s.json", "."))
            .starts_with("s.json: /logging/rotate: "));
}

TEST_CASE("config: subscription limits", "[config][limits]") {
  const Limits defaults;
  CHECK(defaults.max_subscriptions_per_session == 100);
  CHECK(defaults.max_monitored_item_queue_size == 1000);
  CHECK(defaults.max_publish_requests_per_session == 32);
  CHECK(defaults.max_publish_response_size == 4u << 20);
  const LoadResult r = load_config_text(R"({"limits": {"max_subscriptions_per_session": 3,
      "max_monitored_items_per_subscription": 4, "max_monitored_items_per_session": 5,
      "max_monitored_item_queue_size": 6, "max_publish_requests_per_session": 7, "max_subscriptions_per_call": 8,
      "parked_session_lifetime_ms": 9.5, "max_parked_sessions": 10, "max_publish_response_size": 100000}})",
                                        "s.json", ".");
  INFO(errors_of(r.errors));
  REQUIRE(r.ok());
  const Limits& l = r.config.limits;
  CHECK(l.max_subscriptions_per_session == 3);
  CHECK(l.max_monitored_items_per_subscription == 4);
  CHECK(l.max_monitored_items_per_session == 5);
  CHECK(l.max_monitored_item_queue_size == 6);
  CHECK(l.max_publish_requests_per_session == 7);
  CHECK(l.max_subscriptions_per_call == 8);
  CHECK(l.parked_session_lifetime_ms == 9.5);
  CHECK(l.max_parked_sessions == 10);
  CHECK(l.max_publish_response_size == 100000);
  // Hostile values: a queue the item cannot hold, no Publish request at all, a negative lifetime.
  CHECK(only_error(
            load_config_text(R"({"limits": {"max_monitored_item_queue_size": 65536}})", "s.json", ".")) ==
        "s.json: /limits/max_monitored_item_queue_size: out of range: must be between 1 and 65535");
  CHECK(only_error(load_config_text(R"({"limits": {"max_monitored_item_queue_size": 0}})", "s.json", ".")) ==
        "s.json: /limits/max_monitored_item_queue_size: out of range: must be between 1 and 65535");
  CHECK(defaults.max_event_queue_size == 1000);
  CHECK(defaults.default_event_queue_size == 100);
  CHECK(only_error(load_config_text(R"({"limits": {"max_event_queue_size": 0}})", "s.json", ".")) ==
        "s.json: /limits/max_event_queue_size: out of range: must be between 1 and 65535");
  CHECK(only_error(load_config_text(R"({"limits": {"default_event_queue_size": 65536}})", "s.json", ".")) ==
        "s.json: /limits/default_event_queue_size: out of range: must be between 1 and 65535");
  {
    auto r = load_config_text(R"({"limits": {"max_event_queue_size": 7, "default_event_queue_size": 3}})",
                              "s.json", ".");
    REQUIRE(r.errors.empty());
    CHECK(r.config.limits.max_event_queue_size == 7);
    CHECK(r.config.limits.default_event_queue_size == 3);
  }
  CHECK(
      only_error(load_config_text(R"({"limits": {"max_publish_requests_per_session": 0}})", "s.json", ".")) ==
      "s.json: /limits/max_publish_requests_per_session: out of range: must be between 1 and 4294967295");
  CHECK(only_error(load_config_text(R"({"limits": {"parked_session_lifetime_ms": -1}})", "s.json", ".")) ==
        "s.json: /limits/parked_session_lifetime_ms: out of range: must be between 0 and 2147483647");
  CHECK(only_error(load_config_text(R"({"limits": {"max_parked_sessions": -1}})", "s.json", ".")) ==
        "s.json: /limits/max_parked_sessions: out of range: must be between 0 and 4294967295");
  CHECK(only_error(load_config_text(R"({"limits": {"max_publish_response_size": 65535}})", "s.json", ".")) ==
        "s.json: /limits/max_publish_response_size: out of range: must be between 65536 and 4294967295");
}

TEST_CASE("a node file that is not JSON is one error: references into it are not reported as dangling",
          "[config]") {
  const auto dir = std::filesystem::temp_directory_path() / ("opcuad-config-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "a.json") << R"({"namespaces": ["urn:t"], "nodes": [{"kind": "folder", "name": "A",)";
  std::ofstream(dir / "b.json") << R"({"namespaces": ["urn:t"], "nodes": [
      {"kind": "variable", "name": "V", "parent": "nsu=urn:t;s=A", "data_type": "Double"}]})";
  const auto r = load_config_text(R"({"node_files": ["a.json", "b.json"]})", "s.json", dir);
  INFO(errors_of(r.errors));
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].to_string().starts_with((dir / "a.json").string() +
                                            ": /: invalid JSON: parse error at line 1"));
  CHECK(r.unparsed_files);
  std::filesystem::remove_all(dir);
}

namespace {

// For each entry of a settings table: a value other than the default, inside the range, read from the
// file into the member, and named by restart_only_changes() when it differs.
template <class Section>
void check_table(const SettingsTable<Section>& table, Section& (*section_of)(ServerConfig&)) {
  for (const Setting<Section>& s : table.settings) {
    INFO(table.section << "." << s.key);
    ServerConfig defaults;
    nlohmann::json value;
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(section_of(defaults).*member)>;
          const T d = section_of(defaults).*member;
          if constexpr (std::is_same_v<T, bool>) {
            value = !d;
          } else {
            // An end of the range (a maximum for max_* keys, so that min_* <= max_* still holds), the
            // other end where that is the default.
            const double max = std::min<double>(s.max, static_cast<double>(std::numeric_limits<T>::max()));
            const bool high = std::string_view(s.key).starts_with("max_");
            double v = high ? max : s.min;
            if (static_cast<T>(v) == d) v = high ? s.min : max;
            if constexpr (std::is_same_v<T, double>) {
              value = v;
            } else {
              value = static_cast<int64_t>(v);
            }
          }
        },
        s.field);
    nlohmann::json file = nlohmann::json::object();
    if (*table.section) {
      file[table.section][s.key] = value;
    } else {
      file[s.key] = value;
    }
    if (std::string(table.section) == "http") file["http"]["listen"] = "127.0.0.1:9464";
    LoadResult r = load_config_text(file.dump(), "s.json", ".");
    INFO(errors_of(r.errors));
    REQUIRE(r.errors.empty());
    const bool read = std::visit(
        [&](auto member) { return nlohmann::json(section_of(r.config).*member) == value; }, s.field);
    CHECK(read);
    if (std::string(table.section) == "http") continue;  // compared as one object: see below
    const auto changed = restart_only_changes(defaults, r.config);
    const std::string name = *table.section ? std::string(table.section) + "." + s.key : std::string(s.key);
    CHECK(std::find(changed.begin(), changed.end(), name) != changed.end());
    // Just outside the range: refused with the range in the message.
    if (!std::holds_alternative<bool Section::*>(s.field) && s.min > 0) {
      const nlohmann::json below = std::holds_alternative<double Section::*>(s.field)
                                       ? nlohmann::json(s.min - 1)
                                       : nlohmann::json(static_cast<int64_t>(s.min) - 1);
      if (*table.section) {
        file[table.section][s.key] = below;
      } else {
        file[s.key] = below;
      }
      const LoadResult bad = load_config_text(file.dump(), "s.json", ".");
      REQUIRE(bad.errors.size() == 1);
      CHECK(bad.errors[0].to_string().find("out of range: must be between") != std::string::npos);
    }
  }
}

}  // namespace

TEST_CASE("config: every key of the settings tables is read, range-checked and named by a reload",
          "[config][reload]") {
  check_table(
      top_level_settings(), +[](ServerConfig& c) -> ServerConfig& { return c; });
  check_table(
      limit_settings(), +[](ServerConfig& c) -> Limits& { return c.limits; });
  check_table(
      operation_limit_settings(),
      +[](ServerConfig& c) -> addressspace::OperationLimits& { return c.limits.operations; });
  check_table(
      connection_settings(), +[](ServerConfig& c) -> Connections& { return c.connections; });
  check_table(
      security_settings(), +[](ServerConfig& c) -> Security& { return c.security; });
  check_table(
      pki_settings_table(), +[](ServerConfig& c) -> PkiConfig& { return c.pki; });
  check_table(
      logging_settings(), +[](ServerConfig& c) -> Logging& { return c.logging; });
  check_table(
      shutdown_settings(), +[](ServerConfig& c) -> Shutdown& { return c.shutdown; });
  check_table(
      scheduling_settings(), +[](ServerConfig& c) -> Scheduling& { return c.scheduling; });
  check_table(
      diagnostics_settings(), +[](ServerConfig& c) -> Diagnostics& { return c.diagnostics; });
  check_table(
      http_settings(), +[](ServerConfig& c) -> Http& {
        if (!c.http) c.http.emplace();
        return *c.http;
      });
}
