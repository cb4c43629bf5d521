#pragma once
// Subscription helpers for the services tests (Part 4 §5.12-5.13): create a subscription and monitored
// items, publish on either side of a two-shard test (ServiceHarness or SecondShard) and take the data
// changes out of the answers. Every helper REQUIREs what it needs; the tests check the rest.

#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "tests/unit/services/service_harness.hpp"

namespace opcuad::services::test {

// CreateSubscription; the defaults are those most tests want (20 ms, keep-alive 100, lifetime 1000).
inline ua::CreateSubscriptionResponse subscribe(ServiceHarness& h, double interval = 20,
                                                uint32_t keep_alive = 100, uint32_t lifetime = 1000,
                                                uint32_t max_notifications = 0, bool enabled = true) {
  ua::CreateSubscriptionRequest r;
  r.requested_publishing_interval = interval;
  r.requested_max_keep_alive_count = keep_alive;
  r.requested_lifetime_count = lifetime;
  r.max_notifications_per_publish = max_notifications;
  r.publishing_enabled = enabled;
  auto resp = h.call<ua::CreateSubscriptionResponse>(r);
  REQUIRE(resp.response_header.service_result.is_good());
  return resp;
}

// One monitored item to create: the Value of `node`, Reporting, a 10 ms sampler and a queue of one
// unless said otherwise.
struct ItemSpec {
  ua::NodeId node;
  uint32_t handle = 1;
  double interval = 10;
  uint32_t queue = 1;
  bool discard_oldest = true;
  ua::ExtensionObject filter{};
  ua::MonitoringMode mode = ua::MonitoringMode::Reporting;
  uint32_t attribute = 13;
};

inline ua::MonitoredItemCreateRequest item_request(const ItemSpec& s) {
  ua::MonitoredItemCreateRequest r;
  r.item_to_monitor.node_id = s.node;
  r.item_to_monitor.attribute_id = s.attribute;
  r.monitoring_mode = s.mode;
  r.requested_parameters =
      ua::MonitoringParameters{s.handle, s.interval, s.filter, s.queue, s.discard_oldest};
  return r;
}

// CreateMonitoredItems with one item; returns its result, good or not.
inline ua::MonitoredItemCreateResult monitor(ServiceHarness& h, uint32_t sub, const ItemSpec& s) {
  ua::CreateMonitoredItemsRequest r;
  r.subscription_id = sub;
  r.timestamps_to_return = ua::TimestampsToReturn::Both;
  r.items_to_create.push_back(item_request(s));
  auto resp = h.call<ua::CreateMonitoredItemsResponse>(r);
  REQUIRE(resp.results.size() == 1);
  return resp.results[0];
}

// Publishes on `side` (a ServiceHarness or a SecondShard) and waits for the answer (at most 5 s); `fault`
// receives a ServiceFault's result (and must then be given) or the response's service result.
template <class Side>
ua::PublishResponse publish(Side& side, std::vector<ua::SubscriptionAcknowledgement> acks = {},
                            ua::StatusCode* fault = nullptr) {
  ua::PublishRequest r;
  r.subscription_acknowledgements = std::move(acks);
  ServerMessage m;
  const uint32_t id = side.send(std::move(r));  // outside REQUIRE, which names its expression twice
  REQUIRE(side.wait_response(id, m));
  return decode_response<ua::PublishResponse>(m, fault);
}

// The data changes of a Publish answer, in order, across its DataChangeNotifications.
inline std::vector<ua::MonitoredItemNotification> changes(const ua::PublishResponse& r) {
  std::vector<ua::MonitoredItemNotification> out;
  for (const auto& eo : r.notification_message.notification_data) {
    if (const auto* dc = eo.get<ua::DataChangeNotification>()) {
      out.insert(out.end(), dc->monitored_items.begin(), dc->monitored_items.end());
    }
  }
  return out;
}

// Publishes on `side` until a message with data arrives (keep-alives skipped), at most 5 s.
template <class Side>
std::vector<ua::MonitoredItemNotification> next_changes(Side& side) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    auto c = changes(publish(side));
    if (!c.empty()) return c;
  }
  FAIL("no data change within 5 s");
  return {};
}

// The events of a Publish answer, in order, across its EventNotificationLists.
inline std::vector<ua::EventFieldList> events_of(const ua::PublishResponse& r) {
  std::vector<ua::EventFieldList> out;
  for (const auto& eo : r.notification_message.notification_data) {
    if (const auto* en = eo.get<ua::EventNotificationList>()) {
      out.insert(out.end(), en->events.begin(), en->events.end());
    }
  }
  return out;
}

// Publishes on `side` until a message with events arrives, at most 5 s.
template <class Side>
std::vector<ua::EventFieldList> next_events(Side& side) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    auto e = events_of(publish(side));
    if (!e.empty()) return e;
  }
  FAIL("no event within 5 s");
  return {};
}

// Waits for the answer to `request_id` on the harness's channel while `run` drives the shards involved
// (another shard may have to act first); REQUIREs it before `deadline`.
template <class Run>
ServerMessage await_response(ServiceHarness& h, uint32_t request_id, Run run,
                             std::chrono::steady_clock::time_point deadline =
                                 std::chrono::steady_clock::now() + std::chrono::seconds(5)) {
  ServerMessage m;
  while (!h.take_response(request_id, m)) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    run();
  }
  return m;
}

}  // namespace opcuad::services::test
