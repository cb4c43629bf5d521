// Alarms of node files (docs/CONFIGURATION.md, "Alarms"): parsing, then expansion into condition nodes.
//
// Each alarm becomes an Object of its alarm type (Part 9 §5.8) with the members the type's fully
// inherited InstanceDeclarationHierarchy (Part 3 §6.4.3) makes Mandatory, plus the Optional ones its
// settings use (ConfirmedState with "confirm", the configured limits with their severities and
// deadbands, OnDelay / OffDelay, the NonExclusiveLimitAlarmType sub-states of the configured limits, the
// TransitionTime of the two-state variables). Methods are not copied: a client calls the type's
// (Acknowledge i=9111 ..., Part 9 §5.7.3) with the condition as its ObjectId. Non-hierarchical references
// between the declarations (ActiveState --HasTrueSubState--> LimitState, Part 9 §5.8.19.3) are repeated
// between the members.
//
// Placement (Part 9 §5.12, §6.3): the input variable is the ConditionSource, with a HasCondition reference
// to the condition, which is the condition's only link from its parent: Part 9 leaves it to the server
// whether and where a condition is a component of something (a Variable cannot have an Object as a
// component at all). Clients find conditions as Part 9 §6.3 describes, from the notifiers by HasEventSource
// to the sources and from there by HasCondition, and through the ConditionId of the condition's events.
// The notifier of a source is the nearest Object above it in the node files or NodeSet2 files: it gets
// EventNotifier SubscribeToEvents and a HasEventSource reference to the source; above that, the nearest
// object marked "event_notifier" (else the Server object) gets a HasNotifier reference to it, unless a
// NodeSet2 file already gives it one. A source whose parent is a namespace-0 node (a variable directly
// below Objects) is an event source of the Server object itself.
//
// NodeIds, stable across restarts and reloads so the condition state and clients' references keep
// following them: the condition "<input>.<name>" unless "id" names one (<input> is a string NodeId's
// text, or the NodeId's text form otherwise, in the input's namespace); each member "<parent>.<BrowseName>",
// as the members of instances get (config/instances.cpp); off_normal's normal_value, and the FALSE of
// discrete and trip alarms, a property "<condition>.NormalValue" that NormalState names.
#include "config/alarms.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "config/json_structure.hpp"
#include "config/model_store.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

using addressspace::kNoNode;
using addressspace::NodeClass;
using addressspace::NodeIndex;
using addressspace::NodeStore;

constexpr const char* kLimitKeys[kAlarmLimitCount] = {"high_high", "high", "low", "low_low"};
// The LimitAlarmType members of each limit (Part 9 §5.8.18) and the NonExclusiveLimitAlarmType sub-state.
constexpr const char* kLimitNames[kAlarmLimitCount] = {"HighHigh", "High", "Low", "LowLow"};

struct KindName {
  std::string_view name;
  AlarmKind kind;
  uint32_t type;
};
constexpr KindName kKinds[] = {
    {"exclusive_limit", AlarmKind::ExclusiveLimit, ua::id::ExclusiveLimitAlarmType},
    {"non_exclusive_limit", AlarmKind::NonExclusiveLimit, ua::id::NonExclusiveLimitAlarmType},
    {"off_normal", AlarmKind::OffNormal, ua::id::OffNormalAlarmType},
    {"discrete", AlarmKind::Discrete, ua::id::OffNormalAlarmType},
    {"trip", AlarmKind::Trip, ua::id::TripAlarmType},
    {"deviation", AlarmKind::Deviation, ua::id::ExclusiveDeviationAlarmType},
};
uint32_t kind_type(AlarmKind k) {
  for (const KindName& n : kKinds) {
    if (n.kind == k) return n.type;
  }
  return 0;
}
std::string_view kind_name(AlarmKind k) {
  for (const KindName& n : kKinds) {
    if (n.kind == k) return n.name;
  }
  return {};
}
bool has_limits(AlarmKind k) {
  return k == AlarmKind::ExclusiveLimit || k == AlarmKind::NonExclusiveLimit || k == AlarmKind::Deviation;
}
bool boolean_input(AlarmKind k) {
  return k == AlarmKind::Discrete || k == AlarmKind::Trip;
}

// The message template's placeholders: {name} the ConditionName, {value} the input's value, {state} the
// state reached (e.g. "High", "Inactive"), {limit} the limit crossed (limit and deviation alarms only).
void check_message(Context& ctx, const std::string& path, const std::string& text, AlarmKind kind) {
  if (text.size() > kMaxAlarmMessageBytes) {
    ctx.error(path, "longer than " + std::to_string(kMaxAlarmMessageBytes) + " bytes");
    return;
  }
  for (size_t at = text.find('{'); at != std::string::npos; at = text.find('{', at + 1)) {
    const size_t end = text.find('}', at);
    const std::string name = end == std::string::npos ? text.substr(at) : text.substr(at + 1, end - at - 1);
    if (end == std::string::npos ||
        (name != "name" && name != "value" && name != "state" && name != "limit")) {
      ctx.error(path, "unknown placeholder \"" + (end == std::string::npos ? name : "{" + name + "}") +
                          "\" (placeholders: {name}, {value}, {state}, {limit})");
      return;
    }
    if (name == "limit" && !has_limits(kind)) {
      ctx.error(path, "{limit} applies only to limit and deviation alarms");
      return;
    }
  }
}

