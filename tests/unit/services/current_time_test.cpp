// Computed namespace-0 values through the services: Read and a monitored item see
// Server.ServerStatus.CurrentTime as the server's clock at that moment (Part 5 §12.10), so a client
// sampling it at 100 ms (a common heartbeat) gets a new value at every sample.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <thread>

#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {
const ua::NodeId kCurrentTime(0, ua::id::Server_ServerStatus_CurrentTime);
const ua::NodeId kServerStatus(0, ua::id::Server_ServerStatus);

double ms_between(ua::DateTime a, ua::DateTime b) {
  return static_cast<double>(b.ticks - a.ticks) / 1e4;
}

ua::DateTime time_of(const ua::DataValue& dv) {
  REQUIRE(dv.status.is_good());
  const auto* t = dv.value.get_if<ua::DateTime>();
  REQUIRE(t);
  return *t;
}
}  // namespace

TEST_CASE("current time: Read returns the clock at the read", "[services][current_time]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const auto start = std::chrono::steady_clock::now();
  const ua::DateTime t1 = time_of(h.read(kCurrentTime));
  CHECK(std::abs(ms_between(t1, ua::DateTime::now())) < 5);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const ua::DateTime t2 = time_of(h.read(kCurrentTime));
  const double elapsed =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(std::abs(ms_between(t2, ua::DateTime::now())) < 5);
  CHECK(ms_between(t1, t2) >= 20);
  CHECK(ms_between(t1, t2) <= elapsed + 2);

  const ua::DataValue status = h.read(kServerStatus);
  const auto* eo = status.value.get_if<ua::ExtensionObject>();
  REQUIRE(eo);
  const auto* st = eo->get<ua::ServerStatusDataType>();
  REQUIRE(st);
  CHECK(std::abs(ms_between(st->current_time, ua::DateTime::now())) < 5);
  CHECK(st->current_time.ticks > t2.ticks);
  CHECK(st->state == ua::ServerState::Running);
}

TEST_CASE("current time: a monitored item at 100 ms gets a change at every sample",
          "[services][current_time]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 500, 10, 100);
  ItemSpec spec{kCurrentTime, 5};
  spec.interval = 100;
  spec.queue = 50;
  auto item = monitor(h, sub.subscription_id, spec);
  REQUIRE(item.status_code.is_good());
  CHECK(item.revised_sampling_interval == 100);
  (void)next_changes(h);  // the first sample(s)
  // Two more publishing intervals: about ten samples, each a new value.
  const auto start = std::chrono::steady_clock::now();
  std::vector<ua::MonitoredItemNotification> got = next_changes(h);
  for (const auto& c : next_changes(h)) got.push_back(c);
  const double elapsed =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  INFO("changes: " << got.size() << " in " << elapsed << " ms");
  // A value refreshed once a second would give one or two; every sample gives one per 100 ms.
  CHECK(static_cast<double>(got.size()) >= std::floor(elapsed / 100) - 2);
  CHECK(got.size() >= 7);
  for (size_t i = 1; i < got.size(); ++i) {
    CHECK(ms_between(time_of(got[i - 1].value), time_of(got[i].value)) > 0);  // each one a new time
  }
}

TEST_CASE("current time: every CurrentTime of one Read is the request's one clock reading",
          "[services][current_time]") {
  ServiceHarness h("\"max_nodes_per_read\": 100");
  REQUIRE(h.login().is_good());
  ua::ReadRequest r;
  r.timestamps_to_return = ua::TimestampsToReturn::Both;
  for (int i = 0; i < 100; ++i) r.nodes_to_read.push_back(ua::ReadValueId{kCurrentTime, 13, {}, {}});
  const auto resp = h.call<ua::ReadResponse>(r);
  REQUIRE(resp.results.size() == 100);
  const ua::DateTime header = resp.response_header.timestamp;
  CHECK(std::abs(ms_between(header, ua::DateTime::now())) < 5);
  for (const auto& dv : resp.results) {
    // The value, its source and its server timestamp are all the time of the request (Part 4 §5.10.2).
    CHECK(time_of(dv).ticks == header.ticks);
    CHECK(dv.source_timestamp.ticks == header.ticks);
    CHECK(dv.server_timestamp.ticks == header.ticks);
  }
}

TEST_CASE("read: a reused result slot keeps nothing of the previous request's value", "[services][read]") {
  // The shard's Read response is reused from request to request; a failed operation must not show the
  // value, timestamps or picoseconds that its slot held for the previous request.
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::ReadRequest good;
  good.timestamps_to_return = ua::TimestampsToReturn::Both;
  good.nodes_to_read.push_back(ua::ReadValueId{kCurrentTime, 13, {}, {}});
  good.nodes_to_read.push_back(ua::ReadValueId{kServerStatus, 13, {}, {}});
  auto first = h.call<ua::ReadResponse>(good);
  REQUIRE(first.results.size() == 2);
  CHECK(first.results[0].status.is_good());
  CHECK(!first.results[1].value.is_empty());

  ua::ReadRequest bad;
  bad.timestamps_to_return = ua::TimestampsToReturn::Both;
  bad.nodes_to_read.push_back(ua::ReadValueId{ua::NodeId(7, 123456), 13, {}, {}});         // no such node
  bad.nodes_to_read.push_back(ua::ReadValueId{kServerStatus, 13, ua::String("0:1"), {}});  // not an array
  auto second = h.call<ua::ReadResponse>(bad);
  REQUIRE(second.results.size() == 2);
  CHECK(second.results[0].status == ua::status::BadNodeIdUnknown);
  CHECK(second.results[1].status == ua::status::BadIndexRangeNoData);
  for (const auto& dv : second.results) {
    CHECK(dv.value.is_empty());
    CHECK(dv.source_timestamp.is_null());
    CHECK(dv.server_timestamp.is_null());
    CHECK(dv.source_picoseconds == 0);
    CHECK(dv.server_picoseconds == 0);
  }

  // A non-Value attribute after a Value: no source timestamp left over.
  ua::ReadRequest attr;
  attr.timestamps_to_return = ua::TimestampsToReturn::Both;
  attr.nodes_to_read.push_back(ua::ReadValueId{kCurrentTime, 3, {}, {}});  // BrowseName
  auto third = h.call<ua::ReadResponse>(attr);
  REQUIRE(third.results.size() == 1);
  CHECK(third.results[0].status.is_good());
  CHECK(third.results[0].source_timestamp.is_null());
  CHECK(!third.results[0].server_timestamp.is_null());
  CHECK(third.results[0].value.get_if<ua::QualifiedName>() != nullptr);
}
