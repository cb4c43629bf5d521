#include "bench/canned_server.hpp"

#include <asio/buffer.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/signal_set.hpp>
#include <asio/write.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

#include "bench/ua_framing.hpp"
#include "transport/uatcp.hpp"
#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::bench {

namespace {

using transport::MessageType;

template <class T>
std::vector<uint8_t> encode_body(const T& response) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  ua::encode(e, ua::NodeId(0, T::binary_encoding_id));
  ua::encode(e, response);
  return {buf.data(), buf.data() + buf.size()};
}

// One client connection: frames in, canned chunks out, one gathered write outstanding.
class CannedConnection : public std::enable_shared_from_this<CannedConnection> {
 public:
  CannedConnection(asio::ip::tcp::socket socket, const CannedResponse& canned, uint32_t channel_id)
      : socket_(std::move(socket)), canned_(canned), channel_id_(channel_id) {
    rx_.allocate(256 * 1024);
  }
  void start() {
    asio::error_code ec;
    socket_.set_option(asio::ip::tcp::no_delay(true), ec);
    do_read();
  }

 private:
  void do_read() {
    const auto space = rx_.space();
    socket_.async_read_some(asio::buffer(space.data(), space.size()),
                            [self = shared_from_this()](const asio::error_code& ec, size_t n) {
                              if (ec) return self->close();
                              self->on_read(n);
                            });
  }

  void on_read(size_t n) {
    rx_.commit(n);
    std::span<const uint8_t> chunk;
    for (transport::ParseResult r; (r = rx_.next(chunk, 16u << 20)) != transport::ParseResult::NeedMore;) {
      if (r == transport::ParseResult::Bad || !handle(chunk)) return close();
    }
    flush();
    do_read();
  }

  bool handle(std::span<const uint8_t> chunk) {
    const auto type = static_cast<MessageType>(get_u32(chunk.data()) & 0xFFFFFF);
    switch (type) {
      case MessageType::Hello: {
        transport::AcknowledgeMessage ack{0, 65536, 65536, 0, 0};
        std::string bytes = transport::encode_acknowledge(ack);
        out_.append(bytes.data(), bytes.size());
        return true;
      }
      case MessageType::Open:
        return handle_open(chunk);
      case MessageType::Message:
        return handle_message(chunk);
      default:
        return false;  // CLO or anything else: done
    }
  }

  bool handle_open(std::span<const uint8_t> chunk) {
    ua::Decoder d(chunk.subspan(transport::kHeaderSize));
    const uint32_t request_id = read_open_headers(d);
    ua::NodeId type;
    ua::decode(d, type);
    ua::OpenSecureChannelRequest request;
    ua::decode(d, request);
    if (!d.ok()) return false;
    ua::OpenSecureChannelResponse r;
    r.response_header.timestamp = ua::DateTime::now();
    r.response_header.request_handle = request.request_header.request_handle;
    r.security_token = {channel_id_, 1, ua::DateTime::now(), request.requested_lifetime};
    r.server_nonce = ua::ByteString("");
    append_open(out_, channel_id_, next_sequence_++, request_id, r);
    return true;
  }

  bool handle_message(std::span<const uint8_t> chunk) {
    if (chunk.size() < transport::kSymmetricPrefix) return false;
    const uint32_t request_id = get_u32(chunk.data() + 20);
    ua::Decoder d(chunk.subspan(transport::kSymmetricPrefix));
    ua::NodeId type;
    ua::decode(d, type);
    const uint32_t type_id =
        type.namespace_index() == 0 && type.type() == ua::IdType::Numeric ? type.numeric() : 0;
    // RequestHeader: AuthenticationToken, Timestamp, RequestHandle; the rest is not looked at.
    ua::NodeId token;
    ua::decode(d, token);
    d.read_u64();
    const uint32_t handle = d.read_u32();
    if (!d.ok()) return false;
    if (type_id == canned_.request_type_id) {
      uint8_t* p = append_header(request_id, canned_.body.size());
      std::memcpy(p, canned_.body.data(), canned_.body.size());
      put_u32(p + canned_.handle_offset, handle);
      return true;
    }
    switch (type_id) {
      case ua::CreateSessionRequest::binary_encoding_id: {
        ua::CreateSessionResponse r;
        r.response_header.request_handle = handle;
        r.session_id = ua::NodeId(1, 1000 + channel_id_);
        r.authentication_token = ua::NodeId(1, 2000 + channel_id_);
        r.revised_session_timeout = 60000;
        return append_response(request_id, r);
      }
      case ua::ActivateSessionRequest::binary_encoding_id: {
        ua::ActivateSessionResponse r;
        r.response_header.request_handle = handle;
        return append_response(request_id, r);
      }
      case ua::CloseSessionRequest::binary_encoding_id: {
        ua::CloseSessionResponse r;
        r.response_header.request_handle = handle;
        return append_response(request_id, r);
      }
      default: {
        ua::ServiceFault r;
        r.response_header.request_handle = handle;
        r.response_header.service_result = ua::status::BadServiceUnsupported;
        return append_response(request_id, r);
      }
    }
  }

  template <class T>
  bool append_response(uint32_t request_id, const T& response) {
    std::vector<uint8_t> body = encode_body(response);
    std::memcpy(append_header(request_id, body.size()), body.data(), body.size());
    return true;
  }

  // Appends a final MSG chunk header and returns where its body goes.
  uint8_t* append_header(uint32_t request_id, size_t body_size) {
    const auto size = static_cast<uint32_t>(transport::kSymmetricPrefix + body_size);
    uint8_t* p = out_.extend(size);
    put_symmetric_prefix(p, MessageType::Message, 'F', body_size, channel_id_, 1 /* token id */,
                         next_sequence_++, request_id);
    return p + transport::kSymmetricPrefix;
  }

