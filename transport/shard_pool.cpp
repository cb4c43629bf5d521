#include "transport/shard_pool.hpp"

#include <pthread.h>
#include <sched.h>
#include <asio/post.hpp>

#include <cstring>
#include <future>

namespace opcuad::transport {

uint64_t Shard::add_closer(Closer close) {
  uint64_t key = next_closer_++;
  closers_.emplace(key, std::move(close));
  return key;
}

void Shard::remove_closer(uint64_t key) {
  closers_.erase(key);
}

void Shard::arm_heartbeat() {
  heartbeat_.beat();
  if (heartbeat_stopped_) return;
  heartbeat_timer_.expires_after(heartbeat_interval_);
  heartbeat_timer_.async_wait([this](std::error_code ec) {
    if (!ec) arm_heartbeat();
  });
}

ShardPool::ShardPool(uint32_t threads, ShardScheduling scheduling) : scheduling_(scheduling) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (uint32_t i = 0; i < threads; ++i) shards_.push_back(std::make_unique<Shard>(i));
}

ShardPool::~ShardPool() {
  stop();
}

namespace {

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  return cpus;
}

// Applies `s` to the calling shard thread; returns what failed ("" if nothing).
std::string apply_scheduling(const ShardScheduling& s, uint32_t index, const std::vector<int>& cpus) {
  std::string problems;
  if (s.pin && !cpus.empty()) {
    const int cpu = cpus[index % cpus.size()];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); rc != 0) {
      problems += "shard " + std::to_string(index) + ": cannot pin to CPU " + std::to_string(cpu) + ": " +
                  std::strerror(rc);
    }
  }
  if (s.realtime_priority > 0) {
    sched_param p{};
    p.sched_priority = s.realtime_priority;
    if (const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &p); rc != 0) {
      if (!problems.empty()) problems += "; ";
      problems += "shard " + std::to_string(index) + ": SCHED_FIFO priority " +
                  std::to_string(s.realtime_priority) + " refused: " + std::strerror(rc) +
                  " (it needs CAP_SYS_NICE, or LimitRTPRIO= of at least that priority)";
    }
  }
  return problems;
}

}  // namespace

std::vector<std::string> ShardPool::start() {
  std::vector<std::string> problems;
  if (started_) return problems;
  started_ = true;
  const std::vector<int> cpus = scheduling_.pin ? allowed_cpus() : std::vector<int>{};
  for (auto& s : shards_) {
    guards_.emplace_back(asio::make_work_guard(s->context()));
    std::promise<std::string> ready;
    auto ready_future = ready.get_future();
    Shard* shard = s.get();
    threads_.emplace_back([shard, &ready, &cpus, scheduling = scheduling_] {
      shard->thread_id_ = std::this_thread::get_id();
      // "opcuad-shard0" ...: the name `top -H`, `ps -L` and /proc/PID/task/TID/comm show.
      const std::string name = "opcuad-shard" + std::to_string(shard->index());
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      ready.set_value(apply_scheduling(scheduling, shard->index(), cpus));
      shard->arm_heartbeat();
      shard->context().run();
    });
    // thread_id_ is set before anyone posts to the shard
    if (std::string problem = ready_future.get(); !problem.empty()) problems.push_back(std::move(problem));
  }
  return problems;
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

void ShardPool::set_heartbeat_interval(std::chrono::milliseconds every) noexcept {
  for (auto& s : shards_) s->heartbeat_interval_ = std::max(every, std::chrono::milliseconds(1));
}

std::optional<ShardPool::StaleShard> ShardPool::stale_shard(
    std::chrono::steady_clock::duration max_age) const noexcept {
  const auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < shards_.size(); ++i) {
    const auto age = shards_[i]->heartbeat().age(now);
    if (age > max_age) return StaleShard{i, age};
  }
  return std::nullopt;
}

std::chrono::steady_clock::duration ShardPool::oldest_heartbeat() const noexcept {
  const auto now = std::chrono::steady_clock::now();
  auto oldest = std::chrono::steady_clock::duration::zero();
  for (const auto& s : shards_) oldest = std::max(oldest, s->heartbeat().age(now));
  return oldest;
}

void ShardPool::close_connections(ua::StatusCode error, std::string reason) {
  if (!started_) return;
  for (auto& s : shards_) {
    Shard* shard = s.get();
    asio::post(shard->context(), [shard, error, reason] {
      // A graceful close only queues the ERR; the closer deregisters itself later, when the socket closes.
      std::vector<Shard::Closer> closers;
      closers.reserve(shard->closers_.size());
      for (auto& [key, close] : shard->closers_) closers.push_back(close);
      for (auto& close : closers) close(error, reason);
    });
  }
}

void ShardPool::stop() {
  if (!started_) return;
  started_ = false;
  for (auto& s : shards_) {
    Shard* shard = s.get();
    asio::post(shard->context(), [shard] {
      shard->heartbeat_stopped_ = true;
      shard->heartbeat_timer_.cancel();
      auto closers = std::move(shard->closers_);  // closers deregister themselves as they run
      shard->closers_.clear();
      for (auto& [key, close] : closers) close(ua::status::Good, {});
    });
  }
  for (auto& g : guards_) g.reset();  // each shard returns from run() once its work is done
  for (auto& t : threads_) t.join();
  threads_.clear();
  guards_.clear();
}

}  // namespace opcuad::transport
