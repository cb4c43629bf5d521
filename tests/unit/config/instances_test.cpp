// Instances of NodeSet2 types declared in node files (docs/CONFIGURATION.md, "Instances of imported types";
// config/instances.cpp, config/json_structure.cpp): type definitions by NodeId and qualified name,
// InstanceDeclarations by ModellingRule, inheritance, Interfaces, "members", structured values, reload, and
// the published DI and Machinery specifications (OPCUAD_NODESETS_DIR).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "addressspace/value_store.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "tests/unit/config/nodeset_support.hpp"
#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad;
using namespace opcuad::config;
using namespace opcuad::nodeset_test;

namespace instances_test {

// instances.xml plus a node file (text) whose namespace is urn:app.
LoadResult load(const std::string& nodes, const std::vector<std::string>& xml = {"instances.xml"},
                const std::filesystem::path& dir = kFixtures) {
  std::string list;
  for (const auto& f : xml) list += (list.empty() ? "\"" : ", \"") + f + "\"";
  LoadResult r = load_config_text(R"({"node_files": [)" + list + "]}", "server.json", dir);
  if (r.errors.empty()) {
    // load_config_text() checked the NodeSet2 files alone; the node file joins them now.
    load_node_file_text(nodes, "app.json", r);
    check_references(r);
  }
  return r;
}

struct Built : nodeset_test::BuiltSpace {
  explicit Built(const LoadResult& r) : BuiltSpace(r) {
    app = namespace_of(config, "urn:app");
    const auto& uris = config.namespaces;
    inst = static_cast<uint16_t>(std::find(uris.begin(), uris.end(), "urn:inst") - uris.begin());
  }
  ua::NodeId id(const std::string& s) const { return ua::NodeId(app, ua::String(s)); }
  bool exists(const std::string& s) const { return store().find(id(s)) != addressspace::kNoNode; }
  addressspace::NodeIndex find(const std::string& s) const {
    const auto n = store().find(id(s));
    INFO(s);
    REQUIRE(n != addressspace::kNoNode);
    return n;
  }
  ua::DataValue data_value(const std::string& s) const {
    const auto* v = store().variable(find(s));
    REQUIRE(v);
    ua::DataValue dv;
    addressspace::ValueStore::read(*v->cell, dv);
    return dv;
  }
  ua::Variant value(const std::string& s) const { return data_value(s).value; }
  // The target of the forward reference of `type` from `s`, or a null NodeId.
  ua::NodeId target(const std::string& s, uint32_t type) const {
    const auto& st = store();
    for (const auto& r : st.references(find(s))) {
      if (!r.is_inverse && st.node_id(st.reference_type_node(r.type)) == ua::NodeId(0, type))
        return st.node_id(r.target);
    }
    return {};
  }
  // The reference type from the parent of `s` to `s`.
  ua::NodeId parent_reference(const std::string& s) const {
    const auto& st = store();
    for (const auto& r : st.references(find(s))) {
      const ua::NodeId type = st.node_id(st.reference_type_node(r.type));
      if (r.is_inverse && !type.is_ns0(ua::id::HasTypeDefinition) && !type.is_ns0(ua::id::HasModellingRule))
        return type;
    }
    return {};
  }
  uint16_t app = 0, inst = 0;
};

// A node file with one object of `type` and the given extra keys.
std::string machine(const std::string& type, const std::string& extra = "") {
  return R"({"namespaces": ["urn:app"], "nodes": [{"kind": "object", "name": "M1", "type_definition": ")" +
         type + "\"" + (extra.empty() ? "" : ", " + extra) + "}]}";
}

bool has_error(const LoadResult& r, const std::string& path, const std::string& part) {
  for (const auto& e : r.errors) {
    if (e.file == "app.json" && e.path == path && e.reason.find(part) != std::string::npos) return true;
  }
  return false;
}

std::vector<uint8_t> body_of(const ua::Variant& v) {
  const auto* e = v.get_if<ua::ExtensionObject>();
  REQUIRE(e);
  REQUIRE(!e->is_decoded());
  const auto b = e->body().view();
  return {b.begin(), b.end()};
}

}  // namespace instances_test

using namespace instances_test;

