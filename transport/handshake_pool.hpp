#pragma once
// HandshakePool: the threads that do the RSA private-key work of secure channel handshakes (decrypting and
// verifying an OpenSecureChannel request, signing and encrypting its response: 1-3 ms each), so a shard's
// event loop keeps serving its established sessions during a connection storm (docs/SECURITY.md).
//
// Jobs queue in arrival order; the queue is bounded (`max_queued`), and a channel whose handshake finds it
// full is refused with ERR BadTcpNotEnoughResources instead of queueing without end. A job posts its
// result back to its channel's shard itself. Stopped (and joined) before the shards' io_contexts go away.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace opcuad::transport {

class HandshakePool {
 public:
  HandshakePool(size_t threads, size_t max_queued);
  ~HandshakePool();
  HandshakePool(const HandshakePool&) = delete;
  HandshakePool& operator=(const HandshakePool&) = delete;

  // False when the queue is full or the pool is stopping (the job is not run).
  [[nodiscard]] bool submit(std::function<void()> job);
  // Runs what is running to completion, drops what is queued, joins the threads.
  void stop();
  size_t queued() const;
  size_t threads() const { return thread_count_; }
  size_t max_queued() const { return max_queued_; }
  // The nice value of the pool's threads (relative to a default of 0): below the shard threads.
  static constexpr int kNice = 10;

 private:
  void run();

  const size_t max_queued_;
  const size_t thread_count_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace opcuad::transport
