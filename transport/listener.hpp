#pragma once
// Listener: one acceptor per endpoint. Each accepted socket is created on the least-loaded shard's
// io_context and handed to that shard, where its Connection lives for good.
//
// Admission (on the listener's thread, before the connection costs a channel): beyond max_connections in
// all, or max_connections_per_address from one client address, a connection gets ERR
// BadTcpNotEnoughResources and is closed. A failed accept (EMFILE / ENFILE when descriptors run out, or
// any other error) is retried after a back-off of 50 ms doubling to 1 s, so the thread does not spin on a
// connection it cannot take; the failures are reported through TransportConfig::warn at most once per
// 10 s, and once more when accepting works again.

#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/channel_id.hpp"
#include "transport/config.hpp"
#include "transport/service_handler.hpp"
#include "transport/shard_pool.hpp"

namespace opcuad::transport {

class Listener {
 public:
  static constexpr std::chrono::milliseconds kMinAcceptBackoff{50};
  static constexpr std::chrono::milliseconds kMaxAcceptBackoff{1000};
  static constexpr std::chrono::seconds kAcceptWarningInterval{10};

  // Binds at once (port 0 picks a free port); accepting starts with start(). The acceptor runs on
  // accept_ctx, which the caller runs (e.g. the daemon's main thread).
  Listener(asio::io_context& accept_ctx, const asio::ip::tcp::endpoint& endpoint, ShardPool& shards,
           const TransportConfig& config, ServiceHandler& handler, ChannelIdSource& ids);

  void start();
  void stop();  // stops accepting; existing connections are closed by ShardPool::stop()
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  // Accepts started so far (successful or not); readable from any thread.
  uint64_t accept_attempts() const noexcept { return accept_attempts_.load(std::memory_order_relaxed); }

 private:
  void accept_next();
  void admit(Shard& shard, asio::ip::tcp::socket socket);
  void accept_failed(const std::error_code& ec);
  void warn(const std::string& message) const;

  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  ShardPool& shards_;
  const TransportConfig& config_;
  ServiceHandler& handler_;
  ChannelIdSource& ids_;
  bool stopped_ = false;
  std::atomic<uint64_t> accept_attempts_{0};
  // The current run of failed accepts (listener's thread only).
  std::chrono::milliseconds backoff_{0};
  uint64_t failures_ = 0;             // in this run
  uint64_t failures_unreported_ = 0;  // since the last warning
  std::chrono::steady_clock::time_point last_warning_{};
};

}  // namespace opcuad::transport
