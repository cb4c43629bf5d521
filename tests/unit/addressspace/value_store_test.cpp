// Seqlock value cells and epoch reclamation: no torn values while writers write (run under TSan too).
#include <catch2/catch.hpp>

#include <thread>

#include "addressspace/address_space.hpp"
#include "addressspace/node_store_builder.hpp"
#include "addressspace/value_store.hpp"
#include "tests/unit/services/allocation_counter.hpp"

using namespace opcuad;
using namespace opcuad::addressspace;

namespace {
ua::DataValue dv(ua::Variant v, int64_t ts = 0) {
  ua::DataValue d;
  d.value = std::move(v);
  d.source_timestamp = ua::DateTime{ts};
  return d;
}
}  // namespace

TEST_CASE("addressspace: value cell is one cache line and round-trips every kind of value",
          "[addressspace][values]") {
  STATIC_REQUIRE(sizeof(ValueCell) == 64);
  STATIC_REQUIRE(alignof(ValueCell) == 64);
  ValueStore store(4);
  auto* p = store.reclaimer().register_participant();
  ValueCell* cell = store.allocate(ua::NodeId(1, 7));
  REQUIRE(cell);
  ua::DataValue out;  // reused, as a Read response's results are: each read replaces all of it
  for (const ua::Variant& v : {ua::Variant(true), ua::Variant(int8_t{-3}), ua::Variant(uint16_t{7}),
                               ua::Variant(int64_t{-1} << 40), ua::Variant(2.5f), ua::Variant(-1e300),
                               ua::Variant(ua::DateTime{12345}), ua::Variant(ua::StatusCode(0x80340000u)),
                               ua::Variant(ua::String("text")), ua::Variant(std::vector<double>{1, 2}),
                               ua::Variant::matrix(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3}),
                               ua::Variant(ua::LocalizedText{"en", "x"}), ua::Variant()}) {
    ua::DataValue in = dv(v, 99);
    in.status = ua::status::UncertainLastUsableValue;
    in.source_picoseconds = 5;
    in.server_picoseconds = 6;
    store.write(*cell, in, *p);
    ValueStore::read(*cell, out);
    CHECK(out == in);
    // The same through the Write service's form (value and stamp apart), inline after boxed and back.
    store.write(*cell, v, {in.status, in.source_timestamp, in.server_timestamp, 5, 6}, *p);
    ua::DataValue again;
    ValueStore::read(*cell, again);
    CHECK(again == in);
  }
  CHECK(ValueStore::version(*cell) == 26);
  store.reclaimer().quiescent(*p);
}

TEST_CASE("addressspace: version counts writes so sampling copies only on change", "[addressspace][values]") {
  ValueStore store;
  auto* p = store.reclaimer().register_participant();
  ValueCell* cell = store.allocate(ua::NodeId(0, 1));
  uint64_t seen = ValueStore::version(*cell);
  ua::DataValue out;
  CHECK_FALSE(ValueStore::read_if_changed(*cell, seen, out));
  store.write(*cell, dv(1.0), *p);
  CHECK(ValueStore::read_if_changed(*cell, seen, out));
  CHECK(*out.value.get_if<double>() == 1.0);
  CHECK_FALSE(ValueStore::read_if_changed(*cell, seen, out));
  store.write(*cell, dv(1.0), *p);  // the same value written again is still a write
  CHECK(ValueStore::read_if_changed(*cell, seen, out));
  CHECK(seen == 2);
}

TEST_CASE("addressspace: cells keep their address while the store grows", "[addressspace][values]") {
  ValueStore store(2);
  auto* p = store.reclaimer().register_participant();
  ValueCell* first = store.allocate(ua::NodeId(0, 1));
  store.write(*first, dv(int32_t{42}), *p);
  for (uint32_t i = 0; i < 20000; ++i) REQUIRE(store.allocate(ua::NodeId(2, i)) != nullptr);
  ua::DataValue out;
  ValueStore::read(*first, out);
  CHECK(*out.value.get_if<int32_t>() == 42);
  CHECK(store.cell_count() == 20001);
  CHECK(store.bytes() >= 20001 * sizeof(ValueCell));
}

