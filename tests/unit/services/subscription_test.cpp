// Subscriptions and monitored items (Part 4 §5.12-5.13) over the in-memory channel: the state machine
// (keep-alive, lifetime, publish queue, acks, republish), queue overflow, filters and deadbands,
// sampling interval revision, monitoring modes and triggering. Timers run with short intervals and every
// wait is "until it arrives, at most 5 s".
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "services/monitored_item.hpp"
#include "services/subscription.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;
using services::ChangeFilter;

namespace {

ua::ExtensionObject change_filter(ua::DataChangeTrigger trigger, uint32_t deadband_type = 0,
                                  double value = 0) {
  return ua::ExtensionObject::make(ua::DataChangeFilter{trigger, deadband_type, value});
}

// Lets the 10 ms samplers run well past one tick.
void settle(ServiceHarness& h) {
  h.run_for(std::chrono::milliseconds(60));
}

ua::DataValue dv(double v, uint32_t status_code = 0, int64_t ts = 0) {
  ua::DataValue d;
  d.value = v;
  d.status = ua::StatusCode(status_code);
  d.source_timestamp = ua::DateTime{ts};
  return d;
}

}  // namespace

TEST_CASE("subscription: the notification queue keeps its bound and flags overflow",
          "[services][subscription]") {
  services::MonitoredItem q;
  q.configure_queue(3, true);
  for (int i = 1; i <= 5; ++i) q.enqueue(dv(i));
  REQUIRE(q.queue_size() == 3);
  auto a = q.pop(), b = q.pop(), c = q.pop();
  CHECK(a.value == ua::Variant(3.0));
  CHECK(a.status.value() == services::kOverflowInfoBits);  // next to the lost ones
  CHECK(b.status.value() == 0);
  CHECK(c.value == ua::Variant(5.0));
  CHECK(q.queue_empty());

  q.configure_queue(3, false);
  for (int i = 1; i <= 5; ++i) q.enqueue(dv(i));
  a = q.pop(), b = q.pop(), c = q.pop();
  CHECK(a.value == ua::Variant(1.0));
  CHECK(a.status.value() == 0);
  CHECK(c.value == ua::Variant(5.0));
  CHECK(c.status.value() == services::kOverflowInfoBits);  // the newest replaced the lost one
  CHECK(q.queue_empty());

  // A queue of two: the flagged oldest may be the value that was the newest.
  q.configure_queue(2, true);
  for (int i = 1; i <= 3; ++i) q.enqueue(dv(i));
  a = q.pop(), b = q.pop();
  CHECK(a.value == ua::Variant(2.0));
  CHECK(a.status.value() == services::kOverflowInfoBits);
  CHECK(b.status.value() == 0);

  // Shrinking keeps the newest values.
  q.configure_queue(4, true);
  for (int i = 1; i <= 4; ++i) q.enqueue(dv(i));
  q.configure_queue(2, true);
  REQUIRE(q.queue_size() == 2);
  CHECK(q.pop().value == ua::Variant(3.0));
  CHECK(q.pop().value == ua::Variant(4.0));

  q.configure_queue(1, true);
  q.enqueue(dv(1));
  q.enqueue(dv(2));
  CHECK(q.queue_size() == 1);
  CHECK(q.pop().status.value() == 0);  // a queue of one never flags overflow
}

TEST_CASE("subscription: queued values encode like MonitoredItemNotifications", "[services][subscription]") {
  // Inline scalars, boxed values (strings, picoseconds) and every TimestampsToReturn.
  std::vector<ua::DataValue> values;
  values.push_back(dv(2.5, 0, 7));
  values.back().server_timestamp = ua::DateTime{9};
  ua::DataValue text;
  text.value = ua::String("pump");
  text.status = ua::StatusCode(0x80000000);
  text.source_timestamp = ua::DateTime{3};
  text.source_picoseconds = 12;
  values.push_back(text);
  values.push_back(ua::DataValue{});
  for (auto ts : {ua::TimestampsToReturn::Both, ua::TimestampsToReturn::Source,
                  ua::TimestampsToReturn::Server, ua::TimestampsToReturn::Neither}) {
    for (const auto& v : values) {
      services::MonitoredItem item;
      item.client_handle = 42;
      item.set_timestamps(ts);
      item.enqueue(v);
      ua::ByteBuffer direct;
      ua::Encoder e(direct);
      item.encode_front(e);
      CHECK(item.queue_empty());
      item.enqueue(v);
      ua::ByteBuffer reference;
      ua::Encoder r(reference);
      ua::encode(r, ua::MonitoredItemNotification{42, item.pop()});
      CHECK(std::string_view(reinterpret_cast<const char*>(direct.data()), direct.size()) ==
            std::string_view(reinterpret_cast<const char*>(reference.data()), reference.size()));
    }
  }
}

