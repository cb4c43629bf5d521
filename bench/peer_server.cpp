#include "bench/peer_server.hpp"

#include <unistd.h>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace opcuad::bench {

namespace {

// The first executable `name` on PATH; empty when there is none.
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const auto candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

}  // namespace

bool node_opcua_command(uint16_t port, const PeerNodes& nodes, std::vector<std::string>& argv,
                        std::string& error) {
  namespace fs = std::filesystem;
  const char* env_node = std::getenv("OPCUAD_BENCH_NODE");
  const std::string node = env_node && *env_node ? std::string(env_node) : find_on_path("node");
  if (node.empty()) {
    error = "node (Node.js) is not on PATH; install Node.js >= 18 to compare with node-opcua";
    return false;
  }
  const fs::path peers(OPCUAD_BENCH_PEERS_DIR);  // the source tree's bench/peers (bench/CMakeLists.txt)
  const fs::path script = peers / "node_opcua_server.js";
  const fs::path modules = peers / ".." / ".." / "tests" / "interop" / "node_modules" / "node-opcua";
  if (!fs::exists(script)) {
    error = "the peer script " + script.string() + " is missing";
    return false;
  }
  if (!fs::exists(modules)) {
    error = "node-opcua is not installed in " + modules.parent_path().lexically_normal().string() +
            "; run (cd tests/interop && npm ci) first";
    return false;
  }
  argv = {node,
          script.string(),
          "--port",
          std::to_string(port),
          "--nodes",
          std::to_string(nodes.variables),
          "--counters",
          std::to_string(nodes.counters),
          "--counter-interval",
          std::to_string(nodes.counter_interval_ms),
          "--sessions",
          std::to_string(nodes.sessions)};
  if (!nodes.security.empty()) {
    std::string list;
    for (const auto& v : nodes.security) list += (list.empty() ? "" : ",") + v;
    argv.push_back("--security");
    argv.push_back(list);
  }
  return true;
}

uint16_t free_loopback_port() {
  asio::io_context ctx;
  asio::ip::tcp::acceptor a(ctx);
  asio::error_code ec;
  a.open(asio::ip::tcp::v4(), ec);
  if (!ec) a.bind(asio::ip::tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0), ec);
  if (ec) return 0;
  return a.local_endpoint().port();
}

}  // namespace opcuad::bench
