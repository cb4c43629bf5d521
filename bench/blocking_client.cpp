#include "bench/blocking_client.hpp"

#include <asio/buffer.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cstring>
#include <random>

#include "transport/security/asymmetric.hpp"
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

// Reads one chunk whole (its 8-byte header included) and its message and chunk type. An ERR fails with
// the server's reason.
bool read_chunk(asio::ip::tcp::socket& s, MessageType& type, char& chunk_type, std::vector<uint8_t>& chunk,
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
  chunk.resize(size);
  std::memcpy(chunk.data(), h, transport::kHeaderSize);
  asio::read(s, asio::buffer(chunk.data() + transport::kHeaderSize, size - transport::kHeaderSize), ec);
  if (ec) {
    error = "read: " + ec.message();
    return false;
  }
  if (type == MessageType::Error) {
    transport::ErrorMessage err;
    read_error(std::span<const uint8_t>(chunk).subspan(transport::kHeaderSize), err, error);
    return false;
  }
  return true;
}

// A fresh random nonce per session (Part 4 §5.6.2: never used in another request); servers such as
// node-opcua refuse a nonce they have seen before with BadNonceInvalid.
ua::ByteString session_nonce() {
  std::vector<uint8_t> nonce(32);
  if (!security::random_bytes(nonce)) {
    thread_local std::mt19937_64 fallback{std::random_device{}()};
    for (auto& b : nonce) b = static_cast<uint8_t>(fallback());
  }
  return ua::ByteString::from_bytes(nonce);
}

