// The per-session and per-subscription bounds of Part 4 §5.12-5.13 and how they are published (Part 5
// §6.3.2 ServerCapabilities): each limit is set low and a client asks for more. The server reads its
// configuration live, so each test lowers the limits of its harness after construction.
#include <catch2/catch.hpp>

#include <algorithm>

#include "services/subscription.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

ua::CreateMonitoredItemsRequest items_request(uint32_t sub, size_t n, uint32_t queue = 1) {
  ua::CreateMonitoredItemsRequest r;
  r.subscription_id = sub;
  r.timestamps_to_return = ua::TimestampsToReturn::Both;
  for (size_t i = 0; i < n; ++i) {
    r.items_to_create.push_back(item_request(
        {plant(".Item" + std::to_string(i % 5 + 1)), static_cast<uint32_t>(i + 1), 1000, queue}));
  }
  return r;
}

size_t count_status(const std::vector<ua::MonitoredItemCreateResult>& results, ua::StatusCode s) {
  size_t n = 0;
  for (const auto& r : results) n += r.status_code == s;
  return n;
}

}  // namespace

TEST_CASE("subscription limits: the per-session limits are published in ServerCapabilities",
          "[services][subscription][limits]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const auto& l = h.loaded.config.limits;
  CHECK(h.read(ua::NodeId(0, ua::id::Server_ServerCapabilities_MaxSubscriptionsPerSession)).value ==
        ua::Variant(l.max_subscriptions_per_session));
  CHECK(h.read(ua::NodeId(0, ua::id::Server_ServerCapabilities_MaxMonitoredItemsPerSubscription)).value ==
        ua::Variant(l.max_monitored_items_per_subscription));
  CHECK(h.read(ua::NodeId(0, ua::id::Server_ServerCapabilities_MaxMonitoredItemsQueueSize)).value ==
        ua::Variant(std::max(l.max_monitored_item_queue_size, l.max_event_queue_size)));
  // The larger of the data and the event items' bound.
  ServiceHarness e(R"("max_event_queue_size": 5000)");
  REQUIRE(e.login().is_good());
  CHECK(e.read(ua::NodeId(0, ua::id::Server_ServerCapabilities_MaxMonitoredItemsQueueSize)).value ==
        ua::Variant(uint32_t{5000}));
}

TEST_CASE("subscription limits: subscriptions per session", "[services][subscription][limits]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.loaded.config.limits.max_subscriptions_per_session = 2;
  subscribe(h);
  subscribe(h);
  ua::StatusCode s;
  h.call<ua::CreateSubscriptionResponse>(ua::CreateSubscriptionRequest{}, &s);
  CHECK(s == status::BadTooManySubscriptions);
  CHECK(h.server->subscription_count() == 2);  // the refused one reserved nothing
  // Another session has its own allowance.
  REQUIRE(h.login().is_good());
  subscribe(h);
  CHECK(h.server->subscription_count() == 3);
}

TEST_CASE("subscription limits: monitored items per subscription and per session",
          "[services][subscription][limits]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.loaded.config.limits.max_monitored_items_per_subscription = 3;
  h.loaded.config.limits.max_monitored_items_per_session = 5;
  const uint32_t a = subscribe(h, 1000).subscription_id;
  auto r = h.call<ua::CreateMonitoredItemsResponse>(items_request(a, 10));
  REQUIRE(r.results.size() == 10);
  CHECK(count_status(r.results, status::Good) == 3);
  CHECK(count_status(r.results, status::BadTooManyMonitoredItems) == 7);
  CHECK(h.server->monitored_item_count() == 3);
  // The session's limit counts the items of all its subscriptions.
  const uint32_t b = subscribe(h, 1000).subscription_id;
  r = h.call<ua::CreateMonitoredItemsResponse>(items_request(b, 3));
  CHECK(count_status(r.results, status::Good) == 2);
  CHECK(count_status(r.results, status::BadTooManyMonitoredItems) == 1);
  CHECK(h.server->monitored_item_count() == 5);
  // Deleting makes room again.
  ua::DeleteMonitoredItemsRequest del;
  del.subscription_id = a;
  del.monitored_item_ids = {1};
  REQUIRE(h.call<ua::DeleteMonitoredItemsResponse>(del).results.at(0).is_good());
  r = h.call<ua::CreateMonitoredItemsResponse>(items_request(b, 2));
  CHECK(count_status(r.results, status::Good) == 1);
}

