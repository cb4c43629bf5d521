// What the loader adds for the models of NodeSet2 files (docs/CONFIGURATION.md, "NodeSet2 node files"):
// their NamespaceMetadata objects below Server.Namespaces (Part 5 §6.3.13) and their OPC Binary type
// dictionaries below OPC Binary (Part 5 Annex D), for the fixtures nodesets/types.xml, types_more.xml
// and shipped.xml and for the companion specifications together.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <pugixml.hpp>

#include "addressspace/value_store.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "tests/unit/config/nodeset_support.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad;
using namespace opcuad::config;
using namespace opcuad::nodeset_test;
using addressspace::kNoNode;
using addressspace::NodeIndex;

namespace {

// The address space of a loaded configuration, browsed as a client would.
struct Space : nodeset_test::BuiltSpace {
  using BuiltSpace::BuiltSpace;
  NodeIndex find(const ua::NodeId& id) const { return store().find(id); }
  // The nodes `n` references with `type` (exactly that type), forward or inverse.
  std::vector<NodeIndex> targets(NodeIndex n, uint32_t type, bool inverse = false) const {
    std::vector<NodeIndex> out;
    for (const auto& r : store().references(n)) {
      if (r.is_inverse == inverse &&
          store().node_id(store().reference_type_node(r.type)) == ua::NodeId(0, type))
        out.push_back(r.target);
    }
    return out;
  }
  ua::NodeId type_definition(NodeIndex n) const {
    const auto t = targets(n, ua::id::HasTypeDefinition);
    return t.size() == 1 ? store().node_id(t[0]) : ua::NodeId();
  }
  std::string name(NodeIndex n) const { return std::string(store().browse_name(n).name.view()); }
  ua::Variant value(NodeIndex n) const {
    const auto* v = store().variable(n);
    REQUIRE(v);
    REQUIRE(v->cell);
    ua::DataValue dv;
    addressspace::ValueStore::read(*v->cell, dv);
    return dv.value;
  }
  // The HasProperty child of `n` named `property`, or kNoNode.
  NodeIndex property(NodeIndex n, std::string_view property) const {
    for (NodeIndex p : targets(n, ua::id::HasProperty)) {
      if (name(p) == property) return p;
    }
    return kNoNode;
  }
  ua::Variant property_value(NodeIndex n, std::string_view property_name) const {
    const NodeIndex p = property(n, property_name);
    INFO(property_name);
    REQUIRE(p != kNoNode);
    return value(p);
  }
  // The NamespaceMetadata objects below Server.Namespaces, by BrowseName.
  std::multimap<std::string, NodeIndex> namespaces() const {
    std::multimap<std::string, NodeIndex> out;
    for (NodeIndex n : targets(find(ua::NodeId(0, ua::id::Server_Namespaces)), ua::id::HasComponent))
      out.emplace(name(n), n);
    return out;
  }
  // The DataTypeDictionaries below OPC Binary, by their NamespaceUri property.
  std::multimap<std::string, NodeIndex> dictionaries() const {
    std::multimap<std::string, NodeIndex> out;
    for (NodeIndex n :
         targets(find(ua::NodeId(0, ua::id::OPCBinarySchema_TypeSystem)), ua::id::HasComponent)) {
      if (type_definition(n) != ua::NodeId(0, ua::id::DataTypeDictionaryType)) continue;
      const NodeIndex uri = property(n, "NamespaceUri");
      const ua::Variant v = uri == kNoNode ? ua::Variant() : value(uri);
      const auto* s = v.get_if<ua::String>();
      out.emplace(s ? std::string(s->view()) : std::string(), n);
    }
    return out;
  }
};

std::string text(const ua::Variant& v) {
  const auto* s = v.get_if<ua::String>();
  return s ? std::string(s->view()) : "<not a String>";
}

// A dictionary's schema, parsed.
struct Schema {
  Schema(const Space& s, NodeIndex dictionary) {
    const ua::Variant v = s.value(dictionary);
    const auto* bytes = v.get_if<ua::ByteString>();
    REQUIRE(bytes);
    xml = std::string(bytes->view());
    const auto parsed = doc.load_string(xml.c_str());
    INFO(parsed.description());
    REQUIRE(parsed);
    root = doc.document_element();
    REQUIRE(std::string_view(root.name()).ends_with("TypeDictionary"));
  }
  pugi::xml_node type(std::string_view kind, std::string_view name) const {
    for (pugi::xml_node t = root.first_child(); t; t = t.next_sibling()) {
      if (std::string_view(t.name()) == kind && name == t.attribute("Name").value()) return t;
    }
    return {};
  }
  // The fields of a StructuredType as "Name:TypeName[attr=value...]" lines.
  static std::vector<std::string> fields(pugi::xml_node t) {
    std::vector<std::string> out;
    for (pugi::xml_node f = t.child("opc:Field"); f; f = f.next_sibling("opc:Field")) {
      std::string s = std::string(f.attribute("Name").value()) + ":" + f.attribute("TypeName").value();
      for (const char* a : {"LengthField", "SwitchField", "SwitchValue", "Length", "SourceType"}) {
        if (f.attribute(a)) s += std::string(" ") + a + "=" + f.attribute(a).value();
      }
      out.push_back(s);
    }
    return out;
  }
  // The data fields of a StructuredType (no length fields, switch bits or padding), in order.
  static std::vector<std::string> data_fields(pugi::xml_node t) {
    std::set<std::string> helpers;
    for (pugi::xml_node f = t.child("opc:Field"); f; f = f.next_sibling("opc:Field")) {
      for (const char* a : {"LengthField", "SwitchField"}) {
        if (f.attribute(a)) helpers.insert(f.attribute(a).value());
      }
      if (std::string_view(f.attribute("TypeName").value()) == "opc:Bit")
        helpers.insert(f.attribute("Name").value());
    }
    std::vector<std::string> out;
    for (pugi::xml_node f = t.child("opc:Field"); f; f = f.next_sibling("opc:Field")) {
      if (!helpers.count(f.attribute("Name").value())) out.push_back(f.attribute("Name").value());
    }
    return out;
  }
  std::string xml;
  pugi::xml_document doc;
  pugi::xml_node root;
};

}  // namespace

