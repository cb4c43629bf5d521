// Node files: namespaces, object types and trees of folders, objects, variables and properties.
#include <cmath>
#include <string_view>

#include "addressspace/node.hpp"
#include "config/alarms.hpp"
#include "config/config.hpp"
#include "config/json_reader.hpp"
#include "config/json_structure.hpp"
#include "config/json_value.hpp"
#include "config/type_names.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {
using addressspace::kNoNode;
using addressspace::NodeClass;

struct FileParser {
  Context& ctx;
  LoadResult& result;
  uint16_t default_ns = 0;

  ua::NodeId::NamespaceResolver resolver() { return namespace_resolver(result.config.namespaces); }

  bool namespace_index(const std::string& uri, const std::string& path, uint16_t& out) {
    auto i = resolver()(uri);
    if (!i) {
      ctx.error(path, "unknown namespace \"" + uri + "\"");
      return false;
    }
    out = *i;
    return true;
  }

  // NodeId text: full forms (i=, ns=, nsu=, s=, g=, b=); namespace-less forms take `ns`.
  bool node_id(const std::string& text, uint16_t ns, const std::string& path, ua::NodeId& out) {
    std::string full = text;
    if (!(text.starts_with("ns=") || text.starts_with("nsu=")) && ns != 0)
      full = "ns=" + std::to_string(ns) + ";" + text;
    auto parsed = ua::NodeId::parse(full, resolver());
    if (!parsed) {
      if (text.starts_with("nsu=")) {
        const auto semi = text.find(';');
        const std::string uri = text.substr(4, semi == std::string::npos ? std::string::npos : semi - 4);
        if (!resolver()(uri)) {
          ctx.error(path, "unknown namespace \"" + uri + "\"");
          return false;
        }
      }
      ctx.error(path, "invalid NodeId \"" + text + "\": " + parsed.error);
      return false;
    }
    if (parsed.value->namespace_index() >= result.config.namespaces.size()) {
      ctx.error(path, "unknown namespace index " + std::to_string(parsed.value->namespace_index()));
      return false;
    }
    out = *parsed.value;
    return true;
  }

  void text(ObjectReader& r, const char* key, ua::LocalizedText& out) {
    const Json* j = r.member(key);
    if (!j) return;
    if (j->is_string()) {
      out = ua::LocalizedText{ua::String(), ua::String(j->get<std::string>())};
      return;
    }
    ObjectReader t(ctx, *j, r.path_of(key));
    std::string locale, txt;
    if (t.read("locale", locale)) out.locale = ua::String(locale);
    if (t.read("text", txt)) out.text = ua::String(txt);
  }

  // A DataType name that may be a NodeSet2 file's: a NodeId outside namespace 0 ("ns=3;i=3001",
  // "nsu=<URI>;i=3001") or "<namespace URI>:<BrowseName>".
  static bool imported_name(const std::string& name) {
    if (name.starts_with("i=") || name.starts_with("ns=0;")) return false;
    return name.find_first_of("=:") != std::string::npos;
  }

  // A DataType by ns=0 name or NodeId text.
  addressspace::NodeIndex data_type(const std::string& name, const std::string& path) {
    addressspace::NodeIndex n = find_ns0_by_name(name, NodeClass::DataType);
    if (n == kNoNode && (name.starts_with("i=") || name.starts_with("ns=0;"))) {
      auto id = ua::NodeId::parse(name);
      if (id) n = ns0_store().find(*id.value);
      if (n != kNoNode && ns0_store().node_class(n) != NodeClass::DataType) n = kNoNode;
    }
    if (n == kNoNode) ctx.error(path, "unknown DataType \"" + name + "\"");
    return n;
  }

