// SecureChannel driven message by message through the in-memory transport.
#include <catch2/catch.hpp>

#include <set>

#include "tests/unit/transport/channel_harness.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
namespace status = ua::status;
using namespace std::string_literals;

TEST_CASE("transport: HEL is acknowledged with negotiated limits, whatever the byte split", "[transport]") {
  for (size_t step : {size_t{0}, size_t{1}, size_t{7}}) {
    Harness h;
    h.feed(hello(16384, 32768, 1000000, 10), step);
    auto m = h.messages();
    REQUIRE(m.size() == 1);
    CHECK(m[0].type == "ACK");
    ua::Decoder d(m[0].body);
    CHECK(d.read_u32() == 0);      // protocol version
    CHECK(d.read_u32() == 32768);  // our receive size: at most what the client sends
    CHECK(d.read_u32() == 16384);  // our send size: at most what the client receives
    CHECK(d.read_u32() == h.config.max_message_size);
    CHECK(d.read_u32() > 0);
    CHECK(h.channel->endpoint_url() == "opc.tcp://localhost:4840");
  }
}

TEST_CASE("transport: OPN issues a channel and a token with a revised lifetime", "[transport]") {
  Harness h;
  h.open(1000);
  CHECK(h.channel_id != 0);
  CHECK(h.token_id != 0);
  CHECK(h.revised_lifetime == h.config.min_token_lifetime_ms);

  Harness h2;
  h2.open(7200000);
  CHECK(h2.revised_lifetime == 3600000);
  CHECK(h2.channel_id != h.channel_id);

  TransportConfig short_max;
  short_max.max_token_lifetime_ms = 300000;  // still never below 600,000 when the client asks for more
  CHECK(revise_token_lifetime(900000, short_max) == 600000);
  CHECK(revise_token_lifetime(20000, short_max) == 20000);
}

TEST_CASE("transport: a request gets its response with the request id and sequence +1", "[transport]") {
  Harness h;
  h.open();
  h.feed(h.msg(encode_request(read_request(5, 3))), 3);
  h.feed(h.msg(encode_request(read_request(6, 1))));
  auto m = h.messages();
  REQUIRE(m.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(m[i].type == "MSG");
    CHECK(m[i].chunk == 'F');
    CHECK(m[i].channel_id == h.channel_id);
    CHECK(m[i].token_id == h.token_id);
    CHECK(m[i].request_id == 2 + i);
  }
  CHECK(m[1].sequence == m[0].sequence + 1);
  ua::ReadResponse r;
  REQUIRE(decode_body(m[0], r));
  CHECK(r.response_header.request_handle == 5);
  CHECK(r.results.size() == 3);
  CHECK(r.results[2].value == ua::Variant(2.0));
}

TEST_CASE("transport: a request type nobody handles gets ServiceFault BadServiceUnsupported", "[transport]") {
  Harness h;
  h.open();
  ua::BrowseRequest browse;
  browse.request_header.request_handle = 77;
  h.feed(h.msg(encode_request(browse)));
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  ua::ServiceFault fault;
  REQUIRE(decode_body(m[0], fault));
  CHECK(fault.response_header.service_result == status::BadServiceUnsupported);
  CHECK(fault.response_header.request_handle == 77);
}

TEST_CASE("transport: multi-chunk requests are reassembled, abort chunks discarded", "[transport]") {
  Harness h;
  h.open();
  std::string body = encode_request(read_request(8, 50));
  const uint32_t rid = 40;
  h.feed(h.msg(body.substr(0, 100), 'C', rid));
  h.feed(h.msg(body.substr(100, 200), 'C', rid));
  h.feed(h.msg(body.substr(300), 'F', rid));
  // An aborted request: its chunks are dropped and nothing is answered.
  h.feed(h.msg(body.substr(0, 100), 'C', 41));
  h.feed(h.msg("\x01\x00\x00\x80\xff\xff\xff\xff"s, 'A', 41));
  h.feed(h.msg(encode_request(read_request(9, 1)), 'F', 42));
  auto m = h.messages();
  REQUIRE(m.size() == 2);
  CHECK(m[0].request_id == 40);
  ua::ReadResponse r;
  REQUIRE(decode_body(m[0], r));
  CHECK(r.results.size() == 50);
  CHECK(m[1].request_id == 42);
}

