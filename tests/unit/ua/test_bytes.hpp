#pragma once
// Helpers for codec tests: hex byte literals and encode/decode round trips.

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ua/codec.hpp"

namespace opcuad::ua::test {

// "00 48 0a" -> {0x00, 0x48, 0x0a}; spaces are ignored.
inline std::vector<uint8_t> hex(std::string_view text) {
  std::vector<uint8_t> out;
  int nibble = -1;
  for (char c : text) {
    int v;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if (c >= 'a' && c <= 'f')
      v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v = c - 'A' + 10;
    else
      continue;
    if (nibble < 0) {
      nibble = v;
    } else {
      out.push_back(static_cast<uint8_t>(nibble << 4 | v));
      nibble = -1;
    }
  }
  return out;
}

template <class T>
std::vector<uint8_t> encoded(const T& v) {
  ByteBuffer buf;
  REQUIRE(encode_to(buf, v).is_good());
  return {buf.data(), buf.data() + buf.size()};
}

// Encodes, decodes into a fresh object, checks equality and that re-encoding gives the same bytes.
template <class T>
T round_trip(const T& v) {
  auto bytes = encoded(v);
  T back{};
  StatusCode s = decode_from(bytes, back);
  INFO("decode status " << s.name());
  REQUIRE(s.is_good());
  REQUIRE(encoded(back) == bytes);
  return back;
}

template <class T>
StatusCode decode_status(const std::vector<uint8_t>& bytes,
                         const DecodeLimits& limits = Decoder::default_limits()) {
  T v{};
  return decode_from(bytes, v, limits);
}

}  // namespace opcuad::ua::test
