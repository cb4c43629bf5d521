#pragma once
// Does a value fit a Variable's DataType, ValueRank and ArrayDimensions? (Part 4 §5.10.4: Write returns
// BadTypeMismatch otherwise.) Used by Write and by the configuration loader for initial values.
//
// A value of built-in type t has the ns=0 DataType i=t (a decoded structure: its structure DataType).
// It fits DataType D when that type is D or a subtype of D (an abstract Number accepts any numeric,
// BaseDataType anything), or when D is a subtype of a concrete built-in type whose encoding the value has
// (a Duration variable takes a Double, an enumeration an Int32). An Int32 variable rejects a Double.

#include "addressspace/node_store.hpp"
#include "ua/status_code.hpp"
#include "ua/variant.hpp"

namespace opcuad::addressspace {

// An empty value is accepted (it means "no value").
ua::StatusCode check_value_general(const NodeStore& store, const VariableAttributes& var,
                                   const ua::Variant& value) noexcept;
inline ua::StatusCode check_value(const NodeStore& store, const VariableAttributes& var,
                                  const ua::Variant& value) noexcept {
  // The common write: a scalar of exactly the variable's built-in DataType, where the ValueRank allows a
  // scalar (-1 Scalar, -2 Any, -3 ScalarOrOneDimension).
  if (var.builtin != 0 && static_cast<uint8_t>(value.type()) == var.builtin && value.is_scalar() &&
      var.value_rank <= -1 && var.value_rank >= -3) {
    return ua::status::Good;
  }
  return check_value_general(store, var, value);
}
// Just the DataType part, for a value of built-in type t (and, for ExtensionObject, its structure type).
bool data_type_accepts(const NodeStore& store, NodeIndex data_type, const ua::Variant& value) noexcept;
// Just the ValueRank / ArrayDimensions part.
bool value_rank_accepts(int32_t value_rank, std::span<const uint32_t> array_dimensions,
                        const ua::Variant& value) noexcept;

}  // namespace opcuad::addressspace
