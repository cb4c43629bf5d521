#pragma once
// Reading attributes other than Value (Part 3 §5), shared by the Read service and by monitored items
// that sample a non-Value attribute.

#include "addressspace/node_store.hpp"
#include "services/access_control.hpp"
#include "services/session.hpp"
#include "ua/status_code.hpp"
#include "ua/variant.hpp"

namespace opcuad::services {

// Part 3 §5: does a node of this class have the attribute?
bool has_attribute(addressspace::NodeClass c, uint32_t attribute_id) noexcept;
// Every attribute but Value. REQUIRES: has_attribute(class of n, attribute_id). BadAttributeIdInvalid
// for an optional attribute the node lacks (a DataTypeDefinition on a non-structure).
// UserAccessLevel and UserWriteMask answer for `user` (Part 3 §5.6.2, §5.2.8).
ua::StatusCode read_plain_attribute(const addressspace::NodeStore& store, addressspace::NodeIndex n,
                                    uint32_t attribute_id, ua::Variant& out, const UserAccess& user = {});

}  // namespace opcuad::services
