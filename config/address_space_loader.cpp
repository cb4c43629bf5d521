#include "config/address_space_loader.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "addressspace/namespace0.hpp"
#include "addressspace/node_store_builder.hpp"
#include "addressspace/server_object.hpp"
#include "addressspace/store_diff.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

addressspace::ServerInfo server_info(const ServerConfig& c, const ua::BuildInfo& build) {
  addressspace::ServerInfo info;
  info.namespace_uris = c.namespaces;
  info.server_uris = {c.application_uri};
  info.build_info = build;
  info.start_time = ua::DateTime::now();
  info.max_browse_continuation_points = c.limits.max_browse_continuation_points;
  info.max_array_length = c.limits.max_array_length;
  info.max_string_length = c.limits.max_string_length;
  info.max_byte_string_length = c.limits.max_byte_string_length;
  info.min_supported_sample_rate = c.limits.min_sampling_interval_ms;
  info.max_sessions = c.limits.max_sessions;
  info.max_subscriptions = c.limits.max_subscriptions;
  info.max_monitored_items = c.limits.max_monitored_items;
  info.max_subscriptions_per_session = c.limits.max_subscriptions_per_session;
  info.max_monitored_items_per_subscription = c.limits.max_monitored_items_per_subscription;
  // Part 5 §6.3.2 MaxMonitoredItemsQueueSize: the largest queue any item may get, data or event item.
  info.max_monitored_items_queue_size =
      std::max(c.limits.max_monitored_item_queue_size, c.limits.max_event_queue_size);
  info.operation_limits = c.limits.operations;
  info.diagnostics_enabled = c.diagnostics.enabled;
  return info;
}

namespace {

// The attributes a node declaration gives its node (and every copy of it an instance gets); the NodeId,
// and the value's timestamp, are the caller's.
addressspace::NodeSpec spec_of(const NodeDecl& d) {
  using addressspace::NodeClass;
  addressspace::NodeSpec spec;
  spec.node_class = d.is_type                                                      ? NodeClass::ObjectType
                    : d.kind == NodeKind::Variable || d.kind == NodeKind::Property ? NodeClass::Variable
                    : d.kind == NodeKind::Method                                   ? NodeClass::Method
                                                                                   : NodeClass::Object;
  spec.browse_name = d.browse_name;
  spec.display_name = d.display_name;
  spec.description = d.description;
  spec.is_abstract = d.is_abstract;
  spec.data_type = d.data_type.is_null() ? ua::NodeId(0, ua::id::BaseDataType) : d.data_type;
  spec.value_rank = d.value_rank;
  spec.array_dimensions = d.array_dimensions;
  spec.access_level = d.access_level;
  spec.user_access_level = d.access_level;
  if (d.read_roles != role::kEveryone || d.write_roles != role::kEveryone)
    spec.user_access_level |= kHasRolesBit;
  spec.read_roles = d.read_roles;
  spec.write_roles = d.write_roles;
  spec.minimum_sampling_interval = d.minimum_sampling_interval;
  spec.historizing = d.historizing;
  if (d.event_notifier) spec.event_notifier = 1;  // SubscribeToEvents (Part 3 §5.5.1)
  return spec;
}

void set_initial_value(addressspace::NodeSpec& spec, const NodeDecl& d) {
  if (spec.node_class != addressspace::NodeClass::Variable) return;
  ua::DataValue dv;
  dv.value = d.value;
  if (d.no_value && d.value.is_empty()) dv.status = ua::status::BadNoValue;
  dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
  spec.value = std::move(dv);
}

}  // namespace

