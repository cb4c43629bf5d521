// AddressSpace::publish(): every published store gets a new generation, so a reader that remembers one
// tells a new store from the old even when the new one is allocated where the old one was.
#include <catch2/catch.hpp>

#include "addressspace/address_space.hpp"
#include "addressspace/node_store_builder.hpp"
#include "addressspace/store_diff.hpp"

using namespace opcuad;
using namespace opcuad::addressspace;

namespace {

std::unique_ptr<NodeStore> store_of(AddressSpace& space, EpochReclaimer::Participant& p,
                                    std::initializer_list<const char*> variables) {
  NodeStoreBuilder b(space.values(), p, space.current());
  NodeSpec type;
  type.node_id = ua::NodeId(0, ua::id::BaseDataType);
  type.node_class = NodeClass::DataType;
  b.add_node(type);
  for (const char* name : variables) {
    NodeSpec v;
    v.node_id = ua::NodeId(1, ua::String(name));
    v.node_class = NodeClass::Variable;
    v.browse_name.name = ua::String(name);
    ua::DataValue dv;
    dv.value = ua::Variant(int32_t{1});
    v.value = dv;
    b.add_node(v);
  }
  auto built = b.build();
  REQUIRE(built.errors.empty());
  return std::move(built.store);
}

}  // namespace

TEST_CASE("address space: each published store has a generation of its own", "[addressspace][reload]") {
  AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  auto first = store_of(space, *p, {"a"});
  CHECK(first->generation() == 0);  // not published yet
  space.publish(std::move(first), *p);
  const uint64_t g1 = space.current()->generation();
  CHECK(g1 == 1);
  space.publish(store_of(space, *p, {"a"}), *p);
  CHECK(space.current()->generation() == g1 + 1);
  // The first store is freed once the participant passed two quiescent points; whatever the allocator then
  // does with its address, the generation a continuation point remembers stays unequal.
  space.reclaimer().quiescent(*p);
  space.reclaimer().quiescent(*p);
  space.reclaimer().quiescent(*p);
  CHECK(p->retired_count() == 0);
  space.publish(store_of(space, *p, {"a"}), *p);
  CHECK(space.current()->generation() == g1 + 2);
}

TEST_CASE("address space: a rebuilt store reuses cells by NodeId; diff counts nodes",
          "[addressspace][reload]") {
  AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  space.publish(store_of(space, *p, {"a", "c"}), *p);
  const NodeStore& before = *space.current();
  const ValueCell* a = before.variable(before.find(ua::NodeId(1, ua::String("a"))))->cell;
  auto next = store_of(space, *p, {"a", "b"});
  CHECK(next->variable(next->find(ua::NodeId(1, ua::String("a"))))->cell == a);
  CHECK(diff_stores(before, *next) == StoreDiff{1, 1, 0});
  // The same walk as model changes (Part 5 §12.16), and cut at a bound.
  ModelChanges all;
  CHECK(diff_stores(before, *next, &all) == StoreDiff{1, 1, 0});
  CHECK(all.complete);
  bool deleted_c = false, added_b = false;
  for (const ModelChange& c : all.entries) {
    deleted_c |= c.affected == ua::NodeId(1, ua::String("c")) && c.verb == model_verb::kNodeDeleted;
    added_b |= c.affected == ua::NodeId(1, ua::String("b")) && c.verb == model_verb::kNodeAdded;
    CHECK(c.verb != 0);
  }
  CHECK(deleted_c);
  CHECK(added_b);
  ModelChanges cut;
  diff_stores(before, *next, &cut, 1);
  CHECK_FALSE(cut.complete);
  CHECK(cut.entries.size() == 1);
}
