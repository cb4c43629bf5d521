// SymmetricCipher's HMAC uses the SHA1_* / SHA256_* functions: deprecated in OpenSSL 3, but they run on a
// caller-owned state that can be copied by value, so a chunk's signature allocates nothing (EVP_MAC and
// EVP_MD_CTX_copy duplicate provider contexts with malloc on every use).
#define OPENSSL_SUPPRESS_DEPRECATED
#include "transport/security/crypto.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace opcuad::security {

namespace {

const EVP_MD* md_of(Digest d) noexcept {
  return d == Digest::Sha1 ? EVP_sha1() : EVP_sha256();
}

const EVP_CIPHER* cipher_of(const Policy& p) noexcept {
  return p.encrypting_key_length == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc();
}

struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const noexcept { EVP_PKEY_CTX_free(c); }
};
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

// Sets the RSA padding of an encryption context per policy.
bool set_encryption_padding(EVP_PKEY_CTX* ctx, AsymmetricEncryption e) noexcept {
  switch (e) {
    case AsymmetricEncryption::RsaPkcs15:
      return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0;
    case AsymmetricEncryption::RsaOaepSha1:
      return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0 &&
             EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha1()) > 0 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha1()) > 0;
    case AsymmetricEncryption::RsaOaepSha256:
      return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) > 0 &&
             EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) > 0 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) > 0;
    case AsymmetricEncryption::None:
      return false;
  }
  return false;
}

// The digest and padding of a signature context per policy. RSA-PSS-SHA2-256 (Part 7) uses MGF1 with
// SHA-256 and a salt as long as the digest.
bool set_signature_padding(EVP_PKEY_CTX* ctx, AsymmetricSignature s) noexcept {
  if (s == AsymmetricSignature::RsaPssSha256) {
    return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) > 0 &&
           EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, RSA_PSS_SALTLEN_DIGEST) > 0 &&
           EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) > 0;
  }
  return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) > 0;
}

const EVP_MD* signature_md(AsymmetricSignature s) noexcept {
  return s == AsymmetricSignature::RsaPkcs15Sha1 ? EVP_sha1() : EVP_sha256();
}

}  // namespace

Pkey adopt(EVP_PKEY* key) {
  if (key == nullptr) return nullptr;
  return Pkey(key, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
}

bool random_bytes(std::span<uint8_t> out) noexcept {
  return out.empty() || RAND_bytes(out.data(), static_cast<int>(out.size())) == 1;
}

std::array<uint8_t, 20> sha1(std::span<const uint8_t> data) noexcept {
  std::array<uint8_t, 20> out{};
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &n, EVP_sha1(), nullptr);
  return out;
}

size_t rsa_key_bytes(const EVP_PKEY* key) noexcept {
  if (key == nullptr || EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) return 0;
  return static_cast<size_t>(EVP_PKEY_get_size(key));
}

