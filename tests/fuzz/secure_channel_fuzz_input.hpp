#pragma once
// The input format of secure_channel_fuzz, shared with the seed generator (seeds_secure_channel.cpp).
//
//   byte 0      selector: policy = b % 3 (Basic256Sha256, Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss),
//               mode = b / 3 % 2 (Sign, SignAndEncrypt), kind = b / 6 % 2:
//                 0: symmetric — the target opens a secured channel itself (HEL, a valid OPN, the
//                    response's keys), then feeds the records as MSG/CLO chunks;
//                 1: asymmetric — after HEL, the records are OPN chunks.
//   records     flags (1 byte), length (2 bytes, little-endian), that many bytes (fewer at the end).
//
// The server nonce is random (RAND_bytes), so a chunk sealed ahead of time never verifies: the target seals
// each record the flags ask it to with the keys of this run, and the fuzzer controls the plaintext (header,
// sequence header, body, padding bytes) and which of the target's fixes apply.
//
// Symmetric records: the bytes are a chunk before sealing, MessageHeader | channel id | token id |
// SequenceHeader | body (| padding without kPad).
//   kSeal      sign (and encrypt) with the token in use; otherwise the bytes go out as they are
//   kFixHeader write the MessageSize, the channel id and the token id
//   kPad       write the padding (SignAndEncrypt); without it the bytes are zero-extended to whole blocks
//   kTamper    after sealing, XOR the byte at (first two bytes) with the third (0 -> 1); those three bytes
//              are not part of the chunk. From then on no request may reach the service.
//   kRenew     no chunk from the bytes: the target sends a valid OPN Renew and reads its response
//   kSwitch    seal this and later chunks with the newest token issued
//   kFixSeq    write the next sequence number
//   kSplit     feed the chunk in pieces of 7 bytes
// Asymmetric records: the bytes are an OPN chunk before sealing (MessageHeader, channel id, asymmetric
// security header, SequenceHeader, body).
//   kSeal      pad, sign with the client key and encrypt for the server (the policy the header names, or
//              the selector's) when the security header parses
//   kFixHeader write the channel's id (once it has one) and, for an unsealed chunk, the MessageSize
//   kSplit     as above

#include <cstdint>
#include <span>
#include <string>

namespace opcuad::fuzz::secure {

inline constexpr uint8_t kSeal = 0x01;
inline constexpr uint8_t kFixHeader = 0x02;
inline constexpr uint8_t kPad = 0x04;
inline constexpr uint8_t kTamper = 0x08;
inline constexpr uint8_t kRenew = 0x10;
inline constexpr uint8_t kSwitch = 0x20;
inline constexpr uint8_t kFixSeq = 0x40;
inline constexpr uint8_t kSplit = 0x80;

inline constexpr uint8_t kPolicies = 3;
inline constexpr uint8_t kSymmetric = 0;
inline constexpr uint8_t kAsymmetric = 1;

// policy 0..2, encrypt: SignAndEncrypt, kind: kSymmetric or kAsymmetric.
constexpr uint8_t selector(uint8_t policy, bool encrypt, uint8_t kind) noexcept {
  return static_cast<uint8_t>(policy + kPolicies * (encrypt ? 1 : 0) + 2 * kPolicies * kind);
}

inline void append_record(std::string& input, uint8_t flags, std::span<const uint8_t> bytes) {
  const size_t n = bytes.size() > 0xffff ? 0xffff : bytes.size();
  input.push_back(static_cast<char>(flags));
  input.push_back(static_cast<char>(n & 0xff));
  input.push_back(static_cast<char>(n >> 8));
  input.append(reinterpret_cast<const char*>(bytes.data()), n);
}

}  // namespace opcuad::fuzz::secure
