#pragma once
// OPC UA TCP framing for the load harness's clients, socket-free: chunk headers,
// the prefix of symmetric chunks, request bodies and request headers on the way out, whole chunks taken
// from a receive buffer on the way in. Shared by ua_client (the load path), wire_client (the asynchronous
// chunk loop), blocking_client (session setup and setup calls), sub_connection (the Publish loop) and the
// canned server; the functions that run per request are inline and work in a caller's reused buffer, so
// they add no allocation or copy to the load path.
//
// A symmetric chunk (MSG, CLO; Part 6 §6.7.2, §7.1.2.2), little-endian:
//
//    0  MessageType (3 bytes) | chunk type ('F' final, 'C' intermediate, 'A' abort)
//    4  MessageSize            the whole chunk, these 24 bytes included
//    8  SecureChannelId
//   12  TokenId                symmetric security header
//   (from here on encrypted with SignAndEncrypt)
//   16  SequenceNumber         sequence header, +1 per chunk sent on the channel
//   20  RequestId
//   24  body                   type NodeId + request (or one piece of it)
//       padding                SignAndEncrypt: to whole AES blocks (Part 6 §6.7.2.5)
//       signature              Sign, SignAndEncrypt: HMAC over everything before it

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/client_security.hpp"
#include "transport/uatcp.hpp"
#include "ua/buffer.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"
#include "ua/node_id.hpp"

namespace opcuad::bench {

// How much a client asks the socket for per read.
inline constexpr size_t kReadSize = 256 * 1024;

// What a session needs to send requests after the handshake.
struct SessionInfo {
  uint32_t channel_id = 0;
  uint32_t token_id = 0;
  uint32_t next_sequence = 1;
  ua::NodeId authentication_token;
  uint32_t server_receive_buffer = 0;  // our chunks must fit (from ACK)
  // A signed (and encrypted) channel's keys; null with SecurityPolicy None. Shared so that SessionInfo
  // stays copyable; one connection uses it at a time.
  std::shared_ptr<ChannelCrypto> crypto;

  // Body bytes one chunk can carry to the server.
  size_t chunk_room() const noexcept {
    const size_t limit = server_receive_buffer ? server_receive_buffer : transport::kMinBufferSize;
    return limit - transport::kSymmetricPrefix - (crypto ? crypto->max_overhead() : 0);
  }
};

// A larger size in a chunk header means a broken stream, not a big response.
inline constexpr uint32_t kMaxChunkSize = 64u << 20;

inline void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}
inline uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline bool plausible_chunk_size(uint32_t size) {
  return size >= transport::kHeaderSize && size <= kMaxChunkSize;
}

// The 8-byte header every chunk starts with.
inline void put_chunk_header(uint8_t* p, transport::MessageType type, char chunk_type, uint32_t size) {
  put_u32(p, static_cast<uint32_t>(type) | static_cast<uint32_t>(chunk_type) << 24);
  put_u32(p + 4, size);
}

// The 24-byte prefix of a symmetric chunk carrying `body_size` bytes.
inline void put_symmetric_prefix(uint8_t* p, transport::MessageType type, char chunk_type, size_t body_size,
                                 uint32_t channel_id, uint32_t token_id, uint32_t sequence,
                                 uint32_t request_id) {
  put_chunk_header(p, type, chunk_type, static_cast<uint32_t>(transport::kSymmetricPrefix + body_size));
  put_u32(p + 8, channel_id);
  put_u32(p + 12, token_id);
  put_u32(p + 16, sequence);
  put_u32(p + 20, request_id);
}

// Appends one symmetric chunk on the session's channel (taking its next sequence number): the prefix,
// then `body` (an encoded request or a piece of one).
// On a secured channel the chunk is then sealed in place (signature, and padding and encryption with
// SignAndEncrypt). Returns false when sealing fails (nothing is appended then).
inline bool append_chunk(ua::ByteBuffer& out, transport::MessageType type, char chunk_type, SessionInfo& info,
                         uint32_t request_id, std::span<const uint8_t> body) {
  const size_t at = out.size();
  const size_t room = info.crypto ? info.crypto->max_overhead() : 0;
  uint8_t* p = out.extend(transport::kSymmetricPrefix + body.size() + room);
  put_symmetric_prefix(p, type, chunk_type, body.size(), info.channel_id, info.token_id, info.next_sequence++,
                       request_id);
  std::memcpy(p + transport::kSymmetricPrefix, body.data(), body.size());
  if (!info.crypto) return true;
  const size_t sealed = info.crypto->seal(p, transport::kSymmetricPrefix + body.size());
  out.resize(sealed ? at + sealed : at);
  return sealed != 0;
}

// Appends a message body: its binary encoding id, then the message.
template <class Message>
void encode_message(ua::ByteBuffer& out, const Message& message) {
  ua::Encoder e(out);
  ua::encode(e, ua::NodeId(0, Message::binary_encoding_id));
  ua::encode(e, message);
}

