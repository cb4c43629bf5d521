#pragma once
// Asymmetric security of OpenSecureChannel chunks (Part 6 §6.7.2): the receiver's decryption, signature
// check and padding check, and the sender's padding, signature and encryption. Byte layout only; the secure
// channel decides what the chunk says. These take milliseconds (RSA private-key operations): the channel
// runs them on its handshake workers.
//
// A secured OPN chunk is
//   MessageHeader (12) | SecurityPolicyUri | SenderCertificate | ReceiverCertificateThumbprint   (clear)
//   SequenceHeader (8) | body | padding | signature                                             (encrypted)
// The signature (the sender's key) covers everything before it, the header with the final MessageSize
// included; the encryption (the receiver's key) covers everything after the security header, in blocks.

#include <openssl/crypto.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "transport/security/crypto.hpp"
#include "transport/security/identity.hpp"
#include "transport/security/policy.hpp"
#include "ua/status_code.hpp"

namespace opcuad::security {

// The first certificate of a DER chain (its bytes within `chain`); empty when it does not parse.
std::span<const uint8_t> leaf_certificate(std::span<const uint8_t> chain) noexcept;
// The public key of a DER certificate, or null.
Pkey certificate_public_key(std::span<const uint8_t> der) noexcept;

struct OpenedChunk {
  ua::StatusCode status;
  std::string reason;
  std::vector<uint8_t> plaintext;  // SequenceHeader | body, padding and signature removed; wiped with it

  OpenedChunk() = default;
  OpenedChunk(OpenedChunk&&) noexcept = default;
  OpenedChunk& operator=(OpenedChunk&&) noexcept = default;
  ~OpenedChunk() { OPENSSL_cleanse(plaintext.data(), plaintext.size()); }
};

// Decrypts (with our private key) and verifies (with the sender's public key) a secured OPN chunk whose
// clear part ends at `encrypted_from`. Every failure is BadSecurityChecksFailed, with the reason.
OpenedChunk open_asymmetric(const Policy& p, EVP_PKEY* own_private_key, EVP_PKEY* sender_public_key,
                            std::span<const uint8_t> chunk, size_t encrypted_from);

// Seals an OPN chunk in place: `chunk` holds the clear part up to `encrypted_from`, then SequenceHeader and
// body. Adds the padding, patches the MessageSize, signs with our private key, encrypts for the receiver.
// False when a key operation fails.
[[nodiscard]] bool seal_asymmetric(const Policy& p, EVP_PKEY* own_private_key, EVP_PKEY* receiver_public_key,
                                   std::vector<uint8_t>& chunk, size_t encrypted_from);

// Padding for a message secured with a block cipher (Part 6 §6.7.2.5): the bytes to add so that
// `payload` (after the security header, before the signature) + the padding-size byte(s) + padding +
// `signature` fill whole plaintext blocks. An ExtraPaddingSize byte follows when the encryption key is
// longer than 2048 bits (plaintext blocks above 256 bytes).
struct Padding {
  size_t padding = 0;  // value of PaddingSize (and ExtraPaddingSize << 8)
  bool extra = false;
  size_t total() const noexcept { return padding + 1 + (extra ? 1 : 0); }
};
Padding compute_padding(size_t payload, size_t signature, size_t plaintext_block, bool extra) noexcept;
// Writes the padding bytes (each the low byte of the padding size, then the extra byte) at `out`.
void write_padding(uint8_t* out, const Padding& p) noexcept;
// Reads and checks the padding that ends at `end` (exclusive) of `plaintext`; returns its total length, or
// SIZE_MAX when it is malformed.
size_t check_padding(std::span<const uint8_t> plaintext, bool extra) noexcept;

}  // namespace opcuad::security