std::vector<uint8_t> concat(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  std::vector<uint8_t> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// The OpenSecureChannelResponse (type id and body) where `d` stands after the sequence header; false
// when it does not decode or is not Good.
bool decode_open_response(ua::Decoder& d, ua::OpenSecureChannelResponse& r, std::string& error) {
  ua::NodeId type_id;
  ua::decode(d, type_id);
  ua::decode(d, r);
  if (!d.ok() || !type_id.is_ns0(ua::OpenSecureChannelResponse::binary_encoding_id) ||
      !r.response_header.service_result.is_good()) {
    error = "OpenSecureChannel failed";
    return false;
  }
  return true;
}

// OPN with SecurityPolicy None: asymmetric header with null certificates (Part 6 §6.7.2.3).
bool open_channel_none(asio::ip::tcp::socket& s, SessionInfo& out, std::string& error) {
  ua::OpenSecureChannelRequest opn;
  set_request_header(opn.request_header, ua::NodeId(), 1, 0);
  opn.request_type = ua::SecurityTokenRequestType::Issue;
  opn.security_mode = ua::MessageSecurityMode::None;
  opn.requested_lifetime = kTokenLifetimeMs;
  ua::ByteBuffer msg;
  append_open(msg, 0, out.next_sequence++, 1, opn);  // no SecureChannelId yet; request id 1
  if (!write_all(s, msg.span(), error)) return false;
  MessageType type;
  char chunk_type;
  std::vector<uint8_t> in;
  if (!read_chunk(s, type, chunk_type, in, error)) return false;
  if (type != MessageType::Open) {
    error = "expected an OPN response";
    return false;
  }
  ua::Decoder d(std::span<const uint8_t>(in).subspan(transport::kHeaderSize));
  read_open_headers(d);
  ua::OpenSecureChannelResponse r;
  if (!decode_open_response(d, r, error)) return false;
  out.channel_id = r.security_token.channel_id;
  out.token_id = r.security_token.token_id;
  return true;
}

// OPN on a secured policy (Part 6 §6.7.2.3, §6.7.4): the request carries our certificate and the
// server certificate's thumbprint, is signed with our key and encrypted for the server's; the response
// the reverse. Both nonces then give the channel's symmetric keys (Part 6 §6.7.5).
bool open_channel_secured(asio::ip::tcp::socket& s, const ServerSecurity& server, SessionInfo& out,
                          std::string& error) {
  const SecuritySettings& st = *server.settings;
  const security::Policy& p = *st.policy;
  std::vector<uint8_t> client_nonce(p.nonce_length);
  if (!security::random_bytes(client_nonce)) {
    error = "no random bytes for the client nonce";
    return false;
  }
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  e.write_raw("OPNF\0\0\0\0", transport::kHeaderSize);
  e.write_u32(0);  // no SecureChannelId yet
  ua::encode(e, ua::String(std::string(p.uri)));
  ua::encode(e, ua::ByteString::from_bytes(st.certificate));
  ua::encode(e, ua::ByteString::from_bytes(server.server_thumbprint));
  const size_t encrypted_from = buf.size();
  e.write_u32(out.next_sequence++);
  e.write_u32(1);  // request id
  ua::OpenSecureChannelRequest opn;
  set_request_header(opn.request_header, ua::NodeId(), 1, 0);
  opn.request_type = ua::SecurityTokenRequestType::Issue;
  opn.security_mode = st.mode;
  opn.client_nonce = ua::ByteString::from_bytes(client_nonce);
  opn.requested_lifetime = kTokenLifetimeMs;
  encode_message(buf, opn);
  std::vector<uint8_t> chunk(buf.data(), buf.data() + buf.size());
  if (!security::seal_asymmetric(p, st.private_key.get(), server.server_public_key.get(), chunk,
                                 encrypted_from)) {
    error = "cannot sign and encrypt the OpenSecureChannel request";
    return false;
  }
  if (!write_all(s, chunk, error)) return false;

  MessageType type;
  char chunk_type;
  std::vector<uint8_t> in;
  if (!read_chunk(s, type, chunk_type, in, error)) return false;
  if (type != MessageType::Open || chunk_type != 'F') {
    error = "expected a one-chunk OPN response";
    return false;
  }
  ua::Decoder h(std::span<const uint8_t>(in).subspan(transport::kHeaderSize));
  h.read_u32();
  ua::String uri;
  ua::ByteString certificate, thumbprint;
  ua::decode(h, uri);
  ua::decode(h, certificate);
  ua::decode(h, thumbprint);
  if (!h.ok() || uri.view() != p.uri) {
    error = "OPN response: another security policy";
    return false;
  }
  const size_t from = static_cast<size_t>(h.position() - in.data());
  security::OpenedChunk opened =
      security::open_asymmetric(p, st.private_key.get(), server.server_public_key.get(), in, from);
  if (!opened.status.is_good()) {
    error = "OPN response: " + opened.reason;
    return false;
  }
  ua::Decoder d(opened.plaintext);
  d.read_u32();  // sequence number
  d.read_u32();  // request id
  ua::OpenSecureChannelResponse r;
  if (!decode_open_response(d, r, error)) return false;
  if (r.server_nonce.size() != p.nonce_length) {
    error = "OPN response: a server nonce of " + std::to_string(r.server_nonce.size()) + " bytes";
    return false;
  }
  out.channel_id = r.security_token.channel_id;
  out.token_id = r.security_token.token_id;
  out.crypto = std::make_shared<ChannelCrypto>(p, st.encrypting());
  if (!out.crypto->set_keys(client_nonce, r.server_nonce.bytes())) {
    error = "cannot set up the channel's symmetric keys";
    return false;
  }
  return true;
}

// HEL / ACK (Part 6 §7.1.2.3); `out` learns the server's receive buffer size.
bool hello(asio::ip::tcp::socket& s, const std::string& url, SessionInfo& out, std::string& error) {
  asio::error_code ec;
  s.set_option(asio::ip::tcp::no_delay(true), ec);
  transport::HelloMessage hello;
  hello.receive_buffer_size = kBufferSize;
  hello.send_buffer_size = kBufferSize;
  hello.max_message_size = 0;  // 0: responses of any size and chunk count (Part 6 §7.1.2.3)
  hello.max_chunk_count = 0;
  hello.endpoint_url = ua::String(url);
  std::string hel = transport::encode_hello(hello);
  if (!write_all(s, {reinterpret_cast<const uint8_t*>(hel.data()), hel.size()}, error)) return false;
  MessageType type;
  char chunk_type;
  std::vector<uint8_t> in;
  if (!read_chunk(s, type, chunk_type, in, error)) return false;
  if (type != MessageType::Acknowledge || in.size() < transport::kHeaderSize + 20) {
    error = "expected ACK";
    return false;
  }
  out.server_receive_buffer = get_u32(in.data() + transport::kHeaderSize + 4);
  return true;
}

// The first certificate of a ByteString that may hold a chain (Part 6 §6.2.3: DER certificates back to
// back): the OPN thumbprint and the key are the leaf's. The bytes unchanged when they do not parse.
std::vector<uint8_t> leaf_certificate(std::span<const uint8_t> der) {
  if (der.size() < 2 || der[0] != 0x30) return {der.begin(), der.end()};
  size_t length = der[1], header = 2;
  if (length & 0x80) {
    const size_t n = length & 0x7F;
    if (n == 0 || n > 4 || der.size() < 2 + n) return {der.begin(), der.end()};
    length = 0;
    for (size_t i = 0; i < n; ++i) length = length << 8 | der[2 + i];
    header += n;
  }
  if (header + length > der.size()) return {der.begin(), der.end()};
  return {der.begin(), der.begin() + static_cast<std::ptrdiff_t>(header + length)};
}

std::string mode_name(ua::MessageSecurityMode m) {
  switch (m) {
    case ua::MessageSecurityMode::None:
      return "None";
    case ua::MessageSecurityMode::Sign:
      return "Sign";
    case ua::MessageSecurityMode::SignAndEncrypt:
      return "SignAndEncrypt";
    default:
      return "Invalid";
  }
}

// "Basic256Sha256:SignAndEncrypt" for an endpoint, as --security spells it.
std::string endpoint_security_name(const ua::EndpointDescription& e) {
  const security::Policy* p = security::find_policy(e.security_policy_uri.view());
  const std::string policy = p ? std::string(p->name) : std::string(e.security_policy_uri.view());
  return policy + ":" + mode_name(e.security_mode);
}

}  // namespace

