#pragma once
// What a reload (SIGHUP, docs/OPERATIONS.md "Reload") can apply and what needs a restart.
//
// Applied: the node files (every node, with its attributes, references, roles and initial values;
// config/address_space_loader.hpp) and logging.level. Everything else is read once at start (sockets,
// shard threads, the PKI, limits sized into structures that live as long as the server, users held by the
// login checks, the simulator's timers): restart_only_changes() names each such setting whose value in
// the reloaded file differs from the running one, so the daemon can warn that it needs a restart. The
// running value stays until then.

#include <string>
#include <vector>

#include "config/config.hpp"

namespace opcuad::config {

// The settings that differ between `running` (what the server started with) and `next`, named as the
// server file spells them ("limits.max_sessions", "endpoints", "users", ...), in file order. A node's
// simulation is read at start too: "simulation of <NodeId>" for each node whose source changed, appeared
// or went (at most kMaxNamedSimulations named, then one "simulation of N more nodes").
std::vector<std::string> restart_only_changes(const ServerConfig& running, const ServerConfig& next);
inline constexpr size_t kMaxNamedSimulations = 10;

}  // namespace opcuad::config
