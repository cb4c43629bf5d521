// TransferSubscriptions (Part 4 §5.13.7) and subscriptions that move between shards: on one shard,
// across shards (the asking session on another shard than the subscription), and with a session
// re-activated on another shard. Two io_contexts are driven from this one thread, as in services_test.cpp.
#include <catch2/catch.hpp>

#include <set>

#include "services/subscription.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

// The item every test here watches: the Value of `node` with client handle 7, a 10 ms sampler and a
// queue of 10.
ItemSpec watched(const ua::NodeId& node) {
  return {node, 7, 10, 10};
}

ua::TransferSubscriptionsRequest transfer_request(std::vector<uint32_t> ids, bool initial) {
  ua::TransferSubscriptionsRequest r;
  r.subscription_ids = std::move(ids);
  r.send_initial_values = initial;
  return r;
}

ua::StatusCode status_change(const ua::PublishResponse& r) {
  for (const auto& eo : r.notification_message.notification_data) {
    if (const auto* sc = eo.get<ua::StatusChangeNotification>()) return sc->status;
  }
  return status::BadUnexpectedError;
}

}  // namespace

TEST_CASE("transfer: to another session of the same user on one shard",
          "[services][subscription][transfer]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const ua::NodeId old_token = h.token;
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, watched(plant(".Speed"))).status_code.is_good());
  auto first = next_changes(h);  // sequence number 1, not acknowledged
  REQUIRE(first.size() == 1);

  REQUIRE(h.login().is_good());  // a second anonymous session on the same channel
  auto resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({sub, 424242}, true));
  REQUIRE(resp.results.size() == 2);
  CHECK(resp.results[0].status_code.is_good());
  CHECK(resp.results[0].available_sequence_numbers == std::vector<uint32_t>{1});
  CHECK(resp.results[1].status_code == status::BadSubscriptionIdInvalid);

  // sendInitialValues: the new session's first data is the current value.
  auto c = next_changes(h);
  REQUIRE(c.size() == 1);
  CHECK(c[0].client_handle == 7);
  CHECK(c[0].value.value == ua::Variant(10.0));
  // Republish still finds the message the old session was sent.
  ua::RepublishRequest rp;
  rp.subscription_id = sub;
  rp.retransmit_sequence_number = 1;
  CHECK(h.call<ua::RepublishResponse>(rp).notification_message.sequence_number == 1);
  // Later changes reach the new session.
  REQUIRE(h.write(plant(".Speed"), 33.0).is_good());
  c = next_changes(h);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(33.0));

  // The old session hears GoodSubscriptionTransferred, then has nothing left.
  const ua::NodeId new_token = h.token;
  h.token = old_token;
  auto notice = publish(h);
  CHECK(notice.subscription_id == sub);
  CHECK(status_change(notice) == status::GoodSubscriptionTransferred);
  ua::StatusCode s;
  publish(h, {}, &s);
  CHECK(s == status::BadNoSubscription);
  ua::DeleteSubscriptionsRequest del;
  del.subscription_ids = {sub};
  CHECK(h.call<ua::DeleteSubscriptionsResponse>(del).results[0] == status::BadSubscriptionIdInvalid);
  h.token = new_token;
  CHECK(h.call<ua::DeleteSubscriptionsResponse>(del).results[0].is_good());
}

TEST_CASE("transfer: another user is refused, the own session's subscription is kept",
          "[services][subscription][transfer]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const ua::NodeId anonymous = h.token;
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, watched(plant(".Count"))).status_code.is_good());
  next_changes(h);

  REQUIRE(h.login(user("alice", "secret")).is_good());
  auto refused = h.call<ua::TransferSubscriptionsResponse>(transfer_request({sub}, false));
  REQUIRE(refused.results.size() == 1);
  // Another user's subscription looks like one that does not exist (no existence oracle).
  CHECK(refused.results[0].status_code == status::BadSubscriptionIdInvalid);
  auto absent = h.call<ua::TransferSubscriptionsResponse>(transfer_request({sub ^ 0x5a5a5a5a}, false));
  REQUIRE(absent.results.size() == 1);
  CHECK(absent.results[0].status_code == status::BadSubscriptionIdInvalid);

  // Transferring a subscription to the session that has it changes nothing but sends initial values.
  h.token = anonymous;
  auto kept = h.call<ua::TransferSubscriptionsResponse>(transfer_request({sub}, true));
  REQUIRE(kept.results.size() == 1);
  CHECK(kept.results[0].status_code.is_good());
  auto c = next_changes(h);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(int32_t{1}));

  ua::StatusCode s;
  h.call<ua::TransferSubscriptionsResponse>(ua::TransferSubscriptionsRequest{}, &s);
  CHECK(s == status::BadNothingToDo);
}

