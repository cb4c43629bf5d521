// NodeSet2 node files (UANodeSet schema, Part 6 Annex F), one at a time: parsed with pugixml, and turned
// into nodes and references of the server's namespaces (nodeset_resolve.cpp orders and checks them).
#include <algorithm>
#include <charconv>
#include <unordered_map>

#include <pugixml.hpp>

#include "config/config.hpp"
#include "config/json_value.hpp"
#include "config/nodeset_document.hpp"
#include "config/xml_value.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

// pugixml's options, explicit: entities (&lt; &#38; ...) and CDATA are read, end-of-lines normalised; no
// DOCTYPE, processing instruction or comment enters the tree. pugixml never expands an entity a DTD
// declares, let alone an external one, so a hostile file cannot make it read other files or grow
// without bound.
constexpr unsigned kParseOptions =
    pugi::parse_escapes | pugi::parse_cdata | pugi::parse_eol | pugi::parse_wconv_attribute;

// The largest NodeSet2 file read (the companion specifications are below 1 MB).
constexpr size_t kMaxFileBytes = 256u << 20;

}  // namespace

void load_nodeset_file_text(std::string text, const std::string& file_name, LoadResult& into) {
  auto d = std::make_shared<NodeSetDocument>();
  d->file = file_name;
  d->text = std::move(text);
  auto error = [&](uint32_t line, std::string reason) {
    into.errors.push_back({file_name, line ? "line " + std::to_string(line) : "", std::move(reason)});
  };
  if (d->text.size() > kMaxFileBytes) {
    error(0, "larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB");
    into.unparsed_files = true;
    return;
  }
  for (size_t i = d->text.find('\n'); i != std::string::npos; i = d->text.find('\n', i + 1))
    d->line_starts.push_back(i + 1);
  const pugi::xml_parse_result parsed =
      d->doc.load_buffer_inplace(d->text.data(), d->text.size(), kParseOptions, pugi::encoding_utf8);
  if (!parsed) {
    error(d->line_at(parsed.offset), std::string("malformed XML: ") + parsed.description());
    into.unparsed_files = true;
    return;
  }
  const pugi::xml_node root = d->doc.document_element();
  if (local_name(root.name()) != "UANodeSet") {
    error(d->line(root),
          "not a NodeSet2 file: the root element is <" + std::string(root.name()) + ">, not <UANodeSet>");
    into.unparsed_files = true;
    return;
  }
  for (pugi::xml_node u = xml_child(root, "NamespaceUris").first_child(); u; u = u.next_sibling()) {
    if (u.type() != pugi::node_element) continue;
    std::string uri(xml_trim(u.text().get()));
    if (uri.empty()) error(d->line(u), "an empty namespace URI");
    d->uris.push_back(uri);
    // The NamespaceArray grows in the order of the files in the configuration (a reload may only append);
    // the load order of the models is another matter (resolve_nodesets).
    auto& ns = into.config.namespaces;
    if (std::find(ns.begin(), ns.end(), uri) == ns.end()) ns.push_back(std::move(uri));
  }
  auto date = [&](pugi::xml_node at, const char* text, ua::DateTime& out) {
    if (*text && !parse_date_time(text, out))
      error(d->line(at), "PublicationDate \"" + std::string(text) + "\" is no xs:dateTime");
  };
  for (pugi::xml_node m = xml_child(root, "Models").first_child(); m; m = m.next_sibling()) {
    if (m.type() != pugi::node_element || local_name(m.name()) != "Model") continue;
    NodeSetDocument::Model model;
    model.uri = m.attribute("ModelUri").value();
    model.version = m.attribute("Version").value();
    model.line = d->line(m);
    date(m, m.attribute("PublicationDate").value(), model.publication_date);
    if (model.uri.empty()) error(model.line, "a Model without ModelUri");
    for (pugi::xml_node r = m.first_child(); r; r = r.next_sibling()) {
      if (r.type() != pugi::node_element || local_name(r.name()) != "RequiredModel") continue;
      NodeSetDocument::Required req;
      req.uri = r.attribute("ModelUri").value();
      req.version = r.attribute("Version").value();
      req.line = d->line(r);
      date(r, r.attribute("PublicationDate").value(), req.publication_date);
      model.required.push_back(std::move(req));
    }
    d->models.push_back(std::move(model));
  }
  d->config_index = static_cast<uint32_t>(into.nodesets.size());
  convert_nodeset(*d, into.config.namespaces, into.config.imported);
  // The XML text and tree are not needed any more, unless a value of a structure the files define waits
  // in them for the resolved definitions: freed before the next file is read.
  if (d->converted.pending.empty()) {
    d->doc.reset();
    std::string().swap(d->text);
    std::vector<size_t>().swap(d->line_starts);
  }
  into.nodesets.push_back(std::move(d));
}

