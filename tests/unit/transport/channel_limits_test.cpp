// What a client may hold before it has a session, and the buffers and tokens a channel keeps: each bound
// is fed the hostile value through the in-memory channel.
#include <catch2/catch.hpp>

#include "tests/unit/transport/channel_harness.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
namespace status = ua::status;

namespace {

// Runs the harness's loop until `done()` or `limit` passes.
template <class F>
void run_while_not(Harness& h, F done, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    h.ctx.restart();
    h.ctx.run_for(std::chrono::milliseconds(5));
  }
}

void run_for(Harness& h, std::chrono::milliseconds d) {
  run_while_not(
      h, [] { return false; }, d);
}

// A request body of `size` bytes of filler: no valid type id, so a dispatched one is refused.
std::string filler(size_t size) {
  return std::string(size, 'x');
}

}  // namespace

TEST_CASE("transport: before a session a 10 MiB request in chunks is never buffered past the budget",
          "[transport][limits]") {
  Harness h;  // the defaults: a 64 KiB budget before a session, 16 MiB after
  REQUIRE(h.config.max_message_size_before_session == 65536);
  h.open();
  const std::string chunk_body = filler(60000);
  const uint32_t rid = 77;
  size_t sent = 0, peak_reassembly = 0, peak_receive = 0;
  while (sent < (10u << 20)) {
    h.feed(h.msg(chunk_body, 'C', rid), 4096);
    sent += chunk_body.size();
    peak_reassembly = std::max(peak_reassembly, SecureChannelTestAccess::reassembly_capacity(*h.channel));
    peak_receive = std::max(peak_receive, SecureChannelTestAccess::receive_capacity(*h.channel));
  }
  CHECK(h.messages().empty());  // nothing is answered before the final chunk
  h.feed(h.msg(chunk_body, 'F', rid));
  INFO("peak reassembly capacity " << peak_reassembly << ", peak receive capacity " << peak_receive);
  CHECK(peak_reassembly <= 65536);
  CHECK(peak_receive <= 65535);  // one chunk: no room for batches before a session
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  CHECK(m[0].request_id == rid);
  CHECK(fault_of(m[0]) == status::BadRequestTooLarge);
  CHECK_FALSE(h.events.closed);
  // The channel is still usable for what a client without a session needs.
  h.sink.out.clear();
  h.feed(h.msg(encode_request(read_request(1, 2))));
  REQUIRE(h.messages().size() == 1);
  CHECK(h.messages()[0].type == "MSG");
  ua::ReadResponse r;
  CHECK(decode_body(h.messages()[0], r));
}

TEST_CASE("transport: the pre-session budget applies to one-chunk requests and ends with the session",
          "[transport][limits]") {
  TransportConfig c;
  c.max_message_size_before_session = 16384;
  Harness h(c);
  h.open();
  // One chunk over the budget.
  const std::string big = encode_request(read_request(5, 2000));  // ~30 kB
  REQUIRE(big.size() > 16384);
  h.feed(h.msg(big));
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  CHECK(fault_of(m[0]) == status::BadRequestTooLarge);
  CHECK(h.handler.requests == 0);
  // A multi-chunk request within the budget is served.
  h.sink.out.clear();
  const std::string small = encode_request(read_request(6, 300));
  REQUIRE(small.size() < 16384);
  h.feed(h.msg(small.substr(0, 2000), 'C', 30));
  h.feed(h.msg(small.substr(2000), 'F', 30));
  REQUIRE(h.messages().size() == 1);
  ua::ReadResponse r;
  REQUIRE(decode_body(h.messages()[0], r));
  CHECK(r.results.size() == 300);
  // Once a session is active the channel's limit is MaxMessageSize again, for one chunk or many.
  h.channel->set_session_active();
  h.sink.out.clear();
  h.feed(h.msg(big));
  h.feed(h.msg(big.substr(0, 20000), 'C', 31));
  h.feed(h.msg(big.substr(20000), 'F', 31));
  m = h.messages();
  REQUIRE(m.size() == 2);
  for (const auto& reply : m) {
    REQUIRE(decode_body(reply, r));
    CHECK(r.results.size() == 2000);
  }
}

