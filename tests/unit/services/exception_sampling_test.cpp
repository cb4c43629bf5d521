// Exception-based monitored items (sampling interval 0, Part 4 §5.12.1.2): a write wakes the item at
// once, on its own shard or through a post from the writer's shard, so every written value is queued
// even when writes come faster than any sampling tick. A 10 ms sampler would see only the last of a
// burst of writes handled in one loop turn; these tests ask for every one. (Across shards a wake-up
// carries the cell, not the value: writes faster than the watching shard's loop coalesce, as samples do.)
#include <catch2/catch.hpp>

#include "services/monitored_item.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

// A Reporting item on Speed's Value at interval 0 with a queue of 10; returns its id.
uint32_t monitor_on_write(ServiceHarness& h, uint32_t sub) {
  const auto item = monitor(h, sub, {plant(".Speed"), 5, 0, 10});
  REQUIRE(item.status_code.is_good());
  CHECK(item.revised_sampling_interval == 0);
  return item.monitored_item_id;
}

// Appends the Double values of a Publish answer's data changes to `out`.
void append_values(const ua::PublishResponse& r, std::vector<double>& out) {
  for (const auto& n : changes(r)) out.push_back(*n.value.value.get_if<double>());
}

// Publishes on the harness's session until `count` values have arrived (at most 5 s); `run` drives
// whatever other shard is involved between attempts.
template <class Run>
std::vector<double> collect(ServiceHarness& h, size_t count, Run run) {
  std::vector<double> out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
    const ServerMessage m = await_response(h, h.send(ua::PublishRequest{}), run, deadline);
    append_values(decode_response<ua::PublishResponse>(m), out);
  }
  return out;
}

}  // namespace

TEST_CASE("exception sampling: a burst of writes on the item's shard queues every value",
          "[services][subscription][exception]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
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
  CHECK(publish(h).notification_message.notification_data.empty());  // a keep-alive
}

TEST_CASE("exception sampling: writes on another shard wake the item through a post",
          "[services][subscription][exception]") {
  asio::io_context ctx2;  // outlives the server, which keeps timers on it
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  monitor_on_write(h, sub);
  SecondShard s2(h, ctx2);
  s2.login();
  auto run = [&] { s2.run_for(std::chrono::milliseconds(2)); };
  REQUIRE(collect(h, 1, run) == std::vector<double>{10.0});

  // Each Write is handled on the second shard, then the first shard runs only what is ready (the posted
  // wake-up; no sampling timer exists for the item): each value is sampled before the next write.
  std::vector<uint32_t> writes;
  for (double v : {1.0, 2.0, 3.0, 4.0, 5.0}) {
    writes.push_back(s2.send(write_request(plant(".Speed"), v), false));
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
  const uint32_t sub = subscribe(h).subscription_id;
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
    append_values(publish(s2), got);
  }
  // The initial value, never published to the first session, was still queued: it travelled along.
  CHECK(got == std::vector<double>{10.0, 7.0, 8.0});
}
