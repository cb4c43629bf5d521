#pragma once
// Decoder: reads the OPC UA binary encoding from a span, never past its end.
//
// Error policy: bytes come from the network, so nothing here asserts or throws on them. The first
// problem sets a sticky status (BadDecodingError for malformed input, BadEncodingLimitsExceeded for a
// configured limit) and from then on every read returns zero without moving, so generated decoders run
// straight through and the caller checks status() once. Every length is checked against both the
// configured limit and the bytes that remain (times the element's smallest encoded size) before anything
// is allocated, so no allocation is ever sized by a number the peer chose beyond what it also sent.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include "ua/status_code.hpp"

namespace opcuad::ua {

struct DecodeLimits {
  uint32_t max_string_length = 16u << 20;       // bytes, for String and XmlElement
  uint32_t max_byte_string_length = 16u << 20;  // bytes
  uint32_t max_array_length = 1u << 20;         // elements, for every array
  uint32_t max_depth = 100;  // nesting of Variant / DataValue / ExtensionObject / DiagnosticInfo (Part 6)
  // Memory the decoded form may take (arrays' elements and decoded ExtensionObject bodies, counted at
  // their C++ size before they are allocated): at most decoded_bytes_per_input_byte times the input plus
  // decoded_bytes_base, and never more than max_decoded_bytes. A 1-byte element that becomes a 100-byte
  // object cannot make a 16 MiB request cost gigabytes (docs/SECURITY.md).
  size_t max_decoded_bytes = 32u << 20;
  uint32_t decoded_bytes_per_input_byte = 32;
  size_t decoded_bytes_base = 1u << 20;
};

class Decoder {
 public:
  explicit Decoder(std::span<const uint8_t> in, const DecodeLimits& limits = default_limits()) noexcept
      : pos_(in.data()),
        end_(in.data() + in.size()),
        limits_(&limits),
        budget_(std::min(limits.max_decoded_bytes,
                         limits.decoded_bytes_base + in.size() * limits.decoded_bytes_per_input_byte)) {}

  static const DecodeLimits& default_limits() noexcept {
    static const DecodeLimits limits;
    return limits;
  }
  const DecodeLimits& limits() const noexcept { return *limits_; }

  uint8_t read_u8() noexcept {
    uint8_t v = 0;
    read_raw(&v, 1);
    return v;
  }
  uint16_t read_u16() noexcept {
    uint16_t v = 0;
    read_raw(&v, 2);
    return v;
  }
  uint32_t read_u32() noexcept {
    uint32_t v = 0;
    read_raw(&v, 4);
    return v;
  }
  uint64_t read_u64() noexcept {
    uint64_t v = 0;
    read_raw(&v, 8);
    return v;
  }
  int32_t read_i32() noexcept { return static_cast<int32_t>(read_u32()); }
  float read_f32() noexcept {
    float v = 0;
    read_raw(&v, 4);
    return v;
  }
  double read_f64() noexcept {
    double v = 0;
    read_raw(&v, 8);
    return v;
  }
  void read_raw(void* out, size_t n) noexcept {
    if (static_cast<size_t>(end_ - pos_) < n) return fail(status::BadDecodingError);
    std::memcpy(out, pos_, n);
    pos_ += n;
  }
  // Takes n bytes in place (the span stays valid as long as the input does).
  std::span<const uint8_t> take(size_t n) noexcept {
    if (static_cast<size_t>(end_ - pos_) < n) {
      fail(status::BadDecodingError);
      return {};
    }
    std::span<const uint8_t> s(pos_, n);
    pos_ += n;
    return s;
  }

