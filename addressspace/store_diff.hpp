#pragma once
// What a reload changed: the nodes of one NodeStore compared with those of the store that replaces it,
// by NodeId (for the reload's log line, docs/OPERATIONS.md "Reload", and its GeneralModelChangeEvent).
//
// A node of both stores is changed when an attribute other than Value differs (names, texts, masks,
// flags, DataType, ValueRank, ArrayDimensions, access levels and roles, MinimumSamplingInterval, a
// ReferenceType's InverseName, a DataType's definition) or its references to nodes of both stores do
// (type, other end, direction, in order). A reference to an added or removed node does not make its other
// end changed: adding a variable under an object counts one node added, not the object too.
// Control plane only: it allocates, and walks both stores in full.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "addressspace/node_store.hpp"

namespace opcuad::addressspace {

struct StoreDiff {
  size_t added = 0;    // in `after` only
  size_t removed = 0;  // in `before` only
  size_t changed = 0;  // in both, and different
  friend bool operator==(const StoreDiff&, const StoreDiff&) = default;
};

// One entry of a GeneralModelChangeEvent's Changes (Part 5 §12.16 ModelChangeStructureDataType).
struct ModelChange {
  ua::NodeId affected;
  ua::NodeId affected_type;  // the TypeDefinition of an Object or Variable, else null
  uint8_t verb = 0;          // model_verb bits
};
namespace model_verb {
inline constexpr uint8_t kNodeAdded = 0x01;
inline constexpr uint8_t kNodeDeleted = 0x02;
inline constexpr uint8_t kReferenceAdded = 0x04;  // the affected node is a source or a target of it
inline constexpr uint8_t kReferenceDeleted = 0x08;
inline constexpr uint8_t kDataTypeChanged = 0x10;  // Variables and VariableTypes
}  // namespace model_verb

// What a reload changed, in the verbs of Part 5 §12.16: one entry per affected node, in the order of the
// stores (removed nodes first). A node added or deleted is NodeAdded / NodeDeleted (its own references
// come and go with it); a node of both stores whose references differ (to any node, added and removed
// ones included: the parent of an added variable gets ReferenceAdded) has ReferenceAdded and / or
// ReferenceDeleted; a Variable or VariableType whose DataType changed has DataTypeChanged. A change of
// another attribute (a DisplayName, an access level) has no verb and no entry. At most `limit` entries:
// past it `complete` is false and the list is cut (the event is then the coarse BaseModelChangeEventType,
// Part 3 §9.32.1).
struct ModelChanges {
  std::vector<ModelChange> entries;
  bool complete = true;
};

// `changes`, when given, also receives the model changes (at most `change_limit`).
StoreDiff diff_stores(const NodeStore& before, const NodeStore& after, ModelChanges* changes = nullptr,
                      size_t change_limit = 10000);

}  // namespace opcuad::addressspace