TEST_CASE("subscription limits: queueSize is revised down to the configured maximum",
          "[services][subscription][limits]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.loaded.config.limits.max_monitored_item_queue_size = 5;
  const uint32_t sub = subscribe(h, 1000).subscription_id;
  CHECK(monitor(h, sub, {plant(".Speed"), 1, 10, UINT32_MAX}).revised_queue_size == 5);
  CHECK(monitor(h, sub, {plant(".Speed"), 2, 10, 0}).revised_queue_size == 1);
  CHECK(monitor(h, sub, {plant(".Speed"), 3, 10, 4}).revised_queue_size == 4);
  // Modify revises the same way.
  ua::ModifyMonitoredItemsRequest mod;
  mod.subscription_id = sub;
  mod.timestamps_to_return = ua::TimestampsToReturn::Both;
  mod.items_to_modify.push_back({3, ua::MonitoringParameters{3, 10, {}, 1u << 31, true}});
  CHECK(h.call<ua::ModifyMonitoredItemsResponse>(mod).results.at(0).revised_queue_size == 5);
}

TEST_CASE("subscription limits: outstanding Publish requests per session",
          "[services][subscription][limits]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.loaded.config.limits.max_publish_requests_per_session = 2;
  subscribe(h, 5000);  // nothing is published for 5 s: the requests stay queued
  const uint32_t first = h.send(ua::PublishRequest{});
  const uint32_t second = h.send(ua::PublishRequest{});
  ServerMessage m;
  CHECK(!h.take_response(first, m));
  const uint32_t third = h.send(ua::PublishRequest{});
  REQUIRE(h.take_response(first, m));
  CHECK(fault_of(m) == status::BadTooManyPublishRequests);
  const uint32_t fourth = h.send(ua::PublishRequest{});
  REQUIRE(h.take_response(second, m));
  CHECK(fault_of(m) == status::BadTooManyPublishRequests);
  CHECK(!h.take_response(third, m));
  CHECK(!h.take_response(fourth, m));
  h.run_for(std::chrono::milliseconds(20));  // the faults' writes complete
  CHECK(h.channel->owed_responses() == 2);
}

TEST_CASE("subscription limits: parked sessions are capped per shard and expire",
          "[services][subscription][limits]") {
  ServiceHarness h;
  h.loaded.config.limits.max_parked_sessions = 1;
  h.loaded.config.limits.parked_session_lifetime_ms = 300;
  ua::CloseSessionRequest keep;
  keep.delete_subscriptions = false;
  // The first closed session is parked: its subscription stays (lifetime 1000 x 1 s).
  REQUIRE(h.login().is_good());
  subscribe(h, 1000, 10, 1000);
  h.call<ua::CloseSessionResponse>(keep);
  CHECK(h.server->subscription_count() == 1);
  // The cap is reached: the second one's subscriptions are deleted as with deleteSubscriptions TRUE.
  REQUIRE(h.login().is_good());
  subscribe(h, 1000, 10, 1000);
  CHECK(h.server->subscription_count() == 2);
  h.call<ua::CloseSessionResponse>(keep);
  CHECK(h.server->subscription_count() == 1);
  // The parked one goes once its parked lifetime has passed (the sweep runs every 250 ms), long
  // before its own lifetime of 1000 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (h.server->subscription_count() != 0 && std::chrono::steady_clock::now() < deadline) {
    h.run_for(std::chrono::milliseconds(50));
  }
  CHECK(h.server->subscription_count() == 0);
}