TEST_CASE("instances: a type by NodeId or by qualified name gets its Mandatory members",
          "[config][instances]") {
  const std::string type = GENERATE(std::string("nsu=urn:inst;i=1001"), std::string("urn:inst:MachineType"));
  INFO(type);
  const LoadResult r = load(machine(type));
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  const auto& s = b.store();
  CHECK(b.target("M1", ua::id::HasTypeDefinition) == ua::NodeId(b.inst, 1001));
  // Mandatory: own, the Interface's, recursively through Motor's declaration and its TypeDefinition.
  for (const char* n : {"M1.Speed", "M1.Mode", "M1.Motor", "M1.Motor.Label", "M1.Motor.Temperature",
                        "M1.Start", "M1.Start.InputArguments", "M1.Manufacturer"})
    CHECK(b.exists(n));
  // Optional ones nobody named, placeholders, and a node without ModellingRule are not created.
  for (const char* n :
       {"M1.SerialNumber", "M1.Config", "M1.Motor.Torque", "M1.<Tools>", "M1.DefaultInstanceBrowseName"})
    CHECK(!b.exists(n));
  // Attributes of the declaration, a HasTypeDefinition of its own, no ModellingRule, the same reference type.
  const auto speed = b.find("M1.Speed");
  CHECK(s.browse_name(speed) == ua::QualifiedName{b.inst, ua::String("Speed")});
  CHECK(s.display_name(speed).text.view() == "Speed");
  CHECK(s.description(speed).text.view() == "Revolutions per minute");
  CHECK(s.variable(speed)->access_level == 3);
  CHECK(s.node_id(s.variable(speed)->data_type) == ua::NodeId(0, ua::id::Double));
  CHECK(b.value("M1.Speed") == ua::Variant(12.5));
  CHECK(b.target("M1.Speed", ua::id::HasTypeDefinition) == ua::NodeId(0, ua::id::BaseDataVariableType));
  CHECK(b.target("M1.Motor", ua::id::HasTypeDefinition) == ua::NodeId(b.inst, 1002));
  CHECK(b.target("M1.Manufacturer", ua::id::HasTypeDefinition) == ua::NodeId(0, ua::id::PropertyType));
  for (const char* n : {"M1.Speed", "M1.Motor", "M1.Motor.Label", "M1.Start", "M1.Start.InputArguments"})
    CHECK(b.target(n, ua::id::HasModellingRule).is_null());
  CHECK(b.parent_reference("M1.Speed") == ua::NodeId(0, ua::id::HasComponent));
  CHECK(b.parent_reference("M1.Manufacturer") == ua::NodeId(0, ua::id::HasProperty));
  CHECK(b.parent_reference("M1.Motor.Label") == ua::NodeId(0, ua::id::HasProperty));
  CHECK(b.value("M1.Motor.Temperature") == ua::Variant(20.5));
  // Mode's declaration has no <Value>: neither has the member, which reads Bad_NoValue as the declaration
  // does (Part 6 §F.8) until a value is written or configured.
  CHECK(b.data_value("M1.Mode").status == ua::status::BadNoValue);
  CHECK(b.value("M1.Mode").is_empty());
  CHECK(b.data_value("M1.Speed").status == ua::status::Good);
  // The Method: a Method node with no TypeDefinition, its InputArguments the declaration's.
  const auto start = b.find("M1.Start");
  CHECK(s.node_class(start) == addressspace::NodeClass::Method);
  CHECK(b.target("M1.Start", ua::id::HasTypeDefinition).is_null());
  const ua::Variant args = b.value("M1.Start.InputArguments");
  const auto* list = args.get_if<std::vector<ua::ExtensionObject>>();
  REQUIRE(list);
  REQUIRE(list->size() == 1);
}

TEST_CASE("instances: a subtype's declarations hide its supertype's by browse path", "[config][instances]") {
  const LoadResult r = load(machine("urn:inst:BigMachineType"));
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  CHECK(b.value("M1.Speed") == ua::Variant(99.0));  // BigMachineType's Speed, not MachineType's
  CHECK(b.store().variable(b.find("M1.Speed"))->access_level == 1);
  CHECK(b.exists("M1.Motor.Torque"));       // Mandatory below the subtype's Motor
  CHECK(b.exists("M1.Motor.Label"));        // from the supertype's Motor declaration
  CHECK(b.exists("M1.Motor.Temperature"));  // from MotorType
  CHECK(b.exists("M1.Mode"));               // inherited
  CHECK(!b.exists("M1.Pressure"));          // Optional
}

