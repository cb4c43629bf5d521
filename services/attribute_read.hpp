#pragma once
// Reading attributes other than Value (Part 3 §5), shared by the Read service and by monitored items
// that sample a non-Value attribute.

#include "addressspace/node_store.hpp"
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

// The UserAccessLevel of variable `n` for a user (Part 3 §5.6.2): its AccessLevel without the read bits
// when none of the user's roles is in its read_roles, without the write bits when none is in write_roles or
// the user may not write. Only a variable marked config::kHasRolesBit has roles (kept in its
// VariableAttributes, so a reload publishes them with the node; fail-closed for a caller without a
// session's role table); any other costs a test and an AND.
inline uint8_t user_access_level(const addressspace::NodeStore&, addressspace::NodeIndex,
                                 const addressspace::VariableAttributes& v, const UserAccess& user) {
  namespace access = addressspace::access;
  uint8_t level = v.user_access_level;
  config::NodeRoles roles;
  if (level & config::kHasRolesBit) [[unlikely]] {
    if (!user.table) return 0;
    level &= static_cast<uint8_t>(~config::kHasRolesBit);
    roles = config::NodeRoles{v.read_roles, v.write_roles};
  }
  if (!(roles.read & user.roles))
    level &= static_cast<uint8_t>(~(access::kCurrentRead | access::kHistoryRead));
  if (!user.may_write || !(roles.write & user.roles)) {
    level &= static_cast<uint8_t>(
        ~(access::kCurrentWrite | access::kHistoryWrite | access::kStatusWrite | access::kTimestampWrite));
  }
  return level;
}

}  // namespace opcuad::services
