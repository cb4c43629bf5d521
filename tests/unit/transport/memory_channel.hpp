#pragma once
// A SecureChannel over memory, without a test framework so that the unit tests (channel_harness.hpp) and
// the fuzz targets share it: a sink that records what the server writes (and can stall like a client that
// stops reading), channel events that record the close, a ServiceHandler that answers Read, and the
// channel with everything it refers to, owned and destroyed together.

#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transport/secure_channel.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::transport::test {

class MemorySink : public Sink {
 public:
  explicit MemorySink(asio::io_context& ctx) : ctx_(ctx) {}
  void async_write(std::span<asio::const_buffer> buffers, WriteDone done) override {
    ++writes;
    std::string bytes;
    for (const auto& b : buffers) bytes.append(static_cast<const char*>(b.data()), b.size());
    pending_.push_back({std::move(bytes), std::move(done)});
    if (!stalled) flush();
  }
  // Completes the writes held while stalled.
  void flush() {
    while (!pending_.empty()) {
      auto p = std::move(pending_.front());
      pending_.pop_front();
      out += p.bytes;
      asio::post(ctx_, [done = std::move(p.done)] { done({}); });
    }
  }
  bool stalled = false;
  size_t writes = 0;
  std::string out;

 private:
  struct Pending {
    std::string bytes;
    WriteDone done;
  };
  asio::io_context& ctx_;
  std::deque<Pending> pending_;
};

class MemoryEvents : public ChannelEvents {
 public:
  void resume_reading() override { ++resumed; }
  void close_transport() override { closed = true; }
  int resumed = 0;
  bool closed = false;
};

// Answers ReadRequest with one Double per node (value = node index); leaves other requests unhandled.
// Counts every request it is handed.
class ReadHandler : public ServiceHandler {
 public:
  bool on_request(SecureChannel& channel, const RequestContext& ctx, ua::Decoder& body) override {
    ++requests;
    if (ctx.type_id != ua::ReadRequest::binary_encoding_id) return false;
    ua::ReadRequest req;
    ua::decode(body, req);
    if (!body.ok()) {
      channel.send_fault(ctx.request_id, 0, body.status());
      return true;
    }
    ua::ReadResponse resp;
    resp.response_header.request_handle = req.request_header.request_handle;
    resp.results.resize(req.nodes_to_read.size());
    for (size_t i = 0; i < resp.results.size(); ++i) resp.results[i].value = ua::Variant(double(i));
    if (defer) {
      deferred.push_back({ctx.request_id, std::move(resp)});
    } else {
      channel.send(ctx.request_id, resp);
    }
    return true;
  }
  void on_channel_closed(SecureChannel&) override { ++closed; }
  void on_certificate_refused(SecureChannel&, std::span<const uint8_t> chain,
                              ua::StatusCode status) override {
    refused.emplace_back(std::vector<uint8_t>(chain.begin(), chain.end()), status);
  }
  int requests = 0;
  int closed = 0;
  std::vector<std::pair<std::vector<uint8_t>, ua::StatusCode>> refused;  // on_certificate_refused's calls
  bool defer = false;
  std::vector<std::pair<uint32_t, ua::ReadResponse>> deferred;
};

// One server channel over memory. The channel is made at construction but not started (its housekeeping
// timer is the caller's choice); it is detached at destruction, and the write completions still queued,
// which hold it, run while everything they touch exists.
struct MemoryChannel {
  explicit MemoryChannel(TransportConfig c = {}) : config(std::move(c)) { make(); }
  // Fixed channel id keys: every run gets the same channel and token ids (fuzz seeds carry them).
  MemoryChannel(TransportConfig c, std::array<uint32_t, 4> id_keys) : config(std::move(c)), ids(id_keys, 1) {
    make();
  }
  MemoryChannel(const MemoryChannel&) = delete;
  MemoryChannel& operator=(const MemoryChannel&) = delete;
  ~MemoryChannel() {
    channel->detach();
    channel.reset();
    turn();
  }

  // Copies as much of `bytes` as the receive buffer takes into it and reports it to the channel, as a
  // socket read would; returns how many bytes that was.
  size_t deliver(std::string_view bytes) {
    const auto space = channel->receive_space();
    const size_t n = std::min(bytes.size(), space.size());
    if (n == 0) return 0;
    std::memcpy(space.data(), bytes.data(), n);
    channel->on_received(n);
    return n;
  }
  // Runs what is ready on the loop; how many handlers ran.
  size_t turn() {
    ctx.restart();
    return ctx.poll();
  }

  asio::io_context ctx;
  TransportConfig config;  // the channel keeps a reference: changes reach it
  MemorySink sink{ctx};
  MemoryEvents events;
  BufferPool pool;
  TransportStats stats;
  ReadHandler handler;
  ChannelIdSource ids;
  std::shared_ptr<SecureChannel> channel;

 private:
  void make() {
    channel = std::make_shared<SecureChannel>(ctx, sink, events, pool, stats, config, handler, ids);
  }
};

}  // namespace opcuad::transport::test