TEST_CASE("transport: large responses are split into chunks within the client's buffer", "[transport]") {
  Harness h;
  h.open(600000, hello(8192, 65535));
  h.feed(h.msg(encode_request(read_request(3, 2000))));  // ~20 kB of results
  auto m = h.messages();
  REQUIRE(m.size() >= 3);
  std::vector<uint8_t> body;
  for (size_t i = 0; i < m.size(); ++i) {
    CHECK(m[i].size <= 8192);
    CHECK(m[i].chunk == (i + 1 == m.size() ? 'F' : 'C'));
    CHECK(m[i].request_id == m[0].request_id);
    if (i) CHECK(m[i].sequence == m[i - 1].sequence + 1);
    body.insert(body.end(), m[i].body.begin(), m[i].body.end());
  }
  ServerMessage whole = m.back();
  whole.body = body;
  ua::ReadResponse r;
  REQUIRE(decode_body(whole, r));
  CHECK(r.results.size() == 2000);
}

TEST_CASE("transport: a response beyond the client's MaxChunkCount becomes BadResponseTooLarge",
          "[transport]") {
  Harness h;
  h.open(600000, hello(8192, 65535, 0, 2));
  h.feed(h.msg(encode_request(read_request(31, 2000))));
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  ua::ServiceFault fault;
  REQUIRE(decode_body(m[0], fault));
  CHECK(fault.response_header.service_result == status::BadResponseTooLarge);
  CHECK(fault.response_header.request_handle == 31);
}

TEST_CASE("transport: a one-chunk response beyond the client's MaxMessageSize becomes BadResponseTooLarge",
          "[transport]") {
  Harness h;
  h.open(600000, hello(65535, 65535, 1000, 0));  // chunks of 64 KiB, but messages of at most 1000 bytes
  h.feed(h.msg(encode_request(read_request(32, 200))));  // about 2.4 KB: one chunk, too large a message
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  ua::ServiceFault fault;
  REQUIRE(decode_body(m[0], fault));
  CHECK(fault.response_header.service_result == status::BadResponseTooLarge);
  CHECK(fault.response_header.request_handle == 32);
  h.sink.out.clear();
  h.feed(h.msg(encode_request(read_request(33, 10))));  // small enough: answered
  m = h.messages();
  REQUIRE(m.size() == 1);
  ua::ReadResponse resp;
  REQUIRE(decode_body(m[0], resp));
  CHECK(resp.results.size() == 10);
}

TEST_CASE("transport: a MaxMessageSize too small for any ServiceFault closes the channel instead of looping",
          "[transport][limits]") {
  Harness h;
  h.open(600000, hello(65535, 65535, 20, 0));  // messages of at most 20 bytes: no response fits
  h.feed(h.msg(encode_request(read_request(7, 1))));
  std::vector<ServerMessage> m;
  REQUIRE(parse_output(h.sink.out, m));
  REQUIRE(!m.empty());
  REQUIRE(m.back().type == "ERR");
  REQUIRE(m.back().body.size() >= 4);
  uint32_t code = 0;
  std::memcpy(&code, m.back().body.data(), 4);
  CHECK(ua::StatusCode(code) == status::BadResponseTooLarge);
  CHECK(h.events.closed);
}

TEST_CASE("transport: a request beyond MaxMessageSize gets BadRequestTooLarge", "[transport]") {
  TransportConfig c;
  c.max_message_size = 20000;
  Harness h(c);
  h.open();
  std::string big(9000, 'x');
  h.feed(h.msg(big, 'C', 50));
  h.feed(h.msg(big, 'C', 50));
  h.feed(h.msg(big, 'F', 50));
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  ua::ServiceFault fault;
  REQUIRE(decode_body(m[0], fault));
  CHECK(fault.response_header.service_result == status::BadRequestTooLarge);
  // The channel is still usable.
  h.sink.out.clear();
  h.feed(h.msg(encode_request(read_request(1, 1))));
  CHECK(h.messages().size() == 1);
}

