#include "transport/security/asymmetric.hpp"

#include <openssl/crypto.h>
#include <openssl/x509.h>

#include <cstring>

namespace opcuad::security {

namespace {

void put_u32(uint8_t* p, uint32_t v) noexcept {
  std::memcpy(p, &v, 4);
}

}  // namespace

std::span<const uint8_t> leaf_certificate(std::span<const uint8_t> chain) noexcept {
  const unsigned char* p = chain.data();
  X509* x = d2i_X509(nullptr, &p, static_cast<long>(chain.size()));
  if (x == nullptr) return {};
  X509_free(x);
  return chain.first(static_cast<size_t>(p - chain.data()));
}

Pkey certificate_public_key(std::span<const uint8_t> der) noexcept {
  const unsigned char* p = der.data();
  X509* x = d2i_X509(nullptr, &p, static_cast<long>(der.size()));
  if (x == nullptr) return nullptr;
  Pkey key = adopt(X509_get_pubkey(x));
  X509_free(x);
  return key;
}

Padding compute_padding(size_t payload, size_t signature, size_t plaintext_block, bool extra) noexcept {
  Padding p;
  p.extra = extra;
  const size_t used = payload + signature + 1 + (extra ? 1 : 0);
  p.padding = (plaintext_block - used % plaintext_block) % plaintext_block;
  return p;
}

void write_padding(uint8_t* out, const Padding& p) noexcept {
  // PaddingSize and each padding byte hold the low byte of the size; ExtraPaddingSize the high byte.
  std::memset(out, static_cast<uint8_t>(p.padding & 0xff), p.padding + 1);
  if (p.extra) out[p.padding + 1] = static_cast<uint8_t>(p.padding >> 8);
}

size_t check_padding(std::span<const uint8_t> plaintext, bool extra) noexcept {
  const size_t n = plaintext.size();
  if (n < (extra ? 2u : 1u)) return SIZE_MAX;
  size_t padding;
  size_t low_at;
  if (extra) {
    low_at = n - 2;
    padding = (size_t{plaintext[n - 1]} << 8) | plaintext[n - 2];
  } else {
    low_at = n - 1;
    padding = plaintext[n - 1];
  }
  if (padding > low_at) return SIZE_MAX;
  const uint8_t low = static_cast<uint8_t>(padding & 0xff);
  // Every padding byte carries the low byte of the size; compare all of them without an early exit.
  uint8_t diff = 0;
  for (size_t i = low_at - padding; i <= low_at; ++i) diff |= static_cast<uint8_t>(plaintext[i] ^ low);
  if (diff != 0) return SIZE_MAX;
  return padding + 1 + (extra ? 1 : 0);
}

OpenedChunk open_asymmetric(const Policy& p, EVP_PKEY* own_private_key, EVP_PKEY* sender_public_key,
                            std::span<const uint8_t> chunk, size_t encrypted_from) {
  OpenedChunk r;
  auto fail = [&](std::string reason) {
    r.status = ua::status::BadSecurityChecksFailed;
    r.reason = std::move(reason);
    r.plaintext.clear();
    return std::move(r);
  };
  const size_t own_bytes = rsa_key_bytes(own_private_key);
  const size_t sender_bytes = rsa_key_bytes(sender_public_key);
  if (own_bytes == 0 || sender_bytes == 0) return fail("no RSA key");
  if (encrypted_from >= chunk.size()) return fail("nothing encrypted");
  const auto encrypted = chunk.subspan(encrypted_from);
  if (encrypted.size() % own_bytes != 0) return fail("the encrypted part is not whole blocks of our key");
  // Clear part and decrypted part back to back: the bytes the sender signed. The decrypted part holds
  // the client nonce, from which both sides' keys derive: wiped when it goes, on every path.
  std::vector<uint8_t> message(chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(encrypted_from));
  struct Wipe {
    std::vector<uint8_t>& bytes;
    ~Wipe() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
  } wipe{message};
  if (!asymmetric_decrypt(p, own_private_key, encrypted, message, PlaintextBlocks::Whole))
    return fail("decryption failed");
  if (message.size() < encrypted_from + 8 + sender_bytes) return fail("too short for its signature");
  const size_t signed_size = message.size() - sender_bytes;
  if (!asymmetric_verify(p, sender_public_key, {message.data(), signed_size},
                         {message.data() + signed_size, sender_bytes}))
    return fail("signature does not verify");
  const bool extra = rsa_plaintext_block(p.asymmetric_encryption, own_bytes) > 256;
  const size_t padding =
      check_padding({message.data() + encrypted_from, signed_size - encrypted_from}, extra);
  if (padding == SIZE_MAX || signed_size - encrypted_from < padding + 8) return fail("malformed padding");
  r.status = ua::status::Good;
  r.plaintext.assign(message.begin() + static_cast<ptrdiff_t>(encrypted_from),
                     message.begin() + static_cast<ptrdiff_t>(signed_size - padding));
  return r;
}

bool seal_asymmetric(const Policy& p, EVP_PKEY* own_private_key, EVP_PKEY* receiver_public_key,
                     std::vector<uint8_t>& chunk, size_t encrypted_from) {
  const size_t own_bytes = rsa_key_bytes(own_private_key);
  const size_t receiver_bytes = rsa_key_bytes(receiver_public_key);
  if (own_bytes == 0 || receiver_bytes == 0 || chunk.size() < encrypted_from + 8) return false;
  const size_t block = rsa_plaintext_block(p.asymmetric_encryption, receiver_bytes);
  const Padding pad = compute_padding(chunk.size() - encrypted_from, own_bytes, block, block > 256);
  const size_t padding_at = chunk.size();
  chunk.resize(padding_at + pad.total());
  write_padding(chunk.data() + padding_at, pad);
  const size_t plaintext = chunk.size() + own_bytes - encrypted_from;  // whole blocks by construction
  const size_t total = encrypted_from + plaintext / block * receiver_bytes;
  if (total > UINT32_MAX) return false;
  put_u32(chunk.data() + 4, static_cast<uint32_t>(total));
  const size_t signed_size = chunk.size();
  chunk.resize(signed_size + own_bytes);
  if (!asymmetric_sign(p, own_private_key, {chunk.data(), signed_size},
                       {chunk.data() + signed_size, own_bytes}))
    return false;
  std::vector<uint8_t> sealed(chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(encrypted_from));
  if (!asymmetric_encrypt(p, receiver_public_key,
                          {chunk.data() + encrypted_from, chunk.size() - encrypted_from}, sealed))
    return false;
  if (sealed.size() != total) return false;
  chunk = std::move(sealed);
  return true;
}

}  // namespace opcuad::security