  void simulation(ObjectReader& parent, NodeDecl& d) {
    const Json* j = parent.member("simulation");
    if (!j) return;
    ObjectReader r(ctx, *j, parent.path_of("simulation"));
    Simulation s;
    std::string kind;
    if (r.require("kind") && r.read("kind", kind)) {
      static constexpr std::pair<std::string_view, SimulationKind> kKinds[] = {
          {"counter", SimulationKind::Counter},
          {"ramp", SimulationKind::Ramp},
          {"sine", SimulationKind::Sine},
          {"square", SimulationKind::Square},
          {"random", SimulationKind::Random}};
      bool found = false;
      for (auto [name, k] : kKinds) {
        if (name == kind) {
          s.kind = k;
          found = true;
        }
      }
      if (!found)
        ctx.error(r.path_of("kind"),
                  "unknown simulation kind \"" + kind + "\" (counter, ramp, sine, square, random)");
    }
    r.read("interval_ms", s.interval_ms);
    r.read("period_ms", s.period_ms);
    r.read("min", s.min);
    r.read("max", s.max);
    r.read("step", s.step);
    if (s.interval_ms <= 0) ctx.error(r.path_of("interval_ms"), "must be greater than 0");
    if (s.period_ms <= 0) ctx.error(r.path_of("period_ms"), "must be greater than 0");
    if (s.min > s.max) ctx.error(r.path(), "min must not be greater than max");
    d.simulation = s;
  }

