// The policies' primitives against vectors computed independently: P_SHA256 / P_SHA1 and HMAC with
// Python's hmac and hashlib, AES-CBC from NIST SP 800-38A (F.2.1, F.2.5).
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <catch2/catch.hpp>

#include <vector>

#include "transport/security/crypto.hpp"
#include "transport/security/policy.hpp"

using namespace opcuad::security;

namespace {

std::vector<uint8_t> iota_bytes(uint8_t from, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(from + i);
  return v;
}

std::vector<uint8_t> hex(std::string_view s) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    v.push_back(static_cast<uint8_t>(std::stoi(std::string(s.substr(i, 2)), nullptr, 16)));
  return v;
}

Pkey make_rsa(unsigned bits) {
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nullptr);
  EVP_PKEY* key = nullptr;
  REQUIRE(EVP_PKEY_keygen_init(ctx) == 1);
  REQUIRE(EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, static_cast<int>(bits)) == 1);
  REQUIRE(EVP_PKEY_keygen(ctx, &key) == 1);
  EVP_PKEY_CTX_free(ctx);
  return adopt(key);
}

}  // namespace

TEST_CASE("Policies: the Part 7 algorithm suites", "[security][crypto]") {
  const Policy* b = find_policy("http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256");
  REQUIRE(b);
  CHECK(b == find_policy("Basic256Sha256"));
  CHECK(b->signing_key_length == 32);
  CHECK(b->encrypting_key_length == 32);
  CHECK(b->asymmetric_encryption == AsymmetricEncryption::RsaOaepSha1);
  const Policy* a128 = find_policy("Aes128_Sha256_RsaOaep");
  REQUIRE(a128);
  CHECK(a128->encrypting_key_length == 16);
  CHECK(a128->asymmetric_signature == AsymmetricSignature::RsaPkcs15Sha256);
  const Policy* pss = find_policy("Aes256_Sha256_RsaPss");
  REQUIRE(pss);
  CHECK(pss->asymmetric_signature == AsymmetricSignature::RsaPssSha256);
  CHECK(pss->asymmetric_encryption == AsymmetricEncryption::RsaOaepSha256);
  CHECK(find_policy("Basic256")->signing_key_length == 24);
  CHECK(find_policy("Basic128Rsa15")->nonce_length == 16);
  CHECK(find_policy("Basic256")->deprecated);
  CHECK_FALSE(find_policy("Basic256Sha512"));
  CHECK(pss->security_level > b->security_level);
  CHECK(b->security_level > find_policy("None")->security_level);
  CHECK(rsa_plaintext_block(AsymmetricEncryption::RsaOaepSha1, 256) == 214);
  CHECK(rsa_plaintext_block(AsymmetricEncryption::RsaOaepSha256, 256) == 190);
  CHECK(rsa_plaintext_block(AsymmetricEncryption::RsaPkcs15, 128) == 117);
}