  // The next n bytes in place without consuming them, or nullptr when fewer remain (no error is set).
  const uint8_t* peek(size_t n) const noexcept {
    return static_cast<size_t>(end_ - pos_) >= n ? pos_ : nullptr;
  }
  // Consumes n bytes already looked at through peek(). REQUIRES: n <= remaining().
  void skip(size_t n) noexcept { pos_ += n; }
  // A null String or ByteString (length prefix -1, what an IndexRange or a DataEncoding name usually is):
  // consumed, and true. Otherwise nothing is read.
  bool skip_null_bytes() noexcept {
    uint32_t n = 0;
    if (end_ - pos_ < 4) return false;
    std::memcpy(&n, pos_, 4);
    if (n != 0xFFFFFFFFu) return false;
    pos_ += 4;
    return true;
  }
  // Reads a String / ByteString length prefix: returns -1 for null, else a length checked against `limit`
  // and the remaining input. On error returns -1 with the status set.
  int32_t read_bytes_length(uint32_t limit) noexcept {
    int32_t n = read_i32();
    if (n < -1) {
      fail(status::BadDecodingError);
      return -1;
    }
    if (n > 0 && static_cast<uint32_t>(n) > limit) {
      fail(status::BadEncodingLimitsExceeded);
      return -1;
    }
    if (n > 0 && static_cast<size_t>(n) > remaining()) {
      fail(status::BadDecodingError);
      return -1;
    }
    return ok() ? n : -1;
  }
  // Reads an array length prefix: -1 (null) reads as 0. The count is checked against the configured limit
  // and against the input left, given that each element takes at least min_element_size bytes.
  uint32_t read_array_length(size_t min_element_size) noexcept {
    int32_t n = read_i32();
    if (n < -1) {
      fail(status::BadDecodingError);
      return 0;
    }
    if (n <= 0 || !ok()) return 0;
    auto count = static_cast<uint32_t>(n);
    if (count > limits_->max_array_length) {
      fail(status::BadEncodingLimitsExceeded);
      return 0;
    }
    if (min_element_size > 0 && count > remaining() / min_element_size) {
      fail(status::BadDecodingError);
      return 0;
    }
    return count;
  }

  // Charges `bytes` of decoded memory against the budget (DecodeLimits::max_decoded_bytes and its
  // relation to the input size) before they are allocated; false, with BadEncodingLimitsExceeded, when
  // the decoded request would take more.
  [[nodiscard]] bool charge(size_t bytes) noexcept {
    if (bytes > budget_) {
      fail(status::BadEncodingLimitsExceeded);
      return false;
    }
    budget_ -= bytes;
    return true;
  }
  size_t decoded_budget() const noexcept { return budget_; }

  // Nesting guard for recursive types; leave() must follow every successful enter().
  [[nodiscard]] bool enter() noexcept {
    if (++depth_ > limits_->max_depth) {
      --depth_;
      fail(status::BadEncodingLimitsExceeded);
      return false;
    }
    return true;
  }
  void leave() noexcept { --depth_; }
  uint32_t depth() const noexcept { return depth_; }
  // A nested decoder over part of this input (an ExtensionObject body) shares limits and depth.
  // It draws on this decoder's memory budget: absorb() it afterwards to take back what it spent.
  Decoder sub(std::span<const uint8_t> in) const noexcept {
    Decoder d(in, *limits_);
    d.depth_ = depth_;
    d.budget_ = budget_;
    return d;
  }
  void absorb(const Decoder& sub) noexcept { budget_ = std::min(budget_, sub.budget_); }

  void fail(StatusCode s) noexcept {
    if (status_.is_good()) status_ = s;
    pos_ = end_;  // nothing more is read once decoding has failed
  }
  bool ok() const noexcept { return status_.is_good(); }
  StatusCode status() const noexcept { return status_; }
  size_t remaining() const noexcept { return static_cast<size_t>(end_ - pos_); }
  const uint8_t* position() const noexcept { return pos_; }

 private:
  const uint8_t* pos_;
  const uint8_t* end_;
  const DecodeLimits* limits_;
  uint32_t depth_ = 0;
  size_t budget_;  // decoded bytes still allowed
  StatusCode status_;
};

}  // namespace opcuad::ua
