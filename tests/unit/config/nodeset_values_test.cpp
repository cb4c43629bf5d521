// Values of the structures NodeSet2 files define (config/nodeset_values.cpp): the XML bodies of
// nodesets/types_values.xml become the Default Binary bodies (Part 6 §5.2.7) of types.xml's structures,
// which the structure codecs built from the same definitions take byte for byte; a value that does not fit
// its definition is an error naming its file and line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "addressspace/structure_codec.hpp"
#include "addressspace/type_check.hpp"
#include "addressspace/value_store.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "tests/unit/config/nodeset_support.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad;
using namespace opcuad::config;
using namespace opcuad::nodeset_test;

namespace {

// types.xml and types_more.xml, then NodeSet2 texts (name, text).
LoadResult load_with(const std::vector<std::pair<std::string, std::string>>& files) {
  LoadResult r = load_config_text("{}", "server.json", ".");
  load_nodeset_file_text(read_file(kFixtures / "types.xml"), "types.xml", r);
  load_nodeset_file_text(read_file(kFixtures / "types_more.xml"), "types_more.xml", r);
  for (const auto& [name, text] : files) load_nodeset_file_text(text, name, r);
  resolve_nodesets(r);
  check_references(r);
  return r;
}

struct Space : nodeset_test::BuiltSpace {
  using BuiltSpace::BuiltSpace;
  ua::Variant value(const ua::NodeId& id) const {
    const auto n = store().find(id);
    INFO(id.to_string());
    REQUIRE(n != addressspace::kNoNode);
    const auto* v = store().variable(n);
    REQUIRE(v);
    ua::DataValue dv;
    addressspace::ValueStore::read(*v->cell, dv);
    return dv.value;
  }
};

std::vector<uint8_t> bytes_of(const ua::ByteBuffer& b) {
  return {b.span().begin(), b.span().end()};
}
std::vector<uint8_t> bytes_of(const ua::ByteString& b) {
  return {b.bytes().begin(), b.bytes().end()};
}

// A nodeset that requires urn:types (its ns=2) with one Variable of DataType `type` whose Value is `value`.
std::string values_file(const std::string& type, const std::string& value) {
  return R"(<?xml version="1.0"?>
<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd"
           xmlns:uax="http://opcfoundation.org/UA/2008/02/Types.xsd">
  <NamespaceUris><Uri>urn:bad</Uri><Uri>urn:types</Uri><Uri>urn:types:more</Uri></NamespaceUris>
  <Models><Model ModelUri="urn:bad"><RequiredModel ModelUri="urn:types" /></Model></Models>
  <UAVariable NodeId="ns=1;i=1" BrowseName="1:V" DataType=")" +
         type + R"("><DisplayName>V</DisplayName>
    <Value>)" +
         value + R"(</Value>
  </UAVariable>
</UANodeSet>
)";
}

std::string extension_object(const std::string& type_id, const std::string& body) {
  return "<uax:ExtensionObject><uax:TypeId><uax:Identifier>" + type_id +
         "</uax:Identifier></uax:TypeId>\n<uax:Body>" + body + "</uax:Body></uax:ExtensionObject>";
}

}  // namespace