TEST_CASE("transfer: a subscription moves to a session on another shard",
          "[services][subscription][transfer]") {
  asio::io_context ctx2;  // outlives the server, which keeps timers on it
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, watched(plant(".Speed"))).status_code.is_good());
  REQUIRE(next_changes(h).size() == 1);

  SecondShard s2(h, ctx2);
  s2.login();
  auto resp = s2.call<ua::TransferSubscriptionsResponse>(transfer_request({sub, 424242}, true));
  REQUIRE(resp.results.size() == 2);
  CHECK(resp.results[0].status_code.is_good());
  CHECK(resp.results[0].available_sequence_numbers == std::vector<uint32_t>{1});
  CHECK(resp.results[1].status_code == status::BadSubscriptionIdInvalid);

  // Sampled and published on the second shard now: the initial value, then a change written there.
  auto c = next_changes(s2);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(10.0));
  REQUIRE(s2.call<ua::WriteResponse>(write_request(plant(".Speed"), 55.0)).results.at(0).is_good());
  c = next_changes(s2);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(55.0));

  // The old session, on the first shard, hears GoodSubscriptionTransferred.
  auto notice = publish(h);
  CHECK(notice.subscription_id == sub);
  CHECK(status_change(notice) == status::GoodSubscriptionTransferred);

  // And back again, asked on the first shard: the job visits the second shard and returns.
  const uint32_t request = h.send(transfer_request({sub}, false));
  const ServerMessage m = await_response(h, request, [&] { s2.run_for(std::chrono::milliseconds(2)); });
  ua::TransferSubscriptionsResponse back;
  REQUIRE(decode_body(m, back));
  REQUIRE(back.results.size() == 1);
  CHECK(back.results[0].status_code.is_good());
  CHECK(status_change(publish(s2)) == status::GoodSubscriptionTransferred);
  REQUIRE(h.write(plant(".Speed"), 66.0).is_good());
  c = next_changes(h);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(66.0));
}

TEST_CASE("transfer: subscriptions move with a session re-activated on another shard",
          "[services][subscription][transfer]") {
  asio::io_context ctx2;
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, watched(plant(".Count"))).status_code.is_good());
  REQUIRE(next_changes(h).size() == 1);
  // A Publish request left queued on the old channel when the session moves (nothing changes, and the
  // keep-alive is 100 intervals away, so it stays queued).
  const uint32_t left_behind = h.send(ua::PublishRequest{});

  SecondShard s2(h, ctx2);
  s2.token = h.token;
  auto activated = s2.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{});
  REQUIRE(activated.response_header.service_result.is_good());
  // Part 4 §5.6.3: the old channel's requests are rejected from now on, the queued one included, and the
  // old channel (still open) gets that answer rather than silence.
  ServerMessage m;
  bool answered = h.take_response(left_behind, m);
  for (int i = 0; i < 100 && !answered; ++i) {
    s2.run_for(std::chrono::milliseconds(5));
    answered = h.take_response(left_behind, m);
  }
  REQUIRE(answered);
  ua::ServiceFault fault;
  REQUIRE(decode_body(m, fault));
  CHECK(fault.response_header.service_result == status::BadSecureChannelIdInvalid);
  REQUIRE(s2.call<ua::WriteResponse>(write_request(plant(".Count"), int32_t{5})).results.at(0).is_good());
  // The subscription came along, with its sampling and publishing now on the second shard.
  auto c = next_changes(s2);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(int32_t{5}));
  REQUIRE(s2.call<ua::WriteResponse>(write_request(plant(".Count"), int32_t{6})).results.at(0).is_good());
  c = next_changes(s2);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(int32_t{6}));
  ua::DeleteSubscriptionsRequest del;
  del.subscription_ids = {sub};
  CHECK(s2.call<ua::DeleteSubscriptionsResponse>(del).results.at(0).is_good());
  CHECK(h.server->subscription_count() == 0);
}

