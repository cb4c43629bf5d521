#pragma once
// Encoder: writes the OPC UA binary encoding (Part 6 §5.2, little-endian) into a ByteBuffer.
//
// Encoding cannot fail on well-formed values except when a value exceeds what the encoding can carry
// (a string longer than Int32 allows); that sets a sticky status, checked once at the end.

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ua/buffer.hpp"
#include "ua/status_code.hpp"

namespace opcuad::ua {

static_assert(std::endian::native == std::endian::little, "opcuad targets little-endian machines");

class Encoder {
 public:
  explicit Encoder(ByteBuffer& out) noexcept : out_(&out) {}

  void write_u8(uint8_t v) { *out_->extend(1) = v; }
  void write_u16(uint16_t v) { std::memcpy(out_->extend(2), &v, 2); }
  void write_u32(uint32_t v) { std::memcpy(out_->extend(4), &v, 4); }
  void write_u64(uint64_t v) { std::memcpy(out_->extend(8), &v, 8); }
  void write_i32(int32_t v) { write_u32(static_cast<uint32_t>(v)); }
  void write_f32(float v) { std::memcpy(out_->extend(4), &v, 4); }
  void write_f64(double v) { std::memcpy(out_->extend(8), &v, 8); }
  void write_raw(const void* p, size_t n) { out_->append(p, n); }
  // `n` more bytes at the end, for the caller to fill at once (one growth check for a whole fixed-size
  // encoding). REQUIRES: the caller writes all n.
  uint8_t* write_span(size_t n) { return out_->extend(n); }
  // A length-prefixed byte string; null writes length -1.
  void write_bytes(bool is_null, std::string_view b) {
    if (is_null) return write_i32(-1);
    if (b.size() > 0x7FFFFFFFu) return fail(status::BadEncodingLimitsExceeded);
    write_i32(static_cast<int32_t>(b.size()));
    write_raw(b.data(), b.size());
  }
  // Array length prefix; REQUIRES: n fits Int32, otherwise the encoder fails.
  void write_length(size_t n) {
    if (n > 0x7FFFFFFFu) return fail(status::BadEncodingLimitsExceeded);
    write_i32(static_cast<int32_t>(n));
  }

  // Position and back-patching, for length prefixes known only after the body is written.
  size_t position() const noexcept { return out_->size(); }
  void patch_u32(size_t pos, uint32_t v) noexcept { std::memcpy(out_->data() + pos, &v, 4); }

  void fail(StatusCode s) noexcept {
    if (status_.is_good()) status_ = s;
  }
  StatusCode status() const noexcept { return status_; }
  ByteBuffer& buffer() noexcept { return *out_; }

 private:
  ByteBuffer* out_;
  StatusCode status_;
};

}  // namespace opcuad::ua
