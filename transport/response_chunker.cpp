// ResponseChunker (response_chunker.hpp): the body room of a chunk and the client's response limits.
#include "transport/response_chunker.hpp"

#include <algorithm>
#include <cstring>

#include "ua/codec.hpp"

namespace opcuad::transport {

void ResponseChunker::set_limits(uint32_t send_buffer_size, uint32_t peer_max_message_size,
                                 uint32_t peer_max_chunk_count) noexcept {
  send_buffer_size_ = send_buffer_size;
  peer_max_message_size_ = peer_max_message_size;
  peer_max_chunk_count_ = peer_max_chunk_count;
  update();
}

void ResponseChunker::set_security(const security::Policy& policy, ua::MessageSecurityMode mode) noexcept {
  policy_ = &policy;
  mode_ = mode;
  update();
}

void ResponseChunker::update() noexcept {
  // Part 6 §6.7.2: the encrypted part (everything after the security header) is whole cipher blocks, and
  // holds the sequence header, the body, the padding-size byte and the signature.
  const size_t chunk = send_buffer_size_;
  switch (mode_) {
    case ua::MessageSecurityMode::Sign:
      body_capacity_ = chunk - kSymmetricPrefix - policy_->signature_length;
      break;
    case ua::MessageSecurityMode::SignAndEncrypt: {
      const size_t block = policy_->block_size;
      const size_t encrypted = (chunk - kSymmetricHeaderSize) / block * block;
      body_capacity_ = encrypted - kSequenceHeaderSize - policy_->signature_length - 1;
      break;
    }
    default:
      body_capacity_ = chunk - kSymmetricPrefix;
  }
}

size_t ResponseChunker::max_response_body() const noexcept {
  size_t limit = SIZE_MAX;
  if (peer_max_message_size_) limit = peer_max_message_size_;
  if (peer_max_chunk_count_) limit = std::min(limit, size_t{peer_max_chunk_count_} * body_capacity_);
  return limit;
}

void ResponseChunker::write_header(ua::ByteBuffer& buf, ChunkType chunk, uint32_t channel_id,
                                   uint32_t request_id) noexcept {
  const uint32_t words[6] = {
      static_cast<uint32_t>(MessageType::Message) | static_cast<uint32_t>(chunk) << 24,
      static_cast<uint32_t>(buf.size()),
      channel_id,
      0,  // token id, stamped at send time
      0,  // sequence number, stamped at send time
      request_id,
  };
  std::memcpy(buf.data(), words, sizeof words);
}

ResponseChunker::Refused ResponseChunker::refused(std::span<const uint8_t> body) {
  ua::Decoder d(body);
  ua::NodeId type;
  ua::decode(d, type);
  d.read_u64();  // Timestamp
  Refused r;
  r.request_handle = d.read_u32();
  r.service_fault = type.is_ns0(ua::ServiceFault::binary_encoding_id);
  return r;
}

}  // namespace opcuad::transport
