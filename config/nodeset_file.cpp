// NodeSet2 node files (UANodeSet schema, Part 6 Annex F): parsed with pugixml, ordered by their
// RequiredModels, and turned into nodes and references of the server's namespaces.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include <pugixml.hpp>

#include "addressspace/namespace0.hpp"
#include "addressspace/type_check.hpp"
#include "config/config.hpp"
#include "config/json_value.hpp"
#include "config/type_names.hpp"
#include "config/xml_value.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

// One NodeSet2 file between load_nodeset_file_text() and resolve_nodesets(): the text pugixml parsed in
// place (its strings point into it), and what the header says.
struct NodeSetDocument {
  struct Required {
    std::string uri, version;
    ua::DateTime publication_date;
    uint32_t line = 0;
  };
  struct Model {
    std::string uri, version;
    ua::DateTime publication_date;
    std::vector<Required> required;
    uint32_t line = 0;
  };
  std::string file;
  std::string text;
  pugi::xml_document doc;
  std::vector<size_t> line_starts;  // offsets of the lines after the first
  std::vector<std::string> uris;    // NamespaceUris, the file's indexes 1..n
  std::vector<Model> models;

  uint32_t line_at(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return static_cast<uint32_t>(
        std::upper_bound(line_starts.begin(), line_starts.end(), static_cast<size_t>(offset)) -
        line_starts.begin() + 1);
  }
  uint32_t line(pugi::xml_node n) const { return n ? line_at(n.offset_debug()) : 0; }
};

