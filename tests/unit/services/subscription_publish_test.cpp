// How much one NotificationMessage carries (Part 4 §5.13.2.2 maxNotificationsPerPublish, §5.13.5.2
// MoreNotifications): a client's count is honoured as given and 0 means no count limit, so what bounds a
// message is its size: the client's maxResponseMessageSize (Part 4 §5.6.2), the channel's MaxMessageSize
// and MaxChunkCount (Part 6 §7.1.2.3), and the server's own limits.max_publish_response_size. What does
// not fit waits for the next message, each value reported once.
#include <catch2/catch.hpp>

#include <map>

#include "services/subscription.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {

// Creates `count` Reporting items (client handles 1..count) on the harness's five Item variables, in
// requests of 1,000 (each request and its response one chunk); each queues its initial value.
void create_items(ServiceHarness& h, uint32_t sub, uint32_t count) {
  for (uint32_t first = 1; first <= count; first += 1000) {
    ua::CreateMonitoredItemsRequest r;
    r.subscription_id = sub;
    r.timestamps_to_return = ua::TimestampsToReturn::Both;
    for (uint32_t i = first; i < first + 1000 && i <= count; ++i)
      r.items_to_create.push_back(item_request({plant(".Item" + std::to_string(i % 5 + 1)), i, 1000}));
    const auto resp = h.call<ua::CreateMonitoredItemsResponse>(r);
    REQUIRE(resp.results.size() == r.items_to_create.size());
    for (const auto& res : resp.results) REQUIRE(res.status_code.is_good());
  }
}

struct Drained {
  std::map<uint32_t, int> seen;  // client handle -> notifications
  std::vector<size_t> per_message;
  size_t largest_body = 0;
  uint32_t most_chunks = 0;
};

// Publishes (acknowledging each message) until a data message says MoreNotifications FALSE.
Drained drain(ServiceHarness& h, uint32_t sub) {
  Drained d;
  uint32_t ack = 0;
  for (bool more = true; more;) {
    ua::PublishRequest r;
    if (ack) r.subscription_acknowledgements.push_back({sub, ack});
    ServerMessage m;
    const uint32_t id = h.send(std::move(r));
    REQUIRE(h.wait_response(id, m));
    ua::PublishResponse resp;
    REQUIRE(decode_body(m, resp));  // never a ServiceFault BadResponseTooLarge
    for (auto s : resp.results) CHECK(s.is_good());
    const auto c = changes(resp);
    if (c.empty()) continue;  // a keep-alive
    ack = resp.notification_message.sequence_number;
    d.per_message.push_back(c.size());
    d.largest_body = std::max(d.largest_body, m.body.size());
    d.most_chunks = std::max(d.most_chunks, m.chunks);
    for (const auto& n : c) {
      ++d.seen[n.client_handle];
      CHECK(n.value.status.is_good());
    }
    more = resp.more_notifications;
    REQUIRE(d.per_message.size() < 1000);
  }
  return d;
}

void check_each_once(const Drained& d, uint32_t count) {
  REQUIRE(d.seen.size() == count);
  CHECK(d.seen.begin()->first == 1);
  CHECK(d.seen.rbegin()->first == count);
  for (const auto& [handle, times] : d.seen) REQUIRE(times == 1);
}

constexpr uint32_t kBacklog = 25000;  // 30 bytes each (handle, Double, two timestamps): 750,000 bytes

}  // namespace

TEST_CASE("subscription publish: maxNotificationsPerPublish is kept as the client gave it, 0 is no limit",
          "[services][subscription][publish]") {
  using services::Subscription;
  CHECK(Subscription::revise(100, 30, 10, 0, 0).max_notifications_per_publish == 0);
  CHECK(Subscription::revise(100, 30, 10, 100, 0).max_notifications_per_publish == 100);
  CHECK(Subscription::revise(100, 30, 10, 25000, 0).max_notifications_per_publish == 25000);
  CHECK(Subscription::revise(100, 30, 10, UINT32_MAX, 0).max_notifications_per_publish == UINT32_MAX);
}

