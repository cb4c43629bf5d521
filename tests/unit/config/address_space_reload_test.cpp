// Reloading the node files (SIGHUP, docs/OPERATIONS.md "Reload"): what the new store counts as added,
// removed and changed; which values survive; a failed reload changes nothing; which settings need a restart.
#include <catch2/catch.hpp>

#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "config/password.hpp"
#include "config/reload_settings.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::config;

namespace {

std::string errors_of(const std::vector<ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.to_string() + "\n";
  return s;
}

LoadResult load(const std::string& nodes, const std::string& server = R"({"namespaces": ["urn:t"]})") {
  LoadResult r = load_config_text(server, "server.json", ".");
  load_node_file_text(nodes, "nodes.json", r);
  check_references(r);
  INFO(errors_of(r.errors));
  REQUIRE(r.ok());
  return r;
}

// A: a writable Int32, C: a Double, D: a String whose description the second file changes; B is new there.
const char* kBefore = R"({"namespaces": ["urn:t"], "nodes": [
  {"kind": "folder", "name": "P", "children": [
    {"kind": "variable", "name": "A", "data_type": "Int32", "value": 1, "access": ["read", "write"]},
    {"kind": "variable", "name": "C", "data_type": "Double", "value": 2.5},
    {"kind": "variable", "name": "D", "data_type": "String", "value": "d", "description": "old"}]}]})";
const char* kAfter = R"({"namespaces": ["urn:t"], "nodes": [
  {"kind": "folder", "name": "P", "children": [
    {"kind": "variable", "name": "A", "data_type": "Int32", "value": 1, "access": ["read", "write"]},
    {"kind": "variable", "name": "B", "data_type": "Boolean", "value": true},
    {"kind": "variable", "name": "D", "data_type": "String", "value": "d", "description": "new"}]}]})";

// `s` with its first `from` replaced by `to`.
std::string replaced(std::string s, std::string_view from, std::string_view to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

ua::NodeId node(const char* name) {
  return ua::NodeId(2, ua::String(std::string("P.") + name));
}

struct Running {
  explicit Running(const char* nodes) : loaded(load(nodes)) {
    p = space.reclaimer().register_participant();
    const auto errors = build_address_space(loaded.config, space, *p);
    INFO(errors_of(errors));
    REQUIRE(errors.empty());
  }
  const addressspace::VariableAttributes& var(const char* name) const {
    const auto* store = space.current();
    const auto n = store->find(node(name));
    REQUIRE(n != addressspace::kNoNode);
    REQUIRE(store->variable(n));
    return *store->variable(n);
  }
  ua::DataValue value(const char* name) const {
    ua::DataValue dv;
    addressspace::ValueStore::read(*var(name).cell, dv);
    return dv;
  }
  void write(const char* name, ua::Variant v) {
    ua::DataValue dv;
    dv.value = std::move(v);
    space.values().write(*var(name).cell, dv, *p);
  }
  ReloadOutcome reload(const LoadResult& next) {
    ReloadOutcome out = reload_address_space(loaded.config, next.config, space, *p);
    if (out.errors.empty()) loaded = next;
    return out;
  }
  LoadResult loaded;
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* p = nullptr;
};

}  // namespace

TEST_CASE("reload: one node added, one removed, one changed; the new store is published",
          "[config][reload]") {
  Running r(kBefore);
  const auto* before = r.space.current();
  const uint64_t generation = before->generation();
  const ReloadOutcome out = r.reload(load(kAfter));
  INFO(errors_of(out.errors));
  REQUIRE(out.errors.empty());
  // B's parent P gains a reference to B and loses one to C: neither makes P changed (store_diff.hpp).
  CHECK(out.diff == addressspace::StoreDiff{1, 1, 1});
  CHECK(out.values_reset == 0);
  const auto* after = r.space.current();
  CHECK(after->generation() == generation + 1);
  CHECK(after->find(node("B")) != addressspace::kNoNode);
  CHECK(after->find(node("C")) == addressspace::kNoNode);
  CHECK(after->description(after->find(node("D"))).text == ua::String("new"));
  CHECK(out.nodes == after->size());
}

TEST_CASE("reload: the same files again change nothing", "[config][reload]") {
  Running r(kBefore);
  const ReloadOutcome out = r.reload(load(kBefore));
  REQUIRE(out.errors.empty());
  CHECK(out.diff == addressspace::StoreDiff{0, 0, 0});
  CHECK(out.values_reset == 0);
}

TEST_CASE("reload: an unchanged variable keeps its live value and its cell", "[config][reload]") {
  Running r(kBefore);
  const auto* cell = r.var("A").cell;
  r.write("A", ua::Variant(int32_t{42}));
  REQUIRE(r.reload(load(kAfter)).errors.empty());
  CHECK(r.var("A").cell == cell);
  CHECK(r.value("A").value == ua::Variant(int32_t{42}));
}

