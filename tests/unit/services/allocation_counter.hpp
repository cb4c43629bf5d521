#pragma once
// Heap allocations counted per thread, for the tests that a request path allocates nothing per item
// (docs/ARCHITECTURE.md): allocation_counter.cpp replaces the global allocation functions of the test
// program; they count only while a test sets g_counting, and pair malloc with free so ASan sees matching
// calls. ThreadSanitizer brings its own replacements of these functions, which a program may not define
// twice: under TSan OPCUAD_ALLOCATION_COUNTER_OFF is defined and the tests that count are left out.
#include <cstddef>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPCUAD_ALLOCATION_COUNTER_OFF 1
#endif
#endif

namespace opcuad::test {
inline thread_local bool g_counting = false;
inline thread_local size_t g_allocations = 0;
}  // namespace opcuad::test