TEST_CASE("subscription: DataChangeFilter triggers and deadbands", "[services][subscription]") {
  ChangeFilter f;
  CHECK(services::passes_filter(f, dv(1), dv(2)));
  CHECK(!services::passes_filter(f, dv(1), dv(1, 0, 5)));  // StatusValue ignores timestamps
  CHECK(services::passes_filter(f, dv(1), dv(1, 0x40000000)));
  f.trigger = ua::DataChangeTrigger::Status;
  CHECK(!services::passes_filter(f, dv(1), dv(2)));
  CHECK(services::passes_filter(f, dv(1), dv(1, 0x80000000)));
  f.trigger = ua::DataChangeTrigger::StatusValueTimestamp;
  CHECK(services::passes_filter(f, dv(1), dv(1, 0, 5)));
  f = ChangeFilter{};
  f.deadband = ua::DeadbandType::Absolute;
  f.absolute = 2;
  CHECK(!services::passes_filter(f, dv(10), dv(12)));
  CHECK(services::passes_filter(f, dv(10), dv(12.5)));
  ua::DataValue a, b;
  a.value = std::vector<double>{1, 2};
  b.value = std::vector<double>{1, 5};
  CHECK(services::passes_filter(f, a, b));  // any element beyond the deadband
  b.value = std::vector<double>{1, 2, 3};
  CHECK(services::passes_filter(f, a, b));  // the size changed
}

TEST_CASE("subscription: keep-alives when idle", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 10, 3);
  CHECK(sub.revised_publishing_interval == 10);
  CHECK(sub.revised_max_keep_alive_count == 3);
  CHECK(sub.revised_lifetime_count == 1000);
  for (int i = 0; i < 3; ++i) {
    auto r = publish(h);
    CHECK(r.subscription_id == sub.subscription_id);
    CHECK(r.notification_message.notification_data.empty());
    CHECK(r.notification_message.sequence_number == 1);  // the next one to be used
    CHECK(r.available_sequence_numbers.empty());
    CHECK(!r.more_notifications);
  }
  ua::StatusCode s;
  ua::DeleteSubscriptionsRequest del;
  del.subscription_ids = {sub.subscription_id};
  h.call<ua::DeleteSubscriptionsResponse>(del);
  publish(h, {}, &s);
  CHECK(s == status::BadNoSubscription);
}

TEST_CASE("subscription: data changes are delivered, acknowledged and republished",
          "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h);
  auto item = monitor(h, sub.subscription_id, {plant(".Speed"), 7});
  REQUIRE(item.status_code.is_good());
  auto first = publish(h);
  auto c = changes(first);
  REQUIRE(c.size() == 1);  // the initial value
  CHECK(c[0].client_handle == 7);
  CHECK(c[0].value.value == ua::Variant(10.0));
  CHECK(first.notification_message.sequence_number == 1);
  CHECK(first.available_sequence_numbers == std::vector<uint32_t>{1});

  CHECK(h.write(plant(".Speed"), 42.5).is_good());
  c = next_changes(h);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(42.5));

  // Republish from the retransmission queue, until acknowledged.
  ua::RepublishRequest rep;
  rep.subscription_id = sub.subscription_id;
  rep.retransmit_sequence_number = 1;
  auto again = h.call<ua::RepublishResponse>(rep);
  CHECK(again.notification_message == first.notification_message);

  CHECK(h.write(plant(".Speed"), 43.0).is_good());
  auto r = publish(h, {{sub.subscription_id, 1}, {sub.subscription_id, 99}, {4242, 1}});
  CHECK(r.results == std::vector<ua::StatusCode>{status::Good, status::BadSequenceNumberUnknown,
                                                 status::BadSubscriptionIdInvalid});
  ua::StatusCode s;
  h.call<ua::RepublishResponse>(rep, &s);
  CHECK(s == status::BadMessageNotAvailable);
  rep.subscription_id = 4242;
  h.call<ua::RepublishResponse>(rep, &s);
  CHECK(s == status::BadSubscriptionIdInvalid);
}

