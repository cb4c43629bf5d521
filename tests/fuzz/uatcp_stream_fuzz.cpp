// libFuzzer target for the UA TCP / secure-conversation byte stream (Part 6 §6.7, §7.1): the bytes a
// client could send, fed to a SecureChannel in pieces whose size the first input byte chooses. Whatever
// arrives, the channel must not crash, leak or misbehave under the sanitizers, and what it writes back
// must be well-framed UA TCP.
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "tests/fuzz/fuzz_ids.hpp"
#include "transport/secure_channel.hpp"

namespace {

using namespace opcuad;
using namespace opcuad::transport;

class FuzzSink : public Sink {
 public:
  explicit FuzzSink(asio::io_context& ctx) : ctx_(ctx) {}
  void async_write(std::span<asio::const_buffer> buffers, WriteDone done) override {
    for (const auto& b : buffers) out.append(static_cast<const char*>(b.data()), b.size());
    asio::post(ctx_, [done = std::move(done)] { done({}); });
  }
  std::string out;

 private:
  asio::io_context& ctx_;
};

class NullEvents : public ChannelEvents {
 public:
  void resume_reading() override {}
  void close_transport() override { closed = true; }
  bool closed = false;
};

// Answers ReadRequest with an empty ReadResponse; everything else is "unsupported".
class FuzzHandler : public ServiceHandler {
 public:
  bool on_request(SecureChannel& channel, const RequestContext& ctx, ua::Decoder& body) override {
    if (ctx.type_id != ua::ReadRequest::binary_encoding_id) return false;
    ua::ReadRequest req;
    ua::decode(body, req);
    ua::ReadResponse resp;
    resp.response_header.request_handle = req.request_header.request_handle;
    resp.results.resize(req.nodes_to_read.size());
    channel.send(ctx.request_id, resp);
    return true;
  }
};

// Every message the server wrote must have a known type and a size that adds up.
void check_framing(const std::string& out) {
  size_t pos = 0;
  while (pos < out.size()) {
    if (out.size() - pos < 8) std::abort();
    uint32_t size;
    std::memcpy(&size, out.data() + pos + 4, 4);
    std::string_view type(out.data() + pos, 3);
    if (type != "ACK" && type != "ERR" && type != "OPN" && type != "MSG") std::abort();
    if (size < 8 || size > out.size() - pos) std::abort();
    pos += size;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t step = 1 + data[0] % 64 * 37;  // 1, 38, 75, ... bytes per read
  asio::io_context ctx;
  FuzzSink sink(ctx);
  NullEvents events;
  BufferPool pool;
  TransportStats stats;
  TransportConfig config;
  config.max_message_size = 1u << 20;
  config.decode_limits.max_array_length = 1u << 14;
  FuzzHandler handler;
  // Fixed keys: every run gets the same channel and token ids, which the seed corpus carries.
  ChannelIdSource ids(kFuzzIdKeys, 1);
  auto channel = std::make_shared<SecureChannel>(ctx, sink, events, pool, stats, config, handler, ids);
  size_t pos = 1;
  while (pos < size && !events.closed) {
    auto space = channel->receive_space();
    if (space.empty() || !channel->reading_allowed()) break;
    const size_t n = std::min({step, size - pos, space.size()});
    std::memcpy(space.data(), data + pos, n);
    channel->on_received(n);
    pos += n;
    ctx.poll();
    ctx.restart();
  }
  ctx.poll();
  check_framing(sink.out);
  channel->detach();
  return 0;
}