  // Parses one node (and its children) into result.config.nodes.
  void node(const Json& j, const std::string& path, const ua::NodeId& parent, NodeKind parent_kind,
            const std::string& parent_path_text, bool in_type) {
    ObjectReader r(ctx, j, path);
    if (!r.valid()) return;
    NodeDecl d;
    d.file = ctx.file();
    d.path = path;
    d.parent = parent;
    std::string kind = "variable", name, ns_uri, id_text, type_text;
    if (r.require("kind") && r.read("kind", kind)) {
      if (kind == "folder") {
        d.kind = NodeKind::Folder;
      } else if (kind == "object") {
        d.kind = NodeKind::Object;
      } else if (kind == "variable") {
        d.kind = NodeKind::Variable;
      } else if (kind == "property") {
        d.kind = NodeKind::Property;
      } else {
        ctx.error(r.path_of("kind"), "unknown kind \"" + kind + "\" (folder, object, variable, property)");
      }
    }
    r.require("name");
    r.read("name", name);
    uint16_t ns = default_ns;
    if (r.read("namespace", ns_uri)) namespace_index(ns_uri, r.path_of("namespace"), ns);
    d.browse_name = ua::QualifiedName{ns, ua::String(name)};
    d.display_name = ua::LocalizedText{ua::String(), ua::String(name)};
    text(r, "display_name", d.display_name);
    text(r, "description", d.description);
    int64_t count = 0;
    if (r.read_int("count", count, 1, 10'000'000)) {
      d.count = static_cast<uint32_t>(count);
      d.start = 1;
      r.read_int("start", d.start);
      if (name.find("{n}") == std::string::npos) {
        ctx.error(r.path_of("name"), "a bulk declaration's name must contain {n}");
        d.count = 0;  // reported once; the node is checked as a single one
      }
    }
    const std::string own_path = parent_path_text.empty() ? name : parent_path_text + "." + name;
    if (r.read("node_id", id_text)) {
      if (d.count && id_text.find("{n}") == std::string::npos) {
        ctx.error(r.path_of("node_id"), "a bulk declaration's node_id must contain {n}");
      }
      // Checked now with {n} = start; build_address_space() substitutes each n.
      std::string probe = id_text;
      if (d.count && probe.find("{n}") != std::string::npos)
        probe.replace(probe.find("{n}"), 3, std::to_string(d.start));
      ua::NodeId id;
      if (node_id(probe, ns, r.path_of("node_id"), id)) {
        d.node_id = id;
        if (d.count) {
          d.id_pattern = id_text.starts_with("ns=") || id_text.starts_with("nsu=")
                             ? id_text
                             : "ns=" + std::to_string(ns) + ";" + id_text;
        }
      }
    } else {
      d.node_id = ua::NodeId(ns, ua::String(own_path));  // derived from the path: stable across restarts
    }

    switch (d.kind) {
      case NodeKind::Folder:
        d.type_definition = ua::NodeId(0, ua::id::FolderType);
        break;
      case NodeKind::Object:
        d.type_definition = ua::NodeId(0, ua::id::BaseObjectType);
        break;
      case NodeKind::Variable:
        d.type_definition = ua::NodeId(0, ua::id::BaseDataVariableType);
        break;
      case NodeKind::Property:
        d.type_definition = ua::NodeId(0, ua::id::PropertyType);
        break;
      case NodeKind::Method:  // not a kind a node file can write
        break;
    }
    d.reference_type = ua::NodeId(0, d.kind == NodeKind::Property      ? ua::id::HasProperty
                                     : parent_kind == NodeKind::Folder ? ua::id::Organizes
                                                                       : ua::id::HasComponent);
    if (r.read("type_definition", type_text)) {
      const NodeClass cls = d.kind == NodeKind::Variable || d.kind == NodeKind::Property
                                ? NodeClass::VariableType
                                : NodeClass::ObjectType;
      const addressspace::NodeIndex t = find_ns0_by_name(type_text, cls);
      if (t != kNoNode) {
        d.type_definition = ns0_store().node_id(t);
      } else if (type_text.find_first_of("=:") != std::string::npos) {
        // A NodeId or "<namespace URI>:<BrowseName>": it may name a type of a NodeSet2 file read later,
        // so check_references() resolves it (config/instances.cpp).
        d.type_ref = type_text;
      } else {
        d.type_name = type_text;  // an object type of a node file, resolved once all files are read
      }
    }
    if (const Json* m = r.member("members")) members(*m, r.path_of("members"), d);

    const bool is_variable = d.kind == NodeKind::Variable || d.kind == NodeKind::Property;
    if (is_variable) variable(r, d, ns);
    if (!is_variable) {
      for (const char* k :
           {"data_type", "value_rank", "array_dimensions", "value", "access", "minimum_sampling_interval",
            "historizing", "engineering_units", "eu_range", "simulation", "read_roles", "write_roles"}) {
        if (r.member(k))
          ctx.error(r.path_of(k), "only variables and properties have \"" + std::string(k) + "\"");
      }
    }
    if (in_type && d.count)
      ctx.error(r.path_of("count"), "bulk declarations are not allowed in object types");
    // EventNotifier (Part 3 §5.5.1): objects and folders of the instance space.
    if (r.has("event_notifier")) {
      if (d.kind != NodeKind::Object && d.kind != NodeKind::Folder) {
        r.member("event_notifier");
        ctx.error(r.path_of("event_notifier"), "only objects and folders have \"event_notifier\"");
      } else if (in_type) {
        r.member("event_notifier");
        ctx.error(r.path_of("event_notifier"), "not in object types: set it on the instances");
      } else {
        r.read("event_notifier", d.event_notifier);
      }
    }
    if (const Json* alarms = r.member("alarms")) {
      if (d.kind != NodeKind::Variable) {
        ctx.error(r.path_of("alarms"), "only variables have \"alarms\"");
      } else if (in_type) {
        ctx.error(r.path_of("alarms"), "not in object types: declare alarms on the instances' variables");
      } else if (d.count) {
        ctx.error(r.path_of("alarms"),
                  "a bulk declaration cannot have alarms: list them in the file's top-level \"alarms\"");
      } else {
        const NodeIdReader reader = [this, ns](const std::string& text, const std::string& at,
                                               ua::NodeId& out) { return node_id(text, ns, at, out); };
        parse_alarms(ctx, *alarms, r.path_of("alarms"), &d.node_id, reader, result.config.alarms);
      }
    }

    const Json* children = r.member("children");
    const size_t self = result.config.nodes.size();
    result.config.nodes.push_back(std::move(d));
    // The EngineeringUnits / EURange properties, while their JSON is alive.
    for (const auto& p : pending_properties) analog_properties(self, p);
    pending_properties.clear();
    if (children) {
      if (!children->is_array()) {
        ctx.error(r.path_of("children"), "expected an array, got " + json_type_name(*children));
      } else if (result.config.nodes[self].count) {
        ctx.error(r.path_of("children"), "a bulk declaration cannot have children");
      } else {
        const ua::NodeId me = result.config.nodes[self].node_id;
        const NodeKind my_kind = result.config.nodes[self].kind;
        for (size_t i = 0; i < children->size(); ++i) {
          node((*children)[i], pointer(r.path_of("children"), i), me, my_kind, own_path, in_type);
        }
      }
    }
  }

