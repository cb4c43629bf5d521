// ResponseChunker (transport/response_chunker.hpp) without a channel: the body room of a chunk under each
// security mode (Part 6 §6.7.2), one chunk without a copy, several chunks within the client's
// ReceiveBufferSize, and the refusal of a response past its MaxChunkCount or MaxMessageSize (Part 6
// §7.1.2.3), which the channel answers BadResponseTooLarge.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "transport/response_chunker.hpp"
#include "ua/codec.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using Split = ResponseChunker::Split;

namespace {

struct Emitted {
  ua::ByteBuffer buffer;
  bool last;
};

// An encoded response of `body` bytes behind the headroom, its body bytes 0, 1, 2, ...
ua::ByteBuffer response(size_t body) {
  ua::ByteBuffer buf;
  buf.resize(kSymmetricPrefix);
  for (size_t i = 0; i < body; ++i) {
    const auto b = static_cast<uint8_t>(i);
    buf.append(&b, 1);
  }
  return buf;
}

Split split(const ResponseChunker& chunker, ua::ByteBuffer& buf, std::vector<Emitted>& out) {
  return chunker.split(
      buf, 77, 5,
      [] {
        ua::ByteBuffer c;
        c.resize(kSymmetricPrefix);
        return c;
      },
      [&](ua::ByteBuffer&& c, bool last) {
        out.push_back({std::move(c), last});
      });
}

uint32_t u32(const ua::ByteBuffer& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

const security::Policy& b256() {
  return security::policy(security::PolicyId::Basic256Sha256);
}

}  // namespace

TEST_CASE("response chunker: the body room of one chunk per security mode", "[transport][chunker]") {
  ResponseChunker c(8192);
  CHECK(c.body_capacity() == 8192 - kSymmetricPrefix);
  c.set_security(b256(), ua::MessageSecurityMode::Sign);
  CHECK(c.body_capacity() == 8192 - kSymmetricPrefix - b256().signature_length);
  c.set_security(b256(), ua::MessageSecurityMode::SignAndEncrypt);
  // (8192 - 16) / 16 * 16 = 8176 bytes encrypted: sequence header, body, padding-size byte, signature.
  CHECK(c.body_capacity() == 8176 - kSequenceHeaderSize - b256().signature_length - 1);
  c.set_limits(65535, 0, 0);
  CHECK(c.body_capacity() == (65535 - 16) / 16 * 16 - kSequenceHeaderSize - b256().signature_length - 1);
}

TEST_CASE("response chunker: a response that fits goes out in its own buffer", "[transport][chunker]") {
  ResponseChunker c(8192);
  ua::ByteBuffer buf = response(c.body_capacity());
  const uint8_t* data = buf.data();
  std::vector<Emitted> out;
  CHECK(split(c, buf, out) == Split::Single);
  REQUIRE(out.size() == 1);
  CHECK(out[0].last);
  CHECK(out[0].buffer.data() == data);
  CHECK(out[0].buffer.size() == 8192);
  CHECK(std::memcmp(out[0].buffer.data(), "MSGF", 4) == 0);
  CHECK(u32(out[0].buffer, 4) == 8192);
  CHECK(u32(out[0].buffer, 8) == 77);  // channel id
  CHECK(u32(out[0].buffer, 12) == 0);  // token id: stamped at send time
  CHECK(u32(out[0].buffer, 16) == 0);  // sequence number: stamped at send time
  CHECK(u32(out[0].buffer, 20) == 5);  // request id
}

TEST_CASE("response chunker: a larger response is split into chunks of at most the send size",
          "[transport][chunker]") {
  ResponseChunker c(8192);
  c.set_limits(8192, 0, 0);
  const size_t room = c.body_capacity();
  const size_t body = room * 2 + 100;
  ua::ByteBuffer buf = response(body);
  std::vector<Emitted> out;
  CHECK(split(c, buf, out) == Split::Chunked);
  REQUIRE(out.size() == 3);
  std::vector<uint8_t> joined;
  for (size_t i = 0; i < out.size(); ++i) {
    const ua::ByteBuffer& b = out[i].buffer;
    CHECK(out[i].last == (i == 2));
    CHECK(b.size() <= 8192);
    CHECK(b.data()[3] == (i == 2 ? 'F' : 'C'));
    CHECK(u32(b, 4) == b.size());
    CHECK(u32(b, 20) == 5);
    joined.insert(joined.end(), b.data() + kSymmetricPrefix, b.data() + b.size());
  }
  CHECK(out[0].buffer.size() == 8192);
  CHECK(out[2].buffer.size() == kSymmetricPrefix + 100);
  REQUIRE(joined.size() == body);
  CHECK(std::memcmp(joined.data(), buf.data() + kSymmetricPrefix, body) == 0);
}

TEST_CASE("response chunker: past the client's MaxChunkCount or MaxMessageSize nothing is sent",
          "[transport][chunker]") {
  ResponseChunker c(8192);
  const size_t room = c.body_capacity();
  std::vector<Emitted> out;
  SECTION("MaxChunkCount") {
    c.set_limits(8192, 0, 2);
    CHECK(c.max_response_body() == 2 * room);
    ua::ByteBuffer fits = response(2 * room);
    CHECK(split(c, fits, out) == Split::Chunked);
    CHECK(out.size() == 2);
    out.clear();
    ua::ByteBuffer over = response(2 * room + 1);
    CHECK(split(c, over, out) == Split::TooLarge);
    CHECK(out.empty());
  }
  SECTION("MaxMessageSize") {
    c.set_limits(8192, 1000, 0);
    CHECK(c.max_response_body() == 1000);
    ua::ByteBuffer fits = response(1000);
    CHECK(split(c, fits, out) == Split::Single);
    out.clear();
    ua::ByteBuffer over = response(1001);
    CHECK(split(c, over, out) == Split::TooLarge);
    CHECK(out.empty());
    ua::ByteBuffer far_over = response(3 * room);
    CHECK(split(c, far_over, out) == Split::TooLarge);
    CHECK(out.empty());
  }
  SECTION("no limits") {
    CHECK(c.max_response_body() == SIZE_MAX);
  }
}

TEST_CASE("response chunker: a refused response names its request handle, and whether it was a fault",
          "[transport][chunker]") {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  ua::ReadResponse read;
  read.response_header.request_handle = 4711;
  ua::encode(e, ua::NodeId(0, ua::ReadResponse::binary_encoding_id));
  ua::encode(e, read);
  ResponseChunker::Refused r = ResponseChunker::refused({buf.data(), buf.size()});
  CHECK(r.request_handle == 4711);
  CHECK_FALSE(r.service_fault);

  ua::ByteBuffer fault_buf;
  ua::Encoder f(fault_buf);
  ua::ServiceFault fault;
  fault.response_header.request_handle = 12;
  ua::encode(f, ua::NodeId(0, ua::ServiceFault::binary_encoding_id));
  ua::encode(f, fault);
  r = ResponseChunker::refused({fault_buf.data(), fault_buf.size()});
  CHECK(r.request_handle == 12);
  CHECK(r.service_fault);
}