namespace {

// Turns one file's nodes into ImportedNodes / ImportedReferences.
class NodeSetConverter {
 public:
  NodeSetConverter(const NodeSetDocument& d, const std::vector<std::string>& ns, ImportedModels& dest,
                   ConvertedNodeSet& out)
      : d_(d), file_(d.config_index), dest_(dest), out_(out), values_(map_) {
    map_.server_index.push_back(0);
    for (const auto& uri : d.uris) {
      map_.server_index.push_back(static_cast<uint16_t>(std::find(ns.begin(), ns.end(), uri) - ns.begin()));
    }
  }

  void run() {
    const pugi::xml_node root = d_.doc.document_element();
    aliases(xml_child(root, "Aliases"));
    for (pugi::xml_node n = root.first_child(); n; n = n.next_sibling()) {
      if (n.type() != pugi::node_element) continue;
      const std::string_view name = local_name(n.name());
      addressspace::NodeClass cls;
      if (name == "UAObject") {
        cls = addressspace::NodeClass::Object;
      } else if (name == "UAVariable") {
        cls = addressspace::NodeClass::Variable;
      } else if (name == "UAMethod") {
        cls = addressspace::NodeClass::Method;
      } else if (name == "UAObjectType") {
        cls = addressspace::NodeClass::ObjectType;
      } else if (name == "UAVariableType") {
        cls = addressspace::NodeClass::VariableType;
      } else if (name == "UADataType") {
        cls = addressspace::NodeClass::DataType;
      } else if (name == "UAReferenceType") {
        cls = addressspace::NodeClass::ReferenceType;
      } else if (name == "UAView") {
        cls = addressspace::NodeClass::View;
      } else if (name == "NamespaceUris" || name == "ServerUris" || name == "Models" || name == "Aliases" ||
                 name == "Extensions") {
        continue;  // read above, or (Extensions) vendor data no server interprets (Part 6 Annex F)
      } else {
        error(n, "unknown element <" + std::string(name) + "> in a UANodeSet");
        continue;
      }
      node(n, cls);
    }
  }

 private:
  void error(pugi::xml_node at, std::string reason) { error_line(d_.line(at), std::move(reason)); }
  void error_line(uint32_t line, std::string reason) {
    out_.errors.push_back({d_.file, "line " + std::to_string(line), std::move(reason)});
  }

  void aliases(pugi::xml_node list) {
    for (pugi::xml_node a = list.first_child(); a; a = a.next_sibling()) {
      if (a.type() != pugi::node_element || local_name(a.name()) != "Alias") continue;
      ua::NodeId id;
      if (!parse_id(a, a.text().get(), id, false)) continue;
      aliases_[a.attribute("Alias").value()] = std::move(id);
    }
  }

  // NodeId text, or an alias (Part 6 Annex F: an alias may stand for any NodeId but a node's own).
  bool parse_id(pugi::xml_node at, std::string_view text, ua::NodeId& out, bool alias_allowed = true) {
    text = xml_trim(text);
    if (alias_allowed) {
      const auto it = aliases_.find(text);
      if (it != aliases_.end()) {
        out = it->second;
        return true;
      }
      // Node ids have the forms i=, s=, g=, b= or ns=..;...: anything else is meant as an alias.
      const bool id_form =
          text.size() > 1 && (text[1] == '=' || text.starts_with("ns=") || text.starts_with("nsu="));
      if (!id_form) {
        error(at, "unknown alias \"" + std::string(text) + "\"");
        return false;
      }
    }
    if (!values_.node_id(text, out)) {
      error(at, values_.error());
      return false;
    }
    return true;
  }

