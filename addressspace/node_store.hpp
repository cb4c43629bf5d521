#pragma once
// NodeStore: the immutable structure of an address space (every attribute but Value, and references).
//
// Built once by a NodeStoreBuilder, then read by every shard without synchronisation: nothing in it
// changes after build(). A structural change builds a new store and publishes it (address_space.hpp);
// the old store is freed once every shard has passed a quiescent point (epoch.hpp).
//
// Layout (see node.hpp): parallel arrays indexed by NodeIndex (NodeIds, NodeRecords), per-class side
// tables, one reference array in which each node's references are contiguous, one string pool, and an
// open-addressing NodeId -> NodeIndex table. The ReferenceType and DataType hierarchies are closed into
// bit matrices, so a subtype test is one bit lookup.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "addressspace/node.hpp"
#include "ua/encoder.hpp"
#include "ua/extension_object.hpp"
#include "ua/node_id.hpp"
#include "ua/text.hpp"

namespace opcuad::addressspace {

class StructureCodecs;  // structure_codec.hpp
class EventTypes;       // event_types.hpp
class ConditionSpecs;   // condition_specs.hpp

// Interned byte strings; id 0 is the null string.
class StringPool {
 public:
  StringPool() : offsets_{0, 0} {}
  std::string_view view(StringId id) const noexcept {
    return {chars_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]};
  }
  StringId append(std::string_view s) {
    chars_.append(s);
    offsets_.push_back(static_cast<uint32_t>(chars_.size()));
    return static_cast<StringId>(offsets_.size() - 2);
  }
  size_t size() const noexcept { return offsets_.size() - 1; }
  size_t bytes() const noexcept { return chars_.capacity() + offsets_.capacity() * sizeof(uint32_t); }
  void shrink_to_fit() {
    chars_.shrink_to_fit();
    offsets_.shrink_to_fit();
  }

 private:
  std::string chars_;
  std::vector<uint32_t> offsets_;  // string i is chars_[offsets_[i], offsets_[i+1])
};

// A square bit matrix: bit (a, b) set when a is b or a subtype of b.
class SubtypeMatrix {
 public:
  void reset(size_t n) {
    n_ = n;
    words_per_row_ = (n + 63) / 64;
    bits_.assign(n * words_per_row_, 0);
  }
  void set(size_t a, size_t b) noexcept { bits_[a * words_per_row_ + b / 64] |= uint64_t{1} << (b % 64); }
  bool test(size_t a, size_t b) const noexcept {
    return a < n_ && b < n_ && ((bits_[a * words_per_row_ + b / 64] >> (b % 64)) & 1) != 0;
  }
  size_t bytes() const noexcept { return bits_.capacity() * sizeof(uint64_t); }

 private:
  size_t n_ = 0;
  size_t words_per_row_ = 0;
  std::vector<uint64_t> bits_;
};