TEST_CASE("instances: members create Optional declarations and set values by browse path",
          "[config][instances]") {
  const LoadResult r = load(machine("urn:inst:MachineType", R"("members": {
      "SerialNumber": {"value": "SN-42"},
      "Manufacturer": {"value": {"locale": "en", "text": "ACME"}},
      "Speed": {"value": 1450.0, "access": ["read"], "display_name": "Drehzahl"},
      "Motor/Torque": {},
      "Motor/In&/Out": {"value": 2.5},
      "Motor/Temperature": {"simulation": {"kind": "sine", "min": 20, "max": 80}, "read_roles": ["Operator"]},
      "Mode": {"value": "Stopped"},
      "Config": {"value": {"Id": 7, "Name": "ab", "Limits": [1.5, 2.5], "Mode": "Running", "Inner": {"A": -1}}}},
     "children": [{"kind": "variable", "name": "Extra", "data_type": "Int32", "value": 3}])"));
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  CHECK(b.value("M1.SerialNumber") == ua::Variant(ua::String("SN-42")));
  CHECK(b.value("M1.Manufacturer") == ua::Variant(ua::LocalizedText{ua::String("en"), ua::String("ACME")}));
  CHECK(b.value("M1.Speed") == ua::Variant(1450.0));
  CHECK(b.store().variable(b.find("M1.Speed"))->access_level == 1);
  CHECK(b.store().display_name(b.find("M1.Speed")).text.view() == "Drehzahl");
  CHECK(b.exists("M1.Motor.Torque"));
  CHECK(b.value("M1.Mode") == ua::Variant(int32_t{5}));
  CHECK(b.data_value("M1.Mode").status == ua::status::Good);  // a configured value is Good
  CHECK(b.exists("M1.Extra"));
  // "&/" stands for a '/' inside a BrowseName (Part 4 §A.2).
  CHECK(b.value("M1.Motor.In/Out") == ua::Variant(2.5));
  // The simulation and roles of a member reach the configuration like a declared variable's.
  bool simulated = false;
  for (const NodeDecl& d : r.config.nodes) {
    if (d.node_id == b.id("M1.Motor.Temperature")) {
      simulated = d.simulation.has_value();
      CHECK(d.read_roles == role::kOperator);
    }
  }
  CHECK(simulated);
  // ConfigType's Default Binary body: UInt32, String, Double[], the enumeration as Int32, Inner in place
  // (its EncodingMask 0: Note left out).
  const std::vector<uint8_t> expected = {7, 0,    0, 0, 2, 0, 0,    0,    'a', 'b', 2,    0,    0,    0,
                                         0, 0,    0, 0, 0, 0, 0xF8, 0x3F, 0,   0,   0,    0,    0,    0,
                                         4, 0x40, 1, 0, 0, 0, 0,    0,    0,   0,   0xFF, 0xFF, 0xFF, 0xFF};
  const ua::Variant config = b.value("M1.Config");
  CHECK(body_of(config) == expected);
  CHECK(config.get_if<ua::ExtensionObject>()->type_id() == ua::NodeId(b.inst, 5302));
}

TEST_CASE("instances: structure values with inheritance, unions, arrays and namespace 0 types",
          "[config][instances]") {
  const LoadResult r = load(machine("urn:inst:DataHolderType", R"("members": {
      "Plus": {"value": {"Id": 1, "Name": "", "Limits": [], "Mode": 0, "Inner": {"A": 2, "Note": "n"}, "Extra": 9}},
      "Choice": {"value": {"Text": "x"}},
      "Inners": {"value": [{"A": 1}, {"A": 2}]},
      "Unit": {"value": {"NamespaceUri": "http://www.opcfoundation.org/UA/units/un/cefact", "UnitId": 4408652,
                         "DisplayName": {"locale": "en", "text": "°C"}, "Description": "degree Celsius"}},
      "Modes": {"value": ["Idle", 1, "Stopped"]}})"));
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  // Inherited fields first, then Extra; Inner with its EncodingMask bit 0 set and Note.
  CHECK(body_of(b.value("M1.Plus")) == std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0,   0, 0, 0, 0,
                                                            0, 0, 0, 0, 0, 1, 0,   0, 0, 2, 0,
                                                            0, 0, 1, 0, 0, 0, 'n', 9, 0, 0, 0});
  CHECK(body_of(b.value("M1.Choice")) == std::vector<uint8_t>{2, 0, 0, 0, 1, 0, 0, 0, 'x'});
  const ua::Variant inners = b.value("M1.Inners");
  const auto* list = inners.get_if<std::vector<ua::ExtensionObject>>();
  REQUIRE(list);
  REQUIRE(list->size() == 2);
  CHECK((*list)[1].type_id() == ua::NodeId(b.inst, 5303));
  // Namespace 0's EUInformation by its field names comes back decoded, as the generated type.
  const ua::Variant unit = b.value("M1.Unit");
  const auto* eu = unit.get_if<ua::ExtensionObject>()->get<ua::EUInformation>();
  REQUIRE(eu);
  CHECK(eu->unit_id == 4408652);
  CHECK(eu->display_name.text.view() == "°C");
  CHECK(b.value("M1.Modes") == ua::Variant(std::vector<int32_t>{0, 1, 5}));
}

