// OutputWriter, Ring and HandlerSlot: the pieces that let a channel send responses without allocating
// in steady state (docs/ARCHITECTURE.md, "How a request flows"). The allocation count itself is checked end
// to end by the bench_zero_alloc_* tests (opcuad-bench --max-allocs-per-op against the real daemon's
// counters).
#include <catch2/catch.hpp>

#include <asio/io_context.hpp>

#include <deque>
#include <string>
#include <vector>

#include "transport/handler_memory.hpp"
#include "transport/output_writer.hpp"
#include "transport/ring.hpp"

using namespace opcuad;
using namespace opcuad::transport;

namespace {

// Records each gathered write as the list of first bytes of its chunks; completes on demand.
class RecordingSink : public Sink {
 public:
  void async_write(std::span<asio::const_buffer> buffers, WriteDone done) override {
    std::string w;
    for (const auto& b : buffers) w += static_cast<const char*>(b.data())[0];
    writes.push_back(w);
    pending.push_back(std::move(done));
  }
  void complete_all() {
    auto p = std::move(pending);
    pending.clear();
    for (auto& d : p) d({});
  }
  std::vector<std::string> writes;
  std::vector<WriteDone> pending;
};

class CountingStamper : public ChunkStamper {
 public:
  void stamp(OutboundChunk&) override { ++stamped; }
  int stamped = 0;
};

struct Fixture {
  asio::io_context ctx;
  RecordingSink sink;
  CountingStamper stamper;
  BufferPool pool;
  TransportStats stats;
  OutputWriter writer{ctx, sink, stamper, pool, stats};

  void enqueue(char tag, uint64_t stream, bool ends_message = true) {
    ua::ByteBuffer b = pool.acquire();
    b.append(&tag, 1);
    writer.enqueue(OutboundChunk{std::move(b), ChunkKind::Raw, 0, ends_message, true}, stream);
  }
};

}  // namespace

TEST_CASE("transport: Ring behaves as a deque across wrap-around and growth", "[transport][ring]") {
  Ring<int> r;
  std::deque<int> model;
  CHECK(r.empty());
  // A fixed pseudo-random mix of push_back, push_front and pop_front, checked against std::deque.
  uint32_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 1103515245u + 12345u;
    const uint32_t op = (x >> 16) % 8;
    if (op < 4) {
      r.push_back(i);
      model.push_back(i);
    } else if (op == 4) {
      r.push_front(-i);
      model.push_front(-i);
    } else if (!model.empty()) {
      REQUIRE(r.front() == model.front());
      r.pop_front();
      model.pop_front();
    }
    REQUIRE(r.size() == model.size());
  }
  for (size_t i = 0; i < model.size(); ++i) REQUIRE(r[i] == model[i]);
  // Steady state: filling and emptying to the same depth keeps the capacity (no allocation).
  Ring<int> q;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 6; ++i) q.push_back(i);
    while (!q.empty()) q.pop_front();
    CHECK(q.capacity() == 8);
  }
}

TEST_CASE("transport: HandlerSlot serves one operation at a time, then the heap", "[transport][ring]") {
  HandlerSlot<64> slot;
  SlotAllocator<char, 64> alloc(slot);
  char* a = alloc.allocate(48);
  char* b = alloc.allocate(48);                            // the slot is busy: heap
  long* c = SlotAllocator<long, 64>(alloc).allocate(100);  // too large for the slot: heap
  CHECK(a != b);
  alloc.deallocate(b, 48);
  SlotAllocator<long, 64>(alloc).deallocate(c, 100);
  alloc.deallocate(a, 48);
  CHECK(alloc.allocate(64) == a);  // free again: the same bytes
  alloc.deallocate(a, 64);
  CHECK(SlotAllocator<int, 64>(alloc) == alloc);
}

TEST_CASE("transport: OutputWriter round-robins whole messages and reuses stream slots",
          "[transport][writer]") {
  Fixture f;
  // Stream 1 has a two-chunk message; stream 2 and 3 one each; the channel (0) one.
  f.enqueue('a', 1, false);
  f.enqueue('b', 1, true);
  f.enqueue('c', 2);
  f.enqueue('d', 1);
  f.enqueue('e', 3);
  f.ctx.run();
  REQUIRE(f.sink.writes.size() == 1);
  CHECK(f.sink.writes[0] == "abced");  // one message per ready stream in turn; chunks never interleaved
  CHECK(f.stamper.stamped == 5);
  f.sink.complete_all();
  CHECK(f.writer.idle());
  CHECK(f.writer.queued_bytes() == 0);

  // Many rounds over the same and over new stream ids: the streams empty out every round and their
  // slots are taken over, so the writer's tables stay the size of the busiest round.
  for (uint64_t round = 0; round < 50; ++round) {
    f.enqueue('x', 100 + round);
    f.enqueue('y', 0);
    f.ctx.restart();
    f.ctx.run();
    f.sink.complete_all();
  }
  CHECK(f.sink.writes.back() == "xy");
  CHECK(f.writer.idle());
  CHECK(f.pool.pooled() >= 2);  // every buffer went back to the pool
}

TEST_CASE("transport: enqueues of one loop turn share one posted drain", "[transport][writer]") {
  Fixture f;
  f.enqueue('a', 1);
  f.enqueue('b', 2);
  CHECK(f.sink.writes.empty());  // nothing is written inside enqueue
  CHECK(f.ctx.poll() == 1);      // one drain for both
  REQUIRE(f.sink.writes.size() == 1);
  CHECK(f.sink.writes[0] == "ab");
  // While that write is in flight, enqueues post nothing; the completion drains them.
  f.enqueue('c', 1);
  f.ctx.restart();
  CHECK(f.ctx.poll() == 0);
  f.sink.complete_all();
  REQUIRE(f.sink.writes.size() == 2);
  CHECK(f.sink.writes[1] == "c");
  f.sink.complete_all();
  CHECK(f.writer.idle());
}

TEST_CASE("transport: a drain or a write completing after the writer is gone does nothing",
          "[transport][writer]") {
  asio::io_context ctx;
  RecordingSink sink;
  CountingStamper stamper;
  BufferPool pool;
  TransportStats stats;
  auto chunk = [&](char tag) {
    ua::ByteBuffer b = pool.acquire();
    b.append(&tag, 1);
    return OutboundChunk{std::move(b), ChunkKind::Raw, 0, true, false};
  };
  {
    OutputWriter writer(ctx, sink, stamper, pool, stats);
    writer.enqueue(chunk('p'));  // posts a drain
  }
  ctx.run();  // the posted drain finds the writer gone
  CHECK(sink.writes.empty());
  {
    OutputWriter writer(ctx, sink, stamper, pool, stats);
    writer.enqueue(chunk('w'));
    ctx.restart();
    ctx.run();
    REQUIRE(sink.pending.size() == 1);
  }
  sink.complete_all();  // the write completes after the writer is destroyed: ignored
  CHECK(sink.writes.size() == 1);
}