TEST_CASE("addressspace: epoch reclaimer frees only after every participant passed a quiescent point",
          "[addressspace][epoch]") {
  EpochReclaimer r(4);
  auto* writer = r.register_participant();
  auto* reader = r.register_participant();
  static int freed = 0;
  freed = 0;
  r.retire(*writer, new int(1), [](void* o) noexcept {
    delete static_cast<int*>(o);
    ++freed;
  });
  for (int i = 0; i < 5; ++i) r.quiescent(*writer);
  CHECK(freed == 0);  // the reader has not passed a quiescent point: it may still hold the pointer
  r.quiescent(*reader);
  r.quiescent(*writer);
  r.quiescent(*reader);
  r.quiescent(*writer);
  CHECK(freed == 1);
  // An offline participant does not hold the epoch back.
  r.go_offline(*reader);
  r.retire(*writer, new int(2), [](void* o) noexcept {
    delete static_cast<int*>(o);
    ++freed;
  });
  for (int i = 0; i < 3; ++i) r.quiescent(*writer);
  CHECK(freed == 2);
  r.go_online(*reader);
  CHECK(writer->retired_count() == 0);
}

TEST_CASE("addressspace: an OnlineScope holds the epoch only for its lifetime, and nests",
          "[addressspace][epoch]") {
  EpochReclaimer r(4);
  auto* writer = r.register_participant();
  auto* control = r.register_participant();
  r.go_offline(*control);  // as the daemon's control thread between its turns
  static int freed = 0;
  freed = 0;
  auto retire_one = [&] {
    r.retire(*writer, new int(1), [](void* o) noexcept {
      delete static_cast<int*>(o);
      ++freed;
    });
  };
  retire_one();
  for (int i = 0; i < 3; ++i) r.quiescent(*writer);
  CHECK(freed == 1);  // the offline control thread held nothing back
  {
    const EpochReclaimer::OnlineScope outer(r, *control);
    CHECK(r.online(*control));
    { const EpochReclaimer::OnlineScope inner(r, *control); }
    CHECK(r.online(*control));  // the inner scope found it online and left it so
    retire_one();
    for (int i = 0; i < 5; ++i) r.quiescent(*writer);
    CHECK(freed == 1);  // online: it may hold the pointer
  }
  CHECK_FALSE(r.online(*control));
  for (int i = 0; i < 3; ++i) r.quiescent(*writer);
  CHECK(freed == 2);
}

TEST_CASE("addressspace: waiting() counts the hurried participants with retired objects",
          "[addressspace][epoch]") {
  EpochReclaimer r(4);
  auto* shard = r.register_participant(/*hurried=*/true);
  auto* control = r.register_participant();
  auto noop = [](void* o) noexcept { delete static_cast<int*>(o); };
  CHECK(r.waiting() == 0);
  r.retire(*control, new int(0), noop);
  CHECK(r.waiting() == 0);  // not hurried: the shards need not hurry for it
  r.retire(*shard, new int(1), noop);
  r.retire(*shard, new int(2), noop);
  CHECK(r.waiting() == 1);  // one participant, however many objects
  r.quiescent(*shard);
  CHECK(r.waiting() == 1);  // the control thread has not passed a quiescent point yet
  r.go_offline(*control);
  r.quiescent(*shard);
  r.quiescent(*shard);
  CHECK(shard->retired_count() == 0);
  CHECK(r.waiting() == 0);
  r.go_online(*control);
  r.quiescent(*control);
}