TEST_CASE("instances: a VariableType's declarations for a variable", "[config][instances]") {
  const LoadResult r = load(R"({"namespaces": ["urn:app"], "nodes": [
    {"kind": "variable", "name": "Length", "data_type": "Double", "value": 3.0,
     "type_definition": "urn:inst:MeasurementType", "members": {"Unit": {"value": "m"}}}]})");
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  CHECK(b.target("Length", ua::id::HasTypeDefinition) == ua::NodeId(b.inst, 2001));
  CHECK(b.value("Length.Unit") == ua::Variant(ua::String("m")));
  CHECK(b.parent_reference("Length.Unit") == ua::NodeId(0, ua::id::HasProperty));
}

TEST_CASE("instances: a child the node file declares replaces the declaration of its name",
          "[config][instances]") {
  const LoadResult r = load(machine("urn:inst:MachineType", R"("children": [
      {"kind": "variable", "name": "Speed", "data_type": "Float", "value": 1.0},
      {"kind": "object", "name": "Tool1"}])"));
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  CHECK(b.value("M1.Speed") == ua::Variant(1.0f));
  CHECK(b.exists("M1.Tool1"));  // what the <Tools> placeholder stands for
}

TEST_CASE("instances: errors name the file, the JSON path and the reason", "[config][instances]") {
  struct Case {
    std::string nodes, path, reason;
  };
  const std::vector<Case> cases = {
      {machine("urn:inst:NoSuchType"), "/nodes/0/type_definition",
       "has no ObjectType with the BrowseName \"NoSuchType\""},
      {machine("urn:nowhere:MachineType"), "/nodes/0/type_definition", "unknown type definition"},
      {machine("urn:inst:TwinType"), "/nodes/0/type_definition", "ambiguous type definition"},
      {machine("nsu=urn:nowhere;i=1"), "/nodes/0/type_definition", "unknown namespace \"urn:nowhere\""},
      {machine("nsu=urn:inst;i=9999"), "/nodes/0/type_definition", "unknown type definition"},
      {machine("nsu=urn:inst;i=6001"), "/nodes/0/type_definition", "is a Variable, not an ObjectType"},
      {machine("urn:inst:MeasurementType"), "/nodes/0/type_definition", "has no ObjectType"},
      {machine("urn:inst:INameplateType"), "/nodes/0/type_definition", "is an abstract type"},
      {machine("nsu=urn:inst;x=1"), "/nodes/0/type_definition", "invalid NodeId"},
      {machine("urn:inst:MachineType", R"("members": {"Nope": {}})"), "/members/Nope",
       "no instance declaration \"Nope\""},
      {machine("urn:inst:MachineType", R"("members": {"Motor/Nope": {}})"), "/members/Motor~1Nope",
       "no instance declaration"},
      {machine("urn:inst:MachineType", R"("members": {"<Tools>": {}})"), "/members/<Tools>",
       "is a placeholder"},
      {machine("urn:inst:MachineType", R"("members": {"Motor": {"value": 1}})"), "/members/Motor/value",
       "only variables and properties have \"value\""},
      {machine("urn:inst:MachineType", R"("members": {"Speed": {"value": "fast"}})"), "/members/Speed/value",
       "does not fit DataType Double"},
      {machine("urn:inst:MachineType", R"("members": {"Mode": {"value": "Flying"}})"), "/members/Mode/value",
       "has no field \"Flying\""},
      {machine("urn:inst:MachineType", R"("members": {"Mode": {"value": 3}})"), "/members/Mode/value",
       "has no value 3"},
      {machine("urn:inst:MachineType", R"("members": {"Config": {"value": {"Id": 1}}})"),
       "/members/Config/value", "missing field \"Name\""},
      {machine(
           "urn:inst:MachineType",
           R"("members": {"Config": {"value": {"Id": 1, "Name": "", "Limits": [], "Mode": 0, "Inner": {"A": 1, "B": 2}}}})"),
       "/members/Config/value/Inner/B", "unknown field of Inner (fields: A Note)"},
      {machine(
           "urn:inst:MachineType",
           R"("members": {"Config": {"value": {"Id": 1, "Name": "", "Limits": 5, "Mode": 0, "Inner": {"A": 1}}}})"),
       "/members/Config/value/Limits", "expected an array"},
      {machine(
           "urn:inst:MachineType",
           R"("members": {"Config": {"value": {"Id": -1, "Name": "", "Limits": [], "Mode": 0, "Inner": {"A": 1}}}})"),
       "/members/Config/value/Id", "does not fit DataType UInt32"},
      {machine("urn:inst:MachineType", R"("members": {"Config": {"value": [1]}})"), "/members/Config/value",
       "must be a scalar"},
      {machine("urn:inst:DataHolderType", R"("members": {"Choice": {"value": {"Number": 1, "Text": "x"}}})"),
       "/members/Choice/value", "a union (ChoiceType) takes one field"},
      {machine(
           "urn:inst:MachineType",
           R"("members": {"Motor/Temperature": {"simulation": {"kind": "sine"}}, "Start": {"access": ["read"]}})"),
       "/members/Start/access", "only variables and properties"},
      {machine("urn:inst:MachineType", R"("members": {"Mode": {"simulation": {"kind": "sine"}}})"),
       "/members/Mode/simulation", "simulation needs a scalar numeric DataType"},
      {machine("urn:inst:MachineType",
               R"("members": {"Speed": {}}, "children": [{"kind": "object", "name": "Speed"}])"),
       "/members/Speed", "is declared by the node file itself"},
      {machine("BaseObjectType", R"("members": {"Speed": {}})"), "/nodes/0/members",
       "applies only to instances"},
      {R"({"namespaces": ["urn:app"], "nodes": [{"kind": "object", "name": "M{n}", "count": 2,
          "type_definition": "urn:inst:MachineType"}]})",
       "/nodes/0/count", "a bulk declaration cannot be an instance of a NodeSet2 type"},
      {machine("urn:inst:MachineType", R"("members": {"Speed": 5})"), "/nodes/0/members/Speed",
       "expected an object"},
  };
  for (const Case& c : cases) {
    INFO(c.nodes);
    const LoadResult r = load(c.nodes);
    INFO(errors_text(r.errors));
    const std::string path = c.path.starts_with("/members") ? "/nodes/0" + c.path : c.path;
    CHECK(has_error(r, path, c.reason));
  }
}