TEST_CASE("subscription: queue overflow sets the overflow bit end to end", "[services][subscription]") {
  for (bool discard_oldest : {true, false}) {
    ServiceHarness h;
    REQUIRE(h.login().is_good());
    auto sub = subscribe(h, 20, 100, 1000, 0, /*enabled=*/false);
    REQUIRE(monitor(h, sub.subscription_id, {plant(".Count"), 1, 10, 3, discard_oldest}).revised_queue_size ==
            3);
    for (int32_t v = 2; v <= 5; ++v) {
      settle(h);
      CHECK(h.write(plant(".Count"), v).is_good());
    }
    settle(h);
    ua::SetPublishingModeRequest mode;
    mode.publishing_enabled = true;
    mode.subscription_ids = {sub.subscription_id, 999};
    auto m = h.call<ua::SetPublishingModeResponse>(mode);
    CHECK(m.results == std::vector<ua::StatusCode>{status::Good, status::BadSubscriptionIdInvalid});
    auto c = next_changes(h);
    REQUIRE(c.size() == 3);
    if (discard_oldest) {  // 1 and 2 lost: 3 (flagged), 4, 5
      CHECK(c[0].value.value == ua::Variant(int32_t{3}));
      CHECK(c[0].value.status.value() == services::kOverflowInfoBits);
      CHECK(c[2].value.value == ua::Variant(int32_t{5}));
      CHECK(c[2].value.status.value() == 0);
    } else {  // 3 and 4 replaced: 1, 2, 5 (flagged)
      CHECK(c[0].value.value == ua::Variant(int32_t{1}));
      CHECK(c[0].value.status.value() == 0);
      CHECK(c[2].value.value == ua::Variant(int32_t{5}));
      CHECK(c[2].value.status.value() == services::kOverflowInfoBits);
    }
  }
}

TEST_CASE("subscription: filters are checked per item and deadbands applied", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 20, 5);
  const uint32_t id = sub.subscription_id;
  using T = ua::DataChangeTrigger;
  CHECK(monitor(h, id, {plant(".Speed"), 1, 10, 1, true, change_filter(T::StatusValue, 2, 10)})
            .status_code.is_good());
  CHECK(monitor(h, id, {plant(".Count"), 1, 10, 1, true, change_filter(T::StatusValue, 2, 10)}).status_code ==
        status::BadDeadbandFilterInvalid);  // no EURange
  CHECK(
      monitor(h, id, {plant(".Speed"), 1, 10, 1, true, change_filter(T::StatusValue, 2, 150)}).status_code ==
      status::BadDeadbandFilterInvalid);
  CHECK(monitor(h, id, {plant(".Speed"), 1, 10, 1, true, change_filter(T::StatusValue, 1, -1)}).status_code ==
        status::BadDeadbandFilterInvalid);
  CHECK(monitor(h, id, {plant(".Name"), 1, 10, 1, true, change_filter(T::StatusValue, 1, 1)}).status_code ==
        status::BadFilterNotAllowed);  // a String has no deadband
  CHECK(monitor(h, id,
                {plant(".Speed"), 1, 10, 1, true, change_filter(T::Status), ua::MonitoringMode::Reporting, 4})
            .status_code == status::BadFilterNotAllowed);
  // An EventFilter is for event items (AttributeId EventNotifier) only (Part 4 §7.22.3).
  CHECK(monitor(h, id, {plant(".Speed"), 1, 10, 1, true, ua::ExtensionObject::make(ua::EventFilter{})})
            .status_code == status::BadFilterNotAllowed);
  CHECK(monitor(h, id, {plant(".Speed"), 1, 10, 1, true, ua::ExtensionObject::make(ua::AggregateFilter{})})
            .status_code == status::BadMonitoredItemFilterUnsupported);
  CHECK(monitor(h, id, {ua::NodeId(2, 4242)}).status_code == status::BadNodeIdUnknown);
  CHECK(monitor(h, id, {plant(""), 1, 10, 1, true, {}, ua::MonitoringMode::Reporting, 13}).status_code ==
        status::BadAttributeIdInvalid);

  // An absolute deadband of 5 on the Int32 Count: 1 -> 4 stays inside it, 1 -> 7 is reported.
  ServiceHarness h2;
  REQUIRE(h2.login().is_good());
  auto sub2 = subscribe(h2, 20, 5);
  REQUIRE(monitor(h2, sub2.subscription_id,
                  {plant(".Count"), 3, 10, 5, true, change_filter(T::StatusValue, 1, 5)})
              .status_code.is_good());
  auto c = next_changes(h2);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(int32_t{1}));
  CHECK(h2.write(plant(".Count"), int32_t{4}).is_good());
  settle(h2);
  CHECK(h2.write(plant(".Count"), int32_t{7}).is_good());
  c = next_changes(h2);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(int32_t{7}));
}

