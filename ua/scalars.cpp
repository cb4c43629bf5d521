#include "ua/scalars.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>

namespace opcuad::ua {

std::string DateTime::to_string() const {
  const int64_t since_unix = ticks - kUnixEpochTicks;
  int64_t secs = since_unix / 10000000;
  int64_t frac = since_unix % 10000000;
  if (frac < 0) {
    frac += 10000000;
    --secs;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return "invalid";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%07dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(frac));
  return buf;
}

std::optional<Guid> Guid::parse(std::string_view text) noexcept {
  if (text.size() == 38 && text.front() == '{' && text.back() == '}') text = text.substr(1, 36);
  if (text.size() != 36 || text[8] != '-' || text[13] != '-' || text[18] != '-' || text[23] != '-') {
    return std::nullopt;
  }
  auto hex = [&](size_t pos, size_t len, auto& out) {
    auto [p, ec] = std::from_chars(text.data() + pos, text.data() + pos + len, out, 16);
    return ec == std::errc() && p == text.data() + pos + len;
  };
  Guid g;
  uint32_t d2 = 0, d3 = 0;
  if (!hex(0, 8, g.data1) || !hex(9, 4, d2) || !hex(14, 4, d3)) return std::nullopt;
  g.data2 = static_cast<uint16_t>(d2);
  g.data3 = static_cast<uint16_t>(d3);
  static constexpr size_t kData4At[8] = {19, 21, 24, 26, 28, 30, 32, 34};
  for (size_t i = 0; i < 8; ++i) {
    unsigned b = 0;
    if (!hex(kData4At[i], 2, b)) return std::nullopt;
    g.data4[i] = static_cast<uint8_t>(b);
  }
  return g;
}

std::string Guid::to_string() const {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", data1, data2, data3,
                data4[0], data4[1], data4[2], data4[3], data4[4], data4[5], data4[6], data4[7]);
  return buf;
}

}  // namespace opcuad::ua
