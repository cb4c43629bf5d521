// Instances of the ObjectTypes and VariableTypes of NodeSet2 files, declared in node files
// (docs/CONFIGURATION.md, "Instances of imported types").
//
// A node file's `type_definition` may name a type by NodeId ("nsu=<URI>;i=1012") or by
// "<namespace URI>:<BrowseName>"; both are resolved here, once every file is read. An instance of a
// NodeSet2 type gets a node for each of the type's InstanceDeclarations (Part 3 §6.4) whose ModellingRule
// asks for one (Part 3 §6.4.4): every Mandatory one, the Optional ones the entry's "members" names,
// never a placeholder (the file adds such nodes as children). The declarations are those of the fully
// inherited InstanceDeclarationHierarchy (Part 3 §6.4.3): the type's own, those of the Interfaces it
// has (Part 3 §6.9), then its supertypes', where the most derived declaration of a browse path wins; a
// created Object or Variable gets in turn the declarations below its own declaration and those of its
// TypeDefinition. What the entry declares itself as children wins over the declaration of that name.
//
// The created nodes are ordinary node declarations (NodeDecl) appended to the configuration, so
// build_address_space() and a reload treat them as the file's own: NodeIds derived from the instance's
// NodeId and the browse path ("<instance id>.<BrowseName>", as children of declared object types), so a
// reload keeps their cells and live values.
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "addressspace/namespace0.hpp"
#include "addressspace/node_store_builder.hpp"
#include "config/config.hpp"
#include "config/json_reader.hpp"
#include "config/json_structure.hpp"
#include "config/model_store.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

using addressspace::kNoNode;
using addressspace::NodeClass;
using addressspace::NodeIndex;
using addressspace::NodeStore;

// Types nest at most this deep in an instance (a type that contains an instance of itself).
constexpr int kMaxInstanceDepth = 16;

const char* node_class_name(NodeClass c) {
  switch (c) {
    case NodeClass::Object:
      return "an Object";
    case NodeClass::Variable:
      return "a Variable";
    case NodeClass::Method:
      return "a Method";
    case NodeClass::ObjectType:
      return "an ObjectType";
    case NodeClass::VariableType:
      return "a VariableType";
    case NodeClass::ReferenceType:
      return "a ReferenceType";
    case NodeClass::DataType:
      return "a DataType";
    case NodeClass::View:
      return "a View";
    default:
      return "a node";
  }
}

enum class Rule : uint8_t { None, Mandatory, Optional, OptionalPlaceholder, MandatoryPlaceholder, Other };

class Instantiator {
 public:
  Instantiator(LoadResult& result, const ModelStore& model)
      : result_(result), model_(model), s_(*model.get()) {
    auto dense = [&](uint32_t id) { return s_.reference_type_index(s_.find(ua::NodeId(0, id))); };
    hierarchical_ = dense(ua::id::HierarchicalReferences);
    has_subtype_ = dense(ua::id::HasSubtype);
    has_interface_ = dense(ua::id::HasInterface);
    has_property_ = dense(ua::id::HasProperty);
    has_modelling_rule_ = s_.find(ua::NodeId(0, ua::id::HasModellingRule));
    has_type_definition_ = s_.find(ua::NodeId(0, ua::id::HasTypeDefinition));
    for (const NodeDecl& d : result.config.nodes)
      declared_[d.parent].insert(std::string(d.browse_name.name.view()));
  }

  // Resolves nodes[i].type_ref; true when it names a type of a NodeSet2 file (then it is instantiated).
  bool resolve(size_t i) {
    NodeDecl& d = result_.config.nodes[i];
    const std::string at = d.path + "/type_definition";
    const std::string& text = d.type_ref;
    const bool variable = d.kind == NodeKind::Variable || d.kind == NodeKind::Property;
    bool declared = false;
    const std::optional<ua::NodeId> id =
        find_named(d, at, text, variable ? NodeClass::VariableType : NodeClass::ObjectType, declared);
    if (!id) return false;
    d.type_definition = *id;
    if (declared || id->namespace_index() == 0)
      return false;  // a node file's own type, or namespace 0's: the node files' behaviour, no copies
    // Part 3 §6.2.1: "the instance must be of a concrete type".
    if (s_.has_flag(s_.find(*id), addressspace::flag::kIsAbstract))
      return error(d, at, "\"" + text + "\" is an abstract type: name a concrete subtype");
    return true;
  }