TEST_CASE("subscription: items asked for -1 follow a later publishing interval", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t id = subscribe(h, 50).subscription_id;
  CHECK(monitor(h, id, {plant(".Speed"), 1, -1}).revised_sampling_interval == 50);
  CHECK(monitor(h, id, {plant(".Count"), 2, 50}).revised_sampling_interval == 50);
  const services::Sampler& sampler = h.server->sampler(0);
  CHECK(sampler.items_at(50) == 2);
  ua::ModifySubscriptionRequest mod;
  mod.subscription_id = id;
  mod.requested_publishing_interval = 200;
  mod.requested_max_keep_alive_count = 10;
  mod.requested_lifetime_count = 100;
  REQUIRE(h.call<ua::ModifySubscriptionResponse>(mod).revised_publishing_interval == 200);
  // Part 4 §5.12.1.2: only the -1 item moves; the one that asked for 50 keeps it.
  CHECK(sampler.items_at(200) == 1);
  CHECK(sampler.items_at(50) == 1);
}

TEST_CASE("subscription: sampling intervals and queue sizes are revised", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 50);
  const uint32_t id = sub.subscription_id;
  CHECK(monitor(h, id, {plant(".Speed"), 1, -1}).revised_sampling_interval == 50);  // the publishing interval
  CHECK(monitor(h, id, {plant(".Speed"), 1, std::numeric_limits<double>::quiet_NaN()})
            .revised_sampling_interval == 50);
  CHECK(monitor(h, id, {plant(".Speed"), 1, 0}).revised_sampling_interval == 0);  // exception-based
  ItemSpec name{plant(".Speed"), 1, 0};
  name.attribute = 3;  // BrowseName: not changed by writes, so sampled at the fastest rate
  CHECK(monitor(h, id, name).revised_sampling_interval == services::kFastestSamplingIntervalMs);
  CHECK(monitor(h, id, {plant(".Speed"), 1, 1}).revised_sampling_interval ==
        services::kFastestSamplingIntervalMs);
  CHECK(monitor(h, id, {plant(".Speed"), 1, 250}).revised_sampling_interval == 250);
  CHECK(monitor(h, id, {plant(".Speed"), 1, 1e12}).revised_sampling_interval ==
        services::kSlowestSamplingIntervalMs);
  CHECK(monitor(h, id, {ua::NodeId(0, 2256), 1, 1}).revised_sampling_interval ==
        1000);  // its MinimumSamplingInterval
  CHECK(monitor(h, id, {plant(".Speed"), 1, 10, 0}).revised_queue_size == 1);
  CHECK(monitor(h, id, {plant(".Speed"), 1, 10, 1u << 30}).revised_queue_size ==
        h.loaded.config.limits.max_monitored_item_queue_size);

  // Subscription parameters: lifetime at least 3 keep-alives, intervals inside the bounds.
  ua::ModifySubscriptionRequest mod;
  mod.subscription_id = id;
  mod.requested_publishing_interval = 0;
  mod.requested_max_keep_alive_count = 20;
  mod.requested_lifetime_count = 2;
  auto m = h.call<ua::ModifySubscriptionResponse>(mod);
  CHECK(m.revised_publishing_interval == services::kMinPublishingIntervalMs);
  CHECK(m.revised_max_keep_alive_count == 20);
  CHECK(m.revised_lifetime_count == 60);
  mod.subscription_id = 999;
  ua::StatusCode s;
  h.call<ua::ModifySubscriptionResponse>(mod, &s);
  CHECK(s == status::BadSubscriptionIdInvalid);

  // ModifyMonitoredItems revises the same way; unknown ids are per item.
  ua::ModifyMonitoredItemsRequest mi;
  mi.subscription_id = id;
  mi.items_to_modify.push_back({1, ua::MonitoringParameters{9, 0, {}, 4, true}});
  mi.items_to_modify.push_back({4242, ua::MonitoringParameters{}});
  auto mr = h.call<ua::ModifyMonitoredItemsResponse>(mi);
  REQUIRE(mr.results.size() == 2);
  CHECK(mr.results[0].status_code.is_good());
  CHECK(mr.results[0].revised_sampling_interval == 0);  // the Value of Speed: exception-based
  CHECK(mr.results[0].revised_queue_size == 4);
  CHECK(mr.results[1].status_code == status::BadMonitoredItemIdInvalid);

  // Attributes other than Value are sampled too: the initial value of the DisplayName.
  ServiceHarness h2;
  REQUIRE(h2.login().is_good());
  auto sub2 = subscribe(h2);
  REQUIRE(monitor(h2, sub2.subscription_id,
                  {plant(".Speed"), 5, 10, 1, true, {}, ua::MonitoringMode::Reporting, 3})
              .status_code.is_good());
  auto c = next_changes(h2);
  REQUIRE(c.size() == 1);
  CHECK(c[0].value.value == ua::Variant(ua::QualifiedName{2, ua::String("Speed")}));
}

