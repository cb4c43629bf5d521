#pragma once
// Connection: a TCP socket on one shard and the SecureChannel engine that speaks over it.
// start() begins reading; the channel decides everything else. Lifetime: shared by the pending
// socket operations; the shard's closer list holds it weakly for shutdown.
//
// shard-local: created and used only on its shard's thread.

#include <asio/ip/tcp.hpp>

#include <memory>

#include "transport/secure_channel.hpp"
#include "transport/shard_pool.hpp"

namespace opcuad::transport {

class Connection final : public std::enable_shared_from_this<Connection>, public Sink, public ChannelEvents {
 public:
  Connection(Shard& shard, asio::ip::tcp::socket socket, const TransportConfig& config, ServiceHandler& handler,
             ChannelIdSource& ids, std::atomic<uint32_t>& total_connections);
  ~Connection() override;

  // Starts the channel and reading; with reject, answers ERR(BadTcpNotEnoughResources) and closes.
  void start(bool reject);
  // Hard stop (shutdown): closes the socket at once.
  void stop();

  // Sink
  void async_write(std::span<const asio::const_buffer> buffers, std::function<void(std::error_code)> done) override;
  // ChannelEvents
  void resume_reading() override;
  void close_transport() override;

 private:
  void do_read();

  Shard& shard_;
  asio::ip::tcp::socket socket_;
  std::atomic<uint32_t>& total_connections_;
  std::shared_ptr<SecureChannel> channel_;
  // The connection keeps itself alive from start() until close_transport(), whatever is pending.
  std::shared_ptr<Connection> self_;
  uint64_t closer_key_ = 0;
  bool reading_ = false;
  bool closed_ = false;
};

}  // namespace opcuad::transport
