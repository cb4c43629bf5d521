// The index of the NodeSet2 files' nodes and references that every step of resolve_nodesets() shares
// (nodeset_document.hpp, ImportedIndex).
#include <bit>

#include "config/config.hpp"
#include "config/nodeset_document.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

const std::vector<uint32_t>& ImportedSpec::dimensions() const {
  static const std::vector<uint32_t> kNone;
  return array_dimensions ? *array_dimensions : kNone;
}

void ImportedSpec::to_node_spec(addressspace::NodeSpec& into) const {
  static const ua::LocalizedText kNone;
  into.node_id = node_id;
  into.node_class = node_class;
  into.browse_name = browse_name;
  into.display_name = display_name;
  into.description = description ? *description : kNone;
  into.write_mask = write_mask;
  into.event_notifier = event_notifier;
  into.contains_no_loops = contains_no_loops;
  into.is_abstract = is_abstract;
  into.symmetric = symmetric;
  into.inverse_name = inverse_name ? *inverse_name : kNone;
  into.executable = executable;
  into.user_executable = user_executable;
  into.data_type = data_type;
  into.value_rank = value_rank;
  if (array_dimensions) {
    into.array_dimensions = *array_dimensions;
  } else {
    into.array_dimensions.clear();
  }
  into.access_level = access_level;
  into.user_access_level = user_access_level;
  into.access_level_ex = access_level_ex;
  into.minimum_sampling_interval = minimum_sampling_interval;
  into.historizing = historizing;
  into.read_roles = into.write_roles = 0xFF;
  into.value = value;
  into.replace_value = false;
  into.no_value = no_value;
  if (definition) {
    into.definition = *definition;
  } else {
    into.definition.reset();
  }
}

uint32_t ImportedModels::intern(const ua::NodeId& id) {
  if (3 * (ids.size() + 1) > 2 * id_slots.size()) {
    std::vector<IdSlot> slots(std::max<size_t>(2 * id_slots.size(), 1024));
    const size_t mask = slots.size() - 1;
    for (const IdSlot& slot : id_slots) {
      if (slot.index == 0) continue;
      size_t s = ids[slot.index - 1].hash() & mask;
      while (slots[s].index != 0) s = (s + 1) & mask;
      slots[s] = slot;
    }
    id_slots.swap(slots);
  }
  const bool numeric = id.type() == ua::IdType::Numeric;
  const size_t hash = id.hash();
  const uint64_t key = numeric ? uint64_t{id.namespace_index()} << 32 | id.numeric() : uint64_t{hash};
  const size_t mask = id_slots.size() - 1;
  for (size_t s = hash & mask;; s = (s + 1) & mask) {
    IdSlot& slot = id_slots[s];
    if (slot.index == 0) {
      ids.push_back(id);
      slot = {key, static_cast<uint32_t>(ids.size()), numeric};
      return slot.index - 1;
    }
    if (slot.key != key || slot.numeric != numeric) continue;
    if (numeric || ids[slot.index - 1] == id) return slot.index - 1;
  }
}

void ImportedModels::add_reference(const ua::NodeId& source, const ua::NodeId& type, const ua::NodeId& target,
                                   uint32_t file, uint32_t line) {
  references.push_back({intern(source), intern(type), intern(target), file, line});
}

ImportedIndex::ImportedIndex(ImportedModels& m) : m_(m) {
  // Room for the nodes already there and for those the steps add (the capacity the loader reserved).
  const size_t room = std::max(m.nodes.capacity(), m.nodes.size());
  slots_.resize(std::bit_ceil(std::max<size_t>(room * 3 / 2, 16)));
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const uint32_t first = insert(static_cast<uint32_t>(i));
    if (first != i) duplicates_.emplace_back(static_cast<uint32_t>(i), first);
  }
  for (size_t i = 0; i < m.references.size(); ++i) index_reference(static_cast<uint32_t>(i));
}

ImportedIndex::Slot ImportedIndex::slot_of(const ua::NodeId& id, uint32_t node) {
  if (id.type() == ua::IdType::Numeric)
    return {uint64_t{id.namespace_index()} << 32 | id.numeric(), node + 1, 1};
  return {id.hash(), node + 1, 0};
}

uint32_t ImportedIndex::find(const ua::NodeId& id) const {
  const Slot want = slot_of(id, 0);
  const size_t mask = slots_.size() - 1;
  for (size_t s = id.hash() & mask;; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.node == 0) return kNone;
    if (slot.key != want.key || slot.numeric != want.numeric) continue;
    if (slot.numeric || m_.nodes[slot.node - 1].spec.node_id == id) return slot.node - 1;
  }
}

