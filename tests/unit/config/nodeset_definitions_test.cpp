// The DataTypeDefinition attribute of the DataTypes NodeSet2 files define (docs/CONFIGURATION.md,
// "NodeSet2 node files"): the fixtures nodesets/types.xml and types_more.xml for every kind of
// definition, errors with their line, and the companion specifications' structures.
#include <catch2/catch.hpp>

#include <filesystem>

#include "addressspace/structure_codec.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "tests/unit/config/nodeset_support.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad;
using namespace opcuad::config;
using namespace opcuad::nodeset_test;

namespace {

// The address space of a loaded configuration.
struct Space : nodeset_test::BuiltSpace {
  using BuiltSpace::BuiltSpace;
  const ua::ExtensionObject* definition(const ua::NodeId& id) const {
    const auto n = store().find(id);
    INFO(id.to_string());
    REQUIRE(n != addressspace::kNoNode);
    return store().data_type_definition(n);
  }
  const ua::StructureDefinition& structure(const ua::NodeId& id) const {
    const ua::ExtensionObject* d = definition(id);
    INFO(id.to_string());
    REQUIRE(d);
    const auto* s = d->get<ua::StructureDefinition>();
    REQUIRE(s);
    return *s;
  }
  const ua::EnumDefinition& enumeration(const ua::NodeId& id) const {
    const ua::ExtensionObject* d = definition(id);
    INFO(id.to_string());
    REQUIRE(d);
    const auto* e = d->get<ua::EnumDefinition>();
    REQUIRE(e);
    return *e;
  }
};

std::vector<std::string> names(const std::vector<ua::StructureField>& fields) {
  std::vector<std::string> out;
  for (const auto& f : fields) out.emplace_back(f.name.view());
  return out;
}

}  // namespace

