#include "addressspace/node_store_builder.hpp"

#include <algorithm>
#include <tuple>

#include <functional>

#include "addressspace/event_types.hpp"
#include "addressspace/structure_codec.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::addressspace {

NodeStoreBuilder::NodeStoreBuilder(ValueStore& values, EpochReclaimer::Participant& p,
                                   const NodeStore* previous)
    : values_(values), participant_(p), previous_(previous), store_(std::make_unique<NodeStore>()) {
  string_slots_.assign(1024, 0);
}

NodeStoreBuilder::~NodeStoreBuilder() = default;

StringId NodeStoreBuilder::intern(std::string_view s) {
  auto& pool = store_->strings_;
  if ((string_count_ + 1) * 2 > string_slots_.size()) {
    std::vector<uint32_t> old = std::move(string_slots_);
    string_slots_.assign(old.size() * 2, 0);
    const size_t mask = string_slots_.size() - 1;
    for (uint32_t id : old) {
      if (id == 0) continue;
      size_t i = std::hash<std::string_view>{}(pool.view(id)) & mask;
      while (string_slots_[i] != 0) i = (i + 1) & mask;
      string_slots_[i] = id;
    }
  }
  const size_t mask = string_slots_.size() - 1;
  size_t i = std::hash<std::string_view>{}(s)&mask;
  for (; string_slots_[i] != 0; i = (i + 1) & mask) {
    if (pool.view(string_slots_[i]) == s) return string_slots_[i];
  }
  const StringId id = pool.append(s);
  string_slots_[i] = id;
  ++string_count_;
  return id;
}

NodeIndex NodeStoreBuilder::intern_node(const ua::NodeId& id) {
  NodeStore& s = *store_;
  NodeIndex n = s.index_.find(id, s.ids_);
  if (n != kNoNode) return n;
  n = static_cast<NodeIndex>(s.ids_.size());
  s.ids_.push_back(id);
  s.nodes_.emplace_back();
  s.index_.insert(id, n, s.ids_);
  return n;
}

bool NodeStoreBuilder::contains(const ua::NodeId& id) const {
  const NodeIndex n = store_->index_.find(id, store_->ids_);
  return n != kNoNode && store_->nodes_[n].node_class != NodeClass::Unspecified;
}

bool NodeStoreBuilder::add_node(const NodeSpec& spec) {
  NodeStore& s = *store_;
  const NodeIndex n = intern_node(spec.node_id);
  if (s.nodes_[n].node_class != NodeClass::Unspecified) return false;
  ++defined_;
  NodeRecord& r = s.nodes_[n];
  r.node_class = spec.node_class;
  r.browse_ns = spec.browse_name.namespace_index;
  r.browse_name = intern(spec.browse_name.name);
  r.display_name = intern(spec.display_name);
  r.description = intern(spec.description);
  r.write_mask = spec.write_mask;
  r.event_notifier = spec.event_notifier;
  uint8_t f = 0;
  if (spec.is_abstract) f |= flag::kIsAbstract;
  switch (spec.node_class) {
    case NodeClass::View:
      if (spec.contains_no_loops) f |= flag::kContainsNoLoops;
      break;
    case NodeClass::Method:
      if (spec.executable) f |= flag::kExecutable;
      if (spec.executable && spec.user_executable) f |= flag::kUserExecutable;
      break;
    case NodeClass::ReferenceType:
      if (spec.symmetric) f |= flag::kSymmetric;
      r.detail = static_cast<uint32_t>(s.reference_types_.size());
      s.reference_types_.push_back({n, intern(spec.inverse_name)});
      break;
    case NodeClass::DataType: {
      r.detail = static_cast<uint32_t>(s.data_types_.size());
      DataTypeAttributes d;
      d.node = n;
      if (spec.definition) {
        d.definition = static_cast<uint32_t>(s.definitions_.size());
        s.definitions_.push_back(*spec.definition);
      }
      s.data_types_.push_back(d);
      break;
    }
    case NodeClass::Variable:
    case NodeClass::VariableType: {
      if (spec.historizing) f |= flag::kHistorizing;
      r.detail = static_cast<uint32_t>(s.variables_.size());
      VariableAttributes v;
      v.data_type = intern_node(spec.data_type);
      if (spec.data_type.namespace_index() == 0 && spec.data_type.type() == ua::IdType::Numeric &&
          spec.data_type.numeric() >= 1 && spec.data_type.numeric() <= 25) {
        v.builtin = static_cast<uint8_t>(spec.data_type.numeric());
      }
      v.value_rank = spec.value_rank;
      v.access_level = spec.access_level;
      v.user_access_level = spec.user_access_level;
      v.access_level_ex = spec.access_level_ex;
      v.minimum_sampling_interval = spec.minimum_sampling_interval;
      v.dims_begin = static_cast<uint32_t>(s.dims_.size());
      v.dims_count = static_cast<uint16_t>(spec.array_dimensions.size());
      s.dims_.insert(s.dims_.end(), spec.array_dimensions.begin(), spec.array_dimensions.end());
      v.read_roles = spec.read_roles;
      v.write_roles = spec.write_roles;
      if (previous_) {
        v.cell = reusable_cell(spec);  // a reload keeps the live value
        if (v.cell && spec.replace_value && spec.value) {
          deferred_writes_.emplace_back(v.cell, *spec.value);
          ++values_reset_;
        } else if (!v.cell && previous_->find(spec.node_id) != kNoNode) {
          ++values_reset_;  // it existed with another type: a new cell with the initial value
        }
      }
      if (!v.cell) {
        // A reload first takes the spare an earlier reload left for this NodeId (ValueStore::orphan).
        if (previous_) v.cell = values_.adopt(spec.node_id);
        if (!v.cell) v.cell = values_.allocate(spec.node_id);
        if (v.cell && previous_) new_cells_.emplace_back(spec.node_id, v.cell);
        if (v.cell && (spec.value || spec.no_value || previous_)) {
          static const ua::DataValue kNoValue{.status = ua::status::BadNoValue};
          values_.write(*v.cell,
                        spec.value      ? *spec.value
                        : spec.no_value ? kNoValue
                                        : ua::DataValue{},
                        participant_);
        }
      }
      s.variables_.push_back(v);
      break;
    }
    default:
      break;
  }
  r.flags = f;
  return true;
}