  template <class T>
  bool number_attribute(pugi::xml_node n, const char* name, T& out) {
    const pugi::xml_attribute a = n.attribute(name);
    if (!a) return true;
    const std::string_view s = xml_trim(a.value());
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
      error(n, std::string(name) + " \"" + std::string(s) + "\" is not a valid number");
      return false;
    }
    return true;
  }
  void bool_attribute(pugi::xml_node n, const char* name, bool& out) {
    const pugi::xml_attribute a = n.attribute(name);
    if (!a) return;
    const std::string_view s = xml_trim(a.value());
    if (s == "true" || s == "1") {
      out = true;
    } else if (s == "false" || s == "0") {
      out = false;
    } else {
      error(n, std::string(name) + " \"" + std::string(s) + "\" is not a Boolean");
    }
  }
  // The first of the element's (possibly several, one per locale) LocalizedTexts: the one served.
  static ua::LocalizedText text(pugi::xml_node n) {
    ua::LocalizedText t;
    if (!n) return t;
    if (const pugi::xml_attribute locale = n.attribute("Locale"))
      t.locale = ua::String(std::string_view(locale.value()));
    t.text = ua::String(std::string_view(n.text().get()));
    return t;
  }

  void node(pugi::xml_node n, addressspace::NodeClass cls) {
    using addressspace::NodeClass;
    if (!n.attribute("NodeId")) return error(n, "a node without NodeId");
    ua::NodeId node_id;
    if (!parse_id(n, n.attribute("NodeId").value(), node_id, false)) return;
    // Built in place: a NodeSpec is some 800 bytes.
    ImportedNode& imported = dest_.nodes.emplace_back();
    imported.file = file_;
    imported.line = d_.line(n);
    addressspace::NodeSpec& spec = imported.spec;
    spec.node_class = cls;
    spec.node_id = std::move(node_id);
    // BrowseName "<file namespace index>:<name>" (Part 6 Annex F); no prefix: namespace 0.
    const std::string_view browse = n.attribute("BrowseName").value();
    if (browse.empty()) error(n, "a node without BrowseName");
    const auto colon = browse.find(':');
    uint16_t file_ns = 0;
    std::string_view name = browse;
    if (colon != std::string_view::npos && colon > 0 &&
        std::from_chars(browse.data(), browse.data() + colon, file_ns).ptr == browse.data() + colon) {
      name = browse.substr(colon + 1);
    } else {
      file_ns = 0;
    }
    const auto ns = map_.map(file_ns);
    if (!ns) {
      error(n, "BrowseName \"" + std::string(browse) + "\": namespace index " + std::to_string(file_ns) +
                   " is not in the file's NamespaceUris");
    }
    spec.browse_name = ua::QualifiedName{ns.value_or(0), ua::String(name)};
    // The child elements read below, found in one pass over the children (the first of each name).
    pugi::xml_node display, description, definition_element, inverse_name, references, value;
    for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      const std::string_view child = local_name(c.name());
      pugi::xml_node* slot = child == "DisplayName"   ? &display
                             : child == "Description" ? &description
                             : child == "References"  ? &references
                             : child == "Value"       ? &value
                             : child == "Definition"  ? &definition_element
                             : child == "InverseName" ? &inverse_name
                                                      : nullptr;
      if (slot && !*slot) *slot = c;
    }
    spec.display_name = display ? text(display) : ua::LocalizedText{ua::String(), ua::String(name)};
    spec.description = text(description);
    number_attribute(n, "WriteMask", spec.write_mask);
    // UserWriteMask is what the current user may write (Part 3 §5.2.8): opcuad answers it per session
    // from the WriteMask (services/access_control.hpp), so the file's value may only narrow nothing.
    uint32_t user_write_mask = spec.write_mask;
    if (number_attribute(n, "UserWriteMask", user_write_mask) && (user_write_mask & ~spec.write_mask) != 0)
      error(n, "UserWriteMask has bits the WriteMask does not (Part 3 §5.2.8)");
    switch (cls) {
      case NodeClass::Object:
      case NodeClass::View:
        number_attribute(n, "EventNotifier", spec.event_notifier);
        bool_attribute(n, "ContainsNoLoops", spec.contains_no_loops);
        break;
      case NodeClass::ObjectType:
        bool_attribute(n, "IsAbstract", spec.is_abstract);
        break;
      case NodeClass::DataType:
        bool_attribute(n, "IsAbstract", spec.is_abstract);
        ++out_.data_types;
        if (definition_element) definition(definition_element, spec.node_id);
        break;
      case NodeClass::ReferenceType:
        bool_attribute(n, "IsAbstract", spec.is_abstract);
        bool_attribute(n, "Symmetric", spec.symmetric);
        spec.inverse_name = text(inverse_name);
        break;
      case NodeClass::Method: {
        bool_attribute(n, "Executable", spec.executable);
        bool user_executable = true;
        bool_attribute(n, "UserExecutable", user_executable);
        spec.user_executable = user_executable;
        break;
      }
      case NodeClass::Variable:
      case NodeClass::VariableType:
        variable(n, value, spec);
        break;
      default:
        break;
    }
    if (const pugi::xml_attribute parent = n.attribute("ParentNodeId")) {
      ua::NodeId p;
      if (parse_id(n, parent.value(), p))
        out_.parents.emplace_back(std::move(p), NodeLocation{file_, imported.line});
    }
    for (pugi::xml_node r = references.first_child(); r; r = r.next_sibling()) {
      if (r.type() != pugi::node_element || local_name(r.name()) != "Reference") continue;
      ua::NodeId type, target;
      if (!parse_id(r, r.attribute("ReferenceType").value(), type)) continue;
      if (!parse_id(r, r.text().get(), target)) continue;
      bool forward = true;
      bool_attribute(r, "IsForward", forward);
      const ua::NodeId& self = spec.node_id;
      ImportedReference& ref = dest_.references.emplace_back();
      ref.file = file_;
      ref.line = d_.line(r);
      ref.type = std::move(type);
      if (forward) {
        ref.source = self;
        ref.target = std::move(target);
      } else {
        ref.source = std::move(target);
        ref.target = self;
      }
    }
  }

  // "2,3": one entry per dimension, 0 for "any length" (Part 6 Annex F), as many as a positive ValueRank.
  void array_dimensions(pugi::xml_node n, int32_t value_rank, std::vector<uint32_t>& out) {
    const pugi::xml_attribute dims = n.attribute("ArrayDimensions");
    if (!dims) return;
    std::string_view s = xml_trim(dims.value());
    while (!s.empty()) {
      const auto comma = s.find(',');
      const std::string_view item = xml_trim(s.substr(0, comma));
      uint32_t v = 0;
      if (std::from_chars(item.data(), item.data() + item.size(), v).ptr != item.data() + item.size() ||
          item.empty()) {
        error(n, "ArrayDimensions \"" + std::string(dims.value()) + "\" is not a list of UInt32");
        break;
      }
      out.push_back(v);
      s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    }
    if (value_rank > 0 && out.size() != static_cast<size_t>(value_rank))
      error(n, "ArrayDimensions must have ValueRank (" + std::to_string(value_rank) + ") entries");
  }

  // A DataType's <Definition> (Part 6 Annex F, DataTypeDefinition and DataTypeField), kept as written
  // with its NodeIds mapped; nodeset_definitions.cpp resolves it once every file is read, so a field may
  // name a DataType defined further down or in a later file.
  void definition(pugi::xml_node def, const ua::NodeId& data_type) {
    ImportedDefinition d;
    d.data_type = data_type;
    d.file = file_;
    d.line = d_.line(def);
    bool_attribute(def, "IsUnion", d.is_union);
    bool_attribute(def, "IsOptionSet", d.is_option_set);
    for (pugi::xml_node f = def.first_child(); f; f = f.next_sibling()) {
      if (f.type() != pugi::node_element || local_name(f.name()) != "Field") continue;
      ImportedDefinition::Field field;
      field.line = d_.line(f);
      ua::StructureField& sf = field.field;
      sf.name = ua::String(std::string_view(f.attribute("Name").value()));
      if (sf.name.view().empty()) error(f, "a Field without Name");
      sf.data_type = ua::NodeId(0, ua::id::BaseDataType);  // the schema's default, i=24
      if (const pugi::xml_attribute dt = f.attribute("DataType")) {
        if (!parse_id(f, dt.value(), sf.data_type)) continue;
      }
      sf.value_rank = -1;
      number_attribute(f, "ValueRank", sf.value_rank);
      array_dimensions(f, sf.value_rank, sf.array_dimensions);
      number_attribute(f, "MaxStringLength", sf.max_string_length);
      bool_attribute(f, "IsOptional", sf.is_optional);
      bool_attribute(f, "AllowSubTypes", field.allow_subtypes);
      if (f.attribute("Value")) field.has_value = number_attribute(f, "Value", field.value);
      sf.description = text(xml_child(f, "Description"));
      const pugi::xml_node display = xml_child(f, "DisplayName");
      field.display_name = display ? text(display) : ua::LocalizedText{ua::String(), sf.name};
      d.fields.push_back(std::move(field));
    }
    dest_.definitions.push_back(std::move(d));
  }

  void variable(pugi::xml_node n, pugi::xml_node value, addressspace::NodeSpec& spec) {
    const bool is_variable = spec.node_class == addressspace::NodeClass::Variable;
    spec.data_type = ua::NodeId(0, ua::id::BaseDataType);
    if (const pugi::xml_attribute dt = n.attribute("DataType")) parse_id(n, dt.value(), spec.data_type);
    spec.value_rank = -1;  // the schema's default for UAVariable and UAVariableType
    number_attribute(n, "ValueRank", spec.value_rank);
    array_dimensions(n, spec.value_rank, spec.array_dimensions);
    if (is_variable) {
      // The schema's AccessLevel is a UInt32: the AccessLevelEx bits (Part 3 §8.58), whose low byte is the
      // AccessLevel (Part 3 §8.57).
      uint32_t access = addressspace::access::kCurrentRead, user_access = addressspace::access::kCurrentRead;
      number_attribute(n, "AccessLevel", access);
      number_attribute(n, "UserAccessLevel", user_access);
      spec.access_level = static_cast<uint8_t>(access & 0xFF);
      spec.access_level_ex = access;
      // Part 3 §5.6.2: the UserAccessLevel cannot grant what the AccessLevel does not.
      spec.user_access_level = static_cast<uint8_t>(user_access & access & 0xFF);
      number_attribute(n, "MinimumSamplingInterval", spec.minimum_sampling_interval);
      bool_attribute(n, "Historizing", spec.historizing);
    } else {
      bool_attribute(n, "IsAbstract", spec.is_abstract);
    }
    pugi::xml_node element;
    for (pugi::xml_node c = value.first_child(); c && !element; c = c.next_sibling()) {
      if (c.type() == pugi::node_element) element = c;
    }
    if (!element) {
      spec.no_value = is_variable;  // Part 6 §F.8: read as Bad_NoValue until a value is written
      return;
    }
    ua::DataValue dv;
    if (!values_.read(element, dv.value)) {
      const pugi::xml_node at = values_.error_node() ? values_.error_node() : element;
      return error(at, "Value: " + values_.error());
    }
    // A structure of a loaded model (undecoded here) is read again once every definition is resolved.
    if (values_.undecoded()) out_.pending.push_back({dest_.nodes.size() - 1, &d_, element, map_, file_});
    dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
    spec.value = std::move(dv);
  }

 private:
  const NodeSetDocument& d_;
  const uint32_t file_;  // its place in the configuration, its place in load order in most cases
  ImportedModels& dest_;
  ConvertedNodeSet& out_;
  NamespaceMap map_;
  XmlValueReader values_;
  // Looked up by string_view (one per DataType and reference): no string is made for a lookup.
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, ua::NodeId, TextHash, std::equal_to<>> aliases_;
};

}  // namespace

