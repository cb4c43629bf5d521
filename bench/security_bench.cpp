// security_bench: what securing one chunk costs (Part 6 §6.7.2), on the same SymmetricCipher the server
// seals and opens its MSG chunks with: ns per chunk to seal (padding, HMAC, AES-CBC) and to open
// (AES-CBC, HMAC check, padding check), for the chunk sizes of Read-1 and Read-100, per policy; and
// OpenSSL's own heap allocations per chunk, counted through CRYPTO_set_mem_functions (the daemon's
// allocation counters see only operator new, not OpenSSL's malloc).
// OpenSSL 3 deprecates the low-level SHA256_* calls that the precomputed-pad HMAC below compares against.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/client_security.hpp"
#include "transport/uatcp.hpp"

namespace {

std::atomic<uint64_t> g_openssl_allocations{0};

void* counting_malloc(size_t n, const char*, int) {
  g_openssl_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n);
}
void* counting_realloc(void* p, size_t n, const char*, int) {
  g_openssl_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::realloc(p, n);
}
void counting_free(void* p, const char*, int) {
  std::free(p);
}

// HMAC-SHA256 (RFC 2104) from two hash states precomputed over key ^ ipad and key ^ opad: per message
// only copies of plain structs, so nothing is allocated (EVP_MAC re-initialisation duplicates provider
// contexts, which mallocs).
struct PadHmac {
  SHA256_CTX inner, outer;
  void set_key(const uint8_t* key, size_t n) {
    uint8_t block[64] = {};
    std::memcpy(block, key, n);
    for (auto& b : block) b ^= 0x36;
    SHA256_Init(&inner);
    SHA256_Update(&inner, block, 64);
    for (auto& b : block) b ^= 0x36 ^ 0x5c;
    SHA256_Init(&outer);
    SHA256_Update(&outer, block, 64);
  }
  void sign(const uint8_t* data, size_t n, uint8_t* out) const {
    SHA256_CTX c = inner;
    SHA256_Update(&c, data, n);
    uint8_t digest[32];
    SHA256_Final(digest, &c);
    c = outer;
    SHA256_Update(&c, digest, 32);
    SHA256_Final(out, &c);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace opcuad;
  using Clock = std::chrono::steady_clock;
  // Before OpenSSL allocates anything.
  if (CRYPTO_set_mem_functions(counting_malloc, counting_realloc, counting_free) != 1) {
    std::fprintf(stderr, "security_bench: CRYPTO_set_mem_functions refused\n");
    return 1;
  }
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int rounds = 5;
  std::printf("security_bench: %d rounds x %d chunks; median ns per chunk; OpenSSL allocations per chunk\n",
              rounds, iterations);
  std::printf("%-22s %-15s %6s %10s %10s %12s\n", "policy", "mode", "bytes", "seal ns", "open ns",
              "allocs/chunk");
  for (const char* name : {"Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"}) {
    const security::Policy& p = *security::find_policy(name);
    for (bool encrypt : {false, true}) {
      // Two ends of one channel: what one seals, the other opens (the keys swap roles).
      bench::ChannelCrypto client(p, encrypt), server(p, encrypt);
      std::vector<uint8_t> a(p.nonce_length, 0x11), b(p.nonce_length, 0x22);
      if (!client.set_keys(a, b) || !server.set_keys(b, a)) return 1;
      // Bodies of a Read-1 request/response (~90 bytes) and of a Read-100 response (2,636 bytes).
      for (size_t body : {90u, 2636u}) {
        const size_t plain = transport::kSymmetricPrefix + body;
        std::vector<uint8_t> chunk(plain + client.max_overhead());
        std::vector<double> seal_ns, open_ns;
        uint64_t allocations = 0;
        for (int r = 0; r < rounds; ++r) {
          double seal_total = 0, open_total = 0;
          const uint64_t a0 = g_openssl_allocations.load();
          for (int i = 0; i < iterations; ++i) {
            std::memset(chunk.data() + transport::kSymmetricPrefix, i & 0xff, body);
            const auto t0 = Clock::now();
            const size_t sealed = client.seal(chunk.data(), plain);
            const auto t1 = Clock::now();
            std::span<const uint8_t> out;
            const bool ok = server.unseal({chunk.data(), sealed}, out);
            const auto t2 = Clock::now();
            if (sealed == 0 || !ok || out.size() != body) {
              std::fprintf(stderr, "security_bench: %s round trip failed\n", name);
              return 1;
            }
            seal_total += std::chrono::duration<double, std::nano>(t1 - t0).count();
            open_total += std::chrono::duration<double, std::nano>(t2 - t1).count();
          }
          allocations += g_openssl_allocations.load() - a0;
          seal_ns.push_back(seal_total / iterations);
          open_ns.push_back(open_total / iterations);
        }
        std::printf("%-22s %-15s %6zu %10.0f %10.0f %12.3f\n", name, encrypt ? "SignAndEncrypt" : "Sign",
                    body, median(seal_ns), median(open_ns),
                    static_cast<double>(allocations) / (2.0 * rounds * iterations));
      }
    }
  }
  // The HMAC alone: SymmetricCipher::sign (EVP_MAC, as the server does) against PadHmac, same key and data.
  std::printf("\nHMAC-SHA256 per chunk: EVP_MAC re-initialised per chunk vs precomputed pad states\n");
  std::printf("%6s %12s %12s %14s %14s %6s\n", "bytes", "EVP ns", "pads ns", "EVP allocs", "pads allocs",
              "same");
  const security::Policy& p = *security::find_policy("Basic256Sha256");
  security::SymmetricKeys keys =
      security::derive_keys(p, std::vector<uint8_t>(32, 1), std::vector<uint8_t>(32, 2));
  security::SymmetricCipher evp;
  if (!evp.set_keys(p, keys)) return 1;
  PadHmac pads;
  pads.set_key(keys.signing.data(), p.signing_key_length);
  for (size_t n : {114u, 2660u}) {
    std::vector<uint8_t> data(n, 0x42);
    uint8_t a[32], b[32];
    std::vector<double> evp_ns, pad_ns;
    uint64_t evp_allocs = 0, pad_allocs = 0;
    bool same = true;
    for (int r = 0; r < rounds; ++r) {
      uint64_t a0 = g_openssl_allocations.load();
      auto t0 = Clock::now();
      for (int i = 0; i < iterations; ++i) {
        data[0] = static_cast<uint8_t>(i);
        if (!evp.sign(data, a)) return 1;
      }
      auto t1 = Clock::now();
      evp_allocs += g_openssl_allocations.load() - a0;
      a0 = g_openssl_allocations.load();
      for (int i = 0; i < iterations; ++i) {
        data[0] = static_cast<uint8_t>(i);
        pads.sign(data.data(), n, b);
      }
      auto t2 = Clock::now();
      pad_allocs += g_openssl_allocations.load() - a0;
      same = same && std::memcmp(a, b, 32) == 0;
      evp_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations);
      pad_ns.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count() / iterations);
    }
    const double per = 1.0 / (rounds * static_cast<double>(iterations));
    std::printf("%6zu %12.0f %12.0f %14.3f %14.3f %6s\n", n, median(evp_ns), median(pad_ns), evp_allocs * per,
                pad_allocs * per, same ? "yes" : "NO");
  }
  // What resetting the IV costs per chunk (SymmetricCipher::encrypt starts every chunk from the derived IV
  // with EVP_EncryptInit_ex), against encrypting one 16-byte block.
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr ||
      EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), nullptr, keys.encrypting.data(), keys.iv.data()) != 1)
    return 1;
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  std::vector<double> init_ns, block_ns;
  uint8_t block[16] = {};
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < iterations; ++i)
      if (EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, keys.iv.data()) != 1) return 1;
    auto t1 = Clock::now();
    int n = 0;
    for (int i = 0; i < iterations; ++i)
      if (EVP_EncryptUpdate(ctx, block, &n, block, 16) != 1) return 1;
    auto t2 = Clock::now();
    init_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations);
    block_ns.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count() / iterations);
  }
  EVP_CIPHER_CTX_free(ctx);
  std::printf(
      "\nAES-256-CBC: IV reset (EVP_EncryptInit_ex with only the IV) %.0f ns, one block (EVP_EncryptUpdate) "
      "%.0f ns\n",
      median(init_ns), median(block_ns));
  return 0;
}
