// AesCbcEncryptor (transport/security/aes_cbc_multi.hpp) against OpenSSL's EVP AES-128-CBC and AES-256-CBC:
// 1 to 8 streams at once and more than the lanes (lanes refilled), of different lengths (empty, one block,
// odd block counts, 8 KB), random keys and IVs; and SymmetricCipher's two encryption paths (AES-NI, EVP)
// give the same bytes. On a CPU without AES-NI the encryptor refuses keys and only the EVP path is tested.
#include <openssl/evp.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "transport/security/aes_cbc_multi.hpp"
#include "transport/security/crypto.hpp"
#include "transport/security/policy.hpp"

namespace opcuad::security {

// Declared a friend in crypto.hpp: keys set up for the EVP encryption path even where AES-NI is present.
struct SymmetricCipherTestAccess {
  static bool set_keys_evp(SymmetricCipher& c, const Policy& p, const SymmetricKeys& keys) {
    return c.set_keys(p, keys, false);
  }
};

}  // namespace opcuad::security

using namespace opcuad::security;

namespace {

using Bytes = std::vector<uint8_t>;

// One buffer through EVP, CBC from `iv`, no padding.
Bytes evp_cbc(const Bytes& key, const std::array<uint8_t, 16>& iv, const Bytes& plain) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  REQUIRE(ctx);
  REQUIRE(EVP_EncryptInit_ex(ctx, key.size() == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc(), nullptr,
                             key.data(), iv.data()) == 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  Bytes out(plain.size() + 16);
  int n = 0;
  REQUIRE(EVP_EncryptUpdate(ctx, out.data(), &n, plain.data(), static_cast<int>(plain.size())) == 1);
  EVP_CIPHER_CTX_free(ctx);
  out.resize(static_cast<size_t>(n));
  return out;
}

Bytes random_bytes_of(std::mt19937& rng, size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// Encrypts `lengths` (in bytes) buffers of random plaintext at once and compares each with EVP.
void check_streams(std::mt19937& rng, size_t key_bytes, const std::vector<size_t>& lengths) {
  const Bytes key = random_bytes_of(rng, key_bytes);
  std::array<uint8_t, 16> iv{};
  for (auto& x : iv) x = static_cast<uint8_t>(rng());
  AesCbcEncryptor e;
  REQUIRE(e.set_key(key, iv));
  REQUIRE(e.ready());
  std::vector<Bytes> plain, buffers;
  std::vector<std::span<uint8_t>> spans;
  for (size_t n : lengths) plain.push_back(random_bytes_of(rng, n));
  buffers = plain;
  for (auto& b : buffers) spans.emplace_back(b);
  REQUIRE(e.encrypt(spans));
  for (size_t i = 0; i < lengths.size(); ++i) {
    INFO("key " << key_bytes * 8 << " bits, stream " << i << " of " << lengths.size() << ", " << lengths[i]
                << " bytes");
    CHECK(buffers[i] == evp_cbc(key, iv, plain[i]));
  }
}

}  // namespace

TEST_CASE("AesCbcEncryptor: 1 to 8 streams of different lengths match EVP AES-128/256-CBC",
          "[security][crypto][aes]") {
  if (!AesCbcEncryptor::available()) {
    WARN("no AES-NI on this CPU: SymmetricCipher encrypts with EVP");
    return;
  }
  std::mt19937 rng(20240611);
  // Lengths a chunk can have: empty, one block, odd block counts, a Read-100 response's encrypted part
  // (2,688 bytes), 8 KB.
  const std::vector<size_t> pool = {0, 16, 48, 112, 272, 2688, 8192, 16 * 171};
  for (size_t key_bytes : {16u, 32u}) {
    for (size_t streams = 1; streams <= AesCbcEncryptor::kLanes; ++streams) {
      for (int trial = 0; trial < 8; ++trial) {
        std::vector<size_t> lengths;
        for (size_t i = 0; i < streams; ++i) lengths.push_back(pool[rng() % pool.size()]);
        check_streams(rng, key_bytes, lengths);
      }
      // All the same length (the lanes run together to the end), and all different.
      check_streams(rng, key_bytes, std::vector<size_t>(streams, 8192));
      std::vector<size_t> different;
      for (size_t i = 0; i < streams; ++i) different.push_back(16 * (1 + 2 * i));
      check_streams(rng, key_bytes, different);
    }
  }
}

TEST_CASE("AesCbcEncryptor: more streams than lanes refill the lanes as streams end",
          "[security][crypto][aes]") {
  if (!AesCbcEncryptor::available()) return;
  std::mt19937 rng(7);
  for (size_t key_bytes : {16u, 32u}) {
    for (size_t streams : {9u, 16u, 23u, 64u}) {
      std::vector<size_t> lengths;
      for (size_t i = 0; i < streams; ++i) lengths.push_back(16 * (rng() % 200));
      check_streams(rng, key_bytes, lengths);
    }
  }
}

TEST_CASE("AesCbcEncryptor: keys and sizes it refuses, and the schedule wiped", "[security][crypto][aes]") {
  if (!AesCbcEncryptor::available()) {
    AesCbcEncryptor e;
    CHECK_FALSE(e.set_key(Bytes(32, 1), std::array<uint8_t, 16>{}));
    return;
  }
  const std::array<uint8_t, 16> iv{};
  AesCbcEncryptor e;
  Bytes block(32, 0x42);
  std::span<uint8_t> one[] = {block};
  CHECK_FALSE(e.encrypt(one));               // no key yet
  CHECK_FALSE(e.set_key(Bytes(24, 1), iv));  // AES-192: no policy uses it
  CHECK_FALSE(e.ready());
  REQUIRE(e.set_key(Bytes(32, 1), iv));
  // A buffer that is not whole blocks: refused before anything is encrypted.
  Bytes odd(17, 0x42), whole(16, 0x42);
  std::span<uint8_t> mixed[] = {whole, odd};
  CHECK_FALSE(e.encrypt(mixed));
  CHECK(whole == Bytes(16, 0x42));
  // NIST SP 800-38A F.2.5, the first block of AES-256-CBC.
  const Bytes key256 = {0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae,
                        0xf0, 0x85, 0x7d, 0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61,
                        0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4};
  std::array<uint8_t, 16> nist_iv{};
  for (size_t i = 0; i < 16; ++i) nist_iv[i] = static_cast<uint8_t>(i);
  REQUIRE(e.set_key(key256, nist_iv));
  Bytes p = {0x6b, 0xc1, 0xbe, 0xe2, 0x2e, 0x40, 0x9f, 0x96, 0xe9, 0x3d, 0x7e, 0x11, 0x73, 0x93, 0x17, 0x2a};
  std::span<uint8_t> nist[] = {p};
  REQUIRE(e.encrypt(nist));
  CHECK(p == Bytes{0xf5, 0x8c, 0x4c, 0x04, 0xd6, 0xe5, 0xf1, 0xba, 0x77, 0x9e, 0xab, 0xfb, 0x5f, 0x7b, 0xfb,
                   0xd6});
  // A move hands the schedule over and wipes the source.
  AesCbcEncryptor moved(std::move(e));
  CHECK(moved.ready());
  CHECK_FALSE(e.ready());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  moved.clear();
  CHECK_FALSE(moved.ready());
  CHECK_FALSE(moved.encrypt(nist));
}

TEST_CASE("SymmetricCipher: encrypt_each on AES-NI and on EVP give the same chunks",
          "[security][crypto][aes]") {
  std::mt19937 rng(99);
  for (PolicyId id : {PolicyId::Basic256Sha256, PolicyId::Aes128_Sha256_RsaOaep, PolicyId::Basic128Rsa15}) {
    const Policy& p = policy(id);
    INFO(p.name);
    SymmetricKeys keys;
    for (auto& b : keys.encrypting) b = static_cast<uint8_t>(rng());
    for (auto& b : keys.iv) b = static_cast<uint8_t>(rng());
    SymmetricCipher fast, evp;
    REQUIRE(fast.set_keys(p, keys));
    REQUIRE(SymmetricCipherTestAccess::set_keys_evp(evp, p, keys));
    CHECK(fast.encrypts_with_aesni() == AesCbcEncryptor::available());
    CHECK_FALSE(evp.encrypts_with_aesni());
    for (size_t streams : {1u, 3u, 8u, 11u}) {
      std::vector<Bytes> a, b;
      for (size_t i = 0; i < streams; ++i) a.push_back(random_bytes_of(rng, 16 * (rng() % 180)));
      b = a;
      const Bytes original = a[0];
      std::vector<std::span<uint8_t>> sa, sb;
      for (auto& x : a) sa.emplace_back(x);
      for (auto& x : b) sb.emplace_back(x);
      REQUIRE(fast.encrypt_each(sa));
      REQUIRE(evp.encrypt_each(sb));
      CHECK(a == b);
      // What one side encrypted, the other decrypts (every chunk from the IV).
      for (auto& x : a) REQUIRE(evp.decrypt(x));
      CHECK(a[0] == original);
    }
    Bytes odd(20);
    std::span<uint8_t> bad[] = {odd};
    CHECK_FALSE(fast.encrypt_each(bad));
    CHECK_FALSE(evp.encrypt_each(bad));
  }
}
