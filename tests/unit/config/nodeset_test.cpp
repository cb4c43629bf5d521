// NodeSet2 node files (docs/CONFIGURATION.md, "NodeSet2 node files"): the fixtures under nodesets/ for
// every node class, attribute and value type, the errors with their file and line, reload, and the
// published companion specifications (OPCUAD_NODESETS_DIR, tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "addressspace/value_store.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "config/json_value.hpp"
#include "tests/unit/config/nodeset_support.hpp"
#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad;
using namespace opcuad::config;
using namespace opcuad::nodeset_test;

namespace {

// A one-model file around `body` (its namespace is ns=1).
std::string nodeset(const std::string& body, const std::string& models = "") {
  return R"(<?xml version="1.0"?>
<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd">
  <NamespaceUris><Uri>urn:t</Uri></NamespaceUris>
  <Models><Model ModelUri="urn:t" Version="1.0">)" +
         models + R"(</Model></Models>
  <Aliases><Alias Alias="HasComponent">i=47</Alias><Alias Alias="Int32">i=6</Alias></Aliases>
)" + body +
         "\n</UANodeSet>\n";
}

struct Built : nodeset_test::BuiltSpace {
  using BuiltSpace::BuiltSpace;
  addressspace::NodeIndex find(const ua::NodeId& id) const {
    const auto n = store().find(id);
    INFO(id.to_string());
    REQUIRE(n != addressspace::kNoNode);
    return n;
  }
  ua::DataValue data_value(const ua::NodeId& id) const {
    const auto* v = store().variable(find(id));
    REQUIRE(v);
    ua::DataValue dv;
    addressspace::ValueStore::read(*v->cell, dv);
    return dv;
  }
  ua::Variant value(const ua::NodeId& id) const { return data_value(id).value; }
  bool has_reference(const ua::NodeId& from, uint32_t type, const ua::NodeId& to, bool inverse) const {
    const auto& s = store();
    for (const auto& r : s.references(find(from))) {
      if (r.is_inverse == inverse && s.node_id(s.reference_type_node(r.type)) == ua::NodeId(0, type) &&
          s.node_id(r.target) == to)
        return true;
    }
    return false;
  }
};

}  // namespace

TEST_CASE("NodeSet2 files load in the order of their RequiredModels, namespaces mapped by URI") {
  // machine.xml requires base.xml and is named first; its NamespaceUris list itself before base.
  const LoadResult r = load_files({"machine.xml", "base.xml"});
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  const ImportedModels& m = r.config.imported;
  REQUIRE(m.models.size() == 2);
  CHECK(m.models[0].uri == "http://example.com/base/");
  CHECK(m.models[0].version == "1.2.0");
  CHECK(m.models[1].uri == "http://example.com/machine/");
  // The NamespaceArray: the configuration's order of files, then each file's table in its order.
  const auto& ns = r.config.namespaces;
  REQUIRE(ns.size() == 4);
  CHECK(ns[2] == "http://example.com/machine/");
  CHECK(ns[3] == "http://example.com/base/");
  CHECK(server_info(r.config, {}).namespace_uris == ns);
  // The files in load order, every node with its own file: each file is converted as it is read and
  // spliced in load order.
  REQUIRE(m.files.size() == 2);
  CHECK(m.files[0].ends_with("base.xml"));
  CHECK(m.files[1].ends_with("machine.xml"));
  REQUIRE(!m.nodes.empty());
  CHECK(m.files[m.nodes.front().file].ends_with("base.xml"));
  for (const ImportedNode& n : m.nodes) {
    INFO(n.spec.node_id.to_string() << " at " << m.where(n.file, n.line));
    CHECK(n.file == (n.spec.node_id.namespace_index() == 3 ? 0u : 1u));
  }
  for (const ImportedReference& ref : m.references) CHECK(ref.file < 2);
  // One undecoded structure value: an OpaqueType, which base.xml defines without a Definition. The
  // PointType values are encoded by PointType's Definition.
  REQUIRE(m.undecoded.size() == 1);
  CHECK(m.undecoded[0].node == ua::NodeId(2, 32));
  CHECK(m.undecoded[0].encoding == ua::NodeId(3, 5003));
}

