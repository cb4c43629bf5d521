// AesCbcEncryptor (aes_cbc_multi.hpp): AES-128 / AES-256 key expansion and multi-stream CBC encryption
// with AES-NI, written from FIPS-197 (the cipher, §5.1, and the key expansion, §5.2) and NIST SP 800-38A
// §6.2 (CBC: C_j = CIPH_K(P_j xor C_{j-1}), C_0 = IV).
//
// AESENC performs one middle round (ShiftRows, SubBytes, MixColumns, AddRoundKey) and AESENCLAST the final
// one (no MixColumns), so the cipher is: state = in xor w[0..3]; Nr - 1 AESENC; one AESENCLAST.
#include "transport/security/aes_cbc_multi.hpp"

#include <algorithm>
#include <cstring>

#include "transport/security/secret.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <wmmintrin.h>
#define OPCUAD_AESNI_BUILD 1
#else
#define OPCUAD_AESNI_BUILD 0
#endif

namespace opcuad::security {

#if OPCUAD_AESNI_BUILD

namespace {

// Only these functions may contain AES-NI / SSE4.1 instructions; they run only after available().
#define OPCUAD_AESNI __attribute__((target("aes,sse4.1")))

// The running XOR of the four words of a block: [w0, w0^w1, w0^w1^w2, w0^w1^w2^w3]. FIPS-197 §5.2 computes
// w[i] = w[i-Nk] xor temp for the words of a block in turn, so block k+1 is this of block k-Nk/4, each
// word also xored with the block's `temp` (broadcast by the caller).
OPCUAD_AESNI inline __m128i prefix_xor(__m128i k) noexcept {
  k = _mm_xor_si128(k, _mm_slli_si128(k, 4));
  return _mm_xor_si128(k, _mm_slli_si128(k, 8));
}

// AESKEYGENASSIST(x, rcon) gives, per 32-bit word: [SubWord(x1), RotWord(SubWord(x1)) ^ rcon,
// SubWord(x3), RotWord(SubWord(x3)) ^ rcon]. SubWord works byte by byte, so RotWord(SubWord(w)) is
// SubWord(RotWord(w)), the `temp` of FIPS-197 §5.2 for i mod Nk = 0; word 3 is taken from x3 = w[i-1].
template <int Rcon>
OPCUAD_AESNI inline __m128i next_rot_block(__m128i older, __m128i last) noexcept {
  const __m128i temp = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(last, Rcon), 0xff);
  return _mm_xor_si128(prefix_xor(older), temp);
}

// AES-256's extra step (Nk = 8, i mod Nk = 4): temp = SubWord(w[i-1]), word 2 of the assist.
OPCUAD_AESNI inline __m128i next_sub_block(__m128i older, __m128i last) noexcept {
  const __m128i temp = _mm_shuffle_epi32(_mm_aeskeygenassist_si128(last, 0), 0xaa);
  return _mm_xor_si128(prefix_xor(older), temp);
}

// Rcon[i/Nk] = x^(i/Nk - 1) in GF(2^8): 01 02 04 08 10 20 40 80 1b 36.
OPCUAD_AESNI void expand_128(const uint8_t* key, __m128i* rk) noexcept {
  rk[0] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  rk[1] = next_rot_block<0x01>(rk[0], rk[0]);
  rk[2] = next_rot_block<0x02>(rk[1], rk[1]);
  rk[3] = next_rot_block<0x04>(rk[2], rk[2]);
  rk[4] = next_rot_block<0x08>(rk[3], rk[3]);
  rk[5] = next_rot_block<0x10>(rk[4], rk[4]);
  rk[6] = next_rot_block<0x20>(rk[5], rk[5]);
  rk[7] = next_rot_block<0x40>(rk[6], rk[6]);
  rk[8] = next_rot_block<0x80>(rk[7], rk[7]);
  rk[9] = next_rot_block<0x1b>(rk[8], rk[8]);
  rk[10] = next_rot_block<0x36>(rk[9], rk[9]);
}

// Nk = 8: each new block comes from the block two back, alternately with RotWord + Rcon and SubWord only.
OPCUAD_AESNI void expand_256(const uint8_t* key, __m128i* rk) noexcept {
  rk[0] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  rk[1] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key + 16));
  rk[2] = next_rot_block<0x01>(rk[0], rk[1]);
  rk[3] = next_sub_block(rk[1], rk[2]);
  rk[4] = next_rot_block<0x02>(rk[2], rk[3]);
  rk[5] = next_sub_block(rk[3], rk[4]);
  rk[6] = next_rot_block<0x04>(rk[4], rk[5]);
  rk[7] = next_sub_block(rk[5], rk[6]);
  rk[8] = next_rot_block<0x08>(rk[6], rk[7]);
  rk[9] = next_sub_block(rk[7], rk[8]);
  rk[10] = next_rot_block<0x10>(rk[8], rk[9]);
  rk[11] = next_sub_block(rk[9], rk[10]);
  rk[12] = next_rot_block<0x20>(rk[10], rk[11]);
  rk[13] = next_sub_block(rk[11], rk[12]);
  rk[14] = next_rot_block<0x40>(rk[12], rk[13]);
}

// One stream in a lane: where its next block is, how many are left, the last ciphertext block (C_{j-1}).
struct Lane {
  uint8_t* data;
  size_t blocks;
  __m128i chain;
};