TEST_CASE("subscription: the Publish queue is bounded", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::StatusCode s;
  publish(h, {}, &s);
  CHECK(s == status::BadNoSubscription);
  subscribe(h, 5000);  // nothing is published for 5 s: every request stays queued
  std::vector<uint32_t> ids;
  for (size_t i = 0; i <= h.loaded.config.limits.max_publish_requests_per_session; ++i)
    ids.push_back(h.send(ua::PublishRequest{}));
  ServerMessage m;
  REQUIRE(h.take_response(ids[0], m));  // the oldest is dequeued and refused
  ua::ServiceFault fault;
  REQUIRE(decode_body(m, fault));
  CHECK(fault.response_header.service_result == status::BadTooManyPublishRequests);
  CHECK(!h.take_response(ids[1], m));
  // CloseSession answers the queued requests with BadSessionClosed.
  ua::CloseSessionRequest close;
  close.delete_subscriptions = true;
  h.call<ua::CloseSessionResponse>(close);
  REQUIRE(h.take_response(ids[1], m));
  REQUIRE(decode_body(m, fault));
  CHECK(fault.response_header.service_result == status::BadSessionClosed);
  CHECK(h.server->subscription_count() == 0);
}

TEST_CASE("subscription: a Publish request dequeued after its timeoutHint gets BadTimeout",
          "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 100);
  monitor(h, sub.subscription_id, {plant(".Speed"), 1});
  // Queued before the first publishing tick (100 ms), with a 1 ms timeoutHint: when the tick dequeues
  // it, it has timed out (Part 4 §5.13.1.4 DequeuePublishReq).
  ua::PublishRequest expiring;
  expiring.request_header.timeout_hint = 1;
  const uint32_t id = h.send(expiring);
  ServerMessage m;
  REQUIRE(h.wait_response(id, m));
  ua::ServiceFault fault;
  REQUIRE(decode_body(m, fault));
  CHECK(fault.response_header.service_result == status::BadTimeout);
  // The next request (no timeoutHint) gets the data the timed-out one could not carry.
  auto c = changes(publish(h));
  REQUIRE(c.size() == 1);
  CHECK(c[0].client_handle == 1);
  // The sampler counted its timer samples for the jitter counters; the late ones are a subset.
  const auto late = h.server->sampling_lateness();
  CHECK(late[0] > 0);
  CHECK(late[1] <= late[0]);
  CHECK(late[2] <= late[1]);
  CHECK(late[3] <= late[2]);
}