TEST_CASE("DataTypeDefinition of the structures, unions, enumerations and OptionSets NodeSet2 files define") {
  const LoadResult r = load_files({"types.xml", "types_more.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const uint16_t t = namespace_of(r.config, "urn:types");
  const uint16_t more = namespace_of(r.config, "urn:types:more");

  SECTION("a structure: members defined further down and in a later file, the Default Binary encoding") {
    const auto& d = s.structure(ua::NodeId(t, 3001));
    CHECK(d.structure_type == ua::StructureTypeEnum::Structure);
    CHECK(d.base_data_type == ua::NodeId(0, ua::id::Structure));
    // The second HasEncoding target: the one named Default Binary, not the first (Default XML).
    CHECK(d.default_encoding_id == ua::NodeId(t, 5101));
    REQUIRE(names(d.fields) == std::vector<std::string>{"Count", "Inner", "Inners", "Mode", "Label", "Far"});
    CHECK(d.fields[0].data_type == ua::NodeId(0, ua::id::Int32));
    CHECK(d.fields[0].value_rank == -1);
    CHECK(d.fields[1].data_type == ua::NodeId(t, 3003));  // through an alias
    CHECK(d.fields[2].data_type == ua::NodeId(t, 3003));
    CHECK(d.fields[2].value_rank == 1);
    CHECK(d.fields[2].array_dimensions == std::vector<uint32_t>{4});
    CHECK(d.fields[3].data_type == ua::NodeId(t, 3004));
    CHECK(d.fields[4].max_string_length == 20);
    CHECK(d.fields[4].description.text.view() == "What the operator reads");
    CHECK(d.fields[5].data_type == ua::NodeId(more, 3001));  // the file's ns=2, mapped by URI
    CHECK_FALSE(d.fields[0].is_optional);
    CHECK(s.structure(ua::NodeId(more, 3001)).default_encoding_id == ua::NodeId(more, 5001));
  }
  SECTION("a subtype lists its supertype's fields first; its missing encoding node is created") {
    const auto& d = s.structure(ua::NodeId(t, 3002));
    CHECK(d.structure_type == ua::StructureTypeEnum::StructureWithOptionalFields);
    CHECK(d.base_data_type == ua::NodeId(t, 3001));
    REQUIRE(names(d.fields) ==
            std::vector<std::string>{"Count", "Inner", "Inners", "Mode", "Label", "Far", "Extra"});
    CHECK(d.fields[6].is_optional);
    const ua::NodeId encoding(t, ua::String("i=3002.DefaultBinary"));
    CHECK(d.default_encoding_id == encoding);
    const auto n = s.store().find(encoding);
    REQUIRE(n != addressspace::kNoNode);
    CHECK(s.store().browse_name(n) == ua::QualifiedName{0, ua::String("Default Binary")});
    CHECK(s.store().node_class(n) == addressspace::NodeClass::Object);
  }
  SECTION("a union") {
    const auto& d = s.structure(ua::NodeId(t, 3005));
    CHECK(d.structure_type == ua::StructureTypeEnum::Union);
    CHECK(d.base_data_type == ua::NodeId(0, ua::id::Union));
    CHECK(d.default_encoding_id == ua::NodeId(t, 5105));
    CHECK(names(d.fields) == std::vector<std::string>{"Number", "Text"});
  }
  SECTION("an abstract structure with AllowSubTypes has no encoding") {
    const auto& d = s.structure(ua::NodeId(t, 3007));
    CHECK(d.structure_type == ua::StructureTypeEnum::StructureWithSubtypedValues);
    CHECK(d.default_encoding_id.is_null());
    REQUIRE(d.fields.size() == 1);
    CHECK(d.fields[0].data_type == ua::NodeId(0, ua::id::Structure));
    CHECK(d.fields[0].is_optional);  // Part 3 §8.51: in this kind, the field allows subtypes
  }
  SECTION("an enumeration: Name, Value, DisplayName, Description") {
    const auto& e = s.enumeration(ua::NodeId(t, 3004));
    REQUIRE(e.fields.size() == 2);
    CHECK(e.fields[0].name.view() == "Off");
    CHECK(e.fields[0].value == 0);
    CHECK(e.fields[0].display_name.text.view() == "Off");
    CHECK(e.fields[1].value == 5);
    CHECK(e.fields[1].display_name.text.view() == "Switched on");
    CHECK(e.fields[1].description.text.view() == "Running");
  }
  SECTION("an OptionSet: its bits, Value the bit number") {
    const auto& e = s.enumeration(ua::NodeId(t, 3006));
    REQUIRE(e.fields.size() == 2);
    CHECK(e.fields[1].name.view() == "Fault");
    CHECK(e.fields[1].value == 2);
  }
}

TEST_CASE("A Definition that cannot be resolved is an error with its file and line") {
  auto file = [](const std::string& fields, const std::string& more = "") {
    return R"(<?xml version="1.0"?>
<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd">
  <NamespaceUris><Uri>urn:bad</Uri></NamespaceUris>
  <UADataType NodeId="ns=1;i=1" BrowseName="1:Bad">
    <References><Reference ReferenceType="i=45" IsForward="false">i=22</Reference></References>
    <Definition Name="1:Bad">
)" + fields +
           R"(
    </Definition>
  </UADataType>
)" + more + "</UANodeSet>\n";
  };
  auto errors = [](const std::string& text) {
    LoadResult r = load_config_text("{}", "server.json", ".");
    load_nodeset_file_text(text, "bad.xml", r);
    resolve_nodesets(r);
    return errors_text(r.errors);
  };
  SECTION("a field's DataType that exists nowhere") {
    CHECK(errors(file(R"(      <Field Name="A" DataType="ns=1;i=99" />)")) ==
          "bad.xml: line 7: the Definition of DataType ns=2;i=1: field \"A\": ns=2;i=99 exists nowhere\n");
  }
  SECTION("a field's DataType that is not a DataType") {
    CHECK(errors(file(R"(      <Field Name="A" DataType="i=6" />
      <Field Name="B" DataType="i=85" />)")) ==
          "bad.xml: line 8: the Definition of DataType ns=2;i=1: field \"B\": i=85 is not a DataType\n");
  }
  SECTION("optional fields and fields that allow subtypes together") {
    CHECK(errors(file(R"(      <Field Name="A" DataType="i=6" IsOptional="true" />
      <Field Name="B" DataType="i=22" AllowSubTypes="true" />)")) ==
          "bad.xml: line 6: the Definition of DataType ns=2;i=1: optional fields and fields that allow "
          "subtypes together have no StructureType (Part 3 §8.49)\n");
  }
  SECTION("a supertype that cannot be resolved") {
    const std::string sub = R"(  <UADataType NodeId="ns=1;i=2" BrowseName="1:Sub">
    <References><Reference ReferenceType="i=45" IsForward="false">ns=1;i=1</Reference></References>
    <Definition Name="1:Sub"><Field Name="C" DataType="i=6" /></Definition>
  </UADataType>
)";
    const std::string e = errors(file(R"(      <Field Name="A" DataType="ns=1;i=99" />)", sub));
    CHECK(e.find("bad.xml: line 12: the Definition of DataType ns=2;i=2: its supertype ns=2;i=1 has no "
                 "resolvable Definition") != std::string::npos);
  }
}

TEST_CASE("Every structure of the companion specifications has its DataTypeDefinition and Default Binary") {
  if (!std::filesystem::exists(kCompanion / "DI/Opc.Ua.Di.NodeSet2.xml")) {
    WARN("skipped: no companion specifications at " << kCompanion.string());
    return;
  }
  const std::vector<std::string> all = {
      "DI/Opc.Ua.Di.NodeSet2.xml",
      "IA/Opc.Ua.IA.NodeSet2.xml",
      "Machinery/Opc.Ua.Machinery.NodeSet2.xml",
      "Machinery/Opc.Ua.Machinery.Examples.NodeSet2.xml",
      "ISA95-JOBCONTROL/opc.ua.isa95-jobcontrol.nodeset2.xml",
      "Machinery/Jobs/Opc.Ua.Machinery.Jobs.Nodeset2.xml",
      "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml",
      "MachineTool/Opc.Ua.MachineTool.NodeSet2.xml",
      "PackML/Opc.Ua.PackML.NodeSet2.xml",
      "MachineVision/Opc.Ua.MachineVision.NodeSet2.xml",
      "AutoID/Opc.Ua.AutoID.NodeSet2.xml",
      "Robotics/Opc.Ua.Robotics.NodeSet2.xml",
  };
  const LoadResult r = load_files(all, kCompanion);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const auto& store = s.store();
  size_t structures = 0, enumerations = 0;
  for (const ImportedDefinition& d : r.config.imported.definitions) {
    INFO(d.data_type.to_string());
    const ua::ExtensionObject* def = s.definition(d.data_type);
    REQUIRE(def);
    if (def->get<ua::EnumDefinition>()) {
      ++enumerations;
      continue;
    }
    const auto* sd = def->get<ua::StructureDefinition>();
    REQUIRE(sd);
    ++structures;
    CHECK(sd->fields.size() >= d.fields.size());
    bool is_abstract = false;
    for (const ImportedNode& n : r.config.imported.nodes) {
      if (n.spec.node_id == d.data_type) is_abstract = n.spec.is_abstract;
    }
    if (is_abstract) continue;
    const auto e = store.find(sd->default_encoding_id);
    REQUIRE(e != addressspace::kNoNode);
    CHECK(store.browse_name(e) == ua::QualifiedName{0, ua::String("Default Binary")});
    // The files have every concrete structure's encoding node: none is created.
    CHECK(sd->default_encoding_id.type() == ua::IdType::Numeric);
  }
  CHECK(structures > 50);
  CHECK(enumerations > 20);
}

// ---- the structure codecs built from those definitions (addressspace/structure_codec.hpp)

namespace {

struct Codecs {
  explicit Codecs(const Space& s) : space(s), codecs(s.store()) {}
  int of(const ua::NodeId& type) const {
    const int c = codecs.find(space.store().find(type));
    INFO(type.to_string());
    REQUIRE(c >= 0);
    return c;
  }
  // The status of transcoding `body`, and (when Good) that it came out byte for byte.
  ua::StatusCode transcode(int codec, const ua::ByteBuffer& body) const {
    ua::ByteBuffer out;
    const ua::StatusCode st = codecs.transcode_body(codec, body.span(), out);
    if (st.is_good())
      CHECK(std::vector<uint8_t>(out.span().begin(), out.span().end()) ==
            std::vector<uint8_t>(body.span().begin(), body.span().end()));
    return st;
  }
  const Space& space;
  addressspace::StructureCodecs codecs;
};

ua::ByteBuffer truncated(const ua::ByteBuffer& b, size_t drop) {
  ua::ByteBuffer out;
  out.append(b.data(), b.size() - drop);
  return out;
}

}  // namespace

TEST_CASE("Structures the files define transcode by their definitions; malformed bodies are refused") {
  const LoadResult r = load_files({"types.xml", "types_more.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const Codecs c(s);
  const uint16_t t = namespace_of(r.config, "urn:types");
  CHECK(s.store().find(ua::NodeId(t, 3004)) != addressspace::kNoNode);
  CHECK(c.codecs.find(s.store().find(ua::NodeId(t, 3004))) == -1);  // an enumeration has no codec

  // Outer: Count, Inner (nested in place), Inners (an array of them), Mode (an enumeration: Int32),
  // Label, Far (a structure of a later file).
  auto outer = [](int32_t inners) {
    ua::ByteBuffer b;
    ua::Encoder e(b);
    e.write_i32(7);
    e.write_f64(1.5);
    e.write_i32(inners);
    for (int32_t i = 0; i < inners && i < 4; ++i) e.write_f64(2.5 + i);
    e.write_i32(5);
    ua::encode(e, ua::String("abc"));
    e.write_u32(9);
    return b;
  };
  const int o = c.of(ua::NodeId(t, 3001));
  SECTION("a structure with nested structures, an array of them and an enumeration field") {
    CHECK(c.transcode(o, outer(2)) == ua::status::Good);
    CHECK(c.transcode(o, outer(0)) == ua::status::Good);
    CHECK(c.transcode(o, outer(-1)) == ua::status::Good);  // a null array stays null
    CHECK(c.transcode(o, truncated(outer(2), 1)) == ua::status::BadDecodingError);
    ua::ByteBuffer longer = outer(2);
    longer.append("x", 1);
    CHECK(c.transcode(o, longer) == ua::status::BadDecodingError);
  }
  SECTION("array counts beyond the input or the limits cost nothing") {
    ua::ByteBuffer huge;
    ua::Encoder e(huge);
    e.write_i32(7);
    e.write_f64(1.5);
    e.write_i32(0x7FFFFFFF);
    CHECK(c.transcode(o, huge) == ua::status::BadEncodingLimitsExceeded);
    ua::ByteBuffer beyond;
    ua::Encoder e2(beyond);
    e2.write_i32(7);
    e2.write_f64(1.5);
    e2.write_i32(1000);
    e2.write_f64(1.0);
    CHECK(c.transcode(o, beyond) == ua::status::BadDecodingError);
    CHECK(c.transcode(o, truncated(outer(-2), 0)) == ua::status::BadDecodingError);
  }
  SECTION("optional fields: the EncodingMask") {
    const int plus = c.of(ua::NodeId(t, 3002));
    auto with_mask = [&](uint32_t mask, bool extra) {
      ua::ByteBuffer b;
      ua::Encoder e(b);
      e.write_u32(mask);
      const ua::ByteBuffer body = outer(1);
      b.append(body.data(), body.size());
      if (extra) e.write_f64(4.0);
      return b;
    };
    CHECK(c.transcode(plus, with_mask(1, true)) == ua::status::Good);
    CHECK(c.transcode(plus, with_mask(0, false)) == ua::status::Good);
    CHECK(c.transcode(plus, with_mask(0, true)) == ua::status::BadDecodingError);   // a byte too many
    CHECK(c.transcode(plus, with_mask(2, false)) == ua::status::BadDecodingError);  // no such field
  }
  SECTION("a union: the SwitchField") {
    const int u = c.of(ua::NodeId(t, 3005));
    auto choice = [](uint32_t which) {
      ua::ByteBuffer b;
      ua::Encoder e(b);
      e.write_u32(which);
      if (which == 1) e.write_i32(3);
      if (which == 2) ua::encode(e, ua::String("x"));
      return b;
    };
    CHECK(c.transcode(u, choice(0)) == ua::status::Good);
    CHECK(c.transcode(u, choice(1)) == ua::status::Good);
    CHECK(c.transcode(u, choice(2)) == ua::status::Good);
    CHECK(c.transcode(u, choice(3)) == ua::status::BadDecodingError);
    CHECK(c.transcode(u, choice(0xFFFFFFFF)) == ua::status::BadDecodingError);
  }
  SECTION("a field that allows subtypes is an ExtensionObject") {
    const int env = c.of(ua::NodeId(t, 3007));
    ua::ByteBuffer b;
    ua::Encoder e(b);
    ua::encode(e, ua::ExtensionObject());
    CHECK(c.transcode(env, b) == ua::status::Good);
    CHECK(c.transcode(env, truncated(b, 1)) == ua::status::BadDecodingError);
  }
  SECTION("nesting is bounded by the decoder's depth limit") {
    const int tree = c.of(ua::NodeId(t, 3008));
    auto nested = [](int levels) {
      ua::ByteBuffer b;
      ua::Encoder e(b);
      for (int i = 0; i < levels; ++i) e.write_i32(1);
      e.write_i32(0);
      return b;
    };
    CHECK(c.transcode(tree, nested(50)) == ua::status::Good);
    CHECK(c.transcode(tree, nested(5000)) == ua::status::BadEncodingLimitsExceeded);
  }
}

TEST_CASE("A matrix field: a null Dimensions array is a null matrix, a dimension <= 0 holds no values") {
  // Part 6 §5.2.5: the inline matrix is its Dimensions (an Int32 array, -1 when null), then the values,
  // none when a dimension is <= 0.
  const LoadResult r = load_files({"types.xml", "types_more.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const Codecs c(s);
  const int holder = c.of(ua::NodeId(namespace_of(r.config, "urn:types"), 3009));
  // Holder: Any (a Variant), Some (an ExtensionObject), Flags, Choices [Choice], Grid (Int32, ValueRank 2).
  auto with_grid = [](std::vector<int32_t> grid) {
    ua::ByteBuffer b;
    ua::Encoder e(b);
    ua::encode(e, ua::Variant());
    ua::encode(e, ua::ExtensionObject());
    e.write_u32(0);
    e.write_i32(-1);
    for (int32_t x : grid) e.write_i32(x);
    return b;
  };
  CHECK(c.transcode(holder, with_grid({-1})) == ua::status::Good);                         // null matrix
  CHECK(c.transcode(holder, with_grid({2, 2, 3, 1, 2, 3, 4, 5, 6})) == ua::status::Good);  // 2 x 3
  CHECK(c.transcode(holder, with_grid({2, 0, 5})) == ua::status::Good);                    // no values
  CHECK(c.transcode(holder, with_grid({2, -1, 5})) == ua::status::Good);
  CHECK(c.transcode(holder, with_grid({2, 2, 3, 1, 2})) == ua::status::BadDecodingError);  // values missing
  CHECK(c.transcode(holder, with_grid({3, 1, 1, 1, 0})) == ua::status::BadDecodingError);  // 3 dimensions
  CHECK(c.transcode(holder, with_grid({-2})) == ua::status::BadDecodingError);
  CHECK(c.transcode(holder, with_grid({2, 0x10000, 0x10000})) == ua::status::BadEncodingLimitsExceeded);
  CHECK(c.transcode(holder, with_grid({0x7FFFFFFF})) == ua::status::BadDecodingError);
}

TEST_CASE("Values of companion-specification structures transcode by their definitions") {
  if (!std::filesystem::exists(kCompanion / "DI/Opc.Ua.Di.NodeSet2.xml")) {
    WARN("skipped: no companion specifications at " << kCompanion.string());
    return;
  }
  const LoadResult r =
      load_files({"DI/Opc.Ua.Di.NodeSet2.xml", "MachineVision/Opc.Ua.MachineVision.NodeSet2.xml",
                  "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml"},
                 kCompanion);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const Codecs c(s);
  const uint16_t di = namespace_of(r.config, "http://opcfoundation.org/UA/DI/");
  const uint16_t mv = namespace_of(r.config, "http://opcfoundation.org/UA/MachineVision");
  const uint16_t result = namespace_of(r.config, "http://opcfoundation.org/UA/Machinery/Result/");
  ua::ByteBuffer b;
  ua::Encoder e(b);
  auto check = [&](const ua::NodeId& type) {
    const int codec = c.of(type);
    CHECK(c.transcode(codec, b) == ua::status::Good);
    for (size_t drop = 1; drop <= b.size(); ++drop) {
      INFO("cut by " << drop);
      CHECK_FALSE(c.transcode(codec, truncated(b, drop)).is_good());
    }
  };
  SECTION(
      "DI TransferResultDataDataType: an array of nested structures of QualifiedNames and DiagnosticInfos") {
    e.write_i32(3);  // SequenceNumber
    e.write_u8(1);   // EndOfResults
    e.write_i32(2);  // ParameterDefs
    for (int i = 0; i < 2; ++i) {
      e.write_i32(2);  // NodePath
      ua::encode(e, ua::QualifiedName{di, ua::String("Device")});
      ua::encode(e, ua::QualifiedName{0, ua::String("Parameter")});
      e.write_u32(i == 0 ? 0u : 0x80340000u);  // StatusCode
      ua::encode(e, ua::DiagnosticInfo());
    }
    check(ua::NodeId(di, 15889));
  }
  SECTION("MachineVision ProcessingTimesDataType: optional fields") {
    e.write_u32(0b01);  // AcquisitionDuration present, ProcessingDuration not
    ua::encode(e, ua::DateTime::now());
    ua::encode(e, ua::DateTime::now());
    e.write_f64(12.5);
    check(ua::NodeId(mv, 3005));
  }
  SECTION(
      "Machinery Result ResultMetaDataType: optional fields, a nested structure, arrays, an enumeration") {
    // Optional fields, in order: HasTransferableDataOnFile 0, ..., ResultState 3, ..., ProcessingTimes 13,
    // ResultUri 14, ResultEvaluation 15.
    e.write_u32(1u << 0 | 1u << 3 | 1u << 13 | 1u << 14 | 1u << 15);
    ua::encode(e, ua::String("result-1"));  // ResultId
    e.write_u8(0);                          // HasTransferableDataOnFile
    e.write_i32(2);                         // ResultState
    e.write_u32(0);                         // ProcessingTimes: no optional field
    ua::encode(e, ua::DateTime::now());
    ua::encode(e, ua::DateTime::now());
    e.write_i32(1);  // ResultUri
    ua::encode(e, ua::String("urn:result:1"));
    e.write_i32(1);  // ResultEvaluation
    check(ua::NodeId(result, 3007));
  }
  SECTION("Machinery Result ResultDataType: a field that allows subtypes and an array of BaseDataType") {
    ua::ByteBuffer meta;
    ua::Encoder me(meta);
    me.write_u32(0);
    ua::encode(me, ua::String("result-2"));
    ua::encode(e, ua::ExtensionObject::undecoded(s.structure(ua::NodeId(result, 3007)).default_encoding_id,
                                                 ua::ExtensionObject::Encoding::ByteString,
                                                 ua::ByteString::from_bytes(meta.span())));
    e.write_i32(2);  // ResultContent: Variants
    ua::encode(e, ua::Variant(1.5));
    ua::encode(e, ua::Variant(ua::String("ok")));
    check(ua::NodeId(result, 3008));
  }
}