TEST_CASE("Every model gets its NamespaceMetadata object below Server.Namespaces", "[nodeset][namespaces]") {
  const LoadResult r = load_files({"types.xml", "types_more.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const auto objects = s.namespaces();
  // Namespace 0's own, and one per model.
  CHECK(objects.count("http://opcfoundation.org/UA/") == 1);
  REQUIRE(objects.count("urn:types") == 1);
  REQUIRE(objects.count("urn:types:more") == 1);
  const NodeIndex types = objects.find("urn:types")->second;
  CHECK(s.store().node_id(types) ==
        ua::NodeId(namespace_of(r.config, "urn:types"), ua::String("NamespaceMetadata")));
  CHECK(s.store().browse_name(types).namespace_index == namespace_of(r.config, "urn:types"));
  CHECK(s.type_definition(types) == ua::NodeId(0, ua::id::NamespaceMetadataType));
  CHECK(text(s.property_value(types, "NamespaceUri")) == "urn:types");
  CHECK(text(s.property_value(types, "NamespaceVersion")) == "1.0");
  const ua::Variant date = s.property_value(types, "NamespacePublicationDate");
  REQUIRE(date.get_if<ua::DateTime>());
  CHECK(date.get_if<ua::DateTime>()->is_null());  // the Model has no PublicationDate
  const ua::Variant subset = s.property_value(types, "IsNamespaceSubset");
  REQUIRE(subset.get_if<bool>());
  CHECK_FALSE(*subset.get_if<bool>());
  // Every node of types.xml has a numeric NodeId (the created Default Binary nodes are not the model's).
  const ua::Variant id_types = s.property_value(types, "StaticNodeIdTypes");
  REQUIRE(id_types.get_if<std::vector<int32_t>>());
  CHECK(*id_types.get_if<std::vector<int32_t>>() == std::vector<int32_t>{0});
  const ua::Variant ranges = s.property_value(types, "StaticNumericNodeIdRange");
  REQUIRE(ranges.get_if<std::vector<ua::String>>());
  CHECK(ranges.get_if<std::vector<ua::String>>()->empty());
  CHECK(text(s.property_value(types, "StaticStringNodeIdPattern")).empty());
  for (const char* p : {"NamespaceUri", "StaticNodeIdTypes"}) {
    const NodeIndex n = s.property(types, p);
    CHECK(s.type_definition(n) == ua::NodeId(0, ua::id::PropertyType));
  }
  CHECK(s.store().variable(s.property(types, "StaticNodeIdTypes"))->value_rank == 1);
}

TEST_CASE("A file's own NamespaceMetadata object is completed, not duplicated", "[nodeset][namespaces]") {
  const LoadResult r = load_files({"shipped.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const auto objects = s.namespaces();
  REQUIRE(objects.count("urn:shipped") == 1);
  const NodeIndex o = objects.find("urn:shipped")->second;
  const uint16_t ns = namespace_of(r.config, "urn:shipped");
  CHECK(s.store().node_id(o) == ua::NodeId(ns, 100));
  CHECK(s.find(ua::NodeId(ns, ua::String("NamespaceMetadata"))) == kNoNode);
  // The file's properties stay, the stale version follows the Model header, the empty one gets a value.
  CHECK(s.store().node_id(s.property(o, "NamespaceUri")) == ua::NodeId(ns, 101));
  CHECK(s.store().node_id(s.property(o, "NamespaceVersion")) == ua::NodeId(ns, 102));
  CHECK(text(s.property_value(o, "NamespaceVersion")) == "2.1");
  const ua::Variant id_types = s.property_value(o, "StaticNodeIdTypes");
  REQUIRE(id_types.get_if<std::vector<int32_t>>());
  CHECK(*id_types.get_if<std::vector<int32_t>>() == std::vector<int32_t>{0});
  // The missing ones are added.
  const ua::Variant date = s.property_value(o, "NamespacePublicationDate");
  REQUIRE(date.get_if<ua::DateTime>());
  CHECK(date.get_if<ua::DateTime>()->to_string().substr(0, 10) == "2024-03-01");
  CHECK(s.store().node_id(s.property(o, "IsNamespaceSubset")) ==
        ua::NodeId(ns, ua::String("i=100.IsNamespaceSubset")));
  CHECK(s.property(o, "StaticNumericNodeIdRange") != kNoNode);
  CHECK(s.property(o, "StaticStringNodeIdPattern") != kNoNode);
}

TEST_CASE("A namespace without a dictionary gets one generated from its DataTypeDefinitions",
          "[nodeset][dictionary]") {
  const LoadResult r = load_files({"types.xml", "types_more.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const uint16_t ns = namespace_of(r.config, "urn:types"), more = namespace_of(r.config, "urn:types:more");
  const auto dictionaries = s.dictionaries();
  REQUIRE(dictionaries.count("urn:types") == 1);
  REQUIRE(dictionaries.count("urn:types:more") == 1);
  const NodeIndex d = dictionaries.find("urn:types")->second;
  CHECK(s.store().node_id(d) == ua::NodeId(ns, ua::String("TypeDictionary.OpcBinary")));
  CHECK(s.store().node_id(s.store().variable(d)->data_type) == ua::NodeId(0, ua::id::ByteString));
  const ua::Variant deprecated = s.property_value(d, "Deprecated");
  REQUIRE(deprecated.get_if<bool>());
  CHECK(*deprecated.get_if<bool>());

  const Schema x(s, d);
  INFO(x.xml);
  CHECK(std::string_view(x.root.attribute("TargetNamespace").value()) == "urn:types");
  // urn:types:more, whose Far is a field of Outer, is imported under a prefix the schema declares.
  const std::string far_prefix = "n" + std::to_string(more);
  CHECK(std::string_view(x.root.attribute(("xmlns:" + far_prefix).c_str()).value()) == "urn:types:more");
  std::set<std::string> imports;
  for (pugi::xml_node i = x.root.child("opc:Import"); i; i = i.next_sibling("opc:Import"))
    imports.insert(i.attribute("Namespace").value());
  CHECK(imports == std::set<std::string>{"http://opcfoundation.org/UA/", "urn:types:more"});

  const pugi::xml_node outer = x.type("opc:StructuredType", "Outer");
  REQUIRE(outer);
  CHECK(std::string_view(outer.attribute("BaseType").value()) == "ua:ExtensionObject");
  CHECK(Schema::fields(outer) == std::vector<std::string>{
                                     "Count:opc:Int32",
                                     "Inner:tns:Inner",
                                     "NoOfInners:opc:Int32",
                                     "Inners:tns:Inner LengthField=NoOfInners",
                                     "Mode:tns:Mode",
                                     "Label:opc:CharArray",
                                     "Far:" + far_prefix + ":Far",
                                 });
  // A subtype with an optional field: the switch bits first, the inherited fields named with their source.
  const pugi::xml_node plus = x.type("opc:StructuredType", "OuterPlus");
  REQUIRE(plus);
  CHECK(std::string_view(plus.attribute("BaseType").value()) == "tns:Outer");
  CHECK(Schema::fields(plus) == std::vector<std::string>{
                                    "ExtraSpecified:opc:Bit",
                                    "Reserved1:opc:Bit Length=31",
                                    "Count:opc:Int32 SourceType=tns:Outer",
                                    "Inner:tns:Inner SourceType=tns:Outer",
                                    "NoOfInners:opc:Int32 SourceType=tns:Outer",
                                    "Inners:tns:Inner LengthField=NoOfInners SourceType=tns:Outer",
                                    "Mode:tns:Mode SourceType=tns:Outer",
                                    "Label:opc:CharArray SourceType=tns:Outer",
                                    "Far:" + far_prefix + ":Far SourceType=tns:Outer",
                                    "Extra:opc:Double SwitchField=ExtraSpecified",
                                });
  const pugi::xml_node choice = x.type("opc:StructuredType", "Choice");
  REQUIRE(choice);
  CHECK(std::string_view(choice.attribute("BaseType").value()) == "ua:Union");
  CHECK(Schema::fields(choice) == std::vector<std::string>{
                                      "SwitchField:opc:UInt32",
                                      "Number:opc:Int32 SwitchField=SwitchField SwitchValue=1",
                                      "Text:opc:CharArray SwitchField=SwitchField SwitchValue=2",
                                  });
  CHECK(Schema::fields(x.type("opc:StructuredType", "Envelope")) ==
        std::vector<std::string>{"Payload:ua:ExtensionObject"});
  CHECK(Schema::fields(x.type("opc:StructuredType", "Tree")) ==
        std::vector<std::string>{"NoOfChildren:opc:Int32", "Children:tns:Tree LengthField=NoOfChildren"});
  const pugi::xml_node mode = x.type("opc:EnumeratedType", "Mode");
  REQUIRE(mode);
  CHECK(mode.attribute("LengthInBits").as_int() == 32);
  CHECK_FALSE(mode.attribute("IsOptionSet"));
  std::vector<std::string> values;
  for (pugi::xml_node v = mode.child("opc:EnumeratedValue"); v; v = v.next_sibling("opc:EnumeratedValue"))
    values.push_back(std::string(v.attribute("Name").value()) + "=" + v.attribute("Value").value());
  CHECK(values == std::vector<std::string>{"Off=0", "On=5"});
  // An OptionSet on UInt32: one value per bit, its mask.
  const pugi::xml_node flags = x.type("opc:EnumeratedType", "Flags");
  REQUIRE(flags);
  CHECK(std::string_view(flags.attribute("IsOptionSet").value()) == "true");
  values.clear();
  for (pugi::xml_node v = flags.child("opc:EnumeratedValue"); v; v = v.next_sibling("opc:EnumeratedValue"))
    values.push_back(std::string(v.attribute("Name").value()) + "=" + v.attribute("Value").value());
  CHECK(values == std::vector<std::string>{"None=0", "Ready=1", "Fault=4"});

  // Every concrete structure's Default Binary encoding describes it by its name in this dictionary; the
  // abstract Envelope has no encoding, so no description.
  std::set<std::string> described;
  for (NodeIndex desc : s.targets(d, ua::id::HasComponent)) {
    CHECK(s.type_definition(desc) == ua::NodeId(0, ua::id::DataTypeDescriptionType));
    const std::string name = text(s.value(desc));
    CHECK(x.type("opc:StructuredType", name));
    const auto encodings = s.targets(desc, ua::id::HasDescription, true);
    REQUIRE(encodings.size() == 1);
    CHECK(s.name(encodings[0]) == "Default Binary");
    const auto type = s.targets(encodings[0], ua::id::HasEncoding, true);
    REQUIRE(type.size() == 1);
    CHECK(s.name(type[0]) == name);
    described.insert(name);
  }
  CHECK(described ==
        std::set<std::string>{"Outer", "OuterPlus", "Inner", "Choice", "Tree", "Holder", "Sealed"});
}

TEST_CASE("A file's own dictionary is kept, with the descriptions its encodings lack",
          "[nodeset][dictionary]") {
  const LoadResult r = load_files({"shipped.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const uint16_t ns = namespace_of(r.config, "urn:shipped");
  const auto dictionaries = s.dictionaries();
  REQUIRE(dictionaries.count("urn:shipped") == 1);
  const NodeIndex d = dictionaries.find("urn:shipped")->second;
  CHECK(s.store().node_id(d) == ua::NodeId(ns, 6001));
  CHECK(s.find(ua::NodeId(ns, ua::String("TypeDictionary.OpcBinary"))) == kNoNode);
  const ua::Variant deprecated = s.property_value(d, "Deprecated");
  REQUIRE(deprecated.get_if<bool>());
  CHECK(*deprecated.get_if<bool>());
  const Schema x(s, d);
  CHECK(x.xml.find("<opc:StructuredType Name=\"Point\"") != std::string::npos);  // the file's text
  for (const auto& [encoding, name] : {std::pair{5001u, "Point"}, std::pair{5002u, "Pair"}}) {
    const auto desc = s.targets(s.find(ua::NodeId(ns, encoding)), ua::id::HasDescription);
    INFO(name);
    REQUIRE(desc.size() == 1);
    CHECK(text(s.value(desc[0])) == name);
    CHECK(s.targets(desc[0], ua::id::HasComponent, true) == std::vector<NodeIndex>{d});
  }
  CHECK(s.store().node_id(s.targets(s.find(ua::NodeId(ns, 5001)), ua::id::HasDescription)[0]) ==
        ua::NodeId(ns, 6002));
}

TEST_CASE("The companion specifications' namespaces and dictionaries", "[nodeset][dictionary][namespaces]") {
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

  // One NamespaceMetadata object per model, the files' own (every specification has one).
  const auto objects = s.namespaces();
  REQUIRE(r.config.imported.models.size() == all.size());
  for (const ImportedModel& m : r.config.imported.models) {
    INFO(m.uri);
    REQUIRE(objects.count(m.uri) == 1);
    const NodeIndex o = objects.find(m.uri)->second;
    CHECK(s.store().node_id(o).type() == ua::IdType::Numeric);
    CHECK(text(s.property_value(o, "NamespaceUri")) == m.uri);
    CHECK(text(s.property_value(o, "NamespaceVersion")) == m.version);
    CHECK(*s.property_value(o, "NamespacePublicationDate").get_if<ua::DateTime>() == m.publication_date);
    CHECK_FALSE(*s.property_value(o, "IsNamespaceSubset").get_if<bool>());
    CHECK(s.property_value(o, "StaticNodeIdTypes").get_if<std::vector<int32_t>>());
    CHECK(s.property(o, "StaticNumericNodeIdRange") != kNoNode);
    CHECK(s.property(o, "StaticStringNodeIdPattern") != kNoNode);
  }
  CHECK(objects.size() == all.size() + 1);
  const NodeIndex di = objects.find("http://opcfoundation.org/UA/DI/")->second;
  CHECK(text(s.property_value(di, "NamespaceVersion")) == "1.04.0");
  CHECK(s.property_value(di, "NamespacePublicationDate").get_if<ua::DateTime>()->to_string().substr(0, 10) ==
        "2022-11-03");
  CHECK(*s.property_value(di, "StaticNodeIdTypes").get_if<std::vector<int32_t>>() == std::vector<int32_t>{0});
  const NodeIndex machinery = objects.find("http://opcfoundation.org/UA/Machinery/")->second;
  CHECK(text(s.property_value(machinery, "NamespaceVersion")) == "1.03.0");
  CHECK(s.property_value(machinery, "NamespacePublicationDate")
            .get_if<ua::DateTime>()
            ->to_string()
            .substr(0, 10) == "2023-08-01");

  // One dictionary per namespace with DataTypeDefinitions; each concrete structure's Default Binary
  // encoding leads to a description whose name the dictionary's schema describes, field by field.
  const auto dictionaries = s.dictionaries();
  std::set<uint16_t> with_types;
  size_t structures = 0;
  for (const ImportedNode& n : r.config.imported.nodes) {
    if (n.spec.node_class != addressspace::NodeClass::DataType || !n.spec.definition) continue;
    const uint16_t ns = n.spec.node_id.namespace_index();
    with_types.insert(ns);
    const std::string& uri = r.config.namespaces[ns];
    INFO(uri << " " << n.spec.node_id.to_string() << " " << std::string(n.spec.browse_name.name.view()));
    REQUIRE(dictionaries.count(uri) == 1);
    const auto* sd = n.spec.definition->get<ua::StructureDefinition>();
    if (!sd || sd->default_encoding_id.is_null()) continue;
    ++structures;
    const auto desc = s.targets(s.find(sd->default_encoding_id), ua::id::HasDescription);
    REQUIRE(desc.size() == 1);
    CHECK(s.type_definition(desc[0]) == ua::NodeId(0, ua::id::DataTypeDescriptionType));
    const auto owner = s.targets(desc[0], ua::id::HasComponent, true);
    REQUIRE(owner.size() == 1);
    CHECK(owner[0] == dictionaries.find(uri)->second);
    const Schema x(s, owner[0]);
    const pugi::xml_node t = x.type("opc:StructuredType", text(s.value(desc[0])));
    REQUIRE(t);
    std::vector<std::string> names;
    for (const ua::StructureField& f : sd->fields) names.push_back(std::string(f.name.view()));
    CHECK(Schema::data_fields(t) == names);
  }
  for (uint16_t ns : with_types) CHECK(dictionaries.count(r.config.namespaces[ns]) == 1);
  CHECK(structures > 50);
  // Every specification with DataTypes ships its dictionary: each is kept, NodeIds and schema, with
  // the Deprecated property, and its schema has each enumeration with all its values.
  for (uint16_t ns : with_types) {
    const std::string& uri = r.config.namespaces[ns];
    INFO(uri);
    const NodeIndex d = dictionaries.find(uri)->second;
    CHECK(s.store().node_id(d).type() == ua::IdType::Numeric);
    const ua::Variant deprecated = s.property_value(d, "Deprecated");
    REQUIRE(deprecated.get_if<bool>());
    CHECK(*deprecated.get_if<bool>());
    const Schema x(s, d);
    for (const ImportedNode& n : r.config.imported.nodes) {
      if (n.spec.node_class != addressspace::NodeClass::DataType || !n.spec.definition ||
          n.spec.node_id.namespace_index() != ns)
        continue;
      const auto* e = n.spec.definition->get<ua::EnumDefinition>();
      if (!e) continue;
      const std::string name(n.spec.browse_name.name.view());
      INFO(name);
      const pugi::xml_node t = x.type("opc:EnumeratedType", name);
      if (!t) {
        CHECK(x.type("opc:StructuredType", name));  // an OptionSet structure
        continue;
      }
      size_t values = 0;
      for (pugi::xml_node v = t.child("opc:EnumeratedValue"); v; v = v.next_sibling("opc:EnumeratedValue"))
        ++values;
      // An OptionSet's has None (0) besides its bits, but in Machinery.Jobs 1.0.1's (see below).
      if (name != "OutputInfoType") CHECK(values == e->fields.size() + (t.attribute("IsOptionSet") ? 1 : 0));
    }
  }
}

TEST_CASE("A reload keeps the namespaces and dictionaries as they were",
          "[nodeset][dictionary][namespaces]") {
  const LoadResult r = load_files({"types.xml", "types_more.xml", "shipped.xml"}, kFixtures);
  INFO(errors_text(r.errors));
  REQUIRE(r.ok());
  Space s(r);
  const LoadResult again = load_files({"types.xml", "types_more.xml", "shipped.xml"}, kFixtures);
  REQUIRE(again.ok());
  const ReloadOutcome out = reload_address_space(r.config, again.config, s.space, *s.p);
  INFO(errors_text(out.errors));
  REQUIRE(out.errors.empty());
  CHECK(out.diff == addressspace::StoreDiff{});
  CHECK(out.values_reset == 0);
  CHECK(s.namespaces().size() == 4);
  CHECK(s.dictionaries().size() == 4);  // namespace 0's and the three files'
}

TEST_CASE("A reload that adds a model adds its NamespaceMetadata object and dictionary",
          "[nodeset][dictionary][namespaces]") {
  const LoadResult r = load_files({"types.xml", "types_more.xml"}, kFixtures);
  REQUIRE(r.ok());
  Space s(r);
  CHECK(s.namespaces().count("urn:shipped") == 0);
  const LoadResult more = load_files({"types.xml", "types_more.xml", "shipped.xml"}, kFixtures);
  REQUIRE(more.ok());
  const ReloadOutcome out = reload_address_space(r.config, more.config, s.space, *s.p);
  INFO(errors_text(out.errors));
  REQUIRE(out.errors.empty());
  const auto objects = s.namespaces();
  REQUIRE(objects.count("urn:shipped") == 1);
  CHECK(text(s.property_value(objects.find("urn:shipped")->second, "NamespaceVersion")) == "2.1");
  CHECK(s.dictionaries().count("urn:shipped") == 1);
  CHECK(objects.count("urn:types") == 1);
}

namespace {

// `text` without its OPC Binary dictionaries (the DataTypeDictionaryType variables, the
// DataTypeDescriptionType variables and every reference to them), as if the file had none.
std::string without_dictionaries(const std::string& text) {
  pugi::xml_document doc;
  REQUIRE(doc.load_string(text.c_str()));
  std::set<std::string> removed;
  std::vector<pugi::xml_node> nodes;
  for (pugi::xml_node n = doc.document_element().first_child(); n; n = n.next_sibling()) {
    for (pugi::xml_node r = n.child("References").first_child(); r; r = r.next_sibling()) {
      const std::string_view type = r.attribute("ReferenceType").value(), target = r.text().get();
      if ((type == "HasTypeDefinition" || type == "i=40") && (target == "i=72" || target == "i=69")) {
        removed.insert(n.attribute("NodeId").value());
        nodes.push_back(n);
      }
    }
  }
  // Their properties too.
  for (bool more = true; more;) {
    more = false;
    for (pugi::xml_node n = doc.document_element().first_child(); n; n = n.next_sibling()) {
      if (removed.count(n.attribute("ParentNodeId").value()) &&
          removed.insert(n.attribute("NodeId").value()).second) {
        nodes.push_back(n);
        more = true;
      }
    }
  }
  for (pugi::xml_node n : nodes) doc.document_element().remove_child(n);
  for (pugi::xml_node n = doc.document_element().first_child(); n; n = n.next_sibling()) {
    std::vector<pugi::xml_node> refs;
    for (pugi::xml_node r = n.child("References").first_child(); r; r = r.next_sibling()) {
      if (removed.count(r.text().get())) refs.push_back(r);
    }
    for (pugi::xml_node r : refs) n.child("References").remove_child(r);
  }
  std::ostringstream out;
  doc.save(out);
  return out.str();
}

// A field line of Schema::fields() with the prefixes of other namespaces dropped (each file names them
// its own way).
std::string unprefixed(std::string line) {
  for (size_t at = line.find(':'); at != std::string::npos; at = line.find(':', at + 1)) {
    const size_t start = line.find_last_of(" =:", at - 1) + 1;
    const std::string p = line.substr(start, at - start);
    if (p != "opc" && p != "ua" && p != "tns" && !p.empty() && start > line.find(':')) {
      line.erase(start, at - start + 1);
      at = start;
    }
  }
  return line;
}

}  // namespace

TEST_CASE("Generated dictionaries describe the companion specifications as their own do",
          "[nodeset][dictionary]") {
  if (!std::filesystem::exists(kCompanion / "DI/Opc.Ua.Di.NodeSet2.xml")) {
    WARN("skipped: no companion specifications at " << kCompanion.string());
    return;
  }
  const std::vector<std::string> all = {
      "DI/Opc.Ua.Di.NodeSet2.xml",
      "IA/Opc.Ua.IA.NodeSet2.xml",
      "Machinery/Opc.Ua.Machinery.NodeSet2.xml",
      "ISA95-JOBCONTROL/opc.ua.isa95-jobcontrol.nodeset2.xml",
      "Machinery/Jobs/Opc.Ua.Machinery.Jobs.Nodeset2.xml",
      "Machinery/Result/Opc.Ua.Machinery.Result.NodeSet2.xml",
      "MachineTool/Opc.Ua.MachineTool.NodeSet2.xml",
      "PackML/Opc.Ua.PackML.NodeSet2.xml",
      "MachineVision/Opc.Ua.MachineVision.NodeSet2.xml",
      "AutoID/Opc.Ua.AutoID.NodeSet2.xml",
      "Robotics/Opc.Ua.Robotics.NodeSet2.xml",
  };
  const LoadResult with = load_files(all, kCompanion);
  REQUIRE(with.ok());
  // The same files stripped of their dictionaries, in a directory of their own.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("opcuad_dictionary_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> stripped;
  for (size_t i = 0; i < all.size(); ++i) {
    std::ifstream in(kCompanion / all[i], std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name = std::to_string(i) + ".xml";
    std::ofstream(dir / name, std::ios::binary) << without_dictionaries(text);
    stripped.push_back(name);
  }
  const LoadResult without = load_files(stripped, dir);
  std::filesystem::remove_all(dir);
  INFO(errors_text(without.errors));
  REQUIRE(without.ok());
  Space original(with), generated(without);
  const auto originals = original.dictionaries(), generateds = generated.dictionaries();
  size_t compared = 0, differ = 0;
  for (const auto& [uri, d] : generateds) {
    if (uri == "http://opcfoundation.org/UA/") continue;
    INFO(uri);
    CHECK(generated.store().node_id(d).type() == ua::IdType::String);
    REQUIRE(originals.count(uri) == 1);
    const Schema mine(generated, d), theirs(original, originals.find(uri)->second);
    for (pugi::xml_node t = theirs.root.first_child(); t; t = t.next_sibling()) {
      const std::string_view kind = t.name();
      if (kind != "opc:StructuredType" && kind != "opc:EnumeratedType") continue;
      const pugi::xml_node m = mine.type(kind, t.attribute("Name").value());
      INFO(t.attribute("Name").value());
      CHECK(m);
      if (!m) continue;
      ++compared;
      if (kind == "opc:EnumeratedType") {
        CHECK(std::string_view(m.attribute("LengthInBits").value()) == t.attribute("LengthInBits").value());
        CHECK(std::string_view(m.attribute("IsOptionSet").value()) == t.attribute("IsOptionSet").value());
        auto values = [](pugi::xml_node e) {
          std::vector<std::string> out;
          for (pugi::xml_node v = e.child("opc:EnumeratedValue"); v;
               v = v.next_sibling("opc:EnumeratedValue"))
            out.push_back(std::string(v.attribute("Name").value()) + "=" + v.attribute("Value").value());
          return out;
        };
        // Machinery.Jobs 1.0.1 gives OutputInfoType's values as bit numbers without None; namespace 0's
        // Opc.Ua.Types.bsd and DI's give OptionSets None (0) and each bit's mask, as opcuad does.
        if (std::string_view(t.attribute("Name").value()) == "OutputInfoType") {
          CHECK(values(t) == std::vector<std::string>{"OrderNumber=0", "LotNumber=1", "SerialNumber=2"});
          CHECK(values(m) ==
                std::vector<std::string>{"None=0", "OrderNumber=1", "LotNumber=2", "SerialNumber=4"});
        } else {
          CHECK(values(m) == values(t));
        }
        continue;
      }
      std::vector<std::string> a, b;
      for (const auto& f : Schema::fields(m)) a.push_back(unprefixed(f));
      for (const auto& f : Schema::fields(t)) b.push_back(unprefixed(f));
      if (a != b) ++differ;
      CHECK(a == b);
    }
  }
  CHECK(compared > 80);
  CHECK(differ == 0);
}

TEST_CASE("What the loader cannot create is an error with the file and line",
          "[nodeset][dictionary][namespaces]") {
  // Two enumerations of one name, and a node of the model holding the NodeId its metadata object needs.
  const std::string text = R"(<?xml version="1.0" encoding="utf-8"?>
<UANodeSet xmlns="http://opcfoundation.org/UA/2011/03/UANodeSet.xsd">
  <NamespaceUris><Uri>urn:clash</Uri></NamespaceUris>
  <Models>
    <Model ModelUri="urn:clash" Version="1.0" />
  </Models>
  <UAObject NodeId="ns=1;s=NamespaceMetadata" BrowseName="1:Other">
    <References><Reference ReferenceType="i=40">i=58</Reference></References>
  </UAObject>
  <UADataType NodeId="ns=1;i=1" BrowseName="1:Same">
    <References><Reference ReferenceType="i=45" IsForward="false">i=29</Reference></References>
    <Definition Name="1:Same"><Field Name="A" Value="0" /></Definition>
  </UADataType>
  <UADataType NodeId="ns=1;i=2" BrowseName="1:Same">
    <References><Reference ReferenceType="i=45" IsForward="false">i=29</Reference></References>
    <Definition Name="1:Same"><Field Name="B" Value="0" /></Definition>
  </UADataType>
</UANodeSet>
)";
  LoadResult r;
  r.config.namespaces = {"http://opcfoundation.org/UA/", "urn:opcuad:server"};
  load_nodeset_file_text(text, "clash.xml", r);
  resolve_nodesets(r);
  const std::string e = errors_text(r.errors);
  INFO(e);
  CHECK(r.errors.size() == 2);
  CHECK(e.find("clash.xml: line 5: model urn:clash: its NamespaceMetadata object is missing, and "
               "ns=2;s=NamespaceMetadata is taken") != std::string::npos);
  CHECK(e.find(
            "clash.xml: line 14: DataType ns=2;i=2: another DataType of urn:clash is named Same, and the OPC "
            "Binary dictionary needs each name once (Part 5 §C.1)") != std::string::npos);
}
