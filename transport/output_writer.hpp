#pragma once
// OutputWriter: the queue-based writer of one channel, after Kestrel's HTTP/2 frame writer
// (ASP.NET Core PR #40925). See docs/ARCHITECTURE.md, "How a request flows".
//
// Producers (the channel itself, its sessions, their subscriptions) enqueue finished chunks: the
// intent to write. The first enqueue in a loop turn posts one drain (`drain_scheduled_`), so many
// enqueues cost one drain. The drain is the only place that
//   - assigns sequence numbers (Part 6 §6.7.2.4: exactly +1 per chunk, in send order) and token ids,
//     through the ChunkStamper, which also pads and signs a secured chunk in place;
//   - gathers as many chunks as fit into one write, with one write outstanding per socket;
//   - hands the write's chunks to the ChunkStamper once more (seal_batch) before writing them, so a
//     SignAndEncrypt channel encrypts them together (independent CBC streams, several at once).
// Chunks of one message are never interleaved with another message's. Fairness is per message: each
// producer has a stream, and the drain takes one whole message from each ready stream in turn.
//
// Steady state allocates nothing (docs/ARCHITECTURE.md, "How a request flows"): streams are slots in a vector
// that are kept when they empty and reused by the next stream id that needs one, their queues are Rings that
// never shrink, the posted drain lives in a HandlerSlot, and the write completion is a WriteDone (a pointer
// and a weak reference) rather than a heap-allocated closure.
//
// shard-local: every member is used only on the owning shard's thread.

#include <asio/buffer.hpp>
#include <asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

#include "transport/buffer_pool.hpp"
#include "transport/handler_memory.hpp"
#include "transport/ring.hpp"
#include "transport/stats.hpp"
#include "ua/buffer.hpp"

namespace opcuad::security {
class SymmetricCipher;
}

namespace opcuad::transport {

enum class ChunkKind : uint8_t {
  Raw,         // ACK, ERR: sent as is
  Asymmetric,  // OPN: sequence number stamped at sequence_offset
  Symmetric,   // MSG, CLO: token id and sequence number stamped
};

struct OutboundChunk {
  ua::ByteBuffer buffer;  // the whole chunk, headers included
  ChunkKind kind = ChunkKind::Raw;
  uint32_t sequence_offset = 0;
  bool ends_message = true;  // last chunk of its message
  bool is_response = false;  // answers a request (counts against the owed responses)
  // Set by ChunkStamper::stamp() when the chunk's encryption waits for seal_batch(): the cipher of the token
  // it was signed with. Valid only within the drain that stamped it.
  security::SymmetricCipher* encrypt_with = nullptr;
};

// Fills in what is known only at send time. The drain calls stamp() for each chunk in send order, then
// seal_batch() once with every chunk of the write (those stamped by this drain, and an OPN sent first)
// before the write starts. Nothing else runs on the channel's shard between the two, so what stamp()
// recorded in a chunk (its token's cipher) is still valid in seal_batch().
class ChunkStamper {
 public:
  virtual ~ChunkStamper() = default;
  virtual void stamp(OutboundChunk& chunk) = 0;
  // Finishes what stamp() deferred for the write's chunks (a SignAndEncrypt channel's encryption).
  virtual void seal_batch(std::span<OutboundChunk> chunks) { (void)chunks; }
};

class OutputWriter;

// Memory of a writer that outlives it while asio still holds one of its handlers: the flag saying
// whether the writer is still there, and the posted drain's operation.
struct WriterShared {
  static constexpr size_t kPostSlotSize = 96;
  bool alive = true;
  HandlerSlot<kPostSlotSize> post_slot;
};

// The completion of one Sink write: tells the writer, unless the writer is gone by then. Holds a
// pointer and a weak reference (no closure on the heap), so a socket handler keeps it inline.
class WriteDone {
 public:
  void operator()(std::error_code ec) const;

