#pragma once
// The compact records a NodeStore is made of (Part 3 §5: node classes and their attributes).
//
// A node is a NodeRecord plus, by node class, one entry in a side table (VariableAttributes for
// Variable and VariableType, ReferenceTypeAttributes, DataTypeAttributes). Strings live in one pool and
// are referred to by 32-bit ids, so a variable node costs a few dozen bytes plus its NodeId. Nodes are
// addressed inside a store by a dense NodeIndex; a NodeIndex is only meaningful for the store that
// issued it.

#include <cstdint>
#include <limits>

namespace opcuad::addressspace {

// Part 3 §8.29, values as in the NodeClass enumeration (bit mask for Browse filters).
enum class NodeClass : uint8_t {
  Unspecified = 0,
  Object = 1,
  Variable = 2,
  Method = 4,
  ObjectType = 8,
  VariableType = 16,
  ReferenceType = 32,
  DataType = 64,
  View = 128,
};

using NodeIndex = uint32_t;
inline constexpr NodeIndex kNoNode = std::numeric_limits<uint32_t>::max();
using StringId = uint32_t;
inline constexpr StringId kNullString = 0;  // a null String (distinct from the empty string)

// AccessLevel bits (Part 3 §8.57).
namespace access {
inline constexpr uint8_t kCurrentRead = 0x01;
inline constexpr uint8_t kCurrentWrite = 0x02;
inline constexpr uint8_t kHistoryRead = 0x04;
inline constexpr uint8_t kHistoryWrite = 0x08;
inline constexpr uint8_t kSemanticChange = 0x10;
inline constexpr uint8_t kStatusWrite = 0x20;
inline constexpr uint8_t kTimestampWrite = 0x40;
}  // namespace access

// Boolean attributes packed into NodeRecord::flags.
namespace flag {
inline constexpr uint8_t kIsAbstract = 0x01;       // ObjectType, VariableType, ReferenceType, DataType
inline constexpr uint8_t kSymmetric = 0x02;        // ReferenceType
inline constexpr uint8_t kHistorizing = 0x04;      // Variable
inline constexpr uint8_t kContainsNoLoops = 0x08;  // View
inline constexpr uint8_t kExecutable = 0x10;       // Method
inline constexpr uint8_t kUserExecutable = 0x20;   // Method
// Variable: its Value depends on who reads it (the Server's diagnostics arrays, Part 5 §8.2.10: a session
// sees its own entries, an administrator all); Read and monitored items pass it through a per-session
// filter (services/diagnostics.hpp). Not an attribute: no service reports it.
inline constexpr uint8_t kSessionScoped = 0x40;
// Variable: it has an EURange property (Part 8 §5.3.2), set when the store is built, so a Write to a
// variable without one (most of them) skips the search through its references (addressspace/eu_range.hpp).
// Not an attribute either.
inline constexpr uint8_t kHasEURange = 0x80;
// Variable: the input, setpoint or normal-value node of at least one alarm condition
// (ConditionSpecs::watching(), condition_specs.hpp), set when the store is built, so a Write to a variable
// without alarms costs one test of this byte. It shares its bit with kContainsNoLoops, which only Views
// have. Not an attribute.
inline constexpr uint8_t kHasAlarm = 0x08;
}  // namespace flag

struct LocalizedTextRef {
  StringId locale = kNullString;
  StringId text = kNullString;
};

struct NodeRecord {
  StringId browse_name = kNullString;
  LocalizedTextRef display_name;
  LocalizedTextRef description;
  uint32_t write_mask = 0;
  uint32_t refs_begin = 0;  // [refs_begin, refs_end) in the store's reference array
  uint32_t refs_end = 0;
  uint32_t detail = kNoNode;  // index into the node class's side table, if it has one
  uint16_t browse_ns = 0;
  NodeClass node_class = NodeClass::Unspecified;
  uint8_t flags = 0;
  uint8_t event_notifier = 0;  // Object, View
};

class ValueCell;

// Variable and VariableType. The Value attribute is not here: it lives in `cell` (value_store.hpp).
struct VariableAttributes {
  ValueCell* cell = nullptr;
  double minimum_sampling_interval = 0;
  NodeIndex data_type = kNoNode;
  int32_t value_rank = -2;
  uint32_t access_level_ex = 0;
  uint32_t dims_begin = 0;  // ArrayDimensions in the store's dimension pool
  uint16_t dims_count = 0;
  uint8_t access_level = access::kCurrentRead;
  uint8_t user_access_level = access::kCurrentRead;
  // The role sets (bits of config/roles.hpp) that may read / write the Value; consulted only when
  // user_access_level carries the has-roles bit. Kept in the store, not beside it, so that a reload
  // that changes them publishes them with the nodes they belong to (fills padding: no extra bytes).
  uint8_t read_roles = 0xFF;
  uint8_t write_roles = 0xFF;
  // The DataType's own built-in type id when the DataType is one of the built-in DataTypes ns=0;i=1..25
  // (Double, Int32, ...), else 0: a scalar of exactly that type fits without a look at the type tree
  // (type_check.hpp, check_value). Padding again.
  uint8_t builtin = 0;
};
static_assert(sizeof(VariableAttributes) == 40, "roles live in the padding");

struct ReferenceTypeAttributes {
  NodeIndex node = kNoNode;
  LocalizedTextRef inverse_name;
};

struct DataTypeAttributes {
  NodeIndex node = kNoNode;
  uint32_t definition = kNoNode;  // index into the store's definitions (StructureDefinition/EnumDefinition)
  uint8_t builtin = 0;            // the built-in type values of this DataType encode as; 0 for abstract roots
};

// One direction of a reference; the store keeps both directions of every reference.
struct Reference {
  NodeIndex target = kNoNode;
  uint16_t type = 0;  // dense ReferenceType index (NodeStore::reference_type_node() maps it back)
  bool is_inverse = false;
};
static_assert(sizeof(Reference) == 8);

enum class BrowseDirection : uint8_t { Forward = 0, Inverse = 1, Both = 2 };

}  // namespace opcuad::addressspace