// Appends `request` as one final symmetric chunk, encoded in place behind its prefix. REQUIRES: it fits
// the server's receive buffer (blocking_client's send_message splits larger ones).
// Sealed like append_chunk; false when sealing fails.
template <class Request>
bool append_request(ua::ByteBuffer& out, transport::MessageType type, SessionInfo& info, uint32_t request_id,
                    const Request& request) {
  const size_t at = out.size();
  out.extend(transport::kSymmetricPrefix);
  encode_message(out, request);
  const size_t size = out.size() - at;
  put_symmetric_prefix(out.data() + at, type, 'F', size - transport::kSymmetricPrefix, info.channel_id,
                       info.token_id, info.next_sequence++, request_id);
  if (!info.crypto) return true;
  out.extend(info.crypto->max_overhead());
  const size_t sealed = info.crypto->seal(out.data() + at, size);
  out.resize(sealed ? at + sealed : at);
  return sealed != 0;
}

// The body of a received symmetric chunk (after the sequence header): unsealed in place on a secured
// channel. False when a check fails.
inline bool open_chunk(const SessionInfo& info, std::span<uint8_t> chunk, std::span<const uint8_t>& body) {
  if (info.crypto) return info.crypto->unseal(chunk, body);
  if (chunk.size() < transport::kSymmetricPrefix) return false;
  body = chunk.subspan(transport::kSymmetricPrefix);
  return true;
}

// OPN chunks (Part 6 §6.7.2.3), SecurityPolicy None. After the 8-byte header: the SecureChannelId, the
// asymmetric security header (policy URI, null sender certificate, null receiver thumbprint), the
// sequence header (sequence number, request id), then the message body.
//
// Appends `message` as one OPN chunk.
template <class Message>
void append_open(ua::ByteBuffer& out, uint32_t channel_id, uint32_t sequence, uint32_t request_id,
                 const Message& message) {
  const size_t at = out.size();
  out.extend(transport::kHeaderSize);
  ua::Encoder e(out);
  e.write_u32(channel_id);
  ua::encode(e, ua::String(transport::kSecurityPolicyNone));
  ua::encode(e, ua::ByteString());
  ua::encode(e, ua::ByteString());
  e.write_u32(sequence);
  e.write_u32(request_id);
  encode_message(out, message);
  put_chunk_header(out.data() + at, transport::MessageType::Open, 'F',
                   static_cast<uint32_t>(out.size() - at));
}

// Reads an OPN chunk's headers after the first 8 bytes, leaving `d` at the message body; returns the
// request id (check d.ok()).
inline uint32_t read_open_headers(ua::Decoder& d) {
  d.read_u32();  // SecureChannelId
  ua::String policy;
  ua::ByteString certificate, thumbprint;
  ua::decode(d, policy);
  ua::decode(d, certificate);
  ua::decode(d, thumbprint);
  d.read_u32();  // SequenceNumber
  return d.read_u32();
}

// Part 4 §7.28: the session's token (null before ActivateSession), the time of sending, the handle the
// response echoes, and how long the client waits (0: no hint).
inline void set_request_header(ua::RequestHeader& header, const ua::NodeId& token, uint32_t handle,
                               uint32_t timeout_hint) {
  header.authentication_token = token;
  header.timestamp = ua::DateTime::now();
  header.request_handle = handle;
  header.timeout_hint = timeout_hint;
}

// The receive side of an asynchronous connection: reads land behind the bytes not framed yet, whole
// chunks are taken from the front. The buffer doubles only when one chunk does not fit it.
class ChunkReader {
 public:
  void allocate(size_t size) { bytes_.resize(size); }

  // Where the next read goes. Once reads have reached the end, the partial chunk left there moves to the
  // front first. REQUIRES: allocate() was called.
  std::span<uint8_t> space() {
    if (end_ == bytes_.size()) {
      std::memmove(bytes_.data(), bytes_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      if (end_ == bytes_.size()) bytes_.resize(bytes_.size() * 2);
    }
    return {bytes_.data() + end_, bytes_.size() - end_};
  }
  void commit(size_t n) { end_ += n; }

  // Takes the next whole chunk off the front; it stays valid until the next space(). NeedMore when the
  // chunk is not all there, Bad when its size is implausible (more than `max_size`).
  transport::ParseResult next(std::span<const uint8_t>& chunk, uint32_t max_size = kMaxChunkSize) {
    std::span<uint8_t> writable;
    const auto r = next(writable, max_size);
    chunk = writable;
    return r;
  }
  // The same, writable in place (secured chunks are decrypted where they lie).
  transport::ParseResult next(std::span<uint8_t>& chunk, uint32_t max_size = kMaxChunkSize) {
    const size_t available = end_ - begin_;
    if (available < transport::kHeaderSize) {
      if (available == 0) begin_ = end_ = 0;
      return transport::ParseResult::NeedMore;
    }
    uint8_t* p = bytes_.data() + begin_;
    const uint32_t size = get_u32(p + 4);
    if (size < transport::kHeaderSize || size > max_size) return transport::ParseResult::Bad;
    if (available < size) return transport::ParseResult::NeedMore;
    chunk = {p, size};
    begin_ += size;
    return transport::ParseResult::Good;
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t begin_ = 0;  // [begin_, end_): received, not taken yet
  size_t end_ = 0;
};

// Decodes the body of an ERR chunk (after its 8-byte header) into `err`; `what` gets the line the
// harness reports. False when the body is malformed.
bool read_error(std::span<const uint8_t> body, transport::ErrorMessage& err, std::string& what);

}  // namespace opcuad::bench
