#include "transport/uatcp.hpp"

#include <cstring>

#include "ua/codec.hpp"

namespace opcuad::transport {

namespace {

void put_header(ua::Encoder& e, MessageType type, ChunkType chunk) {
  const uint32_t tag = static_cast<uint32_t>(type) | static_cast<uint32_t>(chunk) << 24;
  e.write_u32(tag);
  e.write_u32(0);  // size, patched by finish()
}

std::string finish(ua::ByteBuffer& buf) {
  const auto size = static_cast<uint32_t>(buf.size());
  std::memcpy(buf.data() + 4, &size, 4);
  return std::string(reinterpret_cast<const char*>(buf.data()), buf.size());
}

}  // namespace

bool is_known_message_type(uint32_t raw) noexcept {
  switch (static_cast<MessageType>(raw)) {
    case MessageType::Hello:
    case MessageType::Acknowledge:
    case MessageType::Error:
    case MessageType::ReverseHello:
    case MessageType::Open:
    case MessageType::Message:
    case MessageType::Close:
      return true;
  }
  return false;
}

ParseResult parse_frame_header(std::span<const uint8_t> in, FrameHeader& out,
                               ua::StatusCode& error) noexcept {
  if (in.size() < kHeaderSize) return ParseResult::NeedMore;
  uint32_t tag = 0;
  std::memcpy(&tag, in.data(), 4);
  std::memcpy(&out.size, in.data() + 4, 4);
  const uint32_t type = tag & 0x00FFFFFF;
  const auto chunk = static_cast<uint8_t>(tag >> 24);
  if (!is_known_message_type(type)) {
    error = ua::status::BadTcpMessageTypeInvalid;
    return ParseResult::Bad;
  }
  if (chunk != 'F' && chunk != 'C' && chunk != 'A') {
    error = ua::status::BadTcpMessageTypeInvalid;
    return ParseResult::Bad;
  }
  if (out.size < kHeaderSize) {
    error = ua::status::BadTcpMessageTypeInvalid;
    return ParseResult::Bad;
  }
  out.type = static_cast<MessageType>(type);
  out.chunk = static_cast<ChunkType>(chunk);
  return ParseResult::Good;
}

ua::StatusCode decode_hello(std::span<const uint8_t> body, HelloMessage& out) {
  ua::DecodeLimits limits;
  limits.max_string_length = kMaxEndpointUrlLength;
  ua::Decoder d(body, limits);
  out.protocol_version = d.read_u32();
  out.receive_buffer_size = d.read_u32();
  out.send_buffer_size = d.read_u32();
  out.max_message_size = d.read_u32();
  out.max_chunk_count = d.read_u32();
  ua::decode(d, out.endpoint_url);
  if (d.status() == ua::status::BadEncodingLimitsExceeded) return ua::status::BadTcpEndpointUrlInvalid;
  return d.status();
}

std::string encode_acknowledge(const AcknowledgeMessage& ack) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  put_header(e, MessageType::Acknowledge, ChunkType::Final);
  e.write_u32(ack.protocol_version);
  e.write_u32(ack.receive_buffer_size);
  e.write_u32(ack.send_buffer_size);
  e.write_u32(ack.max_message_size);
  e.write_u32(ack.max_chunk_count);
  return finish(buf);
}

std::string encode_error(ua::StatusCode error, std::string_view reason) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  put_header(e, MessageType::Error, ChunkType::Final);
  e.write_u32(error.value());
  e.write_bytes(false, reason.substr(0, 4096));
  return finish(buf);
}

ua::StatusCode decode_error(std::span<const uint8_t> body, ErrorMessage& out) {
  ua::Decoder d(body);
  out.error = ua::StatusCode(d.read_u32());
  ua::decode(d, out.reason);
  return d.status();
}

std::string encode_hello(const HelloMessage& hello) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  put_header(e, MessageType::Hello, ChunkType::Final);
  e.write_u32(hello.protocol_version);
  e.write_u32(hello.receive_buffer_size);
  e.write_u32(hello.send_buffer_size);
  e.write_u32(hello.max_message_size);
  e.write_u32(hello.max_chunk_count);
  ua::encode(e, hello.endpoint_url);
  return finish(buf);
}

}  // namespace opcuad::transport