bool open_session(asio::ip::tcp::socket& s, const Endpoint& endpoint, const std::string& session_name,
                  SessionInfo& out, std::string& error, double session_timeout_ms) {
  if (!hello(s, endpoint.url, out, error)) return false;
  const bool opened = endpoint.security ? open_channel_secured(s, *endpoint.security, out, error)
                                        : open_channel_none(s, out, error);
  if (!opened) return false;

  // CreateSession / ActivateSession, anonymous with the server's own policyId for it (Part 4 §5.6.2,
  // §5.6.3, §7.41), request ids 2 and 3, no timeout hint.
  ua::CreateSessionRequest create;
  create.client_description.application_uri = "urn:opcuad:bench";
  create.client_description.application_name = ua::LocalizedText{"", "opcuad-bench"};
  create.client_description.application_type = ua::ApplicationType::Client;
  create.endpoint_url = ua::String(endpoint.url);
  create.session_name = ua::String(session_name);
  create.client_nonce = session_nonce();
  create.requested_session_timeout = session_timeout_ms;
  create.max_response_message_size = 0;  // no limit (Part 4 §5.6.2): the server's bounds apply
  if (endpoint.security)
    create.client_certificate = ua::ByteString::from_bytes(endpoint.security->settings->certificate);
  ua::CreateSessionResponse created;
  out.authentication_token = ua::NodeId();  // none before the session exists
  if (!blocking_call(s, out, 2, create, created, error, 0)) {
    error = "CreateSession: " + error;
    return false;
  }
  out.authentication_token = created.authentication_token;

  ua::ActivateSessionRequest activate;
  if (endpoint.security) {
    // Part 4 §5.6.3: the client signs the server certificate and the server's session nonce.
    const SecuritySettings& st = *endpoint.security->settings;
    std::vector<uint8_t> signature(security::rsa_key_bytes(st.private_key.get()));
    const auto server_certificate = created.server_certificate.size()
                                        ? created.server_certificate.bytes()
                                        : std::span<const uint8_t>(endpoint.security->server_certificate);
    if (!security::asymmetric_sign(*st.policy, st.private_key.get(),
                                   concat(server_certificate, created.server_nonce.bytes()), signature)) {
      error = "ActivateSession: cannot sign";
      return false;
    }
    activate.client_signature.algorithm = ua::String(std::string(st.policy->asymmetric_signature_uri));
    activate.client_signature.signature = ua::ByteString::from_bytes(signature);
  }
  activate.user_identity_token =
      ua::ExtensionObject::make(ua::AnonymousIdentityToken{ua::String(endpoint.anonymous_policy_id)});
  ua::ActivateSessionResponse activated;
  if (!blocking_call(s, out, 3, activate, activated, error, 0)) {
    error = "ActivateSession: " + error;
    return false;
  }
  return true;
}

