#pragma once
// Does a value fit a Variable's DataType, ValueRank and ArrayDimensions? (Part 4 §5.10.4: Write returns
// BadTypeMismatch otherwise.) Used by Write and by the configuration loader for initial values.
//
// A value of built-in type t has the ns=0 DataType i=t (a decoded structure: its structure DataType).
// It fits DataType D when that type is D or a subtype of D (an abstract Number accepts any numeric,
// BaseDataType anything), or when D is a subtype of a concrete built-in type whose encoding the value has
// (a Duration variable takes a Double, an enumeration an Int32). An Int32 variable rejects a Double.

#include "addressspace/node_store.hpp"
#include "ua/buffer.hpp"
#include "ua/decoder.hpp"
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
// The structures of a value check_value() accepted (a scalar ExtensionObject or the elements of an array),
// by the store's structure codecs (structure_codec.hpp). A binary body (Part 6 §5.2.2.15) whose TypeId is
// the Default Binary encoding of a structure of the store must be of the variable's DataType or a subtype
// of it (Part 3 §5.6.2; else BadTypeMismatch) and transcode by that structure's StructureDefinition:
// BadDecodingError for a malformed body, bytes left over, or a body that does not encode back to the same
// bytes (a Boolean other than 0 or 1); BadEncodingLimitsExceeded past `limits` (nesting, array and string
// lengths, as for the built-in types). A body of no structure of the store, or an XML body, is
// BadTypeMismatch unless the variable's DataType is BaseDataType or Structure, which take any structure
// as it is. Decoded bodies (the generated namespace-0 structures) were checked by check_value().
// `scratch` receives the transcoded bytes and is reused: nothing is allocated once it has grown to the
// largest body, and nothing per field but for fields of the built-in types structure_codec.hpp names.
ua::StatusCode check_structures(const NodeStore& store, const VariableAttributes& var,
                                const ua::Variant& value, const ua::DecodeLimits& limits,
                                ua::ByteBuffer& scratch);
// Just the ValueRank / ArrayDimensions part.
bool value_rank_accepts(int32_t value_rank, std::span<const uint32_t> array_dimensions,
                        const ua::Variant& value) noexcept;

}  // namespace opcuad::addressspace
