#pragma once
// In-memory transport for SecureChannel tests: the channel over memory (memory_channel.hpp) driven with
// Catch2 checks, and a client side that builds HEL / OPN / MSG chunks and parses the server's replies.

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/transport/channel_test_access.hpp"
#include "tests/unit/transport/memory_channel.hpp"
#include "transport/secure_channel.hpp"
#include "ua/codec.hpp"
#include "ua/generated/status_codes.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::transport::test {

// A message the server sent, parsed.
struct ServerMessage {
  std::string type;  // "ACK", "ERR", "OPN", "MSG"
  char chunk = 'F';
  uint32_t channel_id = 0;
  uint32_t token_id = 0;
  uint32_t sequence = 0;
  uint32_t request_id = 0;
  uint32_t size = 0;
  std::vector<uint8_t> body;  // after all headers
  uint32_t chunks = 1;        // chunks the message came in (reassembled by ServiceHarness::collect)
};

// Splits the server's output into messages; returns false on a framing problem.
inline bool parse_output(const std::string& out, std::vector<ServerMessage>& messages) {
  size_t pos = 0;
  while (pos + 8 <= out.size()) {
    ServerMessage m;
    m.type = out.substr(pos, 3);
    m.chunk = out[pos + 3];
    std::memcpy(&m.size, out.data() + pos + 4, 4);
    if (m.size < 8 || pos + m.size > out.size()) return false;
    std::span<const uint8_t> msg(reinterpret_cast<const uint8_t*>(out.data()) + pos, m.size);
    ua::Decoder d(msg.subspan(8));
    if (m.type == "MSG") {
      m.channel_id = d.read_u32();
      m.token_id = d.read_u32();
      m.sequence = d.read_u32();
      m.request_id = d.read_u32();
    } else if (m.type == "OPN") {
      m.channel_id = d.read_u32();
      ua::String policy;
      ua::ByteString cert, thumb;
      ua::decode(d, policy);
      ua::decode(d, cert);
      ua::decode(d, thumb);
      m.sequence = d.read_u32();
      m.request_id = d.read_u32();
    }
    m.body.assign(d.position(), d.position() + d.remaining());
    pos += m.size;
    messages.push_back(std::move(m));
  }
  return pos == out.size();
}

// Decodes a message body as type T after checking its type NodeId.
template <class T>
bool decode_body(const ServerMessage& m, T& out) {
  ua::Decoder d(m.body);
  ua::NodeId type;
  ua::decode(d, type);
  if (!type.is_ns0(T::binary_encoding_id)) return false;
  ua::decode(d, out);
  return d.ok();
}

// The service result of a ServiceFault; Good when `m` is not one.
inline ua::StatusCode fault_of(const ServerMessage& m) {
  ua::ServiceFault fault;
  if (!decode_body(m, fault)) return ua::status::Good;
  return fault.response_header.service_result;
}

inline std::string hello(uint32_t receive = 65535, uint32_t send = 65535, uint32_t max_message = 0,
                         uint32_t max_chunks = 0, std::string url = "opc.tcp://localhost:4840") {
  return encode_hello(HelloMessage{0, receive, send, max_message, max_chunks, ua::String(url)});
}

inline void patch_size(std::string& s) {
  uint32_t n = static_cast<uint32_t>(s.size());
  std::memcpy(s.data() + 4, &n, 4);
}

inline std::string open_request(uint32_t sequence, uint32_t request_id,
                                ua::SecurityTokenRequestType type = ua::SecurityTokenRequestType::Issue,
                                uint32_t channel_id = 0, uint32_t lifetime = 600000,
                                std::string_view policy = kSecurityPolicyNone,
                                ua::MessageSecurityMode mode = ua::MessageSecurityMode::None) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  e.write_raw("OPNF\0\0\0\0", 8);
  e.write_u32(channel_id);
  ua::encode(e, ua::String(policy));
  ua::encode(e, ua::ByteString());
  ua::encode(e, ua::ByteString());
  e.write_u32(sequence);
  e.write_u32(request_id);
  ua::OpenSecureChannelRequest req;
  req.request_header.request_handle = 99;
  req.request_type = type;
  req.security_mode = mode;
  req.requested_lifetime = lifetime;
  ua::encode(e, ua::NodeId(0, ua::OpenSecureChannelRequest::binary_encoding_id));
  ua::encode(e, req);
  std::string s(reinterpret_cast<const char*>(buf.data()), buf.size());
  patch_size(s);
  return s;
}