  // read_roles / write_roles: the well-known roles (Part 3 §4.8.2) whose sessions may read / write the
  // Value; absent: everyone whom the access level lets.
  void roles(ObjectReader& r, const char* key, RoleSet& out) {
    std::vector<std::string> names;
    if (!r.read(key, names)) return;
    out = 0;
    for (const auto& name : names) {
      const auto bit = role_bit(name);
      if (!bit) {
        ctx.error(r.path_of(key), unknown_role(name));
      } else {
        out |= *bit;
      }
    }
    if (names.empty())
      ctx.error(r.path_of(key), "an empty list would lock everyone out: omit the key instead");
  }

  // "access": the AccessLevel bits (Part 3 §5.6.2); false when absent.
  bool access(ObjectReader& r, uint8_t& out) {
    std::vector<std::string> names;
    if (!r.read("access", names)) return false;
    out = 0;
    for (const auto& a : names) {
      if (a == "read") {
        out |= addressspace::access::kCurrentRead;
      } else if (a == "write") {
        out |= addressspace::access::kCurrentWrite;
      } else if (a == "history_read") {
        out |= addressspace::access::kHistoryRead;
      } else if (a == "history_write") {
        out |= addressspace::access::kHistoryWrite;
      } else {
        ctx.error(r.path_of("access"),
                  "unknown access \"" + a + "\" (read, write, history_read, history_write)");
      }
    }
    return true;
  }

  // "members": {"<browse path>": {settings}} of an instance of a NodeSet2 type. Only what needs no
  // DataType is checked here; the paths and values are checked against the type by check_references().
  void members(const Json& j, const std::string& path, NodeDecl& d) {
    if (!j.is_object()) {
      ctx.error(path, "expected an object, got " + json_type_name(j));
      return;
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      MemberSettings m;
      m.browse_path = it.key();
      m.json_path = pointer(path, it.key());
      ObjectReader s(ctx, it.value(), m.json_path);
      if (!s.valid()) continue;
      if (s.has("display_name")) text(s, "display_name", m.display_name.emplace());
      if (s.has("description")) text(s, "description", m.description.emplace());
      uint8_t level = 0;
      if (access(s, level)) m.access_level = level;
      RoleSet set = 0;
      if (s.has("read_roles")) {
        roles(s, "read_roles", set);
        m.read_roles = set;
      }
      if (s.has("write_roles")) {
        roles(s, "write_roles", set);
        m.write_roles = set;
      }
      double msi = 0;
      if (s.read("minimum_sampling_interval", msi)) m.minimum_sampling_interval = msi;
      bool hist = false;
      if (s.read("historizing", hist)) m.historizing = hist;
      NodeDecl sim;
      simulation(s, sim);
      m.simulation = sim.simulation;
      if (const Json* v = s.member("value")) m.value_json = v->dump();
      d.members.push_back(std::move(m));
    }
  }