// NodeId -> NodeIndex, open addressing with linear probing; a slot keeps 32 bits of the hash so most
// mismatches are rejected without comparing NodeIds.
class NodeIdTable {
 public:
  NodeIndex find(const ua::NodeId& id, std::span<const ua::NodeId> ids) const noexcept;
  // REQUIRES: id is not in the table yet; ids[index] == id.
  void insert(const ua::NodeId& id, NodeIndex index, std::span<const ua::NodeId> ids);
  size_t bytes() const noexcept { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    NodeIndex index = kNoNode;
    uint32_t hash = 0;
  };
  void grow(std::span<const ua::NodeId> ids);
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

// Names and texts seen in place in a store's string pool, valid as long as the store: what a service
// encodes without copying a string (Browse: no allocation per reference). `null` keeps a null String
// apart from an empty one, as ua::String does.
struct PoolString {
  std::string_view text;
  bool null = true;
};
struct QualifiedNameView {
  uint16_t namespace_index = 0;
  PoolString name;
};
struct LocalizedTextView {
  PoolString locale;
  PoolString text;
};

// The binary encodings of Part 6 §5.2.2.13 / .14, byte for byte what ua::encode writes for the owning
// ua::QualifiedName / ua::LocalizedText of the same value.
inline void encode(ua::Encoder& e, const QualifiedNameView& v) {
  e.write_u16(v.namespace_index);
  e.write_bytes(v.name.null, v.name.text);
}
inline void encode(ua::Encoder& e, const LocalizedTextView& v) {
  e.write_u8((v.locale.null ? 0 : 0x01) | (v.text.null ? 0 : 0x02));
  if (!v.locale.null) e.write_bytes(false, v.locale.text);
  if (!v.text.null) e.write_bytes(false, v.text.text);
}

class NodeStore {
 public:
  size_t size() const noexcept { return ids_.size(); }
  // Which publication of its AddressSpace this store is (1, 2, ...; 0 before it is published). Unlike
  // its address, which a later store may get once this one is freed, a generation is never reused, so
  // whoever remembers one (a browse continuation point, a shard) can tell a new store from the old one.
  uint64_t generation() const noexcept { return generation_; }
  NodeIndex find(const ua::NodeId& id) const noexcept { return index_.find(id, ids_); }
  // The binary codecs of this store's structures (structure_codec.hpp), built with it by
  // NodeStoreBuilder::build(), so a reloaded store brings its own; nullptr for a store not built there.
  const StructureCodecs* structure_codecs() const noexcept { return codecs_.get(); }
  // The index of this store's event types, their fields and its notifiers (event_types.hpp), built with
  // it by NodeStoreBuilder::build() like the codecs; nullptr for a store not built there.
  const EventTypes* event_types() const noexcept { return event_types_.get(); }
  // The specifications of this store's alarm conditions (condition_specs.hpp), built with it like the
  // event types; nullptr for a store not built by NodeStoreBuilder::build().
  const ConditionSpecs* condition_specs() const noexcept { return condition_specs_.get(); }

  // Attributes. REQUIRES: n < size(), and a node of the right class for the class-specific ones.
  const ua::NodeId& node_id(NodeIndex n) const noexcept { return ids_[n]; }
  const NodeRecord& record(NodeIndex n) const noexcept { return nodes_[n]; }
  NodeClass node_class(NodeIndex n) const noexcept { return nodes_[n].node_class; }
  std::string_view string(StringId id) const noexcept { return strings_.view(id); }
  PoolString pool_string(StringId id) const noexcept {
    return id == kNullString ? PoolString{} : PoolString{strings_.view(id), false};
  }
  // Views (no copy) and owning copies of the names and texts.
  QualifiedNameView browse_name_view(NodeIndex n) const noexcept {
    return {nodes_[n].browse_ns, pool_string(nodes_[n].browse_name)};
  }
  LocalizedTextView text_view(LocalizedTextRef t) const noexcept {
    return {pool_string(t.locale), pool_string(t.text)};
  }
  LocalizedTextView display_name_view(NodeIndex n) const noexcept {
    return text_view(nodes_[n].display_name);
  }
  ua::QualifiedName browse_name(NodeIndex n) const;
  ua::LocalizedText display_name(NodeIndex n) const { return text(nodes_[n].display_name); }
  ua::LocalizedText description(NodeIndex n) const { return text(nodes_[n].description); }
  ua::LocalizedText text(LocalizedTextRef t) const;
  bool has_flag(NodeIndex n, uint8_t f) const noexcept { return (nodes_[n].flags & f) != 0; }

