#pragma once
// ChunkReassembly: the chunks of one request joined into its message (Part 6 §6.7.2.2, §6.7.3), within the
// per-request bounds: at most max_chunks() chunks (the MaxChunkCount our ACK announced) and at most the
// caller's size limit in bytes (MaxMessageSize, or the smaller budget before a session is active).
//
// A request past either bound is not buffered further: its remaining chunks are read and dropped, and its
// final chunk is answered TooLarge (ServiceFault BadRequestTooLarge, Part 4 §7.34; the channel stays
// usable). Chunks of two requests interleaved break the protocol (the channel closes). A request in one
// chunk is never copied: its body is handed back as it is.
//
// shard-local: owned by one SecureChannel; no locks. The buffer grows geometrically and never past the
// limit; a large one is freed after its request, smaller ones are kept for the next multi-chunk request.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "transport/uatcp.hpp"
#include "ua/status_code.hpp"

namespace opcuad::transport {

class ChunkReassembly {
 public:
  // A buffer larger than this is freed once its request is handled, so one large request does not pin
  // its peak for the channel's life.
  static constexpr size_t kRetainedCapacity = 65536;

  enum class Outcome {
    Pending,      // an intermediate chunk kept (or dropped, the request being too large), or an abort
    Ready,        // the final chunk: `message` is the whole request body
    TooLarge,     // the final chunk of a request past a bound: answer BadRequestTooLarge
    Interleaved,  // a chunk of another request while one is incomplete: close BadTcpMessageTypeInvalid
  };
  // The status an outcome is answered with (Good for Pending and Ready).
  static ua::StatusCode status(Outcome outcome) noexcept;

  // The chunk bound from the ACK (Part 6 §7.1.2.4 MaxChunkCount); 0 until Hello is handled.
  void set_max_chunks(uint32_t max_chunks) noexcept { max_chunks_ = max_chunks; }
  uint32_t max_chunks() const noexcept { return max_chunks_; }

  // One chunk's body (after its sequence header, and decrypted). `limit` is the request size bound in
  // bytes. With Ready, `message` stays valid until release() or the next add().
  Outcome add(ChunkType chunk, uint32_t request_id, std::span<const uint8_t> body, uint32_t limit,
              std::span<const uint8_t>& message);
  // The Ready message was handled: give its buffer back (kept when small).
  void release() noexcept;

  bool in_progress() const noexcept { return in_progress_; }
  size_t capacity() const noexcept { return buffer_.capacity(); }

 private:
  bool append(std::span<const uint8_t> body, uint32_t limit);

  std::vector<uint8_t> buffer_;
  uint32_t max_chunks_ = 0;
  uint32_t request_id_ = 0;
  uint32_t chunks_ = 0;
  bool in_progress_ = false;
  bool too_large_ = false;
};

}  // namespace opcuad::transport
