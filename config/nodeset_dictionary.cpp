// The OPC Binary DataTypeDictionary of every namespace whose DataTypes a NodeSet2 file defines (Part 5
// Annex D, Part 3 §5.8.3): clients of the 1.03 era find a structure's layout by following its Default
// Binary encoding's HasDescription to a DataTypeDescription, whose Value names a StructuredType in the
// XML schema (Part 5 Annex C) that is the Value of the dictionary holding it. A file's own dictionary is
// kept; any other is generated here from the resolved DataTypeDefinitions (docs/CONFIGURATION.md,
// "NodeSet2 node files", "OPC Binary type dictionaries").
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <pugixml.hpp>

#include "addressspace/namespace0.hpp"
#include "addressspace/node_store.hpp"
#include "config/config.hpp"
#include "config/nodeset_document.hpp"
#include "config/type_names.hpp"
#include "config/xml_value.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

constexpr const char* kBinarySchemaUri = "http://opcfoundation.org/BinarySchema/";

// The OPC Binary type of a built-in type (Part 5 Annex C.3, Opc.Ua.BinarySchema.bsd), by its number.
constexpr const char* kBuiltinNames[] = {
    "ua:Variant",        "opc:Boolean",      "opc:SByte",          "opc:Byte",          "opc:Int16",
    "opc:UInt16",        "opc:Int32",        "opc:UInt32",         "opc:Int64",         "opc:UInt64",
    "opc:Float",         "opc:Double",       "opc:CharArray",      "opc:DateTime",      "opc:Guid",
    "opc:ByteString",    "ua:XmlElement",    "ua:NodeId",          "ua:ExpandedNodeId", "ua:StatusCode",
    "ua:QualifiedName",  "ua:LocalizedText", "ua:ExtensionObject", "ua:DataValue",      "ua:Variant",
    "ua:DiagnosticInfo",
};

// The node created below `parent`: `<parent's identifier>.<name>` in the parent's namespace.
ua::NodeId dictionary_child_id(const ua::NodeId& parent, std::string_view name) {
  return ua::NodeId(parent.namespace_index(),
                    ua::String(std::string(parent.string()) + "." + std::string(name)));
}

class DictionaryBuilder {
 public:
  DictionaryBuilder(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index)
      : result_(result), out_(result.config.imported), lookup_(lookup), index_(index) {
    const ua::NodeId has_description(0, ua::id::HasDescription),
        has_type_definition(0, ua::id::HasTypeDefinition), opc_binary(0, ua::id::OPCBinarySchema_TypeSystem);
    for (const uint32_t i : index_.marked()) {
      const CreatedReference r{out_.id(out_.references[i].source), out_.id(out_.references[i].type),
                               out_.id(out_.references[i].target)};
      if (r.type == has_description) described_.insert(r.source);
      if (r.type == has_type_definition && r.target == ua::NodeId(0, ua::id::DataTypeDictionaryType))
        dictionaries_.insert(r.source);
      if (r.source == opc_binary) below_opc_binary_.insert(r.target);
      if (r.target == opc_binary) below_opc_binary_.insert(r.source);
    }
  }

  void run() {
    // The DataTypes with a definition, by namespace, in file order.
    std::map<uint16_t, std::vector<size_t>> types;
    for (size_t i = 0; i < out_.nodes.size(); ++i) {
      const ImportedSpec& s = out_.nodes[i].spec;
      if (s.node_class == addressspace::NodeClass::DataType && s.definition &&
          s.node_id.namespace_index() != 0)
        types[s.node_id.namespace_index()].push_back(i);
    }
    for (const auto& [ns, list] : types) namespace_dictionary(ns, list);
    for (ImportedNode& n : created_nodes_) index_.add_node(std::move(n));
    for (const CreatedReference& r : created_references_) index_.add_reference(r);
  }

 private:
  // ---- what is known of a DataType, across namespace 0 and the files

