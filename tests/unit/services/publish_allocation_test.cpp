// Publish encodes notifications straight from the item queues into the response buffer: a message with
// more notifications costs no more heap allocations than one with fewer (no allocation per request,
// docs/ARCHITECTURE.md). A Write of a string costs no more than a Write of a number: the boxes the
// earlier Writes replaced come back to the shard after their request. Counted by allocation_counter.hpp.
#include "tests/unit/services/allocation_counter.hpp"
#ifndef OPCUAD_ALLOCATION_COUNTER_OFF
#include <catch2/catch.hpp>

#include "tests/unit/services/counted_send.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {

// Writes `changed` of the two values, lets the sampler queue them and the subscription go late, then
// counts the allocations of handling one Publish (acknowledging the previous message) and answering it.
size_t publish_round(ServiceHarness& h, int changed, double value, uint32_t sub, uint32_t& ack) {
  const char* names[] = {".Speed", ".Count"};
  for (int i = 0; i < changed; ++i) {
    if (i == 1) {
      REQUIRE(h.write(plant(names[i]), ua::Variant(static_cast<int32_t>(value))).is_good());
    } else {
      REQUIRE(h.write(plant(names[i]), ua::Variant(value)).is_good());
    }
  }
  h.run_for(std::chrono::milliseconds(60));
  h.collect();
  ua::PublishRequest r;
  if (ack) r.subscription_acknowledgements.push_back({sub, ack});
  const size_t n = send_counted(h, r);
  ServerMessage m;
  REQUIRE(h.take_response(h.handle, m));
  ua::PublishResponse resp;
  REQUIRE(decode_body(m, resp));
  REQUIRE(resp.notification_message.notification_data.size() == 1);
  const auto* dc = resp.notification_message.notification_data[0].get<ua::DataChangeNotification>();
  REQUIRE(dc);
  CHECK(dc->monitored_items.size() == static_cast<size_t>(changed));
  ack = resp.notification_message.sequence_number;
  return n;
}

}  // namespace

TEST_CASE("subscription: a Publish allocates nothing per notification", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  ua::CreateMonitoredItemsRequest cm;
  cm.subscription_id = sub;
  cm.timestamps_to_return = ua::TimestampsToReturn::Both;
  cm.items_to_create = {item_request({plant(".Speed"), 1}), item_request({plant(".Count"), 2})};
  REQUIRE(h.call<ua::CreateMonitoredItemsResponse>(cm).results.size() == 2);
  h.sink.out.reserve(1 << 20);  // the in-memory sink's own buffer is not what is measured
  uint32_t ack = 0;
  // Initial values, then warm-up rounds: buffers, retransmission slots and scratch reach their size.
  h.run_for(std::chrono::milliseconds(60));
  for (int i = 0; i < 20; ++i) publish_round(h, 2, 20 + i, sub, ack);
  size_t one = ~size_t{0}, two = ~size_t{0};
  for (int i = 0; i < 5; ++i) {
    one = std::min(one, publish_round(h, 1, 40 + i, sub, ack));
    two = std::min(two, publish_round(h, 2, 60 + i, sub, ack));
  }
  INFO("allocations per Publish round trip (transport included): one " << one << ", two " << two);
  CHECK(two == one);
}

namespace {

// The allocations of one Write round trip of `v` to `node`, transport included.
size_t write_round(ServiceHarness& h, const ua::NodeId& node, const ua::Variant& v) {
  const size_t n = send_counted(h, write_request(node, v, "", 13));
  ServerMessage m;
  REQUIRE(h.take_response(h.handle, m));
  ua::WriteResponse resp;
  REQUIRE(decode_body(m, resp));
  REQUIRE(resp.results.size() == 1);
  CHECK(resp.results[0].is_good());
  return n;
}

}  // namespace

TEST_CASE("write: a stream of string Writes allocates no more than numbers once warm",
          "[services][write][epoch]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.sink.out.reserve(1 << 20);
  // Longer than a string's own storage: each value is a box with a heap buffer of its own.
  auto text = [](int i) {
    return ua::Variant(ua::String("pump " + std::to_string(10 + i % 50) + " of the north station"));
  };
  for (int i = 0; i < 50; ++i) {
    write_round(h, plant(".Name"), text(i));
    write_round(h, plant(".Speed"), ua::Variant(1.0 + i));
    h.collect();
  }
  size_t strings = ~size_t{0}, numbers = ~size_t{0};
  for (int i = 0; i < 5; ++i) {
    strings = std::min(strings, write_round(h, plant(".Name"), text(i)));
    numbers = std::min(numbers, write_round(h, plant(".Speed"), ua::Variant(2.0 + i)));
    h.collect();
  }
  INFO("allocations per Write round trip (transport included): string " << strings << ", number " << numbers);
  CHECK(strings == numbers);
  write_round(h, plant(".Name"), text(7));
  CHECK(h.space.reclaimer().waiting() != 0);  // the last Write's box, until the shard's quick points
  h.run_for(std::chrono::milliseconds(30));
  CHECK(h.space.reclaimer().waiting() == 0);
}

#endif  // OPCUAD_ALLOCATION_COUNTER_OFF
