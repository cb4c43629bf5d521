// NodeSet2 node files (UANodeSet schema, Part 6 Annex F), one at a time: parsed with pugixml, and turned
// into nodes and references of the server's namespaces (nodeset_resolve.cpp orders and checks them).
#include <algorithm>
#include <charconv>
#include <cstring>
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
      const addressspace::NodeClass cls = node_class_of(name);
      if (cls != addressspace::NodeClass::Unspecified) {
        node(n, cls);
      } else if (name_is(name, "NamespaceUris") || name_is(name, "ServerUris") || name_is(name, "Models") ||
                 name_is(name, "Aliases") || name_is(name, "Extensions")) {
        continue;  // read above, or (Extensions) vendor data no server interprets (Part 6 Annex F)
      } else {
        error(n, "unknown element <" + std::string(name) + "> in a UANodeSet");
      }
    }
  }

 private:
  // The NodeClass a node element's local name stands for (Part 6 Annex F: UAObject ... UAView), or
  // Unspecified. By length first: the names differ in length but for two pairs.
  static addressspace::NodeClass node_class_of(std::string_view name) {
    using addressspace::NodeClass;
    switch (name.size()) {
      case 6:
        if (name_is(name, "UAView")) return NodeClass::View;
        break;
      case 8:
        if (name_is(name, "UAObject")) return NodeClass::Object;
        if (name_is(name, "UAMethod")) return NodeClass::Method;
        break;
      case 10:
        if (name_is(name, "UAVariable")) return NodeClass::Variable;
        if (name_is(name, "UADataType")) return NodeClass::DataType;
        break;
      case 12:
        if (name_is(name, "UAObjectType")) return NodeClass::ObjectType;
        break;
      case 14:
        if (name_is(name, "UAVariableType")) return NodeClass::VariableType;
        break;
      case 15:
        if (name_is(name, "UAReferenceType")) return NodeClass::ReferenceType;
        break;
      default:
        break;
    }
    return NodeClass::Unspecified;
  }

  // The attributes of a node element that node() reads, found in one pass over its attributes (the first
  // of each name, as pugi::xml_node::attribute() finds it) instead of one search of the list per name.
  struct NodeAttributes {
    pugi::xml_attribute node_id, browse_name, parent, data_type, write_mask, user_write_mask, value_rank,
        array_dimensions, access_level, user_access_level, minimum_sampling_interval, historizing,
        event_notifier, contains_no_loops, is_abstract, symmetric, executable, user_executable;

    explicit NodeAttributes(pugi::xml_node n) {
      for (pugi::xml_attribute a = n.first_attribute(); a; a = a.next_attribute()) {
        if (pugi::xml_attribute* slot = slot_of(a.name()); slot && !*slot) *slot = a;
      }
    }

   private:
    pugi::xml_attribute* slot_of(const char* name) {
      auto is = [name](const char* want) { return std::strcmp(name, want) == 0; };
      switch (name[0]) {
        case 'N':
          return is("NodeId") ? &node_id : nullptr;
        case 'B':
          return is("BrowseName") ? &browse_name : nullptr;
        case 'P':
          return is("ParentNodeId") ? &parent : nullptr;
        case 'D':
          return is("DataType") ? &data_type : nullptr;
        case 'W':
          return is("WriteMask") ? &write_mask : nullptr;
        case 'U':
          return is("UserWriteMask")     ? &user_write_mask
                 : is("UserAccessLevel") ? &user_access_level
                 : is("UserExecutable")  ? &user_executable
                                         : nullptr;
        case 'V':
          return is("ValueRank") ? &value_rank : nullptr;
        case 'A':
          return is("AccessLevel") ? &access_level : is("ArrayDimensions") ? &array_dimensions : nullptr;
        case 'M':
          return is("MinimumSamplingInterval") ? &minimum_sampling_interval : nullptr;
        case 'H':
          return is("Historizing") ? &historizing : nullptr;
        case 'E':
          return is("EventNotifier") ? &event_notifier : is("Executable") ? &executable : nullptr;
        case 'C':
          return is("ContainsNoLoops") ? &contains_no_loops : nullptr;
        case 'I':
          return is("IsAbstract") ? &is_abstract : nullptr;
        case 'S':
          return is("Symmetric") ? &symmetric : nullptr;
        default:
          return nullptr;
      }
    }
  };

  void error(pugi::xml_node at, std::string reason) { error_line(d_.line(at), std::move(reason)); }
  void error_line(uint32_t line, std::string reason) {
    out_.errors.push_back({d_.file, "line " + std::to_string(line), std::move(reason)});
  }

  void aliases(pugi::xml_node list) {
    for (pugi::xml_node a = list.first_child(); a; a = a.next_sibling()) {
      if (a.type() != pugi::node_element || !name_is(local_name(a.name()), "Alias")) continue;
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
    return number_attribute(n, n.attribute(name), name, out);
  }
  // `a`: n's attribute `name`, or a null attribute when n has none.
  template <class T>
  bool number_attribute(pugi::xml_node n, pugi::xml_attribute a, const char* name, T& out) {
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
    bool_attribute(n, n.attribute(name), name, out);
  }
  void bool_attribute(pugi::xml_node n, pugi::xml_attribute a, const char* name, bool& out) {
    if (!a) return;
    const std::string_view s = xml_trim(a.value());
    if (name_is(s, "true") || name_is(s, "1")) {
      out = true;
    } else if (name_is(s, "false") || name_is(s, "0")) {
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
    const NodeAttributes at(n);
    if (!at.node_id) return error(n, "a node without NodeId");
    ua::NodeId node_id;
    if (!parse_id(n, at.node_id.value(), node_id, false)) return;
    // Built in place: an ImportedSpec is some 500 bytes.
    ImportedNode& imported = dest_.nodes.emplace_back();
    imported.file = file_;
    imported.line = d_.line(n);
    ImportedSpec& spec = imported.spec;
    spec.node_class = cls;
    spec.node_id = std::move(node_id);
    // BrowseName "<file namespace index>:<name>" (Part 6 Annex F); no prefix: namespace 0.
    const std::string_view browse = at.browse_name.value();
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
      pugi::xml_node* slot = nullptr;
      switch (child.size()) {
        case 5:
          if (name_is(child, "Value")) slot = &value;
          break;
        case 10:
          slot = name_is(child, "References")   ? &references
                 : name_is(child, "Definition") ? &definition_element
                                                : nullptr;
          break;
        case 11:
          slot = name_is(child, "DisplayName")   ? &display
                 : name_is(child, "Description") ? &description
                 : name_is(child, "InverseName") ? &inverse_name
                                                 : nullptr;
          break;
        default:
          break;
      }
      if (slot && !*slot) *slot = c;
    }
    spec.display_name = display ? text(display) : ua::LocalizedText{ua::String(), ua::String(name)};
    if (description) spec.description = text(description);
    number_attribute(n, at.write_mask, "WriteMask", spec.write_mask);
    // UserWriteMask is what the current user may write (Part 3 §5.2.8): opcuad answers it per session
    // from the WriteMask (services/access_control.hpp), so the file's value may only narrow nothing.
    uint32_t user_write_mask = spec.write_mask;
    if (number_attribute(n, at.user_write_mask, "UserWriteMask", user_write_mask) &&
        (user_write_mask & ~spec.write_mask) != 0)
      error(n, "UserWriteMask has bits the WriteMask does not (Part 3 §5.2.8)");
    switch (cls) {
      case NodeClass::Object:
      case NodeClass::View:
        number_attribute(n, at.event_notifier, "EventNotifier", spec.event_notifier);
        bool_attribute(n, at.contains_no_loops, "ContainsNoLoops", spec.contains_no_loops);
        break;
      case NodeClass::ObjectType:
        bool_attribute(n, at.is_abstract, "IsAbstract", spec.is_abstract);
        break;
      case NodeClass::DataType:
        bool_attribute(n, at.is_abstract, "IsAbstract", spec.is_abstract);
        ++out_.data_types;
        if (definition_element) definition(definition_element, spec.node_id);
        break;
      case NodeClass::ReferenceType:
        bool_attribute(n, at.is_abstract, "IsAbstract", spec.is_abstract);
        bool_attribute(n, at.symmetric, "Symmetric", spec.symmetric);
        if (inverse_name) spec.inverse_name = text(inverse_name);
        break;
      case NodeClass::Method: {
        bool_attribute(n, at.executable, "Executable", spec.executable);
        bool user_executable = true;
        bool_attribute(n, at.user_executable, "UserExecutable", user_executable);
        spec.user_executable = user_executable;
        break;
      }
      case NodeClass::Variable:
      case NodeClass::VariableType:
        variable(n, at, value, spec);
        break;
      default:
        break;
    }
    // The ParentNodeId, in dest_.ids once the references are (it is most often one of their targets).
    ua::NodeId parent;
    const bool has_parent = at.parent && parse_id(n, at.parent.value(), parent);
    uint32_t parent_id = kNoId;
    uint32_t self = kNoId;  // the node's own NodeId in dest_.ids, interned at its first reference
    for (pugi::xml_node r = references.first_child(); r; r = r.next_sibling()) {
      if (r.type() != pugi::node_element || !name_is(local_name(r.name()), "Reference")) continue;
      ua::NodeId type, target;
      if (!parse_id(r, r.attribute("ReferenceType").value(), type)) continue;
      if (!parse_id(r, r.text().get(), target)) continue;
      bool forward = true;
      bool_attribute(r, "IsForward", forward);
      if (self == kNoId) self = dest_.intern(spec.node_id);
      const uint32_t other = dest_.intern(target);
      if (has_parent && parent_id == kNoId && target == parent) parent_id = other;
      dest_.references.push_back(
          {forward ? self : other, reference_type(type), forward ? other : self, file_, d_.line(r)});
    }
    if (has_parent) {
      if (parent_id == kNoId) parent_id = dest_.intern(parent);
      out_.parents.push_back({parent_id, NodeLocation{file_, imported.line}});
    }
  }

  // A reference type's index in dest_.ids: a file uses a handful of them, kept here in the order met, so
  // the table is not probed (a cache miss) for every reference.
  uint32_t reference_type(const ua::NodeId& type) {
    for (const auto& [id, index] : types_) {
      if (id == type) return index;
    }
    const uint32_t index = dest_.intern(type);
    if (types_.size() < 16) types_.emplace_back(type, index);
    return index;
  }

  // "2,3": one entry per dimension, 0 for "any length" (Part 6 Annex F), as many as a positive ValueRank.
  void array_dimensions(pugi::xml_node n, int32_t value_rank, std::vector<uint32_t>& out) {
    array_dimensions(n, n.attribute("ArrayDimensions"), value_rank, out);
  }
  // `dims`: n's ArrayDimensions attribute, or a null attribute.
  void array_dimensions(pugi::xml_node n, pugi::xml_attribute dims, int32_t value_rank,
                        std::vector<uint32_t>& out) {
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

  void variable(pugi::xml_node n, const NodeAttributes& at, pugi::xml_node value, ImportedSpec& spec) {
    const bool is_variable = spec.node_class == addressspace::NodeClass::Variable;
    spec.data_type = ua::NodeId(0, ua::id::BaseDataType);
    if (at.data_type) parse_id(n, at.data_type.value(), spec.data_type);
    spec.value_rank = -1;  // the schema's default for UAVariable and UAVariableType
    number_attribute(n, at.value_rank, "ValueRank", spec.value_rank);
    std::vector<uint32_t> dimensions;
    array_dimensions(n, at.array_dimensions, spec.value_rank, dimensions);
    if (!dimensions.empty()) spec.array_dimensions = std::move(dimensions);
    if (is_variable) {
      // The schema's AccessLevel is a UInt32: the AccessLevelEx bits (Part 3 §8.58), whose low byte is the
      // AccessLevel (Part 3 §8.57).
      uint32_t access = addressspace::access::kCurrentRead, user_access = addressspace::access::kCurrentRead;
      number_attribute(n, at.access_level, "AccessLevel", access);
      number_attribute(n, at.user_access_level, "UserAccessLevel", user_access);
      spec.access_level = static_cast<uint8_t>(access & 0xFF);
      spec.access_level_ex = access;
      // Part 3 §5.6.2: the UserAccessLevel cannot grant what the AccessLevel does not.
      spec.user_access_level = static_cast<uint8_t>(user_access & access & 0xFF);
      number_attribute(n, at.minimum_sampling_interval, "MinimumSamplingInterval",
                       spec.minimum_sampling_interval);
      bool_attribute(n, at.historizing, "Historizing", spec.historizing);
    } else {
      bool_attribute(n, at.is_abstract, "IsAbstract", spec.is_abstract);
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
  static constexpr uint32_t kNoId = UINT32_MAX;
  std::vector<std::pair<ua::NodeId, uint32_t>> types_;  // reference_type()
  // Looked up by string_view (one per DataType and reference): no string is made for a lookup.
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, ua::NodeId, TextHash, std::equal_to<>> aliases_;
};

}  // namespace

void convert_nodeset(NodeSetDocument& d, const std::vector<std::string>& namespaces, ImportedModels& into) {
  // Room for every node and reference of the file: an ImportedNode is some 500 bytes, and a vector that
  // outgrows its room moves every one of them into twice the memory. The loader reserves room for every
  // file of a configuration beforehand (count_nodeset_elements): when the nodes fit, so do the references,
  // and they are not counted in the tree (a pass over every node's children).
  size_t nodes = 0;
  for (pugi::xml_node n = d.doc.document_element().first_child(); n; n = n.next_sibling()) ++nodes;
  auto room = [](auto& v, size_t more) {
    if (v.size() + more > v.capacity()) v.reserve(std::max(v.size() + more, 2 * v.capacity()));
  };
  if (into.nodes.size() + nodes > into.nodes.capacity()) {
    size_t references = 0;
    for (pugi::xml_node n = d.doc.document_element().first_child(); n; n = n.next_sibling()) {
      for (pugi::xml_node r = xml_child(n, "References").first_child(); r; r = r.next_sibling()) ++references;
    }
    room(into.nodes, nodes);
    room(into.references, references);
  }
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
  // The first letter after the '<' sorts out most tags (end tags, values) before any comparison.
  const char* const end = text.data() + text.size();
  auto starts_with = [end](const char* p, std::string_view s) {
    return static_cast<size_t>(end - p) >= s.size() && std::memcmp(p, s.data(), s.size()) == 0;
  };
  for (const char* p = text.data(); p < end;) {
    p = static_cast<const char*>(std::memchr(p, '<', static_cast<size_t>(end - p)));
    if (!p) break;
    const char* tag = ++p;
    if (tag == end) break;
    switch (*tag) {
      case 'U':
        if (starts_with(tag, "UA")) {
          ++counts.nodes;
          if (starts_with(tag, "UADataType")) ++counts.data_types;
        }
        break;
      case 'R':
        if (starts_with(tag, "Reference ") || starts_with(tag, "Reference>")) ++counts.references;
        break;
      case 'M':
        if (starts_with(tag, "Model ")) ++counts.models;
        break;
      default:
        break;
    }
  }
}

}  // namespace opcuad::config
