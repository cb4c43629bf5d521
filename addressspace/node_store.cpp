#include "addressspace/node_store.hpp"

#include "addressspace/event_types.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::addressspace {

namespace {
uint32_t mix(size_t h) noexcept {
  uint64_t x = static_cast<uint64_t>(h) * 0x9E3779B97F4A7C15ull;
  return static_cast<uint32_t>(x >> 32) | 1u;  // never 0, so a zero hash marks nothing special
}
}  // namespace

NodeIndex NodeIdTable::find(const ua::NodeId& id, std::span<const ua::NodeId> ids) const noexcept {
  if (slots_.empty()) return kNoNode;
  const uint32_t h = mix(id.hash());
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.index == kNoNode) return kNoNode;
    if (s.hash == h && ids[s.index] == id) return s.index;
  }
}

void NodeIdTable::insert(const ua::NodeId& id, NodeIndex index, std::span<const ua::NodeId> ids) {
  if ((used_ + 1) * 2 > slots_.size()) grow(ids);
  const uint32_t h = mix(id.hash());
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  while (slots_[i].index != kNoNode) i = (i + 1) & mask;
  slots_[i] = Slot{index, h};
  ++used_;
}

void NodeIdTable::grow(std::span<const ua::NodeId> ids) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.index == kNoNode) continue;
    size_t i = s.hash & mask;
    while (slots_[i].index != kNoNode) i = (i + 1) & mask;
    slots_[i] = s;
  }
  (void)ids;
}

ua::QualifiedName NodeStore::browse_name(NodeIndex n) const {
  const QualifiedNameView v = browse_name_view(n);
  ua::QualifiedName q;
  q.namespace_index = v.namespace_index;
  if (!v.name.null) q.name = ua::String(v.name.text);
  return q;
}

ua::LocalizedText NodeStore::text(LocalizedTextRef t) const {
  const LocalizedTextView v = text_view(t);
  ua::LocalizedText l;
  if (!v.locale.null) l.locale = ua::String(v.locale.text);
  if (!v.text.null) l.text = ua::String(v.text.text);
  return l;
}

const VariableAttributes* NodeStore::variable(NodeIndex n) const noexcept {
  const NodeRecord& r = nodes_[n];
  if (r.node_class != NodeClass::Variable && r.node_class != NodeClass::VariableType) return nullptr;
  return &variables_[r.detail];
}

const ReferenceTypeAttributes* NodeStore::reference_type(NodeIndex n) const noexcept {
  const NodeRecord& r = nodes_[n];
  return r.node_class == NodeClass::ReferenceType ? &reference_types_[r.detail] : nullptr;
}

const DataTypeAttributes* NodeStore::data_type(NodeIndex n) const noexcept {
  const NodeRecord& r = nodes_[n];
  return r.node_class == NodeClass::DataType ? &data_types_[r.detail] : nullptr;
}

const ua::ExtensionObject* NodeStore::data_type_definition(NodeIndex n) const noexcept {
  const DataTypeAttributes* d = data_type(n);
  return d && d->definition != kNoNode ? &definitions_[d->definition] : nullptr;
}

int NodeStore::reference_type_index(NodeIndex n) const noexcept {
  if (n >= nodes_.size() || nodes_[n].node_class != NodeClass::ReferenceType) return -1;
  return static_cast<int>(nodes_[n].detail);
}

bool NodeStore::matches(const Reference& r, int base, bool include_subtypes,
                        BrowseDirection dir) const noexcept {
  if (dir == BrowseDirection::Forward && r.is_inverse) return false;
  if (dir == BrowseDirection::Inverse && !r.is_inverse) return false;
  if (base < 0) return true;
  const auto b = static_cast<uint16_t>(base);
  return include_subtypes ? ref_subtypes_.test(r.type, b) : r.type == b;
}

bool NodeStore::is_data_type_subtype(NodeIndex type, NodeIndex base) const noexcept {
  if (type >= nodes_.size() || base >= nodes_.size()) return false;
  const NodeRecord& a = nodes_[type];
  const NodeRecord& b = nodes_[base];
  if (a.node_class != NodeClass::DataType || b.node_class != NodeClass::DataType) return false;
  return data_type_subtypes_.test(a.detail, b.detail);
}

bool NodeStore::is_type_subtype(NodeIndex type, NodeIndex base) const noexcept {
  // Single inheritance (Part 3 §6.3.3): follow the inverse HasSubtype chain.
  for (size_t guard = 0; type != kNoNode && guard < nodes_.size(); ++guard) {
    if (type == base) return true;
    NodeIndex up = kNoNode;
    for (const Reference& r : references(type)) {
      if (r.is_inverse && r.type == has_subtype_) {
        up = r.target;
        break;
      }
    }
    type = up;
  }
  return false;
}

NodeIndex NodeStore::forward_target(NodeIndex n, NodeIndex ref_type_node) const noexcept {
  const int t = reference_type_index(ref_type_node);
  if (t < 0) return kNoNode;
  for (const Reference& r : references(n)) {
    if (!r.is_inverse && r.type == t) return r.target;
  }
  return kNoNode;
}

NodeIndex NodeStore::parent(NodeIndex n) const noexcept {
  for (const Reference& r : references(n)) {
    if (r.is_inverse && r.type != has_subtype_ && ref_subtypes_.test(r.type, hierarchical_)) return r.target;
  }
  return kNoNode;
}

NodeIndex NodeStore::child(NodeIndex n, uint16_t ns, std::string_view name) const noexcept {
  for (const Reference& r : references(n)) {
    if (r.is_inverse || !ref_subtypes_.test(r.type, hierarchical_)) continue;
    const NodeRecord& c = nodes_[r.target];
    if (c.browse_ns == ns && strings_.view(c.browse_name) == name) return r.target;
  }
  return kNoNode;
}

NodeStore::Footprint NodeStore::footprint() const noexcept {
  Footprint f;
  f.node_ids = ids_.capacity() * sizeof(ua::NodeId);
  for (const ua::NodeId& id : ids_) {
    if (id.string().size() > 15) f.node_ids += id.string().size() + 1;  // beyond the small-string buffer
  }
  f.records = nodes_.capacity() * sizeof(NodeRecord);
  f.variables = variables_.capacity() * sizeof(VariableAttributes) + dims_.capacity() * sizeof(uint32_t);
  f.references = refs_.capacity() * sizeof(Reference);
  f.strings = strings_.bytes();
  f.index = index_.bytes();
  f.other = reference_types_.capacity() * sizeof(ReferenceTypeAttributes) +
            data_types_.capacity() * sizeof(DataTypeAttributes) + ref_subtypes_.bytes() +
            data_type_subtypes_.bytes() + definitions_.capacity() * sizeof(ua::ExtensionObject) +
            (event_types_ ? event_types_->bytes() : 0);
  return f;
}

}  // namespace opcuad::addressspace
