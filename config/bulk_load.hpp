#pragma once
// Bulk loads: node files large enough together that how their memory is mapped matters (a model of a
// million nodes is some 600 MB of NodeSet2 XML, every companion specification together 3 MB).

#include <cstdint>

namespace opcuad::config {

inline constexpr uintmax_t kBulkLoadBytes = 64u << 20;

// Called with true before the node files of a bulk load are read, and with false once the load is done
// (load_config, load_config_text): the daemon backs the allocations of such a load with large pages
// (daemon/large_pages.hpp). Set before any load; nullptr (the default): nobody is told.
void set_bulk_load_observer(void (*observer)(bool bulk));

}  // namespace opcuad::config
