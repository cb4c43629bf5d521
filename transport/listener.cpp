#include "transport/listener.hpp"

#include <asio/post.hpp>

#include "transport/connection.hpp"

namespace opcuad::transport {

Listener::Listener(asio::io_context& accept_ctx, const asio::ip::tcp::endpoint& endpoint, ShardPool& shards,
                   const TransportConfig& config, ServiceHandler& handler, ChannelIdSource& ids)
    : acceptor_(accept_ctx),
      retry_(accept_ctx),
      shards_(shards),
      config_(config),
      handler_(handler),
      ids_(ids) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(asio::socket_base::max_listen_connections);
}

void Listener::start() {
  accept_next();
}

void Listener::stop() {
  stopped_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
  retry_.cancel();
}

void Listener::accept_next() {
  if (stopped_) return;
  Shard& shard = shards_.least_loaded();
  accept_attempts_.fetch_add(1, std::memory_order_relaxed);
  acceptor_.async_accept(shard.context(), [this, &shard](std::error_code ec, asio::ip::tcp::socket socket) {
    if (stopped_) return;
    if (ec) return accept_failed(ec);
    if (failures_ > 0) {
      warn("accepting connections again after " + std::to_string(failures_) + " failed accept(s)");
      failures_ = failures_unreported_ = 0;
      backoff_ = {};
    }
    admit(shard, std::move(socket));
    accept_next();
  });
}

void Listener::admit(Shard& shard, asio::ip::tcp::socket socket) {
  const uint32_t before = shards_.connections().fetch_add(1, std::memory_order_relaxed);
  std::string_view reject;
  RefuseReason reason = RefuseReason::kCount;
  AddressLimit::Slot slot;
  if (before >= config_.max_connections) {
    reject = "too many connections";
    reason = RefuseReason::MaxConnections;
  } else {
    asio::error_code ec;
    const auto peer = socket.remote_endpoint(ec);
    // A peer already gone has no address; its first read fails and the connection ends.
    if (!ec && !shards_.addresses().try_acquire(peer.address(), config_.max_connections_per_address, slot)) {
      reject = "too many connections from this address";
      reason = RefuseReason::MaxConnectionsPerAddress;
    }
  }
  asio::post(shard.context(),
             [this, &shard, reject, reason, slot = std::move(slot), socket = std::move(socket)]() mutable {
               // Counted on the shard: its statistics block has one writer.
               if (reason != RefuseReason::kCount)
                 TransportStats::add(shard.stats().refused[static_cast<size_t>(reason)]);
               auto c = std::make_shared<Connection>(shard, std::move(socket), config_, handler_, ids_,
                                                     shards_.connections(), std::move(slot));
               c->start(reject);
             });
}

void Listener::accept_failed(const std::error_code& ec) {
  // The pending connection stays in the backlog, so accepting again at once fails again at once (EMFILE
  // until a descriptor is freed): wait, longer each time, instead of spinning the thread.
  backoff_ = backoff_.count() == 0 ? kMinAcceptBackoff : std::min(backoff_ * 2, kMaxAcceptBackoff);
  ++failures_;
  ++failures_unreported_;
  const auto now = std::chrono::steady_clock::now();
  if (failures_ == 1 || now - last_warning_ >= kAcceptWarningInterval) {
    warn("accept failed: " + ec.message() + " (" + std::to_string(failures_unreported_) +
         " failure(s) since the last report); retrying in " + std::to_string(backoff_.count()) + " ms");
    failures_unreported_ = 0;
    last_warning_ = now;
  }
  retry_.expires_after(backoff_);
  retry_.async_wait([this](std::error_code wait_error) {
    if (!wait_error && !stopped_) accept_next();
  });
}

void Listener::warn(const std::string& message) const {
  if (config_.warn) config_.warn(message);
}

}  // namespace opcuad::transport
