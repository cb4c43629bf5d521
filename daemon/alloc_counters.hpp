#pragma once
// Heap allocation counters of the opcuad process (config "diagnostics": {"counters": true}).
//
// alloc_counters.cpp replaces the global operator new / delete family of the executable. Each replacement
// forwards to malloc / free (mimalloc in release builds, the sanitizer's allocator in sanitizer builds);
// while counting is enabled, operator new also adds one to a per-thread count and the size to a
// per-thread byte total. Off, the cost is one relaxed load and a predictable branch per allocation.
//
// Threads: each thread counts into its own cache-line slot (relaxed load + store, no read-modify-write,
// so no bus lock); a slot is claimed from a fixed global table on a thread's first counted allocation and
// never given back, so totals only grow, even across thread exit. Past the table's size, threads share one
// overflow slot updated with atomic adds. totals() sums every slot from any thread; each count is exact,
// the sum is a snapshot taken while others may still be counting.

#include <cstdint>

namespace opcuad::alloc_counters {

struct Totals {
  uint64_t allocations = 0;  // operator new calls (all forms)
  uint64_t bytes = 0;        // bytes requested by them
};

// Starts (or stops) counting for every thread. Counts taken so far stay.
void enable(bool on) noexcept;
bool enabled() noexcept;
Totals totals() noexcept;
// Routes OpenSSL's allocations (CRYPTO_malloc and kin) through the counters. REQUIRES: called before
// OpenSSL allocates anything (first thing in main); false when it is too late.
bool count_openssl() noexcept;

}  // namespace opcuad::alloc_counters
