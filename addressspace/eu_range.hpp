#pragma once
// The EURange property of an analog variable (Part 8 §5.3.2): the range its Write checks values against
// and its percent deadband is a share of (Part 8 §6.2). One lookup for both.

#include <optional>

#include "addressspace/node_store.hpp"
#include "addressspace/value_store.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::addressspace {

// The current value of `n`'s EURange property (a child named EURange in namespace 0 holding a Range), or
// nothing when it has none.
inline std::optional<ua::Range> eu_range(const NodeStore& store, NodeIndex n) {
  if (!store.has_flag(n, flag::kHasEURange)) return std::nullopt;
  const NodeIndex range_node = store.child(n, 0, "EURange");
  if (range_node == kNoNode) return std::nullopt;
  const auto* v = store.variable(range_node);
  if (!v || !v->cell) return std::nullopt;
  ua::DataValue dv;
  ValueStore::read(*v->cell, dv);
  const auto* eo = dv.value.get_if<ua::ExtensionObject>();
  const ua::Range* range = eo ? eo->get<ua::Range>() : nullptr;
  if (!range) return std::nullopt;
  return *range;
}

}  // namespace opcuad::addressspace
