#include "bench/server_counters.hpp"

#include "bench/blocking_client.hpp"

namespace opcuad::bench {

namespace {
constexpr const char* kCounterIds[kServerCounterCount] = {
    "Diagnostics.HeapAllocations", "Diagnostics.HeapBytesAllocated", "Diagnostics.RequestsReceived",
    "Diagnostics.MessagesSent",    "Diagnostics.ChunksSent",         "Diagnostics.WriteCalls",
    "Diagnostics.BytesSent",       "Diagnostics.SampledItems",       "Diagnostics.SampledLate250us",
    "Diagnostics.SampledLate1ms",  "Diagnostics.SampledLate5ms",
};

double ratio(uint64_t num, uint64_t den) {
  return den ? static_cast<double>(num) / static_cast<double>(den) : -1;
}
}  // namespace

double ServerCounterDelta::per_request(ServerCounter c) const {
  return available ? ratio((*this)[c], (*this)[ServerCounter::RequestsReceived]) : -1;
}

double ServerCounterDelta::per_message(ServerCounter c) const {
  return available ? ratio((*this)[c], (*this)[ServerCounter::MessagesSent]) : -1;
}

void ServerCounterDelta::merge(const ServerCounterDelta& o, bool first) {
  available = (first || available) && o.available;
  for (size_t i = 0; i < kServerCounterCount; ++i) delta[i] += o.delta[i];
}

bool CounterProbe::open(const Endpoint& endpoint) {
  std::string error;
  open_ = connect_session(socket_, endpoint, "bench-counters", info_, error);
  return open_;
}

std::optional<ServerCounterValues> CounterProbe::read() {
  if (!open_) return std::nullopt;
  ua::ReadRequest req;
  for (const char* id : kCounterIds) {
    ua::ReadValueId v;
    v.node_id = ua::NodeId(1, ua::String(id));
    v.attribute_id = 13;  // Value
    req.nodes_to_read.push_back(std::move(v));
  }
  req.timestamps_to_return = ua::TimestampsToReturn::Source;
  ua::ReadResponse resp;
  std::string error;
  if (!blocking_call(socket_, info_, next_request_++, req, resp, error)) {
    open_ = false;  // a broken session is not retried
    return std::nullopt;
  }
  if (resp.results.size() != kServerCounterCount) return std::nullopt;
  ServerCounterValues out{};
  for (size_t i = 0; i < kServerCounterCount; ++i) {
    const auto* v = resp.results[i].value.get_if<uint64_t>();
    if (!resp.results[i].status.is_good() || !v) return std::nullopt;
    out[i] = *v;
  }
  return out;
}

void CounterProbe::close() {
  if (!open_) return;
  std::string error;
  (void)close_session(socket_, info_, next_request_++, error);
  asio::error_code ec;
  socket_.close(ec);
  open_ = false;
}

ServerCounterDelta counter_delta(const std::optional<ServerCounterValues>& before,
                                 const std::optional<ServerCounterValues>& after) {
  ServerCounterDelta d;
  if (!before || !after) return d;
  d.available = true;
  for (size_t i = 0; i < kServerCounterCount; ++i)
    d.delta[i] = (*after)[i] >= (*before)[i] ? (*after)[i] - (*before)[i] : 0;
  return d;
}

}  // namespace opcuad::bench
