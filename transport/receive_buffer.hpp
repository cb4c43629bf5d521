#pragma once
// ReceiveBuffer: the bytes a channel has read but not yet handled, and the UA TCP framing over them
// (Part 6 §7.1.2: every message starts with an 8-byte header whose MessageSize covers the whole chunk).
//
// Bytes [begin_, end_) of data_[0, capacity_) are unprocessed. The buffer starts small and grows (up to
// max_: one whole chunk plus, once a session is active, a batch of small ones) only when a read fills it,
// so ten thousand mostly idle sessions do not each hold a buffer sized for the largest chunk. A buffer
// whose reads needed no more than the initial capacity for a whole tick gives the rest back at its next
// read (the outstanding read holds the buffer until then).
//
// shard-local: owned by one SecureChannel; no locks, no allocation except when the capacity changes.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "transport/uatcp.hpp"
#include "ua/status_code.hpp"

namespace opcuad::transport {

class ReceiveBuffer {
 public:
  // The capacity after Hello: a few typical requests (Read-100 is ~2.5 KB).
  static constexpr size_t kInitialCapacity = 16384;

  enum class Frame {
    Chunk,      // a whole chunk: `chunk` spans it, and it is consumed
    NeedMore,   // the header or the chunk is not complete yet
    Malformed,  // the header is invalid (`error` says how)
    TooLarge,   // the header announces more than the limit: BadTcpMessageTooLarge
  };

  // A buffer of `capacity` bytes that never grows past it (until set_max()).
  explicit ReceiveBuffer(size_t capacity) : max_(capacity) { resize(capacity); }

  // Where the next read goes. Grows first when the buffer is full while `may_grow` (reading is allowed:
  // a chunk bigger than the buffer is arriving), or when the last read filled it (the client sends faster
  // than one small read per turn drains). A full buffer while reading is held is back-pressure and stays
  // as it is.
  std::span<uint8_t> space(bool may_grow);
  // `n` bytes arrived in the span space() returned.
  void received(size_t n) noexcept;

  // The next chunk, when a whole one of at most `limit` bytes is buffered (Part 6 §7.1.2.2). A chunk is
  // consumed when it is returned; its bytes stay valid (and writable: secured chunks are decrypted in
  // place) until compact().
  Frame next(uint32_t limit, FrameHeader& header, std::span<uint8_t>& chunk, ua::StatusCode& error) noexcept;
  // Moves the unprocessed tail to the front so the next read has room for a whole chunk.
  void compact() noexcept;

  // The most the buffer may grow to from now on.
  void set_max(size_t max) noexcept { max_ = max; }
  // A new bound, and the buffer resized to `capacity` (the buffered bytes kept).
  void reset(size_t max, size_t capacity);
  // Housekeeping, once a tick: a buffer that stayed quiet since the last tick shrinks when next empty.
  void tick() noexcept;

  size_t capacity() const noexcept { return capacity_; }
  size_t max() const noexcept { return max_; }
  size_t buffered() const noexcept { return end_ - begin_; }

 private:
  void resize(size_t capacity);

  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_ = 0;
  size_t max_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
  bool filled_ = false;  // the last read filled all the space it was given
  bool busy_ = false;    // since the last tick a read filled the buffer or left more than the initial size
  bool shrink_ = false;  // set by the tick: shrink when the buffer is next empty
};

}  // namespace opcuad::transport