TEST_CASE("addressspace: publishing a new store retires the old one safely", "[addressspace][epoch]") {
  AddressSpace space;
  auto* control = space.reclaimer().register_participant();
  auto* shard = space.reclaimer().register_participant();
  auto make = [&](uint32_t id) {
    NodeStoreBuilder b(space.values(), *control, space.current());
    NodeSpec spec;
    spec.node_id = ua::NodeId(1, id);
    spec.node_class = NodeClass::Object;
    spec.browse_name = {1, "N"};
    REQUIRE(b.add_node(spec));
    auto r = b.build();
    REQUIRE(r.errors.empty());
    return std::move(r.store);
  };
  space.publish(make(1), *control);
  const NodeStore* seen = space.current();  // a shard holds it during its loop turn
  space.publish(make(2), *control);
  for (int i = 0; i < 4; ++i) space.reclaimer().quiescent(*control);
  CHECK(control->retired_count() == 1);
  CHECK(seen->find(ua::NodeId(1, 1)) == 0);  // still readable: the shard has not passed a quiescent point
  space.reclaimer().quiescent(*shard);
  for (int i = 0; i < 3; ++i) {
    space.reclaimer().quiescent(*control);
    space.reclaimer().quiescent(*shard);
  }
  CHECK(control->retired_count() == 0);
  CHECK(space.current()->find(ua::NodeId(1, 2)) == 0);
}

TEST_CASE("addressspace: concurrent readers never see a torn value", "[addressspace][values][concurrency]") {
  ValueStore store(4);
  constexpr int kCells = 4;
  constexpr int kWriters = 2, kReaders = 3;
  constexpr int kWrites = 20000;
  std::vector<ValueCell*> cells;
  auto* init = store.reclaimer().register_participant();
  for (int i = 0; i < kCells; ++i) {
    cells.push_back(store.allocate(ua::NodeId(1, static_cast<uint32_t>(i))));
    ua::DataValue d = dv(ua::Variant(std::vector<int64_t>{0, 0, 0, 0}), 0);
    store.write(*cells.back(), d, *init);
  }
  store.reclaimer().go_offline(*init);
  std::atomic<bool> done{false};
  std::atomic<int64_t> torn{0}, reads{0};
  // Each write stores k in the source timestamp, k in every array element (boxed) or an inline Int64, so
  // a reader can tell a consistent snapshot from a torn one.
  auto writer = [&](int w) {
    auto* p = store.reclaimer().register_participant();
    for (int64_t k = 1; k <= kWrites; ++k) {
      const int64_t v = k * 2 + w;
      ValueCell& c = *cells[static_cast<size_t>(k) % kCells];
      if (k % 3 == 0) {
        store.write(c, dv(ua::Variant(v), v), *p);
      } else {
        store.write(c, dv(ua::Variant(std::vector<int64_t>{v, v, v, v}), v), *p);
      }
      if (k % 64 == 0) store.reclaimer().quiescent(*p);
    }
    store.reclaimer().go_offline(*p);
  };
  auto reader = [&] {
    auto* p = store.reclaimer().register_participant();
    while (!done.load()) {
      for (ValueCell* c : cells) {
        const ValueSnapshot s = ValueStore::snapshot(*c);
        const int64_t ts = s.source_timestamp.ticks;
        if (s.kind == ValueCell::kBoxed) {
          const auto* a = s.boxed->get_if<std::vector<int64_t>>();
          if (!a || a->size() != 4) {
            ++torn;
          } else {
            for (int64_t x : *a) torn += x != ts;
          }
        } else if (static_cast<ua::BuiltinType>(s.kind) == ua::BuiltinType::Int64) {
          torn += static_cast<int64_t>(s.payload) != ts;
        } else {
          ++torn;
        }
        ++reads;
      }
      store.reclaimer().quiescent(*p);
    }
    store.reclaimer().go_offline(*p);
  };
  // Registration is control-plane: do it before starting the threads (each thread registers here in turn).
  std::vector<std::thread> threads;
  for (int i = 0; i < kReaders; ++i) threads.emplace_back(reader);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) writers.emplace_back(writer, i);
  for (auto& t : writers) t.join();
  done = true;
  for (auto& t : threads) t.join();
  CHECK(torn.load() == 0);
  CHECK(reads.load() > 0);
  uint64_t versions = 0;
  for (ValueCell* c : cells) versions += ValueStore::version(*c);
  CHECK(versions == kCells + uint64_t{kWriters} * kWrites);
}

