#pragma once
// Builds the address space a configuration describes: namespace 0, then every node of the node files,
// then the live Server object values; publishes it in `space`.

#include <vector>

#include "addressspace/address_space.hpp"
#include "addressspace/server_object.hpp"
#include "addressspace/store_diff.hpp"
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

// SIGHUP (docs/OPERATIONS.md, "Reload"): builds the store `next`'s node files describe over the running
// one, which `running` built, and publishes it. Cells are reused by NodeId, so unchanged variables keep
// their live values; a variable whose initial value changed between `running` and `next` gets the new one,
// and one whose DataType or shape changed a new cell with it (addressspace/node_store_builder.hpp).
// diagnostics.counters comes from `running`; namespaces may be appended (NamespaceArray follows), any
// other change of them refuses the reload. With errors nothing is published and no live value changed.
// REQUIRES: `next` came from a LoadResult without errors; control plane (`p` its participant).
struct ReloadOutcome {
  std::vector<ConfigError> errors;
  addressspace::StoreDiff diff;        // old store -> new store
  addressspace::ModelChanges changes;  // the same, as a GeneralModelChangeEvent's Changes (Part 5 §12.16)
  size_t values_reset = 0;             // variables whose live value the file's initial value replaced
  size_t nodes = 0;                    // in the new store
  size_t cells_orphaned = 0;           // cells the new store no longer uses, kept as spares of their NodeIds
};
ReloadOutcome reload_address_space(const ServerConfig& running, const ServerConfig& next,
                                   addressspace::AddressSpace& space,
                                   addressspace::EpochReclaimer::Participant& p);

}  // namespace opcuad::config
