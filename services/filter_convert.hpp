#pragma once
// The value side of a ContentFilter (Part 4 §7.7.3): the conversion rules between built-in types (the
// "Conversion Rules" table, 'I' implicit, 'E' explicit, '-' none), the data precedence rules that pick the
// common type of two operands, and the comparisons the filter operators make after converting.
//
// Values are held in `FilterValue`, a flat view of one scalar (numbers inline, text and ids as views
// into the Variant they came from or into a `ConvertScratch`), so that comparing a field with a literal
// allocates nothing. What a FilterValue views must outlive it.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "ua/builtin_type.hpp"
#include "ua/node_id.hpp"
#include "ua/scalars.hpp"
#include "ua/variant.hpp"

namespace opcuad::services::filter {

enum class Conversion : uint8_t { None, Implicit, Explicit };

// The cell of the Conversion Rules table (Part 4 §7.7.3) for a scalar of `from` converted to `to`. The
// diagonal (same type) is Implicit. Types outside the table (ExtensionObject, DataValue, Variant,
// DiagnosticInfo, Null) convert to nothing.
Conversion conversion_rule(ua::BuiltinType from, ua::BuiltinType to) noexcept;

// The Data Precedence Rules (Part 4 §7.7.3): 1 for Double (the highest) ... 18 for QualifiedName; 0 for a
// type the list does not name (DateTime, ByteString, XmlElement, ...), which compares with its own type only.
int precedence(ua::BuiltinType t) noexcept;

struct FilterValue {
  ua::BuiltinType type = ua::BuiltinType::Null;
  bool array = false;       // an array (or matrix); only Equals and IsNull look at it, through `source`
  bool b = false;           // Boolean
  int64_t i = 0;            // SByte, Int16, Int32, Int64; DateTime ticks
  uint64_t u = 0;           // Byte, UInt16, UInt32, UInt64; StatusCode's 32 bits; QualifiedName's namespace
  double d = 0;             // Float, Double
  std::string_view text;    // String, ByteString, XmlElement; LocalizedText's text; QualifiedName's name
  std::string_view locale;  // LocalizedText
  bool text_null = false;   // a null String / ByteString (compares equal to a null one only)
  ua::Guid guid{};          // Guid
  const ua::NodeId* node = nullptr;              // NodeId; the NodeId part of an ExpandedNodeId
  const ua::ExpandedNodeId* expanded = nullptr;  // ExpandedNodeId (nullptr when made from a NodeId)
  const ua::Variant* source = nullptr;           // arrays and the types without a flat form

  bool is_null() const noexcept { return type == ua::BuiltinType::Null; }
  bool is_bool(bool v) const noexcept { return type == ua::BuiltinType::Boolean && !array && b == v; }
};

// A view of `v` (nullptr or an empty Variant: Null). REQUIRES: `v` outlives the result.
FilterValue view_of(const ua::Variant* v) noexcept;
inline FilterValue boolean(bool v) noexcept {
  FilterValue r;
  r.type = ua::BuiltinType::Boolean;
  r.b = v;
  return r;
}

// Storage for the values a conversion makes (a number's text, a NodeId parsed from a String). The
// number and Boolean forms use the fixed buffer; NodeId, Guid and DateTime text and parsed NodeIds use the
// strings and ids, whose capacity is kept between uses.
struct ConvertScratch {
  std::array<char, 64> digits{};
  std::string text;
  ua::NodeId node;
  ua::ExpandedNodeId expanded;
};

// Converts the scalar `in` to `to`: with `explicit_cast` every 'I' or 'E' cell, else only 'I' cells. False
// when the table has no conversion or the value does not convert (out of range, text that does not parse).
// `out` may view `in`'s storage and `scratch`.
bool convert(const FilterValue& in, ua::BuiltinType to, bool explicit_cast, ConvertScratch& scratch,
             FilterValue& out) noexcept;

// The outcome of comparing two operands after the implicit conversion to their common type.
enum class Compared : uint8_t {
  Less,
  Equal,
  Greater,
  Unequal,  // different, and the type has no order (NodeId, Guid, LocalizedText, arrays, ...)
  Failed,   // a null operand, no implicit conversion, or a conversion that failed
};
Compared compare(const FilterValue& a, const FilterValue& b, ConvertScratch& scratch) noexcept;

// A scalar FilterValue as a Variant (for Cast results handed back and for tests).
ua::Variant to_variant(const FilterValue& v);

}  // namespace opcuad::services::filter