  const ImportedSpec* imported(const ua::NodeId& id) const { return index_.spec(id); }
  // The nearest namespace-0 DataType at or above `type`, or kNoNode.
  addressspace::NodeIndex ns0_ancestor(ua::NodeId type) const {
    for (int depth = 0; depth < kMaxSupertypeDepth; ++depth) {
      const addressspace::NodeIndex n = ns0_store().find(type);
      if (n != addressspace::kNoNode) return n;
      const ua::NodeId* up = index_.supertype(type);
      if (!up) return addressspace::kNoNode;
      type = *up;
    }
    return addressspace::kNoNode;
  }
  bool ns0_is(addressspace::NodeIndex n, uint32_t base) const {
    const addressspace::NodeIndex b = ns0_store().find(ua::NodeId(0, base));
    return n != addressspace::kNoNode && ns0_store().is_data_type_subtype(n, b);
  }
  bool is_abstract(const ua::NodeId& type) const {
    if (const ImportedSpec* s = imported(type)) return s->is_abstract;
    const addressspace::NodeIndex n = ns0_store().find(type);
    return n != addressspace::kNoNode && ns0_store().has_flag(n, addressspace::flag::kIsAbstract);
  }
  std::string name_of(const ua::NodeId& type) const {
    if (const ImportedSpec* s = imported(type)) return std::string(s->browse_name.name.view());
    const addressspace::NodeIndex n = ns0_store().find(type);
    return n == addressspace::kNoNode ? std::string() : std::string(ns0_store().browse_name(n).name.view());
  }
  const ua::ExtensionObject* definition_of(const ua::NodeId& type) const {
    if (const ImportedSpec* s = imported(type)) return s->definition ? &*s->definition : nullptr;
    const addressspace::NodeIndex n = ns0_store().find(type);
    return n == addressspace::kNoNode ? nullptr : ns0_store().data_type_definition(n);
  }

  // The prefix of `type`'s namespace in the dictionary being written: tns for its own, ua for namespace
  // 0, another declared (and imported) once per namespace.
  std::string prefix(const ua::NodeId& type) {
    const uint16_t ns = type.namespace_index();
    if (ns == 0) return "ua";
    if (ns == target_) return "tns";
    imports_.insert(ns);
    return "n" + std::to_string(ns);
  }

  // The OPC Binary TypeName a field of DataType `type` is encoded as (Part 6 §5.2.7): the type's own
  // description for enumerations and concrete structures, ExtensionObject for a structure that may be a
  // subtype, Variant for any other value that may be one, else the built-in type it encodes as.
  std::string type_name(const ua::NodeId& type, bool allow_subtypes) {
    const addressspace::NodeIndex a = ns0_ancestor(type);
    if (a == addressspace::kNoNode) return "ua:Variant";
    const auto& s = ns0_store();
    const addressspace::DataTypeAttributes* dt = s.data_type(a);
    const uint8_t builtin = dt ? dt->builtin : 0;
    if (ns0_is(a, ua::id::Enumeration)) {
      if (type == ua::NodeId(0, ua::id::Enumeration) || !definition_of(type)) return "opc:Int32";
      return prefix(type) + ":" + name_of(type);
    }
    if (builtin == static_cast<uint8_t>(ua::BuiltinType::ExtensionObject)) {
      if (allow_subtypes || is_abstract(type)) return "ua:ExtensionObject";
      return prefix(type) + ":" + name_of(type);
    }
    if (allow_subtypes) return "ua:Variant";
    // An OptionSet on an unsigned integer (Part 3 §8.40) has its EnumeratedType with IsOptionSet.
    if (type.namespace_index() != 0 && definition_of(type) && definition_of(type)->get<ua::EnumDefinition>())
      return prefix(type) + ":" + name_of(type);
    return builtin <= ua::kMaxBuiltinType ? kBuiltinNames[builtin] : "ua:Variant";
  }

  // ---- one namespace

  void namespace_dictionary(uint16_t ns, const std::vector<size_t>& types) {
    const std::string uri = ns < result_.config.namespaces.size() ? result_.config.namespaces[ns] : "";
    const ImportedNode& first = out_.nodes[types.front()];
    file_ = first.file;
    line_ = first.line;
    if (const ua::NodeId own = file_dictionary(uri); !own.is_null()) return keep(own, types);
    generate(ns, uri, types);
  }