namespace {

// The specification of an alarm's condition (addressspace/condition_specs.hpp).
addressspace::ConditionDecl condition_decl(const AlarmDecl& a) {
  using addressspace::ConditionKind;
  addressspace::ConditionDecl c;
  c.condition = a.id;
  c.type = a.type;
  c.input = a.input;
  switch (a.kind) {
    case AlarmKind::ExclusiveLimit:
      c.kind = ConditionKind::ExclusiveLimit;
      break;
    case AlarmKind::NonExclusiveLimit:
      c.kind = ConditionKind::NonExclusiveLimit;
      break;
    case AlarmKind::Deviation:
      c.kind = ConditionKind::Deviation;
      c.reference = a.setpoint_node;
      break;
    case AlarmKind::OffNormal:
    case AlarmKind::Discrete:
    case AlarmKind::Trip:
      c.kind = ConditionKind::OffNormal;
      c.reference = a.normal_state;
      break;
  }
  for (size_t i = 0; i < kAlarmLimitCount; ++i) {
    if (!a.limits[i]) continue;
    c.limit_mask |= static_cast<uint8_t>(1u << i);
    c.limits[i] = *a.limits[i];
    c.limit_severity[i] = a.limit_severity[i];
  }
  c.severity = a.severity;
  c.deadband = a.deadband;
  c.on_delay_ms = a.on_delay_ms;
  c.off_delay_ms = a.off_delay_ms;
  c.name = a.name;
  c.message = a.message;
  c.enabled = a.enabled;
  c.confirm = a.confirm;
  c.ack_roles = a.ack_roles;
  return c;
}

// What identifies a declaration from one load of the node files to the next (a reload compares them).
std::string declaration_key(const NodeDecl& d) {
  return d.node_id.to_string() + (d.is_type ? "\ntype\n" : "\n\n") + d.id_pattern;
}

// The running configuration's declarations by key, to tell which initial values a reload changes.
class PreviousDeclarations {
 public:
  explicit PreviousDeclarations(const ServerConfig* running) {
    if (!running) return;
    for (const NodeDecl& d : running->nodes) by_key_.emplace(declaration_key(d), &d);
  }
  // Whether the nodes of `d` existed before with another initial value (then it replaces their live one).
  bool initial_value_changed(const NodeDecl& d) const {
    if (by_key_.empty()) return false;
    auto it = by_key_.find(declaration_key(d));
    return it != by_key_.end() && !(it->second->value == d.value);
  }

