#pragma once
// Per-shard transport counters. Written only by the shard's own thread (relaxed atomics so that a
// statistics reader on another thread is race-free); each shard's block sits on its own cache lines.

#include <atomic>
#include <cstdint>

namespace opcuad::transport {

struct alignas(64) TransportStats {
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_rejected{0};
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> messages_sent{0};  // responses and other complete messages
  std::atomic<uint64_t> chunks_sent{0};
  std::atomic<uint64_t> write_calls{0};    // gathered writes issued (one writev / sendmsg each at most)
  std::atomic<uint64_t> bytes_sent{0};
  std::atomic<uint64_t> errors_sent{0};    // ERR messages

  static void add(std::atomic<uint64_t>& c, uint64_t n = 1) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

}  // namespace opcuad::transport