// `steps` blocks of each of W lanes, every round applied to all W states before the next round, so W
// independent AESENCs are in flight behind each one's latency.
template <int Rounds, int W>
OPCUAD_AESNI void run_lanes(const __m128i* rk, Lane* lanes, size_t steps) noexcept {
  __m128i s[W];
  uint8_t* p[W];
#pragma GCC unroll 8
  for (int w = 0; w < W; ++w) {
    s[w] = lanes[w].chain;
    p[w] = lanes[w].data;
  }
  for (size_t step = 0; step < steps; ++step) {
    const __m128i first = rk[0];
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) {
      const __m128i in = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[w]));
      s[w] = _mm_xor_si128(_mm_xor_si128(in, s[w]), first);  // P_j xor C_{j-1}, then AddRoundKey
    }
#pragma GCC unroll 14
    for (int r = 1; r < Rounds; ++r) {
      const __m128i k = rk[r];
#pragma GCC unroll 8
      for (int w = 0; w < W; ++w) s[w] = _mm_aesenc_si128(s[w], k);
    }
    const __m128i last = rk[Rounds];
#pragma GCC unroll 8
    for (int w = 0; w < W; ++w) {
      s[w] = _mm_aesenclast_si128(s[w], last);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p[w]), s[w]);
      p[w] += AesCbcEncryptor::kBlock;
    }
  }
#pragma GCC unroll 8
  for (int w = 0; w < W; ++w) {
    lanes[w].chain = s[w];
    lanes[w].data = p[w];
    lanes[w].blocks -= steps;
  }
}

template <int Rounds>
OPCUAD_AESNI void run(const __m128i* rk, Lane* lanes, size_t live, size_t steps) noexcept {
  switch (live) {
    case 1:
      return run_lanes<Rounds, 1>(rk, lanes, steps);
    case 2:
      return run_lanes<Rounds, 2>(rk, lanes, steps);
    case 3:
      return run_lanes<Rounds, 3>(rk, lanes, steps);
    case 4:
      return run_lanes<Rounds, 4>(rk, lanes, steps);
    case 5:
      return run_lanes<Rounds, 5>(rk, lanes, steps);
    case 6:
      return run_lanes<Rounds, 6>(rk, lanes, steps);
    case 7:
      return run_lanes<Rounds, 7>(rk, lanes, steps);
    default:
      return run_lanes<Rounds, 8>(rk, lanes, steps);
  }
}

// Up to kLanes streams in flight: all advance together until the shortest ends, then finished lanes are
// dropped and refilled from the buffers not started yet.
OPCUAD_AESNI void encrypt_streams(const uint8_t* round_keys, uint32_t rounds, const uint8_t* iv,
                                  std::span<const std::span<uint8_t>> buffers) noexcept {
  const auto* rk = reinterpret_cast<const __m128i*>(round_keys);
  const __m128i iv_block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(iv));
  Lane lanes[AesCbcEncryptor::kLanes];
  size_t live = 0, next = 0;
  for (;;) {
    while (live < AesCbcEncryptor::kLanes && next < buffers.size()) {
      const std::span<uint8_t> b = buffers[next++];
      if (b.size() >= AesCbcEncryptor::kBlock)
        lanes[live++] = Lane{b.data(), b.size() / AesCbcEncryptor::kBlock, iv_block};
    }
    if (live == 0) return;
    size_t steps = lanes[0].blocks;
    for (size_t i = 1; i < live; ++i) steps = std::min(steps, lanes[i].blocks);
    if (rounds == 10) {
      run<10>(rk, lanes, live, steps);
    } else {
      run<14>(rk, lanes, live, steps);
    }
    size_t kept = 0;
    for (size_t i = 0; i < live; ++i)
      if (lanes[i].blocks != 0) lanes[kept++] = lanes[i];
    live = kept;
  }
}

}  // namespace

bool AesCbcEncryptor::available() noexcept {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("aes") && __builtin_cpu_supports("sse4.1");
  }();
  return has;
}

bool AesCbcEncryptor::set_key(std::span<const uint8_t> key, std::span<const uint8_t, kBlock> iv) noexcept {
  clear();
  if (!available() || (key.size() != 16 && key.size() != 32)) return false;
  auto* rk = reinterpret_cast<__m128i*>(round_keys_.data());
  if (key.size() == 16) {
    expand_128(key.data(), rk);
    rounds_ = 10;
  } else {
    expand_256(key.data(), rk);
    rounds_ = 14;
  }
  std::memcpy(iv_.data(), iv.data(), kBlock);
  return true;
}

bool AesCbcEncryptor::encrypt(std::span<const std::span<uint8_t>> buffers) const noexcept {
  if (rounds_ == 0) return false;
  for (const auto& b : buffers)
    if (b.size() % kBlock != 0) return false;
  encrypt_streams(round_keys_.data(), rounds_, iv_.data(), buffers);
  return true;
}

#else  // no AES-NI in this build: SymmetricCipher keeps EVP

bool AesCbcEncryptor::available() noexcept {
  return false;
}

bool AesCbcEncryptor::set_key(std::span<const uint8_t>, std::span<const uint8_t, kBlock>) noexcept {
  clear();
  return false;
}

bool AesCbcEncryptor::encrypt(std::span<const std::span<uint8_t>>) const noexcept {
  return false;
}

#endif

AesCbcEncryptor::AesCbcEncryptor(AesCbcEncryptor&& other) noexcept
    : round_keys_(other.round_keys_), iv_(other.iv_), rounds_(other.rounds_) {
  other.clear();
}

AesCbcEncryptor& AesCbcEncryptor::operator=(AesCbcEncryptor&& other) noexcept {
  if (this != &other) {
    round_keys_ = other.round_keys_;
    iv_ = other.iv_;
    rounds_ = other.rounds_;
    other.clear();
  }
  return *this;
}

void AesCbcEncryptor::clear() noexcept {
  wipe(round_keys_);
  wipe(iv_);
  rounds_ = 0;
}

}  // namespace opcuad::security
