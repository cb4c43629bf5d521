#include <catch2/catch.hpp>

#include <asio/post.hpp>

#include <chrono>
#include <thread>

#include "daemon/metrics.hpp"
#include "tests/unit/daemon/prometheus_parser.hpp"
#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using opcuad::test::parse_prometheus;
using opcuad::test::PromExposition;

TEST_CASE("Log2Histogram: bucket b holds values up to base * 2^b, the last slot the rest", "[metrics]") {
  using H = services::RequestLatency;  // base 1 µs, 21 buckets
  CHECK(H::bucket(0) == 0);
  CHECK(H::bucket(1000) == 0);
  CHECK(H::bucket(1001) == 1);
  CHECK(H::bucket(2000) == 1);
  CHECK(H::bucket(2001) == 2);
  CHECK(H::bucket(uint64_t{1000} << 20) == 20);
  CHECK(H::bucket((uint64_t{1000} << 20) + 1) == H::kBuckets);  // +Inf
  CHECK(H::bucket(UINT64_MAX) == H::kBuckets);
  CHECK(H::upper_seconds(0) == Approx(1e-6));
  CHECK(H::upper_seconds(10) == Approx(1.024e-3));
  H h;
  h.record(std::chrono::microseconds(3));
  h.record(std::chrono::nanoseconds(-5));  // a clock that went backwards counts as 0
  CHECK(services::stat_get(h.counts[2]) == 1);
  CHECK(services::stat_get(h.counts[0]) == 1);
  CHECK(services::stat_get(h.sum_ns) == 3000);
}

TEST_CASE("render_prometheus: the exposition parses, and its figures follow the traffic", "[metrics]") {
  services::test::ServiceHarness h;
  transport::ShardPool pool(1);  // not started: the transport figures are zero, the heartbeat never beat
  metrics::DaemonCounters daemon;
  const auto not_after = std::chrono::system_clock::time_point(std::chrono::seconds(1'900'000'000));
  const metrics::Sources src{pool, *h.server, daemon, std::chrono::system_clock::now(), "1.2.3", not_after};

  PromExposition before;
  std::string error;
  const std::string first = metrics::render_prometheus(src);
  INFO(first);
  REQUIRE(parse_prometheus(first, before, error));
  INFO(error);
  CHECK(before.value("opcuad_build_info", {{"version", "1.2.3"}}) == 1);
  CHECK(before.value("opcuad_certificate_expiry_timestamp_seconds") == 1'900'000'000);
  CHECK(before.value("opcuad_sessions_created_total") == 0);
  CHECK(before.value("opcuad_requests_total", {{"service", "Read"}}) == 0);
  CHECK(before.value("opcuad_shard_heartbeat_age_seconds", {{"shard", "0"}}) == INFINITY);
  CHECK(before.types.at("opcuad_request_duration_seconds") == "histogram");
  CHECK(before.types.at("opcuad_publish_wait_seconds") == "histogram");
  CHECK(before.types.at("opcuad_secure_channels") == "gauge");

  REQUIRE(h.login().is_good());
  h.read(services::test::plant(".Speed"));
  h.read(services::test::plant(".Speed"));
  daemon.reloads.store(2);

  PromExposition after;
  const std::string second = metrics::render_prometheus(src);
  REQUIRE(parse_prometheus(second, after, error));
  CHECK(after.value("opcuad_sessions_created_total") == 1);
  CHECK(after.value("opcuad_sessions") == 1);
  CHECK(after.value("opcuad_requests_total", {{"service", "Read"}}) == 2);
  CHECK(after.value("opcuad_requests_total", {{"service", "CreateSession"}}) == 1);
  CHECK(after.value("opcuad_requests_total", {{"service", "ActivateSession"}}) == 1);
  CHECK(after.value("opcuad_request_duration_seconds_count") == 4);
  CHECK(after.value("opcuad_request_duration_seconds_sum") > 0);
  CHECK(after.value("opcuad_shard_requests_total", {{"shard", "0"}}) == 4);
  CHECK(after.value("opcuad_reloads_total") == 2);
}

TEST_CASE("http_routes: /healthz follows the shards' heartbeats, /metrics is the exposition, others 404",
          "[metrics][http][live]") {
  services::test::ServiceHarness h;
  transport::ShardPool pool(2);
  metrics::DaemonCounters daemon;
  const metrics::Sources src{pool, *h.server, daemon, std::chrono::system_clock::now(), "1", {}};
  const auto routes = metrics::http_routes(src, std::chrono::milliseconds(800));

  CHECK(routes("/healthz").status == 503);  // no shard has run yet
  pool.start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (routes("/healthz").status != 200 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(routes("/healthz").status == 200);

  // A handler that holds shard 1 stops its heartbeat: unhealthy until the loop turns again.
  std::atomic<bool> release{false};
  asio::post(pool.shard(1).context(), [&release] {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  const auto stuck = routes("/healthz");
  CHECK(stuck.status == 503);
  CHECK(stuck.body.find("ms ago") != std::string::npos);
  release.store(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(routes("/healthz").status == 200);

  const auto m = routes("/metrics");
  CHECK(m.status == 200);
  CHECK(m.content_type.find("version=0.0.4") != std::string::npos);
  PromExposition e;
  std::string error;
  CHECK(parse_prometheus(m.body, e, error));
  CHECK(e.value("opcuad_shard_heartbeat_age_seconds", {{"shard", "1"}}) < 0.8);
  CHECK(routes("/").status == 404);
  CHECK(routes("/metricsx").status == 404);
  pool.stop();
}

TEST_CASE("parse_prometheus refuses what Prometheus would", "[metrics]") {
  PromExposition e;
  std::string error;
  CHECK_FALSE(
      parse_prometheus("# HELP opcuad_x_total x\n# TYPE opcuad_x_total counter\nopcuad_x_total 1", e, error));
  e = {};
  CHECK_FALSE(parse_prometheus("opcuad_x_total 1\n# HELP opcuad_x_total x\n# TYPE opcuad_x_total counter\n",
                               e, error));
  e = {};
  CHECK_FALSE(
      parse_prometheus("# HELP opcuad_x x\n# TYPE opcuad_x counter\nopcuad_x 1\n", e, error));  // no _total
  e = {};
  CHECK_FALSE(parse_prometheus("# HELP opcuad_x x\n# TYPE opcuad_x gauge\nopcuad_x{a=\"1} 1\n", e, error));
  e = {};
  CHECK_FALSE(
      parse_prometheus("# HELP opcuad_h x\n# TYPE opcuad_h histogram\nopcuad_h_bucket{le=\"1\"} 2\n"
                       "opcuad_h_bucket{le=\"+Inf\"} 1\nopcuad_h_sum 1\nopcuad_h_count 1\n",
                       e, error));  // not cumulative
  e = {};
  CHECK(
      parse_prometheus("# HELP opcuad_h x\n# TYPE opcuad_h histogram\nopcuad_h_bucket{le=\"1\"} 1\n"
                       "opcuad_h_bucket{le=\"+Inf\"} 2\nopcuad_h_sum 1.5\nopcuad_h_count 2\n",
                       e, error));
}
