// ChunkReassembly (chunk_reassembly.hpp): joining a request's chunks within the per-request bounds.
#include "transport/chunk_reassembly.hpp"

#include <algorithm>

namespace opcuad::transport {

ua::StatusCode ChunkReassembly::status(Outcome outcome) noexcept {
  switch (outcome) {
    case Outcome::TooLarge:
      return ua::status::BadRequestTooLarge;
    case Outcome::Interleaved:
      return ua::status::BadTcpMessageTypeInvalid;
    default:
      return ua::status::Good;
  }
}

ChunkReassembly::Outcome ChunkReassembly::add(ChunkType chunk, uint32_t request_id,
                                              std::span<const uint8_t> body, uint32_t limit,
                                              std::span<const uint8_t>& message) {
  // Part 6 §6.7.2.4: every chunk of a message carries its RequestId, and a client sends the chunks of one
  // message before those of the next.
  if (in_progress_ && request_id != request_id_) return Outcome::Interleaved;
  switch (chunk) {
    case ChunkType::Abort:
      // Part 6 §6.7.3: the sender abandoned the message; nothing is answered.
      in_progress_ = false;
      release();
      return Outcome::Pending;
    case ChunkType::Intermediate:
      if (!in_progress_) {
        in_progress_ = true;
        request_id_ = request_id;
        chunks_ = 0;
        too_large_ = false;
        buffer_.clear();
      }
      ++chunks_;
      if (too_large_ || chunks_ >= max_chunks_ || !append(body, limit)) {
        // Keep reading the chunks but not their bytes; answer when the final chunk comes.
        too_large_ = true;
        buffer_.clear();
        buffer_.shrink_to_fit();
      }
      return Outcome::Pending;
    case ChunkType::Final:
      if (!in_progress_) {
        if (body.size() > limit) return Outcome::TooLarge;
        message = body;  // one chunk: decoded in place, no copy
        return Outcome::Ready;
      }
      in_progress_ = false;
      if (too_large_ || !append(body, limit)) {
        release();
        return Outcome::TooLarge;
      }
      message = buffer_;
      return Outcome::Ready;
  }
  return Outcome::Pending;
}

bool ChunkReassembly::append(std::span<const uint8_t> body, uint32_t limit) {
  const size_t needed = buffer_.size() + body.size();
  if (needed > limit) return false;
  // Grow geometrically, but never past the limit: the capacity, not only the size, stays within it.
  if (needed > buffer_.capacity())
    buffer_.reserve(std::min<size_t>(limit, std::max(needed, buffer_.capacity() * 2)));
  buffer_.insert(buffer_.end(), body.begin(), body.end());
  return true;
}

void ChunkReassembly::release() noexcept {
  if (buffer_.capacity() > kRetainedCapacity) {
    std::vector<uint8_t>().swap(buffer_);
  } else {
    buffer_.clear();
  }
}

}  // namespace opcuad::transport
