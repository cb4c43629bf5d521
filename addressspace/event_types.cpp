#include "addressspace/event_types.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <string_view>
#include <unordered_map>

#include "addressspace/node_store.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::addressspace {

namespace {

struct WellKnownField {
  FieldKey key;
  const char* path;  // namespace-0 browse names separated by '/'
  uint32_t type;     // the namespace-0 event type that declares it
};

// In event_field order: build() interns them first, so each gets its constant.
constexpr WellKnownField kWellKnownFields[] = {
    {event_field::kEventId, "EventId", ua::id::BaseEventType},
    {event_field::kEventType, "EventType", ua::id::BaseEventType},
    {event_field::kSourceNode, "SourceNode", ua::id::BaseEventType},
    {event_field::kSourceName, "SourceName", ua::id::BaseEventType},
    {event_field::kTime, "Time", ua::id::BaseEventType},
    {event_field::kReceiveTime, "ReceiveTime", ua::id::BaseEventType},
    {event_field::kLocalTime, "LocalTime", ua::id::BaseEventType},
    {event_field::kMessage, "Message", ua::id::BaseEventType},
    {event_field::kSeverity, "Severity", ua::id::BaseEventType},
    {event_field::kConditionClassId, "ConditionClassId", ua::id::BaseEventType},
    {event_field::kConditionClassName, "ConditionClassName", ua::id::BaseEventType},
    {event_field::kActionTimeStamp, "ActionTimeStamp", ua::id::AuditEventType},
    {event_field::kStatus, "Status", ua::id::AuditEventType},
    {event_field::kServerId, "ServerId", ua::id::AuditEventType},
    {event_field::kClientAuditEntryId, "ClientAuditEntryId", ua::id::AuditEventType},
    {event_field::kClientUserId, "ClientUserId", ua::id::AuditEventType},
    {event_field::kSystemState, "SystemState", ua::id::SystemStatusChangeEventType},
    {event_field::kChanges, "Changes", ua::id::GeneralModelChangeEventType},
    {event_field::kConditionName, "ConditionName", ua::id::ConditionType},
    {event_field::kBranchId, "BranchId", ua::id::ConditionType},
    {event_field::kRetain, "Retain", ua::id::ConditionType},
    {event_field::kEnabledState, "EnabledState", ua::id::ConditionType},
    {event_field::kEnabledStateId, "EnabledState/Id", ua::id::ConditionType},
    {event_field::kEnabledStateTransitionTime, "EnabledState/TransitionTime", ua::id::ConditionType},
    {event_field::kQuality, "Quality", ua::id::ConditionType},
    {event_field::kQualitySourceTimestamp, "Quality/SourceTimestamp", ua::id::ConditionType},
    {event_field::kLastSeverity, "LastSeverity", ua::id::ConditionType},
    {event_field::kLastSeveritySourceTimestamp, "LastSeverity/SourceTimestamp", ua::id::ConditionType},
    {event_field::kComment, "Comment", ua::id::ConditionType},
    {event_field::kCommentSourceTimestamp, "Comment/SourceTimestamp", ua::id::ConditionType},
    {event_field::kAckedState, "AckedState", ua::id::AcknowledgeableConditionType},
    {event_field::kAckedStateId, "AckedState/Id", ua::id::AcknowledgeableConditionType},
    {event_field::kAckedStateTransitionTime, "AckedState/TransitionTime",
     ua::id::AcknowledgeableConditionType},
    {event_field::kConfirmedState, "ConfirmedState", ua::id::AcknowledgeableConditionType},
    {event_field::kConfirmedStateId, "ConfirmedState/Id", ua::id::AcknowledgeableConditionType},
    {event_field::kConfirmedStateTransitionTime, "ConfirmedState/TransitionTime",
     ua::id::AcknowledgeableConditionType},
    {event_field::kActiveState, "ActiveState", ua::id::AlarmConditionType},
    {event_field::kActiveStateId, "ActiveState/Id", ua::id::AlarmConditionType},
    {event_field::kActiveStateTransitionTime, "ActiveState/TransitionTime", ua::id::AlarmConditionType},
    {event_field::kActiveStateEffectiveDisplayName, "ActiveState/EffectiveDisplayName",
     ua::id::AlarmConditionType},
    {event_field::kInputNode, "InputNode", ua::id::AlarmConditionType},
    {event_field::kSuppressedOrShelved, "SuppressedOrShelved", ua::id::AlarmConditionType},
    {event_field::kHighHighLimit, "HighHighLimit", ua::id::LimitAlarmType},
    {event_field::kHighLimit, "HighLimit", ua::id::LimitAlarmType},
    {event_field::kLowLimit, "LowLimit", ua::id::LimitAlarmType},
    {event_field::kLowLowLimit, "LowLowLimit", ua::id::LimitAlarmType},
    {event_field::kLimitState, "LimitState", ua::id::ExclusiveLimitAlarmType},
    {event_field::kLimitStateCurrentState, "LimitState/CurrentState", ua::id::ExclusiveLimitAlarmType},
    {event_field::kLimitStateCurrentStateId, "LimitState/CurrentState/Id", ua::id::ExclusiveLimitAlarmType},
    {event_field::kLimitStateLastTransition, "LimitState/LastTransition", ua::id::ExclusiveLimitAlarmType},
    {event_field::kLimitStateLastTransitionId, "LimitState/LastTransition/Id",
     ua::id::ExclusiveLimitAlarmType},
    {event_field::kLimitStateLastTransitionTransitionTime, "LimitState/LastTransition/TransitionTime",
     ua::id::ExclusiveLimitAlarmType},
    {event_field::kHighHighState, "HighHighState", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kHighHighStateId, "HighHighState/Id", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kHighState, "HighState", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kHighStateId, "HighState/Id", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kLowState, "LowState", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kLowStateId, "LowState/Id", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kLowLowState, "LowLowState", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kLowLowStateId, "LowLowState/Id", ua::id::NonExclusiveLimitAlarmType},
    {event_field::kNormalState, "NormalState", ua::id::OffNormalAlarmType},
    {event_field::kSetpointNode, "SetpointNode", ua::id::ExclusiveDeviationAlarmType},
};
static_assert(std::size(kWellKnownFields) == event_field::kWellKnownCount, "one row per well-known field");

uint64_t hash_step(uint64_t h, uint16_t ns, std::string_view name) noexcept {
  h ^= std::hash<std::string_view>{}(name) + ns;
  return h * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
}

constexpr uint32_t kUnseen = UINT32_MAX;
constexpr uint32_t kPending = UINT32_MAX - 1;

}  // namespace

