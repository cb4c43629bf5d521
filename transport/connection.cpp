#include "transport/connection.hpp"

#include <asio/bind_allocator.hpp>

namespace opcuad::transport {

Connection::Connection(Shard& shard, asio::ip::tcp::socket socket, const TransportConfig& config,
                       ServiceHandler& handler, ChannelIdSource& ids,
                       std::atomic<uint32_t>& total_connections, AddressLimit::Slot address_slot)
    : shard_(shard),
      socket_(std::move(socket)),
      total_connections_(total_connections),
      address_slot_(std::move(address_slot)),
      events_(config.events) {
  channel_ = std::make_shared<SecureChannel>(shard.context(), *this, *this, shard.buffers(), shard.stats(),
                                             config, handler, ids);
  shard_.load().fetch_add(1, std::memory_order_relaxed);
  asio::error_code ignored;
  socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  const auto peer = socket_.remote_endpoint(ignored);
  if (!ignored) {
    const asio::ip::address a = peer.address();
    // An IPv4 client on a dual-stack socket counts as its IPv4 address.
    channel_->set_peer_address(a.is_v6() && a.to_v6().is_v4_mapped()
                                   ? asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).to_string()
                                   : a.to_string());
    const std::string& ip = channel_->peer_address();
    const std::string port = std::to_string(peer.port());
    peer_ = ip.find(':') == std::string::npos ? ip + ":" + port : "[" + ip + "]:" + port;
  }
}

Connection::~Connection() {
  if (channel_) channel_->detach();
  shard_.load().fetch_sub(1, std::memory_order_relaxed);
  total_connections_.fetch_sub(1, std::memory_order_relaxed);
}

void Connection::start(std::string_view reject_reason) {
  const bool reject = !reject_reason.empty();
  self_ = shared_from_this();
  closer_key_ = shard_.add_closer([weak = weak_from_this()](ua::StatusCode error, std::string_view reason) {
    auto self = weak.lock();
    if (!self) return;
    if (error.is_good()) {
      self->stop();
    } else if (!self->closed_) {
      self->channel_->close(error, reason);  // ERR, then close_transport() once flushed
    }
  });
  TransportStats::add(reject ? shard_.stats().connections_rejected : shard_.stats().connections_accepted);
  if (events_) {
    std::string f;
    append_field(f, "peer", peer_);
    append_field(f, "shard", shard_.index());
    if (reject) append_field(f, "reason", reject_reason);
    events_(Event{reject ? EventLevel::Warn : EventLevel::Info,
                  reject ? "connection.refused" : "connection.accepted", peer_key(peer_), f});
  }
  refused_ = reject;
  channel_->start();
  if (reject) {
    channel_->reject(ua::status::BadTcpNotEnoughResources, reject_reason);
    return;
  }
  do_read();
}

void Connection::do_read() {
  if (reading_ || closed_ || !channel_->reading_allowed()) return;
  auto space = channel_->receive_space();
  if (space.empty()) return;  // a full buffer means back-pressure: resume_reading() comes later
  reading_ = true;
  socket_.async_read_some(asio::buffer(space.data(), space.size()),
                          asio::bind_allocator(SlotAllocator<void, kReadSlotSize>(read_slot_),
                                               [self = shared_from_this()](std::error_code ec, size_t n) {
                                                 self->reading_ = false;
                                                 if (self->closed_) return;
                                                 if (ec) {
                                                   self->close_reason_ =
                                                       ec == asio::error::eof ? "peer_closed" : "read_error";
                                                   self->close_transport();
                                                   return;
                                                 }
                                                 TransportStats::add(self->shard_.stats().bytes_received, n);
                                                 self->channel_->on_received(n);
                                                 self->do_read();
                                               }));
}

void Connection::resume_reading() {
  do_read();
}

void Connection::async_write(std::span<asio::const_buffer> buffers, WriteDone done) {
  writing_ = buffers;
  write_done_.emplace(std::move(done));
  do_write();
}

void Connection::do_write() {
  socket_.async_write_some(
      writing_, asio::bind_allocator(
                    SlotAllocator<void, kWriteSlotSize>(write_slot_),
                    [self = shared_from_this()](std::error_code ec, size_t n) { self->on_write(ec, n); }));
}

void Connection::on_write(std::error_code ec, size_t n) {
  while (!ec && !writing_.empty() && n >= writing_.front().size()) {
    n -= writing_.front().size();
    writing_ = writing_.subspan(1);
  }
  if (!ec && !writing_.empty()) {
    writing_.front() += n;  // a partial write: send the rest
    return do_write();
  }
  WriteDone done = std::move(*write_done_);
  write_done_.reset();
  done(ec);
}

void Connection::close_transport() {
  if (closed_) return;
  closed_ = true;
  shard_.remove_closer(closer_key_);
  if (events_ && !refused_) {  // a refused connection was reported once, as refused
    std::string f;
    append_field(f, "peer", peer_);
    append_field(f, "shard", shard_.index());
    const ua::StatusCode status = channel_ ? channel_->close_status() : ua::status::Good;
    if (channel_ && channel_->id() != 0) append_field(f, "channel", channel_->id());
    append_field(f, "reason", close_reason_ ? close_reason_ : status.is_good() ? "closed" : "error");
    if (!status.is_good()) append_status(f, "status", status);
    events_(Event{EventLevel::Info, "connection.closed", peer_key(peer_), f});
  }
  asio::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  auto keep = std::move(self_);  // may be the last reference: nothing touches members after this
}

void Connection::stop() {
  if (closed_) return;
  close_reason_ = "server_stop";
  channel_->detach();
  close_transport();
}

}  // namespace opcuad::transport
