#pragma once
// Other servers to compare opcuad with (`--compare URL|node-opcua`): a server already running at a
// loopback URL, or node-opcua started by the harness from bench/peers/node_opcua_server.js with the
// node-opcua that tests/interop pins (installed there by `npm ci`), offering the run's security variants.

#include <cstdint>
#include <string>
#include <vector>

namespace opcuad::bench {

// Exit code of opcuad-bench when the peer asked for cannot run here (no node, no node_modules); ctest
// treats it as a skip (SKIP_RETURN_CODE).
inline constexpr int kPeerUnavailableExit = 77;

// What the node-opcua peer must expose.
struct PeerNodes {
  uint32_t variables = 100;  // ns=2;s=Bench.V1..VN
  uint32_t counters = 0;     // ns=2;i=1..N
  double counter_interval_ms = 100;
  uint32_t sessions = 100;
  // The endpoints to offer, as --security names them ("None", "Basic256Sha256:SignAndEncrypt"); empty:
  // None only.
  std::vector<std::string> security;
};

// The command line that starts the node-opcua peer on `port`; false with a message saying what is missing
// (node on PATH, the script, tests/interop/node_modules/node-opcua).
bool node_opcua_command(uint16_t port, const PeerNodes& nodes, std::vector<std::string>& argv,
                        std::string& error);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0 and released).
uint16_t free_loopback_port();

}  // namespace opcuad::bench