void parse_one(Context& ctx, const Json& j, const std::string& path, const ua::NodeId* input,
               const NodeIdReader& node_id, std::vector<AlarmDecl>& out) {
  ObjectReader r(ctx, j, path);
  if (!r.valid()) return;
  const size_t errors = ctx.error_count();
  AlarmDecl a;
  a.file = ctx.file();
  a.path = path;
  if (r.require("name") && r.read("name", a.name)) {
    if (a.name.empty() || a.name.size() > kMaxAlarmNameBytes)
      ctx.error(r.path_of("name"), "must have 1 to " + std::to_string(kMaxAlarmNameBytes) + " bytes");
  }
  std::string text;
  if (input) {
    a.input = *input;
    if (r.member("input"))
      ctx.error(r.path_of("input"),
                "an alarm of a variable watches that variable: \"input\" is for the "
                "file's top-level \"alarms\" list");
  } else if (r.require("input") && r.read("input", text)) {
    node_id(text, r.path_of("input"), a.input);
  }
  if (r.read("id", text) && node_id(text, r.path_of("id"), a.id)) a.id_given = true;
  bool kind_known = false;
  if (r.require("type") && r.read("type", text)) {
    for (const KindName& k : kKinds) {
      if (k.name == text) {
        a.kind = k.kind;
        kind_known = true;
      }
    }
    if (!kind_known) {
      ctx.error(r.path_of("type"),
                "unknown alarm type \"" + text +
                    "\" (exclusive_limit, non_exclusive_limit, off_normal, discrete, trip, "
                    "deviation)");
    }
  }
  const bool limits = has_limits(a.kind);
  const std::string kind = "\"" + std::string(kind_name(a.kind)) + "\"";
  // Limits, ordered high_high > high > low > low_low (those configured), at least one.
  if (const Json* l = r.member("limits")) {
    if (!kind_known) {
      // reported with the type
    } else if (!limits) {
      ctx.error(r.path_of("limits"), kind + " alarms have no limits");
    } else {
      ObjectReader lr(ctx, *l, r.path_of("limits"));
      for (size_t i = 0; i < kAlarmLimitCount; ++i) {
        double v = 0;
        if (lr.read(kLimitKeys[i], v)) a.limits[i] = v;
      }
      if (lr.valid() && std::none_of(a.limits.begin(), a.limits.end(), [](auto& v) { return v.has_value(); }))
        ctx.error(lr.path(), "at least one of high_high, high, low, low_low is needed");
      const char* previous = nullptr;
      double bound = 0;
      for (size_t i = 0; i < kAlarmLimitCount; ++i) {
        if (!a.limits[i]) continue;
        if (previous && !(*a.limits[i] < bound)) {
          ctx.error(lr.path_of(kLimitKeys[i]), std::string("must be less than ") + previous);
          break;
        }
        previous = kLimitKeys[i];
        bound = *a.limits[i];
      }
    }
  } else if (kind_known && limits) {
    ctx.error(r.path(), "missing required key \"limits\"");
  }
  // Severities (Part 5 §6.4.2 Severity: 1..1000): per configured limit, or one for the other kinds.
  if (const Json* sv = r.member("severity")) {
    if (kind_known && limits) {
      ObjectReader sr(ctx, *sv, r.path_of("severity"));
      for (size_t i = 0; i < kAlarmLimitCount; ++i) {
        int64_t v = 0;
        if (!sr.read_int(kLimitKeys[i], v, 1, 1000)) continue;
        if (!a.limits[i]) {
          ctx.error(sr.path_of(kLimitKeys[i]), std::string("there is no ") + kLimitKeys[i] + " limit");
        } else {
          a.limit_severity[i] = static_cast<uint16_t>(v);
        }
      }
    } else if (kind_known) {
      int64_t v = 0;
      if (r.read_int("severity", v, 1, 1000)) a.severity = static_cast<uint16_t>(v);
    }
  }
  if (r.has("deadband")) {
    if (kind_known && !limits) {
      r.member("deadband");
      ctx.error(r.path_of("deadband"), kind + " alarms have no deadband");
    } else if (r.read("deadband", a.deadband)) {
      a.deadband_given = true;
      if (!(a.deadband >= 0) || !std::isfinite(a.deadband))
        ctx.error(r.path_of("deadband"), "must be a finite number >= 0");
    }
  }
  int64_t ms = 0;
  if (r.read_int("on_delay_ms", ms, 0, kMaxAlarmDelayMs, "(one hour)")) {
    a.on_delay_ms = static_cast<uint32_t>(ms);
    a.on_delay_given = true;
  }
  if (r.read_int("off_delay_ms", ms, 0, kMaxAlarmDelayMs, "(one hour)")) {
    a.off_delay_ms = static_cast<uint32_t>(ms);
    a.off_delay_given = true;
  }
  if (r.read("message", a.message)) check_message(ctx, r.path_of("message"), a.message, a.kind);
  r.read("enabled", a.enabled);
  r.read("confirm", a.confirm);
  std::vector<std::string> roles;
  if (r.read("ack_roles", roles)) {
    a.ack_roles = 0;
    for (const auto& name : roles) {
      const auto bit = role_bit(name);
      if (!bit) {
        ctx.error(r.path_of("ack_roles"), unknown_role(name));
      } else {
        a.ack_roles |= *bit;
      }
    }
    if (roles.empty())
      ctx.error(r.path_of("ack_roles"), "an empty list would let nobody acknowledge: omit the key instead");
  }
  // The normal value of an off_normal alarm; the setpoint of a deviation alarm.
  const Json* normal_value = r.member("normal_value");
  if (r.read("normal_node", text)) node_id(text, r.path_of("normal_node"), a.normal_node);
  if (kind_known && a.kind == AlarmKind::OffNormal) {
    if (normal_value && r.has("normal_node")) {
      ctx.error(r.path(), "give either \"normal_value\" or \"normal_node\", not both");
    } else if (!normal_value && !r.has("normal_node")) {
      ctx.error(r.path(), "an \"off_normal\" alarm needs \"normal_value\" or \"normal_node\"");
    }
    if (normal_value) a.normal_value_json = normal_value->dump();
  } else if (kind_known) {
    if (normal_value) ctx.error(r.path_of("normal_value"), "only \"off_normal\" alarms have a normal value");
    if (r.has("normal_node"))
      ctx.error(r.path_of("normal_node"), "only \"off_normal\" alarms have a normal node");
  }
  if (r.read("setpoint_node", text)) {
    if (kind_known && a.kind != AlarmKind::Deviation) {
      ctx.error(r.path_of("setpoint_node"), "only \"deviation\" alarms have a setpoint");
    } else {
      node_id(text, r.path_of("setpoint_node"), a.setpoint_node);
    }
  } else if (kind_known && a.kind == AlarmKind::Deviation) {
    ctx.error(r.path(), "missing required key \"setpoint_node\"");
  }
  r.read("event_type", a.event_type_ref);
  r.finish();
  if (ctx.error_count() == errors) out.push_back(std::move(a));
}

