// The session's queue of Publish requests (Part 4 §5.13.5): every request is answered exactly once, so
// the channel's count of owed responses (its back-pressure) comes back down: when the session expires
// (BadSessionClosed), when the client cancels it (Part 4 §5.6.5), and when a message would exceed the
// client's limits (it is split with MoreNotifications instead).
#include <catch2/catch.hpp>

#include <map>

#include "services/subscription.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

// Lets the channel's writes complete: a response is counted as paid once its write finished.
void settle(ServiceHarness& h) {
  h.run_for(std::chrono::milliseconds(20));
}

}  // namespace

TEST_CASE("publish queue: 200 sessions expire with queued Publish requests, the channel still reads",
          "[services][subscription][publish]") {
  ServiceHarness h;
  h.loaded.config.limits.max_sessions = 1000;
  // Batches of 50 keep the owed count below max_owed_responses (100) while the requests wait.
  for (int batch = 0; batch < 4; ++batch) {
    std::vector<uint32_t> publishes;
    for (int i = 0; i < 50; ++i) {
      REQUIRE(h.login({}, 50).is_good());  // the shortest timeout the harness allows: 50 ms
      subscribe(h, 10000);                 // nothing is published for 10 s: the request stays queued
      publishes.push_back(h.send(ua::PublishRequest{}));
    }
    // The sweep expires the sessions; each queued request is answered BadSessionClosed.
    for (uint32_t id : publishes) {
      ServerMessage m;
      REQUIRE(h.wait_response(id, m, std::chrono::seconds(3)));
      CHECK(fault_of(m) == status::BadSessionClosed);
    }
  }
  settle(h);
  CHECK(h.channel->owed_responses() == 0);
  CHECK(h.channel->reading_allowed());
  CHECK(h.server->session_count() == 0);
  CHECK(h.server->subscription_count() == 0);
  REQUIRE(h.login().is_good());  // and the channel still serves requests
}

TEST_CASE("publish queue: Cancel answers the queued Publish requests with that handle",
          "[services][subscription][publish]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  subscribe(h, 10000);
  const uint32_t a = h.send(ua::PublishRequest{});  // the harness uses the request id as the handle
  const uint32_t b = h.send(ua::PublishRequest{});
  const uint32_t c = h.send(ua::PublishRequest{});
  settle(h);
  CHECK(h.channel->owed_responses() == 3);
  ua::CancelRequest cancel;
  cancel.request_handle = b;
  CHECK(h.call<ua::CancelResponse>(cancel).cancel_count == 1);
  ServerMessage m;
  REQUIRE(h.take_response(b, m));
  CHECK(fault_of(m) == status::BadRequestCancelledByClient);
  CHECK(!h.take_response(a, m));
  CHECK(!h.take_response(c, m));
  // A handle nothing has: nothing cancelled.
  cancel.request_handle = 4242;
  CHECK(h.call<ua::CancelResponse>(cancel).cancel_count == 0);
  settle(h);
  CHECK(h.channel->owed_responses() == 2);
  // The others still carry messages.
  cancel.request_handle = a;
  CHECK(h.call<ua::CancelResponse>(cancel).cancel_count == 1);
  cancel.request_handle = c;
  CHECK(h.call<ua::CancelResponse>(cancel).cancel_count == 1);
  settle(h);
  CHECK(h.channel->owed_responses() == 0);
}

