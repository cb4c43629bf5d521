#pragma once
// ShardPool: one asio::io_context per shard (concurrency hint 1), each run by one thread. A connection
// and everything it owns live on one shard for their whole life; nothing inside a shard takes a lock.
// See docs/ARCHITECTURE.md, "Threads".

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "transport/address_limit.hpp"
#include "transport/buffer_pool.hpp"
#include "transport/shard_heartbeat.hpp"
#include "transport/stats.hpp"
#include "ua/status_code.hpp"

namespace opcuad::transport {

class Shard {
 public:
  explicit Shard(uint32_t index) : index_(index), ctx_(1), heartbeat_timer_(ctx_) {}

  uint32_t index() const noexcept { return index_; }
  asio::io_context& context() noexcept { return ctx_; }
  // shard-local: only this shard's thread touches the pool.
  BufferPool& buffers() noexcept { return buffers_; }
  TransportStats& stats() noexcept { return stats_; }
  const TransportStats& stats() const noexcept { return stats_; }
  // When this shard's loop last turned (written by its heartbeat timer, read anywhere).
  const ShardHeartbeat& heartbeat() const noexcept { return heartbeat_; }
  std::chrono::milliseconds heartbeat_interval() const noexcept { return heartbeat_interval_; }
  // Live connections on this shard; read by the acceptor to pick the least-loaded shard.
  std::atomic<uint32_t>& load() noexcept { return load_; }
  uint32_t load_count() const noexcept { return load_.load(std::memory_order_relaxed); }
  bool on_own_thread() const noexcept { return std::this_thread::get_id() == thread_id_; }

  // shard-local: things to close on shutdown (connections register themselves). A closer is called
  // with Good to stop at once, or with the status of the ERR to send before closing once it is flushed.
  using Closer = std::function<void(ua::StatusCode error, std::string_view reason)>;
  uint64_t add_closer(Closer close);
  void remove_closer(uint64_t key);

 private:
  friend class ShardPool;
  void arm_heartbeat();  // shard thread

  uint32_t index_;
  std::chrono::milliseconds heartbeat_interval_ = kHeartbeatInterval;  // set before the thread starts
  asio::io_context ctx_;
  asio::steady_timer heartbeat_timer_;  // shard-local
  bool heartbeat_stopped_ = false;      // shard-local
  ShardHeartbeat heartbeat_;
  BufferPool buffers_;
  TransportStats stats_;
  std::atomic<uint32_t> load_{0};
  std::thread::id thread_id_;
  std::unordered_map<uint64_t, Closer> closers_;
  uint64_t next_closer_ = 1;
};

// How shard threads run. Both off by default; see docs/CONFIGURATION.md, "scheduling".
struct ShardScheduling {
  // Shard k runs on the k-th CPU this process may use (its affinity mask, e.g. from systemd's CPUAffinity=
  // or taskset), wrapping around when there are more shards than CPUs.
  bool pin = false;
  // 1..99: shard threads run under SCHED_FIFO at this priority, so other processes on their cores do not
  // delay sampling ticks and replies (the sampling-jitter target, docs/PERFORMANCE.md). A saturated shard
  // then holds its core against every normal process; the kernel's RT throttling (by default 5 % of each
  // second) is what is left to them.
  int realtime_priority = 0;
};

class ShardPool {
 public:
  // threads == 0: one shard per core.
  explicit ShardPool(uint32_t threads = 0, ShardScheduling scheduling = {});
  ~ShardPool();

  // Starts the shard threads. Returns what of `scheduling` could not be applied, one line each (e.g. the
  // priority refused without CAP_SYS_NICE); the shards run regardless.
  std::vector<std::string> start();
  // Graceful shutdown, before stop(): on each shard, every connection sends ERR `error` and closes once
  // its queued responses and the ERR are written (Part 6 §7.1.5). Returns at once; connections() falls
  // to 0 as they close.
  void close_connections(ua::StatusCode error, std::string reason);
  // Runs every registered closer on its shard (connections still open close at once), waits for the
  // shards to run out of work, and joins the threads. Idempotent.
  void stop();

  size_t size() const noexcept { return shards_.size(); }
  Shard& shard(size_t i) noexcept { return *shards_[i]; }
  const Shard& shard(size_t i) const noexcept { return *shards_[i]; }
  Shard& least_loaded() noexcept;
  // How often each shard's timer stamps its heartbeat (kHeartbeatInterval unless set; at least 1 ms).
  // REQUIRES: before start(). The service manager's watchdog asks for at least four beats per ping.
  void set_heartbeat_interval(std::chrono::milliseconds every) noexcept;
  // The age of the stalest shard heartbeat (max() before start()): /healthz compares it with its limit.
  std::chrono::steady_clock::duration oldest_heartbeat() const noexcept;
  // The first shard whose heartbeat is older than `max_age`, with that age (the systemd watchdog's test).
  struct StaleShard {
    size_t shard;
    std::chrono::steady_clock::duration age;
  };
  std::optional<StaleShard> stale_shard(std::chrono::steady_clock::duration max_age) const noexcept;
  // Connections across all shards, for the configured maximum.
  std::atomic<uint32_t>& connections() noexcept { return connections_; }
  uint32_t connection_count() const noexcept { return connections_.load(std::memory_order_relaxed); }
  // Connections per client address, for max_connections_per_address.
  AddressLimit& addresses() noexcept { return addresses_; }

 private:
  // Declared before the shards: a connection destroyed with its shard's io_context still counts down here.
  AddressLimit addresses_;
  std::atomic<uint32_t> connections_{0};
  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<std::thread> threads_;
  std::vector<std::optional<asio::executor_work_guard<asio::io_context::executor_type>>> guards_;
  std::atomic<uint32_t> round_robin_{0};
  ShardScheduling scheduling_;
  bool started_ = false;
};

}  // namespace opcuad::transport