// A symmetric chunk carrying `body` (already encoded: type NodeId + request).
inline std::string symmetric_chunk(const char* type, char chunk, uint32_t channel_id, uint32_t token_id,
                                   uint32_t sequence, uint32_t request_id, std::string_view body) {
  std::string s(type, 3);
  s += chunk;
  s.append(4, '\0');
  auto put = [&](uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); };
  put(channel_id);
  put(token_id);
  put(sequence);
  put(request_id);
  s.append(body);
  patch_size(s);
  return s;
}

template <class T>
std::string encode_request(const T& request) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  ua::encode(e, ua::NodeId(0, T::binary_encoding_id));
  ua::encode(e, request);
  return std::string(reinterpret_cast<const char*>(buf.data()), buf.size());
}

inline ua::ReadRequest read_request(uint32_t handle, size_t nodes) {
  ua::ReadRequest r;
  r.request_header.request_handle = handle;
  for (size_t i = 0; i < nodes; ++i)
    r.nodes_to_read.push_back(ua::ReadValueId{ua::NodeId(2, uint32_t(i)), 13, {}, {}});
  return r;
}

// One server channel over memory, started, with the client's view of it.
struct Harness : MemoryChannel {
  explicit Harness(TransportConfig c = {}) : MemoryChannel(std::move(c)) { channel->start(); }

  // Feeds bytes, `step` at a time (0: all at once), running the loop after each piece.
  void feed(std::string_view bytes, size_t step = 0) {
    size_t pos = 0;
    while (pos < bytes.size()) {
      const size_t n = deliver(bytes.substr(pos, step ? step : bytes.size() - pos));
      REQUIRE(n > 0);
      pos += n;
      run();
    }
  }
  void run() { turn(); }
  std::vector<ServerMessage> messages() {
    std::vector<ServerMessage> m;
    REQUIRE(parse_output(sink.out, m));
    return m;
  }
  // HEL + OPN (feeding each `step` bytes at a time; 0: at once); keeps the OPN reply's channel id,
  // token id and lifetime, and clears the output.
  void open(uint32_t lifetime = 600000, const std::string& hello_message = hello(), size_t step = 0,
            uint32_t first_sequence = 1) {
    feed(hello_message, step);
    feed(open_request(first_sequence, 1, ua::SecurityTokenRequestType::Issue, 0, lifetime), step);
    auto m = messages();
    REQUIRE(m.size() == 2);
    REQUIRE(m[1].type == "OPN");
    ua::OpenSecureChannelResponse resp;
    REQUIRE(decode_body(m[1], resp));
    channel_id = resp.security_token.channel_id;
    token_id = resp.security_token.token_id;
    revised_lifetime = resp.security_token.revised_lifetime;
    next_sequence = first_sequence + 1;
    next_request = 2;
    sink.out.clear();
  }
  std::string msg(std::string_view body, char chunk = 'F', uint32_t request_id = 0) {
    return symmetric_chunk("MSG", chunk, channel_id, token_id, next_sequence++,
                           request_id ? request_id : next_request++, body);
  }

  uint32_t channel_id = 0, token_id = 0, revised_lifetime = 0, next_sequence = 1, next_request = 1;
};

inline ua::StatusCode error_of(const ServerMessage& m) {
  ErrorMessage err;
  REQUIRE(decode_error(m.body, err).is_good());
  return err.error;
}

}  // namespace opcuad::transport::test