// The members of one condition, and the references and notifiers that make it findable.
class Expander {
 public:
  Expander(LoadResult& result, const ModelStore& model) : result_(result), model_(model), s_(*model.get()) {
    auto dense = [&](uint32_t id) { return s_.reference_type_index(s_.find(ua::NodeId(0, id))); };
    hierarchical_ = dense(ua::id::HierarchicalReferences);
    has_subtype_ = dense(ua::id::HasSubtype);
    has_property_ = dense(ua::id::HasProperty);
    has_modelling_rule_ = s_.find(ua::NodeId(0, ua::id::HasModellingRule));
    has_type_definition_ = s_.find(ua::NodeId(0, ua::id::HasTypeDefinition));
    for (size_t i = 0; i < result.config.nodes.size(); ++i) {
      const NodeDecl& d = result.config.nodes[i];
      if (!d.is_type) decls_.emplace(d.node_id, i);
      if (d.event_notifier) marked_.insert(d.node_id);
    }
    // What the NodeSet2 files already put below a notifier.
    const ImportedModels& m = result.config.imported;
    for (const ImportedReference& r : m.references) {
      if (m.id(r.type).is_ns0(ua::id::HasNotifier) || m.id(r.type).is_ns0(ua::id::HasEventSource))
        attached_.insert(m.id(r.target));
    }
  }

