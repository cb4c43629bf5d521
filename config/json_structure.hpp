#pragma once
// JSON -> Variant for a DataType of a NodeStore that may hold the DataTypes of NodeSet2 files (initial
// values of instance members, docs/CONFIGURATION.md "Instances of imported types"):
//
//   a structure     {"FieldName": value, ...} by the names of its StructureDefinition (Part 3 §8.48; the
//                   supertypes' fields first), encoded to its Default Binary body (Part 6 §5.2.7) in an
//                   ExtensionObject whose TypeId is the encoding node. Optional fields may be left out;
//                   a union takes exactly one field ({} for none). Nested structures in place, arrays as
//                   JSON arrays (ValueRank 1).
//   an enumeration  a field name of its EnumDefinition ("Running") or its value (2): an Int32.
//   anything else   config/json_value.hpp.
// Namespace 0's Range and EUInformation keep their snake_case form there as well.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "addressspace/node_store.hpp"
#include "ua/variant.hpp"

namespace opcuad::config {

// False with a reason that starts with the JSON pointer below the value where it went wrong ("/Fields/2:
// unknown field ..."; empty when the value itself is wrong).
bool json_to_model_value(const nlohmann::json& j, const addressspace::NodeStore& store,
                         addressspace::NodeIndex data_type, int32_t value_rank,
                         const ua::NodeId::NamespaceResolver& resolver, ua::Variant& out, std::string& why);

// Where a failed conversion of the value at JSON pointer `value_path` went wrong, and why: the pointer
// below the value that json_to_model_value()'s reason may start with is appended to the path.
struct ValueFault {
  std::string path;
  std::string reason;
};
ValueFault value_fault(const std::string& value_path, const std::string& why);

// Why an array value does not fit a variable's ArrayDimensions (a length past a non-zero dimension), or
// an empty string when it does.
std::string array_dimensions_error(const std::vector<uint32_t>& array_dimensions, const ua::Variant& value);

}  // namespace opcuad::config
