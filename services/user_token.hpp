#pragma once
// The cryptography of sessions (Part 4 §5.6.2, §5.6.3, §7.41), socket-free so tests can hand it hostile
// bytes directly: the legacy encrypted secret of a UserNameIdentityToken, and the parts of a certificate the
// session services check (its leaf, its ApplicationUri, its public key, its thumbprint).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "transport/security/asymmetric.hpp"
#include "transport/security/crypto.hpp"
#include "transport/security/policy.hpp"
#include "transport/security/secret.hpp"
#include "ua/status_code.hpp"

namespace opcuad::services {

// Part 4 §7.41.2.2 (Table 186): `ciphertext` is RSA-encrypted with the server's public key, with the user
// token policy's asymmetric encryption; its plaintext is a UInt32 length (of the password and the nonce),
// the password, the last ServerNonce, then nothing or zero padding. On Good `password` holds the secret.
// BadIdentityTokenInvalid: not decryptable, a length prefix that does not fit, non-zero padding, a secret
// above kMaxSecretBytes, more blocks than the length prefix needs; BadIdentityTokenRejected: the trailing
// nonce is not `server_nonce` (a replay). The first block is decrypted alone and its length prefix checked
// before any other: a hostile token costs one RSA decryption, a good one the blocks its length needs.
// `rsa_blocks`, when given, is set to the number of blocks decrypted.
inline constexpr size_t kMaxSecretBytes = 4096;
[[nodiscard]] ua::StatusCode decrypt_legacy_secret(const security::Policy& policy, EVP_PKEY* private_key,
                                                   std::span<const uint8_t> ciphertext,
                                                   std::span<const uint8_t> server_nonce,
                                                   security::Secret& password, size_t* rsa_blocks = nullptr);

// The URI of a certificate's subjectAltName (Part 6 §6.2.2: the ApplicationUri), or nullopt.
std::optional<std::string> certificate_application_uri(std::span<const uint8_t> der);

}  // namespace opcuad::services
