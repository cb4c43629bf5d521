// opcuad: parse flags, load the configuration, wire, run. Nothing here that a test would want.
#include <fmt/core.h>

#include <iostream>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "config/password.hpp"
#include "daemon/build_info.hpp"
#include "daemon/daemon.hpp"
#include "daemon/log.hpp"

namespace {

constexpr const char* kUsage =
    "Usage: opcuad [--config FILE] [--check-config] [--hash-password] [--version] [--help]\n"
    "\n"
    "  --config FILE    server configuration (JSON, see docs/CONFIGURATION.md);\n"
    "                   without it, the built-in default: opc.tcp://0.0.0.0:4840, SecurityPolicy None,\n"
    "                   anonymous access, a demo namespace\n"
    "  --check-config   validate the configuration, report every problem, and exit\n"
    "  --hash-password  read a password from standard input and print its hash for the users list\n"
    "  --version        print the version and exit\n"
    "  --help           print this help and exit\n";

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--version") {
      fmt::print("opcuad {}\n", opcuad::build::kVersion);
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else if (arg == "--hash-password") {
      std::string password;
      std::getline(std::cin, password);
      std::string hash = opcuad::config::hash_password(password);
      if (hash.empty()) return 1;
      fmt::print("{}\n", hash);
      return 0;
    } else if (arg == "--check-config") {
      check_only = true;
    } else if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else {
      fmt::print(stderr, "opcuad: unknown or incomplete option '{}'\n\n{}", arg, kUsage);
      return 2;
    }
  }

  opcuad::log::info("opcuad {} ({} build)", opcuad::build::kVersion, opcuad::build::kBuildType);
  opcuad::config::LoadResult loaded;
  if (config_path.empty()) {
    opcuad::log::info("configuration: built-in default (opc.tcp://0.0.0.0:4840, SecurityPolicy None, anonymous, "
                      "demo namespace); use --config FILE for your own");
    loaded.config = opcuad::config::default_config();
  } else {
    opcuad::log::info("configuration: {}", config_path);
    loaded = opcuad::config::load_config(config_path);
  }
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) opcuad::log::error("{}", e.to_string());
    opcuad::log::error("the configuration has {} problem(s): not starting", loaded.errors.size());
    return 1;
  }
  if (check_only) {
    opcuad::log::info("configuration is valid: {} node declaration(s) in {} file(s)", loaded.config.nodes.size(),
                      loaded.config.node_files.size());
    return 0;
  }
  // The `logging` settings (docs/CONFIGURATION.md): the loader has checked the level's name.
  if (const auto level = opcuad::log::parse_level(loaded.config.logging.level))
    opcuad::log::set_level(*level);
  if (!loaded.config.logging.file.empty()) {
    if (const auto failed = opcuad::log::open_file(loaded.config.logging.file)) {
      opcuad::log::error("{}: not starting", *failed);
      return 1;
    }
  }
  opcuad::Daemon daemon(loaded.config);
  if (!daemon.start()) return 1;
  return daemon.run();
}
