#include "bench/sub_connection.hpp"

#include <asio/buffer.hpp>
#include <asio/connect.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <cstring>

#include "bench/blocking_client.hpp"
#include "transport/uatcp.hpp"

namespace opcuad::bench {

SubConnection::SubConnection(asio::io_context& ctx, SubCounters& counters)
    : socket_(ctx), counters_(counters) {}

bool SubConnection::setup(const Endpoint& endpoint, const std::string& name, const SubParameters& p,
                          uint32_t first, uint32_t last, std::string& error) {
  if (!connect_session(socket_, endpoint, name, session_, error)) return false;
  for (uint32_t sub_first = first; sub_first < last; sub_first += p.items_per_subscription) {
    const uint32_t sub_last = std::min(last, sub_first + p.items_per_subscription);
    ua::CreateSubscriptionRequest cs;
    cs.requested_publishing_interval = p.publishing_interval_ms;
    cs.requested_max_keep_alive_count = 10;
    cs.requested_lifetime_count = 1000;
    cs.max_notifications_per_publish = 0;
    cs.publishing_enabled = true;
    ua::CreateSubscriptionResponse created;
    if (!blocking_call(socket_, session_, next_request_id_++, cs, created, error)) {
      error = "CreateSubscription: " + error;
      return false;
    }
    revised_publishing_ = created.revised_publishing_interval;
    for (uint32_t b = sub_first; b < sub_last; b += p.create_batch) {
      const uint32_t e = std::min(sub_last, b + p.create_batch);
      ua::CreateMonitoredItemsRequest req;
      req.subscription_id = created.subscription_id;
      req.timestamps_to_return = ua::TimestampsToReturn::Source;
      req.items_to_create.resize(e - b);
      for (uint32_t k = b; k < e; ++k) {
        auto& item = req.items_to_create[k - b];
        item.item_to_monitor.node_id = ua::NodeId(2, k % p.variables + 1);
        item.item_to_monitor.attribute_id = 13;  // Value
        item.monitoring_mode = ua::MonitoringMode::Reporting;
        item.requested_parameters.client_handle = k;
        item.requested_parameters.sampling_interval = p.sampling_interval_ms;
        item.requested_parameters.queue_size = p.queue_size;
        item.requested_parameters.discard_oldest = true;
      }
      ua::CreateMonitoredItemsResponse resp;
      if (!blocking_call(socket_, session_, next_request_id_++, req, resp, error)) {
        error = "CreateMonitoredItems: " + error;
        return false;
      }
      if (resp.results.size() != e - b) {
        error = "CreateMonitoredItems: " + std::to_string(resp.results.size()) + " results for " +
                std::to_string(e - b) + " items";
        return false;
      }
      for (const auto& res : resp.results) {
        if (!res.status_code.is_good()) {
          error = "CreateMonitoredItems: item status " + std::string(res.status_code.name());
          return false;
        }
      }
      revised_sampling_ = resp.results.front().revised_sampling_interval;
      revised_queue_ = resp.results.front().revised_queue_size;
    }
  }
  return true;
}

void SubConnection::start(uint32_t publish_outstanding) {
  rx_.allocate(kReadSize);
  for (uint32_t i = 0; i < std::max<uint32_t>(publish_outstanding, 1); ++i) send_publish();
  flush();
  do_read();
}

void SubConnection::stop() {
  if (stopped_) return;
  stopped_ = true;
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

void SubConnection::send_publish() {
  ua::PublishRequest req;
  set_request_header(req.request_header, session_.authentication_token, next_request_id_, 0);
  for (auto [sub, seq] : acks_) req.subscription_acknowledgements.push_back({sub, seq});
  acks_.clear();
  if (!append_request(pending_, transport::MessageType::Message, session_, next_request_id_++, req))
    fail("cannot seal a Publish request");
}

void SubConnection::flush() {
  if (write_in_flight_ || pending_.size() == 0 || stopped_) return;
  std::swap(pending_, writing_);
  pending_.clear();
  write_in_flight_ = true;
  asio::async_write(socket_, asio::buffer(writing_.data(), writing_.size()),
                    [this](const asio::error_code& ec, size_t) {
                      write_in_flight_ = false;
                      writing_.clear();
                      if (ec) return fail("write: " + ec.message());
                      flush();
                    });
}

void SubConnection::do_read() {
  if (stopped_) return;
  const auto space = rx_.space();
  socket_.async_read_some(asio::buffer(space.data(), space.size()),
                          [this](const asio::error_code& ec, size_t n) {
                            if (ec) {
                              if (!stopped_) fail("read: " + ec.message());
                              return;
                            }
                            on_read(n);
                          });
}

void SubConnection::on_read(size_t n) {
  rx_.commit(n);
  std::span<uint8_t> chunk;
  for (transport::ParseResult r; (r = rx_.next(chunk)) != transport::ParseResult::NeedMore;) {
    if (r == transport::ParseResult::Bad) return fail("implausible chunk size");
    const uint8_t* p = chunk.data();
    const auto size = static_cast<uint32_t>(chunk.size());
    const uint32_t word = get_u32(p);
    const auto type = static_cast<transport::MessageType>(word & 0xFFFFFF);
    const char chunk_type = static_cast<char>(word >> 24);
    if (type == transport::MessageType::Error) {
      transport::ErrorMessage err;
      std::string what;
      read_error({p + transport::kHeaderSize, size - transport::kHeaderSize}, err, what);
      return fail(what);
    }
    if (type != transport::MessageType::Message || size < transport::kSymmetricPrefix)
      return fail("unexpected message type from the server");
    std::span<const uint8_t> body;
    if (!open_chunk(session_, chunk, body)) return fail("a response chunk failed its security checks");
    if (chunk_type == 'C') {
      reassembly_.insert(reassembly_.end(), body.begin(), body.end());
    } else if (chunk_type == 'A') {
      reassembly_.clear();
      ++errors_["aborted response"];
    } else if (!reassembly_.empty()) {
      reassembly_.insert(reassembly_.end(), body.begin(), body.end());
      handle_response(reassembly_);
      reassembly_.clear();
    } else {
      handle_response(body);
    }
    if (stopped_) return;
  }
  flush();
  do_read();
}

// PublishResponse (Part 4 §5.13.5), decoded in place: only what the count needs.
void SubConnection::handle_response(std::span<const uint8_t> body) {
  ua::Decoder d(body);
  ua::NodeId type;
  ua::decode(d, type);
  if (type.is_ns0(ua::ServiceFault::binary_encoding_id)) {
    ua::ServiceFault fault;
    ua::decode(d, fault);
    ++errors_["Publish ServiceFault " + std::string(fault.response_header.service_result.name())];
    send_publish();
    return;
  }
  if (!type.is_ns0(ua::PublishResponse::binary_encoding_id)) {
    ++errors_["unexpected response type"];
    return;
  }
  ua::ResponseHeader header;
  ua::decode(d, header);
  if (!header.service_result.is_good()) {
    ++errors_["Publish " + std::string(header.service_result.name())];
    send_publish();
    return;
  }
  const uint32_t subscription_id = d.read_u32();
  for (int32_t i = 0, n = d.read_i32(); i < n && d.ok(); ++i) d.read_u32();  // available sequence numbers
  d.read_u8();                                                               // more notifications
  const uint32_t sequence = d.read_u32();
  d.read_u64();  // publish time
  const int32_t data_count = d.read_i32();
  const int64_t begin = counters_.window_begin.load(std::memory_order_relaxed);
  const int64_t end = counters_.window_end.load(std::memory_order_relaxed);
  ua::DataValue dv;
  for (int32_t i = 0; i < data_count && d.ok(); ++i) {
    ua::NodeId body_type;
    ua::decode(d, body_type);
    d.read_u8();
    const int32_t len = d.read_i32();
    auto inner_bytes = d.take(len > 0 ? static_cast<size_t>(len) : 0);
    ua::Decoder inner(inner_bytes);
    if (body_type.is_ns0(ua::DataChangeNotification::binary_encoding_id)) {
      for (int32_t k = 0, m = inner.read_i32(); k < m && inner.ok(); ++k) {
        const uint32_t handle = inner.read_u32();
        ua::decode(inner, dv);
        if (handle >= counters_.count.size()) {
          counters_.unknown_handles.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        const int64_t ts = dv.source_timestamp.ticks;
        if (ts == counters_.last[handle]) {
          ++duplicates_;
          continue;
        }
        counters_.last[handle] = ts;
        if (ts >= begin && ts < end) ++counters_.count[handle];
      }
    } else if (body_type.is_ns0(ua::StatusChangeNotification::binary_encoding_id)) {
      const ua::StatusCode status(inner.read_u32());
      ++errors_["StatusChangeNotification " + std::string(status.name())];
    } else {
      ++errors_["unexpected notification type"];
    }
    if (!inner.ok()) ++errors_["malformed notification"];
  }
  if (!d.ok()) ++errors_["malformed PublishResponse"];
  if (data_count > 0) {
    auto [it, fresh] = last_sequence_.emplace(subscription_id, sequence);
    if (!fresh) {
      if (sequence != it->second + 1) ++errors_["notification message sequence gap"];
      it->second = sequence;
    }
    acks_.emplace_back(subscription_id, sequence);
  }
  for (int32_t i = 0, n = d.read_i32(); i < n && d.ok(); ++i) {
    const ua::StatusCode ack(d.read_u32());
    if (!ack.is_good()) ++errors_["acknowledgement " + std::string(ack.name())];
  }
  send_publish();
}

void SubConnection::fail(const std::string& what) {
  if (stopped_) return;
  ++errors_[what];
  stop();
}

}  // namespace opcuad::bench