 private:
  std::unordered_map<std::string, const NodeDecl*> by_key_;
};

// Who may see and switch the Server's diagnostics (Part 5 §8.2.10, services/diagnostics.hpp): EnabledFlag
// is written by administrators only (others get BadUserAccessDenied), SessionSecurityDiagnosticsArray read
// by administrators only ("should not be made accessible to all users"), and the session and subscription
// arrays show each reader its own entries.
void restrict_diagnostics(addressspace::NodeStoreBuilder& b) {
  namespace id = ua::id;
  (void)b.set_roles(ua::NodeId(0, id::Server_ServerDiagnostics_EnabledFlag), kHasRolesBit, role::kEveryone,
                    role::kAdministrators);
  (void)b.set_roles(
      ua::NodeId(0, id::Server_ServerDiagnostics_SessionsDiagnosticsSummary_SessionSecurityDiagnosticsArray),
      kHasRolesBit, role::kAdministrators, role::kEveryone);
  for (uint32_t scoped : {id::Server_ServerDiagnostics_SessionsDiagnosticsSummary_SessionDiagnosticsArray,
                          id::Server_ServerDiagnostics_SubscriptionDiagnosticsArray}) {
    (void)b.add_flags(ua::NodeId(0, scoped), addressspace::flag::kSessionScoped);
  }
}

// The nodes and references of the NodeSet2 files (config.hpp, ImportedModels), checked when they were
// loaded. On a reload a variable whose Value in the file changed gets the new one, as a JSON node's does;
// one whose file no longer gives a Value reads Bad_NoValue again (Part 6 §F.8).
void add_imported(addressspace::NodeStoreBuilder& b, const ImportedModels& m, const ImportedModels* running,
                  std::vector<ConfigError>& errors) {
  using addressspace::NodeClass;
  std::unordered_map<ua::NodeId, const ImportedSpec*> before;
  if (running) {
    for (const ImportedNode& n : running->nodes) {
      if (n.spec.node_class == NodeClass::Variable) before.emplace(n.spec.node_id, &n.spec);
    }
  }
  const auto same_value = [](const ImportedSpec& a, const ImportedSpec& b) {
    if (!a.value || !b.value) return !a.value && !b.value;
    return a.value->value == b.value->value;
  };
  addressspace::NodeSpec spec;  // reused: its strings keep their room from node to node
  for (const ImportedNode& n : m.nodes) {
    n.spec.to_node_spec(spec);
    const auto it = n.spec.node_class == NodeClass::Variable ? before.find(n.spec.node_id) : before.end();
    if (it != before.end() && !same_value(*it->second, n.spec)) {
      spec.replace_value = true;
      if (!spec.value) spec.value = ua::DataValue{.status = ua::status::BadNoValue};
    }
    const bool added = b.add_node(spec);
    if (!added) {
      errors.push_back({m.files[n.file], "line " + std::to_string(n.line),
                        "duplicate NodeId " + n.spec.node_id.to_string()});
    }
  }
  for (const ImportedReference& r : m.references)
    b.add_reference(m.id(r.source), m.id(r.type), m.id(r.target));
}

struct BuiltStore {
  std::unique_ptr<addressspace::NodeStore> store;
  std::vector<ConfigError> errors;
  size_t values_reset = 0;
};

// The store `c` describes, built over space.current() (whose cells it reuses by NodeId); `running` is the
// configuration that store was built from (a reload), else nullptr.
BuiltStore build_store(const ServerConfig& c, addressspace::AddressSpace& space,
                       addressspace::EpochReclaimer::Participant& p, RoleTable* roles,
                       const ServerConfig* running) {
  using namespace addressspace;
  std::vector<ConfigError> errors;
  const PreviousDeclarations previous(running);
  NodeStoreBuilder b(space.values(), p, space.current());
  add_namespace0(b);
  restrict_diagnostics(b);
  // diagnostics.counters is read at start only (the daemon's refresh runs or not): a reload keeps it.
  if ((running ? running : &c)->diagnostics.counters) add_counter_nodes(b, kCounterRefreshMs);
  auto resolver = [&](std::string_view uri) -> std::optional<uint16_t> {
    for (size_t i = 0; i < c.namespaces.size(); ++i) {
      if (c.namespaces[i] == uri) return static_cast<uint16_t>(i);
    }
    return std::nullopt;
  };
  add_imported(b, c.imported, running ? &running->imported : nullptr, errors);
  const ua::NodeId has_type_definition(0, ua::id::HasTypeDefinition);
  const ua::NodeId has_modelling_rule(0, ua::id::HasModellingRule);
  const ua::NodeId mandatory(0, ua::id::ModellingRule_Mandatory);
  std::unordered_set<ua::NodeId> type_members;  // nodes of declared object types: instance declarations

  // What instantiation needs (Part 3 §6.3.3, §6.4): the declared types, their base types, the instance
  // declarations below each node of a type, and the browse names each node declares itself.
  std::unordered_map<ua::NodeId, ua::NodeId> declared_type_base;
  std::unordered_map<ua::NodeId, std::vector<const NodeDecl*>> declarations_below;
  std::unordered_map<ua::NodeId, std::unordered_set<std::string>> declared_names;
  {
    std::unordered_set<ua::NodeId> members;
    for (const NodeDecl& d : c.nodes) {
      declared_names[d.parent].insert(std::string(d.browse_name.name.view()));
      if (d.is_type) {
        declared_type_base[d.node_id] = d.parent;
        members.insert(d.node_id);
      } else if (d.count == 0 && members.count(d.parent)) {
        members.insert(d.node_id);
        declarations_below[d.parent].push_back(&d);
      }
    }
  }
  // Gives `instance` a copy of every instance declaration of `type` and its declared supertypes that it
  // does not declare itself (a subtype's declaration hides its supertype's of the same browse name).
  // Copies get NodeIds derived like declared children's (`<instance>.<BrowseName>`), the declaration's
  // attributes, value and type definition, and their own declarations recursively.
  using Names = std::unordered_set<std::string>;
  std::function<void(const ua::NodeId&, const ua::NodeId&, Names, const NodeDecl&, int)> instantiate;
  std::function<void(const ua::NodeId&, const ua::NodeId&, const NodeDecl&, int)> copy_below;
  auto copy_node = [&](const ua::NodeId& parent, const NodeDecl& decl, const NodeDecl& owner, int depth) {
    const std::string base(parent.type() == ua::IdType::String ? std::string(parent.string())
                                                               : parent.to_string());
    NodeSpec copy = spec_of(decl);
    copy.node_id = ua::NodeId(parent.namespace_index(),
                              ua::String(base + "." + std::string(decl.browse_name.name.view())));
    set_initial_value(copy, decl);
    copy.replace_value = previous.initial_value_changed(decl);
    const bool added = b.add_node(copy);
    if (added && roles && (copy.user_access_level & kHasRolesBit)) {
      (*roles)[copy.node_id] = NodeRoles{decl.read_roles, decl.write_roles};
    }
    if (!added) {
      errors.push_back({owner.file, owner.path,
                        "instantiating " + std::string(decl.browse_name.name.view()) + ": duplicate NodeId " +
                            copy.node_id.to_string()});
      return;
    }
    b.add_reference(parent, decl.reference_type, copy.node_id);
    b.add_reference(copy.node_id, has_type_definition, decl.type_definition);
    copy_below(copy.node_id, decl.node_id, owner, depth + 1);
    if (copy.node_class == NodeClass::Object) {
      Names copied;  // what copy_below just gave it hides the type's declarations of the same name
      if (auto it = declarations_below.find(decl.node_id); it != declarations_below.end()) {
        for (const NodeDecl* below : it->second) copied.insert(std::string(below->browse_name.name.view()));
      }
      instantiate(copy.node_id, decl.type_definition, std::move(copied), owner, depth + 1);
    }
  };
  copy_below = [&](const ua::NodeId& target, const ua::NodeId& source, const NodeDecl& owner, int depth) {
    auto it = declarations_below.find(source);
    if (it == declarations_below.end()) return;
    for (const NodeDecl* decl : it->second) copy_node(target, *decl, owner, depth);
  };
  instantiate = [&](const ua::NodeId& instance, const ua::NodeId& type, Names present, const NodeDecl& owner,
                    int depth) {
    if (!declared_type_base.count(type)) return;  // ns0 types: their instance declarations are not copied
    if (depth > 16) {
      errors.push_back(
          {owner.file, owner.path, "object types nest deeper than 16 levels (a type containing itself?)"});
      return;
    }
    for (ua::NodeId t = type; declared_type_base.count(t); t = declared_type_base[t]) {
      auto it = declarations_below.find(t);
      if (it == declarations_below.end()) continue;
      for (const NodeDecl* decl : it->second) {
        if (!present.insert(std::string(decl->browse_name.name.view())).second) continue;
        copy_node(instance, *decl, owner, depth);
      }
    }
  };

  NodeSpec spec;
  for (const NodeDecl& d : c.nodes) {
    spec = spec_of(d);
    spec.replace_value = previous.initial_value_changed(d);
    const bool in_type = d.is_type || type_members.count(d.parent) != 0;
    const uint32_t count = d.count ? d.count : 1;
    const std::string name_pattern(d.browse_name.name.view());
    const std::string display_pattern(d.display_name.text.view());
    for (uint32_t k = 0; k < count; ++k) {
      if (d.count) {
        const std::string n = std::to_string(d.start + k);
        auto subst = [&](std::string s) {
          const auto at = s.find("{n}");
          if (at != std::string::npos) s.replace(at, 3, n);
          return s;
        };
        spec.node_id = bulk_node_id(d, d.start + k, resolver);
        spec.browse_name.name = ua::String(subst(name_pattern));
        spec.display_name.text = ua::String(subst(display_pattern));
      } else {
        spec.node_id = d.node_id;
      }
      set_initial_value(spec, d);
      ua::NodeId parent = d.parent;
      if (d.count && d.kind == NodeKind::Property && !d.parent.is_null()) {
        // The property of a bulk variable: its parent is the k-th variable (same pattern, one level up).
        const std::string pid(d.node_id.string());
        const auto dot = pid.rfind('.');
        if (dot != std::string::npos) {
          NodeDecl owner;
          owner.node_id = ua::NodeId(d.node_id.namespace_index(), ua::String(pid.substr(0, dot)));
          parent = bulk_node_id(owner, d.start + k, resolver);
          spec.node_id = ua::NodeId(parent.namespace_index(),
                                    ua::String(std::string(parent.string()) + pid.substr(dot)));
          spec.browse_name.name = d.browse_name.name;
          spec.display_name.text = d.display_name.text;
        }
      }
      if (!b.add_node(spec)) {
        errors.push_back({d.file, d.path, "duplicate NodeId " + spec.node_id.to_string()});
        break;
      }
      if (roles && (spec.user_access_level & kHasRolesBit)) {
        (*roles)[spec.node_id] = NodeRoles{d.read_roles, d.write_roles};
      }
      if (d.is_type) {
        b.add_reference(d.parent, ua::NodeId(0, ua::id::HasSubtype), spec.node_id);
      } else {
        b.add_reference(parent, d.reference_type, spec.node_id);
        // A Method has no TypeDefinition (Part 3 §5.7).
        if (!d.type_definition.is_null())
          b.add_reference(spec.node_id, has_type_definition, d.type_definition);
        if (!in_type && spec.node_class == NodeClass::Object) {
          auto own = declared_names.find(spec.node_id);
          instantiate(spec.node_id, d.type_definition, own == declared_names.end() ? Names{} : own->second, d,
                      0);
        }
      }
      if (in_type) {
        type_members.insert(spec.node_id);
        if (!d.is_type) b.add_reference(spec.node_id, has_modelling_rule, mandatory);
      }
    }
  }
  // The alarms (config/alarms.cpp): their references and notifiers, and their specifications
  // (addressspace/condition_specs.hpp).
  for (const ExtraReference& r : c.references) b.add_reference(r.source, r.type, r.target);
  for (const ua::NodeId& n : c.imported_notifiers) (void)b.add_event_notifier(n, 1);
  for (const AlarmDecl& a : c.alarms) {
    if (a.expanded) b.add_condition(condition_decl(a));
  }
  if (!errors.empty()) b.cancel_value_writes();  // a failed reload writes nothing into a live cell
  auto built = b.build();
  for (auto& e : built.errors) errors.push_back({"<address space>", "", std::move(e)});
  if (!errors.empty()) b.return_new_cells();  // nothing is published: the next attempt takes them
  return {std::move(built.store), std::move(errors), built.values_reset};
}

}  // namespace