 private:
  friend class OutputWriter;
  WriteDone(OutputWriter* writer, std::weak_ptr<WriterShared> shared) noexcept
      : writer_(writer), shared_(std::move(shared)) {}
  OutputWriter* writer_;
  std::weak_ptr<WriterShared> shared_;
};

// Where the bytes go: a socket, or memory in tests.
class Sink {
 public:
  virtual ~Sink() = default;
  // Starts writing all of `buffers`; calls done exactly once, never from inside this call. The entries
  // are the writer's scratch until done: the sink may advance them past what a partial write sent.
  virtual void async_write(std::span<asio::const_buffer> buffers, WriteDone done) = 0;
};

class OutputWriter {
 public:
  using Clock = std::chrono::steady_clock;

  OutputWriter(asio::io_context& ctx, Sink& sink, ChunkStamper& stamper, BufferPool& pool,
               TransportStats& stats);
  ~OutputWriter();
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  // Queues a chunk on `stream` (0 for the channel itself, else a session's or subscription's key).
  void enqueue(OutboundChunk chunk, uint64_t stream = 0);

  // Called after each completed write with the number of responses it finished.
  void on_written(std::function<void(size_t responses)> cb) { on_written_ = std::move(cb); }
  // Called once when the writer fails (the peer went away); nothing more is sent.
  void on_error(std::function<void(std::error_code)> cb) { on_error_ = std::move(cb); }

  size_t queued_bytes() const noexcept { return queued_bytes_; }
  bool idle() const noexcept { return !write_in_flight_ && ready_.empty() && !first_; }
  // When the write in flight started (for the send timeout), or nullopt when none is in flight.
  std::optional<Clock::time_point> write_started() const noexcept {
    return write_in_flight_ ? std::optional<Clock::time_point>(write_started_) : std::nullopt;
  }
  // Drops everything queued and ignores later enqueues (the channel is closing).
  void shut() noexcept;
  // A secured OpenSecureChannel response (Part 6 §6.7.2.4) carries its sequence number inside the signed
  // and encrypted part, so it is numbered when it is built, before it is sealed on a handshake worker.
  // hold() stops the drain from numbering and sending anything more; send_first() puts the sealed chunk
  // ahead of everything queued (it is sent as is) and resumes; release() resumes without one.
  void hold() noexcept { held_ = true; }
  void send_first(OutboundChunk chunk);
  void release() noexcept;

  // At most this many chunks / bytes go into one gathered write.
  static constexpr size_t kMaxChunksPerWrite = 64;
  static constexpr size_t kMaxBytesPerWrite = 1u << 20;

 private:
  friend class WriteDone;

  // A stream's slot. An empty slot that is not ready may be taken over by another stream id.
  struct Stream {
    uint64_t id = 0;
    Ring<OutboundChunk> chunks;
    bool ready = false;  // listed in ready_
  };

  // The slot of stream `id`: its own, else an idle one taken over, else a new one.
  uint32_t stream_slot(uint64_t id);
  void schedule_drain();
  void drain();
  void write_done(std::error_code ec);

  asio::io_context& ctx_;
  Sink& sink_;
  ChunkStamper& stamper_;
  BufferPool& pool_;
  TransportStats& stats_;
  // Few per channel (the channel, its sessions, their subscriptions): found by a linear scan. Never
  // more than the streams that had chunks queued at the same time, since idle slots are reused.
  std::vector<Stream> streams_;
  Ring<uint32_t> ready_;  // indexes into streams_ with queued chunks, in round-robin order
  std::vector<OutboundChunk> in_flight_;
  std::vector<asio::const_buffer> iov_;
  size_t queued_bytes_ = 0;
  bool drain_scheduled_ = false;
  bool write_in_flight_ = false;
  bool shut_ = false;
  bool held_ = false;
  std::optional<OutboundChunk> first_;
  Clock::time_point write_started_{};
  std::function<void(size_t)> on_written_;
  std::function<void(std::error_code)> on_error_;
  // Outlives the writer in posted handlers, so a drain posted before destruction does nothing.
  std::shared_ptr<WriterShared> shared_ = std::make_shared<WriterShared>();
};

}  // namespace opcuad::transport