TEST_CASE("subscription: MoreNotifications when a message cannot hold them all", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 20, 100, 1000, 2);
  uint32_t handle = 0;
  for (const char* name : {".Speed", ".Count", ".Period"})
    monitor(h, sub.subscription_id, {plant(name), ++handle});
  auto first = publish(h);
  CHECK(changes(first).size() == 2);
  CHECK(first.more_notifications);
  auto second = publish(h);
  CHECK(changes(second).size() == 1);
  CHECK(!second.more_notifications);
  CHECK(second.notification_message.sequence_number == first.notification_message.sequence_number + 1);
}

TEST_CASE("subscription: lifetime expiry sends StatusChangeNotification BadTimeout",
          "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 10, 1, 3);
  CHECK(sub.revised_lifetime_count == 3);
  monitor(h, sub.subscription_id, {plant(".Speed")});
  CHECK(h.server->monitored_item_count() == 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (h.server->subscription_count() > 0 && std::chrono::steady_clock::now() < deadline) {
    h.run_for(std::chrono::milliseconds(10));
  }
  REQUIRE(h.server->subscription_count() == 0);
  CHECK(h.server->monitored_item_count() == 0);
  auto r = publish(h);
  CHECK(r.subscription_id == sub.subscription_id);
  REQUIRE(r.notification_message.notification_data.size() == 1);
  const auto* sc = r.notification_message.notification_data[0].get<ua::StatusChangeNotification>();
  REQUIRE(sc);
  CHECK(sc->status == status::BadTimeout);
  ua::StatusCode s;
  publish(h, {}, &s);
  CHECK(s == status::BadNoSubscription);
}

TEST_CASE("subscription: SetMonitoringMode disables, samples and reports", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 10, 5);
  auto item = monitor(h, sub.subscription_id, {plant(".Count"), 1, 10, 5});
  CHECK(changes(publish(h)).size() == 1);  // initial value
  ua::SetMonitoringModeRequest mode;
  mode.subscription_id = sub.subscription_id;
  mode.monitored_item_ids = {item.monitored_item_id, 4242};
  mode.monitoring_mode = ua::MonitoringMode::Disabled;
  auto r = h.call<ua::SetMonitoringModeResponse>(mode);
  CHECK(r.results == std::vector<ua::StatusCode>{status::Good, status::BadMonitoredItemIdInvalid});
  CHECK(h.write(plant(".Count"), int32_t{2}).is_good());
  settle(h);
  CHECK(changes(publish(h)).empty());  // a keep-alive: nothing sampled

  mode.monitored_item_ids = {item.monitored_item_id};
  mode.monitoring_mode = ua::MonitoringMode::Sampling;
  h.call<ua::SetMonitoringModeResponse>(mode);
  settle(h);
  CHECK(h.write(plant(".Count"), int32_t{3}).is_good());
  settle(h);
  CHECK(changes(publish(h)).empty());  // sampled and queued, not reported

  mode.monitoring_mode = ua::MonitoringMode::Reporting;
  h.call<ua::SetMonitoringModeResponse>(mode);
  auto c = next_changes(h);
  REQUIRE(c.size() == 2);  // the value sampled on leaving Disabled, then the write
  CHECK(c[0].value.value == ua::Variant(int32_t{2}));
  CHECK(c[1].value.value == ua::Variant(int32_t{3}));

  mode.monitoring_mode = static_cast<ua::MonitoringMode>(7);
  ua::StatusCode s;
  h.call<ua::SetMonitoringModeResponse>(mode, &s);
  CHECK(s == status::BadMonitoringModeInvalid);
}

