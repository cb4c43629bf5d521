#pragma once
// Attribute ids (Part 6 Annex A.1): the numbers by which Read, Write and monitored items name the
// attributes of Part 3 §5. The one set every service uses.

#include <cstdint>

namespace opcuad::addressspace::attr {

enum : uint32_t {
  kNodeId = 1,
  kNodeClass,
  kBrowseName,
  kDisplayName,
  kDescription,
  kWriteMask,
  kUserWriteMask,
  kIsAbstract,
  kSymmetric,
  kInverseName,
  kContainsNoLoops,
  kEventNotifier,
  kValue,
  kDataType,
  kValueRank,
  kArrayDimensions,
  kAccessLevel,
  kUserAccessLevel,
  kMinimumSamplingInterval,
  kHistorizing,
  kExecutable,
  kUserExecutable,
  kDataTypeDefinition,
  kRolePermissions,
  kUserRolePermissions,
  kAccessRestrictions,
  kAccessLevelEx,
};

}  // namespace opcuad::addressspace::attr