std::vector<ConfigError> build_address_space(const ServerConfig& c, addressspace::AddressSpace& space,
                                             addressspace::EpochReclaimer::Participant& p,
                                             const ua::BuildInfo& build, RoleTable* roles) {
  BuiltStore built = build_store(c, space, p, roles, nullptr);
  if (!built.errors.empty()) return std::move(built.errors);
  const addressspace::NodeStore& store = *built.store;
  space.publish(std::move(built.store), p);
  addressspace::install_server_object_values(store, space.values(), p, server_info(c, build));
  return {};
}

namespace {

// The cells of `old`'s variables that `next` does not use (the node went, or came back with another
// DataType or shape and a new cell) become spares of their NodeIds (addressspace/value_store.hpp).
size_t orphan_unused_cells(const addressspace::NodeStore& old, const addressspace::NodeStore& next,
                           addressspace::ValueStore& values) {
  size_t n = 0;
  for (addressspace::NodeIndex i = 0; i < old.size(); ++i) {
    const addressspace::VariableAttributes* v = old.variable(i);
    if (!v || !v->cell || addressspace::ValueStore::computed(*v->cell)) continue;
    const addressspace::NodeIndex j = next.find(old.node_id(i));
    const addressspace::VariableAttributes* w = j == addressspace::kNoNode ? nullptr : next.variable(j);
    if (w && w->cell == v->cell) continue;
    values.orphan(old.node_id(i), v->cell);
    ++n;
  }
  return n;
}

}  // namespace