TEST_CASE("reload: a changed initial value replaces the live one", "[config][reload]") {
  Running r(kBefore);
  r.write("A", ua::Variant(int32_t{42}));
  r.write("D", ua::Variant(ua::String("written")));
  const std::string next = replaced(kBefore, R"("value": 1)", R"("value": 7)");
  const ReloadOutcome out = r.reload(load(next));
  REQUIRE(out.errors.empty());
  CHECK(out.values_reset == 1);
  CHECK(out.diff == addressspace::StoreDiff{0, 0, 0});  // the Value is not an attribute of the structure
  CHECK(r.value("A").value == ua::Variant(int32_t{7}));
  // D's initial value did not change: the value a client wrote stays.
  CHECK(r.value("D").value == ua::Variant(ua::String("written")));
}

TEST_CASE("reload: a variable whose DataType changed gets a new cell with the file's value",
          "[config][reload]") {
  Running r(kBefore);
  const auto* old_cell = r.var("A").cell;
  r.write("A", ua::Variant(int32_t{42}));
  const std::string next =
      replaced(kBefore, R"("data_type": "Int32", "value": 1)", R"("data_type": "String", "value": "s")");
  const ReloadOutcome out = r.reload(load(next));
  INFO(errors_of(out.errors));
  REQUIRE(out.errors.empty());
  CHECK(out.values_reset == 1);
  CHECK(out.diff.changed == 1);
  CHECK(r.var("A").cell != old_cell);
  CHECK(r.value("A").value == ua::Variant(ua::String("s")));
  // The old cell, still read through the old store until that is freed, keeps its value of the old type.
  ua::DataValue old;
  addressspace::ValueStore::read(*old_cell, old);
  CHECK(old.value == ua::Variant(int32_t{42}));
}

TEST_CASE("reload: a ValueRank change is a type change too", "[config][reload]") {
  Running r(kBefore);
  const auto* old_cell = r.var("C").cell;
  const std::string next = replaced(kBefore, R"("data_type": "Double", "value": 2.5)",
                                    R"("data_type": "Double", "value_rank": 1, "value": [1.0, 2.0])");
  const ReloadOutcome out = r.reload(load(next));
  INFO(errors_of(out.errors));
  REQUIRE(out.errors.empty());
  CHECK(r.var("C").cell != old_cell);
  CHECK(r.value("C").value == ua::Variant(std::vector<double>{1.0, 2.0}));
}

TEST_CASE("reload: changed namespaces refuse the reload and keep the running store", "[config][reload]") {
  Running r(kBefore);
  r.write("A", ua::Variant(int32_t{42}));
  const auto* before = r.space.current();
  const std::string next = replaced(kAfter, R"("urn:t")", R"("urn:other")");
  const ReloadOutcome out = r.reload(load(next, R"({"namespaces": ["urn:other"]})"));
  REQUIRE(out.errors.size() == 1);
  CHECK(out.errors[0].to_string().find("/namespaces: the namespaces changed") != std::string::npos);
  CHECK(r.space.current() == before);
  CHECK(r.value("A").value == ua::Variant(int32_t{42}));
}

TEST_CASE("reload: roles are published with their variables", "[config][reload]") {
  Running r(kBefore);
  CHECK((r.var("A").user_access_level & kHasRolesBit) == 0);
  const std::string next = replaced(kBefore, R"("access": ["read", "write"])",
                                    R"("access": ["read", "write"], "write_roles": ["Operator"])");
  REQUIRE(r.reload(load(next)).errors.empty());
  const auto& a = r.var("A");
  CHECK((a.user_access_level & kHasRolesBit) != 0);
  CHECK(a.write_roles == role::kOperator);
  CHECK(a.read_roles == role::kEveryone);
}

TEST_CASE("reload: settings read at start are named when they change", "[config][reload]") {
  const LoadResult running = load(kBefore, R"({"namespaces": ["urn:t"], "threads": 2,
      "endpoints": [{"url": "opc.tcp://127.0.0.1:4840"}], "logging": {"level": "info"}})");
  SECTION("the same settings: nothing") {
    CHECK(restart_only_changes(running.config, running.config).empty());
  }
  SECTION("node files and logging.level are not restart-only") {
    const LoadResult next = load(kAfter, R"({"namespaces": ["urn:t"], "threads": 2,
        "endpoints": [{"url": "opc.tcp://127.0.0.1:4840"}], "logging": {"level": "debug"}})");
    CHECK(restart_only_changes(running.config, next.config).empty());
  }
  SECTION("each changed setting by its name in the server file") {
    const LoadResult next = load(kBefore, R"({"namespaces": ["urn:t"], "threads": 3,
        "endpoints": [{"url": "opc.tcp://127.0.0.1:4841"}], "limits": {"max_sessions": 7},
        "users": [{"name": "bob", "password_hash": ")" +
                                              hash_password_with_salt("x", "0123456789abcdef", 1000) + R"("}],
        "http": {"listen": "127.0.0.1:9464"}, "shutdown": {"grace_period_s": 1},
        "diagnostics": {"enabled": true}})");
    CHECK(restart_only_changes(running.config, next.config) ==
          std::vector<std::string>{"endpoints", "threads", "limits.max_sessions", "users",
                                   "shutdown.grace_period_s", "diagnostics.enabled", "http"});
  }
  SECTION("a node's simulation is not restart-only (the simulator follows the node files)") {
    std::string nodes = kBefore;
    nodes = replaced(nodes, R"("value": 2.5)", R"("value": 2.5, "simulation": {"kind": "sine"})");
    const LoadResult next = load(nodes, R"({"namespaces": ["urn:t"], "threads": 2,
        "endpoints": [{"url": "opc.tcp://127.0.0.1:4840"}], "logging": {"level": "info"}})");
    REQUIRE(next.ok());
    REQUIRE(next.config.nodes.size() == running.config.nodes.size());
    CHECK(restart_only_changes(running.config, next.config).empty());
  }
}

