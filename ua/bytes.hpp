#pragma once
// String, ByteString and XmlElement (Part 6 §5.2.2.4, .7, .8): a length-prefixed byte sequence where
// length -1 means null. Null and empty are different values on the wire and some clients care, so the
// types keep the distinction. They are distinct C++ types so that a Variant knows which built-in type
// it holds.

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace opcuad::ua {

template <class Tag>
class NullableBytes {
 public:
  NullableBytes() = default;                                     // null
  NullableBytes(std::string_view s) : data_(s), null_(false) {}  // NOLINT: implicit from text is the point
  NullableBytes(const char* s) : data_(s), null_(false) {}       // NOLINT
  NullableBytes(std::string s) : data_(std::move(s)), null_(false) {}  // NOLINT
  static NullableBytes from_bytes(std::span<const uint8_t> b) {
    return NullableBytes(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  }

  bool is_null() const noexcept { return null_; }
  bool empty() const noexcept { return data_.empty(); }
  size_t size() const noexcept { return data_.size(); }
  std::string_view view() const noexcept { return data_; }
  const std::string& str() const noexcept { return data_; }
  // The storage itself, for overwriting a secret in place (security::wipe).
  std::string& str_mut() noexcept { return data_; }
  std::span<const uint8_t> bytes() const noexcept {
    return {reinterpret_cast<const uint8_t*>(data_.data()), data_.size()};
  }

  // Assignment that keeps the capacity of the existing buffer (decoding into a reused object).
  void assign(const char* p, size_t n) {
    data_.assign(p, n);
    null_ = false;
  }
  void set_null() noexcept {
    data_.clear();
    null_ = true;
  }

  friend bool operator==(const NullableBytes& a, const NullableBytes& b) noexcept {
    return a.null_ == b.null_ && a.data_ == b.data_;
  }
  friend std::strong_ordering operator<=>(const NullableBytes& a, const NullableBytes& b) noexcept {
    if (a.null_ != b.null_) return a.null_ ? std::strong_ordering::less : std::strong_ordering::greater;
    return a.data_.compare(b.data_) <=> 0;
  }

 private:
  std::string data_;
  bool null_ = true;
};

struct StringTag {};
struct ByteStringTag {};
struct XmlElementTag {};
using String = NullableBytes<StringTag>;
using ByteString = NullableBytes<ByteStringTag>;
using XmlElement = NullableBytes<XmlElementTag>;

}  // namespace opcuad::ua