  void expand(AlarmDecl& a) {
    const size_t errors = result_.errors.size();
    Input in;
    if (!input(a, in)) return;
    // The alarm type, or the loaded subtype "event_type" names.
    const ua::NodeId base(0, kind_type(a.kind));
    a.type = base;
    if (!a.event_type_ref.empty() && !event_type(a, base)) return;
    // ConditionName: one per source.
    if (!names_[a.input].insert(a.name).second) {
      error(a, a.path + "/name", "the input already has an alarm named \"" + a.name + "\"");
      return;
    }
    ua::NodeId setpoint;
    if (a.kind == AlarmKind::Deviation) {
      Input sp;
      if (!variable(a, a.setpoint_node, a.path + "/setpoint_node", "setpoint", sp)) return;
      if (!numeric(sp)) {
        return (void)error(
            a, a.path + "/setpoint_node",
            "the setpoint " + a.setpoint_node.to_string() + " is not a numeric scalar variable");
      }
      setpoint = a.setpoint_node;
    }
    if (a.kind == AlarmKind::OffNormal && !a.normal_node.is_null()) {
      Input nn;
      if (!variable(a, a.normal_node, a.path + "/normal_node", "normal node", nn)) return;
      if (nn.rank != in.rank || builtin(nn) != builtin(in)) {
        return (void)error(a, a.path + "/normal_node",
                           "the normal node " + a.normal_node.to_string() +
                               " does not hold values of the input's "
                               "DataType and shape");
      }
    }
    ua::Variant normal;
    if (a.kind == AlarmKind::OffNormal && a.normal_node.is_null()) {
      std::string why;
      if (!json_to_model_value(Json::parse(a.normal_value_json), s_, s_.find(in.data_type), in.rank,
                               resolver(), normal, why)) {
        const ValueFault fault = value_fault(a.path + "/normal_value", why);
        return (void)error(a, fault.path, fault.reason);
      }
    } else if (boolean_input(a.kind)) {
      normal = ua::Variant(false);
    }
    if (result_.errors.size() != errors) return;

    if (!a.id_given) {
      const ua::NodeId& i = a.input;
      const std::string base_text(i.type() == ua::IdType::String ? std::string(i.string()) : i.to_string());
      a.id = ua::NodeId(i.namespace_index(), ua::String(base_text + "." + a.name));
    }
    NodeDecl c;
    c.kind = NodeKind::Object;
    c.node_id = a.id;
    c.parent = a.input;
    c.reference_type = ua::NodeId(0, ua::id::HasCondition);
    c.browse_name = ua::QualifiedName{a.id.namespace_index(), ua::String(a.name)};
    c.display_name = ua::LocalizedText{ua::String(), ua::String(a.name)};
    c.type_definition = a.type;
    c.file = a.file;
    c.path = a.path;
    result_.config.nodes.push_back(std::move(c));
    if (!normal.is_empty()) {
      a.normal_state = member_id(a.id, "NormalValue");
      NodeDecl p;
      p.kind = NodeKind::Property;
      p.node_id = a.normal_state;
      p.parent = a.id;
      p.reference_type = ua::NodeId(0, ua::id::HasProperty);
      p.type_definition = ua::NodeId(0, ua::id::PropertyType);
      p.browse_name = ua::QualifiedName{a.id.namespace_index(), ua::String("NormalValue")};
      p.display_name = ua::LocalizedText{ua::String(), ua::String("NormalValue")};
      p.data_type = in.data_type;
      p.value_rank = in.rank;
      p.value = std::move(normal);
      p.file = a.file;
      p.path = a.path + (a.normal_value_json.empty() ? "" : "/normal_value");
      result_.config.nodes.push_back(std::move(p));
    } else if (a.kind == AlarmKind::OffNormal) {
      a.normal_state = a.normal_node;
    }

    Facts f{a, in, setpoint, {}, {}};
    wanted(a, f.optional);
    std::vector<NodeIndex> sources;
    type_chain(s_.find(a.type), sources);
    members(f, a.id, "", sources, 0);
    // Non-hierarchical references between the declarations, repeated between their members.
    for (const auto& [decl, id] : f.created) {
      for (const addressspace::Reference& r : s_.references(decl)) {
        const NodeIndex type = s_.reference_type_node(r.type);
        if (r.is_inverse || type == has_type_definition_ || type == has_modelling_rule_ ||
            (hierarchical_ >= 0 && s_.is_reference_subtype(r.type, static_cast<uint16_t>(hierarchical_))))
          continue;
        auto target = f.created.find(r.target);
        if (target != f.created.end())
          result_.config.references.push_back({id, s_.node_id(type), target->second});
      }
    }
    a.expanded = true;
    notify(a.input, in);
  }

  // Objects marked "event_notifier" that no alarm reached are notifiers too.
  void attach_marked() {
    for (size_t i = 0; i < result_.config.nodes.size(); ++i) {
      const ua::NodeId& id = result_.config.nodes[i].node_id;
      if (marked_.count(id)) attach(id);
    }
  }

 private:
  struct Input {
    ua::NodeId data_type;
    int32_t rank = -1;
    std::string name;  // BrowseName
    ua::NodeId parent;
  };
  struct Facts {
    const AlarmDecl& a;
    const Input& in;
    ua::NodeId setpoint;
    std::set<std::string> optional;           // browse paths of the Optional members to create
    std::map<NodeIndex, ua::NodeId> created;  // declaration -> member
  };

  bool error(const AlarmDecl& a, const std::string& at, std::string reason) {
    result_.errors.push_back({a.file, at, std::move(reason)});
    return false;
  }
  ua::NodeId::NamespaceResolver resolver() { return namespace_resolver(result_.config.namespaces); }
  static ua::NodeId member_id(const ua::NodeId& parent, std::string_view name) {
    const std::string base(parent.type() == ua::IdType::String ? std::string(parent.string())
                                                               : parent.to_string());
    return ua::NodeId(parent.namespace_index(), ua::String(base + "." + std::string(name)));
  }

