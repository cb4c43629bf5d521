// Objects whose type a node file declares get copies of the type's instance declarations (Part 3 §6.4):
// what the instance declares itself wins, a subtype's declaration hides its supertype's, and object
// declarations are instantiated in turn.
#include <catch2/catch.hpp>

#include <algorithm>

#include "addressspace/address_space.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::config;

namespace {

constexpr const char* kNodes = R"({"namespaces": ["urn:t"],
 "object_types": [
   {"name": "MotorType", "base": "BaseObjectType", "children": [
      {"kind": "variable", "name": "Current", "data_type": "Double", "value": 1.5}]},
   {"name": "PumpType", "base": "BaseObjectType", "children": [
      {"kind": "variable", "name": "Speed", "data_type": "Double", "value": 0.0, "eu_range": {"low": 0, "high": 3000}},
      {"kind": "object", "name": "Motor", "type_definition": "MotorType"},
      {"kind": "property", "name": "Vendor", "data_type": "String", "value": "ACME"}]},
   {"name": "BigPumpType", "base": "PumpType", "children": [
      {"kind": "variable", "name": "Speed", "data_type": "Double", "value": 5.0},
      {"kind": "variable", "name": "Pressure", "data_type": "Double", "value": 2.0, "access": ["read", "write"]}]}],
 "nodes": [{"kind": "folder", "name": "Line", "children": [
   {"kind": "object", "name": "P1", "type_definition": "PumpType", "children": [
      {"kind": "variable", "name": "Speed", "data_type": "Double", "value": 1450.0}]},
   {"kind": "object", "name": "P2", "type_definition": "BigPumpType"}]}]})";

struct Built {
  addressspace::AddressSpace space;
  uint16_t ns = 0;
  std::vector<ConfigError> errors;

  Built() {
    LoadResult r = load_config_text(R"({"namespaces": ["urn:t"]})", "server.json", ".");
    load_node_file_text(kNodes, "nodes.json", r);
    check_references(r);
    REQUIRE(r.errors.empty());
    const auto& uris = r.config.namespaces;
    ns = static_cast<uint16_t>(std::find(uris.begin(), uris.end(), "urn:t") - uris.begin());
    auto* p = space.reclaimer().register_participant();
    errors = build_address_space(r.config, space, *p);
    space.reclaimer().go_offline(*p);
  }
  addressspace::NodeIndex find(const std::string& id) const {
    return space.current()->find(ua::NodeId(ns, ua::String(id)));
  }
  ua::Variant value(const std::string& id) const {
    const auto* v = space.current()->variable(find(id));
    REQUIRE(v != nullptr);
    ua::DataValue dv;
    addressspace::ValueStore::read(*v->cell, dv);
    return dv.value;
  }
  bool refers(const std::string& from, uint32_t ref_type, addressspace::NodeIndex to) const {
    const auto& s = *space.current();
    for (const auto& r : s.references(find(from))) {
      if (!r.is_inverse && r.target == to &&
          s.node_id(s.reference_type_node(r.type)) == ua::NodeId(0, ref_type))
        return true;
    }
    return false;
  }
};

}  // namespace

TEST_CASE("config: instances of declared object types get the type's declarations", "[config]") {
  Built b;
  REQUIRE(b.errors.empty());
  // P1 declares Speed itself: its own value, and none of the type's Speed properties.
  CHECK(b.value("Line.P1.Speed") == ua::Variant(1450.0));
  CHECK(b.find("Line.P1.Speed.EURange") == addressspace::kNoNode);
  // The declarations it does not declare are copied, with their values and their own declarations.
  CHECK(b.value("Line.P1.Vendor") == ua::Variant(ua::String("ACME")));
  REQUIRE(b.find("Line.P1.Motor") != addressspace::kNoNode);
  CHECK(b.value("Line.P1.Motor.Current") == ua::Variant(1.5));
  CHECK(b.refers("Line.P1", ua::id::HasProperty, b.find("Line.P1.Vendor")));
  CHECK(b.refers("Line.P1", ua::id::HasComponent, b.find("Line.P1.Motor")));
  CHECK(b.refers("Line.P1.Motor", ua::id::HasComponent, b.find("Line.P1.Motor.Current")));

  // P2 (BigPumpType, a subtype of PumpType): the subtype's Speed hides PumpType's, so no EURange either;
  // the rest comes from both.
  CHECK(b.value("Line.P2.Speed") == ua::Variant(5.0));
  CHECK(b.find("Line.P2.Speed.EURange") == addressspace::kNoNode);
  CHECK(b.value("Line.P2.Pressure") == ua::Variant(2.0));
  CHECK(b.value("Line.P2.Vendor") == ua::Variant(ua::String("ACME")));
  CHECK(b.value("Line.P2.Motor.Current") == ua::Variant(1.5));
  // A copy has the declaration's access level (Pressure is writable) and type definition.
  const auto* pressure = b.space.current()->variable(b.find("Line.P2.Pressure"));
  REQUIRE(pressure != nullptr);
  CHECK((pressure->access_level & 2) != 0);
  CHECK(b.refers("Line.P2.Motor", ua::id::HasTypeDefinition, b.find("MotorType")));
}
