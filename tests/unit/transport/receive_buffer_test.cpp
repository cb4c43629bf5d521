// ReceiveBuffer (transport/receive_buffer.hpp) without a channel: UA TCP framing over the bytes read so
// far (Part 6 §7.1.2), the size bound a header is checked against before its chunk arrives, and how the
// buffer grows and shrinks.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "transport/receive_buffer.hpp"
#include "ua/generated/status_codes.hpp"

using namespace opcuad;
using namespace opcuad::transport;
namespace status = ua::status;

namespace {

// A chunk of `size` bytes (header included) of message type `tag` ("MSGF", ...), its body filled with `fill`.
std::string chunk_of(const char* tag, uint32_t size, char fill = 'x') {
  std::string s(tag, 4);
  s.append(reinterpret_cast<const char*>(&size), 4);
  if (size > 8) s.append(size - 8, fill);
  return s;
}

// Only the 8-byte header of a chunk that announces `size` bytes (for sizes too large to build).
std::string header_of(const char* tag, uint32_t size) {
  std::string s(tag, 4);
  s.append(reinterpret_cast<const char*>(&size), 4);
  return s;
}

// Copies `bytes` into the buffer as a read would; how many fitted.
size_t deliver(ReceiveBuffer& rx, std::string_view bytes, bool may_grow = true) {
  const auto space = rx.space(may_grow);
  const size_t n = std::min(space.size(), bytes.size());
  std::memcpy(space.data(), bytes.data(), n);
  rx.received(n);
  return n;
}

struct Next {
  ReceiveBuffer::Frame frame;
  FrameHeader header{};
  std::span<uint8_t> chunk;
  ua::StatusCode error;
};

Next next(ReceiveBuffer& rx, uint32_t limit) {
  Next n{};
  n.frame = rx.next(limit, n.header, n.chunk, n.error);
  return n;
}

}  // namespace

TEST_CASE("receive buffer: a whole chunk is returned in place and consumed", "[transport][receive_buffer]") {
  ReceiveBuffer rx(65536);
  const std::string c = chunk_of("MSGF", 100, 'a');
  REQUIRE(deliver(rx, c) == c.size());
  Next n = next(rx, 8192);
  REQUIRE(n.frame == ReceiveBuffer::Frame::Chunk);
  CHECK(n.header.type == MessageType::Message);
  CHECK(n.header.chunk == ChunkType::Final);
  CHECK(n.header.size == 100);
  REQUIRE(n.chunk.size() == 100);
  CHECK(std::memcmp(n.chunk.data(), c.data(), c.size()) == 0);
  CHECK(rx.buffered() == 0);
  CHECK(next(rx, 8192).frame == ReceiveBuffer::Frame::NeedMore);
}

TEST_CASE("receive buffer: a partial header or a partial chunk needs more", "[transport][receive_buffer]") {
  ReceiveBuffer rx(65536);
  const std::string c = chunk_of("MSGC", 300);
  deliver(rx, std::string_view(c).substr(0, 5));
  CHECK(next(rx, 8192).frame == ReceiveBuffer::Frame::NeedMore);
  deliver(rx, std::string_view(c).substr(5, 200));
  CHECK(next(rx, 8192).frame == ReceiveBuffer::Frame::NeedMore);
  CHECK(rx.buffered() == 205);  // nothing consumed
  deliver(rx, std::string_view(c).substr(205));
  Next n = next(rx, 8192);
  REQUIRE(n.frame == ReceiveBuffer::Frame::Chunk);
  CHECK(n.header.chunk == ChunkType::Intermediate);
  CHECK(n.chunk.size() == 300);
}