void NodeStoreBuilder::add_reference(const ua::NodeId& source, const ua::NodeId& type,
                                     const ua::NodeId& target, bool forward) {
  const NodeIndex a = intern_node(source);
  const NodeIndex t = intern_node(type);
  const NodeIndex b = intern_node(target);
  refs_.push_back(forward ? PendingRef{a, t, b} : PendingRef{b, t, a});
}

bool NodeStoreBuilder::set_value(const ua::NodeId& node, const ua::DataValue& value) {
  const NodeIndex n = store_->index_.find(node, store_->ids_);
  if (n == kNoNode) return false;
  const VariableAttributes* v = store_->variable(n);
  if (!v || !v->cell) return false;
  if (!reused(v->cell, node)) values_.write(*v->cell, value, participant_);
  return true;
}

bool NodeStoreBuilder::set_roles(const ua::NodeId& node, uint8_t has_roles_bit, uint8_t read_roles,
                                 uint8_t write_roles) {
  const NodeIndex n = store_->index_.find(node, store_->ids_);
  if (n == kNoNode || store_->nodes_[n].node_class != NodeClass::Variable) return false;
  VariableAttributes& v = store_->variables_[store_->nodes_[n].detail];
  v.user_access_level |= has_roles_bit;
  v.read_roles = read_roles;
  v.write_roles = write_roles;
  return true;
}

bool NodeStoreBuilder::add_event_notifier(const ua::NodeId& node, uint8_t bits) {
  const NodeIndex n = store_->index_.find(node, store_->ids_);
  if (n == kNoNode) return false;
  NodeRecord& r = store_->nodes_[n];
  if (r.node_class != NodeClass::Object && r.node_class != NodeClass::View) return false;
  r.event_notifier |= bits;
  return true;
}

bool NodeStoreBuilder::add_flags(const ua::NodeId& node, uint8_t flags) {
  const NodeIndex n = store_->index_.find(node, store_->ids_);
  if (n == kNoNode) return false;
  store_->nodes_[n].flags |= flags;
  return true;
}

ValueCell* NodeStoreBuilder::reusable_cell(const NodeSpec& spec) const {
  const NodeIndex old = previous_->find(spec.node_id);
  const VariableAttributes* ov = old == kNoNode ? nullptr : previous_->variable(old);
  if (!ov) return nullptr;
  const bool same_type = ov->data_type != kNoNode && previous_->node_id(ov->data_type) == spec.data_type;
  const auto dims = previous_->array_dimensions(*ov);
  const bool same_shape =
      ov->value_rank == spec.value_rank &&
      std::equal(dims.begin(), dims.end(), spec.array_dimensions.begin(), spec.array_dimensions.end());
  return same_type && same_shape ? ov->cell : nullptr;
}

void NodeStoreBuilder::return_new_cells() {
  for (auto& [id, cell] : new_cells_) values_.orphan(id, cell);
  new_cells_.clear();
}