// The build steps; holds the scratch state the finished index does not keep.
class EventTypes::Builder {
 public:
  Builder(const NodeStore& s, EventTypes& t) : s_(s), t_(t) {}

  void run(std::vector<std::string>& errors) {
    auto ref_index = [&](uint32_t id) { return s_.reference_type_index(s_.find(ua::NodeId(0, id))); };
    has_subtype_ = ref_index(ua::id::HasSubtype);
    has_component_ = ref_index(ua::id::HasComponent);
    has_property_ = ref_index(ua::id::HasProperty);
    has_modelling_rule_ = ref_index(ua::id::HasModellingRule);
    has_event_source_ = ref_index(ua::id::HasEventSource);
    t_.enumeration_ = s_.find(ua::NodeId(0, ua::id::Enumeration));
    for (const WellKnownField& w : kWellKnownFields) {
      std::vector<Elem> path;
      std::string_view rest = w.path;
      while (!rest.empty()) {
        const size_t slash = rest.find('/');
        path.push_back({0, rest.substr(0, slash)});
        rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
      }
      if (intern(path) != w.key)
        errors.push_back("event types: well-known field " + std::string(w.path) + " out of order");
    }
    types(errors);
    if (!errors.empty()) return;
    declarations();
    if (!t_.types_.empty()) {
      for (const WellKnownField& w : kWellKnownFields) {
        const auto type = t_.event_type(ua::NodeId(0, w.type));
        if (!type) {
          errors.push_back("event types: ns=0;i=" + std::to_string(w.type) +
                           " is not a subtype of BaseEventType");
        } else if (t_.declaration(*type, w.key) == kNoNode) {
          errors.push_back("event types: ns=0;i=" + std::to_string(w.type) + " does not declare the field " +
                           w.path);
        }
      }
    }
    notifiers();
  }

 private:
  struct Elem {
    uint16_t ns;
    std::string_view name;
  };

  bool ref_is(uint16_t type, int base) const noexcept {
    return base >= 0 && s_.is_reference_subtype(type, static_cast<uint16_t>(base));
  }

