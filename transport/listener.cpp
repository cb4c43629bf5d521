#include "transport/listener.hpp"

#include <asio/post.hpp>

#include "transport/connection.hpp"

namespace opcuad::transport {

Listener::Listener(asio::io_context& accept_ctx, const asio::ip::tcp::endpoint& endpoint, ShardPool& shards,
                   const TransportConfig& config, ServiceHandler& handler, ChannelIdSource& ids)
    : acceptor_(accept_ctx), shards_(shards), config_(config), handler_(handler), ids_(ids) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(asio::socket_base::max_listen_connections);
}

void Listener::start() { accept_next(); }

void Listener::stop() {
  stopped_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
}

void Listener::accept_next() {
  if (stopped_) return;
  Shard& shard = shards_.least_loaded();
  acceptor_.async_accept(shard.context(), [this, &shard](std::error_code ec, asio::ip::tcp::socket socket) {
    if (stopped_) return;
    if (!ec) {
      const uint32_t before = shards_.connections().fetch_add(1, std::memory_order_relaxed);
      const bool reject = before >= config_.max_connections;
      asio::post(shard.context(), [this, &shard, reject, socket = std::move(socket)]() mutable {
        auto c = std::make_shared<Connection>(shard, std::move(socket), config_, handler_, ids_, shards_.connections());
        c->start(reject);
      });
    }
    // Errors such as EMFILE must not stop the listener; the next accept may succeed.
    accept_next();
  });
}

}  // namespace opcuad::transport
