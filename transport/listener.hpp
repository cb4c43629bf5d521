#pragma once
// Listener: one acceptor per endpoint. Each accepted socket is created on the least-loaded shard's
// io_context and handed to that shard, where its Connection lives for good.

#include <asio/ip/tcp.hpp>

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
  // Binds at once (port 0 picks a free port); accepting starts with start(). The acceptor runs on
  // accept_ctx, which the caller runs (e.g. the daemon's main thread).
  Listener(asio::io_context& accept_ctx, const asio::ip::tcp::endpoint& endpoint, ShardPool& shards,
           const TransportConfig& config, ServiceHandler& handler, ChannelIdSource& ids);

  void start();
  void stop();  // stops accepting; existing connections are closed by ShardPool::stop()
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void accept_next();

  asio::ip::tcp::acceptor acceptor_;
  ShardPool& shards_;
  const TransportConfig& config_;
  ServiceHandler& handler_;
  ChannelIdSource& ids_;
  bool stopped_ = false;
};

}  // namespace opcuad::transport
