#include "bench/blocking_client.hpp"

#include <asio/buffer.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cstring>

#include "transport/uatcp.hpp"

namespace opcuad::bench {

namespace {

using transport::MessageType;

}  // namespace

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
  asio::error_code ec;
  asio::write(s, asio::buffer(out.data(), out.size()), ec);
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
    const auto type = static_cast<MessageType>(get_u32(h) & 0xFFFFFF);
    const char chunk_type = static_cast<char>(get_u32(h) >> 24);
    const uint32_t size = get_u32(h + 4);
    if (!plausible_chunk_size(size)) {
      error = "implausible chunk size " + std::to_string(size);
      return false;
    }
    chunk.resize(size - 8);
    asio::read(s, asio::buffer(chunk), ec);
    if (ec) {
      error = "read: " + ec.message();
      return false;
    }
    if (type == MessageType::Error) {
      transport::ErrorMessage err;
      read_error(chunk, err, error);
      return false;
    }
    if (type != MessageType::Message || chunk.size() < transport::kSymmetricPrefix - 8) {
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
  set_request_header(clo.request_header, ua::NodeId(), request_id + 1, 0);
  ua::ByteBuffer out;
  append_request(out, MessageType::Close, info, request_id + 1, clo);
  asio::error_code ec;
  asio::write(s, asio::buffer(out.data(), out.size()), ec);
  if (ec) error = "CLO: " + ec.message();
  return !ec;
}

}  // namespace opcuad::bench
