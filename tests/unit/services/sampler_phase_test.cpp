// The Sampler's phases (the sampling-jitter target, docs/PERFORMANCE.md): sampling groups tick on the steady
// clock's grid of their interval, publishing timers a microsecond after the grid of the fastest sampling
// interval, and periodic writers half an interval off their grid, so none of them falls due together with a
// sampling tick.
#include <catch2/catch.hpp>

#include <chrono>

#include "services/monitored_item.hpp"
#include "services/sampler.hpp"

using namespace opcuad;
using services::Sampler;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {
Clock::duration offset_in(Clock::time_point t, Clock::duration grid) {
  return t.time_since_epoch() % grid;
}
}  // namespace

TEST_CASE("sampler phases: groups start on the grid of their interval", "[services][sampler]") {
  for (const auto now : {Clock::time_point(1234567890123ns), Clock::time_point(100ms), Clock::now()}) {
    for (const Clock::duration interval :
         {Clock::duration(10ms), Clock::duration(250ms), Clock::duration(1s)}) {
      const auto start = Sampler::grid_start(now, interval);
      CHECK(offset_in(start, interval) == 0ns);
      CHECK(start <= now);
      CHECK(now - start < interval);
    }
  }
}

TEST_CASE("sampler phases: publishing falls a microsecond after a fastest-interval tick",
          "[services][sampler]") {
  const Clock::duration fastest =
      std::chrono::milliseconds(static_cast<int>(services::kFastestSamplingIntervalMs));
  for (const auto now : {Clock::time_point(1234567890123ns), Clock::time_point(20ms + 1us), Clock::now()}) {
    const auto start = Sampler::publishing_phase(now);
    CHECK(offset_in(start, fastest) == 1us);
    CHECK(start <= now + 1us);
    CHECK(now - start < fastest);
    // Every whole-millisecond publishing interval keeps it off the sampling instants of every group.
    for (const Clock::duration interval :
         {Clock::duration(10ms), Clock::duration(50ms), Clock::duration(1s)}) {
      CHECK(offset_in(start + 7 * interval, 1ms) == 1us);
    }
  }
}

TEST_CASE("sampler phases: a periodic writer ticks half an interval off the sampling grid",
          "[services][sampler]") {
  for (const auto now : {Clock::time_point(1234567890123ns), Clock::time_point(40ms), Clock::now()}) {
    for (const Clock::duration interval :
         {Clock::duration(10ms), Clock::duration(100ms), Clock::duration(1s)}) {
      const auto first = Sampler::writer_phase(now, interval);
      CHECK(first <= now);  // the simulator writes at once, then every interval from here
      CHECK(now - first < interval + interval / 2);
      CHECK(offset_in(first + interval, interval) == interval / 2);
      // The middle between two sampling ticks of the same interval.
      const auto sample = Sampler::grid_start(first + interval, interval);
      CHECK(first + interval - sample == interval / 2);
    }
  }
}
