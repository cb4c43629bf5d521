#pragma once
// Connection: a TCP socket on one shard and the SecureChannel engine that speaks over it.
// start() begins reading; the channel decides everything else. Lifetime: shared by the pending
// socket operations; the shard's closer list holds it weakly for shutdown.
//
// shard-local: created and used only on its shard's thread.

#include <asio/ip/tcp.hpp>

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "transport/handler_memory.hpp"
#include "transport/secure_channel.hpp"
#include "transport/shard_pool.hpp"

namespace opcuad::transport {

class Connection final : public std::enable_shared_from_this<Connection>, public Sink, public ChannelEvents {
 public:
  // `address_slot` is the connection's place in the per-address count, held until it is destroyed.
  Connection(Shard& shard, asio::ip::tcp::socket socket, const TransportConfig& config,
             ServiceHandler& handler, ChannelIdSource& ids, std::atomic<uint32_t>& total_connections,
             AddressLimit::Slot address_slot = {});
  ~Connection() override;

  // Starts the channel and reading; with a rejection reason, answers ERR(BadTcpNotEnoughResources) with
  // it and closes.
  void start(std::string_view reject_reason = {});
  // Hard stop (shutdown): closes the socket at once.
  void stop();

  // Sink
  void async_write(std::span<asio::const_buffer> buffers, WriteDone done) override;
  // ChannelEvents
  void resume_reading() override;
  void close_transport() override;

 private:
  void do_read();
  void do_write();
  void on_write(std::error_code ec, size_t n);

  // Room for asio's read and write operations on this socket with our handlers (a larger operation
  // would fall back to the heap and show in the allocation counters). The write is a plain
  // async_write_some over the writer's span, looped here: asio::async_write would copy up to 64
  // buffers into its operation and need a slot of over a kilobyte.
  static constexpr size_t kReadSlotSize = 256;
  static constexpr size_t kWriteSlotSize = 256;

  Shard& shard_;
  asio::ip::tcp::socket socket_;
  // The one read and the one write outstanding (OutputWriter keeps one write in flight) live here, so
  // steady-state requests allocate no asio operations. Kept alive by the `self` their handlers hold.
  HandlerSlot<kReadSlotSize> read_slot_;
  HandlerSlot<kWriteSlotSize> write_slot_;
  // The gathered write in progress: what remains to send, and whom to tell when it is all sent.
  std::span<asio::const_buffer> writing_;
  std::optional<WriteDone> write_done_;
  std::atomic<uint32_t>& total_connections_;
  AddressLimit::Slot address_slot_;
  std::shared_ptr<SecureChannel> channel_;
  // The connection keeps itself alive from start() until close_transport(), whatever is pending.
  std::shared_ptr<Connection> self_;
  uint64_t closer_key_ = 0;
  bool reading_ = false;
  bool closed_ = false;
  // Operator events (events.hpp): the sink of the transport's configuration, the peer as "ip:port",
  // and why the connection ended (a literal, set before close_transport()).
  const EventSink& events_;
  std::string peer_;
  bool refused_ = false;
  const char* close_reason_ = nullptr;
};

}  // namespace opcuad::transport
