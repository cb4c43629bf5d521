#include "bench/blocking_client.hpp"

#include <asio/buffer.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cstring>

#include "transport/uatcp.hpp"

namespace opcuad::bench {

namespace {

void put_u32(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, 4);
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

bool send_message(asio::ip::tcp::socket& s, SessionInfo& info, uint32_t request_id, std::span<const uint8_t> body,
                  std::string& error) {
  const size_t limit = info.server_receive_buffer ? info.server_receive_buffer : 8192;
  const size_t room = limit - transport::kSymmetricPrefix;
  std::vector<uint8_t> out;
  out.reserve(body.size() + (body.size() / room + 1) * transport::kSymmetricPrefix);
  size_t pos = 0;
  do {
    const size_t n = std::min(room, body.size() - pos);
    const bool final_chunk = pos + n == body.size();
    const size_t at = out.size();
    out.resize(at + transport::kSymmetricPrefix + n);
    uint8_t* p = out.data() + at;
    put_u32(p, static_cast<uint32_t>(transport::MessageType::Message) | static_cast<uint32_t>(final_chunk ? 'F' : 'C') << 24);
    put_u32(p + 4, static_cast<uint32_t>(transport::kSymmetricPrefix + n));
    put_u32(p + 8, info.channel_id);
    put_u32(p + 12, info.token_id);
    put_u32(p + 16, info.next_sequence++);
    put_u32(p + 20, request_id);
    std::memcpy(p + transport::kSymmetricPrefix, body.data() + pos, n);
    pos += n;
  } while (pos < body.size());
  asio::error_code ec;
  asio::write(s, asio::buffer(out), ec);
  if (ec) error = "write: " + ec.message();
  return !ec;
}

bool read_response(asio::ip::tcp::socket& s, uint32_t& request_id, std::vector<uint8_t>& body, std::string& error) {
  body.clear();
  std::vector<uint8_t> chunk;
  for (;;) {
    uint8_t h[8];
    asio::error_code ec;
    asio::read(s, asio::buffer(h), ec);
    if (ec) {
      error = "read: " + ec.message();
      return false;
    }
    const auto type = static_cast<transport::MessageType>(get_u32(h) & 0xFFFFFF);
    const char chunk_type = static_cast<char>(get_u32(h) >> 24);
    const uint32_t size = get_u32(h + 4);
    if (size < 8 || size > (64u << 20)) {
      error = "implausible chunk size " + std::to_string(size);
      return false;
    }
    chunk.resize(size - 8);
    asio::read(s, asio::buffer(chunk), ec);
    if (ec) {
      error = "read: " + ec.message();
      return false;
    }
    if (type == transport::MessageType::Error) {
      transport::ErrorMessage err;
      error = transport::decode_error(chunk, err).is_good()
                  ? "server sent ERR " + std::string(err.error.name()) + ": " + std::string(err.reason.view())
                  : "server sent a malformed ERR";
      return false;
    }
    if (type != transport::MessageType::Message || chunk.size() < transport::kSymmetricPrefix - 8) {
      error = "unexpected message type";
      return false;
    }
    request_id = get_u32(chunk.data() + 12);
    if (chunk_type == 'A') {
      error = "response aborted";
      return false;
    }
    body.insert(body.end(), chunk.begin() + (transport::kSymmetricPrefix - 8), chunk.end());
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
  clo.request_header.authentication_token = ua::NodeId();
  clo.request_header.timestamp = ua::DateTime::now();
  clo.request_header.request_handle = request_id + 1;
  ua::ByteBuffer body;
  ua::Encoder e(body);
  ua::encode(e, ua::NodeId(0, ua::CloseSecureChannelRequest::binary_encoding_id));
  ua::encode(e, clo);
  std::vector<uint8_t> out(transport::kSymmetricPrefix + body.size());
  put_u32(out.data(), static_cast<uint32_t>(transport::MessageType::Close) | uint32_t{'F'} << 24);
  put_u32(out.data() + 4, static_cast<uint32_t>(out.size()));
  put_u32(out.data() + 8, info.channel_id);
  put_u32(out.data() + 12, info.token_id);
  put_u32(out.data() + 16, info.next_sequence++);
  put_u32(out.data() + 20, request_id + 1);
  std::memcpy(out.data() + transport::kSymmetricPrefix, body.data(), body.size());
  asio::error_code ec;
  asio::write(s, asio::buffer(out), ec);
  if (ec) error = "CLO: " + ec.message();
  return !ec;
}

}  // namespace opcuad::bench