  void variable(ObjectReader& r, NodeDecl& d, uint16_t ns) {
    std::string dt = "BaseDataType";
    addressspace::NodeIndex dt_index = kNoNode;
    if (r.require("data_type") && r.read("data_type", dt)) {
      if (find_ns0_by_name(dt, NodeClass::DataType) == kNoNode && imported_name(dt)) {
        d.data_type_ref = dt;  // a NodeSet2 file's DataType, resolved once every file is read
      } else {
        dt_index = data_type(dt, r.path_of("data_type"));
      }
    }
    if (dt_index != kNoNode) d.data_type = ns0_store().node_id(dt_index);
    int64_t rank = -1;
    if (r.read_int("value_rank", rank, -3, 32)) d.value_rank = static_cast<int32_t>(rank);
    if (const Json* dims = r.member("array_dimensions")) {
      if (!dims->is_array()) {
        ctx.error(r.path_of("array_dimensions"), "expected an array, got " + json_type_name(*dims));
      } else {
        for (size_t i = 0; i < dims->size(); ++i) {
          if (!(*dims)[i].is_number_unsigned()) {
            ctx.error(pointer(r.path_of("array_dimensions"), i),
                      "expected a non-negative integer, got " + json_type_name((*dims)[i]));
          } else {
            d.array_dimensions.push_back((*dims)[i].get<uint32_t>());
          }
        }
        if (d.value_rank > 0 && d.array_dimensions.size() != static_cast<size_t>(d.value_rank)) {
          ctx.error(r.path_of("array_dimensions"),
                    "must have ValueRank (" + std::to_string(d.value_rank) + ") entries");
        }
      }
    }
    access(r, d.access_level);
    roles(r, "read_roles", d.read_roles);
    roles(r, "write_roles", d.write_roles);
    r.read("minimum_sampling_interval", d.minimum_sampling_interval);
    r.read("historizing", d.historizing);
    if (const Json* v = r.member("value"); v && dt_index != kNoNode) {
      std::string why;
      // Structures by their fields' names (config/json_structure.hpp); everything else as json_value.hpp
      // says.
      const addressspace::NodeIndex structure = find_ns0_by_name("Structure", NodeClass::DataType);
      const bool by_fields = ns0_store().is_data_type_subtype(dt_index, structure);
      if (by_fields ? !json_to_model_value(*v, ns0_store(), dt_index, d.value_rank, resolver(), d.value, why)
                    : !json_to_variant(*v, ns0_store(), dt_index, d.value_rank, resolver(), d.value, why)) {
        const ValueFault fault = value_fault(r.path_of("value"), why);
        ctx.error(fault.path, fault.reason);
      } else if (const std::string wrong = array_dimensions_error(d.array_dimensions, d.value);
                 !wrong.empty()) {
        ctx.error(r.path_of("value"), wrong);
      }
    } else if (const Json* v = r.member("value"); v && !d.data_type_ref.empty()) {
      d.value_json = v->dump();  // converted once the DataType is resolved (config/instances.cpp)
    }
    simulation(r, d);
    if (d.simulation && dt_index != kNoNode) {
      const auto* a = ns0_store().data_type(dt_index);
      if (!a || a->builtin < static_cast<uint8_t>(ua::BuiltinType::SByte) ||
          a->builtin > static_cast<uint8_t>(ua::BuiltinType::Double) || d.value_rank != -1) {
        ctx.error(r.path_of("simulation"), "simulation needs a scalar numeric DataType");
      }
    }
    // EngineeringUnits and EURange become properties of an AnalogItemType variable (Part 8 §5.3.2).
    const Json* eu = r.member("engineering_units");
    const Json* range = r.member("eu_range");
    if (eu || range) {
      if (d.type_definition == ua::NodeId(0, ua::id::BaseDataVariableType))
        d.type_definition = ua::NodeId(0, ua::id::AnalogItemType);
      pending_properties.push_back({eu, range, r.path_of("engineering_units"), r.path_of("eu_range"), ns});
    }
  }

  struct PendingProperties {
    const Json* eu;
    const Json* range;
    std::string eu_path, range_path;
    uint16_t ns;
  };
  std::vector<PendingProperties> pending_properties;

  void analog_properties(size_t owner, const PendingProperties& p) {
    const ua::NodeId parent = result.config.nodes[owner].node_id;
    const std::string base(parent.type() == ua::IdType::String ? parent.string() : parent.to_string());
    auto add = [&](const Json* j, const std::string& path, const char* name, uint32_t type) {
      if (!j) return;
      NodeDecl d;
      d.kind = NodeKind::Property;
      d.file = ctx.file();
      d.path = path;
      d.parent = parent;
      d.reference_type = ua::NodeId(0, ua::id::HasProperty);
      d.type_definition = ua::NodeId(0, ua::id::PropertyType);
      d.browse_name = ua::QualifiedName{0, ua::String(name)};
      d.display_name = ua::LocalizedText{ua::String(), ua::String(name)};
      d.node_id = ua::NodeId(parent.namespace_index(), ua::String(base + "." + name));
      d.data_type = ua::NodeId(0, type);
      d.count = result.config.nodes[owner].count;  // a bulk variable's properties are bulk too
      d.start = result.config.nodes[owner].start;
      std::string why;
      if (!json_to_variant(*j, ns0_store(), ns0_store().find(d.data_type), -1, resolver(), d.value, why)) {
        ctx.error(path, why);
      }
      result.config.nodes.push_back(std::move(d));
    };
    add(p.eu, p.eu_path, "EngineeringUnits", ua::id::EUInformation);
    add(p.range, p.range_path, "EURange", ua::id::Range);
  }
};
}  // namespace