namespace {
// A computed value for the tests: the stored template (a Double) plus the read time in milliseconds, or
// a string when the template is a string (so the result is boxed).
class PlusNowSource final : public ValueSource {
 public:
  void compute(const ua::Variant* stored, ua::DateTime now, ua::Variant& out) const override {
    ++calls;
    if (const auto* s = stored ? stored->get_if<ua::String>() : nullptr) {
      out = ua::String(std::string(s->view()) + "@" + std::to_string(now.ticks));
      return;
    }
    const auto* d = stored ? stored->get_if<double>() : nullptr;
    out = (d ? *d : 0.0) + static_cast<double>(now.to_unix_ms());
  }
  mutable std::atomic<int> calls{0};
};
}  // namespace

TEST_CASE("addressspace: a computed cell reads as its source at the time of the read",
          "[addressspace][values]") {
  ValueStore store;
  auto* p = store.reclaimer().register_participant();
  ValueCell* cell = store.allocate(ua::NodeId(1, 1));
  ValueCell* plain = store.allocate(ua::NodeId(1, 2));
  ua::DataValue initial = dv(1000.0, 7);
  initial.status = ua::status::UncertainLastUsableValue;
  store.write(*cell, initial, *p);
  store.write(*plain, dv(5.0, 7), *p);
  PlusNowSource source;
  CHECK_FALSE(ValueStore::computed(*cell));
  store.set_source(*cell, source, *p);
  store.set_source(*cell, source, *p);  // idempotent
  REQUIRE(ValueStore::computed(*cell));
  CHECK_FALSE(ValueStore::computed(*plain));

  const int64_t before = ua::DateTime::now().to_unix_ms();
  ua::DataValue out;
  ValueStore::read(*cell, out);
  const int64_t after = ua::DateTime::now().to_unix_ms();
  REQUIRE(out.value.get_if<double>());
  const double at = *out.value.get_if<double>() - 1000.0;  // the template is kept and used
  CHECK(at >= static_cast<double>(before));
  CHECK(at <= static_cast<double>(after));
  CHECK(out.status == ua::status::UncertainLastUsableValue);  // the stored status
  CHECK(out.source_timestamp.to_unix_ms() >= before);
  CHECK(out.source_timestamp == out.server_timestamp);

  // With the caller's clock reading (one per Read request) the value and both timestamps are that time.
  const ua::DateTime given = ua::DateTime::from_unix_ms(1'700'000'000'000);
  ValueStore::read(*cell, out, given);
  CHECK(*out.value.get_if<double>() - 1000.0 == 1'700'000'000'000.0);
  CHECK(out.source_timestamp == given);
  CHECK(out.server_timestamp == given);
  ValueStore::read(*plain, out, given);  // an ordinary cell keeps its own timestamps
  CHECK(out.source_timestamp == ua::DateTime{7});

  // The snapshot path (sampling) computes too, inline when the value fits, and its version moves on
  // every read, so change detection never skips a computed cell.
  uint64_t seen = ValueStore::version(*cell);
  CHECK((seen & ValueStore::kComputedVersion) != 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(ValueStore::version(*cell) != seen);
  const ValueSnapshot s = ValueStore::snapshot(*cell);
  CHECK(s.kind == static_cast<uint8_t>(ua::BuiltinType::Double));
  CHECK(s.boxed == nullptr);
  CHECK(ValueStore::read_if_changed(*cell, seen, out));
  CHECK(ValueStore::read_if_changed(*cell, seen, out));

  // write() replaces the template; the cell stays computed. A boxed result comes through the snapshot.
  store.write(*cell, dv(ua::String("tag")), *p);
  CHECK(ValueStore::computed(*cell));
  const ValueSnapshot b = ValueStore::snapshot(*cell);
  REQUIRE(b.kind == ValueCell::kBoxed);
  REQUIRE(b.boxed);
  REQUIRE(b.boxed->get_if<ua::String>());
  CHECK(b.boxed->get_if<ua::String>()->view().starts_with("tag@"));
  ua::DataValue copied;
  b.to_data_value(copied);
  CHECK(copied.value == *b.boxed);

  // Ordinary cells never call a source.
  const int calls = source.calls.load();
  ValueStore::read(*plain, out);
  CHECK(out.value == ua::Variant(5.0));
  CHECK(ValueStore::snapshot(*plain).version == 1);
  CHECK(source.calls.load() == calls);
  store.reclaimer().quiescent(*p);
}

TEST_CASE("value store: a spare cell is kept per NodeId and taken once", "[addressspace][values]") {
  ValueStore values;
  const ua::NodeId x(2, ua::String("X")), y(2, ua::String("Y"));
  CHECK(values.adopt(x) == nullptr);
  ValueCell* a = values.allocate(x);
  ValueCell* b = values.allocate(x);
  values.orphan(x, a);
  values.orphan(x, b);
  values.orphan(y, nullptr);  // nothing to keep
  CHECK(values.orphan_count() == 2);
  CHECK(values.adopt(y) == nullptr);
  ValueCell* first = values.adopt(x);
  ValueCell* second = values.adopt(x);
  CHECK(((first == a && second == b) || (first == b && second == a)));
  CHECK(values.adopt(x) == nullptr);
  CHECK(values.orphan_count() == 0);
}

#ifndef OPCUAD_ALLOCATION_COUNTER_OFF
TEST_CASE("addressspace: boxed writes reuse the boxes the reclaimer freed: a steady stream allocates nothing",
          "[addressspace][values]") {
  ValueStore store(1);
  auto* p = store.reclaimer().register_participant();
  ValueCell* text = store.allocate(ua::NodeId(1, 1));
  ValueCell* id = store.allocate(ua::NodeId(1, 2));
  const ua::Variant texts[2] = {ua::Variant(ua::LocalizedText{"en", "Unacknowledged"}),
                                ua::Variant(ua::LocalizedText{"en", "Acknowledged"})};
  const ua::Variant ids[2] = {ua::Variant(ua::ByteString(std::string(16, 'a'))),
                              ua::Variant(ua::ByteString(std::string(16, 'b')))};
  const ValueStore::ValueStamp stamp{ua::StatusCode(0), ua::DateTime{1}, ua::DateTime{1}, 0, 0};
  auto round = [&](int i) {
    store.write(*text, texts[i % 2], stamp, *p);
    store.write(*id, ids[i % 2], stamp, *p);
    store.reclaimer().quiescent(*p);
  };
  for (int i = 0; i < 16; ++i) round(i);  // warm: the reclaimer's list and the kept boxes reach their size
  opcuad::test::g_allocations = 0;
  opcuad::test::g_counting = true;
  for (int i = 0; i < 100; ++i) round(i);
  opcuad::test::g_counting = false;
  CHECK(opcuad::test::g_allocations == 0);
  ua::DataValue out;
  ValueStore::read(*text, out);
  CHECK(out.value == texts[1]);
  ValueStore::read(*id, out);
  CHECK(out.value == ids[1]);
  // A large value in between (its box is freed rather than kept, value_store.cpp) changes nothing read.
  store.write(*text, ua::Variant(ua::String(std::string(100000, 'x'))), stamp, *p);
  store.write(*text, texts[0], stamp, *p);
  for (int i = 0; i < 4; ++i) store.reclaimer().quiescent(*p);
  ValueStore::read(*text, out);
  CHECK(out.value == texts[0]);
}
#endif