namespace {

// Namespace 0 as the generated code has it (Opc.Ua.NodeSet2.xml's Model, also the values of
// Server.Namespaces.OPCUANamespaceMetadata, addressspace/generated/ns0_values_00.cpp).
constexpr const char* kNs0Version = "1.05.03";
constexpr const char* kNs0PublicationDate = "2023-12-15T00:00:00Z";

// pugixml's options, explicit: entities (&lt; &#38; ...) and CDATA are read, end-of-lines normalised; no
// DOCTYPE, processing instruction or comment enters the tree. pugixml never expands an entity a DTD
// declares, let alone an external one, so a hostile file cannot make it read other files or grow
// without bound.
constexpr unsigned kParseOptions =
    pugi::parse_escapes | pugi::parse_cdata | pugi::parse_eol | pugi::parse_wconv_attribute;

// The largest NodeSet2 file read (the companion specifications are below 1 MB).
constexpr size_t kMaxFileBytes = 256u << 20;

pugi::xml_node child(pugi::xml_node n, std::string_view name) {
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element && local_name(c.name()) == name) return c;
  }
  return {};
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// "1.04.2" < "1.05": numeric components compared as numbers, others as text.
int compare_versions(std::string_view a, std::string_view b) {
  while (!a.empty() || !b.empty()) {
    const auto da = a.find('.'), db = b.find('.');
    const std::string_view pa = a.substr(0, da), pb = b.substr(0, db);
    a = da == std::string_view::npos ? std::string_view() : a.substr(da + 1);
    b = db == std::string_view::npos ? std::string_view() : b.substr(db + 1);
    uint64_t na = 0, nb = 0;
    const bool numa =
        !pa.empty() && std::from_chars(pa.data(), pa.data() + pa.size(), na).ptr == pa.data() + pa.size();
    const bool numb =
        !pb.empty() && std::from_chars(pb.data(), pb.data() + pb.size(), nb).ptr == pb.data() + pb.size();
    if (numa && numb) {
      if (na != nb) return na < nb ? -1 : 1;
    } else if (pa != pb) {
      return pa < pb ? -1 : 1;
    }
  }
  return 0;
}

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
  for (pugi::xml_node u = child(root, "NamespaceUris").first_child(); u; u = u.next_sibling()) {
    if (u.type() != pugi::node_element) continue;
    std::string uri(trim(u.text().get()));
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
  for (pugi::xml_node m = child(root, "Models").first_child(); m; m = m.next_sibling()) {
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
  into.nodesets.push_back(std::move(d));
}

namespace {

// Which file and line define a node, for the messages that name both places.
struct Where {
  uint32_t file = 0;
  uint32_t line = 0;
};

// Turns one file's nodes into ImportedNodes / ImportedReferences.
class NodeSetConverter {
 public:
  NodeSetConverter(const NodeSetDocument& d, uint32_t file_index, LoadResult& result)
      : d_(d), file_(file_index), result_(result), out_(result.config.imported), values_(map_) {
    const auto& ns = result.config.namespaces;
    map_.server_index.push_back(0);
    for (const auto& uri : d.uris) {
      map_.server_index.push_back(static_cast<uint16_t>(std::find(ns.begin(), ns.end(), uri) - ns.begin()));
    }
  }

  void run() {
    const pugi::xml_node root = d_.doc.document_element();
    aliases(child(root, "Aliases"));
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

  // ParentNodeIds, checked once every file is converted.
  std::vector<std::pair<ua::NodeId, Where>> parents;

 private:
  void error(pugi::xml_node at, std::string reason) { error_line(d_.line(at), std::move(reason)); }
  void error_line(uint32_t line, std::string reason) {
    result_.errors.push_back({d_.file, "line " + std::to_string(line), std::move(reason)});
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
    text = trim(text);
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
    const std::string_view s = trim(a.value());
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
    const std::string_view s = trim(a.value());
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
    ImportedNode imported;
    imported.file = file_;
    imported.line = d_.line(n);
    addressspace::NodeSpec& spec = imported.spec;
    spec.node_class = cls;
    if (!n.attribute("NodeId")) return error(n, "a node without NodeId");
    if (!parse_id(n, n.attribute("NodeId").value(), spec.node_id, false)) return;
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
    const pugi::xml_node display = child(n, "DisplayName");
    spec.display_name = display ? text(display) : ua::LocalizedText{ua::String(), ua::String(name)};
    spec.description = text(child(n, "Description"));
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
      case NodeClass::DataType:
        bool_attribute(n, "IsAbstract", spec.is_abstract);
        break;
      case NodeClass::ReferenceType:
        bool_attribute(n, "IsAbstract", spec.is_abstract);
        bool_attribute(n, "Symmetric", spec.symmetric);
        spec.inverse_name = text(child(n, "InverseName"));
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
        variable(n, spec);
        break;
      default:
        break;
    }
    if (const pugi::xml_attribute parent = n.attribute("ParentNodeId")) {
      ua::NodeId p;
      if (parse_id(n, parent.value(), p)) parents.emplace_back(std::move(p), Where{file_, imported.line});
    }
    for (pugi::xml_node r = child(n, "References").first_child(); r; r = r.next_sibling()) {
      if (r.type() != pugi::node_element || local_name(r.name()) != "Reference") continue;
      ImportedReference ref;
      ref.file = file_;
      ref.line = d_.line(r);
      ua::NodeId target;
      if (!parse_id(r, r.attribute("ReferenceType").value(), ref.type)) continue;
      if (!parse_id(r, r.text().get(), target)) continue;
      bool forward = true;
      bool_attribute(r, "IsForward", forward);
      ref.source = forward ? spec.node_id : target;
      ref.target = forward ? std::move(target) : spec.node_id;
      out_.references.push_back(std::move(ref));
    }
    out_.nodes.push_back(std::move(imported));
  }

  void variable(pugi::xml_node n, addressspace::NodeSpec& spec) {
    const bool is_variable = spec.node_class == addressspace::NodeClass::Variable;
    spec.data_type = ua::NodeId(0, ua::id::BaseDataType);
    if (const pugi::xml_attribute dt = n.attribute("DataType")) parse_id(n, dt.value(), spec.data_type);
    spec.value_rank = -1;  // the schema's default for UAVariable and UAVariableType
    number_attribute(n, "ValueRank", spec.value_rank);
    if (const pugi::xml_attribute dims = n.attribute("ArrayDimensions")) {
      // "2,3": one entry per dimension, 0 for "any length" (Part 6 Annex F).
      std::string_view s = trim(dims.value());
      while (!s.empty()) {
        const auto comma = s.find(',');
        const std::string_view item = trim(s.substr(0, comma));
        uint32_t v = 0;
        if (std::from_chars(item.data(), item.data() + item.size(), v).ptr != item.data() + item.size() ||
            item.empty()) {
          error(n, "ArrayDimensions \"" + std::string(dims.value()) + "\" is not a list of UInt32");
          break;
        }
        spec.array_dimensions.push_back(v);
        s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
      }
      if (spec.value_rank > 0 && spec.array_dimensions.size() != static_cast<size_t>(spec.value_rank))
        error(n, "ArrayDimensions must have ValueRank (" + std::to_string(spec.value_rank) + ") entries");
    }
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
    const pugi::xml_node value = child(n, "Value");
    pugi::xml_node element;
    for (pugi::xml_node c = value.first_child(); c && !element; c = c.next_sibling()) {
      if (c.type() == pugi::node_element) element = c;
    }
    if (!element) return;
    ua::DataValue dv;
    if (!values_.read(element, dv.value)) {
      const pugi::xml_node at = values_.error_node() ? values_.error_node() : element;
      return error(at, "Value: " + values_.error());
    }
    if (values_.undecoded()) note_undecoded(spec.node_id, dv.value, d_.line(element));
    dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
    spec.value = std::move(dv);
  }

  void note_undecoded(const ua::NodeId& node, const ua::Variant& v, uint32_t line) {
    auto note = [&](const ua::ExtensionObject& eo) {
      if (!eo.is_decoded() && !eo.is_empty()) out_.undecoded.push_back({node, eo.type_id(), file_, line});
    };
    if (const auto* eo = v.get_if<ua::ExtensionObject>()) note(*eo);
    if (const auto* list = v.get_if<std::vector<ua::ExtensionObject>>()) {
      for (const auto& eo : *list) note(eo);
    }
  }

  const NodeSetDocument& d_;
  uint32_t file_;
  LoadResult& result_;
  ImportedModels& out_;
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

namespace {

struct LoadedModel {
  const NodeSetDocument* doc = nullptr;  // nullptr: namespace 0, built in
  std::string version;
  ua::DateTime publication_date;
};

std::string describe(const std::string& uri, const LoadedModel& m) {
  return uri + " " + (m.version.empty() ? "(no version)" : m.version) +
         (m.publication_date.is_null() ? "" : " of " + m.publication_date.to_string().substr(0, 10)) + " (" +
         (m.doc ? m.doc->file : "built in") + ")";
}

// The files in an order where every file comes after the files of the models it requires (Part 6 Annex F);
// errors for a required model that is missing, older than required, or required in a cycle.
// `missing` gets the URIs of required models no file provides.
std::vector<const NodeSetDocument*> load_order(LoadResult& result, std::unordered_set<std::string>& missing) {
  std::unordered_map<std::string, LoadedModel> models;
  ua::DateTime ns0_date;
  (void)parse_date_time(kNs0PublicationDate, ns0_date);
  models[addressspace::kNamespace0Uri] = {nullptr, kNs0Version, ns0_date};
  for (const auto& d : result.nodesets) {
    for (const auto& m : d->models) {
      auto [it, inserted] = models.emplace(m.uri, LoadedModel{d.get(), m.version, m.publication_date});
      if (!inserted) {
        result.errors.push_back({d->file, "line " + std::to_string(m.line),
                                 "model " + m.uri + " is already defined by " +
                                     (it->second.doc ? it->second.doc->file : std::string("namespace 0"))});
      }
    }
  }
  auto loaded_list = [&] {
    std::vector<std::string> names;
    for (const auto& [uri, m] : models) names.push_back(describe(uri, m));
    std::sort(names.begin(), names.end());
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  // Dependencies between files, and the checks of each RequiredModel.
  std::unordered_map<const NodeSetDocument*, std::vector<const NodeSetDocument*>> needs;
  for (const auto& d : result.nodesets) {
    for (const auto& m : d->models) {
      for (const auto& r : m.required) {
        const std::string at = "line " + std::to_string(r.line);
        const auto it = models.find(r.uri);
        if (it == models.end()) {
          missing.insert(r.uri);
          result.errors.push_back({d->file, at,
                                   "model " + m.uri + " requires model " + r.uri +
                                       (r.version.empty() ? "" : " " + r.version) +
                                       ", which no node file provides; loaded: " + loaded_list()});
          continue;
        }
        const LoadedModel& have = it->second;
        if (!r.version.empty() && compare_versions(have.version, r.version) < 0) {
          result.errors.push_back({d->file, at,
                                   "model " + m.uri + " requires " + r.uri + " version " + r.version +
                                       " or later; loaded: " + describe(r.uri, have)});
        } else if (!r.publication_date.is_null() && have.publication_date < r.publication_date) {
          result.errors.push_back({d->file, at,
                                   "model " + m.uri + " requires " + r.uri + " published " +
                                       r.publication_date.to_string().substr(0, 10) +
                                       " or later; loaded: " + describe(r.uri, have)});
        }
        if (have.doc && have.doc != d.get()) needs[d.get()].push_back(have.doc);
      }
    }
  }
  // Depth first, in the order of the files in the configuration; a file still on the path is a cycle.
  std::vector<const NodeSetDocument*> order;
  std::unordered_map<const NodeSetDocument*, int> state;  // 1: on the path, 2: placed
  std::function<void(const NodeSetDocument*)> visit = [&](const NodeSetDocument* d) {
    int& s = state[d];
    if (s == 2) return;
    if (s == 1) {
      result.errors.push_back({d->file, "line " + std::to_string(d->models.front().line),
                               "its models and the models they require form a cycle"});
      return;
    }
    s = 1;
    for (const NodeSetDocument* dep : needs[d]) visit(dep);
    state[d] = 2;
    order.push_back(d);
  };
  for (const auto& d : result.nodesets) visit(d.get());
  return order;
}

// Where each DataType of the loaded files sits (its HasSubtype supertype), and which DataType an
// encoding node belongs to (HasEncoding), for the check of values against their DataType.
class ImportedTypes {
 public:
  explicit ImportedTypes(const ImportedModels& m) {
    const ua::NodeId has_subtype(0, ua::id::HasSubtype), has_encoding(0, ua::id::HasEncoding);
    for (const auto& r : m.references) {
      if (r.type == has_subtype) supertype_.emplace(r.target, r.source);
      if (r.type == has_encoding) encoding_of_.emplace(r.target, r.source);
    }
  }
  // The nearest namespace-0 DataType at or above `type`, or kNoNode.
  addressspace::NodeIndex ns0_ancestor(ua::NodeId type) const {
    for (int depth = 0; depth < 64; ++depth) {
      const addressspace::NodeIndex n = ns0_store().find(type);
      if (n != addressspace::kNoNode) return n;
      const auto it = supertype_.find(type);
      if (it == supertype_.end()) return addressspace::kNoNode;
      type = it->second;
    }
    return addressspace::kNoNode;
  }
  // Is `type` `base` or a subtype of it, across the loaded files and namespace 0?
  bool is_subtype(ua::NodeId type, const ua::NodeId& base) const {
    for (int depth = 0; depth < 64; ++depth) {
      if (type == base) return true;
      const addressspace::NodeIndex n = ns0_store().find(type);
      if (n != addressspace::kNoNode) {
        const addressspace::NodeIndex b = ns0_store().find(base);
        return b != addressspace::kNoNode && ns0_store().is_data_type_subtype(n, b);
      }
      const auto it = supertype_.find(type);
      if (it == supertype_.end()) return false;
      type = it->second;
    }
    return false;
  }
  const ua::NodeId* data_type_of_encoding(const ua::NodeId& encoding) const {
    const auto it = encoding_of_.find(encoding);
    return it == encoding_of_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<ua::NodeId, ua::NodeId> supertype_;
  std::unordered_map<ua::NodeId, ua::NodeId> encoding_of_;
};

// Why `value` does not fit the DataType, ValueRank and ArrayDimensions of `spec`, or "" when it does.
std::string value_mismatch(const addressspace::NodeSpec& spec, const ua::Variant& value,
                           const ImportedTypes& types) {
  const auto& s = ns0_store();
  const addressspace::NodeIndex ancestor = types.ns0_ancestor(spec.data_type);
  if (ancestor == addressspace::kNoNode)
    return "its DataType " + spec.data_type.to_string() + " has no supertype chain to a namespace-0 DataType";
  if (!addressspace::value_rank_accepts(spec.value_rank, spec.array_dimensions, value)) {
    return std::string(value.is_array() ? "an array" : "a scalar") + " does not fit ValueRank " +
           std::to_string(spec.value_rank) +
           (spec.array_dimensions.empty() ? "" : " and its ArrayDimensions");
  }
  const bool own_type = s.find(spec.data_type) == addressspace::kNoNode;
  if (value.type() == ua::BuiltinType::ExtensionObject) {
    auto check = [&](const ua::ExtensionObject& eo) -> std::string {
      if (eo.is_empty()) return "";
      ua::NodeId type;
      if (eo.is_decoded()) {
        type = ua::NodeId(0, eo.structure_type()->data_type_id);
      } else if (const ua::NodeId* t = types.data_type_of_encoding(eo.type_id())) {
        type = *t;
      } else {
        return "ExtensionObject TypeId " + eo.type_id().to_string() + " is no encoding of a known DataType";
      }
      if (!types.is_subtype(type, spec.data_type))
        return "a structure of DataType " + type.to_string() + " is not a " + spec.data_type.to_string();
      return "";
    };
    if (const auto* eo = value.get_if<ua::ExtensionObject>()) return check(*eo);
    if (const auto* list = value.get_if<std::vector<ua::ExtensionObject>>()) {
      for (const auto& eo : *list) {
        if (auto why = check(eo); !why.empty()) return why;
      }
    }
    return "";
  }
  const std::string name = std::string(value.is_array() ? "an array of " : "a ") +
                           std::string(ua::builtin_type_name(value.type()));
  if (own_type && s.node_id(ancestor).is_ns0(ua::id::Enumeration)) {
    // An enumeration a loaded file defines: its values are Int32 (Part 3 §8.14).
    return value.type() == ua::BuiltinType::Int32 ? "" : name + " for an enumeration (Int32)";
  }
  if (!addressspace::data_type_accepts(s, ancestor, value))
    return name + " does not fit DataType " + spec.data_type.to_string();
  return "";
}

}  // namespace

void resolve_nodesets(LoadResult& result) {
  if (result.nodesets.empty()) return;
  ImportedModels& out = result.config.imported;
  std::unordered_set<std::string> missing_models;
  const std::vector<const NodeSetDocument*> order = load_order(result, missing_models);
  std::vector<std::pair<ua::NodeId, Where>> parents;
  // Room for every node and reference of every file at once: a NodeSpec is some 400 bytes to move.
  size_t nodes = 0, references = 0;
  for (const NodeSetDocument* d : order) {
    for (pugi::xml_node n = d->doc.document_element().first_child(); n; n = n.next_sibling()) {
      ++nodes;
      for (pugi::xml_node r = child(n, "References").first_child(); r; r = r.next_sibling()) ++references;
    }
  }
  out.nodes.reserve(nodes);
  out.references.reserve(references);
  for (const NodeSetDocument* d : order) {
    const auto file = static_cast<uint32_t>(out.files.size());
    out.files.push_back(d->file);
    for (const auto& m : d->models) out.models.push_back({m.uri, m.version, m.publication_date, file});
    NodeSetConverter c(*d, file, result);
    c.run();
    parents.insert(parents.end(), std::make_move_iterator(c.parents.begin()),
                   std::make_move_iterator(c.parents.end()));
  }
  result.nodesets.clear();  // the XML text and trees are not needed any more

  // Every NodeId once, across the files, namespace 0 and the JSON node files.
  std::unordered_map<ua::NodeId, Where> defined;
  defined.reserve(out.nodes.size());
  for (const ImportedNode& n : out.nodes) {
    const ua::NodeId& id = n.spec.node_id;
    if (ns0_store().find(id) != addressspace::kNoNode) {
      result.errors.push_back({out.files[n.file], "line " + std::to_string(n.line),
                               "NodeId " + id.to_string() + " is already defined by namespace 0"});
      continue;
    }
    auto [it, inserted] = defined.emplace(id, Where{n.file, n.line});
    if (!inserted) {
      result.errors.push_back({out.files[n.file], "line " + std::to_string(n.line),
                               "NodeId " + id.to_string() + " is defined twice: here and at " +
                                   out.where(it->second.file, it->second.line)});
    }
  }
  std::unordered_set<ua::NodeId> declared;  // by JSON node files
  for (const NodeDecl& d : result.config.nodes) {
    if (!d.count) declared.insert(d.node_id);
  }
  // A node of a model that is missing, or of a file that did not parse, is not reported as missing too:
  // the error about the model or the file says why it is not there.
  std::unordered_set<uint16_t> absent_namespaces;
  for (size_t i = 0; i < result.config.namespaces.size(); ++i) {
    if (missing_models.count(result.config.namespaces[i])) absent_namespaces.insert(static_cast<uint16_t>(i));
  }
  auto known = [&](const ua::NodeId& id) {
    return defined.count(id) || ns0_store().find(id) != addressspace::kNoNode || declared.count(id);
  };
  auto excused = [&](const ua::NodeId& id) {
    return !known(id) && (result.unparsed_files || absent_namespaces.count(id.namespace_index()));
  };
  auto exists = [&](const ua::NodeId& id) { return known(id) || excused(id); };
  std::unordered_map<ua::NodeId, addressspace::NodeClass> classes;
  for (const ImportedNode& n : out.nodes) classes.emplace(n.spec.node_id, n.spec.node_class);
  auto class_of = [&](const ua::NodeId& id) {
    const addressspace::NodeIndex i = ns0_store().find(id);
    if (i != addressspace::kNoNode) return ns0_store().node_class(i);
    const auto it = classes.find(id);
    return it == classes.end() ? addressspace::NodeClass::Unspecified : it->second;
  };
  for (const ImportedReference& r : out.references) {
    const std::string at = "line " + std::to_string(r.line);
    for (const ua::NodeId* id : {&r.source, &r.target}) {
      if (!exists(*id))
        result.errors.push_back(
            {out.files[r.file], at, "reference to " + id->to_string() + ", which exists nowhere"});
    }
    if (!exists(r.type)) {
      result.errors.push_back(
          {out.files[r.file], at, "reference type " + r.type.to_string() + " exists nowhere"});
    } else if (class_of(r.type) != addressspace::NodeClass::ReferenceType && !declared.count(r.type) &&
               !excused(r.type)) {
      result.errors.push_back({out.files[r.file], at, r.type.to_string() + " is not a ReferenceType"});
    }
  }
  for (const auto& [id, where] : parents) {
    if (!exists(id)) {
      result.errors.push_back({out.files[where.file], "line " + std::to_string(where.line),
                               "ParentNodeId " + id.to_string() + " exists nowhere"});
    }
  }
  // DataTypes and values.
  const ImportedTypes types(out);
  for (const ImportedNode& n : out.nodes) {
    const auto& spec = n.spec;
    if (spec.node_class != addressspace::NodeClass::Variable &&
        spec.node_class != addressspace::NodeClass::VariableType)
      continue;
    const std::string at = "line " + std::to_string(n.line);
    if (!exists(spec.data_type)) {
      result.errors.push_back(
          {out.files[n.file], at, "DataType " + spec.data_type.to_string() + " exists nowhere"});
      continue;
    }
    if (excused(spec.data_type)) continue;
    if (class_of(spec.data_type) != addressspace::NodeClass::DataType) {
      result.errors.push_back({out.files[n.file], at, spec.data_type.to_string() + " is not a DataType"});
      continue;
    }
    if (!spec.value) continue;
    if (auto why = value_mismatch(spec, spec.value->value, types); !why.empty()) {
      result.errors.push_back({out.files[n.file], at, "Value does not match its DataType: " + why});
    }
  }
}

}  // namespace opcuad::config