TEST_CASE("Key derivation: P_SHA256 and P_SHA1 match independently computed blocks", "[security][crypto]") {
  const auto secret = iota_bytes(0, 32);
  const auto seed = iota_bytes(32, 32);
  const std::vector<uint8_t> sha256 = {
      0xb7, 0x25, 0x93, 0xc4, 0x3f, 0xee, 0x5f, 0xaf, 0xa0, 0x25, 0x6c, 0xd6, 0xbb, 0x90, 0x4f, 0xf4,
      0x0c, 0x06, 0x6a, 0x22, 0x5d, 0xb9, 0x5f, 0x66, 0xdd, 0x74, 0x4e, 0x20, 0x85, 0x8a, 0x22, 0x20,
      0xdd, 0xf7, 0x50, 0x67, 0xe3, 0xd7, 0x6a, 0xc7, 0x14, 0xc0, 0x8e, 0x24, 0xea, 0xbd, 0x85, 0xff,
      0x42, 0x5d, 0x7f, 0x5f, 0xb2, 0x5e, 0x6e, 0x08, 0x3b, 0x94, 0xb1, 0x74, 0xe2, 0x9d, 0xb8, 0x9b,
      0xc5, 0x13, 0xe9, 0x17, 0x22, 0x74, 0xd5, 0xed, 0x54, 0xe5, 0x2a, 0x35, 0x52, 0x90, 0x1a, 0xe0};
  std::vector<uint8_t> out(80);
  p_hash(Digest::Sha256, secret, seed, out);
  CHECK(out == sha256);
  // Basic256Sha256: signing key 32, encrypting key 32, IV 16, in that order.
  const SymmetricKeys k = derive_keys(policy(PolicyId::Basic256Sha256), secret, seed);
  CHECK(std::equal(k.signing.begin(), k.signing.end(), sha256.begin()));
  CHECK(std::equal(k.encrypting.begin(), k.encrypting.end(), sha256.begin() + 32));
  CHECK(std::equal(k.iv.begin(), k.iv.end(), sha256.begin() + 64));
  // Aes128_Sha256_RsaOaep: a 16-byte encrypting key, so the IV starts at byte 48.
  const SymmetricKeys k128 = derive_keys(policy(PolicyId::Aes128_Sha256_RsaOaep), secret, seed);
  CHECK(std::equal(k128.encrypting.begin(), k128.encrypting.begin() + 16, sha256.begin() + 32));
  CHECK(std::equal(k128.iv.begin(), k128.iv.end(), sha256.begin() + 48));

  const std::vector<uint8_t> sha1 = {0xdf, 0x59, 0x13, 0x2c, 0x2a, 0xf6, 0xd2, 0x30, 0xe4, 0x33, 0x77, 0x32,
                                     0x07, 0x6a, 0x14, 0x56, 0x16, 0x94, 0xbe, 0x12, 0x83, 0x8c, 0xc0, 0x02,
                                     0x03, 0xd6, 0x3c, 0x81, 0x66, 0x53, 0xd7, 0x5b, 0xa7, 0xc5, 0x9c, 0xea,
                                     0xf7, 0xb9, 0x6b, 0xbf, 0x2b, 0x95, 0x01, 0xfa, 0xe4, 0x83, 0x3d, 0xde,
                                     0x8f, 0xe8, 0x60, 0xb1, 0x29, 0x9a, 0xe3, 0x70, 0x4b, 0x19, 0x94, 0x0e,
                                     0xfb, 0x81, 0x04, 0xf9, 0xf0, 0x60, 0x10, 0x3a, 0x1a, 0xfe, 0xa9, 0x1a};
  std::vector<uint8_t> out1(72);
  p_hash(Digest::Sha1, secret, seed, out1);
  CHECK(out1 == sha1);
}

TEST_CASE("SymmetricCipher: HMAC and AES-CBC in place", "[security][crypto]") {
  const std::string_view msg = "opcuad symmetric chunk";
  const std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(msg.data()), msg.size());
  SymmetricKeys keys;
  for (size_t i = 0; i < 32; ++i) keys.signing[i] = static_cast<uint8_t>(i);
  SymmetricCipher c;
  REQUIRE(c.set_keys(policy(PolicyId::Basic256Sha256), keys));
  uint8_t sig[32];
  REQUIRE(c.sign(data, sig));
  const auto expected = hex("bd84942919e0cc53b0716f99cbf7e0b848283470ee37ba72730facbb45eaded2");
  CHECK(std::vector<uint8_t>(sig, sig + 32) == expected);
  CHECK(c.verify(data, {sig, 32}));
  sig[31] ^= 1;
  CHECK_FALSE(c.verify(data, {sig, 32}));
  CHECK_FALSE(c.verify(data, {sig, 31}));
  // Twice in a row gives the same result: the key survives re-initialisation.
  uint8_t again[32];
  REQUIRE(c.sign(data, again));
  CHECK(std::vector<uint8_t>(again, again + 32) == expected);

  SymmetricCipher s1;
  REQUIRE(s1.set_keys(policy(PolicyId::Basic256), keys));
  uint8_t sig1[20];
  REQUIRE(s1.sign(data, sig1));
  CHECK(std::vector<uint8_t>(sig1, sig1 + 20) == hex("f9ae14e3b76363e274928b54b5aabbbf7d494a6c"));

  // NIST SP 800-38A F.2.1 (AES-128-CBC) and F.2.5 (AES-256-CBC), first block.
  SymmetricKeys aes;
  const auto key128 = hex("2b7e151628aed2a6abf7158809cf4f3c");
  const auto iv = hex("000102030405060708090a0b0c0d0e0f");
  std::copy(key128.begin(), key128.end(), aes.encrypting.begin());
  std::copy(iv.begin(), iv.end(), aes.iv.begin());
  SymmetricCipher a128;
  REQUIRE(a128.set_keys(policy(PolicyId::Aes128_Sha256_RsaOaep), aes));
  auto block = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
  REQUIRE(a128.encrypt(block));
  CHECK(block == hex("7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"));
  REQUIRE(a128.decrypt(block));
  CHECK(block == hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"));
  // Each chunk starts again from the derived IV.
  REQUIRE(a128.encrypt(block));
  CHECK(std::vector<uint8_t>(block.begin(), block.begin() + 16) == hex("7649abac8119b246cee98e9b12e9197d"));
  std::vector<uint8_t> odd(15);
  CHECK_FALSE(a128.encrypt(odd));

  const auto key256 = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
  std::copy(key256.begin(), key256.end(), aes.encrypting.begin());
  SymmetricCipher a256;
  REQUIRE(a256.set_keys(policy(PolicyId::Aes256_Sha256_RsaPss), aes));
  auto b256 = hex("6bc1bee22e409f96e93d7e117393172a");
  REQUIRE(a256.encrypt(b256));
  CHECK(b256 == hex("f58c4c04d6e5f1ba779eabfb5f7bfbd6"));
}

