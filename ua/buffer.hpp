#pragma once
// ByteBuffer: a growable byte buffer for encoding. It never shrinks, so once warm an encoder reusing it
// does not allocate. `headroom` bytes at the front are left for a transport to prepend its headers in
// place (message header, security header, sequence header) without copying the encoded body.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <utility>

namespace opcuad::ua {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  explicit ByteBuffer(size_t capacity) { reserve(capacity); }
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ByteBuffer(ByteBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  ByteBuffer& operator=(ByteBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    return *this;
  }
  ~ByteBuffer() { std::free(data_); }

  uint8_t* data() noexcept { return data_; }
  const uint8_t* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  size_t capacity() const noexcept { return capacity_; }
  std::span<const uint8_t> span() const noexcept { return {data_, size_}; }

  void clear() noexcept { size_ = 0; }
  // Sets the size, growing if needed; new bytes are uninitialised.
  void resize(size_t n) {
    reserve(n);
    size_ = n;
  }
  void reserve(size_t n) {
    if (n > capacity_) grow(n);
  }
  // Returns a pointer to n writable bytes appended at the end.
  uint8_t* extend(size_t n) {
    if (capacity_ - size_ < n) grow(size_ + n);
    uint8_t* p = data_ + size_;
    size_ += n;
    return p;
  }
  void append(const void* p, size_t n) {
    if (n) std::memcpy(extend(n), p, n);
  }

 private:
  void grow(size_t need) {
    size_t cap = capacity_ ? capacity_ : 256;
    while (cap < need) cap *= 2;
    auto* p = static_cast<uint8_t*>(std::realloc(data_, cap));
    if (!p) throw std::bad_alloc();
    data_ = p;
    capacity_ = cap;
  }

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace opcuad::ua
