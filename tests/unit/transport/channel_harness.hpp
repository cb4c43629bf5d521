#pragma once
// In-memory transport for SecureChannel tests: a sink that records what the server writes (and can stall
// like a client that stops reading), a test ServiceHandler, and a client side that builds HEL / OPN / MSG
// chunks and parses the server's replies.

#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/secure_channel.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::transport::test {

class MemorySink : public Sink {
 public:
  explicit MemorySink(asio::io_context& ctx) : ctx_(ctx) {}
  void async_write(std::span<asio::const_buffer> buffers, WriteDone done) override {
    ++writes;
    std::string bytes;
    for (const auto& b : buffers) bytes.append(static_cast<const char*>(b.data()), b.size());
    pending_.push_back({std::move(bytes), std::move(done)});
    if (!stalled) flush();
  }
  // Completes the writes held while stalled.
  void flush() {
    while (!pending_.empty()) {
      auto p = std::move(pending_.front());
      pending_.pop_front();
      out += p.bytes;
      asio::post(ctx_, [done = std::move(p.done)] { done({}); });
    }
  }
  bool stalled = false;
  size_t writes = 0;
  std::string out;

 private:
  struct Pending {
    std::string bytes;
    WriteDone done;
  };
  asio::io_context& ctx_;
  std::deque<Pending> pending_;
};

class MemoryEvents : public ChannelEvents {
 public:
  void resume_reading() override { ++resumed; }
  void close_transport() override { closed = true; }
  int resumed = 0;
  bool closed = false;
};

// Answers ReadRequest with one Double per node (value = node index); leaves other requests unhandled.
class ReadHandler : public ServiceHandler {
 public:
  bool on_request(SecureChannel& channel, const RequestContext& ctx, ua::Decoder& body) override {
    ++requests;
    if (ctx.type_id != ua::ReadRequest::binary_encoding_id) return false;
    ua::ReadRequest req;
    ua::decode(body, req);
    if (!body.ok()) {
      channel.send_fault(ctx.request_id, 0, body.status());
      return true;
    }
    ua::ReadResponse resp;
    resp.response_header.request_handle = req.request_header.request_handle;
    resp.results.resize(req.nodes_to_read.size());
    for (size_t i = 0; i < resp.results.size(); ++i) resp.results[i].value = ua::Variant(double(i));
    if (defer) {
      deferred.push_back({ctx.request_id, std::move(resp)});
    } else {
      channel.send(ctx.request_id, resp);
    }
    return true;
  }
  void on_channel_closed(SecureChannel&) override { ++closed; }
  int requests = 0;
  int closed = 0;
  bool defer = false;
  std::vector<std::pair<uint32_t, ua::ReadResponse>> deferred;
};

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
    messages.push_back(std::move(m));
    pos += m.size;
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
  for (size_t i = 0; i < nodes; ++i) r.nodes_to_read.push_back(ua::ReadValueId{ua::NodeId(2, uint32_t(i)), 13, {}, {}});
  return r;
}

// One server channel over memory, with the client's view of it.
struct Harness {
  explicit Harness(TransportConfig c = {}) : config(c) {
    channel = std::make_shared<SecureChannel>(ctx, sink, events, pool, stats, config, handler, ids);
    channel->start();
  }
  ~Harness() { channel->detach(); }

  // Feeds bytes, `step` at a time (0: all at once), running the loop after each piece.
  void feed(std::string_view bytes, size_t step = 0) {
    size_t pos = 0;
    while (pos < bytes.size()) {
      size_t n = step ? std::min(step, bytes.size() - pos) : bytes.size() - pos;
      auto space = channel->receive_space();
      n = std::min(n, space.size());
      REQUIRE(n > 0);
      std::memcpy(space.data(), bytes.data() + pos, n);
      channel->on_received(n);
      pos += n;
      run();
    }
  }
  void run() {
    ctx.restart();
    ctx.poll();
  }
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
    return symmetric_chunk("MSG", chunk, channel_id, token_id, next_sequence++, request_id ? request_id : next_request++,
                           body);
  }

  asio::io_context ctx;
  TransportConfig config;
  MemorySink sink{ctx};
  MemoryEvents events;
  BufferPool pool;
  TransportStats stats;
  ReadHandler handler;
  ChannelIdSource ids;
  std::shared_ptr<SecureChannel> channel;
  uint32_t channel_id = 0, token_id = 0, revised_lifetime = 0, next_sequence = 1, next_request = 1;
};

inline ua::StatusCode error_of(const ServerMessage& m) {
  ErrorMessage err;
  REQUIRE(decode_error(m.body, err).is_good());
  return err.error;
}

}  // namespace opcuad::transport::test