TEST_CASE("publish queue: a message over maxResponseMessageSize is split with MoreNotifications",
          "[services][subscription][publish]") {
  ServiceHarness h;
  constexpr uint32_t kMaxResponse = 1500;
  ua::CreateSessionRequest create;
  create.session_name = ua::String("small");
  create.requested_session_timeout = 60000;
  create.max_response_message_size = kMaxResponse;
  auto created = h.call<ua::CreateSessionResponse>(create);
  h.token = created.authentication_token;
  REQUIRE(h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{})
              .response_header.service_result.is_good());

  const uint32_t sub = subscribe(h, 20).subscription_id;
  constexpr uint32_t kCount = 200;  // about 40 bytes each: 8,000 bytes of initial values
  // In requests of 40 items: the CreateMonitoredItems response (23 bytes per result) must fit the
  // session's maxResponseMessageSize too.
  for (uint32_t first = 1; first <= kCount; first += 40) {
    ua::CreateMonitoredItemsRequest r;
    r.subscription_id = sub;
    r.timestamps_to_return = ua::TimestampsToReturn::Both;
    for (uint32_t i = first; i < first + 40; ++i) {
      r.items_to_create.push_back(item_request({plant(".Item" + std::to_string(i % 5 + 1)), i, 1000}));
    }
    for (const auto& res : h.call<ua::CreateMonitoredItemsResponse>(r).results)
      REQUIRE(res.status_code.is_good());
  }

  std::map<uint32_t, int> seen;
  int messages = 0;
  bool more = true;
  while (more) {
    ServerMessage m;
    REQUIRE(h.wait_response(h.send(ua::PublishRequest{}), m));
    CHECK(m.body.size() <= kMaxResponse);
    ua::PublishResponse resp;
    REQUIRE(decode_body(m, resp));
    const auto c = changes(resp);
    if (c.empty()) continue;  // a keep-alive
    ++messages;
    for (const auto& n : c) {
      ++seen[n.client_handle];
      CHECK(n.value.status.is_good());
    }
    more = resp.more_notifications;
    REQUIRE(messages < 100);
  }
  CHECK(messages >= 5);
  REQUIRE(seen.size() == kCount);
  for (const auto& [handle, times] : seen) CHECK(times == 1);

  // A value that fits no message at all is replaced by a notification that says so, and the queue
  // moves on.
  REQUIRE(monitor(h, sub, {plant(".Name"), 999, 10}).status_code.is_good());
  auto first = next_changes(h);
  REQUIRE(first.size() == 1);
  CHECK(first[0].value.value == ua::Variant(ua::String("pump")));
  REQUIRE(h.write(plant(".Name"), ua::Variant(ua::String(std::string(4000, 'x')))).is_good());
  auto big = next_changes(h);
  REQUIRE(big.size() == 1);
  CHECK(big[0].client_handle == 999);
  CHECK(big[0].value.status == status::BadResponseTooLarge);
  settle(h);
  CHECK(h.channel->owed_responses() == 0);
}

TEST_CASE("publish queue: a message over the channel's MaxMessageSize is split with MoreNotifications",
          "[services][subscription][publish]") {
  ServiceHarness h;
  // A client whose HEL says it takes messages of at most 4,096 bytes (Part 6 §7.1.2.3).
  constexpr uint32_t kMaxMessage = 4096;
  h.channel->detach();
  h.channel =
      std::make_shared<SecureChannel>(h.ctx, h.sink, h.events, h.pool, h.stats, h.tconfig, *h.server, h.ids);
  h.channel->start();
  h.sink.out.clear();
  h.feed(hello(65535, 65535, kMaxMessage, 0));
  h.feed(open_request(1, 1));
  std::vector<ServerMessage> opened;
  REQUIRE(parse_output(h.sink.out, opened));
  ua::OpenSecureChannelResponse o;
  REQUIRE(decode_body(opened.back(), o));
  h.channel_id = o.security_token.channel_id;
  h.token_id = o.security_token.token_id;
  h.sequence = 2;
  h.sink.out.clear();
  REQUIRE(h.login().is_good());

  const uint32_t sub = subscribe(h, 20).subscription_id;
  ua::CreateMonitoredItemsRequest r;
  r.subscription_id = sub;
  r.timestamps_to_return = ua::TimestampsToReturn::Both;
  constexpr uint32_t kCount = 400;  // about 40 bytes each: 16,000 bytes of initial values
  // In requests of 100 items, whose CreateMonitoredItems responses fit the client's MaxMessageSize.
  for (uint32_t first = 1; first <= kCount; first += 100) {
    ua::CreateMonitoredItemsRequest r;
    r.subscription_id = sub;
    r.timestamps_to_return = ua::TimestampsToReturn::Both;
    for (uint32_t i = first; i < first + 100; ++i) {
      r.items_to_create.push_back(item_request({plant(".Item" + std::to_string(i % 5 + 1)), i, 1000}));
    }
    for (const auto& res : h.call<ua::CreateMonitoredItemsResponse>(r).results) {
      REQUIRE(res.status_code.is_good());
    }
  }
  std::map<uint32_t, int> seen;
  int messages = 0;
  for (bool more = true; more;) {
    ServerMessage m;
    REQUIRE(h.wait_response(h.send(ua::PublishRequest{}), m));
    CHECK(m.body.size() <= kMaxMessage);
    ua::PublishResponse resp;
    REQUIRE(decode_body(m, resp));  // never a ServiceFault BadResponseTooLarge
    const auto c = changes(resp);
    if (c.empty()) continue;
    ++messages;
    for (const auto& n : c) ++seen[n.client_handle];
    more = resp.more_notifications;
    REQUIRE(messages < 100);
  }
  CHECK(messages >= 4);
  REQUIRE(seen.size() == kCount);
  for (const auto& [handle, times] : seen) CHECK(times == 1);
}
