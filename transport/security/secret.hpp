#pragma once
// Secrets in memory: passwords, channel nonces, decrypted OpenSecureChannel bodies. Their bytes are
// overwritten with OPENSSL_cleanse (which the compiler may not drop as a dead store) before the memory is
// given back, the whole allocation, not only the bytes in use. `Secret` keeps a password in a heap buffer
// of its own, so that moving it from thread to thread hands over the buffer instead of copying the bytes
// (a std::string copies short texts into the moved-to object and leaves them in the moved-from one).

#include <openssl/crypto.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opcuad::security {

inline void wipe(std::span<uint8_t> bytes) noexcept {
  if (!bytes.empty()) OPENSSL_cleanse(bytes.data(), bytes.size());
}

// Overwrites every byte `bytes` has allocated, then empties it (the allocation stays).
template <typename Byte>
void wipe(std::vector<Byte>& bytes) noexcept {
  static_assert(sizeof(Byte) == 1);
  bytes.resize(bytes.capacity());  // within the capacity: no allocation, cannot throw
  if (!bytes.empty()) OPENSSL_cleanse(bytes.data(), bytes.size());
  bytes.clear();
}

inline void wipe(std::string& text) noexcept {
  text.resize(text.capacity());  // the small-string buffer too
  if (!text.empty()) OPENSSL_cleanse(text.data(), text.size());
  text.clear();
}

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::string_view text) { assign(text); }
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;
  Secret(Secret&& other) noexcept : bytes_(std::move(other.bytes_)) {}
  Secret& operator=(Secret&& other) noexcept {
    if (this != &other) {
      wipe(bytes_);
      bytes_ = std::move(other.bytes_);
    }
    return *this;
  }
  ~Secret() { wipe(bytes_); }

  // Replaces the secret; the old bytes are wiped. The buffer is never shorter than kMinimum, so short
  // secrets do not land in an inline buffer either.
  void assign(std::string_view text) {
    wipe(bytes_);
    bytes_.reserve(std::max(text.size(), kMinimum));
    bytes_.assign(text.begin(), text.end());
  }
  std::string_view view() const noexcept { return {bytes_.data(), bytes_.size()}; }
  std::span<const uint8_t> bytes() const noexcept {
    return {reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()};
  }
  size_t size() const noexcept { return bytes_.size(); }
  bool empty() const noexcept { return bytes_.empty(); }

 private:
  static constexpr size_t kMinimum = 32;
  std::vector<char> bytes_;
};

}  // namespace opcuad::security