TEST_CASE("transfer: a session closed without deleting its subscriptions leaves them for the next one",
          "[services][subscription][transfer]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t kept = subscribe(h).subscription_id;
  REQUIRE(monitor(h, kept, watched(plant(".Speed"))).status_code.is_good());
  REQUIRE(next_changes(h).size() == 1);
  ua::CloseSessionRequest close;
  close.delete_subscriptions = false;  // Part 4 §5.6.4: kept until their lifetime ends
  h.call<ua::CloseSessionResponse>(close);
  CHECK(h.server->subscription_count() == 1);
  CHECK(h.server->session_count() == 0);

  // The client comes back with a new session and takes the subscription over.
  REQUIRE(h.login().is_good());
  auto resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({kept}, true));
  REQUIRE(resp.results.size() == 1);
  CHECK(resp.results[0].status_code.is_good());
  auto c = next_changes(h);  // sendInitialValues
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(10.0));
  REQUIRE(h.write(plant(".Speed"), 44.0).is_good());
  c = next_changes(h);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(44.0));

  // Closing with deleteSubscriptions TRUE leaves nothing to take over.
  close.delete_subscriptions = true;
  h.call<ua::CloseSessionResponse>(close);
  CHECK(h.server->subscription_count() == 0);
  REQUIRE(h.login().is_good());
  resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({kept}, true));
  REQUIRE(resp.results.size() == 1);
  CHECK(resp.results[0].status_code == status::BadSubscriptionIdInvalid);
}

TEST_CASE("transfer: a kept subscription nobody takes over ends with its lifetime",
          "[services][subscription][transfer]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  // A lifetime of 3 (revised to at least 3 x keep-alive): ~30 ms without a Publish.
  const uint32_t kept = subscribe(h, 10, 1, 3).subscription_id;
  ua::CloseSessionRequest close;
  close.delete_subscriptions = false;
  h.call<ua::CloseSessionResponse>(close);
  CHECK(h.server->subscription_count() == 1);
  for (int i = 0; i < 100 && h.server->subscription_count() != 0; ++i)
    h.run_for(std::chrono::milliseconds(10));
  CHECK(h.server->subscription_count() == 0);
  REQUIRE(h.login().is_good());
  auto resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({kept}, false));
  REQUIRE(resp.results.size() == 1);
  CHECK(resp.results[0].status_code == status::BadSubscriptionIdInvalid);
}

namespace {

// CreateSession (claiming `application_uri` for the client) + anonymous ActivateSession on the harness.
void login_as(ServiceHarness& h, const char* application_uri) {
  ua::CreateSessionRequest create;
  create.session_name = ua::String("app");
  create.requested_session_timeout = 60000;
  create.client_description.application_uri = ua::String(application_uri);
  h.token = h.call<ua::CreateSessionResponse>(create).authentication_token;
  REQUIRE(h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{})
              .response_header.service_result.is_good());
}

}  // namespace

TEST_CASE("transfer: anonymous sessions of other client applications are other users",
          "[services][subscription][transfer]") {
  ServiceHarness h;
  h.loaded.config.limits.max_sessions = 10;
  login_as(h, "urn:client:a");
  const uint32_t sub = subscribe(h).subscription_id;
  login_as(h, "urn:client:b");  // anonymous too, but another application
  auto resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({sub}, false));
  REQUIRE(resp.results.size() == 1);
  CHECK(resp.results[0].status_code == status::BadSubscriptionIdInvalid);
  // A named user never takes an anonymous session's subscription either.
  REQUIRE(h.login(user("alice", "secret")).is_good());
  resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({sub}, false));
  CHECK(resp.results.at(0).status_code == status::BadSubscriptionIdInvalid);
  // The same application (from the same address) may.
  login_as(h, "urn:client:a");
  resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({sub}, false));
  CHECK(resp.results.at(0).status_code.is_good());
}

