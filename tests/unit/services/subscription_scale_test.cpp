// Work that must stay O(1) per operation however large a subscription grows (Part 4 §5.12.5
// SetTriggering, §5.12.6 DeleteMonitoredItems and SetMonitoringMode). Each test works at 100,000 items
// or links and does a million operations on them: with a scan per operation these tests do 5 * 10^10
// and more steps and would not finish within ctest's timeout; with constant-time operations they take
// a few seconds in a sanitizer build. Results are checked in full. (TransferSubscriptions' lookup is
// covered in transfer_test.cpp.)
#include <catch2/catch.hpp>

#include <set>

#include "services/subscription.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

constexpr uint32_t kItems = 100000;

// Hands a request of any size (up to one chunk) to the channel in receive_space() slices, as a socket
// would, and returns the answer.
template <class Resp, class Req>
Resp call_large(ServiceHarness& h, Req req) {
  req.request_header.authentication_token = h.token;
  req.request_header.request_handle = ++h.handle;
  const std::string bytes =
      symmetric_chunk("MSG", 'F', h.channel_id, h.token_id, h.sequence++, h.handle, encode_request(req));
  for (size_t at = 0; at < bytes.size();) {
    auto space = h.channel->receive_space();
    REQUIRE(!space.empty());
    const size_t n = std::min(space.size(), bytes.size() - at);
    std::memcpy(space.data(), bytes.data() + at, n);
    h.channel->on_received(n);
    at += n;
  }
  h.ctx.restart();
  h.ctx.poll();
  ServerMessage m;
  REQUIRE(h.take_response(h.handle, m));
  return decode_response<Resp>(m, nullptr, h.handle);
}

// Creates kItems items in `sub` (client handle = item number, 1-based), in requests of 1,000; returns
// their ids.
std::vector<uint32_t> create_items(ServiceHarness& h, uint32_t sub, ua::MonitoringMode mode) {
  std::vector<uint32_t> ids;
  ids.reserve(kItems);
  for (uint32_t first = 0; first < kItems; first += 1000) {
    ua::CreateMonitoredItemsRequest r;
    r.subscription_id = sub;
    r.timestamps_to_return = ua::TimestampsToReturn::Neither;
    for (uint32_t i = first; i < first + 1000; ++i) {
      r.items_to_create.push_back(
          item_request({plant(".Item" + std::to_string(i % 5 + 1)), i + 1, 1000, 1, true, {}, mode}));
    }
    auto resp = call_large<ua::CreateMonitoredItemsResponse>(h, std::move(r));
    REQUIRE(resp.results.size() == 1000);
    for (const auto& res : resp.results) {
      REQUIRE(res.status_code.is_good());
      ids.push_back(res.monitored_item_id);
    }
  }
  return ids;
}

void raise_limits(ServiceHarness& h) {
  auto& l = h.loaded.config.limits;
  l.max_monitored_items = 2 * kItems;
  l.operations.max_monitored_items_per_call = 10000;
}

}  // namespace

