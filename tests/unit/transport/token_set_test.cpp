// TokenSet (transport/token_set.hpp) without a channel: issue, renewal, the client's switch to the new
// token, expiry (Part 4 §5.5.2, Part 6 §6.7.4), and unknown token ids; then the status a channel answers
// an unknown token id and an unknown channel id with.
#include <catch2/catch.hpp>

#include <chrono>

#include "tests/unit/transport/channel_harness.hpp"
#include "transport/token_set.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
namespace status = ua::status;
using namespace std::chrono_literals;

namespace {

const TokenSet::Clock::time_point t0 = TokenSet::Clock::now();

}  // namespace

TEST_CASE("token set: an issued token is valid for its lifetime and a quarter more", "[transport][tokens]") {
  TokenSet tokens(100);
  // Before the first Issue: no token a client could name.
  CHECK(tokens.size() == 1);
  CHECK(tokens.in_use().token_id == 0);
  const SecurityToken& t = tokens.issue(60000, t0);
  CHECK(t.token_id == 100);
  CHECK(t.lifetime_ms == 60000);
  CHECK(t.expires == t0 + 75000ms);
  CHECK(tokens.size() == 1);
  CHECK(tokens.find(100) == &tokens.in_use());
  CHECK(&tokens.newest() == &tokens.in_use());
  CHECK_FALSE(tokens.newest_expired(t0 + 75000ms));
  CHECK(tokens.newest_expired(t0 + 75001ms));
}

TEST_CASE("token set: an unknown token id is neither found nor accepted", "[transport][tokens]") {
  TokenSet tokens(100);
  tokens.issue(60000, t0);
  for (uint32_t id : {0u, 99u, 101u, 0xFFFFFFFFu}) {
    CHECK(tokens.find(id) == nullptr);
    CHECK_FALSE(tokens.accept(id));
  }
  CHECK(tokens.in_use().token_id == 100);  // a refused id changes nothing
}

TEST_CASE("token set: token ids never are 0", "[transport][tokens]") {
  TokenSet tokens(0xFFFFFFFFu);
  CHECK(tokens.issue(1000, t0).token_id == 0xFFFFFFFFu);
  CHECK(tokens.renew(1000, t0).token_id == 1);
  TokenSet from_zero(0);
  CHECK(from_zero.issue(1000, t0).token_id == 1);
}

TEST_CASE("token set: after a renewal both tokens are valid until the client uses the new one",
          "[transport][tokens]") {
  TokenSet tokens(10);
  tokens.issue(60000, t0);
  const uint32_t renewed = tokens.renew(60000, t0 + 45s).token_id;
  CHECK(renewed == 11);
  CHECK(tokens.size() == 2);
  CHECK(tokens.in_use().token_id == 10);  // responses keep the old token until the switch
  CHECK(tokens.newest().token_id == 11);
  CHECK(tokens.accept(10));
  CHECK(tokens.in_use().token_id == 10);
  // The client's first chunk under the new token: the old one is no longer accepted.
  CHECK(tokens.accept(11));
  CHECK(tokens.size() == 1);
  CHECK(tokens.in_use().token_id == 11);
  CHECK(tokens.find(10) == nullptr);
  CHECK_FALSE(tokens.accept(10));
}

TEST_CASE("token set: renewals without a switch drop the oldest unused token, never the one in use",
          "[transport][tokens]") {
  TokenSet tokens(1);
  tokens.issue(60000, t0);
  for (int i = 0; i < 5; ++i) tokens.renew(60000, t0);
  CHECK(tokens.size() == TokenSet::kMaxTokens);
  CHECK(tokens.in_use().token_id == 1);
  CHECK(tokens.find(1) != nullptr);
  CHECK(tokens.find(5) != nullptr);
  CHECK(tokens.find(6) != nullptr);
  CHECK(tokens.find(2) == nullptr);
  CHECK(tokens.find(4) == nullptr);
  // Switching to the middle one drops the one in use, keeps the newer.
  CHECK(tokens.accept(5));
  CHECK(tokens.size() == 2);
  CHECK(tokens.in_use().token_id == 5);
  CHECK(tokens.newest().token_id == 6);
}

TEST_CASE("token set: an older token ends on its own lifetime; the newest is kept for the channel to close",
          "[transport][tokens]") {
  TokenSet tokens(1);
  tokens.issue(1000, t0);           // expires at t0 + 1250 ms
  tokens.renew(1000, t0 + 1000ms);  // expires at t0 + 2250 ms
  tokens.expire(t0 + 1250ms);
  CHECK(tokens.size() == 2);
  tokens.expire(t0 + 1251ms);
  CHECK(tokens.size() == 1);
  CHECK(tokens.in_use().token_id == 2);  // the client never switched, but the old token is gone
  CHECK(tokens.find(1) == nullptr);
  tokens.expire(t0 + 10s);
  CHECK(tokens.size() == 1);  // the newest stays: its expiry ends the channel (SecureChannel::tick)
  CHECK(tokens.newest_expired(t0 + 10s));
}

TEST_CASE(
    "token set: a channel answers an unknown token id BadSecureChannelTokenUnknown, an unknown channel "
    "id BadSecureChannelIdInvalid",
    "[transport][tokens]") {
  SECTION("token") {
    Harness h;
    h.open();
    h.feed(symmetric_chunk("MSG", 'F', h.channel_id, h.token_id + 1, h.next_sequence, 2,
                           encode_request(read_request(1, 1))));
    auto m = h.messages();
    REQUIRE(m.size() == 1);
    CHECK(m[0].type == "ERR");
    CHECK(error_of(m[0]) == status::BadSecureChannelTokenUnknown);
  }
  SECTION("channel") {
    Harness h;
    h.open();
    h.feed(symmetric_chunk("MSG", 'F', h.channel_id + 1, h.token_id, h.next_sequence, 2,
                           encode_request(read_request(1, 1))));
    auto m = h.messages();
    REQUIRE(m.size() == 1);
    CHECK(error_of(m[0]) == status::BadSecureChannelIdInvalid);
  }
}
