#pragma once
// Security policies (Part 7, "Security Policies"; Part 6 §6.7): the algorithms and sizes of each policy
// opcuad offers, as data. The secure channel, the session signatures and the user-token encryption all read
// their algorithms from here, so a policy is added in one place.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace opcuad::security {

enum class PolicyId : uint8_t {
  None,
  Basic128Rsa15,
  Basic256,
  Basic256Sha256,
  Aes128_Sha256_RsaOaep,
  Aes256_Sha256_RsaPss
};

enum class AsymmetricSignature : uint8_t { None, RsaPkcs15Sha1, RsaPkcs15Sha256, RsaPssSha256 };
enum class AsymmetricEncryption : uint8_t { None, RsaPkcs15, RsaOaepSha1, RsaOaepSha256 };
enum class Digest : uint8_t { None, Sha1, Sha256 };

struct Policy {
  PolicyId id;
  std::string_view uri;
  std::string_view name;  // the URI's fragment, as configurations spell it
  bool deprecated;        // offered only with security.allow_deprecated_policies (Part 7 marks it deprecated)
  AsymmetricSignature asymmetric_signature;
  AsymmetricEncryption asymmetric_encryption;
  std::string_view asymmetric_signature_uri;   // SignatureData.algorithm (Part 4 §7.37)
  std::string_view asymmetric_encryption_uri;  // encrypted user token secrets (Part 4 §7.41)
  Digest symmetric_signature;                  // HMAC with this digest
  Digest key_derivation;                       // P_SHA1 or P_SHA256 (Part 6 §6.7.5)
  uint32_t signing_key_length;                 // bytes of the derived HMAC key
  uint32_t signature_length;                   // bytes of the HMAC
  uint32_t encrypting_key_length;              // bytes of the derived AES key (16: AES-128, 32: AES-256)
  uint32_t block_size;                         // AES block and IV size
  uint32_t nonce_length;                // secure channel nonces (Part 6 §6.7.5: at least the key length)
  uint32_t min_key_bits, max_key_bits;  // the RSA key sizes a certificate may have
  bool sha1_certificates;               // certificates signed with SHA-1 are acceptable
  uint8_t security_level;               // relative strength, for EndpointDescription.securityLevel
};

// The policy with this URI (or configuration name, e.g. "Basic256Sha256"), or nullptr.
const Policy* find_policy(std::string_view uri_or_name) noexcept;
const Policy& policy(PolicyId id) noexcept;
std::span<const Policy> all_policies() noexcept;

constexpr size_t digest_size(Digest d) noexcept {
  return d == Digest::Sha1 ? 20 : d == Digest::Sha256 ? 32 : 0;
}

// Bytes an RSA block of `key_bytes` can carry in plaintext with this padding (Part 6 §6.7.2.5).
constexpr size_t rsa_plaintext_block(AsymmetricEncryption e, size_t key_bytes) noexcept {
  switch (e) {
    case AsymmetricEncryption::RsaPkcs15:
      return key_bytes - 11;
    case AsymmetricEncryption::RsaOaepSha1:
      return key_bytes - 42;  // 2 * 20 + 2
    case AsymmetricEncryption::RsaOaepSha256:
      return key_bytes - 66;  // 2 * 32 + 2
    case AsymmetricEncryption::None:
      return key_bytes;
  }
  return key_bytes;
}

}  // namespace opcuad::security