TEST_CASE("transport: renewal keeps the old token until the client uses the new one", "[transport]") {
  Harness h;
  h.open();
  const uint32_t old_token = h.token_id;
  h.feed(open_request(h.next_sequence++, 60, ua::SecurityTokenRequestType::Renew, h.channel_id));
  auto m = h.messages();
  REQUIRE(m.size() == 1);
  ua::OpenSecureChannelResponse renewed;
  REQUIRE(decode_body(m[0], renewed));
  const uint32_t new_token = renewed.security_token.token_id;
  CHECK(new_token != old_token);
  CHECK(renewed.security_token.channel_id == h.channel_id);
  h.sink.out.clear();
  // The old token still works, and responses keep using it.
  h.feed(h.msg(encode_request(read_request(1, 1))));
  REQUIRE(h.messages().size() == 1);
  CHECK(h.messages()[0].token_id == old_token);
  // The client switches; from then on the old token is refused.
  h.token_id = new_token;
  h.feed(h.msg(encode_request(read_request(2, 1))));
  REQUIRE(h.messages().size() == 2);
  CHECK(h.messages()[1].token_id == new_token);
  h.token_id = old_token;
  h.feed(h.msg(encode_request(read_request(3, 1))));
  auto all = h.messages();
  REQUIRE(all.back().type == "ERR");
  CHECK(error_of(all.back()) == status::BadSecureChannelTokenUnknown);
}

namespace {

// Feeds `bytes` after the given preamble and returns the ERR status the server answers with.
ua::StatusCode error_after(const std::string& bytes, bool open, TransportConfig c = {}) {
  Harness h(c);
  if (open) h.open();
  h.feed(bytes);
  h.run();
  auto m = h.messages();
  REQUIRE(!m.empty());
  REQUIRE(m.back().type == "ERR");
  CHECK(h.events.closed);
  return error_of(m.back());
}

}  // namespace

TEST_CASE("transport: every protocol violation gets its ERR, then the connection closes",
          "[transport][errors]") {
  CHECK(error_after("XYZF\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"s, false) ==
        status::BadTcpMessageTypeInvalid);
  CHECK(error_after("HELX\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"s, false) ==
        status::BadTcpMessageTypeInvalid);
  CHECK(error_after(hello(65535, 65535, 0, 0, "http://x"), false) == status::BadTcpEndpointUrlInvalid);
  CHECK(error_after(hello(65535, 65535, 0, 0, std::string(5000, 'u')), false) ==
        status::BadTcpMessageTooLarge);
  CHECK(error_after(hello(1024, 65535), false) == status::BadConnectionRejected);
  CHECK(error_after(open_request(1, 1), false) == status::BadTcpMessageTypeInvalid);  // OPN before HEL
  CHECK(error_after(hello(), true) == status::BadTcpMessageTypeInvalid);              // HEL twice
  CHECK(error_after(hello() + open_request(1, 1, ua::SecurityTokenRequestType::Issue, 0, 600000,
                                           "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256"),
                    false) == status::BadSecurityPolicyRejected);
  CHECK(error_after(hello() + open_request(1, 1, ua::SecurityTokenRequestType::Issue, 0, 600000,
                                           kSecurityPolicyNone, ua::MessageSecurityMode::Sign),
                    false) == status::BadSecurityModeRejected);
  CHECK(error_after(hello() + open_request(1, 1, ua::SecurityTokenRequestType::Renew), false) ==
        status::BadRequestTypeInvalid);
  CHECK(error_after(hello() + symmetric_chunk("MSG", 'F', 1, 1, 1, 1, "x"), false) ==
        status::BadSecureChannelIdInvalid);
  {
    Harness h;
    h.open();
    h.feed(
        symmetric_chunk("MSG", 'F', h.channel_id + 1, h.token_id, 2, 2, encode_request(read_request(1, 1))));
    CHECK(error_of(h.messages().back()) == status::BadSecureChannelIdInvalid);
  }
  {
    Harness h;
    h.open();
    h.feed(symmetric_chunk("MSG", 'F', h.channel_id, h.token_id, 5, 2, encode_request(read_request(1, 1))));
    CHECK(error_of(h.messages().back()) == status::BadSequenceNumberInvalid);
  }
  {
    Harness h;
    h.open();
    h.feed(
        symmetric_chunk("MSG", 'F', h.channel_id, h.token_id + 7, 2, 2, encode_request(read_request(1, 1))));
    CHECK(error_of(h.messages().back()) == status::BadSecureChannelTokenUnknown);
  }
  {
    // A chunk larger than the negotiated receive buffer.
    Harness h;
    h.open();
    h.feed(h.msg(std::string(70000, 'x')).substr(0, 16));
    CHECK(error_of(h.messages().back()) == status::BadTcpMessageTooLarge);
  }
  {
    // Two requests' chunks interleaved.
    Harness h;
    h.open();
    h.feed(h.msg("abc", 'C', 10));
    h.feed(h.msg("abc", 'C', 11));
    CHECK(error_of(h.messages().back()) == status::BadTcpMessageTypeInvalid);
  }
}

