#include "transport/handshake_pool.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

namespace opcuad::transport {

HandshakePool::HandshakePool(size_t threads, size_t max_queued)
    : max_queued_(max_queued), thread_count_(threads ? threads : 1) {
  threads_.reserve(thread_count_);
  for (size_t i = 0; i < thread_count_; ++i) threads_.emplace_back([this] { run(); });
}

HandshakePool::~HandshakePool() {
  stop();
}

bool HandshakePool::submit(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || jobs_.size() >= max_queued_) return false;
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

size_t HandshakePool::queued() const {
  std::lock_guard lock(mutex_);
  return jobs_.size();
}

void HandshakePool::stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    dropped.swap(jobs_);
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void HandshakePool::run() {
  // Below the shards: on a machine with fewer free cores than threads, a shard thread woken by a request
  // preempts an RSA operation (1-3 ms) instead of waiting behind it (docs/SECURITY.md). Raising one's own
  // nice value needs no privilege; a refusal only leaves the thread at the default.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kNice);
  // The name `top -H`, `ps -L` and /proc/PID/task/TID/comm show (at most 15 characters).
  pthread_setname_np(pthread_self(), "opcuad-handshk");
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace opcuad::transport
