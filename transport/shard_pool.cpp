#include "transport/shard_pool.hpp"

#include <asio/post.hpp>
#include <pthread.h>
#include <sched.h>

#include <future>

namespace opcuad::transport {

uint64_t Shard::add_closer(std::function<void()> close) {
  uint64_t key = next_closer_++;
  closers_.emplace(key, std::move(close));
  return key;
}

void Shard::remove_closer(uint64_t key) { closers_.erase(key); }

ShardPool::ShardPool(uint32_t threads, bool pin_threads) : pin_(pin_threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (uint32_t i = 0; i < threads; ++i) shards_.push_back(std::make_unique<Shard>(i));
}

ShardPool::~ShardPool() { stop(); }

void ShardPool::start() {
  if (started_) return;
  started_ = true;
  for (auto& s : shards_) {
    guards_.emplace_back(asio::make_work_guard(s->context()));
    std::promise<void> ready;
    auto ready_future = ready.get_future();
    Shard* shard = s.get();
    threads_.emplace_back([shard, &ready, pin = pin_] {
      shard->thread_id_ = std::this_thread::get_id();
      if (pin) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(shard->index() % std::max(1u, std::thread::hardware_concurrency()), &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
      }
      ready.set_value();
      shard->context().run();
    });
    ready_future.wait();  // thread_id_ is set before anyone posts to the shard
  }
}

Shard& ShardPool::least_loaded() noexcept {
  // Ties go round robin so equal shards fill evenly.
  const size_t n = shards_.size();
  const size_t start = round_robin_.fetch_add(1, std::memory_order_relaxed) % n;
  Shard* best = shards_[start].get();
  for (size_t k = 1; k < n; ++k) {
    Shard* s = shards_[(start + k) % n].get();
    if (s->load().load(std::memory_order_relaxed) < best->load().load(std::memory_order_relaxed)) best = s;
  }
  return *best;
}

void ShardPool::stop() {
  if (!started_) return;
  started_ = false;
  for (auto& s : shards_) {
    Shard* shard = s.get();
    asio::post(shard->context(), [shard] {
      auto closers = std::move(shard->closers_);  // closers deregister themselves as they run
      shard->closers_.clear();
      for (auto& [key, close] : closers) close();
    });
  }
  for (auto& g : guards_) g.reset();  // each shard returns from run() once its work is done
  for (auto& t : threads_) t.join();
  threads_.clear();
  guards_.clear();
}

}  // namespace opcuad::transport
