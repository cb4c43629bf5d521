#pragma once
// The asynchronous side of the harness's clients: one secure channel's socket, its receive buffer, the
// write double-buffer and the chunk loop, shared by LoadConnection (the load phase of the request
// scenarios) and SubConnection (the Publish loop). Setup stays blocking (blocking_client.hpp) on the same
// socket before the loop starts.
//
// It is a CRTP base, not an interface: the loop calls its owner directly, with no virtual call per chunk,
// and it allocates nothing once warm (the buffers only grow, to the largest chunk and the largest batch of
// requests seen). `Owner` derives from WireClient<Owner> and provides
//
//   void on_message(const MessageChunk& m);   every MSG chunk, opened (decrypted and verified)
//   void on_wire_error(const std::string& what);   the loop fails: a read or write error, an ERR chunk,
//                                                  a chunk that is not MSG or fails its checks
//
// and, when it needs them (the defaults here do nothing),
//
//   void on_server_error(const transport::ErrorMessage& e);   an ERR chunk decoded, before on_wire_error
//   void begin_batch();   a read arrived, before its chunks
//   void end_batch();     after the chunks of one read, before the queued output is flushed
//
// The loop stops (and calls no hook again) once close_wire() has run, from a hook or from outside on the
// io_context's thread; after on_wire_error it closes the wire itself.
//
// Output: everything the owner appends to outgoing() during one loop turn leaves in one write; while a
// write is in flight, new chunks gather in the other buffer.
//
// shard-local: a WireClient belongs to the thread running its io_context. REQUIRES: it outlives every
// operation it started on that io_context (handlers capture `this`).

#include <asio/buffer.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/write.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bench/ua_framing.hpp"
#include "transport/uatcp.hpp"
#include "ua/buffer.hpp"

namespace opcuad::bench {

// One opened MSG chunk (Part 6 §6.7.2): its header fields, its body, and the whole message once the
// final chunk of a multi-chunk message is in.
struct MessageChunk {
  char chunk_type = 'F';  // 'C' intermediate, 'A' abort, anything else final
  uint32_t sequence = 0;  // sequence header, read after opening (it is encrypted with SignAndEncrypt)
  uint32_t request_id = 0;
  size_t size = 0;                // the chunk as received, header and signature included
  std::span<const uint8_t> body;  // this chunk's body
  // Final chunks only: the whole message body, this chunk's body behind the intermediate ones before it
  // (or just this body). Valid until on_message returns. Empty for 'C' and 'A'.
  std::span<const uint8_t> message;
};

template <class Owner>
class WireClient {
 public:
  asio::ip::tcp::socket& socket() noexcept { return socket_; }

 protected:
  explicit WireClient(asio::io_context& ctx) : socket_(ctx) {}
  ~WireClient() = default;
  WireClient(const WireClient&) = delete;
  WireClient& operator=(const WireClient&) = delete;

  // The channel the chunks go out on and are opened with; set up by the blocking client before the loop.
  SessionInfo& session() noexcept { return session_; }
  // Where the owner appends its chunks (append_chunk, append_request); flush() sends them.
  ua::ByteBuffer& outgoing() noexcept { return pending_; }
  // Sizes both output buffers for `bytes`, so that the first writes do not grow them.
  void reserve_output(size_t bytes) {
    pending_.reserve(bytes);
    writing_.reserve(pending_.capacity());
  }

  // REQUIRES: on the io_context's thread, the session open on socket(). Sends what outgoing() holds and
  // starts reading.
  void start_wire() {
    rx_.allocate(kReadSize);
    flush();
    do_read();
  }

  // Sends what outgoing() holds unless a write is in flight (its completion sends it then).
  void flush() {
    if (write_in_flight_ || pending_.size() == 0 || closed_) return;
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

  // Shuts the socket down and closes it; the loop stops. Idempotent.
  void close_wire() noexcept {
    if (closed_) return;
    closed_ = true;
    asio::error_code ec;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
  bool wire_closed() const noexcept { return closed_; }

  // The optional hooks' defaults.
  void on_server_error(const transport::ErrorMessage&) {}
  void begin_batch() {}
  void end_batch() {}

 private:
  Owner& owner() noexcept { return static_cast<Owner&>(*this); }

  void do_read() {
    if (closed_) return;
    const auto space = rx_.space();
    socket_.async_read_some(asio::buffer(space.data(), space.size()),
                            [this](const asio::error_code& ec, size_t n) {
                              if (ec) return fail("read: " + ec.message());
                              on_read(n);
                            });
  }

  void on_read(size_t n) {
    rx_.commit(n);
    owner().begin_batch();
    std::span<uint8_t> chunk;
    for (transport::ParseResult r; (r = rx_.next(chunk)) != transport::ParseResult::NeedMore;) {
      if (r == transport::ParseResult::Bad) return fail("implausible chunk size");
      if (!on_chunk(chunk)) return;
    }
    owner().end_batch();
    if (closed_) return;
    flush();
    do_read();
  }

  // False once the loop has stopped.
  bool on_chunk(std::span<uint8_t> chunk) {
    const uint32_t word = get_u32(chunk.data());
    const auto type = static_cast<transport::MessageType>(word & 0xFFFFFF);
    if (type == transport::MessageType::Error) {
      transport::ErrorMessage err;
      std::string what;
      if (read_error(chunk.subspan(transport::kHeaderSize), err, what)) owner().on_server_error(err);
      fail(what);
      return false;
    }
    if (type != transport::MessageType::Message || chunk.size() < transport::kSymmetricPrefix) {
      fail("unexpected message type from the server");
      return false;
    }
    // Decrypted and verified in place first on a secured channel: the sequence header is inside.
    MessageChunk m;
    if (!open_chunk(session_, chunk, m.body)) {
      fail("a response chunk failed its security checks");
      return false;
    }
    m.chunk_type = static_cast<char>(word >> 24);
    m.sequence = get_u32(chunk.data() + 16);
    m.request_id = get_u32(chunk.data() + 20);
    m.size = chunk.size();
    const bool whole = m.chunk_type != 'C' && m.chunk_type != 'A';
    if (m.chunk_type == 'C') {
      reassembly_.insert(reassembly_.end(), m.body.begin(), m.body.end());
    } else if (m.chunk_type == 'A') {
      reassembly_.clear();
    } else if (!reassembly_.empty()) {
      reassembly_.insert(reassembly_.end(), m.body.begin(), m.body.end());
      m.message = reassembly_;
    } else {
      m.message = m.body;
    }
    owner().on_message(m);
    if (whole) reassembly_.clear();
    return !closed_;
  }

  void fail(const std::string& what) {
    if (closed_) return;
    owner().on_wire_error(what);
    close_wire();
  }

  asio::ip::tcp::socket socket_;
  SessionInfo session_;
  // Output: chunks of one loop turn gather in pending_, one write is outstanding from writing_.
  ua::ByteBuffer pending_;
  ua::ByteBuffer writing_;
  bool write_in_flight_ = false;
  // Input: chunks framed from rx_; multi-chunk messages reassembled.
  ChunkReader rx_;
  std::vector<uint8_t> reassembly_;
  bool closed_ = false;
};

}  // namespace opcuad::bench
