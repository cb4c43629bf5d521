#pragma once
// Namespace 0 (http://opcfoundation.org/UA/), generated from Opc.Ua.NodeSet2.xml by tools/gen_ns0.py:
// every standard node with its attributes, references, DataTypeDefinitions and the static values the
// nodeset gives (EnumStrings, EnumValues, method arguments, ...). Live values of the Server object are
// installed separately (server_object.hpp).

#include <cstddef>

#include "addressspace/node_store_builder.hpp"

namespace opcuad::addressspace {

inline constexpr const char* kNamespace0Uri = "http://opcfoundation.org/UA/";

// Adds all of namespace 0 to `b`.
void add_namespace0(NodeStoreBuilder& b);
// Number of namespace-0 nodes add_namespace0() adds.
size_t namespace0_node_count() noexcept;

}  // namespace opcuad::addressspace
