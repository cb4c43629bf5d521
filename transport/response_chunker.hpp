#pragma once
// ResponseChunker: an encoded response split into MSG chunks that fit what the client negotiated (Part 6
// §6.7.2: each chunk at most its ReceiveBufferSize, the whole at most its MaxMessageSize and MaxChunkCount,
// Part 6 §7.1.2.3), the security of the channel leaving less room for the body of each chunk.
//
// A response is encoded once, behind kSymmetricPrefix bytes of headroom. When it fits one chunk the same
// buffer goes out (no copy); otherwise each chunk is a buffer of its own. Token ids and sequence numbers
// are left 0: the channel stamps them at send time (OutputWriter, ChunkStamper), where a secured chunk is
// also signed and encrypted in place. A response the client's limits refuse is not sent at all; the
// channel answers BadResponseTooLarge instead (Part 6 §6.7.2.2).
//
// shard-local: owned by one SecureChannel; no locks; no allocation beyond the chunk buffers `acquire`
// hands out (the channel's BufferPool).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "transport/security/policy.hpp"
#include "transport/uatcp.hpp"
#include "ua/buffer.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::transport {

class ResponseChunker {
 public:
  enum class Split {
    Single,    // the response fits one chunk: `encoded` itself was emitted
    Chunked,   // emitted in several chunks; `encoded` is left to the caller to release
    TooLarge,  // the client's limits refuse it (BadResponseTooLarge); nothing was emitted
  };

  explicit ResponseChunker(uint32_t send_buffer_size) noexcept { set_limits(send_buffer_size, 0, 0); }

  // After Hello: our send size (at most the client's ReceiveBufferSize) and the client's MaxMessageSize
  // and MaxChunkCount, 0 meaning no limit (Part 6 §7.1.2.4).
  void set_limits(uint32_t send_buffer_size, uint32_t peer_max_message_size,
                  uint32_t peer_max_chunk_count) noexcept;
  // After OpenSecureChannel: the security every chunk gets (a signature; with encryption, padding and
  // whole cipher blocks).
  void set_security(const security::Policy& policy, ua::MessageSecurityMode mode) noexcept;

  // What is left of one chunk for the body once the headers, the signature and (encrypted) the
  // padding-size byte fit.
  size_t body_capacity() const noexcept { return body_capacity_; }
  // The largest response body the client accepts (its MaxMessageSize, and its MaxChunkCount times the
  // body room of one chunk); SIZE_MAX when it set neither.
  size_t max_response_body() const noexcept;
  uint32_t send_buffer_size() const noexcept { return send_buffer_size_; }
  uint32_t peer_max_message_size() const noexcept { return peer_max_message_size_; }
  uint32_t peer_max_chunk_count() const noexcept { return peer_max_chunk_count_; }

  // Splits `encoded` (kSymmetricPrefix bytes of headroom, then the body) into chunks of the channel
  // `channel_id` answering `request_id`. `acquire()` returns an empty chunk buffer with the headroom
  // (ua::ByteBuffer of kSymmetricPrefix bytes); `emit(ua::ByteBuffer&&, bool last)` takes each chunk in
  // order. Templates rather than std::function: nothing is allocated per response.
  template <class Acquire, class Emit>
  Split split(ua::ByteBuffer& encoded, uint32_t channel_id, uint32_t request_id, Acquire&& acquire,
              Emit&& emit) const;
  // As split(), for a response the caller keeps (a NotificationMessage retained for Republish): every
  // chunk is a copy, even a single one, and `encoded` is left as it was. Chunked or TooLarge.
  template <class Acquire, class Emit>
  Split split_copy(const ua::ByteBuffer& encoded, uint32_t channel_id, uint32_t request_id, Acquire&& acquire,
                   Emit&& emit) const;

  // The MSG header and sequence header of a chunk whose size is `buf`'s now.
  static void write_header(ua::ByteBuffer& buf, ChunkType chunk, uint32_t channel_id,
                           uint32_t request_id) noexcept;

  // What a refused response answered: every response starts with its type NodeId and a ResponseHeader
  // {Timestamp, RequestHandle, ...}.
  struct Refused {
    uint32_t request_handle = 0;
    bool service_fault = false;  // not even a ServiceFault fits: the channel cannot answer at all
  };
  static Refused refused(std::span<const uint8_t> body);

 private:
  void update() noexcept;
  // True when the client's limits refuse a body of `body` bytes (Part 6 §6.7.2.2).
  bool refuses(size_t body) const noexcept {
    const size_t chunks = (body + body_capacity_ - 1) / body_capacity_;
    return (peer_max_chunk_count_ && chunks > peer_max_chunk_count_) ||
           (peer_max_message_size_ && body > peer_max_message_size_);
  }
  // Emits the body of `encoded` as copies in chunks of at most body_capacity_ bytes.
  template <class Acquire, class Emit>
  void copy_chunks(const ua::ByteBuffer& encoded, uint32_t channel_id, uint32_t request_id, Acquire& acquire,
                   Emit& emit) const;

  uint32_t send_buffer_size_ = 0;
  uint32_t peer_max_message_size_ = 0;  // 0: no limit
  uint32_t peer_max_chunk_count_ = 0;   // 0: no limit
  const security::Policy* policy_ = &security::policy(security::PolicyId::None);
  ua::MessageSecurityMode mode_ = ua::MessageSecurityMode::None;
  size_t body_capacity_ = 0;
};

template <class Acquire, class Emit>
ResponseChunker::Split ResponseChunker::split(ua::ByteBuffer& encoded, uint32_t channel_id,
                                              uint32_t request_id, Acquire&& acquire, Emit&& emit) const {
  const size_t body = encoded.size() - kSymmetricPrefix;
  const size_t max_body = body_capacity_;
  if (body <= max_body && (peer_max_message_size_ == 0 || body <= peer_max_message_size_)) {
    write_header(encoded, ChunkType::Final, channel_id, request_id);
    emit(std::move(encoded), true);
    return Split::Single;
  }
  if (refuses(body)) return Split::TooLarge;
  copy_chunks(encoded, channel_id, request_id, acquire, emit);
  return Split::Chunked;
}

template <class Acquire, class Emit>
ResponseChunker::Split ResponseChunker::split_copy(const ua::ByteBuffer& encoded, uint32_t channel_id,
                                                   uint32_t request_id, Acquire&& acquire,
                                                   Emit&& emit) const {
  if (refuses(encoded.size() - kSymmetricPrefix)) return Split::TooLarge;
  copy_chunks(encoded, channel_id, request_id, acquire, emit);
  return Split::Chunked;
}

template <class Acquire, class Emit>
void ResponseChunker::copy_chunks(const ua::ByteBuffer& encoded, uint32_t channel_id, uint32_t request_id,
                                  Acquire& acquire, Emit& emit) const {
  const size_t body = encoded.size() - kSymmetricPrefix;
  const size_t max_body = body_capacity_;
  const size_t chunks = std::max<size_t>((body + max_body - 1) / max_body, 1);
  for (size_t i = 0; i < chunks; ++i) {
    const size_t offset = i * max_body;
    const size_t n = std::min(max_body, body - offset);
    ua::ByteBuffer c = acquire();
    c.append(encoded.data() + kSymmetricPrefix + offset, n);
    const bool last = i + 1 == chunks;
    write_header(c, last ? ChunkType::Final : ChunkType::Intermediate, channel_id, request_id);
    emit(std::move(c), last);
  }
}

}  // namespace opcuad::transport