  // Resolves nodes[i].data_type_ref, a DataType of the NodeSet2 files, and converts the variable's value
  // to it as the node file's own DataTypes are (config/json_structure.hpp).
  void resolve_data_type(size_t i) {
    NodeDecl& d = result_.config.nodes[i];
    const std::string at = d.path + "/data_type";
    bool declared = false;
    const std::optional<ua::NodeId> id = find_named(d, at, d.data_type_ref, NodeClass::DataType, declared);
    if (!id) return;
    d.data_type = *id;
    const NodeIndex dt = s_.find(*id);
    if (!d.value_json.empty()) {
      std::string why;
      if (!json_to_model_value(Json::parse(d.value_json), s_, dt, d.value_rank, resolver(), d.value, why)) {
        const ValueFault fault = value_fault(d.path + "/value", why);
        error(d, fault.path, fault.reason);
      } else if (const std::string wrong = array_dimensions_error(d.array_dimensions, d.value);
                 !wrong.empty()) {
        error(d, d.path + "/value", wrong);
      }
    }
    if (d.simulation) {
      const addressspace::DataTypeAttributes* a = s_.data_type(dt);
      if (!a || a->builtin < static_cast<uint8_t>(ua::BuiltinType::SByte) ||
          a->builtin > static_cast<uint8_t>(ua::BuiltinType::Double) || d.value_rank != -1)
        error(d, d.path + "/simulation", "simulation needs a scalar numeric DataType");
    }
  }

  // The members of nodes[i], an instance of a NodeSet2 type.
  void instantiate(size_t i) {
    const NodeDecl owner = result_.config.nodes[i];  // a copy: nodes grows below
    if (owner.count) {
      error(owner, owner.path + "/count", "a bulk declaration cannot be an instance of a NodeSet2 type");
      return;
    }
    std::vector<Member> members;
    for (const MemberSettings& m : owner.members) members.push_back({&m, split(m.browse_path), false});
    std::vector<NodeIndex> sources;
    type_chain(s_.find(owner.type_definition), sources);
    expand(owner, owner.node_id, "", sources, members, 0);
    const std::string type_name(s_.string(s_.record(s_.find(owner.type_definition)).browse_name));
    for (const Member& m : members) {
      if (!m.used)
        error(owner, m.settings->json_path,
              "no instance declaration \"" + m.settings->browse_path + "\" in " + type_name);
    }
  }

 private:
  struct Member {
    const MemberSettings* settings;
    std::vector<std::string> path;
    bool used;  // matched, or reported
  };
  struct Candidate {
    ua::QualifiedName name;
    std::vector<NodeIndex> decls;  // most derived first
    uint16_t reference_type = 0;
  };

