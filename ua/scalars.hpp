#pragma once
// Fixed-size built-in types that need more than a C++ arithmetic type: DateTime and Guid.

#include <array>
#include <chrono>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace opcuad::ua {

// DateTime (Part 6 §5.2.2.5): 100-nanosecond intervals since 1601-01-01 00:00:00 UTC, as Int64.
// Zero means "not set" (encoded as the minimum by clients); Part 6 clamps values outside 1601..9999.
struct DateTime {
  int64_t ticks = 0;

  // Ticks between 1601-01-01 and the Unix epoch.
  static constexpr int64_t kUnixEpochTicks = 116444736000000000LL;

  static DateTime now() noexcept {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    return DateTime{kUnixEpochTicks + ns / 100};
  }
  static constexpr DateTime from_unix_ms(int64_t ms) noexcept {
    return DateTime{kUnixEpochTicks + ms * 10000};
  }
  constexpr int64_t to_unix_ms() const noexcept { return (ticks - kUnixEpochTicks) / 10000; }
  constexpr bool is_null() const noexcept { return ticks == 0; }

  // ISO 8601 UTC with 100 ns precision, e.g. "2026-11-30T04:44:34.1234567Z"; for logs and tests.
  std::string to_string() const;

  friend constexpr auto operator<=>(DateTime, DateTime) noexcept = default;
};

// Guid (Part 6 §5.2.2.7): Data1 UInt32, Data2 UInt16, Data3 UInt16 little-endian, then Data4 as 8 bytes.
struct Guid {
  uint32_t data1 = 0;
  uint16_t data2 = 0;
  uint16_t data3 = 0;
  std::array<uint8_t, 8> data4{};

  // "72962B91-FA75-4AE6-8D28-B404DC7DAF63" (case-insensitive, optional braces).
  static std::optional<Guid> parse(std::string_view text) noexcept;
  std::string to_string() const;  // upper-case canonical form, no braces
  constexpr bool is_null() const noexcept {
    return data1 == 0 && data2 == 0 && data3 == 0 && data4 == std::array<uint8_t, 8>{};
  }

  friend constexpr auto operator<=>(const Guid&, const Guid&) noexcept = default;
};

}  // namespace opcuad::ua
