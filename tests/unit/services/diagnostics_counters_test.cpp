// Each ServerDiagnosticsSummary counter (Part 5 §12.9) and each per-shard service counter moves when its
// event happens, and only then.
#include <catch2/catch.hpp>

#include "daemon/metrics.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {

ua::ServerDiagnosticsSummaryDataType summary(ServiceHarness& h) {
  transport::TransportTotals t;
  t.add(h.stats);
  return metrics::diagnostics_summary(t, h.server->totals());
}

size_t service_index(std::string_view name) {
  for (size_t i = 0; i < services::Server::service_count(); ++i) {
    if (services::Server::service_name(i) == name) return i;
  }
  FAIL("no service " << name);
  return 0;
}

}  // namespace

TEST_CASE("Diagnostics: sessions created, closed, and counted as current", "[services][diagnostics]") {
  ServiceHarness h;
  CHECK(transport::TransportStats::get(h.stats.channels_opened[0]) == 1);  // the harness's channel, None
  REQUIRE(h.login().is_good());
  auto d = summary(h);
  CHECK(d.cumulated_session_count == 1);
  CHECK(d.current_session_count == 1);
  CHECK(d.rejected_session_count == 0);
  CHECK(d.security_rejected_session_count == 0);
  ua::CloseSessionRequest close;
  close.delete_subscriptions = true;
  h.call<ua::CloseSessionResponse>(close);
  d = summary(h);
  CHECK(d.cumulated_session_count == 1);
  CHECK(d.current_session_count == 0);
  CHECK(h.server->totals().sessions_closed == 1);
  CHECK(d.session_timeout_count == 0);
}

TEST_CASE("Diagnostics: a wrong password is a failed login and a security-rejected session",
          "[services][diagnostics][login]") {
  ServiceHarness h;
  REQUIRE(h.login(user("alice", "wrong")) == ua::status::BadUserAccessDenied);
  const auto t = h.server->totals();
  CHECK(t.failed_logins == 1);
  const auto d = summary(h);
  CHECK(d.rejected_session_count == 1);
  CHECK(d.security_rejected_session_count == 1);
  CHECK(d.cumulated_session_count == 1);  // CreateSession succeeded; ActivateSession was refused
  REQUIRE(h.login(user("alice", "secret")).is_good());
  CHECK(h.server->totals().failed_logins == 1);
  CHECK(summary(h).rejected_session_count == 1);
}

TEST_CASE("Diagnostics: a session refused for the server's limit is rejected, not for security",
          "[services][diagnostics]") {
  ServiceHarness h;  // max_sessions 3
  for (int i = 0; i < 3; ++i) REQUIRE(h.login().is_good());
  CHECK(h.login() == ua::status::BadTooManySessions);
  const auto d = summary(h);
  CHECK(d.rejected_session_count == 1);
  CHECK(d.security_rejected_session_count == 0);
  CHECK(d.cumulated_session_count == 3);
  CHECK(d.current_session_count == 3);
}

TEST_CASE("Diagnostics: requests refused by the session checks are rejected and security-rejected requests",
          "[services][diagnostics]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const size_t read = service_index("Read");
  h.read(plant(".Speed"));
  auto t = h.server->totals();
  CHECK(t.requests[read] == 1);
  CHECK(t.faults[read] == 0);
  CHECK(summary(h).rejected_requests_count == 0);

  // A Read with a token nobody issued: BadSessionIdInvalid, a security rejection.
  const ua::NodeId real = h.token;
  h.token = ua::NodeId(0, 424242);
  ua::StatusCode fault;
  ua::ReadRequest r;
  r.nodes_to_read.push_back(ua::ReadValueId{plant(".Speed"), 13, {}, {}});
  h.call<ua::ReadResponse>(r, &fault);
  CHECK(fault == ua::status::BadSessionIdInvalid);
  h.token = real;
  // A Read with nothing to read: BadNothingToDo, rejected but not for security.
  h.call<ua::ReadResponse>(ua::ReadRequest{}, &fault);
  CHECK(fault == ua::status::BadNothingToDo);

  t = h.server->totals();
  CHECK(t.requests[read] == 3);
  CHECK(t.faults[read] == 2);
  const auto d = summary(h);
  CHECK(d.rejected_requests_count == 2);
  CHECK(d.security_rejected_requests_count == 1);
  CHECK(transport::TransportStats::get(
            h.stats.faults[transport::fault_slot(ua::status::BadSessionIdInvalid)]) == 1);
  CHECK(transport::TransportStats::get(h.stats.faults[transport::fault_slot(ua::status::BadNothingToDo)]) ==
        1);
  CHECK(transport::fault_slot(ua::status::BadNodeIdUnknown) == transport::kCountedFaults.size());  // "other"
  CHECK(t.request_latency.count() == 5);  // CreateSession, ActivateSession, three Reads
}

TEST_CASE("Diagnostics: a session that times out counts in SessionTimeoutCount", "[services][diagnostics]") {
  ServiceHarness h;
  REQUIRE(h.login({}, 50).is_good());  // the harness's minimum timeout
  CHECK(summary(h).session_timeout_count == 0);
  h.run_for(std::chrono::milliseconds(400));  // the sweep runs every 250 ms
  const auto d = summary(h);
  CHECK(d.session_timeout_count == 1);
  CHECK(d.current_session_count == 0);
  CHECK(d.session_abort_count == 0);
}

TEST_CASE("Diagnostics: subscriptions and monitored items, current and cumulated; Publish waits are timed",
          "[services][diagnostics][subscription]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t a = subscribe(h).subscription_id;
  const uint32_t b = subscribe(h).subscription_id;
  REQUIRE(monitor(h, a, ItemSpec{plant(".Speed")}).status_code.is_good());
  auto d = summary(h);
  CHECK(d.current_subscription_count == 2);
  CHECK(d.cumulated_subscription_count == 2);
  CHECK(d.publishing_interval_count == 1);  // both at 20 ms
  ua::ModifySubscriptionRequest modify;
  modify.subscription_id = b;
  modify.requested_publishing_interval = 500;
  modify.requested_max_keep_alive_count = 10;
  modify.requested_lifetime_count = 100;
  h.call<ua::ModifySubscriptionResponse>(modify);
  CHECK(summary(h).publishing_interval_count == 2);
  auto t = h.server->totals();
  CHECK(t.current_monitored_items == 1);
  CHECK(t.monitored_items_created == 1);
  CHECK(t.subscriptions_created == 2);

  CHECK(t.publish_latency.count() == 0);
  publish(h);  // the first one carries the item's initial value
  t = h.server->totals();
  CHECK(t.publish_latency.count() == 1);

  ua::DeleteSubscriptionsRequest del;
  del.subscription_ids = {a};
  h.call<ua::DeleteSubscriptionsResponse>(del);
  d = summary(h);
  CHECK(d.current_subscription_count == 1);
  CHECK(d.cumulated_subscription_count == 2);
  CHECK(d.publishing_interval_count == 1);  // only the 500 ms one is left
  CHECK(h.server->totals().current_monitored_items == 0);
  CHECK(h.server->totals().monitored_items_created == 1);
}

TEST_CASE("Diagnostics: sessions the server ends while open count in SessionAbortCount",
          "[services][diagnostics]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.server->detach_shards();  // what shutdown does
  h.run_for(std::chrono::milliseconds(5));
  CHECK(summary(h).session_abort_count == 1);
}