  // The node `text` names, of class `want`: a NodeId, or "<namespace URI>:<BrowseName>" (the longest
  // namespace URI the text starts with). An ObjectType may also be one a node file declares itself
  // (`declared` is then set). Null after an error at `at`.
  std::optional<ua::NodeId> find_named(const NodeDecl& d, const std::string& at, const std::string& text,
                                       NodeClass want, bool& declared) {
    const bool data_type = want == NodeClass::DataType;
    const char* what = data_type ? "DataType" : "type definition";
    const bool file_types = want == NodeClass::ObjectType || want == NodeClass::VariableType;
    declared = false;
    if (looks_like_node_id(text)) {
      auto parsed = ua::NodeId::parse(text, resolver());
      if (!parsed) {
        if (text.starts_with("nsu=")) {
          const auto semi = text.find(';');
          const std::string uri = text.substr(4, semi == std::string::npos ? std::string::npos : semi - 4);
          if (!resolver()(uri)) return fail(d, at, "unknown namespace \"" + uri + "\"");
        }
        return fail(d, at, "invalid NodeId \"" + text + "\": " + parsed.error);
      }
      const ua::NodeId id = *parsed.value;
      if (id.namespace_index() >= result_.config.namespaces.size())
        return fail(d, at, "unknown namespace index " + std::to_string(id.namespace_index()));
      for (const NodeDecl& t : result_.config.nodes) {
        if (file_types && t.is_type && t.node_id == id) {
          if (want == NodeClass::VariableType)
            return fail(d, at, id.to_string() + " is an ObjectType, not a VariableType");
          declared = true;
          return id;
        }
      }
      const NodeIndex n = s_.find(id);
      if (n == kNoNode) return fail(d, at, std::string("unknown ") + what + " \"" + text + "\"");
      if (s_.node_class(n) != want) {
        return fail(
            d, at,
            "\"" + text + "\" is " + node_class_name(s_.node_class(n)) + ", not " + node_class_name(want));
      }
      return id;
    }
    const auto& uris = result_.config.namespaces;
    size_t best = uris.size();
    for (size_t k = 0; k < uris.size(); ++k) {
      const std::string& u = uris[k];
      if (text.size() > u.size() + 1 && text.starts_with(u) && text[u.size()] == ':' &&
          (best == uris.size() || u.size() > uris[best].size()))
        best = k;
    }
    if (best == uris.size()) {
      return fail(d, at,
                  std::string("unknown ") + what + " \"" + text +
                      "\": write a NodeId or \"<namespace URI>:<BrowseName>\" with a namespace URI the "
                      "server has (its own namespaces or a NodeSet2 file's model)");
    }
    const auto ns = static_cast<uint16_t>(best);
    const std::string name = text.substr(uris[best].size() + 1);
    std::vector<ua::NodeId> found;
    for (const NodeDecl& t : result_.config.nodes) {
      if (want == NodeClass::ObjectType && t.is_type && t.browse_name.namespace_index == ns &&
          t.browse_name.name.view() == name)
        found.push_back(t.node_id);
    }
    declared = !found.empty();
    for (NodeIndex n : by_name(ns, name)) {
      if (s_.node_class(n) == want) found.push_back(s_.node_id(n));
    }
    if (found.empty()) {
      const char* cls = data_type                         ? "DataType"
                        : want == NodeClass::VariableType ? "VariableType"
                                                          : "ObjectType";
      return fail(d, at,
                  std::string("unknown ") + what + " \"" + text + "\": namespace " + uris[best] + " has no " +
                      cls + " with the BrowseName \"" + name + "\"");
    }
    if (found.size() > 1) {
      std::string list;
      for (const auto& f : found) list += (list.empty() ? "" : ", ") + f.to_string();
      return fail(d, at,
                  std::string("ambiguous ") + what + " \"" + text + "\": " + list + " have this BrowseName");
    }
    return found.front();
  }
  std::optional<ua::NodeId> fail(const NodeDecl& d, const std::string& at, std::string reason) {
    error(d, at, std::move(reason));
    return std::nullopt;
  }

  static bool looks_like_node_id(const std::string& t) {
    for (const char* p : {"ns=", "nsu=", "i=", "s=", "g=", "b="})
      if (t.starts_with(p)) return true;
    return false;
  }
  // The BrowseNames of a member's path: split at '/', where "&/" is a '/' of the name and "&&" an '&' (the
  // escape of the RelativePath text format, Part 4 §A.2).
  static std::vector<std::string> split(const std::string& path) {
    std::vector<std::string> out(1);
    for (size_t i = 0; i < path.size(); ++i) {
      if (path[i] == '&' && i + 1 < path.size() && (path[i + 1] == '/' || path[i + 1] == '&')) {
        out.back() += path[++i];
      } else if (path[i] == '/') {
        out.emplace_back();
      } else {
        out.back() += path[i];
      }
    }
    return out;
  }
  ua::NodeId::NamespaceResolver resolver() { return namespace_resolver(result_.config.namespaces); }
  bool error(const NodeDecl& d, const std::string& at, std::string reason) {
    result_.errors.push_back({d.file, at, std::move(reason)});
    return false;
  }
  const std::vector<NodeIndex>& by_name(uint16_t ns, const std::string& name) {
    if (names_.empty()) {
      for (NodeIndex n = 0; n < s_.size(); ++n) {
        const NodeClass c = s_.node_class(n);
        if (c != NodeClass::ObjectType && c != NodeClass::VariableType && c != NodeClass::DataType) continue;
        const auto qn = s_.browse_name(n);
        names_[{qn.namespace_index, std::string(qn.name.view())}].push_back(n);
      }
    }
    static const std::vector<NodeIndex> kNone;
    auto it = names_.find({ns, name});
    return it == names_.end() ? kNone : it->second;
  }

