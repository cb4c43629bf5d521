#pragma once
// What a reload changed: the nodes of one NodeStore compared with those of the store that replaces it,
// by NodeId (for the reload's log line, docs/OPERATIONS.md "Reload").
//
// A node of both stores is changed when an attribute other than Value differs (names, texts, masks,
// flags, DataType, ValueRank, ArrayDimensions, access levels and roles, MinimumSamplingInterval, a
// ReferenceType's InverseName, a DataType's definition) or its references to nodes of both stores do
// (type, other end, direction, in order). A reference to an added or removed node does not make its other
// end changed: adding a variable under an object counts one node added, not the object too.
// Control plane only: it allocates, and walks both stores in full.

#include <cstddef>

#include "addressspace/node_store.hpp"

namespace opcuad::addressspace {

struct StoreDiff {
  size_t added = 0;    // in `after` only
  size_t removed = 0;  // in `before` only
  size_t changed = 0;  // in both, and different
  friend bool operator==(const StoreDiff&, const StoreDiff&) = default;
};

StoreDiff diff_stores(const NodeStore& before, const NodeStore& after);

}  // namespace opcuad::addressspace