  // A Variable of the node files (not a bulk declaration's) or of the NodeSet2 files.
  bool variable(const AlarmDecl& a, const ua::NodeId& id, const std::string& at, const char* what,
                Input& out) {
    if (auto it = decls_.find(id); it != decls_.end()) {
      const NodeDecl& d = result_.config.nodes[it->second];
      if (d.kind != NodeKind::Variable && d.kind != NodeKind::Property)
        return error(a, at, std::string("the ") + what + " " + id.to_string() + " is not a variable");
      if (d.count) {
        return error(a, at,
                     std::string("the ") + what + " " + id.to_string() +
                         " is a bulk declaration's pattern, not a variable");
      }
      if (d.data_type.is_null()) return false;  // its DataType's error is reported
      out.data_type = d.data_type;
      out.rank = d.value_rank;
      out.name = std::string(d.browse_name.name.view());
      out.parent = d.parent;
      return true;
    }
    const NodeIndex n = s_.find(id);
    if (n == kNoNode || id.namespace_index() == 0) {
      if (result_.unparsed_files) return false;  // it may be in the file that did not parse
      return error(a, at,
                   std::string("the ") + what + " " + id.to_string() +
                       (n == kNoNode ? " does not exist" : " is a namespace 0 node"));
    }
    const addressspace::VariableAttributes* v = s_.variable(n);
    if (!v || s_.node_class(n) != NodeClass::Variable)
      return error(a, at, std::string("the ") + what + " " + id.to_string() + " is not a variable");
    out.data_type = v->data_type == kNoNode ? ua::NodeId() : s_.node_id(v->data_type);
    out.rank = v->value_rank;
    out.name = std::string(s_.browse_name(n).name.view());
    const NodeIndex p = s_.parent(n);
    out.parent = p == kNoNode ? ua::NodeId() : s_.node_id(p);
    return true;
  }
  uint8_t builtin(const Input& in) const {
    const NodeIndex dt = s_.find(in.data_type);
    const addressspace::DataTypeAttributes* t = dt == kNoNode ? nullptr : s_.data_type(dt);
    return t ? t->builtin : 0;
  }
  bool numeric(const Input& in) const {
    const uint8_t b = builtin(in);
    const NodeIndex enumeration = s_.find(ua::NodeId(0, ua::id::Enumeration));
    return in.rank == -1 && b >= static_cast<uint8_t>(ua::BuiltinType::SByte) &&
           b <= static_cast<uint8_t>(ua::BuiltinType::Double) &&
           !s_.is_data_type_subtype(s_.find(in.data_type), enumeration);
  }

  bool input(const AlarmDecl& a, Input& in) {
    // A file's top-level list names the input; a variable's alarms are its own.
    const std::string where = a.path.starts_with("/alarms/") ? a.path + "/input" : a.path;
    if (!variable(a, a.input, where, "input", in)) return false;
    if (boolean_input(a.kind)) {
      if (builtin(in) != static_cast<uint8_t>(ua::BuiltinType::Boolean) || in.rank != -1) {
        return error(a, where,
                     "a \"" + std::string(kind_name(a.kind)) + "\" alarm needs a Boolean scalar input; " +
                         a.input.to_string() + " is not one");
      }
    } else if (has_limits(a.kind) && !numeric(in)) {
      return error(a, where,
                   "a \"" + std::string(kind_name(a.kind)) + "\" alarm needs a numeric scalar input; " +
                       a.input.to_string() + " is not one");
    }
    return true;
  }

  bool event_type(AlarmDecl& a, const ua::NodeId& base) {
    const std::string at = a.path + "/event_type";
    std::optional<ua::NodeId> id;
    const std::string& text = a.event_type_ref;
    if (text.find('=') != std::string::npos) {
      auto parsed = ua::NodeId::parse(text, resolver());
      if (parsed) id = *parsed.value;
    } else {
      // "<namespace URI>:<BrowseName>", the longest namespace URI the text starts with.
      const auto& uris = result_.config.namespaces;
      size_t best = uris.size();
      for (size_t k = 0; k < uris.size(); ++k) {
        const std::string& u = uris[k];
        if (text.size() > u.size() + 1 && text.starts_with(u) && text[u.size()] == ':' &&
            (best == uris.size() || u.size() > uris[best].size()))
          best = k;
      }
      if (best != uris.size()) {
        const std::string name = text.substr(uris[best].size() + 1);
        for (NodeIndex n = 0; n < s_.size() && !id; ++n) {
          if (s_.node_class(n) == NodeClass::ObjectType && s_.record(n).browse_ns == best &&
              s_.string(s_.record(n).browse_name) == name)
            id = s_.node_id(n);
        }
      }
    }
    const NodeIndex n = id ? s_.find(*id) : kNoNode;
    if (n == kNoNode || s_.node_class(n) != NodeClass::ObjectType)
      return error(a, at,
                   "unknown ObjectType \"" + text + "\" (a NodeId or \"<namespace URI>:<BrowseName>\")");
    if (!s_.is_type_subtype(n, s_.find(base))) {
      return error(
          a, at,
          "\"" + text + "\" is not a subtype of " + std::string(s_.browse_name(s_.find(base)).name.view()));
    }
    if (s_.has_flag(n, addressspace::flag::kIsAbstract))
      return error(a, at, "\"" + text + "\" is an abstract type: name a concrete subtype");
    a.type = *id;
    return true;
  }