TEST_CASE("subscription: SetTriggering reports sampling items with their trigger",
          "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto sub = subscribe(h, 10, 5);
  auto trigger = monitor(h, sub.subscription_id, {plant(".Count"), 1, 10, 5});
  auto linked =
      monitor(h, sub.subscription_id, {plant(".Speed"), 2, 10, 5, true, {}, ua::MonitoringMode::Sampling});
  ua::SetTriggeringRequest st;
  st.subscription_id = sub.subscription_id;
  st.triggering_item_id = trigger.monitored_item_id;
  st.links_to_add = {linked.monitored_item_id, 4242};
  st.links_to_remove = {4243};
  auto r = h.call<ua::SetTriggeringResponse>(st);
  CHECK(r.add_results == std::vector<ua::StatusCode>{status::Good, status::BadMonitoredItemIdInvalid});
  CHECK(r.remove_results == std::vector<ua::StatusCode>{status::BadMonitoredItemIdInvalid});
  auto c = next_changes(h);
  REQUIRE(c.size() == 1);  // the trigger's initial value; the linked item's waits in its queue
  CHECK(c[0].client_handle == 1);

  CHECK(h.write(plant(".Speed"), 50.0).is_good());
  settle(h);
  CHECK(changes(publish(h)).empty());  // sampled only
  CHECK(h.write(plant(".Count"), int32_t{9}).is_good());
  c = next_changes(h);
  REQUIRE(c.size() == 3);  // the trigger, then the linked item's queue (initial value and the write)
  CHECK(c[0].client_handle == 1);
  CHECK(c[1].client_handle == 2);
  CHECK(c[2].value.value == ua::Variant(50.0));

  st.triggering_item_id = 4242;
  ua::StatusCode s;
  h.call<ua::SetTriggeringResponse>(st, &s);
  CHECK(s == status::BadMonitoredItemIdInvalid);
}

TEST_CASE("subscription: deleting items, subscriptions and limits", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.loaded.config.limits.max_monitored_items = 2;  // the server reads its configuration live
  h.loaded.config.limits.max_subscriptions = 2;
  // Publishing every 5 s: neither subscription is late, so a Publish request stays queued.
  auto sub = subscribe(h, 5000);
  auto a = monitor(h, sub.subscription_id, {plant(".Speed")});
  monitor(h, sub.subscription_id, {plant(".Count")});
  CHECK(monitor(h, sub.subscription_id, {plant(".Name")}).status_code == status::BadTooManyMonitoredItems);
  ua::DeleteMonitoredItemsRequest dm;
  dm.subscription_id = sub.subscription_id;
  dm.monitored_item_ids = {a.monitored_item_id, 4242};
  auto d = h.call<ua::DeleteMonitoredItemsResponse>(dm);
  CHECK(d.results == std::vector<ua::StatusCode>{status::Good, status::BadMonitoredItemIdInvalid});
  CHECK(monitor(h, sub.subscription_id, {plant(".Name")}).status_code.is_good());
  ua::StatusCode s;
  dm.subscription_id = 4242;
  h.call<ua::DeleteMonitoredItemsResponse>(dm, &s);
  CHECK(s == status::BadSubscriptionIdInvalid);

  auto second = subscribe(h, 5000);
  h.call<ua::CreateSubscriptionResponse>(ua::CreateSubscriptionRequest{}, &s);
  CHECK(s == status::BadTooManySubscriptions);

  const uint32_t waiting = h.send(ua::PublishRequest{});  // queued; answered when no subscription is left
  ua::DeleteSubscriptionsRequest del;
  del.subscription_ids = {sub.subscription_id, second.subscription_id, 4242};
  auto r = h.call<ua::DeleteSubscriptionsResponse>(del);
  CHECK(r.results ==
        std::vector<ua::StatusCode>{status::Good, status::Good, status::BadSubscriptionIdInvalid});
  CHECK(h.server->subscription_count() == 0);
  CHECK(h.server->monitored_item_count() == 0);
  ServerMessage m;
  REQUIRE(h.wait_response(waiting, m));
  ua::ServiceFault fault;
  REQUIRE(decode_body(m, fault));
  CHECK(fault.response_header.service_result == status::BadNoSubscription);
}

TEST_CASE("subscription: subscriptions go with their session", "[services][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login({}, 50).is_good());
  auto sub = subscribe(h, 1000);
  monitor(h, sub.subscription_id, {plant(".Speed")});
  CHECK(h.server->subscription_count() == 1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (h.server->session_count() > 0 && std::chrono::steady_clock::now() < deadline) {
    h.run_for(std::chrono::milliseconds(20));
  }
  CHECK(h.server->session_count() == 0);
  CHECK(h.server->subscription_count() == 0);
  CHECK(h.server->monitored_item_count() == 0);
}
