#pragma once
// Large pages for bulk configuration loads (config::set_bulk_load_observer): a NodeSet2 model of a million
// nodes touches some 2 GB while it is read and resolved, and with 4 KiB pages the kernel's page faults
// were a third of the load's CPU time (docs/PERFORMANCE.md, "Loading companion specifications"). While a
// bulk load runs, mimalloc maps its new segments with transparent huge pages (2 MiB, madvise); small
// loads and the running server keep ordinary pages, which cost less memory for small heaps.

namespace opcuad::large_pages {

// Makes config loads tell the allocator (a no-op without mimalloc, in sanitizer and fuzzing builds).
void observe_bulk_loads();

}  // namespace opcuad::large_pages
