#pragma once
// The cryptographic operations of the security policies (Part 6 §6.7; Part 7), on OpenSSL 3's EVP API.
//
// Asymmetric operations (OpenSecureChannel, session signatures, encrypted user token secrets) cost
// milliseconds and allocate; they run on the handshake workers, never on a shard's request path.
// Symmetric operations (every MSG/CLO chunk of a secured channel) go through SymmetricCipher, which keeps
// its contexts for the channel's life and works in place in the chunk buffer. Its AES-CBC encryption runs
// on AesCbcEncryptor (aes_cbc_multi.hpp, AES-NI, several chunks at once) when the CPU has AES-NI, and on
// OpenSSL's EVP otherwise; decryption is always EVP's (CBC decryption is parallel within a chunk already).

#include <openssl/sha.h>
#include <openssl/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "transport/security/aes_cbc_multi.hpp"
#include "transport/security/policy.hpp"

namespace opcuad::security {

// A key shared by whoever uses it (EVP_PKEY is safe to use from several threads with one EVP_PKEY_CTX each).
using Pkey = std::shared_ptr<EVP_PKEY>;
// Takes ownership of `key` (null stays null).
Pkey adopt(EVP_PKEY* key);

// Fills `out` from OpenSSL's CSPRNG; false when it fails (then nothing random may be used).
[[nodiscard]] bool random_bytes(std::span<uint8_t> out) noexcept;

std::array<uint8_t, 20> sha1(std::span<const uint8_t> data) noexcept;

// The RSA modulus size in bytes (the signature size, and the ciphertext block size), or 0 if not RSA.
size_t rsa_key_bytes(const EVP_PKEY* key) noexcept;

// Asymmetric signature with the policy's algorithm: `signature` must be rsa_key_bytes(private_key) long.
[[nodiscard]] bool asymmetric_sign(const Policy& p, EVP_PKEY* private_key, std::span<const uint8_t> data,
                                   std::span<uint8_t> signature) noexcept;
[[nodiscard]] bool asymmetric_verify(const Policy& p, EVP_PKEY* public_key, std::span<const uint8_t> data,
                                     std::span<const uint8_t> signature) noexcept;

// Asymmetric encryption block by block (Part 6 §6.7.2.5): the plaintext must be a whole number of
// plaintext blocks (rsa_plaintext_block) unless `pad_last` allows a short final block (encrypted secrets).
// Writes (plaintext blocks) x key bytes into `out`; false on failure.
[[nodiscard]] bool asymmetric_encrypt(const Policy& p, EVP_PKEY* public_key,
                                      std::span<const uint8_t> plaintext, std::vector<uint8_t>& out);
// How long each decrypted block must be. OpenSecureChannel messages are padded to whole plaintext blocks
// (Part 6 §6.7.2.5); an encrypted secret's last block may be short (Part 4 §7.41.2.2).
enum class PlaintextBlocks : uint8_t { Whole, LastMayBeShort };
// Decrypts whole ciphertext blocks; a wrong key or damaged block fails (no partial result is kept).
// PKCS#1 v1.5 (Basic128Rsa15) never fails on a block's padding: OpenSSL 3.0 (Debian 12) reports a bad
// padding through the time it takes, the oracle of Bleichenbacher's attack and its timing variant
// (Marvin), so the padding is checked in constant time and a block that fails it, or that is short where
// `blocks` wants it whole, yields a stand-in plaintext of a whole block, derived from the ciphertext
// and a per-process secret (the implicit rejection of OpenSSL 3.2 and
// draft-irtf-cfrg-rsa-guidance): the caller's next check (the OPN signature, the secret's length and
// nonce) refuses it the same way, after the same work, as any other wrong plaintext.
[[nodiscard]] bool asymmetric_decrypt(const Policy& p, EVP_PKEY* private_key,
                                      std::span<const uint8_t> ciphertext, std::vector<uint8_t>& out,
                                      PlaintextBlocks blocks = PlaintextBlocks::LastMayBeShort);

// P_SHA1 / P_SHA256 (Part 6 §6.7.5, RFC 5246 §5): fills `out` from secret and seed.
void p_hash(Digest digest, std::span<const uint8_t> secret, std::span<const uint8_t> seed,
            std::span<uint8_t> out);

struct SymmetricKeys {
  std::array<uint8_t, 32> signing{};
  std::array<uint8_t, 32> encrypting{};
  std::array<uint8_t, 16> iv{};
};
// Part 6 §6.7.5: the keys one side secures its messages with. The client's keys are derived with the server
// nonce as secret and the client nonce as seed; the server's with the client nonce as secret and the server
// nonce as seed. Output order: signing key, encrypting key, initialization vector.
SymmetricKeys derive_keys(const Policy& p, std::span<const uint8_t> secret, std::span<const uint8_t> seed);

// Defined by the unit tests (tests/unit/security/crypto_test.cpp): keys set up for the EVP encryption path
// on a CPU with AES-NI, so that path is tested too.
struct SymmetricCipherTestAccess;

// One direction's symmetric algorithms with its keys, reused for every chunk: HMAC over a span, AES-CBC in
// place. Contexts are created once (set_keys); per chunk nothing is allocated.
class SymmetricCipher {
 public:
  SymmetricCipher();
  ~SymmetricCipher();
  SymmetricCipher(SymmetricCipher&&) noexcept;
  SymmetricCipher& operator=(SymmetricCipher&&) noexcept;