void convert_nodeset(NodeSetDocument& d, const std::vector<std::string>& namespaces, ImportedModels& into) {
  // Room for every node and reference of the file: a NodeSpec is some 800 bytes, and a vector that
  // outgrows its room moves every one of them into twice the memory. The loader reserves room for every
  // file of a configuration beforehand (count_nodeset_elements).
  size_t nodes = 0, references = 0;
  for (pugi::xml_node n = d.doc.document_element().first_child(); n; n = n.next_sibling()) {
    ++nodes;
    for (pugi::xml_node r = xml_child(n, "References").first_child(); r; r = r.next_sibling()) ++references;
  }
  auto room = [](auto& v, size_t more) {
    if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
  };
  room(into.nodes, nodes);
  room(into.references, references);
  d.nodes_begin = into.nodes.size();
  d.references_begin = into.references.size();
  d.definitions_begin = into.definitions.size();
  NodeSetConverter(d, namespaces, into, d.converted).run();
  d.nodes_end = into.nodes.size();
  d.references_end = into.references.size();
  d.definitions_end = into.definitions.size();
}

void count_nodeset_elements(std::string_view text, NodeSetCounts& counts) {
  // Every node element's name begins with UA (UAObject ... UAView; the root UANodeSet counts once too).
  for (size_t at = text.find('<'); at != std::string_view::npos; at = text.find('<', at + 1)) {
    const std::string_view tag = text.substr(at + 1, 12);
    if (tag.starts_with("UA")) {
      ++counts.nodes;
      if (tag.starts_with("UADataType")) ++counts.data_types;
    } else if (tag.starts_with("Reference ") || tag.starts_with("Reference>")) {
      ++counts.references;
    } else if (tag.starts_with("Model ")) {
      ++counts.models;
    }
  }
}

}  // namespace opcuad::config