TEST_CASE("transport: sequence numbers may wrap only near the top", "[transport]") {
  Harness h;
  h.open(600000, hello(), 0, 4294967000u);
  CHECK(h.next_sequence == 4294967001u);
  h.feed(h.msg(encode_request(read_request(1, 1))));
  h.next_sequence = 3;  // wrapped: allowed since the last number is above UInt32.MaxValue - 1024
  h.feed(h.msg(encode_request(read_request(2, 1))));
  auto m = h.messages();
  REQUIRE(m.size() == 2);
  CHECK(m[1].type == "MSG");
}

TEST_CASE("transport: CLO closes the channel without a response", "[transport]") {
  Harness h;
  h.open();
  h.feed(symmetric_chunk("CLO", 'F', h.channel_id, h.token_id, h.next_sequence++, 9,
                         encode_request(ua::CloseSecureChannelRequest{})));
  h.run();
  CHECK(h.messages().empty());
  CHECK(h.events.closed);
  CHECK(h.handler.closed == 1);
}

TEST_CASE("transport: a silent client is dropped after the hello timeout", "[transport]") {
  TransportConfig c;
  c.hello_timeout = std::chrono::milliseconds(30);
  c.tick = std::chrono::milliseconds(10);
  Harness h(c);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!h.events.closed && std::chrono::steady_clock::now() < deadline) {
    h.ctx.restart();
    h.ctx.run_for(std::chrono::milliseconds(20));
  }
  REQUIRE(h.events.closed);
  CHECK(error_of(h.messages().back()) == status::BadTimeout);
}

TEST_CASE("transport: many responses in one loop turn go out in few writes", "[transport][writer]") {
  Harness h;
  h.open();
  const size_t writes_before = h.sink.writes;
  std::string batch;
  for (int i = 0; i < 50; ++i) batch += h.msg(encode_request(read_request(i, 1)));
  h.feed(batch);
  auto m = h.messages();
  REQUIRE(m.size() == 50);
  for (size_t i = 1; i < m.size(); ++i) CHECK(m[i].sequence == m[i - 1].sequence + 1);
  const size_t writes = h.sink.writes - writes_before;
  INFO("writes " << writes);
  CHECK(writes <= 2);
  CHECK(h.stats.messages_sent.load() >= 50);
}

TEST_CASE("transport: a client that stops reading stops the server reading, then resumes",
          "[transport][writer]") {
  TransportConfig c;
  c.max_owed_responses = 8;
  Harness h(c);
  h.open();
  h.sink.stalled = true;
  std::string batch;
  for (int i = 0; i < 40; ++i) batch += h.msg(encode_request(read_request(i, 1)));
  // Feed what the channel will take; it must stop taking requests once 8 are owed.
  auto space = h.channel->receive_space();
  REQUIRE(space.size() >= batch.size());
  std::memcpy(space.data(), batch.data(), batch.size());
  h.channel->on_received(batch.size());
  h.run();
  CHECK_FALSE(h.channel->reading_allowed());
  CHECK(h.handler.requests <= 10);
  CHECK(h.channel->owed_responses() <= 9);
  // The client reads again: everything is answered, in order.
  for (int round = 0; round < 20 && h.handler.requests < 40; ++round) {
    h.sink.flush();
    h.run();
  }
  h.sink.flush();
  h.run();
  h.sink.stalled = false;
  h.sink.flush();
  h.run();
  CHECK(h.handler.requests == 40);
  auto m = h.messages();
  REQUIRE(m.size() == 40);
  for (size_t i = 0; i < m.size(); ++i) CHECK(m[i].request_id == m[0].request_id + i);
  CHECK(h.channel->reading_allowed());
  CHECK(h.events.resumed >= 1);
}

TEST_CASE("transport: fairness is per message across streams", "[transport][writer]") {
  Harness h;
  h.open();
  h.handler.defer = true;
  std::string batch;
  for (int i = 0; i < 4; ++i) batch += h.msg(encode_request(read_request(i, 1)));
  h.feed(batch);
  REQUIRE(h.handler.deferred.size() == 4);
  // Stream 1 queues three responses, stream 2 one: stream 2's goes out second, not last.
  for (int i = 0; i < 3; ++i) h.channel->send(h.handler.deferred[i].first, h.handler.deferred[i].second, 1);
  h.channel->send(h.handler.deferred[3].first, h.handler.deferred[3].second, 2);
  h.run();
  auto m = h.messages();
  REQUIRE(m.size() == 4);
  CHECK(m[1].request_id == h.handler.deferred[3].first);
}