TEST_CASE("XML values of the structures NodeSet2 files define become their Default Binary bodies") {
  const LoadResult r = load_with({{"types_values.xml", read_file(kFixtures / "types_values.xml")}});
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  CHECK(r.config.imported.undecoded.empty());
  Space s(r);
  const uint16_t v = namespace_of(r.config, "urn:types:values");
  const uint16_t t = namespace_of(r.config, "urn:types");
  const uint16_t more = namespace_of(r.config, "urn:types:more");
  const addressspace::StructureCodecs codecs(s.store());

  // The value of variable `i`: one ExtensionObject with a binary body of `type`'s Default Binary encoding,
  // which that type's codec transcodes byte for byte.
  auto body = [&](uint32_t i, const ua::NodeId& type) {
    const ua::Variant value = s.value(ua::NodeId(v, i));
    const auto* eo = value.get_if<ua::ExtensionObject>();
    REQUIRE(eo);
    CHECK(eo->encoding() == ua::ExtensionObject::Encoding::ByteString);
    const auto n = s.store().find(type);
    const auto* def = s.store().data_type_definition(n)->get<ua::StructureDefinition>();
    REQUIRE(def);
    CHECK(eo->type_id() == def->default_encoding_id);
    ua::ByteBuffer out;
    CHECK(codecs.transcode_body(codecs.find(n), eo->body().bytes(), out) == ua::status::Good);
    CHECK(bytes_of(out) == bytes_of(eo->body()));
    return bytes_of(eo->body());
  };
  ua::ByteBuffer expected;
  ua::Encoder e(expected);

  SECTION("nested structures, an array of them, an enumeration, a String, a structure of another file") {
    e.write_i32(7);
    e.write_f64(1.5);
    e.write_i32(2);
    e.write_f64(2.5);
    e.write_f64(3.5);
    e.write_i32(5);  // On_5
    ua::encode(e, ua::String("abc"));
    e.write_u32(9);
    CHECK(body(1, ua::NodeId(t, 3001)) == bytes_of(expected));
  }
  SECTION("optional fields: the EncodingMask, absent fields their defaults; a TypeId naming the DataType") {
    e.write_u32(1);  // Extra present
    e.write_i32(7);
    e.write_f64(1.5);
    e.write_i32(-1);              // Inners absent: a null array
    e.write_i32(0);               // Mode
    ua::encode(e, ua::String());  // Label: null
    e.write_u32(0);               // Far.Code
    e.write_f64(4);
    CHECK(body(2, ua::NodeId(t, 3002)) == bytes_of(expected));
  }
  SECTION("a union") {
    e.write_u32(2);
    ua::encode(e, ua::String("x"));
    CHECK(body(3, ua::NodeId(t, 3005)) == bytes_of(expected));
  }
  SECTION("an array of structures") {
    const ua::Variant value = s.value(ua::NodeId(v, 4));
    const auto* list = value.get_if<std::vector<ua::ExtensionObject>>();
    REQUIRE(list);
    REQUIRE(list->size() == 2);
    CHECK((*list)[1].type_id() == ua::NodeId(t, 5103));
    e.write_f64(2);
    CHECK(bytes_of((*list)[1].body()) == bytes_of(expected));
  }
  SECTION("fields of abstract DataTypes: a Variant, an ExtensionObject; an OptionSet; an array of unions") {
    ua::encode(e, ua::Variant(int32_t{5}));
    ua::ByteBuffer inner;
    ua::Encoder ie(inner);
    ie.write_f64(1);
    ua::encode(e,
               ua::ExtensionObject::undecoded(ua::NodeId(t, 5103), ua::ExtensionObject::Encoding::ByteString,
                                              ua::ByteString::from_bytes(inner.span())));
    e.write_u32(5);  // Flags, an OptionSet of UInt32
    e.write_i32(2);
    e.write_u32(1);
    e.write_i32(3);
    e.write_u32(0);
    e.write_i32(-1);  // Grid, a matrix field left out: a null Dimensions array
    CHECK(body(5, ua::NodeId(t, 3009)) == bytes_of(expected));
  }
  SECTION("a field that allows subtypes holds a structure of another file") {
    ua::ByteBuffer far;
    ua::Encoder fe(far);
    fe.write_u32(4);
    ua::encode(
        e, ua::ExtensionObject::undecoded(ua::NodeId(more, 5001), ua::ExtensionObject::Encoding::ByteString,
                                          ua::ByteString::from_bytes(far.span())));
    CHECK(body(6, ua::NodeId(t, 3010)) == bytes_of(expected));
  }
  SECTION("a structure that nests itself") {
    for (int32_t x : {2, 1, -1, -1}) e.write_i32(x);
    CHECK(body(7, ua::NodeId(t, 3008)) == bytes_of(expected));
  }
}