  // The file's OPC Binary dictionary of namespace `uri`: a DataTypeDictionaryType variable below OPC
  // Binary whose NamespaceUri property, or else its schema's TargetNamespace, is `uri`.
  ua::NodeId file_dictionary(const std::string& uri) const {
    for (const ua::NodeId& d : dictionaries_) {
      if (!below_opc_binary_.count(d)) continue;
      if (const ImportedSpec* p = property(d, "NamespaceUri"); p && p->value) {
        const auto* s = p->value->value.get_if<ua::String>();
        if (s && s->view() == uri) return d;
        continue;
      }
      pugi::xml_document doc;
      if (schema(d, doc) &&
          std::string_view(doc.document_element().attribute("TargetNamespace").value()) == uri)
        return d;
    }
    return {};
  }

  const ImportedSpec* property(const ua::NodeId& node, std::string_view name) const {
    for (const ua::NodeId& p : index_.properties(node)) {
      const ImportedSpec* s = imported(p);
      if (s && s->browse_name.name.view() == name) return s;
    }
    return nullptr;
  }

  // The XML schema a dictionary's Value holds.
  bool schema(const ua::NodeId& dictionary, pugi::xml_document& doc) const {
    const ImportedSpec* s = imported(dictionary);
    const auto* bytes = s && s->value ? s->value->value.get_if<ua::ByteString>() : nullptr;
    if (!bytes) return false;
    const std::string_view text = bytes->view();
    return doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8) &&
           doc.document_element();
  }

  // The Default Binary encoding node of `type`, or null.
  ua::NodeId default_binary(const ua::NodeId& type) const {
    const std::vector<ua::NodeId>* encodings = index_.encodings(type);
    if (!encodings) return {};
    for (const ua::NodeId& e : *encodings) {
      const ImportedSpec* s = imported(e);
      if (s && s->browse_name == ua::QualifiedName{0, ua::String("Default Binary")}) return e;
    }
    return {};
  }

  // A file's dictionary stays as the file has it (its NodeIds and schema are the specification's). It
  // gains the Deprecated property Part 5 §D.5.2 asks of a server that also has DataTypeDefinitions, and a
  // DataTypeDescription for each structure its schema describes whose encoding has no HasDescription.
  void keep(const ua::NodeId& dictionary, const std::vector<size_t>& types) {
    target_ = 0;
    if (!property(dictionary, "Deprecated"))
      add_property(dictionary, "Deprecated", ua::id::Boolean, ua::Variant(true));
    pugi::xml_document doc;
    if (!schema(dictionary, doc)) return;
    std::unordered_set<std::string> described;
    for (pugi::xml_node t = doc.document_element().first_child(); t; t = t.next_sibling()) {
      if (local_name(t.name()) == "StructuredType") described.insert(t.attribute("Name").value());
    }
    for (size_t i : types) {
      const ImportedSpec& s = out_.nodes[i].spec;
      const ua::NodeId encoding = default_binary(s.node_id);
      const std::string name(s.browse_name.name.view());
      if (encoding.is_null() || described_.count(encoding) || !described.count(name)) continue;
      add_description(dictionary, encoding, name, s.node_id.namespace_index());
    }
  }

  void generate(uint16_t ns, const std::string& uri, const std::vector<size_t>& types) {
    target_ = ns;
    imports_.clear();
    pugi::xml_document doc;
    pugi::xml_node root = doc.append_child("opc:TypeDictionary");
    root.append_attribute("xmlns:opc") = kBinarySchemaUri;
    root.append_attribute("xmlns:xsi") = "http://www.w3.org/2001/XMLSchema-instance";
    root.append_attribute("xmlns:ua") = addressspace::kNamespace0Uri;
    root.append_attribute("xmlns:tns") = uri.c_str();
    root.append_attribute("DefaultByteOrder") = "LittleEndian";
    root.append_attribute("TargetNamespace") = uri.c_str();
    pugi::xml_node import = root.append_child("opc:Import");
    import.append_attribute("Namespace") = addressspace::kNamespace0Uri;
    import.append_attribute("Location") = "Opc.Ua.BinarySchema.bsd";
    std::unordered_set<std::string> names;
    std::vector<std::pair<std::string, ua::NodeId>> described;  // type name, its Default Binary encoding
    for (size_t i : types) {
      const ImportedSpec& s = out_.nodes[i].spec;
      const std::string name(s.browse_name.name.view());
      if (!names.insert(name).second) {
        result_.errors.push_back(
            {out_.files[out_.nodes[i].file], "line " + std::to_string(out_.nodes[i].line),
             "DataType " + s.node_id.to_string() + ": another DataType of " + uri + " is named " + name +
                 ", and the OPC Binary dictionary needs each "
                 "name once (Part 5 §C.1)"});
        continue;
      }
      if (const auto* e = s.definition->get<ua::EnumDefinition>()) {
        enumerated(root, s.node_id, name, *e);
      } else if (const auto* d = s.definition->get<ua::StructureDefinition>()) {
        structured(root, s.node_id, name, *d);
      } else {
        continue;
      }
      if (const ua::NodeId e = default_binary(s.node_id); !e.is_null() && !described_.count(e))
        described.emplace_back(name, e);
    }
    for (uint16_t other : imports_) {
      const std::string other_uri =
          other < result_.config.namespaces.size() ? result_.config.namespaces[other] : "";
      root.append_attribute(("xmlns:n" + std::to_string(other)).c_str()) = other_uri.c_str();
      pugi::xml_node i = root.insert_child_after("opc:Import", import);
      i.append_attribute("Namespace") = other_uri.c_str();
    }
    struct Writer : pugi::xml_writer {
      std::string text;
      void write(const void* data, size_t size) override {
        text.append(static_cast<const char*>(data), size);
      }
    } writer;
    doc.save(writer, "  ", pugi::format_default, pugi::encoding_utf8);

    const ua::NodeId dictionary(ns, ua::String("TypeDictionary.OpcBinary"));
    if (taken(dictionary)) {
      error("the OPC Binary dictionary of " + uri + " cannot be created: " + dictionary.to_string() +
            " is taken");
      return;
    }
    created_nodes_.push_back(
        created_variable(dictionary, ua::QualifiedName{ns, ua::String(uri)}, ua::id::ByteString, -1,
                         ua::Variant(ua::ByteString(std::move(writer.text))), file_, line_));
    add_reference(ua::NodeId(0, ua::id::OPCBinarySchema_TypeSystem), ua::id::HasComponent, dictionary);
    add_reference(dictionary, ua::id::HasTypeDefinition, ua::NodeId(0, ua::id::DataTypeDictionaryType));
    add_property(dictionary, "NamespaceUri", ua::id::String, ua::Variant(ua::String(uri)));
    add_property(dictionary, "Deprecated", ua::id::Boolean, ua::Variant(true));
    for (const auto& [name, encoding] : described) add_description(dictionary, encoding, name, ns);
  }

  // Part 5 §C.3.5: an enumeration's values; an OptionSet on an unsigned integer has IsOptionSet, None (0)
  // and one value per bit (the bit's mask); an OptionSet structure (Part 3 §8.40) has Value and ValidBits.
  void enumerated(pugi::xml_node root, const ua::NodeId& type, const std::string& name,
                  const ua::EnumDefinition& e) {
    const addressspace::NodeIndex a = ns0_ancestor(type);
    const addressspace::DataTypeAttributes* dt =
        a == addressspace::kNoNode ? nullptr : ns0_store().data_type(a);
    const uint8_t builtin = dt ? dt->builtin : 0;
    if (builtin == static_cast<uint8_t>(ua::BuiltinType::ExtensionObject)) {
      pugi::xml_node t = root.append_child("opc:StructuredType");
      t.append_attribute("Name") = name.c_str();
      t.append_attribute("BaseType") = "ua:ExtensionObject";
      for (const char* f : {"Value", "ValidBits"}) {
        pugi::xml_node field = t.append_child("opc:Field");
        field.append_attribute("Name") = f;
        field.append_attribute("TypeName") = "opc:ByteString";
      }
      return;
    }
    const bool option_set = !ns0_is(a, ua::id::Enumeration);
    unsigned bits = 32;
    switch (static_cast<ua::BuiltinType>(builtin)) {
      case ua::BuiltinType::Byte:
      case ua::BuiltinType::SByte:
        bits = 8;
        break;
      case ua::BuiltinType::UInt16:
      case ua::BuiltinType::Int16:
        bits = 16;
        break;
      case ua::BuiltinType::UInt64:
      case ua::BuiltinType::Int64:
        bits = 64;
        break;
      default:
        break;
    }
    pugi::xml_node t = root.append_child("opc:EnumeratedType");
    t.append_attribute("Name") = name.c_str();
    t.append_attribute("LengthInBits") = bits;
    if (option_set) {
      t.append_attribute("IsOptionSet") = "true";
      // No bit set, as the specifications' own dictionaries name it.
      const bool named = std::any_of(e.fields.begin(), e.fields.end(),
                                     [](const ua::EnumField& f) { return f.name.view() == "None"; });
      if (!named) {
        pugi::xml_node v = t.append_child("opc:EnumeratedValue");
        v.append_attribute("Name") = "None";
        v.append_attribute("Value") = 0;
      }
    }
    for (const ua::EnumField& f : e.fields) {
      pugi::xml_node v = t.append_child("opc:EnumeratedValue");
      v.append_attribute("Name") = std::string(f.name.view()).c_str();
      const long long value = option_set && f.value >= 0 && f.value < 64
                                  ? static_cast<long long>(uint64_t{1} << f.value)
                                  : f.value;
      v.append_attribute("Value") = value;
    }
  }

  // Part 5 §C.3.4 and Part 6 §5.2.7: the fields in order, a subtype's inherited ones first with the type
  // that declared them as SourceType; arrays as a NoOf<Name> Int32 and the field with LengthField; the
  // switch bits of optional fields first (one opc:Bit each, padded to 32), a union's UInt32 SwitchField.
  void structured(pugi::xml_node root, const ua::NodeId& type, const std::string& name,
                  const ua::StructureDefinition& d) {
    using ST = ua::StructureTypeEnum;
    const bool is_union = d.structure_type == ST::Union || d.structure_type == ST::UnionWithSubtypedValues;
    const bool optional = d.structure_type == ST::StructureWithOptionalFields;
    const bool subtyped = d.structure_type == ST::StructureWithSubtypedValues ||
                          d.structure_type == ST::UnionWithSubtypedValues;
    pugi::xml_node t = root.append_child("opc:StructuredType");
    t.append_attribute("Name") = name.c_str();
    const ua::NodeId& base = d.base_data_type;
    std::string base_name;
    if (is_union || base == ua::NodeId(0, ua::id::Union)) {
      base_name = "ua:Union";
    } else if (base.is_null() || base == ua::NodeId(0, ua::id::Structure)) {
      base_name = "ua:ExtensionObject";
    } else {
      base_name = prefix(base) + ":" + name_of(base);
    }
    t.append_attribute("BaseType") = base_name.c_str();
    // Which type declared field i: the highest supertype whose definition already has it.
    std::vector<ua::NodeId> source(d.fields.size(), type);
    {
      ua::NodeId up = base;
      for (int depth = 0; depth < kMaxSupertypeDepth && !up.is_null(); ++depth) {
        const ua::ExtensionObject* def = definition_of(up);
        const auto* sd = def ? def->get<ua::StructureDefinition>() : nullptr;
        if (!sd || sd->fields.empty()) break;
        for (size_t i = 0; i < std::min(sd->fields.size(), source.size()); ++i) source[i] = up;
        up = sd->base_data_type;
      }
    }
    auto field = [&](const std::string& field_name, const std::string& type_name) {
      pugi::xml_node f = t.append_child("opc:Field");
      f.append_attribute("Name") = field_name.c_str();
      f.append_attribute("TypeName") = type_name.c_str();
      return f;
    };
    if (optional) {
      unsigned n = 0;
      for (const ua::StructureField& f : d.fields) {
        if (!f.is_optional) continue;
        field(std::string(f.name.view()) + "Specified", "opc:Bit");
        ++n;
      }
      if (n % 32 != 0) field("Reserved1", "opc:Bit").append_attribute("Length") = 32 - n % 32;
    }
    if (is_union) field("SwitchField", "opc:UInt32");
    for (size_t i = 0; i < d.fields.size(); ++i) {
      const ua::StructureField& f = d.fields[i];
      const std::string fname(f.name.view());
      const std::string tname = type_name(f.data_type, subtyped && f.is_optional);
      auto decorate = [&](pugi::xml_node x) {
        if (source[i] != type)
          x.append_attribute("SourceType") = (prefix(source[i]) + ":" + name_of(source[i])).c_str();
        if (optional && f.is_optional) x.append_attribute("SwitchField") = (fname + "Specified").c_str();
        if (is_union) {
          x.append_attribute("SwitchField") = "SwitchField";
          x.append_attribute("SwitchValue") = static_cast<unsigned>(i + 1);
        }
      };
      if (f.value_rank >= 0) {
        decorate(field("NoOf" + fname, "opc:Int32"));
        pugi::xml_node x = field(fname, tname);
        x.append_attribute("LengthField") = ("NoOf" + fname).c_str();
        decorate(x);
      } else {
        decorate(field(fname, tname));
      }
    }
  }

  // ---- nodes

  bool taken(const ua::NodeId& id) const {
    return index_.find(id) != ImportedIndex::kNone ||
           lookup_.node_class(id) != addressspace::NodeClass::Unspecified;
  }

  void add_description(const ua::NodeId& dictionary, const ua::NodeId& encoding, const std::string& name,
                       uint16_t ns) {
    const ua::NodeId id = dictionary.type() == ua::IdType::String
                              ? dictionary_child_id(dictionary_child_id(dictionary, "Types"), name)
                              : ua::NodeId(ns, ua::String("TypeDictionary.OpcBinary.Types." + name));
    if (taken(id)) {
      error("the DataTypeDescription of " + name + " cannot be created: " + id.to_string() + " is taken");
      return;
    }
    created_nodes_.push_back(created_variable(id, ua::QualifiedName{ns, ua::String(name)}, ua::id::String, -1,
                                              ua::Variant(ua::String(name)), file_, line_));
    add_reference(dictionary, ua::id::HasComponent, id);
    add_reference(id, ua::id::HasTypeDefinition, ua::NodeId(0, ua::id::DataTypeDescriptionType));
    add_reference(encoding, ua::id::HasDescription, id);
  }

  void add_property(const ua::NodeId& parent, const char* name, uint32_t data_type, ua::Variant value) {
    const ua::NodeId id =
        parent.type() == ua::IdType::String
            ? dictionary_child_id(parent, name)
            : ua::NodeId(
                  parent.namespace_index(),
                  ua::String(parent.to_string().substr(parent.to_string().find(';') + 1) + "." + name));
    if (taken(id)) {
      error(std::string("the ") + name + " property of " + parent.to_string() +
            " cannot be created: " + id.to_string() + " is taken");
      return;
    }
    created_nodes_.push_back(created_variable(id, ua::QualifiedName{0, ua::String(name)}, data_type, -1,
                                              std::move(value), file_, line_));
    add_reference(parent, ua::id::HasProperty, id);
    add_reference(id, ua::id::HasTypeDefinition, ua::NodeId(0, ua::id::PropertyType));
  }

  void add_reference(const ua::NodeId& source, uint32_t type, const ua::NodeId& target) {
    created_references_.push_back({source, ua::NodeId(0, type), target, file_, line_});
  }

  void error(std::string reason) {
    result_.errors.push_back({out_.files[file_], "line " + std::to_string(line_), std::move(reason)});
  }

  LoadResult& result_;
  ImportedModels& out_;
  const DataTypeLookup& lookup_;
  ImportedIndex& index_;
  std::unordered_set<ua::NodeId> described_;  // encodings with a HasDescription
  std::unordered_set<ua::NodeId> dictionaries_;
  std::unordered_set<ua::NodeId> below_opc_binary_;
  std::vector<ImportedNode> created_nodes_;
  std::vector<CreatedReference> created_references_;
  // The dictionary being written: its namespace, the other namespaces its fields name, where it comes from.
  uint16_t target_ = 0;
  std::set<uint16_t> imports_;
  uint32_t file_ = 0, line_ = 0;
};

}  // namespace

void add_type_dictionaries(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index) {
  DictionaryBuilder(result, lookup, index).run();
}

}  // namespace opcuad::config