TEST_CASE("instances: a reload keeps the members' cells and live values", "[config][instances]") {
  const std::string nodes = machine("urn:inst:MachineType", R"("members": {"SerialNumber": {"value": "A"}})");
  const LoadResult first = load(nodes);
  REQUIRE(first.ok());
  Built b(first);
  auto* speed = b.store().variable(b.find("M1.Speed"))->cell;
  ua::DataValue dv;
  dv.value = ua::Variant(77.0);
  b.space.values().write(*speed, dv, *b.p);

  SECTION("unchanged: same cells, the live value stays") {
    const LoadResult again = load(nodes);
    REQUIRE(again.ok());
    const ReloadOutcome out = reload_address_space(b.config, again.config, b.space, *b.p);
    INFO(errors_text(out.errors));
    REQUIRE(out.errors.empty());
    CHECK(out.values_reset == 0);
    CHECK(b.store().variable(b.find("M1.Speed"))->cell == speed);
    CHECK(b.value("M1.Speed") == ua::Variant(77.0));
  }
  SECTION("a member's value changed: that one is replaced, the others stay") {
    const LoadResult again =
        load(machine("urn:inst:MachineType", R"("members": {"SerialNumber": {"value": "B"}})"));
    REQUIRE(again.ok());
    const ReloadOutcome out = reload_address_space(b.config, again.config, b.space, *b.p);
    REQUIRE(out.errors.empty());
    CHECK(out.values_reset == 1);
    CHECK(b.value("M1.SerialNumber") == ua::Variant(ua::String("B")));
    CHECK(b.value("M1.Speed") == ua::Variant(77.0));
  }
}

