// ChunkReassembly (transport/chunk_reassembly.hpp) without a channel: a request's chunks joined (Part 6
// §6.7.2.2), abort chunks (§6.7.3), and the per-request bounds: the chunk count the ACK announced and the
// size limit, past which a request is answered BadRequestTooLarge and nothing more of it is buffered.
#include <catch2/catch.hpp>

#include <string>

#include "transport/chunk_reassembly.hpp"
#include "ua/generated/status_codes.hpp"

using namespace opcuad;
using namespace opcuad::transport;
namespace status = ua::status;
using Outcome = ChunkReassembly::Outcome;

namespace {

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string text(std::span<const uint8_t> b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

constexpr uint32_t kLimit = 1000;

}  // namespace

TEST_CASE("chunk reassembly: a request in one chunk is handed back without a copy",
          "[transport][reassembly]") {
  ChunkReassembly r;
  r.set_max_chunks(4);
  const std::string body = "whole request";
  std::span<const uint8_t> message;
  REQUIRE(r.add(ChunkType::Final, 7, bytes(body), kLimit, message) == Outcome::Ready);
  CHECK(message.data() == bytes(body).data());
  CHECK(message.size() == body.size());
  CHECK_FALSE(r.in_progress());
  CHECK(r.capacity() == 0);
}

TEST_CASE("chunk reassembly: the chunks of one request are joined in order", "[transport][reassembly]") {
  ChunkReassembly r;
  r.set_max_chunks(4);
  std::span<const uint8_t> message;
  const std::string a = "first,", b = "second,", c = "last";
  CHECK(r.add(ChunkType::Intermediate, 9, bytes(a), kLimit, message) == Outcome::Pending);
  CHECK(r.in_progress());
  CHECK(r.add(ChunkType::Intermediate, 9, bytes(b), kLimit, message) == Outcome::Pending);
  REQUIRE(r.add(ChunkType::Final, 9, bytes(c), kLimit, message) == Outcome::Ready);
  CHECK(text(message) == "first,second,last");
  CHECK_FALSE(r.in_progress());
  r.release();
  // The next request starts afresh.
  const std::string d = "again";
  REQUIRE(r.add(ChunkType::Intermediate, 10, bytes(d), kLimit, message) == Outcome::Pending);
  REQUIRE(r.add(ChunkType::Final, 10, bytes(d), kLimit, message) == Outcome::Ready);
  CHECK(text(message) == "againagain");
}

TEST_CASE("chunk reassembly: more chunks than MaxChunkCount: BadRequestTooLarge", "[transport][reassembly]") {
  const std::string piece = "p";
  std::span<const uint8_t> message;
  SECTION("max_chunks chunks are accepted") {
    ChunkReassembly r;
    r.set_max_chunks(3);
    CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
    CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
    CHECK(r.add(ChunkType::Final, 1, bytes(piece), kLimit, message) == Outcome::Ready);
  }
  SECTION("one more is refused when the final chunk comes, and the next request is served") {
    ChunkReassembly r;
    r.set_max_chunks(3);
    for (int i = 0; i < 3; ++i)
      CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
    CHECK(r.capacity() == 0);      // its bytes were dropped at once
    for (int i = 0; i < 100; ++i)  // a hostile client keeps sending: still nothing buffered
      CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
    CHECK(r.capacity() == 0);
    const Outcome o = r.add(ChunkType::Final, 1, bytes(piece), kLimit, message);
    CHECK(o == Outcome::TooLarge);
    CHECK(ChunkReassembly::status(o) == status::BadRequestTooLarge);
    CHECK(r.add(ChunkType::Final, 2, bytes(piece), kLimit, message) == Outcome::Ready);
  }
}

TEST_CASE("chunk reassembly: a request past the size limit: BadRequestTooLarge, never buffered past it",
          "[transport][reassembly]") {
  std::span<const uint8_t> message;
  SECTION("in one chunk") {
    ChunkReassembly r;
    r.set_max_chunks(4);
    const std::string body(kLimit + 1, 'x');
    const Outcome o = r.add(ChunkType::Final, 1, bytes(body), kLimit, message);
    CHECK(o == Outcome::TooLarge);
    CHECK(ChunkReassembly::status(o) == status::BadRequestTooLarge);
    const std::string exact(kLimit, 'x');
    CHECK(r.add(ChunkType::Final, 2, bytes(exact), kLimit, message) == Outcome::Ready);
  }
  SECTION("in several") {
    ChunkReassembly r;
    r.set_max_chunks(100);
    const std::string piece(400, 'x');
    CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
    CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
    CHECK(r.capacity() <= kLimit);  // the capacity, not only the size, stays within the limit
    CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);  // 1200
    CHECK(r.capacity() == 0);
    CHECK(r.add(ChunkType::Final, 1, bytes(piece), kLimit, message) == Outcome::TooLarge);
  }
  SECTION("by its final chunk") {
    ChunkReassembly r;
    r.set_max_chunks(100);
    const std::string piece(600, 'x');
    CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
    CHECK(r.add(ChunkType::Final, 1, bytes(piece), kLimit, message) == Outcome::TooLarge);
    CHECK_FALSE(r.in_progress());
  }
}

TEST_CASE("chunk reassembly: chunks of two requests interleaved: BadTcpMessageTypeInvalid",
          "[transport][reassembly]") {
  ChunkReassembly r;
  r.set_max_chunks(4);
  std::span<const uint8_t> message;
  const std::string piece = "p";
  CHECK(r.add(ChunkType::Intermediate, 1, bytes(piece), kLimit, message) == Outcome::Pending);
  for (ChunkType t : {ChunkType::Intermediate, ChunkType::Final, ChunkType::Abort}) {
    const Outcome o = r.add(t, 2, bytes(piece), kLimit, message);
    CHECK(o == Outcome::Interleaved);
    CHECK(ChunkReassembly::status(o) == status::BadTcpMessageTypeInvalid);
  }
}

TEST_CASE("chunk reassembly: an abort chunk drops the request, nothing is answered",
          "[transport][reassembly]") {
  ChunkReassembly r;
  r.set_max_chunks(4);
  std::span<const uint8_t> message;
  const std::string a = "dropped", b = "kept";
  CHECK(r.add(ChunkType::Intermediate, 1, bytes(a), kLimit, message) == Outcome::Pending);
  CHECK(r.add(ChunkType::Abort, 1, {}, kLimit, message) == Outcome::Pending);
  CHECK_FALSE(r.in_progress());
  REQUIRE(r.add(ChunkType::Final, 2, bytes(b), kLimit, message) == Outcome::Ready);
  CHECK(text(message) == "kept");
}

TEST_CASE("chunk reassembly: a large buffer is freed after its request, a small one kept",
          "[transport][reassembly]") {
  ChunkReassembly r;
  r.set_max_chunks(100);
  const uint32_t limit = 1u << 20;
  std::span<const uint8_t> message;
  const std::string small(1000, 's'), big(40000, 'b');
  r.add(ChunkType::Intermediate, 1, bytes(small), limit, message);
  REQUIRE(r.add(ChunkType::Final, 1, bytes(small), limit, message) == Outcome::Ready);
  r.release();
  const size_t kept = r.capacity();
  CHECK(kept >= 2000);
  CHECK(kept <= ChunkReassembly::kRetainedCapacity);
  r.add(ChunkType::Intermediate, 2, bytes(big), limit, message);
  REQUIRE(r.add(ChunkType::Final, 2, bytes(big), limit, message) == Outcome::Ready);
  CHECK(message.size() == 80000);
  r.release();
  CHECK(r.capacity() == 0);
}
