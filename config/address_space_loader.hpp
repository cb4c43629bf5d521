#pragma once
// Builds the address space a configuration describes: namespace 0, then every node of the node files,
// then the live Server object values; publishes it in `space`.

#include <vector>

#include "addressspace/address_space.hpp"
#include "addressspace/server_object.hpp"
#include "config/config.hpp"

namespace opcuad::config {

// The Server object description (NamespaceArray, limits, ...) the configuration implies.
addressspace::ServerInfo server_info(const ServerConfig& c, const ua::BuildInfo& build);

// REQUIRES: `c` came from a LoadResult without errors (a failure here is reported, not assumed away).
// `p` is the calling thread's participant of space.reclaimer(). With `roles`, the read_roles / write_roles of
// every variable that has some (declared, bulk or instantiated) are put there
// (services::Server::set_role_table).
std::vector<ConfigError> build_address_space(const ServerConfig& c, addressspace::AddressSpace& space,
                                             addressspace::EpochReclaimer::Participant& p,
                                             const ua::BuildInfo& build = {}, RoleTable* roles = nullptr);

}  // namespace opcuad::config