TEST_CASE("NodeSet2 records are compact: references by interned NodeIds and rare attributes out of line") {
  // A 1,000,000-node model keeps these records for its life (docs/PERFORMANCE.md, "Loading companion
  // specifications"): three full NodeIds a reference and every attribute of every class inline took
  // 1.6 KB a node.
  CHECK(sizeof(ImportedReference) == 20);
  CHECK(sizeof(ImportedNode) <= 512);
  LoadResult r = load_texts({{"a.xml", nodeset(R"(
<UAObject NodeId="ns=1;i=1" BrowseName="1:A">
  <References><Reference ReferenceType="HasComponent">ns=1;i=2</Reference>
    <Reference ReferenceType="HasComponent" IsForward="false">i=85</Reference></References>
</UAObject>
<UAVariable NodeId="ns=1;i=2" BrowseName="1:V" DataType="Int32" ValueRank="1" ArrayDimensions="3">
  <Description Locale="en">a vector</Description>
  <References><Reference ReferenceType="HasComponent" IsForward="false">ns=1;i=1</Reference></References>
</UAVariable>
<UAReferenceType NodeId="ns=1;i=3" BrowseName="1:R"><InverseName>RBy</InverseName>
  <References><Reference ReferenceType="i=45" IsForward="false">i=33</Reference></References>
</UAReferenceType>)")}});
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  const ImportedModels& m = r.config.imported;
  // Each NodeId once in the table; the references name them by index, forward.
  for (size_t i = 0; i < m.ids.size(); ++i) {
    for (size_t j = i + 1; j < m.ids.size(); ++j) CHECK_FALSE(m.ids[i] == m.ids[j]);
  }
  std::vector<std::string> refs;
  for (const ImportedReference& ref : m.references) {
    refs.push_back(m.id(ref.source).to_string() + " " + m.id(ref.type).to_string() + " " +
                   m.id(ref.target).to_string() + " line " + std::to_string(ref.line));
  }
  // The file's own, then those of the NamespaceMetadata object made for its model.
  REQUIRE(refs.size() > 4);
  refs.resize(4);
  CHECK(refs == std::vector<std::string>{"ns=2;i=1 i=47 ns=2;i=2 line 8", "i=85 i=47 ns=2;i=1 line 9",
                                         "ns=2;i=1 i=47 ns=2;i=2 line 13", "i=33 i=45 ns=2;i=3 line 16"});
  const ImportedSpec* object = nullptr;
  const ImportedSpec* variable = nullptr;
  const ImportedSpec* type = nullptr;
  for (const ImportedNode& n : m.nodes) {
    if (n.spec.node_id == ua::NodeId(2, 1)) object = &n.spec;
    if (n.spec.node_id == ua::NodeId(2, 2)) variable = &n.spec;
    if (n.spec.node_id == ua::NodeId(2, 3)) type = &n.spec;
  }
  REQUIRE((object && variable && type));
  CHECK(!object->description);
  CHECK(!object->array_dimensions);
  REQUIRE(variable->description);
  CHECK(*variable->description == ua::LocalizedText{"en", "a vector"});
  CHECK(variable->dimensions() == std::vector<uint32_t>{3});
  REQUIRE(type->inverse_name);
  CHECK(type->inverse_name->text == ua::String("RBy"));
  // The NodeSpec made for the builder carries them, and the null LocalizedText where there is none.
  addressspace::NodeSpec spec;
  variable->to_node_spec(spec);
  CHECK(spec.description == ua::LocalizedText{"en", "a vector"});
  CHECK(spec.array_dimensions == std::vector<uint32_t>{3});
  CHECK(spec.no_value);
  object->to_node_spec(spec);
  CHECK(spec.description == ua::LocalizedText{});
  CHECK(spec.array_dimensions.empty());
  CHECK(!spec.no_value);
  // A copy of the configuration (a reload compares against the running one) owns its own attributes.
  const ImportedModels copy = m;
  r.config.imported.nodes[1].spec.description->text = ua::String("changed");
  CHECK(copy.nodes[1].spec.description->text == ua::String("a vector"));
  CHECK(copy.references.size() == m.references.size());
}

TEST_CASE("NodeSet2 nodes of every class carry their attributes and references both ways") {
  const LoadResult r = load_files({"machine.xml", "base.xml"});
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  const auto& s = b.store();
  const uint16_t base = namespace_of(r.config, "http://example.com/base/");
  const uint16_t machine = namespace_of(r.config, "http://example.com/machine/");
  using addressspace::NodeClass;
  // Server.NamespaceArray (Part 5 §6.3.1) shows the models' namespaces.
  const ua::Variant namespaces = b.value(ua::NodeId(0, ua::id::Server_NamespaceArray));
  const auto* uris = namespaces.get_if<std::vector<ua::String>>();
  REQUIRE(uris);
  REQUIRE(uris->size() == r.config.namespaces.size());
  CHECK((*uris)[base] == ua::String("http://example.com/base/"));
  CHECK((*uris)[machine] == ua::String("http://example.com/machine/"));

  const auto type = b.find(ua::NodeId(base, 1001));
  CHECK(s.node_class(type) == NodeClass::ObjectType);
  CHECK(s.browse_name(type) == ua::QualifiedName{base, "MachineType"});
  CHECK(s.display_name(type) == ua::LocalizedText{"en", "Machine type"});  // the first locale is served
  CHECK(s.description(type) == ua::LocalizedText{"en", "A machine"});
  CHECK(s.record(type).write_mask == 4);
  CHECK(s.has_flag(type, addressspace::flag::kIsAbstract));
  CHECK(b.has_reference(ua::NodeId(0, ua::id::BaseObjectType), ua::id::HasSubtype, ua::NodeId(base, 1001),
                        false));

  const auto has_tool = b.find(ua::NodeId(base, 4001));
  CHECK(s.node_class(has_tool) == NodeClass::ReferenceType);
  CHECK(s.text(s.reference_type(has_tool)->inverse_name) == ua::LocalizedText{"en", "ToolOf"});
  CHECK_FALSE(s.has_flag(has_tool, addressspace::flag::kSymmetric));
  CHECK(s.has_flag(b.find(ua::NodeId(base, 4002)), addressspace::flag::kSymmetric));
  // A reference of the file's own type, browsable from both ends.
  const ua::NodeId machine_object(machine, ua::String("Machine"));
  const auto tool_type = s.reference_type_index(has_tool);
  REQUIRE(tool_type >= 0);
  bool forward = false, inverse = false;
  for (const auto& ref : s.references(b.find(machine_object)))
    forward |= ref.type == tool_type && !ref.is_inverse &&
               s.node_id(ref.target) == ua::NodeId(machine, ua::String("Tool"));
  for (const auto& ref : s.references(b.find(ua::NodeId(machine, ua::String("Tool")))))
    inverse |= ref.type == tool_type && ref.is_inverse && s.node_id(ref.target) == machine_object;
  CHECK(forward);
  CHECK(inverse);
  // IsForward="false" on the child is the parent's forward reference.
  CHECK(b.has_reference(ua::NodeId(0, ua::id::ObjectsFolder), ua::id::Organizes, machine_object, false));
  CHECK(b.has_reference(machine_object, ua::id::Organizes, ua::NodeId(0, ua::id::ObjectsFolder), true));
  CHECK(s.record(b.find(machine_object)).event_notifier == 1);

  CHECK(s.node_class(b.find(ua::NodeId(base, 3001))) == NodeClass::DataType);
  CHECK(s.is_data_type_subtype(b.find(ua::NodeId(base, 3001)), b.find(ua::NodeId(0, ua::id::Enumeration))));

  const auto view = b.find(ua::NodeId(base, 6001));
  CHECK(s.node_class(view) == NodeClass::View);
  CHECK(s.has_flag(view, addressspace::flag::kContainsNoLoops));
  CHECK(s.record(view).event_notifier == 1);

  const auto method = b.find(ua::NodeId(base, 7001));
  CHECK(s.node_class(method) == NodeClass::Method);
  CHECK(s.has_flag(method, addressspace::flag::kExecutable));
  CHECK_FALSE(s.has_flag(method, addressspace::flag::kUserExecutable));

  const auto var_type = b.find(ua::NodeId(base, 2001));
  CHECK(s.node_class(var_type) == NodeClass::VariableType);
  CHECK(b.value(ua::NodeId(base, 2001)) == ua::Variant(1.5));

  const auto boolean = b.find(ua::NodeId(machine, 1));
  const auto* v = s.variable(boolean);
  REQUIRE(v);
  CHECK(v->access_level == 3);
  CHECK(v->access_level_ex == 3);
  CHECK(v->user_access_level == 1);
  CHECK(v->minimum_sampling_interval == 250);
  CHECK(s.has_flag(boolean, addressspace::flag::kHistorizing));
  CHECK(s.node_id(v->data_type) == ua::NodeId(0, ua::id::Boolean));
  const auto* ints = s.variable(b.find(ua::NodeId(machine, 25)));
  CHECK(ints->value_rank == 1);
  CHECK(std::vector<uint32_t>(s.array_dimensions(*ints).begin(), s.array_dimensions(*ints).end()) ==
        std::vector<uint32_t>{4});
  CHECK(s.node_id(s.variable(b.find(ua::NodeId(machine, 28)))->data_type) == ua::NodeId(base, 3001));
}

TEST_CASE("NodeSet2 values of every built-in type, arrays, a matrix and namespace-0 structures") {
  const LoadResult r = load_files({"base.xml", "machine.xml"});
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Built b(r);
  const uint16_t base = namespace_of(r.config, "http://example.com/base/");
  const uint16_t m = namespace_of(r.config, "http://example.com/machine/");
  auto value = [&](uint32_t i) { return b.value(ua::NodeId(m, i)); };
  CHECK(value(1) == ua::Variant(true));
  CHECK(value(2) == ua::Variant(int8_t{-5}));
  CHECK(value(3) == ua::Variant(uint8_t{200}));
  CHECK(value(4) == ua::Variant(int16_t{-300}));
  CHECK(value(5) == ua::Variant(uint16_t{60000}));
  CHECK(value(6) == ua::Variant(int32_t{-70000}));
  CHECK(value(7) == ua::Variant(uint32_t{4000000000}));
  CHECK(value(8) == ua::Variant(int64_t{-9000000000}));
  CHECK(value(9) == ua::Variant(uint64_t{18000000000000000000u}));
  CHECK(value(10) == ua::Variant(0.5f));
  CHECK(value(11) == ua::Variant(-std::numeric_limits<double>::infinity()));
  CHECK(value(12) == ua::Variant(ua::String("a <b> & c")));
  ua::DateTime t;
  REQUIRE(parse_date_time("2024-05-01T12:00:00Z", t));
  CHECK(value(13) == ua::Variant(t));
  CHECK(value(14) == ua::Variant(*ua::Guid::parse("72962B91-FA75-4AE6-8D28-B404DC7DAF63")));
  CHECK(value(15) == ua::Variant(ua::ByteString("Hello")));
  // The element keeps the XML namespace its name is in (declared on the file's root).
  CHECK(value(16) == ua::Variant(ua::XmlElement(
                         "<a xmlns=\"http://opcfoundation.org/UA/2011/03/UANodeSet.xsd\" b=\"1\">x</a>")));
  CHECK(value(17) == ua::Variant(ua::NodeId(base, 1001)));  // ns=2 of the file is base
  CHECK(value(18) == ua::Variant(ua::ExpandedNodeId{ua::NodeId(m, ua::String("Tool")), {}, 0}));
  CHECK(value(19) == ua::Variant(ua::StatusCode(0x80000000u)));
  CHECK(value(20) == ua::Variant(ua::QualifiedName{base, "Speed"}));
  CHECK(value(21) == ua::Variant(ua::LocalizedText{"de", "Hallo"}));

  const ua::Variant eu = value(22);
  const auto* eo = eu.get_if<ua::ExtensionObject>();
  REQUIRE(eo);
  const auto* info = eo->get<ua::EUInformation>();
  REQUIRE(info);
  CHECK(info->unit_id == 4408652);
  CHECK(info->namespace_uri == ua::String("http://www.opcfoundation.org/UA/units/un/cefact"));
  CHECK(info->display_name == ua::LocalizedText{"en", "°C"});
  CHECK(info->description == ua::LocalizedText{{}, "degree Celsius"});

  const ua::Variant range_value = value(23);
  const auto* range = range_value.get_if<ua::ExtensionObject>()->get<ua::Range>();
  REQUIRE(range);
  CHECK(range->low == -10);
  CHECK(range->high == 90.5);

  const ua::Variant enum_values = value(24);
  const auto* list = enum_values.get_if<std::vector<ua::ExtensionObject>>();
  REQUIRE(list);
  REQUIRE(list->size() == 2);
  const auto* on = (*list)[0].get<ua::EnumValueType>();
  REQUIRE(on);
  CHECK(on->value == 1);
  CHECK(on->display_name == ua::LocalizedText{{}, "On"});
  CHECK(on->description == ua::LocalizedText{});

  CHECK(value(25) == ua::Variant(std::vector<int32_t>{1, 2, 3}));
  CHECK(value(26) == ua::Variant(std::vector<ua::LocalizedText>{{{}, "a"}, {"en", "b"}}));
  CHECK(value(27) == ua::Variant::matrix(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3}));
  CHECK(value(28) == ua::Variant(int32_t{1}));

  // A structure of base.xml's own: its Default Binary body (Part 6 §5.2.7, two Doubles), under the
  // NodeId of its Default Binary encoding (created by the loader: base.xml has only a Default XML one).
  const ua::Variant point = value(29);
  const auto* raw = point.get_if<ua::ExtensionObject>();
  REQUIRE(raw);
  CHECK_FALSE(raw->is_decoded());
  CHECK(raw->encoding() == ua::ExtensionObject::Encoding::ByteString);
  const ua::ExtensionObject* point_def =
      b.store().data_type_definition(b.store().find(ua::NodeId(base, 3002)));
  REQUIRE(point_def);
  CHECK(raw->type_id() == point_def->get<ua::StructureDefinition>()->default_encoding_id);
  {
    ua::ByteBuffer expected;
    ua::Encoder e(expected);
    e.write_f64(1.0);
    e.write_f64(2.0);
    CHECK(raw->body().bytes().size() == 16);
    CHECK(std::equal(raw->body().bytes().begin(), raw->body().bytes().end(), expected.span().begin()));
  }
  // A structure without a Definition is kept with its XML body, under the server's NodeId of its encoding.
  // NodeIds and QualifiedNames in such a body are in the server's namespace indexes (base is 3 there, 2 in
  // the file; machine 2 there, 1 in the file).
  const ua::Variant tagged = value(32);
  const std::string_view body = tagged.get_if<ua::ExtensionObject>()->body().view();
  CHECK(body.find("<uax:Identifier>ns=" + std::to_string(base) + ";i=1001</uax:Identifier>") !=
        std::string_view::npos);
  CHECK(body.find("<uax:NamespaceIndex>" + std::to_string(m) + "</uax:NamespaceIndex>") !=
        std::string_view::npos);
  // The prefix the elements inside use is declared on the body itself.
  CHECK(body.starts_with("<PointType xmlns:uax=\"http://opcfoundation.org/UA/2008/02/Types.xsd\""));
  // It goes to a client as encoded (Part 6 §5.2.2.15, XmlElement body) and comes back the same.
  ua::ByteBuffer bytes;
  REQUIRE(ua::encode_to(bytes, point).is_good());
  ua::Variant decoded;
  REQUIRE(ua::decode_from(bytes.span(), decoded).is_good());
  CHECK(decoded == point);

  const ua::Variant variants = value(30);
  const auto* items = variants.get_if<std::vector<ua::Variant>>();
  REQUIRE(items);
  REQUIRE(items->size() == 2);
  CHECK((*items)[0] == ua::Variant(int32_t{7}));
  CHECK((*items)[1] == ua::Variant(std::vector<ua::String>{"x"}));

  // A method's InputArguments: Arguments decoded into the generated structure.
  const ua::Variant args = b.value(ua::NodeId(base, 7002));
  const auto* arg_list = args.get_if<std::vector<ua::ExtensionObject>>();
  REQUIRE(arg_list);
  REQUIRE(arg_list->size() == 1);
  const auto* arg = (*arg_list)[0].get<ua::Argument>();
  REQUIRE(arg);
  CHECK(arg->name == ua::String("Speed"));
  CHECK(arg->data_type == ua::NodeId(0, ua::id::Double));
  CHECK(arg->value_rank == -1);
  CHECK(arg->description == ua::LocalizedText{"en", "rpm"});
}

namespace {
// The errors of loading `files`, one string each.
std::vector<std::string> errors_loading(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> out;
  for (const auto& e : load_texts(files).errors) out.push_back(e.to_string());
  return out;
}
bool has(const std::vector<std::string>& errors, const std::string& text) {
  for (const auto& e : errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}
#define CHECK_ERROR(errors, text)         \
  do {                                    \
    const auto& errs = (errors);          \
    INFO(Catch::Detail::stringify(errs)); \
    CHECK(has(errs, text));               \
  } while (false)
}  // namespace

TEST_CASE("NodeSet2 errors name the file, the line and the reason") {
  SECTION("malformed XML") {
    const auto e =
        errors_loading({{"bad.xml", "<UANodeSet>\n  <UAObject NodeId=\"ns=1;i=1\"\n</UANodeSet>\n"}});
    // The start tag of line 2 is not closed: pugixml sees it where the next tag begins.
    CHECK_ERROR(e, "bad.xml: line 3: malformed XML: Error parsing start element tag");
  }
  SECTION("not a NodeSet2 file") {
    CHECK_ERROR(errors_loading({{"x.xml", "<root/>"}}), "x.xml: line 1: not a NodeSet2 file");
  }
  SECTION("a NodeId defined twice, with both places") {
    const std::string obj =
        R"(<UAObject NodeId="ns=1;i=1" BrowseName="1:A"><DisplayName>A</DisplayName></UAObject>)";
    const auto e = errors_loading({{"a.xml", nodeset(obj + "\n" + obj)}});
    CHECK_ERROR(e, "a.xml: line 7: NodeId ns=2;i=1 is defined twice: here and at a.xml: line 6");
  }
  SECTION("a NodeId of namespace 0") {
    const auto e = errors_loading({{"a.xml", nodeset(R"(<UAObject NodeId="i=85" BrowseName="O" />)")}});
    CHECK_ERROR(e, "a.xml: line 6: NodeId i=85 is already defined by namespace 0");
  }
  SECTION("a reference to a node that exists nowhere") {
    const auto e = errors_loading({{"a.xml", nodeset(R"(<UAObject NodeId="ns=1;i=1" BrowseName="1:A">
  <References>
    <Reference ReferenceType="HasComponent">ns=1;i=99</Reference>
  </References>
</UAObject>)")}});
    CHECK_ERROR(e, "a.xml: line 8: reference to ns=2;i=99, which exists nowhere");
  }
  SECTION("an unknown alias") {
    const auto e = errors_loading({{"a.xml", nodeset(R"(<UAObject NodeId="ns=1;i=1" BrowseName="1:A">
  <References><Reference ReferenceType="HasKomponent">i=85</Reference></References>
</UAObject>
<UAVariable NodeId="ns=1;i=2" BrowseName="1:B" DataType="Int33" />)")}});
    CHECK_ERROR(e, "a.xml: line 7: unknown alias \"HasKomponent\"");
    CHECK_ERROR(e, "a.xml: line 9: unknown alias \"Int33\"");
  }
  SECTION("a namespace index beyond the file's NamespaceUris") {
    const auto e = errors_loading({{"a.xml", nodeset(R"(<UAObject NodeId="ns=2;i=1" BrowseName="1:A" />)")}});
    CHECK_ERROR(e,
                "a.xml: line 6: NodeId \"ns=2;i=1\": namespace index 2 is not in the file's NamespaceUris");
  }
  SECTION("a value that does not match its DataType") {
    const auto e =
        errors_loading({{"a.xml", nodeset(R"(<UAVariable NodeId="ns=1;i=1" BrowseName="1:A" DataType="Int32">
  <Value><Double xmlns="http://opcfoundation.org/UA/2008/02/Types.xsd">1.5</Double></Value>
</UAVariable>
<UAVariable NodeId="ns=1;i=2" BrowseName="1:B" DataType="Int32">
  <Value><ListOfInt32 xmlns="http://opcfoundation.org/UA/2008/02/Types.xsd"><Int32>1</Int32></ListOfInt32></Value>
</UAVariable>
<UAVariable NodeId="ns=1;i=3" BrowseName="1:C" DataType="i=884">
  <Value><ExtensionObject xmlns="http://opcfoundation.org/UA/2008/02/Types.xsd"><TypeId><Identifier>i=888</Identifier></TypeId>
    <Body><EUInformation><UnitId>1</UnitId></EUInformation></Body></ExtensionObject></Value>
</UAVariable>)")}});
    CHECK_ERROR(e, "a.xml: line 6: Value does not match its DataType: a Double does not fit DataType i=6");
    CHECK_ERROR(e, "a.xml: line 9: Value does not match its DataType: an array does not fit ValueRank -1");
    CHECK_ERROR(
        e, "a.xml: line 12: Value does not match its DataType: a structure of DataType i=887 is not a i=884");
  }
  SECTION("a value that is not what its element says") {
    const auto e =
        errors_loading({{"a.xml", nodeset(R"(<UAVariable NodeId="ns=1;i=1" BrowseName="1:A" DataType="Int32">
  <Value>
    <Int32 xmlns="http://opcfoundation.org/UA/2008/02/Types.xsd">12x</Int32>
  </Value>
</UAVariable>
<UAVariable NodeId="ns=1;i=2" BrowseName="1:B" DataType="i=3">
  <Value><Byte xmlns="http://opcfoundation.org/UA/2008/02/Types.xsd">256</Byte></Value>
</UAVariable>)")}});
    CHECK_ERROR(e, "a.xml: line 8: Value: not a valid Int32 value: \"12x\"");
    CHECK_ERROR(e, "a.xml: line 12: Value: not a valid Byte value: \"256\" (out of range)");
  }
  SECTION("a missing required model names what is loaded") {
    const auto e =
        errors_loading({{"a.xml", nodeset("", R"(<RequiredModel ModelUri="urn:missing" Version="2.0" />)")}});
    CHECK_ERROR(e,
                "a.xml: line 4: model urn:t requires model urn:missing 2.0, which no node file provides; "
                "loaded: http://opcfoundation.org/UA/ 1.05.03 of 2023-12-15 (built in), urn:t 1.0 (a.xml)");
  }
  SECTION("a required model older than required") {
    const std::string other = R"(<?xml version="1.0"?>
<UANodeSet><NamespaceUris><Uri>urn:o</Uri></NamespaceUris>
<Models><Model ModelUri="urn:o" Version="1.9.9" PublicationDate="2020-01-01T00:00:00Z" /></Models></UANodeSet>)";
    CHECK_ERROR(
        errors_loading({{"a.xml", nodeset("", R"(<RequiredModel ModelUri="urn:o" Version="1.10" />)")},
                        {"o.xml", other}}),
        "a.xml: line 4: model urn:t requires urn:o version 1.10 or later; loaded: urn:o 1.9.9 of 2020-01-01 "
        "(o.xml)");
    CHECK_ERROR(errors_loading({{"a.xml", nodeset("", R"(<RequiredModel ModelUri="urn:o" Version="1.9"
        PublicationDate="2021-01-01T00:00:00Z" />)")},
                                {"o.xml", other}}),
                "a.xml: line 4: model urn:t requires urn:o published 2021-01-01 or later");
    CHECK_ERROR(
        errors_loading(
            {{"a.xml",
              nodeset("", R"(<RequiredModel ModelUri="http://opcfoundation.org/UA/" Version="1.06" />)")}}),
        "requires http://opcfoundation.org/UA/ version 1.06 or later; loaded: http://opcfoundation.org/UA/ "
        "1.05.03");
  }
  SECTION("values nested without bound") {
    std::string deep = "<Int32>1</Int32>";
    for (int i = 0; i < 40; ++i)
      deep = "<ListOfVariant><Variant><Value>" + deep + "</Value></Variant></ListOfVariant>";
    const auto e =
        errors_loading({{"a.xml", nodeset(R"(<UAVariable NodeId="ns=1;i=1" BrowseName="1:A" ValueRank="-2">
  <Value>)" + deep + R"(</Value>
</UAVariable>)")}});
    CHECK_ERROR(e, "a.xml: line 7: Value: values nest deeper than 32");
  }
  SECTION("a model defined twice, and models that require each other") {
    CHECK_ERROR(errors_loading({{"a.xml", nodeset("")}, {"b.xml", nodeset("")}}),
                "b.xml: line 4: model urn:t is already defined by a.xml");
    auto model = [](const char* uri, const char* requires_uri) {
      return std::string(R"(<UANodeSet><Models><Model ModelUri=")") + uri + R"(">
<RequiredModel ModelUri=")" +
             requires_uri + R"(" /></Model></Models></UANodeSet>)";
    };
    CHECK_ERROR(errors_loading({{"a.xml", model("urn:a", "urn:b")}, {"b.xml", model("urn:b", "urn:a")}}),
                "a.xml: line 1: its models and the models they require form a cycle");
  }
  SECTION("a ParentNodeId that exists nowhere") {
    const auto e = errors_loading(
        {{"a.xml", nodeset(R"(<UAObject NodeId="ns=1;i=1" BrowseName="1:A" ParentNodeId="ns=1;i=7" />)")}});
    CHECK_ERROR(e, "a.xml: line 6: ParentNodeId ns=2;i=7 exists nowhere");
  }
  SECTION("a DTD's entities are not expanded") {
    const LoadResult r = load_texts({{"a.xml", R"(<?xml version="1.0"?>
<!DOCTYPE UANodeSet [<!ENTITY x SYSTEM "file:///etc/passwd"><!ENTITY y "expanded">]>
<UANodeSet><NamespaceUris><Uri>urn:t</Uri></NamespaceUris>
<UAObject NodeId="ns=1;i=1" BrowseName="1:&x;&y;&amp;"><DisplayName>&y;</DisplayName></UAObject></UANodeSet>)"}});
    INFO(errors_text(r.errors));
    REQUIRE(r.ok());
    REQUIRE(r.config.imported.nodes.size() == 1);
    // Neither the external entity nor the internal one is expanded (no file is read); &amp; is.
    CHECK(r.config.imported.nodes[0].spec.browse_name.name == ua::String("&x;&y;&"));
    CHECK(r.config.imported.nodes[0].spec.display_name.text == ua::String("&y;"));
  }
}

TEST_CASE("A JSON node file can hang nodes below a NodeSet2 node") {
  LoadResult r =
      load_config_text(R"({"node_files": ["base.xml"], "namespaces": ["urn:j"]})", "server.json", kFixtures);
  load_node_file_text(R"({"namespaces": ["urn:j"], "nodes": [
    {"kind": "variable", "name": "V", "data_type": "Double", "parent": "nsu=http://example.com/base/;i=6001"}]})",
                      "nodes.json", r);
  check_references(r);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  REQUIRE(r.config.nodes.size() == 1);
  CHECK(r.config.nodes[0].reference_type == ua::NodeId(0, ua::id::HasComponent));
  Built b(r);
  CHECK(b.has_reference(ua::NodeId(3, 6001), ua::id::HasComponent, r.config.nodes[0].node_id, false));
}

TEST_CASE("A reload of NodeSet2 files keeps unchanged values and a failed one keeps the running space") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "opcuad-nodeset-reload";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kFixtures / "base.xml", dir / "base.xml",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string machine = read_file(kFixtures / "machine.xml");
  auto write_machine = [&](const std::string& text) {
    std::ofstream(dir / "machine.xml", std::ios::binary | std::ios::trunc) << text;
  };
  write_machine(machine);
  const LoadResult first = load_files({"*.xml"}, dir);
  INFO(errors_text(first.errors));
  REQUIRE(first.ok());
  Built b(first);
  const uint16_t m = namespace_of(first.config, "http://example.com/machine/");
  const ua::NodeId speed(m, 31), ints(m, 6);
  auto* cell = b.store().variable(b.find(speed))->cell;
  ua::DataValue dv;
  dv.value = ua::Variant(99.0);
  b.space.values().write(*cell, dv, *b.p);

  SECTION("unchanged: the live value stays") {
    const LoadResult again = load_files({"*.xml"}, dir);
    REQUIRE(again.ok());
    const ReloadOutcome out = reload_address_space(b.config, again.config, b.space, *b.p);
    INFO(errors_text(out.errors));
    REQUIRE(out.errors.empty());
    CHECK(out.diff.added == 0);
    CHECK(out.diff.removed == 0);
    CHECK(b.store().variable(b.find(speed))->cell == cell);
    CHECK(b.value(speed) == ua::Variant(99.0));
  }
  SECTION("a value changed in the file replaces the live one") {
    std::string changed = machine;
    changed.replace(changed.find("<uax:Double>12.25"), 17, "<uax:Double>13.5");
    write_machine(changed);
    const LoadResult next = load_files({"*.xml"}, dir);
    INFO(errors_text(next.errors));
    REQUIRE(next.ok());
    const ReloadOutcome out = reload_address_space(b.config, next.config, b.space, *b.p);
    REQUIRE(out.errors.empty());
    CHECK(out.values_reset == 1);
    CHECK(b.value(speed) == ua::Variant(13.5));
    CHECK(b.value(ints) == ua::Variant(int32_t{-70000}));
  }
  SECTION("a broken file: the errors, and the running space unchanged") {
    write_machine(machine.substr(0, machine.size() / 2));
    const LoadResult next = load_files({"*.xml"}, dir);
    CHECK_FALSE(next.ok());
    CHECK(errors_text(next.errors).find("machine.xml: line") != std::string::npos);
    CHECK(b.value(speed) == ua::Variant(99.0));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("A NodeSet2 variable without <Value> reads Bad_NoValue until written, also across reloads") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "opcuad-nodeset-novalue";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kFixtures / "base.xml", dir / "base.xml",
                             std::filesystem::copy_options::overwrite_existing);
  // machine.xml with a variable Setpoint (ns=1;i=40) whose <Value> is `value` (none when empty).
  std::string machine = read_file(kFixtures / "machine.xml");
  machine.erase(machine.rfind("</UANodeSet>"));
  auto write_machine = [&](const std::string& value) {
    std::ofstream(dir / "machine.xml", std::ios::binary | std::ios::trunc)
        << machine
        << R"(<UAVariable NodeId="ns=1;i=40" BrowseName="1:Setpoint" DataType="Double" AccessLevel="3">
    <DisplayName>Setpoint</DisplayName>
    <References><Reference ReferenceType="HasComponent" IsForward="false">ns=1;s=Machine</Reference></References>)"
        << value << "</UAVariable></UANodeSet>";
  };
  write_machine("");
  const LoadResult first = load_files({"*.xml"}, dir);
  INFO(errors_text(first.errors));
  REQUIRE(first.ok());
  Built b(first);
  const uint16_t m = namespace_of(first.config, "http://example.com/machine/");
  const ua::NodeId setpoint(m, 40);
  // Part 6 §F.8: no value, status Bad_NoValue. A VariableType without <Value> keeps a null Value: its
  // Value is optional (Part 3 §5.6.5).
  CHECK(b.data_value(setpoint).status == ua::status::BadNoValue);
  CHECK(b.value(setpoint).is_empty());
  auto reload = [&] {
    const LoadResult next = load_files({"*.xml"}, dir);
    INFO(errors_text(next.errors));
    REQUIRE(next.ok());
    const ReloadOutcome out = reload_address_space(b.config, next.config, b.space, *b.p);
    INFO(errors_text(out.errors));
    REQUIRE(out.errors.empty());
    b.config = next.config;  // the running configuration from now on, as the daemon keeps it
    return out;
  };
  SECTION("a written value is kept by a reload of the unchanged file") {
    ua::DataValue dv;
    dv.value = ua::Variant(7.5);
    b.space.values().write(*b.store().variable(b.find(setpoint))->cell, dv, *b.p);
    CHECK(reload().values_reset == 0);
    CHECK(b.data_value(setpoint).status == ua::status::Good);
    CHECK(b.value(setpoint) == ua::Variant(7.5));
  }
  SECTION("a <Value> the file gains is applied, and taken away again reads Bad_NoValue") {
    write_machine("<Value><uax:Double>3.25</uax:Double></Value>");
    CHECK(reload().values_reset == 1);
    CHECK(b.data_value(setpoint).status == ua::status::Good);
    CHECK(b.value(setpoint) == ua::Variant(3.25));
    write_machine("");
    CHECK(reload().values_reset == 1);
    CHECK(b.data_value(setpoint).status == ua::status::BadNoValue);
    CHECK(b.value(setpoint).is_empty());
  }
  std::filesystem::remove_all(dir);
}

// ---- the published companion specifications in OPCUAD_NODESETS_DIR

namespace {
const std::vector<std::pair<std::string, std::vector<std::string>>> kCompanionSets = {
    {"DI", {"DI/Opc.Ua.Di.NodeSet2.xml"}},
    {"IA", {"DI/Opc.Ua.Di.NodeSet2.xml", "IA/Opc.Ua.IA.NodeSet2.xml"}},
    {"Machinery", {"DI/Opc.Ua.Di.NodeSet2.xml", "Machinery/Opc.Ua.Machinery.NodeSet2.xml"}},
    {"Machinery Examples",
     {"Machinery/Opc.Ua.Machinery.Examples.NodeSet2.xml", "DI/Opc.Ua.Di.NodeSet2.xml",
      "Machinery/Opc.Ua.Machinery.NodeSet2.xml"}},
    {"ISA95-JOBCONTROL", {"ISA95-JOBCONTROL/opc.ua.isa95-jobcontrol.nodeset2.xml"}},
    {"Machinery Jobs",
     {"Machinery/Jobs/Opc.Ua.Machinery.Jobs.Nodeset2.xml",
      "ISA95-JOBCONTROL/opc.ua.isa95-jobcontrol.nodeset2.xml"}},
    {"Machinery Result", {"Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml"}},
    {"MachineTool",
     {"MachineTool/Opc.Ua.MachineTool.NodeSet2.xml", "Machinery/Jobs/Opc.Ua.Machinery.Jobs.Nodeset2.xml",
      "IA/Opc.Ua.IA.NodeSet2.xml", "Machinery/Opc.Ua.Machinery.NodeSet2.xml",
      "ISA95-JOBCONTROL/opc.ua.isa95-jobcontrol.nodeset2.xml", "DI/Opc.Ua.Di.NodeSet2.xml"}},
    {"PackML", {"PackML/Opc.Ua.PackML.NodeSet2.xml"}},
    {"MachineVision", {"MachineVision/Opc.Ua.MachineVision.NodeSet2.xml"}},
    {"AutoID", {"AutoID/Opc.Ua.AutoID.NodeSet2.xml", "DI/Opc.Ua.Di.NodeSet2.xml"}},
    {"Robotics", {"Robotics/Opc.Ua.Robotics.NodeSet2.xml", "DI/Opc.Ua.Di.NodeSet2.xml"}},
};

bool have_companion_specs() {
  if (std::filesystem::exists(kCompanion / "DI/Opc.Ua.Di.NodeSet2.xml")) return true;
  WARN("skipped: no companion specifications at " << kCompanion.string());
  return false;
}
}  // namespace

TEST_CASE("Each companion specification loads with its dependencies") {
  if (!have_companion_specs()) return;
  for (const auto& [name, files] : kCompanionSets) {
    INFO(name);
    const LoadResult r = load_files(files, kCompanion);
    INFO(errors_text(r.errors));
    REQUIRE(r.ok());
    CHECK(r.config.imported.files.size() == files.size());
    Built b(r);
    CHECK(b.store().size() > r.config.imported.nodes.size());
  }
}

TEST_CASE("All companion specifications load together, in any order of the files") {
  if (!have_companion_specs()) return;
  std::vector<std::string> all;
  for (const auto& [name, files] : kCompanionSets) {
    for (const auto& f : files) {
      if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
    }
  }
  REQUIRE(all.size() == 12);
  for (bool reversed : {false, true}) {
    if (reversed) std::reverse(all.begin(), all.end());
    const LoadResult r = load_files(all, kCompanion);
    INFO(errors_text(r.errors));
    REQUIRE(r.ok());
    CHECK(r.config.imported.models.size() == 12);
    Built b(r);
    // Robotics lists itself before DI: its nodes are in its own namespace, its references reach DI's.
    const uint16_t robotics = namespace_of(r.config, "http://opcfoundation.org/UA/Robotics/");
    const uint16_t di = namespace_of(r.config, "http://opcfoundation.org/UA/DI/");
    CHECK(b.store().find(ua::NodeId(robotics, 1004)) != addressspace::kNoNode);  // MotionDeviceType
    CHECK(b.store().find(ua::NodeId(di, 1001)) != addressspace::kNoNode);        // DI's TopologyElementType
    // Every structure value was encoded: namespace 0's decoded, the models' own into their Default
    // Binary bodies.
    for (const auto& u : r.config.imported.undecoded)
      FAIL_CHECK("undecoded: " << r.config.imported.where(u.file, u.line) << " " << u.encoding.to_string());
    CHECK(r.config.imported.undecoded.empty());
  }
}