  // The Optional members the alarm's settings use (browse paths of namespace-0 names).
  static void wanted(const AlarmDecl& a, std::set<std::string>& out) {
    auto add = [&](std::initializer_list<std::string> paths) { out.insert(paths.begin(), paths.end()); };
    for (const char* state : {"EnabledState", "AckedState", "ActiveState"})
      add({std::string(state) + "/TransitionTime"});
    if (a.confirm) add({"ConfirmedState", "ConfirmedState/TransitionTime"});
    if (a.on_delay_given) add({"OnDelay"});
    if (a.off_delay_given) add({"OffDelay"});
    if (!has_limits(a.kind)) return;
    for (size_t i = 0; i < kAlarmLimitCount; ++i) {
      if (!a.limits[i]) continue;
      const std::string n = kLimitNames[i];
      add({n + "Limit", "Severity" + n});
      if (a.deadband_given) add({n + "Deadband"});
      if (a.kind == AlarmKind::NonExclusiveLimit) add({n + "State", n + "State/TransitionTime"});
    }
    if (a.kind != AlarmKind::NonExclusiveLimit)
      add({"LimitState/LastTransition", "LimitState/LastTransition/TransitionTime"});
  }

  enum class Rule : uint8_t { None, Mandatory, Optional, Other };
  Rule rule(NodeIndex x) const {
    const NodeIndex r = has_modelling_rule_ == kNoNode ? kNoNode : s_.forward_target(x, has_modelling_rule_);
    if (r == kNoNode) return Rule::None;
    const ua::NodeId& id = s_.node_id(r);
    if (id.is_ns0(ua::id::ModellingRule_Mandatory)) return Rule::Mandatory;
    if (id.is_ns0(ua::id::ModellingRule_Optional)) return Rule::Optional;
    return Rule::Other;  // placeholders: nodes the type leaves to instances
  }
  // `t` and its supertypes, most derived first.
  void type_chain(NodeIndex t, std::vector<NodeIndex>& out) const {
    for (int depth = 0; t != kNoNode && depth < 64; ++depth) {
      if (std::find(out.begin(), out.end(), t) != out.end()) return;
      out.push_back(t);
      NodeIndex super = kNoNode;
      for (const addressspace::Reference& r : s_.references(t)) {
        if (r.is_inverse && has_subtype_ >= 0 && r.type == has_subtype_) super = r.target;
      }
      t = super;
    }
  }

  // Creates the members below `parent` from the declarations below `sources` (most derived first: the
  // first declaration of a BrowseName wins, Part 3 §6.4.3).
  void members(Facts& f, const ua::NodeId& parent, const std::string& path,
               const std::vector<NodeIndex>& sources, int depth) {
    if (depth > 8) return;
    std::vector<std::pair<ua::QualifiedName, std::pair<std::vector<NodeIndex>, uint16_t>>> found;
    for (NodeIndex src : sources) {
      for (const addressspace::Reference& r : s_.references(src)) {
        if (r.is_inverse || hierarchical_ < 0 ||
            !s_.is_reference_subtype(r.type, static_cast<uint16_t>(hierarchical_)) || r.type == has_subtype_)
          continue;
        const NodeClass c = s_.node_class(r.target);
        if (c != NodeClass::Object && c != NodeClass::Variable) continue;  // methods stay the type's
        if (rule(r.target) == Rule::None) continue;
        const ua::QualifiedName name = s_.browse_name(r.target);
        auto it = std::find_if(found.begin(), found.end(), [&](const auto& k) { return k.first == name; });
        if (it == found.end()) {
          found.push_back({name, {{r.target}, r.type}});
        } else if (std::find(it->second.first.begin(), it->second.first.end(), r.target) ==
                   it->second.first.end()) {
          it->second.first.push_back(r.target);
        }
      }
    }
    for (const auto& [name, decls_and_type] : found) {
      const auto& [decls, ref_type] = decls_and_type;
      const NodeIndex x = decls.front();
      const std::string n(name.name.view());
      const std::string child_path = path.empty() ? n : path + "/" + n;
      const Rule r = rule(x);
      const bool wanted = r == Rule::Mandatory || (r == Rule::Optional && name.namespace_index == 0 &&
                                                   f.optional.count(child_path) != 0);
      if (!wanted) continue;
      NodeDecl g;
      const NodeClass cls = s_.node_class(x);
      g.kind = cls == NodeClass::Object    ? NodeKind::Object
               : ref_type == has_property_ ? NodeKind::Property
                                           : NodeKind::Variable;
      g.node_id = member_id(parent, n);
      g.parent = parent;
      g.reference_type = s_.node_id(s_.reference_type_node(ref_type));
      g.browse_name = name;
      g.display_name = s_.display_name(x);
      g.description = s_.description(x);
      if (has_type_definition_ != kNoNode) {
        const NodeIndex t = s_.forward_target(x, has_type_definition_);
        if (t != kNoNode) g.type_definition = s_.node_id(t);
      }
      g.file = f.a.file;
      g.path = f.a.path;
      if (const addressspace::VariableAttributes* v = cls == NodeClass::Variable ? s_.variable(x) : nullptr) {
        if (v->data_type != kNoNode) g.data_type = s_.node_id(v->data_type);
        g.value_rank = v->value_rank;
        const auto dims = s_.array_dimensions(*v);
        g.array_dimensions.assign(dims.begin(), dims.end());
        g.access_level = addressspace::access::kCurrentRead;
        g.minimum_sampling_interval = v->minimum_sampling_interval;
        g.value = initial_value(f, child_path, x);
      }
      f.created.emplace(x, g.node_id);
      result_.config.nodes.push_back(std::move(g));
      std::vector<NodeIndex> below = decls;
      if (has_type_definition_ != kNoNode) type_chain(s_.forward_target(x, has_type_definition_), below);
      members(f, member_id(parent, n), child_path, below, depth + 1);
    }
  }

