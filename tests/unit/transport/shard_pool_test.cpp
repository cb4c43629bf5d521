// ShardPool scheduling: shards pinned to the CPUs the process may use, and SCHED_FIFO when asked for
// (or one line saying why not).
#include <pthread.h>
#include <sched.h>
#include <catch2/catch.hpp>

#include <asio/post.hpp>
#include <future>

#include "transport/shard_pool.hpp"

using namespace opcuad::transport;

namespace {

struct ThreadState {
  std::vector<int> cpus;
  int policy = -1;
  int priority = -1;
};

std::vector<int> cpus_of(const cpu_set_t& set) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// What the shard's own thread reports about itself.
ThreadState state_of(Shard& shard) {
  std::promise<ThreadState> p;
  asio::post(shard.context(), [&p] {
    ThreadState s;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0) s.cpus = cpus_of(set);
    sched_param param{};
    if (pthread_getschedparam(pthread_self(), &s.policy, &param) == 0) s.priority = param.sched_priority;
    p.set_value(s);
  });
  return p.get_future().get();
}

std::vector<int> process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  return cpus_of(set);
}

}  // namespace

TEST_CASE("shard pool: by default shards inherit the process's CPUs and scheduler", "[transport][shards]") {
  ShardPool pool(2);
  CHECK(pool.start().empty());
  for (size_t i = 0; i < pool.size(); ++i) {
    const ThreadState s = state_of(pool.shard(i));
    CHECK(s.cpus == process_cpus());
    CHECK(s.policy == SCHED_OTHER);
  }
  pool.stop();
}

TEST_CASE("shard pool: pinned shards take the allowed CPUs in turn", "[transport][shards]") {
  const std::vector<int> allowed = process_cpus();
  REQUIRE_FALSE(allowed.empty());
  ShardPool pool(static_cast<uint32_t>(allowed.size()) + 1, ShardScheduling{true, 0});
  CHECK(pool.start().empty());
  for (size_t i = 0; i < pool.size(); ++i) {
    INFO("shard " << i);
    CHECK(state_of(pool.shard(i)).cpus == std::vector<int>{allowed[i % allowed.size()]});
  }
  pool.stop();
}

TEST_CASE("shard pool: a realtime priority is applied, or refused with a reason", "[transport][shards]") {
  ShardPool pool(1, ShardScheduling{false, 3});
  const std::vector<std::string> problems = pool.start();
  const ThreadState s = state_of(pool.shard(0));
  if (problems.empty()) {
    CHECK(s.policy == SCHED_FIFO);
    CHECK(s.priority == 3);
  } else {
    // Without CAP_SYS_NICE: one line naming the shard, the priority and the reason; the shard still runs.
    REQUIRE(problems.size() == 1);
    CHECK(problems[0].starts_with("shard 0: SCHED_FIFO priority 3 refused: "));
    CHECK(problems[0].find("CAP_SYS_NICE") != std::string::npos);
    CHECK(s.policy == SCHED_OTHER);
  }
  pool.stop();
}