TEST_CASE("subscription publish: with no count limit, 25,000 queued notifications go in one response",
          "[services][subscription][publish]") {
  ServiceHarness h;
  h.loaded.config.limits.max_monitored_items = 2 * kBacklog;
  REQUIRE(h.login().is_good());  // maxResponseMessageSize 0, and the HEL set no MaxMessageSize
  const uint32_t sub = subscribe(h, 20, 100, 1000, 0).subscription_id;
  create_items(h, sub, kBacklog);
  const Drained d = drain(h, sub);
  REQUIRE(d.per_message.size() == 1);
  CHECK(d.per_message[0] == kBacklog);
  CHECK(d.most_chunks > 10);  // one message in 64 KiB chunks
  CHECK(d.largest_body <= h.loaded.config.limits.max_publish_response_size);
  check_each_once(d, kBacklog);
}

TEST_CASE("subscription publish: a small maxResponseMessageSize splits the backlog with MoreNotifications",
          "[services][subscription][publish]") {
  ServiceHarness h;
  h.loaded.config.limits.max_monitored_items = 2 * kBacklog;
  constexpr uint32_t kMaxResponse = 100000;
  REQUIRE(h.login({}, 60000, kMaxResponse).is_good());
  const uint32_t sub = subscribe(h, 20, 100, 1000, 0).subscription_id;
  create_items(h, sub, kBacklog);
  const Drained d = drain(h, sub);
  CHECK(d.per_message.size() >= 8);  // 30 bytes per notification: 750,000 bytes
  CHECK(d.largest_body <= kMaxResponse);
  // Filled up to the size: every message but the last holds about as many as fit.
  for (size_t i = 0; i + 1 < d.per_message.size(); ++i) CHECK(d.per_message[i] >= d.per_message[0] - 1);
  check_each_once(d, kBacklog);
}

TEST_CASE("subscription publish: a client's maxNotificationsPerPublish of 100 is honoured",
          "[services][subscription][publish]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h, 20, 100, 1000, 100).subscription_id;
  create_items(h, sub, 250);
  const Drained d = drain(h, sub);
  CHECK(d.per_message == std::vector<size_t>{100, 100, 50});
  check_each_once(d, 250);
}

TEST_CASE("subscription publish: a client that accepts any size gets at most max_publish_response_size",
          "[services][subscription][publish]") {
  ServiceHarness h;
  h.loaded.config.limits.max_monitored_items = 2 * kBacklog;
  h.loaded.config.limits.max_publish_response_size = 65536;  // the smallest the configuration allows
  // Hostile: no limit from the client at all (maxResponseMessageSize 0, HEL MaxMessageSize and
  // MaxChunkCount 0) and no count limit.
  REQUIRE(h.login({}, 60000, 0).is_good());
  const uint32_t sub = subscribe(h, 20, 100, 1000, 0).subscription_id;
  create_items(h, sub, kBacklog);
  const Drained d = drain(h, sub);
  CHECK(d.per_message.size() >= 12);
  CHECK(d.largest_body <= 65536);
  check_each_once(d, kBacklog);
}

TEST_CASE("subscription publish: items removed or disabled while a backlog is split are skipped",
          "[services][subscription][publish]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h, 20, 100, 1000, 100).subscription_id;
  create_items(h, sub, 300);  // item ids 1..300, client handles the same
  auto first = publish(h);
  const auto c = changes(first);
  REQUIRE(c.size() == 100);
  CHECK(first.more_notifications);
  CHECK(c.front().client_handle == 1);
  CHECK(c.back().client_handle == 100);
  // Of the 200 still waiting: 50 removed (150..199), 51 disabled (250..300; Part 4 §5.12.4 empties their
  // queues). 49 + 50 are left.
  ua::DeleteMonitoredItemsRequest del;
  del.subscription_id = sub;
  for (uint32_t id = 150; id < 200; ++id) del.monitored_item_ids.push_back(id);
  for (auto s : h.call<ua::DeleteMonitoredItemsResponse>(del).results) REQUIRE(s.is_good());
  ua::SetMonitoringModeRequest mode;
  mode.subscription_id = sub;
  mode.monitoring_mode = ua::MonitoringMode::Disabled;
  for (uint32_t id = 250; id <= 300; ++id) mode.monitored_item_ids.push_back(id);
  for (auto s : h.call<ua::SetMonitoringModeResponse>(mode).results) REQUIRE(s.is_good());
  const Drained d = drain(h, sub);
  CHECK(d.per_message == std::vector<size_t>{99});
  REQUIRE(d.seen.size() == 99);
  for (const auto& [handle, times] : d.seen) {
    CHECK(times == 1);
    CHECK(((handle > 100 && handle < 150) || (handle >= 200 && handle < 250)));
  }
}
