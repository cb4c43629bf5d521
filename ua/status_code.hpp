#pragma once
// StatusCode (Part 4 §7.39, Part 6 §5.2.2.16): a 32-bit value whose top two bits give the severity
// (00 Good, 01 Uncertain, 10 Bad), bits 16..29 the sub-code, and the low 16 bits info bits.
//
// StatusCode is [[nodiscard]]: a function that returns one is reporting an outcome that must be looked at.
// Every named code of StatusCode.csv is a constant in opcuad::ua::status (generated, see
// ua/generated/status_codes.hpp).

#include <cstdint>
#include <string_view>

namespace opcuad::ua {

class [[nodiscard]] StatusCode {
 public:
  constexpr StatusCode() noexcept = default;
  constexpr explicit StatusCode(uint32_t value) noexcept : value_(value) {}

  constexpr uint32_t value() const noexcept { return value_; }

  constexpr bool is_good() const noexcept { return (value_ >> 30) == 0; }
  constexpr bool is_uncertain() const noexcept { return (value_ >> 30) == 1; }
  constexpr bool is_bad() const noexcept { return (value_ >> 30) >= 2; }
  // Two codes have the same meaning when their severity and sub-code agree; the info bits
  // (data-value overflow, limit bits, ...) do not change what the code says.
  constexpr uint32_t code_bits() const noexcept { return value_ & 0xFFFF0000u; }
  constexpr bool is(StatusCode other) const noexcept { return code_bits() == other.code_bits(); }

  // The symbolic name from StatusCode.csv ("BadNodeIdUnknown"), or "Unknown" for codes the table lacks.
  // The info bits are ignored for the lookup.
  std::string_view name() const noexcept;

  // Explicitly discard a status where ignoring it is the intended behaviour (e.g. best-effort cleanup).
  constexpr void ignore() const noexcept {}

  friend constexpr bool operator==(StatusCode, StatusCode) noexcept = default;

 private:
  uint32_t value_ = 0;
};

}  // namespace opcuad::ua

#include "ua/generated/status_codes.hpp"  // IWYU pragma: export