  [[nodiscard]] bool set_keys(const Policy& p, const SymmetricKeys& keys);
  const Policy* policy() const noexcept { return policy_; }
  size_t signature_length() const noexcept { return policy_ ? policy_->signature_length : 0; }

  // HMAC of `data` into `out` (signature_length() bytes).
  [[nodiscard]] bool sign(std::span<const uint8_t> data, uint8_t* out) noexcept;
  // Constant-time comparison of the HMAC of `data` with `signature`.
  [[nodiscard]] bool verify(std::span<const uint8_t> data, std::span<const uint8_t> signature) noexcept;
  // AES-CBC with the derived IV over whole blocks, in place.
  [[nodiscard]] bool encrypt(std::span<uint8_t> data) noexcept;
  // The same for each buffer, every one its own CBC stream from the derived IV (Part 6 §6.7.2.5: each chunk
  // is encrypted on its own). With AES-NI up to AesCbcEncryptor::kLanes buffers are encrypted together;
  // without, one after another. False when a buffer is not whole blocks (then nothing is encrypted with
  // AES-NI; with EVP the buffers before it are).
  [[nodiscard]] bool encrypt_each(std::span<const std::span<uint8_t>> buffers) noexcept;
  [[nodiscard]] bool decrypt(std::span<uint8_t> data) noexcept;
  // Whether encryption runs on AesCbcEncryptor (AES-NI) rather than EVP.
  bool encrypts_with_aesni() const noexcept { return aes_.ready(); }

 private:
  friend struct SymmetricCipherTestAccess;
  [[nodiscard]] bool set_keys(const Policy& p, const SymmetricKeys& keys, bool allow_aesni);
  [[nodiscard]] bool evp_encrypt(std::span<uint8_t> data) noexcept;

  const Policy* policy_ = nullptr;
  SymmetricKeys keys_{};
  // HMAC as two hash states keyed once per token (RFC 2104: key ^ ipad, key ^ opad); a chunk's signature
  // starts from copies, so it costs no allocation and no key schedule.
  struct Hmac {
    SHA256_CTX inner256{}, outer256{};
    SHA_CTX inner1{}, outer1{};
  } mac_;
  AesCbcEncryptor aes_;            // with AES-NI: the encryption (its key schedule is wiped with it)
  EVP_CIPHER_CTX* enc_ = nullptr;  // without: EVP's (not allocated while aes_ is ready)
  EVP_CIPHER_CTX* dec_ = nullptr;
};

}  // namespace opcuad::security