  FieldKey intern(std::span<const Elem> path) {
    uint64_t h = 0;
    for (const Elem& e : path) h = hash_step(h, e.ns, e.name);
    const auto found = t_.lookup(
        path.size(), h, [&](size_t i) { return path[i].ns; }, [&](size_t i) { return path[i].name; });
    if (found) return *found;
    const auto key = static_cast<FieldKey>(t_.key_hash_.size());
    for (const Elem& e : path) {
      t_.elems_.push_back(
          {e.ns, static_cast<uint32_t>(t_.names_.size()), static_cast<uint32_t>(e.name.size())});
      t_.names_.append(e.name);
    }
    t_.key_begin_.push_back(static_cast<uint32_t>(t_.elems_.size()));
    t_.key_hash_.push_back(h);
    if ((t_.key_hash_.size() + 1) * 2 > t_.key_slots_.size()) {
      t_.key_slots_.assign(std::max<size_t>(64, t_.key_slots_.size() * 2), 0);
      for (uint32_t k = 0; k < t_.key_hash_.size(); ++k) place(k);
    } else {
      place(key);
    }
    return key;
  }
  void place(uint32_t key) {
    const size_t mask = t_.key_slots_.size() - 1;
    size_t i = t_.key_hash_[key] & mask;
    while (t_.key_slots_[i] != 0) i = (i + 1) & mask;
    t_.key_slots_[i] = key + 1;
  }

  // BaseEventType and its subtypes in depth-first pre-order (a type once, by the first HasSubtype
  // reference that reaches it).
  void types(std::vector<std::string>& errors) {
    const NodeIndex base = s_.find(ua::NodeId(0, ua::id::BaseEventType));
    if (base == kNoNode || s_.node_class(base) != NodeClass::ObjectType || has_subtype_ < 0) return;
    std::unordered_map<NodeIndex, EventTypeIdx> seen;
    struct Frame {
      NodeIndex node;
      EventTypeIdx idx;
      uint32_t next_ref;
    };
    std::vector<Frame> stack;
    auto enter = [&](NodeIndex n, EventTypeIdx parent) {
      const auto idx = static_cast<EventTypeIdx>(t_.types_.size());
      seen.emplace(n, idx);
      t_.types_.push_back(n);
      t_.subtree_end_.push_back(0);
      parents_.push_back(parent);
      stack.push_back({n, idx, 0});
    };
    enter(base, 0);
    while (!stack.empty()) {
      Frame& f = stack.back();
      const auto refs = s_.references(f.node);
      bool descended = false;
      while (f.next_ref < refs.size()) {
        const Reference& r = refs[f.next_ref++];
        if (r.is_inverse || r.type != has_subtype_ || s_.node_class(r.target) != NodeClass::ObjectType)
          continue;
        if (seen.count(r.target) != 0) continue;
        if (t_.types_.size() >= UINT16_MAX) {
          errors.push_back("event types: more than 65535 subtypes of BaseEventType");
          return;
        }
        enter(r.target, f.idx);
        descended = true;
        break;
      }
      if (descended) continue;
      t_.subtree_end_[f.idx] = static_cast<EventTypeIdx>(t_.types_.size());
      stack.pop_back();
    }
    t_.type_of_node_.assign(seen.begin(), seen.end());
    std::sort(t_.type_of_node_.begin(), t_.type_of_node_.end());
  }

  bool is_instance_declaration(NodeIndex n) const noexcept {
    for (const Reference& r : s_.references(n)) {
      if (!r.is_inverse && ref_is(r.type, has_modelling_rule_)) return true;
    }
    return false;
  }

  // The InstanceDeclarations below `n` (the type itself at depth 0), appended to own_ with their keys.
  void collect(NodeIndex n) {
    for (const Reference& r : s_.references(n)) {
      if (r.is_inverse || !(ref_is(r.type, has_component_) || ref_is(r.type, has_property_))) continue;
      const NodeIndex c = r.target;
      const NodeClass cls = s_.node_class(c);
      if (cls != NodeClass::Variable && cls != NodeClass::Object) continue;
      if (!is_instance_declaration(c)) continue;
      if (std::find(on_path_.begin(), on_path_.end(), c) != on_path_.end()) continue;  // a loop
      const QualifiedNameView name = s_.browse_name_view(c);
      path_.push_back({name.namespace_index, name.name.text});
      on_path_.push_back(c);
      own_.push_back({intern(path_), c});
      if (path_.size() < kMaxFieldDepth) collect(c);
      path_.pop_back();
      on_path_.pop_back();
    }
  }

