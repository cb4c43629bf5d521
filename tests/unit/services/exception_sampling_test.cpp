// Exception-based monitored items (sampling interval 0, Part 4 §5.12.1.2): a write wakes the item at
// once, on its own shard or through a post from the writer's shard, so every written value is queued
// even when writes come faster than any sampling tick. A 10 ms sampler would see only the last of a
// burst of writes handled in one loop turn; these tests ask for every one. (Across shards a wake-up
// carries the cell, not the value: writes faster than the watching shard's loop coalesce, as samples do.)
#include <catch2/catch.hpp>

#include "services/monitored_item.hpp"
#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

uint32_t subscribe(ServiceHarness& h) {
  ua::CreateSubscriptionRequest r;
  r.requested_publishing_interval = 20;
  r.requested_max_keep_alive_count = 100;
  r.requested_lifetime_count = 1000;
  r.publishing_enabled = true;
  auto resp = h.call<ua::CreateSubscriptionResponse>(r);
  REQUIRE(resp.response_header.service_result.is_good());
  return resp.subscription_id;
}

// A Reporting item on Speed's Value at interval 0 with a queue of 10; returns its id.
uint32_t monitor_on_write(ServiceHarness& h, uint32_t sub) {
  ua::CreateMonitoredItemsRequest r;
  r.subscription_id = sub;
  r.timestamps_to_return = ua::TimestampsToReturn::Both;
  ua::MonitoredItemCreateRequest item;
  item.item_to_monitor.node_id = plant(".Speed");
  item.item_to_monitor.attribute_id = 13;
  item.monitoring_mode = ua::MonitoringMode::Reporting;
  item.requested_parameters = ua::MonitoringParameters{5, 0, {}, 10, true};
  r.items_to_create.push_back(item);
  auto resp = h.call<ua::CreateMonitoredItemsResponse>(r);
  REQUIRE(resp.results.size() == 1);
  REQUIRE(resp.results[0].status_code.is_good());
  CHECK(resp.results[0].revised_sampling_interval == 0);
  return resp.results[0].monitored_item_id;
}

ua::WriteRequest write_request(double v) {
  ua::WriteRequest w;
  ua::DataValue dv;
  dv.value = v;
  w.nodes_to_write.push_back(ua::WriteValue{plant(".Speed"), 13, {}, dv});
  return w;
}

// Publishes on the harness's session until `count` values have arrived (at most 5 s); `run` drives
// whatever other shard is involved between attempts.
template <class Run>
std::vector<double> collect(ServiceHarness& h, size_t count, Run run) {
  std::vector<double> out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
    const uint32_t id = h.send(ua::PublishRequest{});
    ServerMessage m;
    while (!h.take_response(id, m)) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      run();
    }
    ua::PublishResponse resp;
    REQUIRE(decode_body(m, resp));
    for (const auto& eo : resp.notification_message.notification_data) {
      if (const auto* dc = eo.get<ua::DataChangeNotification>()) {
        for (const auto& n : dc->monitored_items) out.push_back(*n.value.value.get_if<double>());
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("exception sampling: a burst of writes on the item's shard queues every value",
          "[services][subscription][exception]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h);
  monitor_on_write(h, sub);
  auto run = [&] { h.run_for(std::chrono::milliseconds(2)); };
  REQUIRE(collect(h, 1, run) == std::vector<double>{10.0});  // the initial value
  CHECK(h.server->sampler(0).group_count() == 0);            // no timer: woken by writes
  CHECK(h.server->sampler(0).watched_cells() == 1);

  // Five writes handled back to back, without a sampling tick in between.
  for (double v : {1.0, 2.0, 3.0, 4.0, 5.0}) REQUIRE(h.write(plant(".Speed"), v).is_good());
  CHECK(collect(h, 5, run) == std::vector<double>{1, 2, 3, 4, 5});

  // A write of another node wakes nothing; deleting the item stops the wake-ups.
  REQUIRE(h.write(plant(".Count"), ua::Variant(int32_t{9})).is_good());
  ua::DeleteMonitoredItemsRequest del;
  del.subscription_id = sub;
  del.monitored_item_ids = {1};
  CHECK(h.call<ua::DeleteMonitoredItemsResponse>(del).results.at(0).is_good());
  CHECK(h.server->sampler(0).watched_cells() == 0);
  REQUIRE(h.write(plant(".Speed"), 6.0).is_good());
  ua::PublishRequest p;
  const uint32_t id = h.send(p);
  ServerMessage m;
  REQUIRE(h.wait_response(id, m));
  ua::PublishResponse keep_alive;
  REQUIRE(decode_body(m, keep_alive));
  CHECK(keep_alive.notification_message.notification_data.empty());
}

TEST_CASE("exception sampling: writes on another shard wake the item through a post",
          "[services][subscription][exception]") {
  asio::io_context ctx2;  // outlives the server, which keeps timers on it
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h);
  monitor_on_write(h, sub);
  SecondShard s2(h, ctx2);
  s2.login();
  auto run = [&] { s2.run_for(std::chrono::milliseconds(2)); };
  REQUIRE(collect(h, 1, run) == std::vector<double>{10.0});

  // Each Write is handled on the second shard, then the first shard runs only what is ready (the posted
  // wake-up; no sampling timer exists for the item): each value is sampled before the next write.
  std::vector<uint32_t> writes;
  for (double v : {1.0, 2.0, 3.0, 4.0, 5.0}) {
    writes.push_back(s2.send(write_request(v), false));
    h.ctx.restart();
    h.ctx.poll();
  }
  for (uint32_t id : writes) {
    ServerMessage m;
    REQUIRE(s2.wait_response(id, m));
    ua::WriteResponse w;
    REQUIRE(decode_body(m, w));
    CHECK(w.results.at(0).is_good());
  }
  CHECK(collect(h, 5, run) == std::vector<double>{1, 2, 3, 4, 5});
}

TEST_CASE("exception sampling: the watch moves with a transferred subscription",
          "[services][subscription][exception][transfer]") {
  asio::io_context ctx2;
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h);
  monitor_on_write(h, sub);
  SecondShard s2(h, ctx2);
  s2.login();
  ua::TransferSubscriptionsRequest t;
  t.subscription_ids = {sub};
  auto moved = s2.call<ua::TransferSubscriptionsResponse>(t);
  REQUIRE(moved.results.size() == 1);
  REQUIRE(moved.results[0].status_code.is_good());
  // The first shard no longer watches the cell; the second does.
  CHECK(h.server->sampler(0).watched_cells() == 0);
  CHECK(h.server->sampler(1).watched_cells() == 1);
  CHECK(h.server->sampler(1).group_count() == 0);

  // Written on the first shard, delivered on the second.
  for (double v : {7.0, 8.0}) {
    REQUIRE(h.write(plant(".Speed"), v).is_good());
    ctx2.restart();
    ctx2.poll();
  }
  std::vector<double> got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    ServerMessage m;
    REQUIRE(s2.wait_response(s2.send(ua::PublishRequest{}), m));
    ua::PublishResponse resp;
    REQUIRE(decode_body(m, resp));
    for (const auto& eo : resp.notification_message.notification_data) {
      if (const auto* dc = eo.get<ua::DataChangeNotification>()) {
        for (const auto& n : dc->monitored_items) got.push_back(*n.value.value.get_if<double>());
      }
    }
  }
  // The initial value, never published to the first session, was still queued: it travelled along.
  CHECK(got == std::vector<double>{10.0, 7.0, 8.0});
}
