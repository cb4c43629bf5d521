// timer_floor: how late this machine wakes a thread that sleeps to absolute deadlines, with no other work.
// It is the floor under the Sampler's lateness (the p99 < 1 ms jitter target, docs/PERFORMANCE.md): a
// sampling tick cannot start earlier than the operating system runs its thread. Run it pinned where the
// server's shard would run:
//
//   taskset -c 0 timer_floor [period_ms=10] [wakeups=500]
//
// Prints the median, p99 and largest lateness and how many wake-ups were more than 250 µs / 1 ms late.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const double period_ms = argc > 1 ? std::atof(argv[1]) : 10.0;
  const long wakeups = argc > 2 ? std::atol(argv[2]) : 500;
  if (period_ms <= 0 || wakeups <= 0) {
    std::fprintf(stderr, "usage: timer_floor [period_ms > 0] [wakeups > 0]\n");
    return 2;
  }
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(period_ms));
  std::vector<double> late_us;
  late_us.reserve(static_cast<size_t>(wakeups));
  auto deadline = Clock::now();
  for (long i = 0; i < wakeups; ++i) {
    deadline += period;
    std::this_thread::sleep_until(deadline);
    late_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - deadline).count());
  }
  std::sort(late_us.begin(), late_us.end());
  const auto over = [&](double us) {
    return late_us.end() - std::upper_bound(late_us.begin(), late_us.end(), us);
  };
  const size_t n = late_us.size();
  std::printf(
      "timer floor: %zu wake-ups every %g ms; late p50 %.0f us, p99 %.0f us, max %.0f us; > 250 us: %ld, > 1 "
      "ms: %ld\n",
      n, period_ms, late_us[n / 2], late_us[std::min(n - 1, n * 99 / 100)], late_us.back(),
      static_cast<long>(over(250)), static_cast<long>(over(1000)));
  return 0;
}