TEST_CASE("reload: a node file may append a namespace; NamespaceArray follows", "[config][reload]") {
  Running r(kBefore);
  LoadResult next = load_config_text(R"({"namespaces": ["urn:t"]})", "server.json", ".");
  load_node_file_text(kBefore, "nodes.json", next);
  load_node_file_text(R"({"namespaces": ["urn:u"], "nodes": [
      {"kind": "variable", "name": "U", "namespace": "urn:u", "data_type": "Int32", "value": 3}]})",
                      "more.json", next);
  check_references(next);
  INFO(errors_of(next.errors));
  REQUIRE(next.ok());
  REQUIRE(next.config.namespaces.size() == r.loaded.config.namespaces.size() + 1);
  const ReloadOutcome out = r.reload(next);
  INFO(errors_of(out.errors));
  REQUIRE(out.errors.empty());
  CHECK(out.diff.added == 1);
  const auto* store = r.space.current();
  const auto n = store->find(ua::NodeId(0, ua::id::Server_NamespaceArray));
  REQUIRE(n != addressspace::kNoNode);
  ua::DataValue dv;
  addressspace::ValueStore::read(*store->variable(n)->cell, dv);
  const auto* uris = dv.value.get_if<std::vector<ua::String>>();
  REQUIRE(uris);
  REQUIRE(uris->size() == next.config.namespaces.size());
  CHECK(uris->back() == ua::String("urn:u"));
}

TEST_CASE("reload: cells of removed or re-typed variables are taken again, not allocated at every reload",
          "[config][reload]") {
  Running r(kBefore);
  SECTION("a node that goes and comes back gets its old cell, with the file's value") {
    REQUIRE(r.reload(load(kAfter)).errors.empty());  // B is new, C goes
    const addressspace::ValueCell* b = r.var("B").cell;
    const size_t cells = r.space.values().cell_count();
    CHECK(r.space.values().orphan_count() == 1);  // C's
    for (int i = 0; i < 10; ++i) {
      const auto back = r.reload(load(kBefore));  // C back, B goes
      REQUIRE(back.errors.empty());
      CHECK(back.cells_orphaned == 1);
      CHECK(r.value("C").value == ua::Variant(2.5));  // the file's value, whatever the cell held
      r.write("C", ua::Variant(9.0));
      REQUIRE(r.reload(load(kAfter)).errors.empty());
      CHECK(r.var("B").cell == b);
    }
    CHECK(r.space.values().cell_count() == cells);
    CHECK(r.space.values().orphan_count() == 1);
  }
  SECTION("a DataType that flips back and forth uses two cells in all") {
    const std::string int_d =
        replaced(kBefore, R"("data_type": "String", "value": "d")", R"("data_type": "Int32", "value": 4)");
    REQUIRE(r.reload(load(int_d)).errors.empty());
    const size_t cells = r.space.values().cell_count();
    for (int i = 0; i < 5; ++i) {
      REQUIRE(r.reload(load(kBefore)).errors.empty());
      CHECK(r.value("D").value == ua::Variant(ua::String("d")));
      REQUIRE(r.reload(load(int_d)).errors.empty());
      CHECK(r.value("D").value == ua::Variant(int32_t{4}));
    }
    CHECK(r.space.values().cell_count() == cells);
  }
  SECTION("a reload that fails gives the cells it took back") {
    REQUIRE(r.reload(load(kAfter)).errors.empty());
    const addressspace::ValueCell* b = r.var("B").cell;
    REQUIRE(r.reload(load(kBefore)).errors.empty());  // B is a spare now
    // kAfter again, plus an instance whose copied child has a NodeId another node declares: the loader
    // accepts the files, building the store fails (after B took its spare).
    const std::string broken = replaced(kAfter, R"({"namespaces": ["urn:t"], "nodes": [)",
                                        R"({"namespaces": ["urn:t"], "object_types": [{"name": "T",
        "base": "BaseObjectType", "children": [{"kind": "variable", "name": "V", "data_type": "Int32", "value": 0}]}],
      "nodes": [{"kind": "object", "name": "O", "parent": "ns=2;s=P", "type_definition": "T"},
        {"kind": "variable", "name": "W", "node_id": "s=P.O.V", "data_type": "Int32", "value": 0},)");
    const auto failed = r.reload(load(broken));
    INFO(errors_of(failed.errors));
    REQUIRE(!failed.errors.empty());
    REQUIRE(r.reload(load(kAfter)).errors.empty());
    CHECK(r.var("B").cell == b);
  }
}