  Rule rule(NodeIndex x) const {
    if (has_modelling_rule_ == kNoNode) return Rule::None;
    const NodeIndex r = s_.forward_target(x, has_modelling_rule_);
    if (r == kNoNode) return Rule::None;
    const ua::NodeId& id = s_.node_id(r);
    if (id.is_ns0(ua::id::ModellingRule_Mandatory)) return Rule::Mandatory;
    if (id.is_ns0(ua::id::ModellingRule_Optional)) return Rule::Optional;
    if (id.is_ns0(ua::id::ModellingRule_OptionalPlaceholder)) return Rule::OptionalPlaceholder;
    if (id.is_ns0(ua::id::ModellingRule_MandatoryPlaceholder)) return Rule::MandatoryPlaceholder;
    return Rule::Other;  // ExposesItsArray: the array's elements are not nodes of their own
  }

  // `t`, the Interfaces it has with their supertypes (Part 3 §6.9), then the same for its supertype: the
  // order in which their InstanceDeclarations hide each other.
  void type_chain(NodeIndex t, std::vector<NodeIndex>& out) const {
    for (int depth = 0; t != kNoNode && depth < 64; ++depth) {
      if (std::find(out.begin(), out.end(), t) != out.end()) return;
      out.push_back(t);
      for (const addressspace::Reference& r : s_.references(t)) {
        if (!r.is_inverse && has_interface_ >= 0 && r.type == has_interface_) type_chain(r.target, out);
      }
      NodeIndex super = kNoNode;
      for (const addressspace::Reference& r : s_.references(t)) {
        if (r.is_inverse && has_subtype_ >= 0 && r.type == has_subtype_) super = r.target;
      }
      t = super;
    }
  }

  // The InstanceDeclarations below `sources`, grouped by BrowseName in the order of their first source.
  std::vector<Candidate> candidates(const std::vector<NodeIndex>& sources) const {
    std::vector<Candidate> out;
    for (NodeIndex src : sources) {
      for (const addressspace::Reference& r : s_.references(src)) {
        if (r.is_inverse || hierarchical_ < 0 || !s_.is_reference_subtype(r.type, hierarchical_) ||
            r.type == has_subtype_)
          continue;
        const NodeClass c = s_.node_class(r.target);
        if (c != NodeClass::Object && c != NodeClass::Variable && c != NodeClass::Method) continue;
        if (rule(r.target) == Rule::None) continue;
        const ua::QualifiedName name = s_.browse_name(r.target);
        auto it = std::find_if(out.begin(), out.end(), [&](const Candidate& k) { return k.name == name; });
        if (it == out.end()) {
          out.push_back({name, {r.target}, r.type});
        } else if (std::find(it->decls.begin(), it->decls.end(), r.target) == it->decls.end()) {
          it->decls.push_back(r.target);
        }
      }
    }
    return out;
  }

  void expand(const NodeDecl& owner, const ua::NodeId& parent, const std::string& path,
              const std::vector<NodeIndex>& sources, std::vector<Member>& members, int depth) {
    if (depth > kMaxInstanceDepth) {
      error(owner, owner.path + "/type_definition",
            "instance declarations nest deeper than " + std::to_string(kMaxInstanceDepth) +
                " levels (a type containing itself?)");
      return;
    }
    const std::vector<Candidate> found = candidates(sources);
    const size_t level =
        path.empty() ? 0 : static_cast<size_t>(std::count(path.begin(), path.end(), '/') + 1);
    const auto& own = declared_[parent];
    for (const Candidate& c : found) {
      const std::string name(c.name.name.view());
      const std::string child_path = path.empty() ? name : path + "/" + name;
      // Members naming this declaration (their segment at this level) or something below it.
      bool named = false;
      Member* exact = nullptr;
      const size_t same_name = std::count_if(found.begin(), found.end(),
                                             [&](const Candidate& k) { return k.name.name == c.name.name; });
      for (Member& m : members) {
        if (m.used || m.path.size() <= level || !prefix_matches(m, path, level) || m.path[level] != name)
          continue;
        if (same_name > 1) {
          error(owner, m.settings->json_path,
                "ambiguous browse path \"" + m.settings->browse_path + "\": \"" + name +
                    "\" names declarations of several namespaces");
          m.used = true;
          continue;
        }
        named = true;
        if (m.path.size() == level + 1) exact = &m;
      }
      const NodeIndex winner = c.decls.front();
      const Rule r = rule(winner);
      if (own.count(name)) {
        // The entry declares a child of this name itself: it replaces the declaration.
        if (named) {
          for (Member& m : members) {
            if (!m.used && m.path.size() > level && prefix_matches(m, path, level) && m.path[level] == name) {
              error(owner, m.settings->json_path,
                    "\"" + child_path + "\" is declared by the node file itself: set it there");
              m.used = true;
            }
          }
        }
        continue;
      }
      if (r == Rule::OptionalPlaceholder || r == Rule::MandatoryPlaceholder || r == Rule::Other) {
        if (named) {
          for (Member& m : members) {
            if (!m.used && m.path.size() > level && prefix_matches(m, path, level) && m.path[level] == name) {
              error(owner, m.settings->json_path,
                    "\"" + child_path +
                        "\" is a placeholder: declare the nodes it stands for as children of the " +
                        "instance");
              m.used = true;
            }
          }
        }
        continue;
      }
      if (r != Rule::Mandatory && !named) continue;
      const ua::NodeId id = create(owner, parent, c, winner, exact);
      if (exact) exact->used = true;
      if (id.is_null()) continue;
      std::vector<NodeIndex> below = c.decls;
      if (s_.node_class(winner) != NodeClass::Method && has_type_definition_ != kNoNode)
        type_chain(s_.forward_target(winner, has_type_definition_), below);
      expand(owner, id, child_path, below, members, depth + 1);
    }
    // Members whose segment at this level names nothing here are reported by instantiate().
  }

