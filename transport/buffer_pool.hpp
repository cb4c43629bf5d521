#pragma once
// BufferPool: chunk buffers recycled within one shard, so steady-state sending allocates nothing.
// shard-local: used only by the owning shard's thread; no locks.

#include <cstddef>
#include <vector>

#include "ua/buffer.hpp"

namespace opcuad::transport {

class BufferPool {
 public:
  explicit BufferPool(size_t max_pooled = 4096, size_t max_capacity = 1u << 20)
      : max_pooled_(max_pooled), max_capacity_(max_capacity) {}

  // An empty buffer, warm when the pool has one.
  ua::ByteBuffer acquire() {
    if (free_.empty()) return ua::ByteBuffer(8192);
    ua::ByteBuffer b = std::move(free_.back());
    free_.pop_back();
    b.clear();
    return b;
  }
  void release(ua::ByteBuffer&& b) {
    // Oversized buffers (one huge response) are not kept: the pool's memory stays bounded.
    if (free_.size() < max_pooled_ && b.capacity() <= max_capacity_ && b.capacity() > 0) {
      free_.push_back(std::move(b));
    }
  }
  size_t pooled() const noexcept { return free_.size(); }

 private:
  std::vector<ua::ByteBuffer> free_;
  size_t max_pooled_;
  size_t max_capacity_;
};

}  // namespace opcuad::transport