TEST_CASE("receive buffer: several chunks in one read come one by one, the tail moves to the front",
          "[transport][receive_buffer]") {
  ReceiveBuffer rx(65536);
  const std::string bytes =
      chunk_of("MSGC", 40, '1') + chunk_of("MSGF", 50, '2') + chunk_of("CLOF", 60).substr(0, 30);
  deliver(rx, bytes);
  Next a = next(rx, 8192);
  REQUIRE(a.frame == ReceiveBuffer::Frame::Chunk);
  CHECK(a.chunk.size() == 40);
  CHECK(a.chunk[8] == '1');
  Next b = next(rx, 8192);
  REQUIRE(b.frame == ReceiveBuffer::Frame::Chunk);
  CHECK(b.chunk.size() == 50);
  CHECK(b.chunk[8] == '2');
  CHECK(next(rx, 8192).frame == ReceiveBuffer::Frame::NeedMore);
  rx.compact();
  CHECK(rx.buffered() == 30);
  CHECK(rx.space(false).size() == rx.capacity() - 30);
  deliver(rx, chunk_of("CLOF", 60).substr(30));
  Next c = next(rx, 8192);
  REQUIRE(c.frame == ReceiveBuffer::Frame::Chunk);
  CHECK(c.header.type == MessageType::Close);
}

TEST_CASE("receive buffer: a chunk larger than the limit is refused from its header: BadTcpMessageTooLarge",
          "[transport][receive_buffer]") {
  ReceiveBuffer rx(65536);
  // Only the header has arrived: the refusal does not wait for the 8193 bytes it announces.
  deliver(rx, chunk_of("MSGF", 8193).substr(0, 8));
  Next n = next(rx, 8192);
  CHECK(n.frame == ReceiveBuffer::Frame::TooLarge);
  CHECK(n.error == status::BadTcpMessageTooLarge);
  // A hostile size near UInt32.MaxValue too.
  ReceiveBuffer huge(65536);
  deliver(huge, header_of("MSGF", 0xFFFFFFFFu));
  CHECK(next(huge, 8192).frame == ReceiveBuffer::Frame::TooLarge);
  // Exactly the limit is accepted.
  ReceiveBuffer exact(65536);
  deliver(exact, chunk_of("MSGF", 8192));
  CHECK(next(exact, 8192).frame == ReceiveBuffer::Frame::Chunk);
}

TEST_CASE("receive buffer: a malformed header is bad: BadTcpMessageTypeInvalid",
          "[transport][receive_buffer]") {
  for (const std::string& bad : {chunk_of("XYZF", 16), chunk_of("MSGX", 16), chunk_of("MSGF", 7)}) {
    ReceiveBuffer rx(65536);
    deliver(rx, bad.substr(0, 8));
    Next n = next(rx, 8192);
    CHECK(n.frame == ReceiveBuffer::Frame::Malformed);
    CHECK(n.error == status::BadTcpMessageTypeInvalid);
  }
}

TEST_CASE("receive buffer: it grows only when reading is allowed, and shrinks after a quiet tick",
          "[transport][receive_buffer]") {
  ReceiveBuffer rx(1024);
  rx.reset(8192 + 65536, ReceiveBuffer::kInitialCapacity);
  CHECK(rx.capacity() == ReceiveBuffer::kInitialCapacity);
  const std::string big = chunk_of("MSGF", 60000);
  // The first read fills the initial capacity.
  CHECK(deliver(rx, big) == ReceiveBuffer::kInitialCapacity);
  CHECK(next(rx, 65535).frame == ReceiveBuffer::Frame::NeedMore);
  // Back-pressure: full, and reading is held; the buffer stays as it is.
  CHECK(rx.space(false).empty());
  CHECK(rx.capacity() == ReceiveBuffer::kInitialCapacity);
  // Allowed again: it grows (x4, at most the bound) and the rest fits.
  size_t pos = ReceiveBuffer::kInitialCapacity;
  while (pos < big.size()) pos += deliver(rx, std::string_view(big).substr(pos));
  CHECK(rx.capacity() == 4 * ReceiveBuffer::kInitialCapacity);
  CHECK(rx.capacity() <= rx.max());
  REQUIRE(next(rx, 65535).frame == ReceiveBuffer::Frame::Chunk);
  rx.compact();
  // The tick after the busy one finds it quiet: it shrinks at the next read, once empty.
  rx.tick();
  CHECK(rx.capacity() == 4 * ReceiveBuffer::kInitialCapacity);
  rx.tick();
  rx.space(true);
  CHECK(rx.capacity() == ReceiveBuffer::kInitialCapacity);
}
