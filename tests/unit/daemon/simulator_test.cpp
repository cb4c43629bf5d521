// The simulator drives the variables the node files give a `simulation`, and a reload's plan replaces
// them (docs/OPERATIONS.md, "Reload"): a removed source stops, a new one starts, an unchanged one goes on.
#include <catch2/catch.hpp>

#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include "config/address_space_loader.hpp"
#include "daemon/simulator.hpp"

using namespace opcuad;

namespace {

config::LoadResult load(const std::string& nodes) {
  config::LoadResult r = config::load_config_text(R"({"namespaces": ["urn:t"]})", "server.json", ".");
  config::load_node_file_text(nodes, "nodes.json", r);
  config::check_references(r);
  for (const auto& e : r.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(r.ok());
  return r;
}

// Counters every 5 ms: each tick adds one.
std::string nodes(bool a, bool b, bool c) {
  const std::string sim =
      R"(, "simulation": {"kind": "counter", "interval_ms": 5, "step": 1, "min": 0, "max": 1000000})";
  std::string s = R"({"namespaces": ["urn:t"], "nodes": [{"kind": "folder", "name": "P", "children": [
    {"kind": "variable", "name": "A", "data_type": "Int32", "value": 0)" +
                  (a ? sim : "") + R"(},
    {"kind": "variable", "name": "B", "data_type": "Int32", "value": 0)" +
                  (b ? sim : "") + "}";
  if (c) s += R"(, {"kind": "variable", "name": "C", "data_type": "Int32", "value": 0)" + sim + "}";
  return s + "]}]}";
}

struct Fixture {
  explicit Fixture(const std::string& first) : loaded(load(first)) {
    p = space.reclaimer().register_participant();
    REQUIRE(config::build_address_space(loaded.config, space, *p).empty());
    server = std::make_unique<services::Server>(space, loaded.config);
    server->attach_shard(ctx);
  }
  ~Fixture() {
    asio::post(ctx, [this] { simulator->stop(); });
    ctx.restart();
    ctx.run_for(std::chrono::milliseconds(50));
  }
  int32_t value(const char* name) {
    const auto* store = space.current();
    const auto n = store->find(ua::NodeId(2, ua::String(std::string("P.") + name)));
    if (n == addressspace::kNoNode) return -1;
    ua::DataValue dv;
    addressspace::ValueStore::read(*store->variable(n)->cell, dv);
    const int32_t* v = dv.value.get_if<int32_t>();
    REQUIRE(v);
    return *v;
  }
  void run(int ms) {
    ctx.restart();
    ctx.run_for(std::chrono::milliseconds(ms));
  }
  config::LoadResult loaded;
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* p = nullptr;
  asio::io_context ctx;
  std::unique_ptr<services::Server> server;
  std::unique_ptr<Simulator> simulator;
};

}  // namespace

TEST_CASE("simulator: a reload's plan stops removed sources, starts new ones, keeps unchanged ones",
          "[daemon][simulator]") {
  Fixture f(nodes(true, false, false));
  f.simulator = std::make_unique<Simulator>(f.ctx, f.space, f.loaded.config, *f.server);
  CHECK(f.simulator->variable_count() == 1);
  f.simulator->start();
  f.run(100);
  const int32_t a1 = f.value("A");
  CHECK(a1 > 0);
  CHECK(f.value("B") == 0);

  SECTION("A stays simulated, B and the new C start") {
    const config::LoadResult next = load(nodes(true, true, true));
    REQUIRE(config::reload_address_space(f.loaded.config, next.config, f.space, *f.p).errors.empty());
    CHECK(f.simulator->rewire(next.config) == 3);
    f.run(100);
    CHECK(f.value("A") > a1);  // went on from where it was: the counter did not restart
    CHECK(f.value("B") > 0);
    CHECK(f.value("C") > 0);
  }
  SECTION("A's simulation removed: it keeps its last value; B starts") {
    const config::LoadResult next = load(nodes(false, true, false));
    REQUIRE(config::reload_address_space(f.loaded.config, next.config, f.space, *f.p).errors.empty());
    CHECK(f.simulator->rewire(next.config) == 1);
    f.run(20);  // the switch happens at the shard's next turn
    const int32_t a2 = f.value("A");
    f.run(100);
    CHECK(f.value("A") == a2);
    CHECK(f.value("B") > 0);
  }
  SECTION("a rewire that reaches the shard before start() runs the newest plan from the start") {
    Fixture g(nodes(true, false, false));
    g.simulator = std::make_unique<Simulator>(g.ctx, g.space, g.loaded.config, *g.server);
    const config::LoadResult next = load(nodes(false, true, false));
    REQUIRE(config::reload_address_space(g.loaded.config, next.config, g.space, *g.p).errors.empty());
    CHECK(g.simulator->rewire(next.config) == 1);
    g.simulator->start();  // queued after the rewire
    g.run(100);
    CHECK(g.value("A") == 0);
    CHECK(g.value("B") > 0);
  }
}

// The simulator is an epoch participant of its own (on shard 0's thread). Between its ticks it is
// offline: a simulator with nothing to simulate, or only slow groups, must not hold every other thread's
// retired values (a client's string writes, an alarm's texts) until a tick that never comes.
TEST_CASE("simulator: between its ticks it holds no retired object back", "[daemon][simulator][epoch]") {
  for (const bool simulating : {false, true}) {
    INFO("simulating " << simulating);
    Fixture f(nodes(simulating, false, false));
    f.space.reclaimer().go_offline(*f.p);  // the building thread is done
    f.simulator = std::make_unique<Simulator>(f.ctx, f.space, f.loaded.config, *f.server);
    f.simulator->start();
    f.run(20);
    auto* writer = f.space.reclaimer().register_participant(/*hurried=*/true);
    REQUIRE(writer);
    static int freed = 0;
    freed = 0;
    f.space.reclaimer().retire(*writer, new int(1), [](void* o) noexcept {
      delete static_cast<int*>(o);
      ++freed;
    });
    // The shard passes its quick quiescent points while a hurried participant waits (Server::reclaim_soon,
    // armed by its sweep); the simulator is offline except inside a tick.
    for (int i = 0; i < 100 && freed == 0; ++i) {
      f.run(5);
      f.space.reclaimer().quiescent(*writer);
    }
    CHECK(freed == 1);
    f.space.reclaimer().go_offline(*writer);
  }
}
