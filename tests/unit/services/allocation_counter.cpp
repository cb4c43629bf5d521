// The counting global allocation functions of allocation_counter.hpp.
#include "tests/unit/services/allocation_counter.hpp"
#ifndef OPCUAD_ALLOCATION_COUNTER_OFF
#include <cstdlib>
#include <new>

namespace {
void* counted(size_t n) {
  if (opcuad::test::g_counting) ++opcuad::test::g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(size_t n) {
  return counted(n);
}
void* operator new[](size_t n) {
  return counted(n);
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  return std::malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
#endif  // OPCUAD_ALLOCATION_COUNTER_OFF
