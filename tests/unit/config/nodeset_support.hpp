#pragma once
// What the NodeSet2 tests share: the folders of their fixtures and of the companion specifications
// (OPCUAD_SOURCE_DIR and OPCUAD_NODESETS_DIR, defined for the unit tests by tests/CMakeLists.txt), loading
// server files and NodeSet2 texts, and the address space a loaded configuration builds.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "addressspace/address_space.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"

namespace opcuad::nodeset_test {

inline const std::filesystem::path kFixtures =
    std::filesystem::path(OPCUAD_SOURCE_DIR) / "tests/unit/config/nodesets";
inline const std::filesystem::path kCompanion = OPCUAD_NODESETS_DIR;

inline std::string errors_text(const std::vector<config::ConfigError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.to_string() + "\n";
  return s;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The server file naming `files` (relative to `dir`) as its node files.
inline config::LoadResult load_files(const std::vector<std::string>& files,
                                     const std::filesystem::path& dir = kFixtures) {
  std::string list;
  for (const auto& f : files) list += (list.empty() ? "\"" : ", \"") + f + "\"";
  return config::load_config_text(R"({"node_files": [)" + list + "]}", "server.json", dir);
}

// An empty server file, then NodeSet2 files given as text (name, text), resolved and checked.
inline config::LoadResult load_texts(const std::vector<std::pair<std::string, std::string>>& files) {
  config::LoadResult r = config::load_config_text("{}", "server.json", ".");
  for (const auto& [name, text] : files) config::load_nodeset_file_text(text, name, r);
  config::resolve_nodesets(r);
  config::check_references(r);
  return r;
}

// The server's index of namespace `uri` (the test fails when it is not loaded).
inline uint16_t namespace_of(const config::ServerConfig& c, const std::string& uri) {
  for (size_t i = 0; i < c.namespaces.size(); ++i) {
    if (c.namespaces[i] == uri) return static_cast<uint16_t>(i);
  }
  FAIL("namespace " << uri << " not loaded");
  return 0;
}

// The address space a loaded configuration builds (the test fails on any error).
struct BuiltSpace {
  explicit BuiltSpace(const config::LoadResult& r) : config(r.config) {
    p = space.reclaimer().register_participant();
    const auto errors = config::build_address_space(config, space, *p);
    INFO(errors_text(errors));
    REQUIRE(errors.empty());
  }
  ~BuiltSpace() { space.reclaimer().go_offline(*p); }
  BuiltSpace(const BuiltSpace&) = delete;
  BuiltSpace& operator=(const BuiltSpace&) = delete;
  const addressspace::NodeStore& store() const { return *space.current(); }

  config::ServerConfig config;
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* p = nullptr;
};

}  // namespace opcuad::nodeset_test