TEST_CASE("instances: a MachineIdentification of the published Machinery specification",
          "[config][instances]") {
  if (!std::filesystem::exists(kCompanion / "Machinery/Opc.Ua.Machinery.NodeSet2.xml")) {
    WARN("no companion specifications in " << kCompanion.string() << ": skipped");
    return;
  }
  const LoadResult r =
      load(R"({"namespaces": ["urn:app"], "nodes": [
    {"kind": "object", "name": "Press", "type_definition": "http://opcfoundation.org/UA/Machinery/:MachineIdentificationType",
     "members": {"Manufacturer": {"value": "ACME"}, "SerialNumber": {"value": "4711"},
                 "ProductInstanceUri": {"value": "urn:acme:4711"}, "YearOfConstruction": {"value": 2024}}},
    {"kind": "object", "name": "State", "type_definition": "nsu=http://opcfoundation.org/UA/Machinery/;i=1002"}]})",
           {"DI/Opc.Ua.Di.NodeSet2.xml", "Machinery/Opc.Ua.Machinery.NodeSet2.xml"}, kCompanion);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  CHECK(b.value("Press.Manufacturer") == ua::Variant(ua::LocalizedText{ua::String(), ua::String("ACME")}));
  CHECK(b.value("Press.SerialNumber") == ua::Variant(ua::String("4711")));
  CHECK(b.value("Press.YearOfConstruction") == ua::Variant(uint16_t{2024}));
  // MachineryItemState_StateMachineType: CurrentState from namespace 0's FiniteStateMachineType, with its Id.
  CHECK(b.exists("State.CurrentState"));
  CHECK(b.exists("State.CurrentState.Id"));
}

TEST_CASE("instances: a declared variable of a namespace 0 structure takes its fields by name",
          "[config][instances]") {
  LoadResult r = load_config_text("{}", "server.json", ".");
  load_node_file_text(R"({"namespaces": ["urn:app"], "nodes": [
    {"kind": "variable", "name": "Build", "data_type": "BuildInfo", "value": {"ProductUri": "urn:p",
     "ManufacturerName": "ACME", "ProductName": "P", "SoftwareVersion": "1.0", "BuildNumber": "7",
     "BuildDate": "2024-05-01T12:00:00Z"}},
    {"kind": "variable", "name": "Bad", "data_type": "BuildInfo", "value": {"ProductUri": 5}}]})",
                      "app.json", r);
  check_references(r);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].path == "/nodes/1/value/ProductUri");
  CHECK(r.errors[0].reason == "value does not fit DataType String");
  const ua::Variant& v = r.config.nodes[0].value;
  const auto* e = v.get_if<ua::ExtensionObject>();
  REQUIRE(e);
  const auto* info = e->get<ua::BuildInfo>();
  REQUIRE(info);
  CHECK(info->manufacturer_name.view() == "ACME");
  CHECK(info->build_number.view() == "7");
}

TEST_CASE("instances: a declared variable of a NodeSet2 file's DataType, by NodeId or qualified name",
          "[config][instances]") {
  const LoadResult r = load(R"({"namespaces": ["urn:app"], "nodes": [
    {"kind": "variable", "name": "Config", "data_type": "urn:inst:ConfigType", "access": ["read", "write"],
     "value": {"Id": 1, "Name": "", "Limits": [1.5], "Mode": "Running", "Inner": {"A": 2}}},
    {"kind": "variable", "name": "Mode", "data_type": "nsu=urn:inst;i=3001", "value": "Stopped"},
    {"kind": "variable", "name": "Modes", "data_type": "urn:inst:ModeEnum", "value_rank": 1, "value": ["Idle", 1]},
    {"kind": "property", "name": "Inner", "data_type": "urn:inst:Inner"}]})");
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  const auto& st = b.store();
  CHECK(st.node_id(st.variable(b.find("Config"))->data_type) == ua::NodeId(b.inst, 3002));
  CHECK(st.node_id(st.variable(b.find("Mode"))->data_type) == ua::NodeId(b.inst, 3001));
  const ua::Variant config = b.value("Config");
  CHECK(config.get_if<ua::ExtensionObject>()->type_id() == ua::NodeId(b.inst, 5302));
  // Id, Name (empty), Limits [1.5], Mode 1, Inner {EncodingMask 0, A 2}.
  CHECK(body_of(config) == std::vector<uint8_t>{1, 0, 0,    0,    0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
                                                0, 0, 0xF8, 0x3F, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0});
  CHECK(b.value("Mode") == ua::Variant(int32_t{5}));
  CHECK(b.value("Modes") == ua::Variant(std::vector<int32_t>{0, 1}));
  // No value given: the variable has the DataType and a null value, as a node file's other variables.
  CHECK(st.node_id(st.variable(b.find("Inner"))->data_type) == ua::NodeId(b.inst, 3003));
  CHECK(b.value("Inner").is_empty());
}