// Keeps the first node of a NodeId: a second one is an error resolve_nodesets() reports.
uint32_t ImportedIndex::insert(uint32_t node) {
  if (3 * (used_ + 1) > 2 * slots_.size()) grow();
  const ua::NodeId& id = m_.nodes[node].spec.node_id;
  const Slot add = slot_of(id, node);
  const size_t mask = slots_.size() - 1;
  for (size_t s = id.hash() & mask;; s = (s + 1) & mask) {
    Slot& slot = slots_[s];
    if (slot.node == 0) {
      slot = add;
      ++used_;
      return node;
    }
    if (slot.key == add.key && slot.numeric == add.numeric &&
        (slot.numeric || m_.nodes[slot.node - 1].spec.node_id == id))
      return slot.node - 1;
  }
}

void ImportedIndex::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.node == 0) continue;
    size_t s = m_.nodes[slot.node - 1].spec.node_id.hash() & mask;
    while (slots_[s].node != 0) s = (s + 1) & mask;
    slots_[s] = slot;
  }
}

void ImportedIndex::index_reference(uint32_t i) {
  const ImportedReference& ref = m_.references[i];
  struct {
    const ua::NodeId &source, &type, &target;
  } r{m_.id(ref.source), m_.id(ref.type), m_.id(ref.target)};
  const ua::NodeId namespaces(0, ua::id::Server_Namespaces),
      opc_binary(0, ua::id::OPCBinarySchema_TypeSystem);
  if (r.source == namespaces || r.target == namespaces || r.source == opc_binary || r.target == opc_binary)
    marked_.push_back(i);
  if (r.type.namespace_index() != 0 || r.type.type() != ua::IdType::Numeric) return;
  switch (r.type.numeric()) {
    case ua::id::HasSubtype:
      supertype_.emplace(r.target, r.source);
      break;
    case ua::id::HasEncoding:
      encodings_[r.source].push_back(r.target);
      encoding_of_.emplace(r.target, r.source);
      break;
    case ua::id::HasProperty:
      has_property_.push_back(r.source.hash() >> 32 << 32 | i);
      break;
    case ua::id::HasDescription:
      if (marked_.empty() || marked_.back() != i) marked_.push_back(i);
      break;
    case ua::id::HasTypeDefinition:
      if ((r.target.is_ns0(ua::id::NamespaceMetadataType) ||
           r.target.is_ns0(ua::id::DataTypeDictionaryType)) &&
          (marked_.empty() || marked_.back() != i))
        marked_.push_back(i);
      break;
    default:
      break;
  }
}

const ua::NodeId* ImportedIndex::supertype(const ua::NodeId& type) const {
  const auto it = supertype_.find(type);
  return it == supertype_.end() ? nullptr : &it->second;
}

const std::vector<ua::NodeId>* ImportedIndex::encodings(const ua::NodeId& type) const {
  const auto it = encodings_.find(type);
  return it == encodings_.end() ? nullptr : &it->second;
}

const ua::NodeId* ImportedIndex::data_type_of_encoding(const ua::NodeId& encoding) const {
  const auto it = encoding_of_.find(encoding);
  return it == encoding_of_.end() ? nullptr : &it->second;
}

std::vector<ua::NodeId> ImportedIndex::properties(const ua::NodeId& node) const {
  std::vector<ua::NodeId> out;
  const uint64_t tag = node.hash() >> 32 << 32;
  for (const uint64_t p : has_property_) {
    if ((p >> 32 << 32) != tag) continue;
    const ImportedReference& r = m_.references[static_cast<uint32_t>(p)];
    if (m_.id(r.source) == node) out.push_back(m_.id(r.target));
  }
  return out;
}

void ImportedIndex::add_node(ImportedNode n) {
  m_.nodes.push_back(std::move(n));
  insert(static_cast<uint32_t>(m_.nodes.size() - 1));
}

void ImportedIndex::add_reference(const CreatedReference& r) {
  m_.add_reference(r.source, r.type, r.target, r.file, r.line);
  index_reference(static_cast<uint32_t>(m_.references.size() - 1));
}

ImportedNode created_variable(ua::NodeId id, ua::QualifiedName browse_name, uint32_t data_type,
                              int32_t value_rank, ua::Variant value, uint32_t file, uint32_t line) {
  ImportedNode n;
  n.file = file;
  n.line = line;
  n.spec.node_id = std::move(id);
  n.spec.node_class = addressspace::NodeClass::Variable;
  n.spec.display_name = ua::LocalizedText{ua::String(), browse_name.name};
  n.spec.browse_name = std::move(browse_name);
  n.spec.data_type = ua::NodeId(0, data_type);
  n.spec.value_rank = value_rank;
  ua::DataValue dv;
  dv.value = std::move(value);
  dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
  n.spec.value = std::move(dv);
  return n;
}

}  // namespace opcuad::config
