#include "bench/blocking_client.hpp"

#include <asio/buffer.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cstring>
#include <random>

#include "transport/uatcp.hpp"

namespace opcuad::bench {

namespace {

using transport::MessageType;

constexpr uint32_t kBufferSize = 65536;         // asked for in HEL, both directions
constexpr uint32_t kTokenLifetimeMs = 3600000;  // no renewal during a run

bool write_all(asio::ip::tcp::socket& s, std::span<const uint8_t> bytes, std::string& error) {
  asio::error_code ec;
  asio::write(s, asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec) error = "write: " + ec.message();
  return !ec;
}

// Reads one chunk: its message and chunk type, and `rest`, the bytes after its 8-byte header. An ERR
// fails with the server's reason.
bool read_chunk(asio::ip::tcp::socket& s, MessageType& type, char& chunk_type, std::vector<uint8_t>& rest,
                std::string& error) {
  uint8_t h[transport::kHeaderSize];
  asio::error_code ec;
  asio::read(s, asio::buffer(h), ec);
  if (ec) {
    error = "read: " + ec.message();
    return false;
  }
  type = static_cast<MessageType>(get_u32(h) & 0xFFFFFF);
  chunk_type = static_cast<char>(get_u32(h) >> 24);
  const uint32_t size = get_u32(h + 4);
  if (!plausible_chunk_size(size)) {
    error = "implausible chunk size " + std::to_string(size);
    return false;
  }
  rest.resize(size - transport::kHeaderSize);
  asio::read(s, asio::buffer(rest), ec);
  if (ec) {
    error = "read: " + ec.message();
    return false;
  }
  if (type == MessageType::Error) {
    transport::ErrorMessage err;
    read_error(rest, err, error);
    return false;
  }
  return true;
}

// A fresh random nonce per session (Part 4 §5.6.2: never used in another request); servers such as
// node-opcua refuse a nonce they have seen before with BadNonceInvalid.
ua::ByteString session_nonce() {
  thread_local std::mt19937_64 nonce_source{std::random_device{}()};
  std::string nonce(32, '\0');
  for (size_t i = 0; i < nonce.size(); i += 8) {
    const uint64_t r = nonce_source();
    std::memcpy(nonce.data() + i, &r, 8);
  }
  return ua::ByteString(std::move(nonce));
}

}  // namespace

bool open_session(asio::ip::tcp::socket& s, const Endpoint& endpoint, const std::string& session_name,
                  SessionInfo& out, std::string& error, double session_timeout_ms) {
  asio::error_code ec;
  s.set_option(asio::ip::tcp::no_delay(true), ec);

  // HEL / ACK (Part 6 §7.1.2.3).
  transport::HelloMessage hello;
  hello.receive_buffer_size = kBufferSize;
  hello.send_buffer_size = kBufferSize;
  hello.endpoint_url = ua::String(endpoint.url);
  std::string hel = transport::encode_hello(hello);
  if (!write_all(s, {reinterpret_cast<const uint8_t*>(hel.data()), hel.size()}, error)) return false;
  MessageType type;
  char chunk_type;
  std::vector<uint8_t> in;
  if (!read_chunk(s, type, chunk_type, in, error)) return false;
  if (type != MessageType::Acknowledge || in.size() < 20) {
    error = "expected ACK";
    return false;
  }
  out.server_receive_buffer = get_u32(in.data() + 4);

  // OPN, SecurityPolicy None: asymmetric header with null certificates (Part 6 §6.7.2.3).
  ua::OpenSecureChannelRequest opn;
  set_request_header(opn.request_header, ua::NodeId(), 1, 0);
  opn.request_type = ua::SecurityTokenRequestType::Issue;
  opn.security_mode = ua::MessageSecurityMode::None;
  opn.requested_lifetime = kTokenLifetimeMs;
  ua::ByteBuffer msg;
  append_open(msg, 0, out.next_sequence++, 1, opn);  // no SecureChannelId yet; request id 1
  if (!write_all(s, msg.span(), error)) return false;
  if (!read_chunk(s, type, chunk_type, in, error)) return false;
  if (type != MessageType::Open) {
    error = "expected an OPN response";
    return false;
  }
  {
    ua::Decoder d(in);
    read_open_headers(d);
    ua::NodeId type_id;
    ua::decode(d, type_id);
    ua::OpenSecureChannelResponse r;
    ua::decode(d, r);
    if (!d.ok() || !type_id.is_ns0(ua::OpenSecureChannelResponse::binary_encoding_id) ||
        !r.response_header.service_result.is_good()) {
      error = "OpenSecureChannel failed";
      return false;
    }
    out.channel_id = r.security_token.channel_id;
    out.token_id = r.security_token.token_id;
  }

  // CreateSession / ActivateSession, anonymous (Part 4 §5.6.2, §5.6.3), request ids 2 and 3, no
  // timeout hint.
  ua::CreateSessionRequest create;
  create.client_description.application_uri = "urn:opcuad:bench";
  create.client_description.application_name = ua::LocalizedText{"", "opcuad-bench"};
  create.client_description.application_type = ua::ApplicationType::Client;
  create.endpoint_url = ua::String(endpoint.url);
  create.session_name = ua::String(session_name);
  create.client_nonce = session_nonce();
  create.requested_session_timeout = session_timeout_ms;
  ua::CreateSessionResponse created;
  out.authentication_token = ua::NodeId();  // none before the session exists
  if (!blocking_call(s, out, 2, create, created, error, 0)) {
    error = "CreateSession: " + error;
    return false;
  }
  out.authentication_token = created.authentication_token;

  ua::ActivateSessionRequest activate;
  activate.user_identity_token =
      ua::ExtensionObject::make(ua::AnonymousIdentityToken{ua::String("anonymous")});
  ua::ActivateSessionResponse activated;
  if (!blocking_call(s, out, 3, activate, activated, error, 0)) {
    error = "ActivateSession: " + error;
    return false;
  }
  return true;
}

bool send_message(asio::ip::tcp::socket& s, SessionInfo& info, uint32_t request_id, std::span<const uint8_t> body,
                  std::string& error) {
  const size_t limit = info.server_receive_buffer ? info.server_receive_buffer : transport::kMinBufferSize;
  const size_t room = limit - transport::kSymmetricPrefix;
  ua::ByteBuffer out(body.size() + (body.size() / room + 1) * transport::kSymmetricPrefix);
  size_t pos = 0;
  do {
    const size_t n = std::min(room, body.size() - pos);
    const char chunk_type = pos + n == body.size() ? 'F' : 'C';
    append_chunk(out, MessageType::Message, chunk_type, info, request_id, body.subspan(pos, n));
    pos += n;
  } while (pos < body.size());
  return write_all(s, out.span(), error);
}

bool read_response(asio::ip::tcp::socket& s, uint32_t& request_id, std::vector<uint8_t>& body, std::string& error) {
  body.clear();
  std::vector<uint8_t> chunk;
  for (;;) {
    MessageType type;
    char chunk_type;
    if (!read_chunk(s, type, chunk_type, chunk, error)) return false;
    // `chunk` starts after the 8-byte header: channel, token, sequence number, request id, body.
    if (type != MessageType::Message || chunk.size() < transport::kSymmetricPrefix - transport::kHeaderSize) {
      error = "unexpected message type";
      return false;
    }
    request_id = get_u32(chunk.data() + 12);
    if (chunk_type == 'A') {
      error = "response aborted";
      return false;
    }
    body.insert(body.end(), chunk.begin() + (transport::kSymmetricPrefix - transport::kHeaderSize), chunk.end());
    if (chunk_type == 'F') return true;
  }
}

bool close_session(asio::ip::tcp::socket& s, SessionInfo& info, uint32_t request_id, std::string& error) {
  ua::CloseSessionRequest req;
  req.delete_subscriptions = true;
  ua::CloseSessionResponse resp;
  if (!blocking_call(s, info, request_id, req, resp, error)) {
    error = "CloseSession: " + error;
    return false;
  }
  // CLO (Part 6 §6.7.6): a CloseSecureChannelRequest in a symmetric chunk of type CLO; no response.
  ua::CloseSecureChannelRequest clo;
  set_request_header(clo.request_header, ua::NodeId(), request_id + 1, 0);
  ua::ByteBuffer out;
  append_request(out, MessageType::Close, info, request_id + 1, clo);
  asio::error_code ec;
  asio::write(s, asio::buffer(out.data(), out.size()), ec);
  if (ec) error = "CLO: " + ec.message();
  return !ec;
}

}  // namespace opcuad::bench