bool asymmetric_sign(const Policy& p, EVP_PKEY* private_key, std::span<const uint8_t> data,
                     std::span<uint8_t> signature) noexcept {
  const size_t key_bytes = rsa_key_bytes(private_key);
  if (key_bytes == 0 || signature.size() != key_bytes || p.asymmetric_signature == AsymmetricSignature::None)
    return false;
  MdCtx md(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;  // owned by md
  if (!md ||
      EVP_DigestSignInit(md.get(), &pctx, signature_md(p.asymmetric_signature), nullptr, private_key) != 1)
    return false;
  if (!set_signature_padding(pctx, p.asymmetric_signature)) return false;
  size_t n = signature.size();
  if (EVP_DigestSign(md.get(), signature.data(), &n, data.data(), data.size()) != 1) return false;
  return n == key_bytes;
}

bool asymmetric_verify(const Policy& p, EVP_PKEY* public_key, std::span<const uint8_t> data,
                       std::span<const uint8_t> signature) noexcept {
  const size_t key_bytes = rsa_key_bytes(public_key);
  if (key_bytes == 0 || signature.size() != key_bytes || p.asymmetric_signature == AsymmetricSignature::None)
    return false;
  MdCtx md(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  if (!md ||
      EVP_DigestVerifyInit(md.get(), &pctx, signature_md(p.asymmetric_signature), nullptr, public_key) != 1)
    return false;
  if (!set_signature_padding(pctx, p.asymmetric_signature)) return false;
  return EVP_DigestVerify(md.get(), signature.data(), signature.size(), data.data(), data.size()) == 1;
}

bool asymmetric_encrypt(const Policy& p, EVP_PKEY* public_key, std::span<const uint8_t> plaintext,
                        std::vector<uint8_t>& out) {
  const size_t key_bytes = rsa_key_bytes(public_key);
  if (key_bytes == 0) return false;
  const size_t block = rsa_plaintext_block(p.asymmetric_encryption, key_bytes);
  PkeyCtx ctx(EVP_PKEY_CTX_new(public_key, nullptr));
  if (!ctx || EVP_PKEY_encrypt_init(ctx.get()) != 1 ||
      !set_encryption_padding(ctx.get(), p.asymmetric_encryption))
    return false;
  const size_t blocks = (plaintext.size() + block - 1) / block;
  const size_t start = out.size();
  out.resize(start + blocks * key_bytes);
  for (size_t i = 0; i < blocks; ++i) {
    const size_t n = std::min(block, plaintext.size() - i * block);
    size_t written = key_bytes;
    if (EVP_PKEY_encrypt(ctx.get(), out.data() + start + i * key_bytes, &written,
                         plaintext.data() + i * block, n) != 1 ||
        written != key_bytes) {
      out.resize(start);
      return false;
    }
  }
  return true;
}

namespace {

// Constant-time helpers over 32-bit words: 1 or 0, computed without branches on the values.
uint32_t ct_is_zero(uint32_t x) noexcept {
  return (~x & (x - 1)) >> 31;
}
uint32_t ct_equal(uint32_t a, uint32_t b) noexcept {
  return ct_is_zero(a ^ b);
}
uint32_t ct_less(uint32_t a, uint32_t b) noexcept {
  return (a ^ ((a ^ b) | ((a - b) ^ b))) >> 31;
}

// The per-process key of the stand-in plaintexts; nullptr when OpenSSL's generator failed.
const std::array<uint8_t, 32>* rejection_key() noexcept {
  static const std::optional<std::array<uint8_t, 32>> key = []() -> std::optional<std::array<uint8_t, 32>> {
    std::array<uint8_t, 32> k{};
    if (RAND_bytes(k.data(), static_cast<int>(k.size())) != 1) return std::nullopt;
    return k;
  }();
  return key ? &*key : nullptr;
}

// One PKCS#1 v1.5 block (RFC 8017 §7.2.2: EM = 0x00 || 0x02 || PS (8 or more non-zero bytes) || 0x00 || M),
// decrypted raw and unpadded in constant time; see asymmetric_decrypt.
bool pkcs15_decrypt_block(EVP_PKEY_CTX* raw, std::span<const uint8_t> block, PlaintextBlocks blocks,
                          std::vector<uint8_t>& out) {
  const size_t k = block.size();
  const size_t whole = k - 11;  // the longest M
  const auto* key = rejection_key();
  if (key == nullptr || k < 64 || k > 1024) return false;
  std::vector<uint8_t> em(k), stand_in(whole);
  size_t n = k;
  // Raw RSA fails only for a ciphertext not below the modulus: public, no oracle.
  if (EVP_PKEY_decrypt(raw, em.data(), &n, block.data(), k) != 1 || n != k) return false;
  p_hash(Digest::Sha256, *key, block, stand_in);

  uint32_t good = ct_equal(em[0], 0) & ct_equal(em[1], 2);
  uint32_t found = 0, zero_at = 0;
  for (size_t i = 2; i < k; ++i) {
    const uint32_t first = ct_is_zero(em[i]) & (found ^ 1);
    zero_at |= (0u - first) & static_cast<uint32_t>(i);
    found |= first;
  }
  good &= found;
  good &= ct_less(zero_at, 10) ^ 1;  // at least 8 bytes of PS
  const uint32_t length = static_cast<uint32_t>(k) - zero_at - 1;
  if (blocks == PlaintextBlocks::Whole) good &= ct_equal(length, static_cast<uint32_t>(whole));
  const uint32_t good_mask = 0u - good;

  // M is the last `length` bytes of EM[11..]: move it to the front by whole - length, one bit of the
  // distance at a time, touching every byte each round.
  uint8_t* m = em.data() + 11;
  const uint32_t shift = (static_cast<uint32_t>(whole) - length) & good_mask;
  for (uint32_t bit = 0; (size_t{1} << bit) < whole; ++bit) {
    const size_t step = size_t{1} << bit;
    const auto take = static_cast<uint8_t>(0u - ((shift >> bit) & 1));
    for (size_t i = 0; i < whole; ++i) {
      const uint8_t next = i + step < whole ? m[i + step] : 0;
      m[i] = static_cast<uint8_t>((m[i] & ~take) | (next & take));
    }
  }
  const auto gm = static_cast<uint8_t>(good_mask);
  const size_t start = out.size();
  out.resize(start + whole);
  for (size_t i = 0; i < whole; ++i) out[start + i] = static_cast<uint8_t>((m[i] & gm) | (stand_in[i] & ~gm));
  out.resize(start + ((length & good_mask) | (static_cast<uint32_t>(whole) & ~good_mask)));
  OPENSSL_cleanse(em.data(), em.size());
  OPENSSL_cleanse(stand_in.data(), stand_in.size());
  return true;
}

}  // namespace

bool asymmetric_decrypt(const Policy& p, EVP_PKEY* private_key, std::span<const uint8_t> ciphertext,
                        std::vector<uint8_t>& out, PlaintextBlocks blocks) {
  const size_t key_bytes = rsa_key_bytes(private_key);
  if (key_bytes == 0 || ciphertext.empty() || ciphertext.size() % key_bytes != 0) return false;
  if (p.asymmetric_encryption == AsymmetricEncryption::RsaPkcs15) {
    PkeyCtx raw(EVP_PKEY_CTX_new(private_key, nullptr));
    if (!raw || EVP_PKEY_decrypt_init(raw.get()) != 1 ||
        EVP_PKEY_CTX_set_rsa_padding(raw.get(), RSA_NO_PADDING) <= 0)
      return false;
    const size_t start = out.size();
    for (size_t off = 0; off < ciphertext.size(); off += key_bytes) {
      if (!pkcs15_decrypt_block(raw.get(), ciphertext.subspan(off, key_bytes), blocks, out)) {
        OPENSSL_cleanse(out.data() + start, out.size() - start);
        out.resize(start);
        return false;
      }
    }
    return true;
  }
  PkeyCtx ctx(EVP_PKEY_CTX_new(private_key, nullptr));
  if (!ctx || EVP_PKEY_decrypt_init(ctx.get()) != 1 ||
      !set_encryption_padding(ctx.get(), p.asymmetric_encryption))
    return false;
  const size_t start = out.size();
  std::vector<uint8_t> block(key_bytes);
  for (size_t off = 0; off < ciphertext.size(); off += key_bytes) {
    size_t n = block.size();
    if (EVP_PKEY_decrypt(ctx.get(), block.data(), &n, ciphertext.data() + off, key_bytes) != 1) {
      out.resize(start);
      return false;
    }
    out.insert(out.end(), block.begin(), block.begin() + static_cast<ptrdiff_t>(n));
  }
  OPENSSL_cleanse(block.data(), block.size());
  return true;
}

void p_hash(Digest digest, std::span<const uint8_t> secret, std::span<const uint8_t> seed,
            std::span<uint8_t> out) {
  // A(0) = seed, A(i) = HMAC(secret, A(i-1)); output = HMAC(secret, A(1) + seed) + HMAC(secret, A(2) + seed)
  // + ...
  const EVP_MD* md = md_of(digest);
  const size_t h = digest_size(digest);
  std::vector<uint8_t> a(h), input(h + seed.size()), block(h);
  unsigned int n = 0;
  HMAC(md, secret.data(), static_cast<int>(secret.size()), seed.data(), seed.size(), a.data(), &n);
  size_t done = 0;
  while (done < out.size()) {
    std::memcpy(input.data(), a.data(), h);
    if (!seed.empty()) std::memcpy(input.data() + h, seed.data(), seed.size());
    HMAC(md, secret.data(), static_cast<int>(secret.size()), input.data(), input.size(), block.data(), &n);
    const size_t take = std::min(h, out.size() - done);
    std::memcpy(out.data() + done, block.data(), take);
    done += take;
    HMAC(md, secret.data(), static_cast<int>(secret.size()), a.data(), h, a.data(), &n);
  }
}

SymmetricKeys derive_keys(const Policy& p, std::span<const uint8_t> secret, std::span<const uint8_t> seed) {
  const size_t total = p.signing_key_length + p.encrypting_key_length + p.block_size;
  std::vector<uint8_t> material(total);
  p_hash(p.key_derivation, secret, seed, material);
  SymmetricKeys k;
  std::memcpy(k.signing.data(), material.data(), p.signing_key_length);
  std::memcpy(k.encrypting.data(), material.data() + p.signing_key_length, p.encrypting_key_length);
  std::memcpy(k.iv.data(), material.data() + p.signing_key_length + p.encrypting_key_length, p.block_size);
  OPENSSL_cleanse(material.data(), material.size());
  return k;
}

SymmetricCipher::SymmetricCipher() = default;

SymmetricCipher::~SymmetricCipher() {
  EVP_CIPHER_CTX_free(enc_);
  EVP_CIPHER_CTX_free(dec_);
  OPENSSL_cleanse(&keys_, sizeof keys_);
  OPENSSL_cleanse(&mac_, sizeof mac_);
}

SymmetricCipher::SymmetricCipher(SymmetricCipher&& o) noexcept
    : policy_(o.policy_), keys_(o.keys_), mac_(o.mac_), aes_(std::move(o.aes_)), enc_(o.enc_), dec_(o.dec_) {
  o.policy_ = nullptr;
  o.enc_ = o.dec_ = nullptr;
  OPENSSL_cleanse(&o.keys_, sizeof o.keys_);
  OPENSSL_cleanse(&o.mac_, sizeof o.mac_);
}

SymmetricCipher& SymmetricCipher::operator=(SymmetricCipher&& o) noexcept {
  if (this != &o) {
    this->~SymmetricCipher();
    new (this) SymmetricCipher(std::move(o));
  }
  return *this;
}

bool SymmetricCipher::set_keys(const Policy& p, const SymmetricKeys& keys) {
  return set_keys(p, keys, AesCbcEncryptor::available());
}

bool SymmetricCipher::set_keys(const Policy& p, const SymmetricKeys& keys, bool allow_aesni) {
  policy_ = &p;
  keys_ = keys;
  // HMAC (RFC 2104): the hash states after (key ^ ipad) and (key ^ opad), made once per token. The
  // policies' signing keys (16-32 bytes) are shorter than the 64-byte hash block, so they are used as is.
  if (p.signing_key_length > 64 || p.signing_key_length > keys_.signing.size()) return false;
  uint8_t block[64] = {};
  std::memcpy(block, keys_.signing.data(), p.signing_key_length);
  for (auto& b : block) b ^= 0x36;
  const bool sha1 = p.symmetric_signature == Digest::Sha1;
  if (sha1) {
    SHA1_Init(&mac_.inner1);
    SHA1_Update(&mac_.inner1, block, sizeof block);
  } else {
    SHA256_Init(&mac_.inner256);
    SHA256_Update(&mac_.inner256, block, sizeof block);
  }
  for (auto& b : block) b ^= 0x36 ^ 0x5c;
  if (sha1) {
    SHA1_Init(&mac_.outer1);
    SHA1_Update(&mac_.outer1, block, sizeof block);
  } else {
    SHA256_Init(&mac_.outer256);
    SHA256_Update(&mac_.outer256, block, sizeof block);
  }
  OPENSSL_cleanse(block, sizeof block);
  if (p.encrypting_key_length > keys_.encrypting.size()) return false;
  // Encryption: AES-NI's multi-stream encryptor when the CPU has it (set_key clears the old schedule
  // either way), else EVP. Decryption: EVP.
  const bool aesni =
      allow_aesni && aes_.set_key({keys_.encrypting.data(), p.encrypting_key_length}, keys_.iv);
  if (!aesni) aes_.clear();
  if (!aesni && enc_ == nullptr) enc_ = EVP_CIPHER_CTX_new();
  if (dec_ == nullptr) dec_ = EVP_CIPHER_CTX_new();
  if ((!aesni && enc_ == nullptr) || dec_ == nullptr) return false;
  if ((!aesni &&
       EVP_EncryptInit_ex(enc_, cipher_of(p), nullptr, keys_.encrypting.data(), keys_.iv.data()) != 1) ||
      EVP_DecryptInit_ex(dec_, cipher_of(p), nullptr, keys_.encrypting.data(), keys_.iv.data()) != 1)
    return false;
  // Padding is the message's own (Part 6 §6.7.2.5), never the cipher's.
  if (!aesni) EVP_CIPHER_CTX_set_padding(enc_, 0);
  EVP_CIPHER_CTX_set_padding(dec_, 0);
  return true;
}

bool SymmetricCipher::sign(std::span<const uint8_t> data, uint8_t* out) noexcept {
  if (policy_ == nullptr) return false;
  // Copies of the keyed states: inner hash over the data, outer hash over the inner digest.
  uint8_t inner[32];
  if (policy_->symmetric_signature == Digest::Sha1) {
    SHA_CTX c = mac_.inner1;
    SHA1_Update(&c, data.data(), data.size());
    SHA1_Final(inner, &c);
    c = mac_.outer1;
    SHA1_Update(&c, inner, 20);
    SHA1_Final(out, &c);
    OPENSSL_cleanse(&c, sizeof c);
  } else {
    SHA256_CTX c = mac_.inner256;
    SHA256_Update(&c, data.data(), data.size());
    SHA256_Final(inner, &c);
    c = mac_.outer256;
    SHA256_Update(&c, inner, 32);
    SHA256_Final(out, &c);
    OPENSSL_cleanse(&c, sizeof c);
  }
  return true;
}

bool SymmetricCipher::verify(std::span<const uint8_t> data, std::span<const uint8_t> signature) noexcept {
  uint8_t expected[32];
  if (policy_ == nullptr || signature.size() != policy_->signature_length || !sign(data, expected))
    return false;
  return CRYPTO_memcmp(expected, signature.data(), signature.size()) == 0;
}

bool SymmetricCipher::encrypt(std::span<uint8_t> data) noexcept {
  return encrypt_each({&data, 1});
}

bool SymmetricCipher::encrypt_each(std::span<const std::span<uint8_t>> buffers) noexcept {
  if (policy_ == nullptr) return false;
  if (aes_.ready()) return aes_.encrypt(buffers);
  for (const auto& b : buffers)
    if (!evp_encrypt(b)) return false;
  return true;
}

bool SymmetricCipher::evp_encrypt(std::span<uint8_t> data) noexcept {
  if (policy_ == nullptr || enc_ == nullptr || data.size() % policy_->block_size != 0) return false;
  int n = 0;
  // Every chunk starts from the derived IV (Part 6 §6.7.2.5); only the IV is reset, the key schedule stays.
  return EVP_EncryptInit_ex(enc_, nullptr, nullptr, nullptr, keys_.iv.data()) == 1 &&
         EVP_EncryptUpdate(enc_, data.data(), &n, data.data(), static_cast<int>(data.size())) == 1 &&
         static_cast<size_t>(n) == data.size();
}

bool SymmetricCipher::decrypt(std::span<uint8_t> data) noexcept {
  if (policy_ == nullptr || data.size() % policy_->block_size != 0) return false;
  int n = 0;
  return EVP_DecryptInit_ex(dec_, nullptr, nullptr, nullptr, keys_.iv.data()) == 1 &&
         EVP_DecryptUpdate(dec_, data.data(), &n, data.data(), static_cast<int>(data.size())) == 1 &&
         static_cast<size_t>(n) == data.size();
}

}  // namespace opcuad::security