TEST_CASE("transport: channel ids are unique and not sequential", "[transport]") {
  ChannelIdSource ids({1, 2, 3, 4}, 0);
  std::set<uint32_t> seen;
  uint32_t prev = ids.next();
  int sequential = 0, zeros = 0;
  for (int i = 0; i < 100000; ++i) {
    uint32_t id = ids.next();
    zeros += id == 0;
    seen.insert(id);
    if (id == prev + 1) ++sequential;
    prev = id;
  }
  CHECK(zeros == 0);
  CHECK(seen.size() == 100000);
  CHECK(sequential < 10);
  ChannelIdSource a, b;  // random keys: two processes do not produce the same sequence
  CHECK(a.next() != b.next());
}

namespace {

// Runs the harness's loop until `done()` or five seconds pass.
template <class F>
void run_until(Harness& h, F done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    h.ctx.restart();
    h.ctx.run_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

TEST_CASE("transport: a token that expires unrenewed closes the channel", "[transport]") {
  TransportConfig c;
  c.min_token_lifetime_ms = 40;
  c.tick = std::chrono::milliseconds(10);
  Harness h(c);
  h.open(40);
  CHECK(h.revised_lifetime == 40);
  run_until(h, [&] { return h.events.closed; });
  REQUIRE(h.events.closed);
  CHECK(error_of(h.messages().back()) == status::BadSecureChannelTokenUnknown);
  CHECK(h.handler.closed == 1);
}

TEST_CASE("transport: a peer that accepts no bytes is dropped after the send timeout",
          "[transport][writer]") {
  TransportConfig c;
  c.send_timeout = std::chrono::milliseconds(40);
  c.tick = std::chrono::milliseconds(10);
  Harness h(c);
  h.open();
  h.sink.stalled = true;
  h.feed(h.msg(encode_request(read_request(1, 1))));
  run_until(h, [&] { return h.events.closed; });
  CHECK(h.events.closed);
  CHECK(h.channel->state() == SecureChannel::State::Closed);
}

TEST_CASE("transport: a whole conversation fed one byte at a time", "[transport]") {
  Harness h;
  h.open(600000, hello(), 1);
  std::string body = encode_request(read_request(12, 30));
  // One statement per chunk: the sequence numbers must be drawn in order.
  std::string stream = h.msg(body.substr(0, 50), 'C', 7);
  stream += h.msg(body.substr(50), 'F', 7);
  stream += h.msg(encode_request(read_request(13, 2)), 'F', 8);
  h.feed(stream, 1);
  auto m = h.messages();
  REQUIRE(m.size() == 2);
  ua::ReadResponse r;
  REQUIRE(decode_body(m[0], r));
  CHECK(r.results.size() == 30);
  CHECK(m[1].request_id == 8);
}

TEST_CASE("transport: the receive buffer starts small and grows only for big chunks or fast senders",
          "[transport]") {
  Harness h;
  h.open(600000, hello(65535, 65535));
  const size_t initial = SecureChannelTestAccess::receive_capacity(*h.channel);
  CHECK(initial < 65535);  // an idle session does not hold room for the largest chunk
  // Small requests one by one: no growth.
  for (int i = 0; i < 20; ++i) h.feed(h.msg(encode_request(read_request(i, 1))));
  CHECK(SecureChannelTestAccess::receive_capacity(*h.channel) == initial);
  CHECK(h.messages().size() == 20);
  // A request of one chunk bigger than the buffer, fed as fast as the buffer takes it.
  const std::string big = h.msg(encode_request(read_request(100, 3000)));
  REQUIRE(big.size() > initial);
  REQUIRE(big.size() <= 65535);
  h.feed(big);
  CHECK(SecureChannelTestAccess::receive_capacity(*h.channel) > big.size());
  CHECK(SecureChannelTestAccess::receive_capacity(*h.channel) <= 65535 + 65536);
  auto m = h.messages();
  REQUIRE(m.size() >= 21);
  CHECK(m.back().request_id == m[19].request_id + 1);
}
