#pragma once
// The well-known roles of Part 3 §4.8.2 (their Role objects are ns=0 WellKnownRole_*, Part 5 §4.9.2:
// i=15644 Anonymous, i=15656 AuthenticatedUser, i=15668 Observer, i=15680 Operator, i=16036 Engineer,
// i=15692 Supervisor, i=15716 ConfigureAdmin, i=15704 SecurityAdmin) as bits of one byte: a session holds a
// set of them, a variable's read_roles / write_roles name the sets that may read or write its Value.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ua/node_id.hpp"

namespace opcuad::config {

using RoleSet = uint8_t;

namespace role {
inline constexpr RoleSet kAnonymous = 0x01;
inline constexpr RoleSet kAuthenticatedUser = 0x02;
inline constexpr RoleSet kObserver = 0x04;
inline constexpr RoleSet kOperator = 0x08;
inline constexpr RoleSet kEngineer = 0x10;
inline constexpr RoleSet kSupervisor = 0x20;
inline constexpr RoleSet kConfigureAdmin = 0x40;
inline constexpr RoleSet kSecurityAdmin = 0x80;
inline constexpr RoleSet kEveryone = 0xFF;  // a variable without read_roles / write_roles
// The administrative roles of Part 3 §4.8.2: SecurityAdmin changes security settings, ConfigureAdmin the
// non-security configuration. They see every session in the Server's diagnostics and switch them
// (services/diagnostics.hpp). Supervisor is not one: Part 3 gives it browse, read, call and subscribe, as
// Observer and Operator have, and no configuration.
inline constexpr RoleSet kAdministrators = kSecurityAdmin | kConfigureAdmin;
}  // namespace role

inline constexpr std::array<std::string_view, 8> kRoleNames = {
    "Anonymous", "AuthenticatedUser", "Observer",       "Operator",
    "Engineer",  "Supervisor",        "ConfigureAdmin", "SecurityAdmin"};

// "unknown role \"X\" (Anonymous, AuthenticatedUser, ...: the well-known roles of Part 3 §4.8.2)".
inline std::string unknown_role(std::string_view name) {
  std::string out = "unknown role \"" + std::string(name) + "\" (";
  for (size_t i = 0; i < kRoleNames.size(); ++i)
    out += std::string(i ? ", " : "") + std::string(kRoleNames[i]);
  return out + ": the well-known roles of Part 3 §4.8.2)";
}

// A variable with read_roles / write_roles has this bit in its record's user_access_level (AccessLevel
// bit 7, which Part 3 §8.57 leaves reserved), so Read and Write look its roles up in the RoleTable only then;
// a variable without roles costs one test of a byte already loaded.
inline constexpr uint8_t kHasRolesBit = 0x80;

struct NodeRoles {
  RoleSet read = role::kEveryone;
  RoleSet write = role::kEveryone;
};
// NodeId -> roles of every variable that has some; filled by build_address_space().
using RoleTable = std::unordered_map<ua::NodeId, NodeRoles>;

// The bit of a role name as configurations spell it (the BrowseName of its Role object).
constexpr std::optional<RoleSet> role_bit(std::string_view name) noexcept {
  for (size_t i = 0; i < kRoleNames.size(); ++i) {
    if (kRoleNames[i] == name) return static_cast<RoleSet>(1u << i);
  }
  return std::nullopt;
}

}  // namespace opcuad::config