  // Variable / VariableType; nullptr for other classes.
  const VariableAttributes* variable(NodeIndex n) const noexcept;
  // REQUIRES: node_class(n) is Variable or VariableType. Inline, for the Write path that has checked it.
  const VariableAttributes* variable_of(NodeIndex n) const noexcept { return &variables_[nodes_[n].detail]; }
  std::span<const uint32_t> array_dimensions(const VariableAttributes& v) const noexcept {
    return {dims_.data() + v.dims_begin, v.dims_count};
  }
  // ReferenceType inverse name; DataType definition (an ExtensionObject holding a StructureDefinition or
  // EnumDefinition, or nullptr).
  const ReferenceTypeAttributes* reference_type(NodeIndex n) const noexcept;
  const DataTypeAttributes* data_type(NodeIndex n) const noexcept;
  const ua::ExtensionObject* data_type_definition(NodeIndex n) const noexcept;

  // References of a node, both directions.
  std::span<const Reference> references(NodeIndex n) const noexcept {
    return {refs_.data() + nodes_[n].refs_begin, nodes_[n].refs_end - nodes_[n].refs_begin};
  }
  // Dense ReferenceType index of a ReferenceType node, or -1.
  int reference_type_index(NodeIndex n) const noexcept;
  NodeIndex reference_type_node(uint16_t type) const noexcept { return reference_types_[type].node; }
  // O(1): is ReferenceType `type` (dense index) `base` or a subtype of it?
  bool is_reference_subtype(uint16_t type, uint16_t base) const noexcept {
    return ref_subtypes_.test(type, base);
  }
  // Browse filter (Part 4 §5.8.2): reference type `base` (dense index; -1 = any), subtypes or not.
  bool matches(const Reference& r, int base, bool include_subtypes, BrowseDirection dir) const noexcept;

  // O(1): is DataType node `type` the DataType node `base` or a subtype of it? False for non-DataTypes.
  bool is_data_type_subtype(NodeIndex type, NodeIndex base) const noexcept;
  // Is `type` an ObjectType/VariableType/DataType/ReferenceType that is `base` or reaches it by HasSubtype?
  // (walks the hierarchy; for validation, not for the data path)
  bool is_type_subtype(NodeIndex type, NodeIndex base) const noexcept;

  // First target of a forward reference of exactly this type (e.g. HasTypeDefinition), or kNoNode.
  NodeIndex forward_target(NodeIndex n, NodeIndex ref_type_node) const noexcept;
  // The parent by an inverse hierarchical reference, or kNoNode.
  NodeIndex parent(NodeIndex n) const noexcept;
  // A child reached by a forward hierarchical reference with this browse name (ns, name), or kNoNode.
  NodeIndex child(NodeIndex n, uint16_t ns, std::string_view name) const noexcept;

  // Heap bytes held by the structure (for the memory benchmark).
  struct Footprint {
    size_t node_ids = 0, records = 0, variables = 0, references = 0, strings = 0, index = 0, other = 0;
    size_t total() const noexcept {
      return node_ids + records + variables + references + strings + index + other;
    }
  };
  Footprint footprint() const noexcept;

 private:
  friend class NodeStoreBuilder;
  friend class AddressSpace;

  std::vector<ua::NodeId> ids_;
  std::vector<NodeRecord> nodes_;
  std::vector<VariableAttributes> variables_;
  std::vector<ReferenceTypeAttributes> reference_types_;
  std::vector<DataTypeAttributes> data_types_;
  std::vector<ua::ExtensionObject> definitions_;
  std::vector<Reference> refs_;
  std::vector<uint32_t> dims_;
  StringPool strings_;
  NodeIdTable index_;
  SubtypeMatrix ref_subtypes_;
  SubtypeMatrix data_type_subtypes_;
  uint16_t hierarchical_ = 0;  // dense index of HierarchicalReferences (i=33)
  uint16_t has_subtype_ = 0;   // dense index of HasSubtype (i=45)
  uint64_t generation_ = 0;    // set once by AddressSpace::publish(), before any reader sees the store
  std::shared_ptr<const StructureCodecs> codecs_;
  std::shared_ptr<const EventTypes> event_types_;
  std::shared_ptr<const ConditionSpecs> condition_specs_;
};

}  // namespace opcuad::addressspace