TEST_CASE("Asymmetric: sign, verify, encrypt, decrypt per policy", "[security][crypto]") {
  const Pkey key = make_rsa(2048);
  const Pkey other = make_rsa(2048);
  CHECK(rsa_key_bytes(key.get()) == 256);
  const std::vector<uint8_t> data = iota_bytes(7, 1000);
  for (PolicyId id : {PolicyId::Basic256Sha256, PolicyId::Aes128_Sha256_RsaOaep,
                      PolicyId::Aes256_Sha256_RsaPss, PolicyId::Basic256, PolicyId::Basic128Rsa15}) {
    const Policy& p = policy(id);
    INFO(p.name);
    std::vector<uint8_t> sig(256);
    REQUIRE(asymmetric_sign(p, key.get(), data, sig));
    CHECK(asymmetric_verify(p, key.get(), data, sig));
    CHECK_FALSE(asymmetric_verify(p, other.get(), data, sig));
    auto tampered = data;
    tampered[500] ^= 0x10;
    CHECK_FALSE(asymmetric_verify(p, key.get(), tampered, sig));
    const size_t block = rsa_plaintext_block(p.asymmetric_encryption, 256);
    std::vector<uint8_t> plain = iota_bytes(1, block * 3);
    std::vector<uint8_t> cipher;
    REQUIRE(asymmetric_encrypt(p, key.get(), plain, cipher));
    CHECK(cipher.size() == 3 * 256);
    std::vector<uint8_t> back;
    REQUIRE(asymmetric_decrypt(p, key.get(), cipher, back));
    CHECK(back == plain);
    std::vector<uint8_t> wrong;
    if (p.asymmetric_encryption == AsymmetricEncryption::RsaPkcs15) {
      // Implicit rejection: whole stand-in blocks instead of a failure (below), unless a block is not
      // below the other key's modulus (raw RSA refuses it; that says nothing about a padding).
      if (asymmetric_decrypt(p, other.get(), cipher, wrong)) {
        CHECK(wrong.size() == plain.size());
        CHECK(wrong != plain);
      } else {
        CHECK(wrong.empty());
      }
    } else {
      CHECK_FALSE(asymmetric_decrypt(p, other.get(), cipher, wrong));
      CHECK(wrong.empty());
    }
    cipher.pop_back();
    CHECK_FALSE(asymmetric_decrypt(p, key.get(), cipher, wrong));
  }
  // PKCS#1 v1.5 and PSS are not interchangeable.
  std::vector<uint8_t> sig(256);
  REQUIRE(asymmetric_sign(policy(PolicyId::Aes256_Sha256_RsaPss), key.get(), data, sig));
  CHECK_FALSE(asymmetric_verify(policy(PolicyId::Basic256Sha256), key.get(), data, sig));
}

