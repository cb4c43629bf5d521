#include "daemon/large_pages.hpp"

#include "config/bulk_load.hpp"

#ifdef OPCUAD_MIMALLOC
#include <mimalloc.h>
#endif

namespace opcuad::large_pages {

namespace {

void on_bulk_load([[maybe_unused]] bool bulk) {
#ifdef OPCUAD_MIMALLOC
  // Read by mimalloc whenever it maps a segment: the segments mapped meanwhile keep their large pages.
  mi_option_set_enabled(mi_option_large_os_pages, bulk);
#endif
}

}  // namespace

void observe_bulk_loads() {
  config::set_bulk_load_observer(on_bulk_load);
}

}  // namespace opcuad::large_pages