  void flush() {
    if (writing_ || out_.size() == 0) return;
    std::swap(out_, in_flight_);
    out_.clear();
    writing_ = true;
    asio::async_write(socket_, asio::buffer(in_flight_.data(), in_flight_.size()),
                      [self = shared_from_this()](const asio::error_code& ec, size_t) {
                        self->writing_ = false;
                        self->in_flight_.clear();
                        if (ec) return self->close();
                        self->flush();
                      });
  }

  void close() {
    asio::error_code ec;
    socket_.close(ec);
  }

  asio::ip::tcp::socket socket_;
  const CannedResponse& canned_;
  uint32_t channel_id_;
  uint32_t next_sequence_ = 1;
  ChunkReader rx_;
  ua::ByteBuffer out_;
  ua::ByteBuffer in_flight_;
  bool writing_ = false;
};

void accept_loop(asio::ip::tcp::acceptor& acceptor, const CannedResponse& canned, uint32_t& next_channel) {
  acceptor.async_accept(
      [&acceptor, &canned, &next_channel](const asio::error_code& ec, asio::ip::tcp::socket s) {
        if (ec) return;
        std::make_shared<CannedConnection>(std::move(s), canned, next_channel++)->start();
        accept_loop(acceptor, canned, next_channel);
      });
}

}  // namespace

CannedResponse synthesize_canned(const Workload& workload) {
  const auto now = ua::DateTime::now();
  const uint32_t n = workload.operations_per_request();
  std::vector<uint8_t> body;
  switch (workload.scenario()) {
    case Scenario::Read: {
      ua::ReadResponse r;
      for (uint32_t k = 0; k < n; ++k) {
        ua::DataValue v;
        v.value = 0.5 * k;
        v.source_timestamp = now;
        v.server_timestamp = now;
        r.results.push_back(std::move(v));
      }
      body = encode_body(r);
      break;
    }
    case Scenario::Write: {
      ua::WriteResponse r;
      r.results.resize(n);
      body = encode_body(r);
      break;
    }
    case Scenario::Browse: {
      ua::BrowseResponse r;
      ua::BrowseResult result;
      for (uint32_t k = 0; k < 20; ++k) {
        ua::ReferenceDescription ref;
        ref.reference_type_id = ua::NodeId(ua::id::HasComponent);
        ref.is_forward = true;
        ref.node_id.node_id = ua::NodeId(2254 + k);
        ref.browse_name = ua::QualifiedName{0, ua::String("Reference" + std::to_string(k))};
        ref.display_name = ua::LocalizedText{"", ua::String("Reference" + std::to_string(k))};
        ref.node_class = ua::NodeClass::Variable;
        ref.type_definition.node_id = ua::NodeId(ua::id::BaseDataVariableType);
        result.references.push_back(std::move(ref));
      }
      r.results.push_back(std::move(result));
      body = encode_body(r);
      break;
    }
    case Scenario::Translate: {
      ua::TranslateBrowsePathsToNodeIdsResponse r;
      for (uint32_t k = 1; k <= n; ++k) {
        ua::BrowsePathResult result;
        ua::BrowsePathTarget t;
        t.target_id.node_id = bench_variable(2, k);
        t.remaining_path_index = 0xFFFFFFFF;
        result.targets.push_back(std::move(t));
        r.results.push_back(std::move(result));
      }
      body = encode_body(r);
      break;
    }
  }
  CannedResponse c;
  make_canned(workload.request_type_id(), std::move(body), c);
  return c;
}

bool make_canned(uint32_t request_type_id, std::vector<uint8_t> body, CannedResponse& out) {
  // ResponseHeader: Timestamp (8), then RequestHandle, right after the type id.
  ua::Decoder d(body);
  ua::NodeId type;
  ua::decode(d, type);
  const size_t type_size = body.size() - d.remaining();
  if (!d.ok() || d.remaining() < 12) return false;
  out.request_type_id = request_type_id;
  out.handle_offset = type_size + 8;
  out.body = std::move(body);
  return true;
}

bool save_canned(const std::string& path, const CannedResponse& canned) {
  std::ofstream f(path, std::ios::binary);
  uint8_t id[4];
  put_u32(id, canned.request_type_id);
  f.write(reinterpret_cast<const char*>(id), 4);
  f.write(reinterpret_cast<const char*>(canned.body.data()),
          static_cast<std::streamsize>(canned.body.size()));
  return static_cast<bool>(f);
}

bool load_canned(const std::string& path, CannedResponse& out) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 4) return false;
  const uint32_t id = get_u32(bytes.data());
  return make_canned(id, std::vector<uint8_t>(bytes.begin() + 4, bytes.end()), out);
}

int run_canned_server(uint16_t port, CannedResponse canned) {
  asio::io_context ctx(1);
  asio::error_code ec;
  asio::ip::tcp::acceptor acceptor(ctx);
  const asio::ip::tcp::endpoint ep(asio::ip::make_address_v4("127.0.0.1"), port);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::fprintf(stderr, "opcuad-bench: canned server cannot listen on 127.0.0.1:%u: %s\n", port,
                 ec.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "listening on opc.tcp://127.0.0.1:%u for canned responses (%zu bytes)\n",
               acceptor.local_endpoint().port(), canned.body.size());
  std::fflush(stderr);
  uint32_t next_channel = 1;
  accept_loop(acceptor, canned, next_channel);
  asio::signal_set signals(ctx, SIGTERM, SIGINT);
  signals.async_wait([&](const asio::error_code&, int) { ctx.stop(); });
  ctx.run();
  return 0;
}

}  // namespace opcuad::bench
