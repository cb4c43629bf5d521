// Address-space load harness: builds namespace 0 plus N Double variables (default 1,000,000) the way a
// node file's bulk declaration does, and prints load time, bytes per variable node and per value cell,
// and seqlock read/write cost. A program, not a test: compare its result blocks side by side.
//
//   addressspace_bench [variables]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "addressspace/address_space.hpp"
#include "addressspace/namespace0.hpp"
#include "addressspace/node_store_builder.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::addressspace;
using Clock = std::chrono::steady_clock;

namespace {
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

size_t rss_bytes() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * 4096;
}
}  // namespace

int main(int argc, char** argv) {
  const uint32_t n = argc > 1 ? static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10)) : 1'000'000;
  std::printf("addressspace_bench: namespace 0 + %u Double variables\n", n);

  // 1. Direct builder load (what config's bulk declarations do after validation).
  {
    const size_t rss0 = rss_bytes();
    AddressSpace space;
    auto* p = space.reclaimer().register_participant();
    const auto t0 = Clock::now();
    NodeStoreBuilder b(space.values(), *p);
    add_namespace0(b);
    const double ns0_s = seconds_since(t0);
    NodeSpec spec;
    spec.node_class = NodeClass::Variable;
    spec.data_type = ua::NodeId(0, ua::id::Double);
    spec.value_rank = -1;
    spec.access_level = access::kCurrentRead | access::kCurrentWrite;
    spec.user_access_level = spec.access_level;
    const ua::NodeId folder(2, ua::String("Sensors"));
    NodeSpec f;
    f.node_id = folder;
    f.node_class = NodeClass::Object;
    f.browse_name = {2, "Sensors"};
    f.display_name.text = "Sensors";
    (void)b.add_node(f);
    b.add_reference(ua::NodeId(0, ua::id::ObjectsFolder), ua::NodeId(0, ua::id::Organizes), folder);
    b.add_reference(folder, ua::NodeId(0, ua::id::HasTypeDefinition), ua::NodeId(0, ua::id::FolderType));
    ua::DataValue dv;
    dv.value = 0.0;
    spec.value = dv;
    const ua::NodeId has_component(0, ua::id::HasComponent), has_type(0, ua::id::HasTypeDefinition),
        base_var(0, ua::id::BaseDataVariableType);
    for (uint32_t i = 1; i <= n; ++i) {
      std::string name = "Sensor" + std::to_string(i);
      spec.node_id = ua::NodeId(2, ua::String("Sensors." + name));
      spec.browse_name = {2, ua::String(name)};
      spec.display_name.text = ua::String(name);
      (void)b.add_node(spec);
      b.add_reference(folder, has_component, spec.node_id);
      b.add_reference(spec.node_id, has_type, base_var);
    }
    auto built = b.build();
    const double total_s = seconds_since(t0);
    if (!built.errors.empty()) {
      std::fprintf(stderr, "build failed: %s\n", built.errors.front().c_str());
      return 1;
    }
    const NodeStore& store = *built.store;
    const auto fp = store.footprint();
    space.publish(std::move(built.store), *p);
    const size_t rss1 = rss_bytes();
    std::printf("\n[builder] nodes %zu, ns0 %.3f s, total load %.3f s (%.0f ns per variable)\n", store.size(),
                ns0_s, total_s, (total_s - ns0_s) * 1e9 / n);
    std::printf(
        "  structure bytes: ids %zu, records %zu, variable attrs %zu, references %zu, strings %zu, index "
        "%zu, other %zu\n",
        fp.node_ids, fp.records, fp.variables, fp.references, fp.strings, fp.index, fp.other);
    std::printf("  bytes per variable node (structure): %.1f\n",
                static_cast<double>(fp.total()) / store.size());
    std::printf("  bytes per value cell: %zu (cells %zu, %zu bytes)\n", sizeof(ValueCell),
                space.values().cell_count(), space.values().bytes());
    std::printf("  process RSS growth: %.1f MB (%.1f bytes per variable, all included)\n",
                (rss1 - rss0) / 1e6, static_cast<double>(rss1 - rss0) / n);

    // Seqlock cost on one thread: write and read a Double, and sample an unchanged cell.
    ValueCell& cell = *store.variable(store.find(ua::NodeId(2, ua::String("Sensors.Sensor1"))))->cell;
    constexpr int kOps = 5'000'000;
    auto t1 = Clock::now();
    for (int i = 0; i < kOps; ++i) {
      dv.value = static_cast<double>(i);
      space.values().write(cell, dv, *p);
    }
    const double write_ns = seconds_since(t1) * 1e9 / kOps;
    double sum = 0;
    t1 = Clock::now();
    for (int i = 0; i < kOps; ++i) sum += static_cast<double>(ValueStore::snapshot(cell).payload & 1);
    const double read_ns = seconds_since(t1) * 1e9 / kOps;
    uint64_t seen = ValueStore::version(cell);
    size_t changed = 0;
    t1 = Clock::now();
    for (int i = 0; i < kOps; ++i) changed += ValueStore::read_if_changed(cell, seen, dv) ? 1 : 0;
    const double sample_ns = seconds_since(t1) * 1e9 / kOps;
    std::printf("  write Double %.1f ns, snapshot %.1f ns, unchanged sample %.1f ns (%zu %g)\n", write_ns,
                read_ns, sample_ns, changed, sum > 0 ? 1.0 : 0.0);
    space.reclaimer().quiescent(*p);
  }

  // 2. Through the JSON configuration (validation included): one bulk declaration.
  {
    const std::string nodes = R"({"namespaces": ["urn:bench"], "nodes": [{"kind": "folder", "name": "Sensors",
      "children": [{"kind": "variable", "name": "Sensor{n}", "count": )" +
                              std::to_string(n) +
                              R"(, "data_type": "Double", "value": 0.0, "access": ["read", "write"]}]}]})";
    const auto t0 = Clock::now();
    config::LoadResult r = config::load_config_text(R"({"namespaces": ["urn:bench"]})", "bench.json", ".");
    config::load_node_file_text(nodes, "bench-nodes.json", r);
    config::check_references(r);
    const double validate_s = seconds_since(t0);
    if (!r.ok()) {
      std::fprintf(stderr, "config failed: %s\n", r.errors.front().to_string().c_str());
      return 1;
    }
    AddressSpace space;
    auto* p = space.reclaimer().register_participant();
    const auto errors = config::build_address_space(r.config, space, *p);
    const double total_s = seconds_since(t0);
    if (!errors.empty()) {
      std::fprintf(stderr, "build failed: %s\n", errors.front().to_string().c_str());
      return 1;
    }
    std::printf("\n[config] validate %.3f s, validate + build + publish %.3f s, nodes %zu\n", validate_s,
                total_s, space.current()->size());
  }
  return 0;
}
