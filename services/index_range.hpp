#pragma once
// NumericRange (Part 4 §7.27): "5", "2:4", or one such range per dimension separated by commas
// ("0:1,2:3" for a matrix). Read returns the sub-array; Write replaces it.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ua/status_code.hpp"
#include "ua/variant.hpp"

namespace opcuad::services {

struct IndexRange {
  struct Dim {
    uint32_t first = 0;
    uint32_t last = 0;  // inclusive
  };
  std::vector<Dim> dims;

  // Empty text: no range (nullopt with ok = true).
  static std::optional<IndexRange> parse(std::string_view text, bool& ok);
};

// The part of `value` the range selects: BadIndexRangeNoData when it selects nothing (or the value is
// not an array or string), BadIndexRangeInvalid when its dimensions do not fit the value's.
ua::StatusCode read_range(const ua::Variant& value, const IndexRange& range, ua::Variant& out);
// Replaces the selected part of `target` with `part` (same type; as many elements as the range selects).
ua::StatusCode write_range(ua::Variant& target, const IndexRange& range, const ua::Variant& part);

}  // namespace opcuad::services