TEST_CASE("subscription scale: SetTriggering with 100,000 links, a million removals",
          "[services][subscription][scale]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  raise_limits(h);
  const uint32_t sub = subscribe(h, 1000, 10, 10000).subscription_id;
  const std::vector<uint32_t> ids = create_items(h, sub, ua::MonitoringMode::Sampling);
  const uint32_t trigger = ids[0];
  auto set_triggering = [&](std::vector<uint32_t> add, std::vector<uint32_t> remove) {
    ua::SetTriggeringRequest r;
    r.subscription_id = sub;
    r.triggering_item_id = trigger;
    r.links_to_add = std::move(add);
    r.links_to_remove = std::move(remove);
    return call_large<ua::SetTriggeringResponse>(h, std::move(r));
  };
  // Every item linked, each twice (a second add of a link is Good and changes nothing).
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t first = 0; first < kItems; first += 10000) {
      auto resp = set_triggering({ids.begin() + first, ids.begin() + first + 10000}, {});
      REQUIRE(resp.add_results.size() == 10000);
      for (auto s : resp.add_results) REQUIRE(s.is_good());
    }
  }
  // A million removals of links that do not exist, each against the 100,000 that do.
  const uint32_t absent = *std::max_element(ids.begin(), ids.end()) + 1;
  for (uint32_t round = 0; round < 100; ++round) {
    std::vector<uint32_t> remove(10000);
    for (uint32_t i = 0; i < 10000; ++i) remove[i] = absent + round * 10000 + i;
    auto resp = set_triggering({}, std::move(remove));
    REQUIRE(resp.remove_results.size() == 10000);
    for (auto s : resp.remove_results) REQUIRE(s == status::BadMonitoredItemIdInvalid);
  }
  // Then every real link, from the far end first; each exactly once.
  for (uint32_t first = kItems; first > 0; first -= 10000) {
    std::vector<uint32_t> remove(ids.begin() + (first - 10000), ids.begin() + first);
    std::reverse(remove.begin(), remove.end());
    auto resp = set_triggering({}, remove);
    for (auto s : resp.remove_results) REQUIRE(s.is_good());
    resp = set_triggering({}, {remove[0]});
    REQUIRE(resp.remove_results.at(0) == status::BadMonitoredItemIdInvalid);
  }
}

TEST_CASE("subscription scale: deleting 50,000 of 100,000 reportable items",
          "[services][subscription][scale]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  raise_limits(h);
  // Every item's initial value waits on the ready list (no Publish request yet). 3,000 notifications
  // per message (the client's maxNotificationsPerPublish) split the 50,000 over 17 messages.
  const uint32_t sub = subscribe(h, 50, 1000, 100000, 3000).subscription_id;
  const std::vector<uint32_t> ids = create_items(h, sub, ua::MonitoringMode::Reporting);
  // Delete every odd-numbered item, in requests of 10,000.
  std::vector<uint32_t> doomed;
  for (uint32_t i = 1; i < kItems; i += 2) doomed.push_back(ids[i]);
  for (size_t first = 0; first < doomed.size(); first += 10000) {
    ua::DeleteMonitoredItemsRequest r;
    r.subscription_id = sub;
    r.monitored_item_ids.assign(doomed.begin() + first,
                                doomed.begin() + std::min(first + 10000, doomed.size()));
    auto resp = call_large<ua::DeleteMonitoredItemsResponse>(h, std::move(r));
    for (auto s : resp.results) REQUIRE(s.is_good());
  }
  // Then 100 rounds of taking 10,000 survivors out of Reporting and back: a million departures from a
  // list of 50,000.
  ua::SetMonitoringModeRequest mode;
  mode.subscription_id = sub;
  for (uint32_t i = 0; i < 20000; i += 2) mode.monitored_item_ids.push_back(ids[i]);
  for (int round = 0; round < 100; ++round) {
    mode.monitoring_mode = ua::MonitoringMode::Sampling;
    for (auto s : call_large<ua::SetMonitoringModeResponse>(h, mode).results) REQUIRE(s.is_good());
    mode.monitoring_mode = ua::MonitoringMode::Reporting;
    for (auto s : call_large<ua::SetMonitoringModeResponse>(h, mode).results) REQUIRE(s.is_good());
  }
  // Exactly the 50,000 survivors are reported, each once (MoreNotifications between the messages).
  std::set<uint32_t> handles;
  size_t notifications = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (handles.size() < kItems / 2 && std::chrono::steady_clock::now() < deadline) {
    auto resp = publish(h);
    for (const auto& n : changes(resp)) {
      ++notifications;
      handles.insert(n.client_handle);
    }
  }
  CHECK(notifications == kItems / 2);
  REQUIRE(handles.size() == kItems / 2);
  for (uint32_t handle : handles) REQUIRE(handle % 2 == 1);  // item i (0-based) has handle i + 1
}