  // Per type (supertypes first, as pre-order numbers them): the supertype's declarations, then its own
  // over them.
  void declarations() {
    std::vector<Declaration> inherited, merged;
    for (size_t t = 0; t < t_.types_.size(); ++t) {
      inherited.clear();
      if (t != 0) {
        const auto p = t_.declarations(parents_[t]);
        inherited.assign(p.begin(), p.end());
      }
      own_.clear();
      collect(t_.types_[t]);
      // The first declaration of a path the type reaches twice wins (stable sort).
      std::stable_sort(own_.begin(), own_.end(),
                       [](const Declaration& a, const Declaration& b) { return a.field < b.field; });
      own_.erase(std::unique(own_.begin(), own_.end(),
                             [](const Declaration& a, const Declaration& b) { return a.field == b.field; }),
                 own_.end());
      merged.clear();
      size_t i = 0, j = 0;
      while (i < inherited.size() || j < own_.size()) {
        if (j == own_.size() || (i < inherited.size() && inherited[i].field < own_[j].field)) {
          merged.push_back(inherited[i++]);
        } else {
          if (i < inherited.size() && inherited[i].field == own_[j].field) ++i;  // overridden
          merged.push_back(own_[j++]);
        }
      }
      t_.decls_.insert(t_.decls_.end(), merged.begin(), merged.end());
      t_.decl_begin_.push_back(static_cast<uint32_t>(t_.decls_.size()));
    }
  }

  // The notifier lists: Tarjan's strongly connected components over "S -> P when P --HasEventSource--> S"
  // (iterative). A component is finished only after every component it reaches, i.e. every node above
  // it, so its list is its own notifiers plus the lists above it.
  void notifiers() {
    const size_t n_nodes = s_.size();
    for (NodeIndex n = 0; n < n_nodes; ++n) {
      if (notifier(n)) t_.notifiers_.push_back(n);
    }
    const NodeIndex server = s_.find(ua::NodeId(0, ua::id::Server));
    if (server != kNoNode && s_.node_class(server) != NodeClass::Unspecified) server_ = server;
    // List 0, every other node's: the Server object alone (none in a store without it).
    (void)intern_list(server_ == kNoNode ? std::span<const NodeIndex>{}
                                         : std::span<const NodeIndex>(&server_, 1));
    if (has_event_source_ < 0 && t_.notifiers_.empty()) return;

    std::vector<uint32_t> local(n_nodes, kUnseen);
    std::vector<NodeIndex> node_of;
    std::vector<uint32_t> index, low, list_of;
    std::vector<bool> on_stack;
    std::vector<uint32_t> component;  // Tarjan's stack of local ids
    struct Frame {
      NodeIndex node;
      uint32_t next_ref;
    };
    std::vector<Frame> frames;
    auto discover = [&](NodeIndex n) {
      const auto l = static_cast<uint32_t>(node_of.size());
      local[n] = l;
      node_of.push_back(n);
      index.push_back(l);
      low.push_back(l);
      list_of.push_back(kUnseen);
      on_stack.push_back(true);
      component.push_back(l);
      frames.push_back({n, 0});
    };
    std::vector<NodeIndex> gather;
    auto finish = [&](uint32_t root) {
      size_t first = component.size();
      while (component[first - 1] != root) --first;
      --first;
      for (size_t k = first; k < component.size(); ++k) list_of[component[k]] = kPending;
      gather.clear();
      if (server_ != kNoNode) gather.push_back(server_);
      for (size_t k = first; k < component.size(); ++k) {
        const NodeIndex m = node_of[component[k]];
        if (notifier(m)) gather.push_back(m);
        for (const Reference& r : s_.references(m)) {
          if (!r.is_inverse || !ref_is(r.type, has_event_source_)) continue;
          const uint32_t above = list_of[local[r.target]];
          if (above == kPending) continue;  // the same component
          gather.insert(gather.end(), t_.list_nodes_.begin() + t_.list_begin_[above],
                        t_.list_nodes_.begin() + t_.list_begin_[above + 1]);
        }
      }
      std::sort(gather.begin(), gather.end());
      gather.erase(std::unique(gather.begin(), gather.end()), gather.end());
      const uint32_t list = intern_list(gather);
      for (size_t k = first; k < component.size(); ++k) {
        list_of[component[k]] = list;
        on_stack[component[k]] = false;
      }
      component.resize(first);
    };
    auto visit = [&](NodeIndex start) {
      discover(start);
      while (!frames.empty()) {
        Frame& f = frames.back();
        const uint32_t fl = local[f.node];
        const auto refs = s_.references(f.node);
        bool descended = false;
        while (f.next_ref < refs.size()) {
          const Reference& r = refs[f.next_ref++];
          if (!r.is_inverse || !ref_is(r.type, has_event_source_)) continue;
          const uint32_t pl = local[r.target];
          if (pl == kUnseen) {
            discover(r.target);  // invalidates f
            descended = true;
            break;
          }
          if (on_stack[pl]) low[fl] = std::min(low[fl], index[pl]);
        }
        if (descended) continue;
        if (low[fl] == index[fl]) finish(fl);
        frames.pop_back();
        if (!frames.empty()) {
          const uint32_t parent = local[frames.back().node];
          low[parent] = std::min(low[parent], low[fl]);
        }
      }
    };
    // Roots: the notifiers and every target of a HasEventSource reference.
    for (NodeIndex n = 0; n < n_nodes; ++n) {
      if (local[n] != kUnseen) continue;
      bool root = notifier(n);
      for (const Reference& r : s_.references(n)) {
        if (root) break;
        root = r.is_inverse && ref_is(r.type, has_event_source_);
      }
      if (root) visit(n);
    }
    for (uint32_t l = 0; l < node_of.size(); ++l) {
      if (list_of[l] != 0) t_.sources_.push_back({node_of[l], list_of[l]});
    }
    std::sort(t_.sources_.begin(), t_.sources_.end(),
              [](const Source& a, const Source& b) { return a.node < b.node; });
  }

