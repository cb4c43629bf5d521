#pragma once
// Namespace-0 lookups for the configuration: DataType and type-definition names ("Double", "Duration",
// "AnalogItemType") or NodeId text ("i=11"), resolved against a namespace-0 NodeStore built once.

#include <string_view>

#include "addressspace/node_store.hpp"

namespace opcuad::config {

// Namespace 0 alone, built on first use (thread-safe) and kept for the process lifetime.
const addressspace::NodeStore& ns0_store();
// A ns=0 node of class `cls` by browse name; kNoNode if none.
addressspace::NodeIndex find_ns0_by_name(std::string_view name, addressspace::NodeClass cls);

}  // namespace opcuad::config