  // The text of a two-state variable in `state` (its declaration's TrueState / FalseState, Part 5 §7.3.2),
  // else `fallback`.
  ua::Variant state_text(NodeIndex decl, bool state, const char* fallback) const {
    const NodeIndex t = s_.child(decl, 0, state ? "TrueState" : "FalseState");
    if (t != kNoNode) {
      const ua::DataValue dv = model_.value(t);
      if (!dv.value.is_empty()) return dv.value;
    }
    return ua::Variant(ua::LocalizedText{ua::String(), ua::String(fallback)});
  }

  // The member's Value at start. These are the static values of a condition that has not been evaluated
  // yet: enabled or not as configured, inactive, acknowledged and confirmed, not retained. The live
  // condition state replaces the variables that change (EnabledState, ActiveState, AckedState, Retain,
  // Severity, Quality, Comment, ...) with computed cells reading it (addressspace/value_store.hpp
  // ValueSource); the settings (limits, severities, delays, InputNode, NormalState, SetpointNode) stay
  // these values.
  ua::Variant initial_value(const Facts& f, const std::string& path, NodeIndex decl) const {
    const AlarmDecl& a = f.a;
    uint16_t severity = a.severity;
    if (has_limits(a.kind)) {
      severity = 1;
      for (size_t i = 0; i < kAlarmLimitCount; ++i)
        if (a.limits[i]) severity = std::max(severity, a.limit_severity[i]);
    }
    if (path == "EventType") return ua::Variant(a.type);
    if (path == "SourceNode" || path == "InputNode") return ua::Variant(a.input);
    if (path == "SourceName") return ua::Variant(ua::String(f.in.name));
    if (path == "Severity" || path == "LastSeverity") return ua::Variant(severity);
    if (path == "ConditionName") return ua::Variant(ua::String(a.name));
    if (path == "ConditionClassId") return ua::Variant(ua::NodeId(0, ua::id::ProcessConditionClassType));
    if (path == "ConditionClassName") {
      const NodeIndex cls = s_.find(ua::NodeId(0, ua::id::ProcessConditionClassType));
      return ua::Variant(cls == kNoNode ? ua::LocalizedText{} : s_.display_name(cls));
    }
    if (path == "BranchId") return ua::Variant(ua::NodeId());
    if (path == "Retain" || path == "SuppressedOrShelved") return ua::Variant(false);
    if (path == "Quality") return ua::Variant(ua::StatusCode(0));
    if (path == "EnabledState") return state_text(decl, a.enabled, a.enabled ? "Enabled" : "Disabled");
    if (path == "EnabledState/Id") return ua::Variant(a.enabled);
    if (path == "AckedState") return state_text(decl, true, "Acknowledged");
    if (path == "ConfirmedState") return state_text(decl, true, "Confirmed");
    if (path == "AckedState/Id" || path == "ConfirmedState/Id") return ua::Variant(true);
    if (path == "ActiveState") return state_text(decl, false, "Inactive");
    if (path == "ActiveState/Id") return ua::Variant(false);
    if (path == "NormalState") return ua::Variant(a.normal_state);
    if (path == "SetpointNode") return ua::Variant(f.setpoint);
    if (path == "OnDelay") return ua::Variant(static_cast<double>(a.on_delay_ms));
    if (path == "OffDelay") return ua::Variant(static_cast<double>(a.off_delay_ms));
    for (size_t i = 0; i < kAlarmLimitCount; ++i) {
      const std::string n = kLimitNames[i];
      if (!a.limits[i]) continue;
      if (path == n + "Limit") return ua::Variant(*a.limits[i]);
      if (path == "Severity" + n) return ua::Variant(a.limit_severity[i]);
      if (path == n + "Deadband") return ua::Variant(a.deadband);
      if (path == n + "State") return state_text(decl, false, (n + " inactive").c_str());
      if (path == n + "State/Id") return ua::Variant(false);
    }
    // Everything else starts as the declaration's value, or null (EventId, Time, Message, Comment,
    // the transition times, LimitState's CurrentState: nothing happened yet).
    return model_.value(decl).value;
  }