TEST_CASE("transport: a client that sends HEL and then nothing is closed after the open timeout",
          "[transport][limits]") {
  TransportConfig c;
  c.open_timeout = std::chrono::milliseconds(40);
  c.tick = std::chrono::milliseconds(10);
  Harness h(c);
  h.feed(hello());
  REQUIRE(h.messages().size() == 1);
  CHECK(h.messages()[0].type == "ACK");
  run_while_not(h, [&] { return h.events.closed; });
  REQUIRE(h.events.closed);
  CHECK(error_of(h.messages().back()) == status::BadTimeout);
}

TEST_CASE("transport: an open channel on which no session is activated is closed after the timeout",
          "[transport][limits]") {
  TransportConfig c;
  c.session_activation_timeout = std::chrono::milliseconds(50);
  c.tick = std::chrono::milliseconds(10);
  Harness idle(c);
  idle.open();
  // Requests without a session (GetEndpoints, FindServers, CreateSession) do not keep it open.
  for (int i = 0; i < 3; ++i) {
    idle.feed(idle.msg(encode_request(read_request(i, 1))));
    run_for(idle, std::chrono::milliseconds(10));
  }
  run_while_not(idle, [&] { return idle.events.closed; });
  REQUIRE(idle.events.closed);
  CHECK(error_of(idle.messages().back()) == status::BadTimeout);
  CHECK(idle.handler.closed == 1);

  Harness active(c);
  active.open();
  active.channel->set_session_active();
  run_for(active, std::chrono::milliseconds(150));
  CHECK_FALSE(active.events.closed);
  CHECK(active.channel->state() == SecureChannel::State::Open);
}

TEST_CASE("transport: after one 4 MiB request the buffers return to their resting size",
          "[transport][limits]") {
  TransportConfig c;
  c.tick = std::chrono::milliseconds(10);
  Harness h(c);
  h.open();
  h.channel->set_session_active();
  const size_t resting_receive = SecureChannelTestAccess::receive_capacity(*h.channel);
  REQUIRE(resting_receive <= 16384);
  // 4 MiB in chunks of 64 KB, fed as fast as the channel takes them: both buffers grow.
  const std::string chunk_body = filler(65000);
  size_t sent = 0, peak_receive = 0;
  while (sent < (4u << 20)) {
    h.feed(h.msg(chunk_body, 'C', 90));
    sent += chunk_body.size();
    peak_receive = std::max(peak_receive, SecureChannelTestAccess::receive_capacity(*h.channel));
    if (sent == chunk_body.size() * 4)
      CHECK(SecureChannelTestAccess::reassembly_capacity(*h.channel) >= 4 * chunk_body.size());
  }
  h.feed(h.msg(chunk_body, 'F', 90));
  CHECK(peak_receive >= 65536);       // grown to hold a whole chunk
  REQUIRE(h.messages().size() == 1);  // the filler is no request type: BadDecodingError or unsupported
  // The reassembly buffer is given back with its request.
  CHECK(SecureChannelTestAccess::reassembly_capacity(*h.channel) <= 65536);
  // The receive buffer once the channel has been quiet for a tick, at its next read.
  run_for(h, std::chrono::milliseconds(40));
  h.feed(h.msg(encode_request(read_request(1, 1))));
  CHECK(SecureChannelTestAccess::receive_capacity(*h.channel) <= 16384);
  CHECK(h.messages().size() == 2);
}

TEST_CASE("transport: a busy channel keeps its grown receive buffer", "[transport][limits]") {
  TransportConfig c;
  c.tick = std::chrono::milliseconds(10);
  Harness h(c);
  h.open();
  h.channel->set_session_active();
  // A client that keeps sending batches bigger than the resting buffer: no shrink and grow per batch.
  std::string batch;
  for (int i = 0; i < 60; ++i) batch += h.msg(encode_request(read_request(i, 20)));
  REQUIRE(batch.size() > 16384);
  h.feed(batch);
  const size_t grown = SecureChannelTestAccess::receive_capacity(*h.channel);
  REQUIRE(grown > 16384);
  for (int round = 0; round < 8; ++round) {
    std::string next;
    for (int i = 0; i < 60; ++i) next += h.msg(encode_request(read_request(i, 20)));
    h.feed(next);
    run_for(h, std::chrono::milliseconds(5));
    CHECK(SecureChannelTestAccess::receive_capacity(*h.channel) == grown);
  }
}

