// ReceiveBuffer (receive_buffer.hpp): growth, shrinking and the UA TCP framing of the receive path.
#include "transport/receive_buffer.hpp"

#include <algorithm>
#include <cstring>

namespace opcuad::transport {

void ReceiveBuffer::resize(size_t capacity) {
  // Not zero-filled: only bytes a read wrote are ever looked at, and untouched pages cost no memory.
  auto grown = std::make_unique_for_overwrite<uint8_t[]>(capacity);
  if (end_ > begin_) std::memcpy(grown.get(), data_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  data_ = std::move(grown);
  capacity_ = capacity;
}

void ReceiveBuffer::reset(size_t max, size_t capacity) {
  max_ = max;
  resize(capacity);
}

std::span<uint8_t> ReceiveBuffer::space(bool may_grow) {
  if (begin_ > 0 && begin_ == end_) begin_ = end_ = 0;
  if (shrink_ && end_ == 0) {
    shrink_ = false;
    resize(kInitialCapacity);
  }
  if ((end_ == capacity_ || filled_) && capacity_ < max_ && may_grow) resize(std::min(max_, capacity_ * 4));
  filled_ = false;
  return {data_.get() + end_, capacity_ - end_};
}

void ReceiveBuffer::received(size_t n) noexcept {
  filled_ = end_ + n == capacity_;
  end_ += n;
  if (filled_ || end_ > kInitialCapacity) {
    busy_ = true;
    shrink_ = false;
  }
}

ReceiveBuffer::Frame ReceiveBuffer::next(uint32_t limit, FrameHeader& header, std::span<uint8_t>& chunk,
                                         ua::StatusCode& error) noexcept {
  const std::span<const uint8_t> avail(data_.get() + begin_, end_ - begin_);
  switch (parse_frame_header(avail, header, error)) {
    case ParseResult::NeedMore:
      return Frame::NeedMore;
    case ParseResult::Bad:
      return Frame::Malformed;
    case ParseResult::Good:
      break;
  }
  // Checked before the chunk is complete: a header announcing more than the limit is refused at once,
  // not after the client has sent (and we have buffered) all of it.
  if (header.size > limit) {
    error = ua::status::BadTcpMessageTooLarge;
    return Frame::TooLarge;
  }
  if (avail.size() < header.size) return Frame::NeedMore;
  chunk = {data_.get() + begin_, header.size};
  begin_ += header.size;
  return Frame::Chunk;
}

void ReceiveBuffer::compact() noexcept {
  if (begin_ == 0) return;
  std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
}

void ReceiveBuffer::tick() noexcept {
  shrink_ = !busy_ && capacity_ > kInitialCapacity;
  busy_ = false;
}

}  // namespace opcuad::transport