  // The notifier of the input (the nearest Object above it) gets a HasEventSource reference to it.
  void notify(const ua::NodeId& input, const Input& in) {
    ua::NodeId p = in.parent;
    for (int depth = 0; depth < 64 && !p.is_null(); ++depth) {
      if (auto it = decls_.find(p); it != decls_.end()) {
        NodeDecl& d = result_.config.nodes[it->second];
        if (d.kind == NodeKind::Object || d.kind == NodeKind::Folder) {
          d.event_notifier = true;
          add({p, ua::NodeId(0, ua::id::HasEventSource), input});
          attach(p);
          return;
        }
        p = d.parent;
        continue;
      }
      const NodeIndex n = p.namespace_index() == 0 ? kNoNode : s_.find(p);
      if (n == kNoNode) break;
      if (s_.node_class(n) == NodeClass::Object) {
        if (std::find(result_.config.imported_notifiers.begin(), result_.config.imported_notifiers.end(),
                      p) == result_.config.imported_notifiers.end())
          result_.config.imported_notifiers.push_back(p);
        add({p, ua::NodeId(0, ua::id::HasEventSource), input});
        attach(p);
        return;
      }
      const NodeIndex up = s_.parent(n);
      p = up == kNoNode ? ua::NodeId() : s_.node_id(up);
    }
    // Below namespace 0: an event source of the Server object.
    add({ua::NodeId(0, ua::id::Server), ua::NodeId(0, ua::id::HasEventSource), input});
  }
  // A HasNotifier reference to notifier `n` from the nearest object marked "event_notifier" above it, else
  // from the Server object; nothing when it has one already.
  void attach(const ua::NodeId& n) {
    if (!attached_.insert(n).second) return;
    ua::NodeId p;
    if (auto it = decls_.find(n); it != decls_.end()) p = result_.config.nodes[it->second].parent;
    for (int depth = 0; depth < 64 && !p.is_null(); ++depth) {
      auto it = decls_.find(p);
      if (it == decls_.end()) break;
      if (marked_.count(p)) {
        add({p, ua::NodeId(0, ua::id::HasNotifier), n});
        attach(p);
        return;
      }
      p = result_.config.nodes[it->second].parent;
    }
    add({ua::NodeId(0, ua::id::Server), ua::NodeId(0, ua::id::HasNotifier), n});
  }
  void add(ExtraReference r) {
    auto& refs = result_.config.references;
    if (std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(std::move(r));
  }

  LoadResult& result_;
  const ModelStore& model_;
  const NodeStore& s_;
  int hierarchical_ = -1, has_subtype_ = -1, has_property_ = -1;
  NodeIndex has_modelling_rule_ = kNoNode, has_type_definition_ = kNoNode;
  std::unordered_map<ua::NodeId, size_t> decls_;  // the node files' declarations by NodeId
  std::unordered_set<ua::NodeId> marked_;         // objects the files mark "event_notifier"
  std::unordered_set<ua::NodeId> attached_;       // notifiers with a HasNotifier (or HasEventSource) above
  std::unordered_map<ua::NodeId, std::unordered_set<std::string>> names_;  // ConditionNames per source
};

}  // namespace

void parse_alarms(Context& ctx, const Json& list, const std::string& path, const ua::NodeId* input,
                  const NodeIdReader& node_id, std::vector<AlarmDecl>& out) {
  if (!list.is_array()) {
    ctx.error(path, "expected an array, got " + json_type_name(list));
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) parse_one(ctx, list[i], pointer(path, i), input, node_id, out);
}

void expand_alarms(LoadResult& result) {
  bool any = false;
  for (const AlarmDecl& a : result.config.alarms) any = any || !a.expanded;
  for (const NodeDecl& d : result.config.nodes) any = any || d.event_notifier;
  if (!any) return;
  const ModelStore model(result.config.imported);
  if (!model.get()) return;  // the NodeSet2 files' own errors say why
  Expander e(result, model);
  for (size_t i = 0; i < result.config.alarms.size(); ++i) {
    if (result.config.alarms[i].expanded) continue;
    AlarmDecl a = result.config.alarms[i];  // a copy: expand() appends to result.config
    e.expand(a);
    result.config.alarms[i] = std::move(a);
  }
  e.attach_marked();
}

}  // namespace opcuad::config