  static bool prefix_matches(const Member& m, const std::string& path, size_t level) {
    if (level == 0) return true;
    std::string p;
    for (size_t k = 0; k < level; ++k) p += (k ? "/" : "") + m.path[k];
    return p == path;
  }

  // The node of declaration `x` below `parent`, with the member's settings; its NodeId, or null on error.
  ua::NodeId create(const NodeDecl& owner, const ua::NodeId& parent, const Candidate& c, NodeIndex x,
                    Member* m) {
    NodeDecl g;
    const NodeClass cls = s_.node_class(x);
    g.kind = cls == NodeClass::Method            ? NodeKind::Method
             : cls == NodeClass::Object          ? NodeKind::Object
             : c.reference_type == has_property_ ? NodeKind::Property
                                                 : NodeKind::Variable;
    const std::string base(parent.type() == ua::IdType::String ? std::string(parent.string())
                                                               : parent.to_string());
    g.node_id =
        ua::NodeId(parent.namespace_index(), ua::String(base + "." + std::string(c.name.name.view())));
    g.parent = parent;
    g.reference_type = s_.node_id(s_.reference_type_node(c.reference_type));
    g.browse_name = c.name;
    g.display_name = s_.display_name(x);
    g.description = s_.description(x);
    if (cls != NodeClass::Method && has_type_definition_ != kNoNode) {
      const NodeIndex t = s_.forward_target(x, has_type_definition_);
      if (t != kNoNode) g.type_definition = s_.node_id(t);
    }
    g.file = owner.file;
    g.path = m ? m->settings->json_path : owner.path;
    NodeIndex data_type = kNoNode;
    if (const addressspace::VariableAttributes* v = cls == NodeClass::Variable ? s_.variable(x) : nullptr) {
      data_type = v->data_type;
      if (data_type != kNoNode) g.data_type = s_.node_id(data_type);
      g.value_rank = v->value_rank;
      const auto dims = s_.array_dimensions(*v);
      g.array_dimensions.assign(dims.begin(), dims.end());
      g.access_level = v->access_level;
      g.minimum_sampling_interval = v->minimum_sampling_interval;
      const ua::DataValue declared = model_.value(x);
      g.value = declared.value;
      g.no_value = declared.status == ua::status::BadNoValue;
    }
    if (m && !apply(owner, *m->settings, data_type, g)) return {};
    result_.config.nodes.push_back(std::move(g));
    return result_.config.nodes.back().node_id;
  }

