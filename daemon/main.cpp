// opcuad: parse flags, load the configuration, wire the layers, run. Nothing here that a test would want.
//
// Until the transport and services land (issues 3-5) the daemon validates its flags, says what it is and
// exits; the command line stays the same when it serves.
#include <fmt/core.h>

#include <cstring>
#include <string_view>

#include "daemon/build_info.hpp"

namespace {

void print_help() {
  fmt::print(
      "Usage: opcuad [--config FILE] [--check-config] [--version] [--help]\n"
      "\n"
      "  --config FILE    server configuration (JSON); without it, the built-in default\n"
      "  --check-config   validate the configuration and exit\n"
      "  --version        print the version and exit\n"
      "  --help           print this help and exit\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view config_path;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--version") {
      fmt::print("opcuad {}\n", opcuad::build::kVersion);
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      print_help();
      return 0;
    } else if (arg == "--check-config") {
      check_only = true;
    } else if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else {
      fmt::print(stderr, "opcuad: unknown or incomplete option '{}' (see --help)\n", arg);
      return 2;
    }
  }
  fmt::print(stderr, "opcuad {} ({} build)\n", opcuad::build::kVersion, opcuad::build::kBuildType);
  fmt::print(stderr, "configuration: {}\n", config_path.empty() ? "built-in default" : config_path);
  if (check_only) {
    fmt::print(stderr, "configuration checking arrives with the config layer (issue 4); nothing to check yet\n");
    return 0;
  }
  fmt::print(stderr, "the OPC UA transport is not built yet (issue 3): exiting\n");
  return 0;
}