bool NodeStoreBuilder::reused(const ValueCell* cell, const ua::NodeId& id) const {
  if (!previous_) return false;
  const NodeIndex old = previous_->find(id);
  const VariableAttributes* ov = old == kNoNode ? nullptr : previous_->variable(old);
  return ov && ov->cell == cell;
}

bool NodeStoreBuilder::set_definition(const ua::NodeId& data_type, ua::ExtensionObject definition) {
  NodeStore& s = *store_;
  const NodeIndex n = s.index_.find(data_type, s.ids_);
  if (n == kNoNode || s.nodes_[n].node_class != NodeClass::DataType) return false;
  DataTypeAttributes& d = s.data_types_[s.nodes_[n].detail];
  if (d.definition == kNoNode) {
    d.definition = static_cast<uint32_t>(s.definitions_.size());
    s.definitions_.push_back(std::move(definition));
  } else {
    s.definitions_[d.definition] = std::move(definition);
  }
  return true;
}

NodeStoreBuilder::Result NodeStoreBuilder::build() {
  Result result;
  NodeStore& s = *store_;
  for (NodeIndex n = 0; n < s.nodes_.size(); ++n) {
    if (s.nodes_[n].node_class == NodeClass::Unspecified) {
      result.errors.push_back("node " + s.ids_[n].to_string() + " is referenced but not defined");
    }
  }
  for (const VariableAttributes& v : s.variables_) {
    if (v.data_type != kNoNode && s.nodes_[v.data_type].node_class != NodeClass::DataType &&
        s.nodes_[v.data_type].node_class != NodeClass::Unspecified) {
      result.errors.push_back("DataType " + s.ids_[v.data_type].to_string() + " is not a DataType node");
    }
  }
  // A reference may be declared at both of its ends (Opc.Ua.NodeSet2.xml lists each one on its source
  // and, as IsForward="false", on its target): keep the first declaration of each (source, type, target),
  // in declaration order, so Browse never returns a reference twice.
  {
    std::vector<uint32_t> order(refs_.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    auto key = [&](uint32_t i) { return std::tuple(refs_[i].source, refs_[i].type, refs_[i].target, i); };
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
    std::vector<bool> duplicate(refs_.size(), false);
    for (size_t k = 1; k < order.size(); ++k) {
      const PendingRef& prev = refs_[order[k - 1]];
      const PendingRef& cur = refs_[order[k]];
      if (prev.source == cur.source && prev.type == cur.type && prev.target == cur.target)
        duplicate[order[k]] = true;
    }
    size_t kept = 0;
    for (size_t i = 0; i < refs_.size(); ++i) {
      if (!duplicate[i]) refs_[kept++] = refs_[i];
    }
    refs_.resize(kept);
  }
  // References: each one is stored at its source (forward) and at its target (inverse).
  std::vector<uint32_t> count(s.nodes_.size() + 1, 0);
  for (const PendingRef& r : refs_) {
    if (s.nodes_[r.type].node_class != NodeClass::ReferenceType) {
      if (s.nodes_[r.type].node_class != NodeClass::Unspecified) {
        result.errors.push_back("reference from " + s.ids_[r.source].to_string() + " has type " +
                                s.ids_[r.type].to_string() + ", which is not a ReferenceType");
      }
      continue;
    }
    ++count[r.source];
    ++count[r.target];
  }
  if (!result.errors.empty()) return result;

  uint32_t at = 0;
  for (NodeIndex n = 0; n < s.nodes_.size(); ++n) {
    s.nodes_[n].refs_begin = at;
    s.nodes_[n].refs_end = at;
    at += count[n];
  }
  s.refs_.resize(at);
  for (const PendingRef& r : refs_) {
    const auto t = static_cast<uint16_t>(s.nodes_[r.type].detail);
    s.refs_[s.nodes_[r.source].refs_end++] = Reference{r.target, t, false};
    s.refs_[s.nodes_[r.target].refs_end++] = Reference{r.source, t, true};
  }
  close_hierarchies(result.errors);
  // Derived flags, once the references and the hierarchy are in place (node.hpp, flag::kHasEURange).
  for (NodeIndex n = 0; n < s.nodes_.size(); ++n) {
    if (s.nodes_[n].node_class == NodeClass::Variable && s.child(n, 0, "EURange") != kNoNode) {
      s.nodes_[n].flags |= flag::kHasEURange;
    }
  }
  refs_.clear();
  refs_.shrink_to_fit();
  string_slots_.clear();
  string_slots_.shrink_to_fit();
  s.ids_.shrink_to_fit();
  s.nodes_.shrink_to_fit();
  s.variables_.shrink_to_fit();
  s.dims_.shrink_to_fit();
  s.strings_.shrink_to_fit();
  if (result.errors.empty()) {
    // The event types, their fields and the notifier lists (event_types.hpp), from the final references.
    EventTypes::BuildResult events = EventTypes::build(s);
    for (std::string& e : events.errors) result.errors.push_back(std::move(e));
    s.event_types_ = std::move(events.index);
  }
  if (result.errors.empty()) {
    // The alarm conditions (condition_specs.hpp), and the flag on the variables they watch.
    ConditionSpecs::BuildResult specs =
        ConditionSpecs::build(s, s.event_types_.get(), std::move(conditions_), previous_);
    for (std::string& e : specs.errors) result.errors.push_back(std::move(e));
    s.condition_specs_ = std::move(specs.specs);
    if (s.condition_specs_) {
      for (const ConditionSpec& c : s.condition_specs_->all()) {
        s.nodes_[c.input].flags |= flag::kHasAlarm;
        if (c.reference != kNoNode) s.nodes_[c.reference].flags |= flag::kHasAlarm;
      }
    }
  }
  conditions_.clear();
  if (result.errors.empty()) {
    s.codecs_ = std::make_shared<const StructureCodecs>(s);  // the definitions and hierarchy are final
    for (auto& [cell, value] : deferred_writes_) values_.write(*cell, value, participant_);
    result.values_reset = values_reset_;
    result.store = std::move(store_);
  }
  deferred_writes_.clear();
  values_reset_ = 0;
  store_ = std::make_unique<NodeStore>();
  return result;
}

void NodeStoreBuilder::close_hierarchies(std::vector<std::string>& errors) {
  NodeStore& s = *store_;
  const NodeIndex has_subtype = s.find(ua::NodeId(0, ua::id::HasSubtype));
  const NodeIndex hierarchical = s.find(ua::NodeId(0, ua::id::HierarchicalReferences));
  if (has_subtype != kNoNode && s.nodes_[has_subtype].node_class == NodeClass::ReferenceType) {
    s.has_subtype_ = static_cast<uint16_t>(s.nodes_[has_subtype].detail);
  }
  if (hierarchical != kNoNode && s.nodes_[hierarchical].node_class == NodeClass::ReferenceType) {
    s.hierarchical_ = static_cast<uint16_t>(s.nodes_[hierarchical].detail);
  }
  // Supertype of each node by HasSubtype (Part 3 §5.3.3.3 and §5.8.3: single inheritance).
  std::vector<NodeIndex> super(s.nodes_.size(), kNoNode);
  if (has_subtype != kNoNode) {
    for (NodeIndex n = 0; n < s.nodes_.size(); ++n) {
      for (const Reference& r : s.references(n)) {
        if (r.is_inverse && r.type == s.has_subtype_) super[n] = r.target;
      }
    }
  }
  auto close = [&](SubtypeMatrix& m, size_t count, auto node_of, NodeClass cls) {
    m.reset(count);
    for (size_t i = 0; i < count; ++i) {
      NodeIndex n = node_of(i);
      for (size_t depth = 0; n != kNoNode && depth <= count; ++depth) {
        if (s.nodes_[n].node_class != cls) break;
        m.set(i, s.nodes_[n].detail);
        n = super[n];
        if (depth == count) errors.push_back("HasSubtype loop at " + s.ids_[node_of(i)].to_string());
      }
    }
  };
  close(
      s.ref_subtypes_, s.reference_types_.size(), [&](size_t i) { return s.reference_types_[i].node; },
      NodeClass::ReferenceType);
  close(
      s.data_type_subtypes_, s.data_types_.size(), [&](size_t i) { return s.data_types_[i].node; },
      NodeClass::DataType);

  // The built-in type a DataType's values encode as (Part 3 §8.1 / Part 6 §5.1.2): the nearest ns=0
  // built-in ancestor; Int32 for enumerations; 0 for the abstract roots that accept any subtype.
  for (DataTypeAttributes& d : s.data_types_) {
    uint8_t builtin = 0;
    for (NodeIndex n = d.node; n != kNoNode; n = super[n]) {
      const ua::NodeId& id = s.ids_[n];
      if (id.namespace_index() != 0 || id.type() != ua::IdType::Numeric) continue;
      const uint32_t v = id.numeric();
      if (v == ua::id::Enumeration) {
        builtin = n == d.node ? 0 : static_cast<uint8_t>(ua::BuiltinType::Int32);
        break;
      }
      if (v == ua::id::BaseDataType || v == ua::id::Number || v == ua::id::Integer || v == ua::id::UInteger) {
        break;
      }
      if (v >= 1 && v <= ua::kMaxBuiltinType) {
        builtin = static_cast<uint8_t>(v);
        break;
      }
    }
    d.builtin = builtin;
  }
}

}  // namespace opcuad::addressspace
