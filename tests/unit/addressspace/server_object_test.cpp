// The Server object's live values: opcuad's diagnostics counters (server_object.hpp).
#include <catch2/catch.hpp>

#include "addressspace/namespace0.hpp"
#include "addressspace/server_object.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::addressspace;

namespace {
struct WithCounters {
  ValueStore values;
  EpochReclaimer::Participant* p = values.reclaimer().register_participant();
  std::unique_ptr<NodeStore> store;
  explicit WithCounters(bool counters) {
    NodeStoreBuilder b(values, *p);
    add_namespace0(b);
    if (counters) add_counter_nodes(b, 100);
    auto r = b.build();
    for (auto& e : r.errors) UNSCOPED_INFO(e);
    REQUIRE(r.errors.empty());
    store = std::move(r.store);
  }
  ua::DataValue value(DiagnosticCounter c) const {
    const NodeIndex n = store->find(ua::NodeId(1, ua::String(counter_node_id(c))));
    REQUIRE(n != kNoNode);
    const VariableAttributes* v = store->variable(n);
    REQUIRE(v);
    REQUIRE(v->cell);
    ua::DataValue dv;
    ValueStore::read(*v->cell, dv);
    return dv;
  }
};
}  // namespace

TEST_CASE("addressspace: diagnostics counters are UInt64 variables under Server.ServerDiagnostics",
          "[addressspace][server_object]") {
  WithCounters w(true);
  const NodeStore& s = *w.store;
  const NodeIndex object = s.find(ua::NodeId(1, ua::String("Diagnostics")));
  REQUIRE(object != kNoNode);
  CHECK(s.parent(object) == s.find(ua::NodeId(0, ua::id::Server_ServerDiagnostics)));
  CHECK(s.forward_target(object, s.find(ua::NodeId(0, ua::id::HasTypeDefinition))) ==
        s.find(ua::NodeId(0, ua::id::BaseObjectType)));
  for (size_t i = 0; i < kCounterCount; ++i) {
    const auto c = static_cast<DiagnosticCounter>(i);
    INFO(counter_node_id(c));
    const NodeIndex n = s.find(ua::NodeId(1, ua::String(counter_node_id(c))));
    REQUIRE(n != kNoNode);
    CHECK(s.parent(n) == object);
    const VariableAttributes* v = s.variable(n);
    REQUIRE(v);
    CHECK(v->data_type == s.find(ua::NodeId(0, ua::id::UInt64)));
    CHECK(w.value(c).value == ua::Variant(uint64_t{0}));
  }
  // The Server object itself keeps exactly its namespace-0 references (Browse of i=2253 is unchanged).
  WithCounters without(false);
  const auto server = ua::NodeId(0, ua::id::Server);
  CHECK(s.references(s.find(server)).size() == without.store->references(without.store->find(server)).size());
}

TEST_CASE("addressspace: CounterPublisher writes every counter with one timestamp",
          "[addressspace][server_object]") {
  WithCounters w(true);
  CounterPublisher pub;
  CounterValues v{};
  for (size_t i = 0; i < kCounterCount; ++i) v[i] = 1000 + i;
  const ua::DateTime now = ua::DateTime::now();
  REQUIRE(pub.publish(*w.store, w.values, *w.p, v, now));
  for (size_t i = 0; i < kCounterCount; ++i) {
    const ua::DataValue dv = w.value(static_cast<DiagnosticCounter>(i));
    CHECK(dv.value == ua::Variant(uint64_t{1000 + i}));
    CHECK(dv.source_timestamp == now);
  }
  v[static_cast<size_t>(DiagnosticCounter::WriteCalls)] = 7;
  REQUIRE(pub.publish(*w.store, w.values, *w.p, v, now));
  CHECK(w.value(DiagnosticCounter::WriteCalls).value == ua::Variant(uint64_t{7}));

  WithCounters none(false);
  CounterPublisher absent;
  CHECK_FALSE(absent.publish(*none.store, none.values, *none.p, v, now));
}
