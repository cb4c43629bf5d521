// security_bench: what securing one chunk costs (Part 6 §6.7.2), on the same SymmetricCipher the server
// seals and opens its MSG chunks with: ns per chunk to seal (padding, HMAC, AES-CBC) and to open
// (AES-CBC, HMAC check, padding check), for the chunk sizes of Read-1 and Read-100, per policy; and
// OpenSSL's own heap allocations per chunk, counted through CRYPTO_set_mem_functions (the daemon's
// allocation counters see only operator new, not OpenSSL's malloc). Then N Read-100 chunks sealed one by
// one against as one batch (the chunks of one write, encrypted together: SymmetricCipher::encrypt_each).
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
#include <ctime>
#include <vector>

#include "bench/client_security.hpp"
#include "transport/security/aes_cbc_multi.hpp"
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

// CPU time of the calling thread, in ns: what the work cost, whatever else the machine runs.
double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Sealing N chunks of a 2,636-byte body (a Read-100 response) with SignAndEncrypt, in three ways: EVP one
// by one (the IV reset and EVP_EncryptUpdate per chunk: the path without AES-NI), AES-NI one by one
// (encrypt_each of one chunk), and AES-NI as one batch (every chunk signed, then one encrypt_each of all N,
// as the server's output writer does for the chunks of one write). Per way: the whole seal (padding, HMAC,
// AES-CBC) and the AES-CBC alone, in thread CPU ns per chunk, each timed over a whole round. Returns false
// when the three ways do not give the same bytes.
bool batch_rows(const opcuad::security::Policy& p, int iterations, int rounds) {
  using namespace opcuad;
  constexpr size_t kBody = 2636;
  const size_t plain = transport::kSymmetricPrefix + kBody;
  const std::vector<uint8_t> a(p.nonce_length, 0x11), b(p.nonce_length, 0x22);
  bench::ChannelCrypto crypto(p, true);
  if (!crypto.set_keys(a, b)) return false;
  // The same send keys for the EVP context (ChannelCrypto::set_keys: server nonce first for the client).
  const security::SymmetricKeys keys = security::derive_keys(p, b, a);
  EVP_CIPHER_CTX* evp = EVP_CIPHER_CTX_new();
  if (evp == nullptr ||
      EVP_EncryptInit_ex(evp, p.encrypting_key_length == 16 ? EVP_aes_128_cbc() : EVP_aes_256_cbc(), nullptr,
                         keys.encrypting.data(), keys.iv.data()) != 1)
    return false;
  EVP_CIPHER_CTX_set_padding(evp, 0);
  bool ok = true;
  for (size_t n : {1u, 2u, 4u, 8u, 10u, 16u, 64u}) {
    std::vector<std::vector<uint8_t>> chunks(n, std::vector<uint8_t>(plain + crypto.max_overhead()));
    std::vector<std::span<uint8_t>> parts(n);
    const int batches = std::max(1, iterations / static_cast<int>(n));
    const auto refill = [&] {
      for (size_t c = 0; c < n; ++c) {
        std::memset(chunks[c].data(), 0, transport::kSymmetricPrefix);
        std::memset(chunks[c].data() + transport::kSymmetricPrefix, static_cast<int>(c) & 0xff, kBody);
      }
    };
    const auto sign = [&](size_t c) {
      const size_t sealed = crypto.sign(chunks[c].data(), plain);
      parts[c] = {chunks[c].data() + transport::kSymmetricHeaderSize,
                  sealed - transport::kSymmetricHeaderSize};
      return sealed != 0;
    };
    // Way 0: EVP one chunk at a time, 1: AES-NI one chunk at a time, 2: AES-NI all chunks at once.
    const auto encrypt_one = [&](int way, size_t c) {
      int out = 0;
      if (way == 1) return crypto.encrypt_each({&parts[c], 1});
      return EVP_EncryptInit_ex(evp, nullptr, nullptr, nullptr, keys.iv.data()) == 1 &&
             EVP_EncryptUpdate(evp, parts[c].data(), &out, parts[c].data(),
                               static_cast<int>(parts[c].size())) == 1;
    };
    const auto encrypt = [&](int way) {
      if (way == 2) return crypto.encrypt_each(parts);
      for (size_t c = 0; c < n; ++c)
        if (!encrypt_one(way, c)) return false;
      return true;
    };
    // The same chunks sealed the three ways must be the same bytes.
    std::vector<std::vector<std::vector<uint8_t>>> sealed(3);
    for (int way = 0; way < 3; ++way) {
      refill();
      for (size_t c = 0; c < n; ++c) ok = ok && sign(c);
      ok = ok && encrypt(way);
      sealed[way] = chunks;
    }
    ok = ok && sealed[0] == sealed[1] && sealed[1] == sealed[2];
    if (!ok) break;
    // Timed rounds. Sealing a sealed chunk again costs the same work (the sizes are the same), so the
    // buffers are not refilled inside a round.
    std::vector<double> seal_ns[3], aes_ns[3];
    for (int r = 0; r < rounds; ++r) {
      for (int way = 0; way < 3; ++way) {
        double t0 = thread_cpu_ns();
        for (int i = 0; i < batches; ++i) {
          for (size_t c = 0; c < n; ++c) {
            if (!sign(c)) return false;
            if (way != 2 && !encrypt_one(way, c)) return false;
          }
          if (way == 2 && !crypto.encrypt_each(parts)) return false;
        }
        double t1 = thread_cpu_ns();
        seal_ns[way].push_back((t1 - t0) / (batches * static_cast<double>(n)));
        t0 = thread_cpu_ns();
        for (int i = 0; i < batches; ++i)
          if (!encrypt(way)) return false;
        t1 = thread_cpu_ns();
        aes_ns[way].push_back((t1 - t0) / (batches * static_cast<double>(n)));
      }
    }
    std::printf("%-22.*s %4zu %10.0f %10.0f %10.0f %8.0f %8.0f %8.0f %7.2f\n",
                static_cast<int>(p.name.size()), p.name.data(), n, median(seal_ns[0]), median(seal_ns[1]),
                median(seal_ns[2]), median(aes_ns[0]), median(aes_ns[1]), median(aes_ns[2]),
                median(seal_ns[0]) / median(seal_ns[2]));
  }
  EVP_CIPHER_CTX_free(evp);
  return ok;
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
  std::printf(
      "\nSignAndEncrypt, N chunks of a 2,636-byte body: thread CPU ns per chunk to seal (padding, HMAC, "
      "AES-CBC)\n"
      "and for the AES-CBC alone; one by one with EVP, one by one with AES-NI, as one batch with AES-NI "
      "(%s)\n",
      security::AesCbcEncryptor::available() ? "AES-NI present" : "no AES-NI: every column is EVP");
  std::printf("%-22s %4s %10s %10s %10s %8s %8s %8s %7s\n", "policy", "N", "seal EVP", "seal 1x1",
              "seal batch", "aes EVP", "aes 1x1", "aes bat", "EVP/bat");
  for (const char* name : {"Basic256Sha256", "Aes128_Sha256_RsaOaep"}) {
    if (!batch_rows(*security::find_policy(name), iterations, rounds)) {
      std::fprintf(stderr, "security_bench: %s batch sealing failed or differed from one by one\n", name);
      return 1;
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
  // What resetting the IV costs per chunk on the EVP path (without AES-NI, SymmetricCipher::encrypt starts
  // every chunk from the derived IV with EVP_EncryptInit_ex), against encrypting one 16-byte block.
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