TEST_CASE("transfer: subscription ids are not sequential", "[services][subscription][transfer]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  std::vector<uint32_t> ids;
  for (int i = 0; i < 40; ++i) ids.push_back(subscribe(h, 1000).subscription_id);
  std::set<uint32_t> unique(ids.begin(), ids.end());
  CHECK(unique.size() == ids.size());
  CHECK(!unique.count(0));
  // Knowing one's own id tells nothing about the next one: no two consecutive ids are neighbours
  // (each pair is by chance with probability 2^-31).
  int neighbours = 0;
  for (size_t i = 1; i < ids.size(); ++i) neighbours += ids[i] - ids[i - 1] == 1 || ids[i - 1] - ids[i] == 1;
  CHECK(neighbours == 0);
}

TEST_CASE("transfer: subscription ids per request are bounded", "[services][subscription][transfer]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.loaded.config.limits.max_subscriptions_per_call = 2;
  const uint32_t a = subscribe(h).subscription_id, b = subscribe(h).subscription_id;
  ua::StatusCode s;
  h.call<ua::TransferSubscriptionsResponse>(transfer_request({a, b, 7}, false), &s);
  CHECK(s == status::BadTooManyOperations);
  ua::SetPublishingModeRequest mode;
  mode.subscription_ids = {a, b, 7};
  h.call<ua::SetPublishingModeResponse>(mode, &s);
  CHECK(s == status::BadTooManyOperations);
  ua::DeleteSubscriptionsRequest del;
  del.subscription_ids = {a, b, 7};
  h.call<ua::DeleteSubscriptionsResponse>(del, &s);
  CHECK(s == status::BadTooManyOperations);
  CHECK(h.server->subscription_count() == 2);  // nothing was touched
  auto ok = h.call<ua::TransferSubscriptionsResponse>(transfer_request({a, b}, false), &s);
  CHECK(s.is_good());
  CHECK(ok.results.size() == 2);
}

TEST_CASE("transfer: the receiving session's subscription limit holds",
          "[services][subscription][transfer]") {
  ServiceHarness h;
  h.loaded.config.limits.max_subscriptions_per_session = 1;
  REQUIRE(h.login().is_good());
  const ua::NodeId first = h.token;
  const uint32_t a = subscribe(h).subscription_id;
  REQUIRE(h.login().is_good());
  const uint32_t b = subscribe(h).subscription_id;
  auto resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request({a, b}, false));
  REQUIRE(resp.results.size() == 2);
  CHECK(resp.results[0].status_code == status::BadTooManySubscriptions);  // no room: `a` stays where it is
  CHECK(resp.results[1].status_code.is_good());                           // its own: takes no room
  h.token = first;
  ua::SetPublishingModeRequest mode;
  mode.subscription_ids = {a};
  CHECK(h.call<ua::SetPublishingModeResponse>(mode).results.at(0).is_good());
}

TEST_CASE("transfer: subscriptions of 300 sessions taken over in one request",
          "[services][subscription][transfer]") {
  ServiceHarness h;
  h.loaded.config.limits.max_sessions = 400;
  h.loaded.config.limits.max_subscriptions_per_call = 1000;
  h.loaded.config.limits.max_subscriptions_per_session = 1000;
  std::vector<uint32_t> ids;
  for (int i = 0; i < 300; ++i) {
    REQUIRE(h.login().is_good());
    ids.push_back(subscribe(h, 1000).subscription_id);
  }
  REQUIRE(h.login().is_good());
  auto resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request(ids, false));
  REQUIRE(resp.results.size() == ids.size());
  for (const auto& r : resp.results) CHECK(r.status_code.is_good());
  // They are all this session's now, and nobody else's.
  resp = h.call<ua::TransferSubscriptionsResponse>(transfer_request(ids, false));
  for (const auto& r : resp.results) CHECK(r.status_code.is_good());
  ua::DeleteSubscriptionsRequest del;
  del.subscription_ids = ids;
  for (auto s : h.call<ua::DeleteSubscriptionsResponse>(del).results) CHECK(s.is_good());
  CHECK(h.server->subscription_count() == 0);
}
