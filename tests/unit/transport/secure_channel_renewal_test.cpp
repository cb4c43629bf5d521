// Security token renewal on a secured channel with requests in flight (Part 6 §6.7.4, Part 4 §5.5.2): the
// client renews while the service still owes it responses, keeps sending with the old token for a while,
// then switches. Every response arrives exactly once and verifies with the keys of the token that was in use
// when it was sent: the old token's until the client's first chunk under the new one, the new token's after.
// The handshakes run on a real HandshakePool, as in the daemon.
#include <catch2/catch.hpp>

#include <map>

#include "tests/unit/transport/secure_fixture.hpp"
#include "transport/handshake_pool.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
namespace status = ua::status;

namespace {

// The client's view of one channel: what it sent, which responses came back and under which token.
struct Traffic {
  Harness& h;
  SecureTestClient& c;
  size_t consumed = 0;
  uint32_t next_request = 10;
  std::map<uint32_t, uint32_t> response_token;  // request id -> token the response was secured with
  std::vector<uint32_t> sent;

  std::string request() {
    const uint32_t id = next_request++;
    sent.push_back(id);
    return c.message(id, encode_request(read_request(id, 2)));
  }
  // Releases the responses the service holds (in arrival order).
  void answer_all() {
    auto pending = std::move(h.handler.deferred);
    h.handler.deferred.clear();
    for (auto& [id, resp] : pending) h.channel->send(id, resp);
    h.run();
  }
  // Reads everything new: OPN responses go to the client, MSGs must verify, decode and answer a request.
  void collect() {
    const auto chunks = output_chunks(h.sink.out.substr(consumed));
    for (const auto& chunk : chunks) {
      consumed += chunk.size();
      INFO("chunk " << chunk.substr(0, 3));
      if (chunk.substr(0, 3) == "OPN") {
        REQUIRE(c.accept_open(chunk));
        continue;
      }
      REQUIRE(chunk.substr(0, 3) == "MSG");
      SecureTestClient::Unsealed u;
      REQUIRE(c.unseal(chunk, u));  // the keys of the token the chunk names
      ua::Decoder d(u.body);
      ua::NodeId type;
      ua::decode(d, type);
      ua::ReadResponse resp;
      ua::decode(d, resp);
      REQUIRE(d.ok());
      CHECK(resp.response_header.request_handle == u.request_id);
      CHECK(response_token.count(u.request_id) == 0);  // exactly once
      response_token[u.request_id] = u.token_id;
    }
  }
};

}  // namespace

TEST_CASE(
    "secure channel: renewals with requests in flight lose nothing, and each response uses the token in use",
    "[transport][security][renewal]") {
  HandshakePool pool(2, 16);
  for (auto id : {security::PolicyId::Basic256Sha256, security::PolicyId::Aes256_Sha256_RsaPss}) {
    for (auto mode : {ua::MessageSecurityMode::Sign, ua::MessageSecurityMode::SignAndEncrypt}) {
      const auto& p = security::policy(id);
      INFO(p.name << " mode " << static_cast<int>(mode));
      Harness h(fixed_secured_config(p, mode, &pool));
      SecureTestClient c = fixed_client(p, mode);
      Traffic t{h, c};
      h.feed(hello());
      t.consumed = h.sink.out.size();
      h.feed(c.open_request(1, ua::SecurityTokenRequestType::Issue));
      REQUIRE(run_until(h, [&] { return output_chunks(h.sink.out.substr(t.consumed)).size() == 1; }));
      t.collect();
      REQUIRE(c.channel_id() != 0);
      const uint32_t first_token = c.token_id();
      h.handler.defer = true;  // the service answers only when the test says: requests stay in flight

      for (int round = 0; round < 3; ++round) {
        INFO("renewal " << round);
        const uint32_t old_token = c.token_id();
        const auto before = t.response_token.size();
        // Requests, then the renewal and more requests behind it in the same read: the channel reads
        // nothing past the OPN until its handshake is done, then goes on with the old token's chunks.
        std::string burst;
        for (int i = 0; i < 5; ++i) burst += t.request();
        burst += c.open_request(t.next_request++, ua::SecurityTokenRequestType::Renew);
        for (int i = 0; i < 3; ++i) burst += t.request();
        h.feed(burst);
        REQUIRE(run_until(h, [&] { return h.handler.deferred.size() == 8; }));
        t.collect();
        const uint32_t new_token = c.newest_token();
        REQUIRE(new_token != old_token);
        CHECK(c.token_id() == old_token);  // accept_open of a renewal does not switch by itself

        // The owed responses go out under the old token: the client has not used the new one yet.
        t.answer_all();
        t.collect();
        REQUIRE(t.response_token.size() == before + 8);
        for (size_t i = t.sent.size() - 8; i < t.sent.size(); ++i)
          CHECK(t.response_token[t.sent[i]] == old_token);

        // More under the old token (still valid), held; then the switch: the first chunk under the new token.
        for (int i = 0; i < 3; ++i) h.feed(t.request());
        c.use_token(new_token);
        for (int i = 0; i < 3; ++i) h.feed(t.request());
        h.run();
        REQUIRE(h.handler.deferred.size() == 6);
        CHECK(!h.events.closed);
        // Everything answered after the switch is secured with the new token, even the responses to
        // requests that came under the old one.
        t.answer_all();
        t.collect();
        REQUIRE(t.response_token.size() == before + 14);
        for (size_t i = t.sent.size() - 6; i < t.sent.size(); ++i)
          CHECK(t.response_token[t.sent[i]] == new_token);
      }
      // Every request was answered exactly once.
      CHECK(t.response_token.size() == t.sent.size());
      CHECK(h.sink.out.find("ERR") == std::string::npos);

      // Once the client used the new token, the old one is gone (Part 6 §6.7.4).
      c.use_token(first_token);
      h.feed(t.request());
      h.run();
      const auto last = output_chunks(h.sink.out.substr(t.consumed));
      REQUIRE(last.size() == 1);
      CHECK(last[0].substr(0, 3) == "ERR");
      CHECK(error_status(last[0]) == status::BadSecureChannelTokenUnknown);
      CHECK(h.events.closed);
    }
  }
}
