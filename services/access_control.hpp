#pragma once
// Access control: the one place that decides what a session's user may do. Every service asks here, and
// only here: Read, Write and monitored items of a Value (UserAccessLevel, Part 3 §5.6.2), the Read of
// UserWriteMask (§5.2.8) and UserExecutable (§5.7), Call (Part 4 §5.11.2), Browse (§5.8.2), which
// sessions' entries of the diagnostics arrays a session sees (Part 5 §6.3.3), and whose subscriptions
// TransferSubscriptions may move (Part 4 §5.13.7). A new kind of decision (the events a session may
// receive, the methods of a loaded model) is added here, so that a change of policy is one change.
//
// What a user may do comes from its roles (Part 3 §4.8; config/roles.hpp), kept per session as a
// UserAccess, and from what the node itself allows. The functions are inline and allocate nothing: the
// request path asks once per operation.

#include <string_view>

#include "addressspace/node_store.hpp"
#include "config/roles.hpp"
#include "services/session.hpp"

namespace opcuad::services::access_control {

// The UserAccessLevel of variable `n` for a user (Part 3 §5.6.2): its AccessLevel without the read bits
// when none of the user's roles is in its read_roles, without the write bits when none is in write_roles or
// the user may not write (security.anonymous_write). Only a variable marked config::kHasRolesBit has roles
// (kept in its VariableAttributes, so a reload publishes them with the node; fail-closed for a caller
// without a session's role table); any other costs a test and an AND.
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

// May the user read the Value (Read, a monitored item's sampling)? Otherwise BadUserAccessDenied.
inline bool may_read_value(const addressspace::NodeStore& store, addressspace::NodeIndex n,
                           const addressspace::VariableAttributes& v, const UserAccess& user) {
  return (user_access_level(store, n, v, user) & addressspace::access::kCurrentRead) != 0;
}

// May the user receive an event whose SourceNode is `source` and whose readers are `readers` (an event
// from a node the user may not read is not delivered to its session; an audit event only to the roles
// that read audit events, Part 4 §6.5)? A Variable source needs CurrentRead for the user, as a Read of its
// Value would; any other node has no per-role permission in opcuad (Objects, the Server object), so its
// events reach every session.
inline bool may_receive_event(const addressspace::NodeStore& store, addressspace::NodeIndex source,
                              config::RoleSet readers, const UserAccess& user) {
  if (readers != 0 && !(readers & user.roles)) return false;
  if (source == addressspace::kNoNode) return true;
  const addressspace::VariableAttributes* v = store.variable(source);
  return !v || may_read_value(store, source, *v, user);
}

// May the user write the Value? Otherwise BadUserAccessDenied.
inline bool may_write_value(const addressspace::NodeStore& store, addressspace::NodeIndex n,
                            const addressspace::VariableAttributes& v, const UserAccess& user) {
  return (user_access_level(store, n, v, user) & addressspace::access::kCurrentWrite) != 0;
}

// The UserWriteMask (Part 3 §5.2.8): no attribute but Value is writable through opcuad, so a user who may
// write gets the node's WriteMask as it is and one who may not gets none of it.
inline uint32_t user_write_mask(const addressspace::NodeStore& store, addressspace::NodeIndex n,
                                const UserAccess& user) {
  return user.may_write ? store.record(n).write_mask : uint32_t{0};
}

// UserExecutable (Part 3 §5.7): the method's own flag, the same for every user (opcuad has no per-role
// method permissions). Call answers BadUserAccessDenied without it.
inline bool user_executable(const addressspace::NodeStore& store, addressspace::NodeIndex method,
                            const UserAccess&) {
  return store.has_flag(method, addressspace::flag::kUserExecutable);
}

// Browse (Part 4 §5.8.2): every node is visible to every session. opcuad has no per-node Browse
// permission (Part 3 §8.55 PermissionType Browse bit): what a user may not read it still sees, with
// UserAccessLevel telling it so.
inline bool may_browse(const addressspace::NodeStore&, addressspace::NodeIndex, const UserAccess&) {
  return true;
}

// The roles that see every session's and subscription's entry of the diagnostics arrays, read
// SessionSecurityDiagnosticsArray and switch EnabledFlag (Part 5 §6.3.3; config::role::kAdministrators:
// SecurityAdmin, ConfigureAdmin, not Supervisor). Everyone else sees its own session's entries only.
// (SessionSecurityDiagnosticsArray and EnabledFlag carry these roles as node roles, set where the server
// object is built, config/address_space_loader.cpp, and decided by user_access_level like any other.)
inline constexpr config::RoleSet kDiagnosticsAdmins = config::role::kAdministrators;
inline bool sees_all_diagnostics(const UserAccess& user) noexcept {
  return (user.roles & kDiagnosticsAdmins) != 0;
}

// Whose subscriptions TransferSubscriptions may move to a session (Part 4 §5.13.7: a session of the same
// user). Anonymous sessions are not one user: the spec asks for the same client ApplicationUri over a
// channel with MessageSecurityMode Sign or SignAndEncrypt. Without message security the ApplicationUri is
// only what the client claimed, so an anonymous session may take over only subscriptions of an anonymous
// session that claimed the same ApplicationUri from the same IP address; the subscription id (random, not
// guessable from one's own ids) is then the remaining secret. A named user never takes an anonymous
// session's subscriptions, nor the reverse.
inline bool may_take_subscriptions_of(const Session& owner, std::string_view user,
                                      std::string_view application_uri, std::string_view address) {
  if (!owner.user.empty() || !user.empty()) return owner.user == user;
  return owner.client_application_uri == application_uri && owner.client_address == address;
}

}  // namespace opcuad::services::access_control