  // The member's settings over the declaration's attributes; false after reporting an error.
  bool apply(const NodeDecl& owner, const MemberSettings& m, NodeIndex data_type, NodeDecl& g) {
    if (m.display_name) g.display_name = *m.display_name;
    if (m.description) g.description = *m.description;
    const bool variable = g.kind == NodeKind::Variable || g.kind == NodeKind::Property;
    bool ok = true;
    auto only_variables = [&](bool given, const char* key) {
      if (given && !variable) {
        ok = error(owner, pointer(m.json_path, key),
                   "\"" + m.browse_path + "\" is " + (g.kind == NodeKind::Method ? "a Method" : "an Object") +
                       ": only variables and properties have \"" + key + "\"");
      }
      return given && variable;
    };
    if (only_variables(m.access_level.has_value(), "access")) g.access_level = *m.access_level;
    if (only_variables(m.read_roles.has_value(), "read_roles")) g.read_roles = *m.read_roles;
    if (only_variables(m.write_roles.has_value(), "write_roles")) g.write_roles = *m.write_roles;
    if (only_variables(m.minimum_sampling_interval.has_value(), "minimum_sampling_interval"))
      g.minimum_sampling_interval = *m.minimum_sampling_interval;
    if (only_variables(m.historizing.has_value(), "historizing")) g.historizing = *m.historizing;
    if (only_variables(m.simulation.has_value(), "simulation")) {
      const addressspace::DataTypeAttributes* a = data_type == kNoNode ? nullptr : s_.data_type(data_type);
      const NodeIndex enumeration = s_.find(ua::NodeId(0, ua::id::Enumeration));
      if (!a || a->builtin < static_cast<uint8_t>(ua::BuiltinType::SByte) ||
          a->builtin > static_cast<uint8_t>(ua::BuiltinType::Double) || g.value_rank != -1 ||
          s_.is_data_type_subtype(data_type, enumeration)) {
        ok = error(owner, pointer(m.json_path, "simulation"), "simulation needs a scalar numeric DataType");
      } else {
        g.simulation = m.simulation;
      }
    }
    if (only_variables(!m.value_json.empty(), "value")) {
      const std::string at = pointer(m.json_path, "value");
      if (data_type == kNoNode) return error(owner, at, "the declaration has no DataType");
      std::string why;
      if (!json_to_model_value(Json::parse(m.value_json), s_, data_type, g.value_rank, resolver(), g.value,
                               why)) {
        const ValueFault fault = value_fault(at, why);
        return error(owner, fault.path, fault.reason);
      }
    }
    return ok;
  }

  LoadResult& result_;
  const ModelStore& model_;
  const NodeStore& s_;
  int hierarchical_ = -1, has_subtype_ = -1, has_interface_ = -1, has_property_ = -1;
  NodeIndex has_modelling_rule_ = kNoNode, has_type_definition_ = kNoNode;
  std::unordered_map<ua::NodeId, std::unordered_set<std::string>> declared_;  // the files' own children
  std::map<std::pair<uint16_t, std::string>, std::vector<NodeIndex>> names_;  // types by BrowseName
};

}  // namespace

void instantiate_imported_types(LoadResult& result) {
  bool any = false;
  for (const NodeDecl& d : result.config.nodes)
    any = any || !d.type_ref.empty() || !d.members.empty() || !d.data_type_ref.empty();
  if (!any) return;
  const ModelStore model(result.config.imported);
  if (!model.get()) return;  // the NodeSet2 files' own errors say why
  Instantiator in(result, model);
  std::vector<size_t> instances;
  const size_t declared = result.config.nodes.size();
  for (size_t i = 0; i < declared; ++i) {
    const size_t errors = result.errors.size();
    const bool imported = !result.config.nodes[i].type_ref.empty() && in.resolve(i);
    const NodeDecl& d = result.config.nodes[i];
    if (imported) {
      instances.push_back(i);
    } else if (!d.members.empty() && errors == result.errors.size()) {
      result.errors.push_back({d.file, d.path + "/members",
                               "\"members\" applies only to instances of a NodeSet2 file's ObjectType or "
                               "VariableType"});
    }
  }
  for (size_t i = 0; i < declared; ++i) {
    if (!result.config.nodes[i].data_type_ref.empty()) in.resolve_data_type(i);
  }
  for (size_t i : instances) in.instantiate(i);
  // Done: a second check_references() (a test adding a node file after load_config) does not repeat it.
  for (size_t i = 0; i < declared; ++i) {
    result.config.nodes[i].type_ref.clear();
    result.config.nodes[i].members.clear();
    result.config.nodes[i].data_type_ref.clear();
    result.config.nodes[i].value_json.clear();
  }
}

}  // namespace opcuad::config
