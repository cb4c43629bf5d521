// EventInbox: the bounded lock-free ring between event producers (any thread) and one shard.
#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "services/event_inbox.hpp"

namespace opcuad::services::event_inbox_test {

TEST_CASE("event inbox: records come out in order; a full ring drops and counts", "[services][events]") {
  EventInbox in;
  CHECK(in.pop() == nullptr);
  std::vector<std::shared_ptr<const EventRecord>> records;
  for (size_t i = 0; i < EventInbox::kCapacity + 3; ++i)
    records.push_back(std::make_shared<const EventRecord>());
  for (size_t i = 0; i < EventInbox::kCapacity; ++i) REQUIRE(in.push(records[i]));
  CHECK_FALSE(in.push(records[EventInbox::kCapacity]));
  CHECK_FALSE(in.push(records[EventInbox::kCapacity + 1]));
  CHECK(in.dropped() == 2);
  CHECK(in.take_lost() == 2);
  CHECK(in.take_lost() == 0);
  CHECK(in.pop() == records[0]);
  // One slot free again: the next push takes it, the one after is dropped.
  CHECK(in.push(records[EventInbox::kCapacity + 2]));
  CHECK_FALSE(in.push(records[EventInbox::kCapacity]));
  for (size_t i = 1; i < EventInbox::kCapacity; ++i) REQUIRE(in.pop() == records[i]);
  CHECK(in.pop() == records[EventInbox::kCapacity + 2]);
  CHECK(in.pop() == nullptr);
  CHECK(in.dropped() == 3);
  // The ring gave every reference back.
  for (const auto& r : records) CHECK(r.use_count() == 1);
}

TEST_CASE("event inbox: four producers and a consumer, each record once and in each producer's order",
          "[services][events]") {
  constexpr int kProducers = 4;
  constexpr size_t kEach = 20000;
  EventInbox in;
  std::vector<std::vector<std::shared_ptr<const EventRecord>>> made(kProducers);
  std::unordered_map<const EventRecord*, std::pair<int, size_t>> whose;
  for (int p = 0; p < kProducers; ++p) {
    for (size_t i = 0; i < kEach; ++i) {
      made[p].push_back(std::make_shared<const EventRecord>());
      whose[made[p].back().get()] = {p, i};
    }
  }
  std::atomic<bool> go{false};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      while (!go.load()) std::this_thread::yield();
      // A full ring refuses: retry, so that every record arrives and the order can be checked.
      for (size_t i = 0; i < kEach; ++i) {
        while (!in.push(made[p][i])) std::this_thread::yield();
      }
    });
  }
  go = true;
  std::vector<size_t> next(kProducers, 0);
  size_t received = 0;
  bool in_order = true;
  while (received < kProducers * kEach) {
    auto r = in.pop();
    if (!r) {
      std::this_thread::yield();
      continue;
    }
    const auto [p, i] = whose.at(r.get());
    in_order = in_order && i == next[p];
    next[p] = i + 1;
    ++received;
  }
  for (auto& t : producers) t.join();
  CHECK(in_order);
  CHECK(in.pop() == nullptr);
  for (int p = 0; p < kProducers; ++p) CHECK(next[p] == kEach);
  // Refused pushes were counted as dropped; every record that got in came out exactly once.
  CHECK(in.dropped() == in.take_lost());
}

}  // namespace opcuad::services::event_inbox_test
