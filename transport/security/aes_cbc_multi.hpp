#pragma once
// AES-CBC encryption of several independent buffers at once, with AES-NI (FIPS-197; CBC as in NIST
// SP 800-38A §6.2).
//
// CBC encryption is serial within a buffer: a block's input is the previous block's ciphertext, so one
// buffer leaves the AES unit waiting for each round's result (the aesenc latency). The chunks of one
// secured write are independent CBC streams, each starting from the token's derived IV (Part 6 §6.7.2.5,
// §6.7.5), so their blocks can be interleaved: one block of each live stream per round, up to kLanes
// streams in flight, which hides the latency and keeps both AES pipes busy. A stream that ends hands its
// lane to the next buffer.
//
// The functions that use AES-NI are compiled for it alone (a target attribute) and reached only when
// available() says the CPU has it; otherwise the caller keeps OpenSSL's EVP path (SymmetricCipher).
//
// The expanded key is secret: it is wiped when the encryptor is destroyed, rekeyed or cleared, and a move
// wipes the source.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace opcuad::security {

class AesCbcEncryptor {
 public:
  // Buffers advanced together (8 x 16-byte states fit the 16 XMM registers with the round key).
  static constexpr size_t kLanes = 8;
  static constexpr size_t kBlock = 16;

  // True when this CPU has AES-NI (checked once per process).
  static bool available() noexcept;

  AesCbcEncryptor() = default;
  ~AesCbcEncryptor() { clear(); }
  AesCbcEncryptor(const AesCbcEncryptor&) = delete;
  AesCbcEncryptor& operator=(const AesCbcEncryptor&) = delete;
  AesCbcEncryptor(AesCbcEncryptor&& other) noexcept;
  AesCbcEncryptor& operator=(AesCbcEncryptor&& other) noexcept;

  // Expands an AES-128 (16-byte) or AES-256 (32-byte) key (FIPS-197 §5.2) and keeps the IV. False for
  // another key length or without AES-NI; the encryptor is then cleared.
  [[nodiscard]] bool set_key(std::span<const uint8_t> key, std::span<const uint8_t, kBlock> iv) noexcept;
  // Wipes the key schedule and the IV.
  void clear() noexcept;
  bool ready() const noexcept { return rounds_ != 0; }

  // Encrypts each buffer in place with CBC from the IV, every buffer its own stream. Each must be a whole
  // number of blocks (empty ones are skipped); false, and nothing encrypted, when one is not or the
  // encryptor has no key.
  [[nodiscard]] bool encrypt(std::span<const std::span<uint8_t>> buffers) const noexcept;

 private:
  // Nr + 1 round keys, Nr = 10 (AES-128) or 14 (AES-256); 16-byte aligned for the AES instructions.
  alignas(16) std::array<uint8_t, 15 * kBlock> round_keys_{};
  std::array<uint8_t, kBlock> iv_{};
  uint32_t rounds_ = 0;  // 0: no key
};

}  // namespace opcuad::security