TEST_CASE("instances: errors of a declared variable's NodeSet2 DataType", "[config][instances]") {
  struct Case {
    std::string variable, path, reason;
  };
  const std::vector<Case> cases = {
      {R"("data_type": "urn:inst:NoSuchType")", "/nodes/0/data_type",
       "unknown DataType \"urn:inst:NoSuchType\": namespace urn:inst has no DataType with the BrowseName "
       "\"NoSuchType\""},
      {R"("data_type": "urn:inst:MachineType")", "/nodes/0/data_type", "has no DataType"},
      {R"("data_type": "nsu=urn:inst;i=1001")", "/nodes/0/data_type", "is an ObjectType, not a DataType"},
      {R"("data_type": "nsu=urn:inst;i=9999")", "/nodes/0/data_type", "unknown DataType"},
      {R"("data_type": "urn:nowhere:Foo")", "/nodes/0/data_type", "unknown DataType \"urn:nowhere:Foo\""},
      {R"("data_type": "urn:inst:Inner", "value": {"A": 1, "B": 2})", "/nodes/0/value/B",
       "unknown field of Inner (fields: A Note)"},
      {R"("data_type": "urn:inst:ModeEnum", "value": "Flying")", "/nodes/0/value", "has no field \"Flying\""},
      {R"("data_type": "urn:inst:Inner", "value_rank": 1, "array_dimensions": [1], "value": [{"A": 1}, {"A": 2}])",
       "/nodes/0/value", "value is longer than array_dimensions allows"},
      {R"("data_type": "urn:inst:Inner", "simulation": {"kind": "counter"})", "/nodes/0/simulation",
       "simulation needs a scalar numeric DataType"},
  };
  for (const Case& c : cases) {
    const std::string nodes =
        R"({"namespaces": ["urn:app"], "nodes": [{"kind": "variable", "name": "V", )" + c.variable + "}]}";
    INFO(nodes);
    const LoadResult r = load(nodes);
    INFO(errors_text(r.errors));
    CHECK(has_error(r, c.path, c.reason));
  }
}

TEST_CASE("instances: a variable of the published Machinery Result specification's ProcessingTimesDataType",
          "[config][instances]") {
  if (!std::filesystem::exists(kCompanion / "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml")) {
    WARN("no companion specifications in " << kCompanion.string() << ": skipped");
    return;
  }
  const LoadResult r = load(R"({"namespaces": ["urn:app"], "nodes": [
    {"kind": "variable", "name": "LastCycle", "access": ["read", "write"],
     "data_type": "http://opcfoundation.org/UA/Machinery/Result/:ProcessingTimesDataType",
     "value": {"StartTime": "2026-01-05T06:00:00Z", "EndTime": "2026-01-05T06:00:12Z", "ProcessingDuration": 1500}}]})",
                            {"DI/Opc.Ua.Di.NodeSet2.xml", "Machinery/Opc.Ua.Machinery.NodeSet2.xml",
                             "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml"},
                            kCompanion);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  const ua::Variant v = b.value("LastCycle");
  const std::vector<uint8_t> body = body_of(v);
  // EncodingMask: AcquisitionDuration (bit 0) left out, ProcessingDuration (bit 1) given; two DateTimes;
  // one Double.
  REQUIRE(body.size() == 4 + 8 + 8 + 8);
  CHECK(body[0] == 2);
  double ms = 0;
  std::memcpy(&ms, body.data() + 20, sizeof ms);  // little-endian IEEE 754 (Part 6 §5.2.2.3), as this host
  CHECK(ms == 1500.0);
}