  bool notifier(NodeIndex n) const noexcept {
    const NodeClass c = s_.node_class(n);
    return (c == NodeClass::Object || c == NodeClass::View) && (s_.record(n).event_notifier & 0x01) != 0;
  }

  static uint64_t list_hash(std::span<const NodeIndex> nodes) noexcept {
    uint64_t h = nodes.size();
    for (NodeIndex n : nodes) h = (h ^ n) * 0x9E3779B97F4A7C15ull;
    return h;
  }
  uint32_t intern_list(std::span<const NodeIndex> nodes) {
    const uint64_t h = list_hash(nodes);
    const auto [lo, hi] = lists_.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      const uint32_t l = it->second;
      if (std::equal(nodes.begin(), nodes.end(), t_.list_nodes_.begin() + t_.list_begin_[l],
                     t_.list_nodes_.begin() + t_.list_begin_[l + 1])) {
        return l;
      }
    }
    const auto l = static_cast<uint32_t>(t_.list_begin_.size() - 1);
    t_.list_nodes_.insert(t_.list_nodes_.end(), nodes.begin(), nodes.end());
    t_.list_begin_.push_back(static_cast<uint32_t>(t_.list_nodes_.size()));
    lists_.emplace(h, l);
    return l;
  }

  const NodeStore& s_;
  EventTypes& t_;
  int has_subtype_ = -1, has_component_ = -1, has_property_ = -1, has_modelling_rule_ = -1,
      has_event_source_ = -1;
  std::vector<EventTypeIdx> parents_;
  std::vector<Elem> path_;
  std::vector<NodeIndex> on_path_;
  std::vector<Declaration> own_;
  NodeIndex server_ = kNoNode;
  std::unordered_multimap<uint64_t, uint32_t> lists_;
};

EventTypes::BuildResult EventTypes::build(const NodeStore& s) {
  BuildResult result;
  std::shared_ptr<EventTypes> index(new EventTypes(s));
  Builder(s, *index).run(result.errors);
  if (result.errors.empty()) {
    index->elems_.shrink_to_fit();
    index->names_.shrink_to_fit();
    index->decls_.shrink_to_fit();
    index->list_nodes_.shrink_to_fit();
    result.index = std::move(index);
  }
  return result;
}

template <class Ns, class Name>
std::optional<FieldKey> EventTypes::lookup(size_t size, uint64_t hash, Ns ns, Name name) const noexcept {
  if (key_slots_.empty()) return std::nullopt;
  const size_t mask = key_slots_.size() - 1;
  for (size_t i = hash & mask; key_slots_[i] != 0; i = (i + 1) & mask) {
    const uint32_t key = key_slots_[i] - 1;
    if (key_hash_[key] != hash || key_begin_[key + 1] - key_begin_[key] != size) continue;
    bool same = true;
    for (size_t e = 0; e < size && same; ++e) {
      const PathElem& p = elems_[key_begin_[key] + e];
      same = p.ns == ns(e) && std::string_view(names_).substr(p.name_begin, p.name_size) == name(e);
    }
    if (same) return static_cast<FieldKey>(key);
  }
  return std::nullopt;
}

