#pragma once
// The 25 built-in types of Part 6 §5.1.2 with their type ids, which are also the ns=0 DataType ids.

#include <cstdint>
#include <string_view>

namespace opcuad::ua {

enum class BuiltinType : uint8_t {
  Null = 0,
  Boolean = 1,
  SByte = 2,
  Byte = 3,
  Int16 = 4,
  UInt16 = 5,
  Int32 = 6,
  UInt32 = 7,
  Int64 = 8,
  UInt64 = 9,
  Float = 10,
  Double = 11,
  String = 12,
  DateTime = 13,
  Guid = 14,
  ByteString = 15,
  XmlElement = 16,
  NodeId = 17,
  ExpandedNodeId = 18,
  StatusCode = 19,
  QualifiedName = 20,
  LocalizedText = 21,
  ExtensionObject = 22,
  DataValue = 23,
  Variant = 24,
  DiagnosticInfo = 25,
};
inline constexpr uint8_t kMaxBuiltinType = 25;

constexpr std::string_view builtin_type_name(BuiltinType t) noexcept {
  constexpr std::string_view names[] = {
      "Null",           "Boolean",       "SByte",         "Byte",          "Int16",           "UInt16",
      "Int32",          "UInt32",        "Int64",         "UInt64",        "Float",           "Double",
      "String",         "DateTime",      "Guid",          "ByteString",    "XmlElement",      "NodeId",
      "ExpandedNodeId", "StatusCode",    "QualifiedName", "LocalizedText", "ExtensionObject", "DataValue",
      "Variant",        "DiagnosticInfo"};
  auto i = static_cast<uint8_t>(t);
  return i <= kMaxBuiltinType ? names[i] : std::string_view("Invalid");
}

}  // namespace opcuad::ua