bool discover_endpoint(const Endpoint& endpoint, const SecuritySettings& s, DiscoveredEndpoint& out,
                       std::string& error) {
  asio::io_context ctx;
  asio::ip::tcp::socket socket(ctx);
  asio::error_code ec;
  socket.connect({asio::ip::make_address_v4("127.0.0.1"), endpoint.port}, ec);
  if (ec) {
    error = "GetEndpoints: connect: " + ec.message();
    return false;
  }
  SessionInfo info;
  ua::GetEndpointsRequest request;
  request.endpoint_url = ua::String(endpoint.url);
  ua::GetEndpointsResponse response;
  if (!hello(socket, endpoint.url, info, error) || !open_channel_none(socket, info, error) ||
      !blocking_call(socket, info, 2, request, response, error, 0)) {
    error = "GetEndpoints: " + error;
    return false;
  }
  // CLO, so that the server does not wait for the channel to time out.
  ua::CloseSecureChannelRequest clo;
  set_request_header(clo.request_header, ua::NodeId(), 3, 0);
  ua::ByteBuffer bytes;
  if (append_request(bytes, MessageType::Close, info, 3, clo))
    asio::write(socket, asio::buffer(bytes.data(), bytes.size()), ec);
  socket.close(ec);

  const std::string_view policy_uri = s.secured() ? s.policy->uri : transport::kSecurityPolicyNone;
  const ua::MessageSecurityMode mode = s.secured() ? s.mode : ua::MessageSecurityMode::None;
  std::string offered;
  bool matched = false;
  for (const ua::EndpointDescription& e : response.endpoints) {
    offered += (offered.empty() ? "" : ", ") + endpoint_security_name(e);
    if (e.security_policy_uri.view() != policy_uri || e.security_mode != mode) continue;
    matched = true;
    for (const ua::UserTokenPolicy& t : e.user_identity_tokens) {
      if (t.token_type != ua::UserTokenType::Anonymous) continue;
      out.anonymous_policy_id = std::string(t.policy_id.view());
      out.server_certificate = leaf_certificate(e.server_certificate.bytes());
      return true;
    }
  }
  error = matched ? "GetEndpoints: the " + s.name() + " endpoint allows no anonymous user"
                  : "GetEndpoints: the server offers no " + s.name() + " endpoint (it offers " +
                        (offered.empty() ? std::string("none") : offered) + ")";
  return false;
}

bool connect_session(asio::ip::tcp::socket& s, const Endpoint& endpoint, const std::string& session_name,
                     SessionInfo& out, std::string& error, double session_timeout_ms) {
  asio::error_code ec;
  s.connect({asio::ip::make_address_v4("127.0.0.1"), endpoint.port}, ec);
  if (ec) {
    error = "connect: " + ec.message();
    return false;
  }
  return open_session(s, endpoint, session_name, out, error, session_timeout_ms);
}

bool session_cycle(asio::io_context& ctx, const Endpoint& endpoint, const std::string& session_name,
                   std::string& error) {
  asio::ip::tcp::socket s(ctx);
  SessionInfo info;
  const bool ok =
      connect_session(s, endpoint, session_name, info, error) && close_session(s, info, 10, error);
  asio::error_code ec;
  s.close(ec);
  return ok;
}

bool send_message(asio::ip::tcp::socket& s, SessionInfo& info, uint32_t request_id,
                  std::span<const uint8_t> body, std::string& error) {
  const size_t room = info.chunk_room();
  const size_t overhead = transport::kSymmetricPrefix + (info.crypto ? info.crypto->max_overhead() : 0);
  ua::ByteBuffer out(body.size() + (body.size() / room + 1) * overhead);
  size_t pos = 0;
  do {
    const size_t n = std::min(room, body.size() - pos);
    const char chunk_type = pos + n == body.size() ? 'F' : 'C';
    if (!append_chunk(out, MessageType::Message, chunk_type, info, request_id, body.subspan(pos, n))) {
      error = "cannot seal a chunk";
      return false;
    }
    pos += n;
  } while (pos < body.size());
  return write_all(s, out.span(), error);
}

bool read_response(asio::ip::tcp::socket& s, const SessionInfo& info, uint32_t& request_id,
                   std::vector<uint8_t>& body, std::string& error) {
  body.clear();
  std::vector<uint8_t> chunk;
  for (;;) {
    MessageType type;
    char chunk_type;
    if (!read_chunk(s, type, chunk_type, chunk, error)) return false;
    std::span<const uint8_t> piece;
    if (type != MessageType::Message || chunk.size() < transport::kSymmetricPrefix) {
      error = "unexpected message type";
      return false;
    }
    if (!open_chunk(info, chunk, piece)) {
      error = "a response chunk failed its security checks";
      return false;
    }
    request_id = get_u32(chunk.data() + 20);
    if (chunk_type == 'A') {
      error = "response aborted";
      return false;
    }
    body.insert(body.end(), piece.begin(), piece.end());
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
  if (!append_request(out, MessageType::Close, info, request_id + 1, clo)) {
    error = "CLO: cannot seal";
    return false;
  }
  asio::error_code ec;
  asio::write(s, asio::buffer(out.data(), out.size()), ec);
  if (ec) error = "CLO: " + ec.message();
  return !ec;
}

}  // namespace opcuad::bench
