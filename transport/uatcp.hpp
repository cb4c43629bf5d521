#pragma once
// UA TCP framing (Part 6 §7.1.2) and secure conversation headers (Part 6 §6.7.2): socket-free.
//
// Every message starts with an 8-byte header:
//
//   +----------------+-----------+------------------------+
//   | MessageType[3] | Chunk[1]  | MessageSize (UInt32)   |   MessageSize counts the whole chunk,
//   | HEL ACK ERR    | F C A     |                        |   header included
//   | RHE OPN MSG CLO|           |                        |
//   +----------------+-----------+------------------------+
//
// Symmetric chunks (MSG, CLO) continue with
//   SecureChannelId u32 | TokenId u32 | SequenceNumber u32 | RequestId u32 | body
// and asymmetric chunks (OPN) with
//   SecureChannelId u32 | SecurityPolicyUri String | SenderCertificate ByteString |
//   ReceiverCertificateThumbprint ByteString | SequenceNumber u32 | RequestId u32 | body

#include <cstdint>
#include <span>
#include <string>

#include "ua/bytes.hpp"
#include "ua/status_code.hpp"

namespace opcuad::transport {

enum class MessageType : uint32_t {
  Hello = 'H' | 'E' << 8 | 'L' << 16,
  Acknowledge = 'A' | 'C' << 8 | 'K' << 16,
  Error = 'E' | 'R' << 8 | 'R' << 16,
  ReverseHello = 'R' | 'H' << 8 | 'E' << 16,
  Open = 'O' | 'P' << 8 | 'N' << 16,
  Message = 'M' | 'S' << 8 | 'G' << 16,
  Close = 'C' | 'L' << 8 | 'O' << 16,
};

enum class ChunkType : uint8_t { Final = 'F', Intermediate = 'C', Abort = 'A' };

inline constexpr size_t kHeaderSize = 8;
inline constexpr size_t kSymmetricHeaderSize = kHeaderSize + 4 + 4;  // + channel id, token id
inline constexpr size_t kSequenceHeaderSize = 8;                     // sequence number, request id
// Bytes in front of a symmetric chunk's body; a response buffer reserves this much headroom so its
// headers are written in place.
inline constexpr size_t kSymmetricPrefix = kSymmetricHeaderSize + kSequenceHeaderSize;
inline constexpr uint32_t kMinBufferSize = 8192;  // Part 6 §7.1.2.3: buffers are at least 8192 bytes
inline constexpr size_t kMaxEndpointUrlLength = 4096;
inline constexpr std::string_view kSecurityPolicyNone = "http://opcfoundation.org/UA/SecurityPolicy#None";

struct FrameHeader {
  MessageType type;
  ChunkType chunk;
  uint32_t size;
};

enum class ParseResult { Good, NeedMore, Bad };

// Reads the 8-byte header at the front of `in`. Bad carries the status to send in ERR.
ParseResult parse_frame_header(std::span<const uint8_t> in, FrameHeader& out, ua::StatusCode& error) noexcept;
bool is_known_message_type(uint32_t raw) noexcept;

struct HelloMessage {
  uint32_t protocol_version = 0;
  uint32_t receive_buffer_size = 0;
  uint32_t send_buffer_size = 0;
  uint32_t max_message_size = 0;  // 0: no limit
  uint32_t max_chunk_count = 0;   // 0: no limit
  ua::String endpoint_url;
};

struct AcknowledgeMessage {
  uint32_t protocol_version = 0;
  uint32_t receive_buffer_size = 0;
  uint32_t send_buffer_size = 0;
  uint32_t max_message_size = 0;
  uint32_t max_chunk_count = 0;
};

struct ErrorMessage {
  ua::StatusCode error;
  ua::String reason;
};

// Decodes a HEL body (after the 8-byte header).
ua::StatusCode decode_hello(std::span<const uint8_t> body, HelloMessage& out);
// Whole messages, header included, ready to send.
std::string encode_acknowledge(const AcknowledgeMessage& ack);
std::string encode_error(ua::StatusCode error, std::string_view reason);
ua::StatusCode decode_error(std::span<const uint8_t> body, ErrorMessage& out);
std::string encode_hello(const HelloMessage& hello);  // used by tests and the load harness

}  // namespace opcuad::transport