TEST_CASE("transport: the previous token expires on its own lifetime when the client never switches",
          "[transport][tokens]") {
  TransportConfig c;
  c.min_token_lifetime_ms = 40;
  c.tick = std::chrono::milliseconds(10);
  Harness h(c);
  h.open(40);  // valid for 40 ms (+25 %)
  const uint32_t old_token = h.token_id;
  h.feed(open_request(h.next_sequence++, 60, ua::SecurityTokenRequestType::Renew, h.channel_id, 600000));
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  ua::OpenSecureChannelResponse renewed;
  REQUIRE(decode_body(m[0], renewed));
  CHECK(renewed.security_token.revised_lifetime == 600000);
  h.sink.out.clear();
  // The client keeps the old token: accepted while it lives.
  h.feed(h.msg(encode_request(read_request(1, 1))));
  REQUIRE(h.messages().size() == 1);
  CHECK(h.messages()[0].type == "MSG");
  // Past its lifetime it is refused, though the channel (renewed for ten minutes) is still open.
  run_for(h, std::chrono::milliseconds(120));
  CHECK_FALSE(h.events.closed);
  h.feed(h.msg(encode_request(read_request(2, 1))));
  auto all = h.messages();
  REQUIRE(all.back().type == "ERR");
  CHECK(error_of(all.back()) == status::BadSecureChannelTokenUnknown);
  CHECK(h.token_id == old_token);
}

TEST_CASE("transport: renewals before the client switches never drop the token in use",
          "[transport][tokens]") {
  Harness h;
  h.open();
  const uint32_t first = h.token_id;
  std::vector<uint32_t> issued;
  auto renew = [&] {
    h.sink.out.clear();
    h.feed(
        open_request(h.next_sequence++, h.next_request++, ua::SecurityTokenRequestType::Renew, h.channel_id));
    auto m = h.messages();
    REQUIRE(m.size() == 1);
    ua::OpenSecureChannelResponse r;
    REQUIRE(decode_body(m[0], r));
    issued.push_back(r.security_token.token_id);
    CHECK(SecureChannelTestAccess::newest_token(*h.channel).token_id == r.security_token.token_id);
  };
  renew();
  renew();  // the second renewal: the client still secures its messages with `first`
  h.sink.out.clear();
  h.feed(h.msg(encode_request(read_request(1, 1))));
  REQUIRE(h.messages().size() == 1);
  CHECK(h.messages()[0].type == "MSG");
  CHECK(h.messages()[0].token_id == first);
  // Many more renewals, never used: the token in use and the newest still work.
  for (int i = 0; i < 10; ++i) renew();
  h.sink.out.clear();
  h.feed(h.msg(encode_request(read_request(2, 1))));
  REQUIRE(h.messages().size() == 1);
  CHECK(h.messages()[0].token_id == first);
  h.token_id = issued.back();
  h.feed(h.msg(encode_request(read_request(3, 1))));
  REQUIRE(h.messages().size() == 2);
  CHECK(h.messages()[1].type == "MSG");
  CHECK(h.messages()[1].token_id == issued.back());  // responses follow the client to its new token
  // Having switched, the client may not go back to an older token.
  h.token_id = first;
  h.feed(h.msg(encode_request(read_request(4, 1))));
  REQUIRE(h.messages().back().type == "ERR");
  CHECK(error_of(h.messages().back()) == status::BadSecureChannelTokenUnknown);
}

TEST_CASE("transport: after two renewals the client may switch to either new token", "[transport][tokens]") {
  Harness h;
  h.open();
  const uint32_t first = h.token_id;
  uint32_t tokens[2];
  for (uint32_t& t : tokens) {
    h.sink.out.clear();
    h.feed(
        open_request(h.next_sequence++, h.next_request++, ua::SecurityTokenRequestType::Renew, h.channel_id));
    ua::OpenSecureChannelResponse r;
    REQUIRE(decode_body(h.messages().at(0), r));
    t = r.security_token.token_id;
  }
  h.sink.out.clear();
  // A client that had adopted the first renewal's token before the second reply reached it.
  h.token_id = tokens[0];
  h.feed(h.msg(encode_request(read_request(1, 1))));
  h.token_id = tokens[1];
  h.feed(h.msg(encode_request(read_request(2, 1))));
  auto m = h.messages();
  REQUIRE(m.size() == 2);
  CHECK(m[0].token_id == tokens[0]);
  CHECK(m[1].token_id == tokens[1]);
  h.token_id = first;
  h.feed(h.msg(encode_request(read_request(3, 1))));
  CHECK(error_of(h.messages().back()) == status::BadSecureChannelTokenUnknown);
}