TEST_CASE("A structure value that does not fit its definition is an error naming file and line") {
  struct Case {
    const char* what;
    std::string type, value;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"an element that is no field", "ns=2;i=3003",
       extension_object("ns=2;i=5103", "<Inner xmlns=\"urn:types\"><V>1</V><W>2</W></Inner>"),
       "<W> is no field of"},
      {"a field of the wrong type", "ns=2;i=3003",
       extension_object("ns=2;i=5103", "<Inner xmlns=\"urn:types\"><V>x</V></Inner>"), "Value:"},
      {"a SwitchField out of range", "ns=2;i=3005",
       extension_object("ns=2;i=5105", "<Choice xmlns=\"urn:types\"><SwitchField>3</SwitchField></Choice>"),
       "SwitchField 3 is out of range"},
      {"an enumeration value that is no number", "ns=2;i=3001",
       extension_object("ns=2;i=5101", "<Outer xmlns=\"urn:types\"><Mode>On</Mode></Outer>"),
       "not an enumeration value"},
      {"an abstract structure", "ns=2;i=3007",
       extension_object("ns=2;i=3007", "<Envelope xmlns=\"urn:types\" />"), "is abstract"},
      {"a matrix field without Dimensions", "ns=2;i=3009",
       extension_object("ns=2;i=5109", "<Holder xmlns=\"urn:types\"><Grid><Int32>1</Int32></Grid></Holder>"),
       "field Grid: a matrix field needs its <Dimensions>"},
      {"a matrix field with fewer elements than its dimensions", "ns=2;i=3009",
       extension_object("ns=2;i=5109",
                        "<Holder xmlns=\"urn:types\"><Grid><Dimensions><Int32>2</Int32>"
                        "<Int32>2</Int32></Dimensions><Elements><Int32>1</Int32></Elements>"
                        "</Grid></Holder>"),
       "field Grid: the matrix has 1 elements, its Dimensions multiply to 4"},
      {"a matrix field of dimensions too large to multiply", "ns=2;i=3009",
       extension_object("ns=2;i=5109",
                        "<Holder xmlns=\"urn:types\"><Grid><Dimensions><Int32>2147483647</Int32>"
                        "<Int32>2147483647</Int32></Dimensions></Grid></Holder>"),
       "field Grid: the matrix has 0 elements, its Dimensions multiply to more than 1099511627776"},
      {"a matrix field of another rank", "ns=2;i=3009",
       extension_object("ns=2;i=5109",
                        "<Holder xmlns=\"urn:types\"><Grid><Dimensions><Int32>1</Int32>"
                        "</Dimensions><Elements><Int32>1</Int32></Elements></Grid></Holder>"),
       "field Grid: 1 dimensions for ValueRank 2"},
      {"a negative matrix dimension", "ns=2;i=3009",
       extension_object("ns=2;i=5109",
                        "<Holder xmlns=\"urn:types\"><Grid><Dimensions><Int32>-1</Int32>"
                        "<Int32>1</Int32></Dimensions></Grid></Holder>"),
       "a matrix dimension must not be negative"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const LoadResult r = load_with({{"bad.xml", values_file(c.type, c.value)}});
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].file == "bad.xml");
    CHECK(r.errors[0].path.starts_with("line "));
    CHECK(r.errors[0].path != "line 0");
    INFO(r.errors[0].reason);
    CHECK(r.errors[0].reason.find(c.reason) != std::string::npos);
  }
}

TEST_CASE(
    "A matrix field of a structure value in XML: Dimensions and Elements, the inline matrix in binary") {
  const std::string grid =
      "<Grid><Dimensions><Int32>2</Int32><Int32>3</Int32></Dimensions><Elements><Int32>1</Int32><Int32>2</"
      "Int32>"
      "<Int32>3</Int32><Int32>4</Int32><Int32>5</Int32><Int32>6</Int32></Elements></Grid>";
  const LoadResult r =
      load_with({{"grid.xml",
                  values_file("ns=2;i=3009", extension_object("ns=2;i=5109", "<Holder xmlns=\"urn:types\">" +
                                                                                 grid + "</Holder>"))}});
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space b(r);
  const ua::Variant v = b.value(ua::NodeId(namespace_of(r.config, "urn:bad"), 1));
  const auto* eo = v.get_if<ua::ExtensionObject>();
  REQUIRE(eo);
  REQUIRE(!eo->is_decoded());
  // The last field: Dimensions [2, 3] as an Int32 array, then the six values (Part 6 §5.2.5).
  ua::ByteBuffer tail;
  ua::Encoder e(tail);
  e.write_i32(2);
  e.write_i32(2);
  e.write_i32(3);
  for (int32_t i = 1; i <= 6; ++i) e.write_i32(i);
  const std::vector<uint8_t> body = bytes_of(eo->body());
  const std::vector<uint8_t> expected = bytes_of(tail);
  REQUIRE(body.size() >= expected.size());
  CHECK(std::vector<uint8_t>(body.end() - static_cast<std::ptrdiff_t>(expected.size()), body.end()) ==
        expected);
  // The store's codec takes the body back byte for byte, as a client's Write of it would be checked.
  const addressspace::NodeStore& store = b.store();
  const auto* var = store.variable(store.find(ua::NodeId(namespace_of(r.config, "urn:bad"), 1)));
  REQUIRE(var);
  ua::ByteBuffer scratch;
  CHECK(addressspace::check_structures(store, *var, v, ua::DecodeLimits{}, scratch) == ua::status::Good);
}
