#pragma once
// What a reload (SIGHUP, docs/OPERATIONS.md "Reload") can apply and what needs a restart.
//
// Applied: the node files (every node, with its attributes, references, roles, initial values and
// simulation; config/address_space_loader.hpp, daemon/simulator.hpp) and logging.level. Everything else is
// read once at start (sockets, shard threads, the PKI, limits sized into structures that live as long as the
// server, users held by the login checks): restart_only_changes() names each such setting whose value in the
// reloaded file differs from the running one, so the daemon can warn that it needs a restart. The running
// value stays until then.

#include <string>
#include <vector>

#include "config/config.hpp"

namespace opcuad::config {

// The settings that differ between `running` (what the server started with) and `next`, named as the
// server file spells them ("limits.max_sessions", "endpoints", "users", ...), in file order. A node's
// simulation belongs to its node file and is applied (the daemon's Simulator follows the new plan).
std::vector<std::string> restart_only_changes(const ServerConfig& running, const ServerConfig& next);

}  // namespace opcuad::config
