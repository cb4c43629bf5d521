#pragma once
// Runtime descriptor of a structure generated from Opc.Ua.Types.bsd. An ExtensionObject that holds a
// decoded structure keeps a pointer to its descriptor, which knows how to copy, compare, encode and
// decode the value without the ExtensionObject knowing the C++ type.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace opcuad::ua {

class Encoder;
class Decoder;

struct StructureType {
  std::string_view name;        // "ReadRequest"
  uint32_t data_type_id;        // ns=0 DataType node, e.g. 629
  uint32_t binary_encoding_id;  // ns=0 "Default Binary" encoding node, e.g. 631
  void* (*create)();
  void (*destroy)(void*) noexcept;
  void* (*clone)(const void*);
  bool (*equal)(const void*, const void*);
  void (*encode)(Encoder&, const void*);
  void (*decode)(Decoder&, void*);
  size_t size;  // sizeof the C++ structure: what decoding one costs before its own arrays and strings
};

// The descriptor for a generated structure's binary encoding id, or nullptr (generated registry).
const StructureType* find_structure_by_encoding_id(uint32_t binary_encoding_id) noexcept;
// The descriptor for a DataType id (ns=0), or nullptr.
const StructureType* find_structure_by_data_type_id(uint32_t data_type_id) noexcept;

}  // namespace opcuad::ua
