#include "bench/sub_connection.hpp"

#include <algorithm>
#include <cstring>

#include "bench/blocking_client.hpp"
#include "bench/publish_reader.hpp"
#include "transport/uatcp.hpp"

namespace opcuad::bench {

SubConnection::SubConnection(asio::io_context& ctx, SubCounters& counters)
    : WireClient(ctx), counters_(counters) {}

bool SubConnection::setup(const Endpoint& endpoint, const std::string& name, const SubParameters& p,
                          uint32_t first, uint32_t last, std::string& error) {
  if (!connect_session(socket(), endpoint, name, session(), error)) return false;
  for (uint32_t sub_first = first; sub_first < last; sub_first += p.items_per_subscription) {
    const uint32_t sub_last = std::min(last, sub_first + p.items_per_subscription);
    ua::CreateSubscriptionRequest cs;
    cs.requested_publishing_interval = p.publishing_interval_ms;
    cs.requested_max_keep_alive_count = 10;
    cs.requested_lifetime_count = 1000;
    // No count limit (Part 4 §5.13.2.2): with maxResponseMessageSize 0 (CreateSession) and MaxMessageSize /
    // MaxChunkCount 0 (HEL, blocking_client.cpp) only the server's own bound splits a message, so a
    // subscription's backlog of one publishing interval travels in as few responses as it allows.
    cs.max_notifications_per_publish = 0;
    cs.publishing_enabled = true;
    ua::CreateSubscriptionResponse created;
    if (!blocking_call(socket(), session(), next_request_id_++, cs, created, error)) {
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
      if (!blocking_call(socket(), session(), next_request_id_++, req, resp, error)) {
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
  for (uint32_t i = 0; i < std::max<uint32_t>(publish_outstanding, 1); ++i) send_publish();
  start_wire();
}

void SubConnection::send_publish() {
  ua::PublishRequest req;
  set_request_header(req.request_header, session().authentication_token, next_request_id_, 0);
  for (auto [sub, seq] : acks_) req.subscription_acknowledgements.push_back({sub, seq});
  acks_.clear();
  if (!append_request(outgoing(), transport::MessageType::Message, session(), next_request_id_++, req))
    fail("cannot seal a Publish request");
}

void SubConnection::on_message(const MessageChunk& m) {
  if (m.chunk_type == 'C') return;
  if (m.chunk_type == 'A') {
    ++errors_["aborted response"];
    return;
  }
  handle_response(m.message);
}

// PublishResponse (Part 4 §5.13.5), decoded in place: only what the count needs.
void SubConnection::handle_response(std::span<const uint8_t> body) {
  const int64_t begin = counters_.window_begin.load(std::memory_order_relaxed);
  const int64_t end = counters_.window_end.load(std::memory_order_relaxed);
  ua::DataValue dv;
  PublishHead head;
  const PublishRead r = read_publish_response(
      body, errors_, head, [&](const PublishHead& h, const ua::NodeId& body_type, ua::Decoder& inner) {
        if (!body_type.is_ns0(ua::DataChangeNotification::binary_encoding_id)) return false;
        const bool in_window = h.publish_time >= begin && h.publish_time < end;
        const int32_t m = inner.read_i32();
        if (in_window && m > 0) {
          ++window_messages_;
          window_message_notifications_ += static_cast<uint64_t>(m);
        }
        for (int32_t k = 0; k < m && inner.ok(); ++k) {
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
        return true;
      });
  if (r == PublishRead::Unexpected) return;
  if (r == PublishRead::Read && head.data_count > 0) {
    auto [it, fresh] = last_sequence_.emplace(head.subscription_id, head.sequence);
    if (!fresh) {
      if (head.sequence != it->second + 1) ++errors_["notification message sequence gap"];
      it->second = head.sequence;
    }
    acks_.emplace_back(head.subscription_id, head.sequence);
  }
  send_publish();
}

void SubConnection::fail(const std::string& what) {
  if (wire_closed()) return;
  ++errors_[what];
  stop();
}

}  // namespace opcuad::bench