namespace {

// A raw RSA encryption of `em` (k bytes, below the modulus) with the key's public half.
std::vector<uint8_t> raw_rsa(EVP_PKEY* key, const std::vector<uint8_t>& em) {
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(key, nullptr);
  REQUIRE(ctx != nullptr);
  REQUIRE(EVP_PKEY_encrypt_init(ctx) == 1);
  REQUIRE(EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_NO_PADDING) > 0);
  std::vector<uint8_t> out(em.size());
  size_t n = out.size();
  REQUIRE(EVP_PKEY_encrypt(ctx, out.data(), &n, em.data(), em.size()) == 1);
  EVP_PKEY_CTX_free(ctx);
  return out;
}

// EM = 00 02 PS 00 M with `ps` padding bytes, then M.
std::vector<uint8_t> pkcs15_block(size_t k, size_t ps, const std::vector<uint8_t>& m) {
  std::vector<uint8_t> em{0x00, 0x02};
  for (size_t i = 0; i < ps; ++i) em.push_back(static_cast<uint8_t>(0x11 + i % 200));
  em.push_back(0);
  em.insert(em.end(), m.begin(), m.end());
  REQUIRE(em.size() == k);
  return em;
}

}  // namespace

TEST_CASE("Asymmetric: PKCS#1 v1.5 blocks with a bad padding decrypt to a stand-in, in constant time",
          "[security][crypto]") {
  const Pkey key = make_rsa(2048);
  const Policy& p = policy(PolicyId::Basic128Rsa15);
  const size_t k = 256, whole = k - 11;
  const std::vector<uint8_t> full = iota_bytes(3, whole);
  const std::vector<uint8_t> short_m = iota_bytes(9, 40);

  std::vector<uint8_t> out;
  REQUIRE(asymmetric_decrypt(p, key.get(), raw_rsa(key.get(), pkcs15_block(k, 8, full)), out,
                             PlaintextBlocks::Whole));
  CHECK(out == full);
  out.clear();
  REQUIRE(asymmetric_decrypt(p, key.get(), raw_rsa(key.get(), pkcs15_block(k, k - 3 - 40, short_m)), out));
  CHECK(out == short_m);
  // Every length from empty to whole comes out right where a short block is allowed.
  for (size_t len : {size_t{0}, size_t{1}, size_t{2}, size_t{127}, size_t{128}, whole - 1}) {
    INFO(len);
    const std::vector<uint8_t> m = iota_bytes(static_cast<uint8_t>(len), len);
    out.clear();
    REQUIRE(asymmetric_decrypt(p, key.get(), raw_rsa(key.get(), pkcs15_block(k, k - 3 - len, m)), out));
    CHECK(out == m);
  }

  // Refused paddings: each gives a whole block that is not the message, the same for the same ciphertext.
  std::vector<std::vector<uint8_t>> bad;
  auto b = pkcs15_block(k, 8, full);
  b[1] = 0x01;  // block type 1 (signatures)
  bad.push_back(b);
  std::vector<uint8_t> seven = iota_bytes(5, whole + 1);
  bad.push_back(pkcs15_block(k, 7, seven));  // PS of 7 bytes
  b = pkcs15_block(k, 8, full);
  for (size_t i = 2; i < k; ++i) b[i] = b[i] == 0 ? 1 : b[i];  // no zero separator
  bad.push_back(b);
  for (const auto& em : bad) {
    const auto cipher = raw_rsa(key.get(), em);
    std::vector<uint8_t> first, again;
    REQUIRE(asymmetric_decrypt(p, key.get(), cipher, first));
    REQUIRE(asymmetric_decrypt(p, key.get(), cipher, again));
    CHECK(first.size() == whole);
    CHECK(first == again);
    CHECK(first != std::vector<uint8_t>(em.end() - static_cast<ptrdiff_t>(whole), em.end()));
  }
  // Where whole blocks are wanted (OpenSecureChannel), a short message is refused the same way.
  const auto short_cipher = raw_rsa(key.get(), pkcs15_block(k, k - 3 - 40, short_m));
  out.clear();
  REQUIRE(asymmetric_decrypt(p, key.get(), short_cipher, out, PlaintextBlocks::Whole));
  CHECK(out.size() == whole);
  CHECK(!std::equal(short_m.begin(), short_m.end(), out.end() - 40));
}