std::optional<FieldKey> EventTypes::field_key(std::span<const ua::QualifiedName> path) const noexcept {
  if (path.empty() || path.size() > kMaxFieldDepth) return std::nullopt;
  uint64_t h = 0;
  for (const ua::QualifiedName& q : path) h = hash_step(h, q.namespace_index, q.name.view());
  return lookup(
      path.size(), h, [&](size_t i) { return path[i].namespace_index; },
      [&](size_t i) { return path[i].name.view(); });
}

std::optional<FieldKey> EventTypes::field(EventTypeIdx type,
                                          std::span<const ua::QualifiedName> path) const noexcept {
  const auto key = field_key(path);
  if (!key || declaration(type, *key) == kNoNode) return std::nullopt;
  return key;
}

NodeIndex EventTypes::declaration(EventTypeIdx type, FieldKey field) const noexcept {
  if (type >= types_.size()) return kNoNode;
  const auto d = declarations(type);
  const auto it = std::lower_bound(d.begin(), d.end(), field,
                                   [](const Declaration& a, FieldKey k) { return a.field < k; });
  return it != d.end() && it->field == field ? it->node : kNoNode;
}

std::string EventTypes::field_path(FieldKey field) const {
  std::string s;
  if (field >= key_hash_.size()) return s;
  for (uint32_t e = key_begin_[field]; e < key_begin_[field + 1]; ++e) {
    if (!s.empty()) s += '/';
    if (elems_[e].ns != 0) s += std::to_string(elems_[e].ns) + ":";
    s.append(names_, elems_[e].name_begin, elems_[e].name_size);
  }
  return s;
}

std::optional<EventTypeIdx> EventTypes::event_type_of(NodeIndex n) const noexcept {
  const auto it = std::lower_bound(type_of_node_.begin(), type_of_node_.end(), n,
                                   [](const auto& a, NodeIndex k) { return a.first < k; });
  if (it == type_of_node_.end() || it->first != n) return std::nullopt;
  return it->second;
}

std::optional<EventTypeIdx> EventTypes::event_type(const ua::NodeId& id) const noexcept {
  const NodeIndex n = store_->find(id);
  return n == kNoNode ? std::nullopt : event_type_of(n);
}

const ua::NodeId& EventTypes::type_id(EventTypeIdx type) const noexcept {
  return store_->node_id(types_[type]);
}

std::optional<ua::BuiltinType> EventTypes::builtin_of_data_type(const ua::NodeId& id) const noexcept {
  const NodeIndex n = store_->find(id);
  const DataTypeAttributes* d = n == kNoNode ? nullptr : store_->data_type(n);
  if (!d) return std::nullopt;
  if (d->builtin != 0) return static_cast<ua::BuiltinType>(d->builtin);
  if (enumeration_ != kNoNode && store_->is_data_type_subtype(n, enumeration_)) return ua::BuiltinType::Int32;
  return ua::BuiltinType::Variant;
}

bool EventTypes::is_notifier(NodeIndex n) const noexcept {
  return std::binary_search(notifiers_.begin(), notifiers_.end(), n);
}

std::span<const NodeIndex> EventTypes::notifiers_of(NodeIndex source) const noexcept {
  const auto it = std::lower_bound(sources_.begin(), sources_.end(), source,
                                   [](const Source& a, NodeIndex k) { return a.node < k; });
  const uint32_t list = it != sources_.end() && it->node == source ? it->list : 0;
  return {list_nodes_.data() + list_begin_[list], list_begin_[list + 1] - list_begin_[list]};
}

size_t EventTypes::bytes() const noexcept {
  return types_.capacity() * sizeof(NodeIndex) + subtree_end_.capacity() * sizeof(EventTypeIdx) +
         type_of_node_.capacity() * sizeof(type_of_node_[0]) + elems_.capacity() * sizeof(PathElem) +
         key_begin_.capacity() * sizeof(uint32_t) + key_hash_.capacity() * sizeof(uint64_t) +
         key_slots_.capacity() * sizeof(uint32_t) + names_.capacity() +
         decls_.capacity() * sizeof(Declaration) + decl_begin_.capacity() * sizeof(uint32_t) +
         notifiers_.capacity() * sizeof(NodeIndex) + sources_.capacity() * sizeof(Source) +
         list_begin_.capacity() * sizeof(uint32_t) + list_nodes_.capacity() * sizeof(NodeIndex);
}

}  // namespace opcuad::addressspace