void load_node_file_text(const std::string& text, const std::string& file_name, LoadResult& into) {
  Context ctx(file_name, into.errors);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    ctx.error("", json_syntax_error(e));
    // Its nodes are missing: references to them from other files cannot be judged (check_references).
    into.unparsed_files = true;
    return;
  }
  FileParser fp{ctx, into, 0, {}};
  ObjectReader r(ctx, j, "");
  if (!r.valid()) return;
  std::vector<std::string> uris;
  if (r.read("namespaces", uris)) {
    for (const auto& u : uris) {
      bool known = false;
      for (const auto& n : into.config.namespaces) known = known || n == u;
      if (!known) into.config.namespaces.push_back(u);
    }
    if (!uris.empty()) fp.namespace_index(uris.front(), "/namespaces/0", fp.default_ns);
  }
  auto parse_list = [&](const char* key, bool types) {
    const Json* list = r.member(key);
    if (!list) return;
    if (!list->is_array()) {
      ctx.error(r.path_of(key), "expected an array, got " + json_type_name(*list));
      return;
    }
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string path = pointer(r.path_of(key), i);
      const Json& item = (*list)[i];
      if (types) {
        // {"name", "namespace", "node_id", "base", "abstract", "children"}: an ObjectType.
        Json as_node = item;
        std::string base = "BaseObjectType";
        bool abstract = false;
        if (item.is_object()) {
          if (item.contains("base") && item["base"].is_string()) base = item["base"].get<std::string>();
          if (item.contains("abstract") && item["abstract"].is_boolean())
            abstract = item["abstract"].get<bool>();
          as_node.erase("base");
          as_node.erase("abstract");
          as_node["kind"] = "object";
        }
        const size_t at = into.config.nodes.size();
        fp.node(as_node, path, ua::NodeId(), NodeKind::Object, "", true);
        if (at < into.config.nodes.size()) {
          NodeDecl& t = into.config.nodes[at];
          t.is_type = true;
          t.is_abstract = abstract;
          t.reference_type = ua::NodeId(0, ua::id::HasSubtype);
          t.type_definition = ua::NodeId();
          const addressspace::NodeIndex b = find_ns0_by_name(base, NodeClass::ObjectType);
          if (b != kNoNode) {
            t.parent = ns0_store().node_id(b);
          } else {
            t.type_name = base;  // a supertype declared by a node file
            t.parent = ua::NodeId();
          }
        }
        if (item.is_object() && item.contains("base") && !item["base"].is_string()) {
          ctx.error(pointer(path, "base"), "expected a string, got " + json_type_name(item["base"]));
        }
      } else {
        ua::NodeId parent(0, ua::id::ObjectsFolder);
        NodeKind parent_kind = NodeKind::Folder;
        std::string parent_path;
        if (item.is_object() && item.contains("parent")) {
          if (!item["parent"].is_string()) {
            ctx.error(pointer(path, "parent"), "expected a string, got " + json_type_name(item["parent"]));
          } else {
            fp.node_id(item["parent"].get<std::string>(), 0, pointer(path, "parent"), parent);
            parent_kind = NodeKind::Object;  // refined by check_references()
            if (parent.namespace_index() != 0 && parent.type() == ua::IdType::String)
              parent_path = std::string(parent.string());
          }
        }
        Json copy = item;
        if (copy.is_object()) copy.erase("parent");
        const size_t at = into.config.nodes.size();
        fp.node(copy, path, parent, parent_kind, parent_path, false);
        if (at < into.config.nodes.size() && item.is_object() && item.contains("parent")) {
          into.config.nodes[at].reference_type =
              ua::NodeId();  // chosen by check_references() from the parent
        }
      }
    }
  };
  parse_list("object_types", true);
  parse_list("nodes", false);
  if (const Json* alarms = r.member("alarms")) {
    const NodeIdReader reader = [&fp](const std::string& text, const std::string& at, ua::NodeId& out) {
      return fp.node_id(text, fp.default_ns, at, out);
    };
    parse_alarms(ctx, *alarms, "/alarms", nullptr, reader, into.config.alarms);
  }
}

}  // namespace opcuad::config