ReloadOutcome reload_address_space(const ServerConfig& running, const ServerConfig& next,
                                   addressspace::AddressSpace& space,
                                   addressspace::EpochReclaimer::Participant& p) {
  ReloadOutcome out;
  // The node files' NodeIds were resolved against the new NamespaceArray. Namespaces may be appended (a
  // new node file's); one in use must keep its index, which clients may hold (Part 5 §6.3.1).
  const bool extended =
      next.namespaces.size() >= running.namespaces.size() &&
      std::equal(running.namespaces.begin(), running.namespaces.end(), next.namespaces.begin());
  if (!extended) {
    out.errors.push_back({"<server file>", "/namespaces",
                          "the namespaces changed: the index of a namespace in use cannot change while the "
                          "server runs (new ones may only be appended); restart to apply them"});
    return out;
  }
  BuiltStore built = build_store(next, space, p, nullptr, &running);
  if (!built.errors.empty()) {
    out.errors = std::move(built.errors);
    return out;
  }
  out.diff = addressspace::diff_stores(*space.current(), *built.store, &out.changes);
  out.values_reset = built.values_reset;
  out.nodes = built.store->size();
  // The Server object's values live in cells the new store reuses: nothing to install again but the
  // NamespaceArray when it grew.
  const addressspace::NodeStore& store = *built.store;
  out.cells_orphaned = orphan_unused_cells(*space.current(), store, space.values());
  space.publish(std::move(built.store), p);
  if (next.namespaces.size() != running.namespaces.size()) {
    addressspace::set_namespace_array(store, space.values(), p, next.namespaces);
  }
  return out;
}

}  // namespace opcuad::config
