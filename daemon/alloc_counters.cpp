#include "daemon/alloc_counters.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include <openssl/crypto.h>

namespace opcuad::alloc_counters {

namespace {

struct alignas(64) Slot {
  std::atomic<uint64_t> allocations{0};
  std::atomic<uint64_t> bytes{0};
};

constexpr unsigned kSlots = 256;  // threads that get a slot of their own; shards + control + a few helpers

std::atomic<bool> g_enabled{false};
Slot g_slots[kSlots];
std::atomic<unsigned> g_slots_used{0};
Slot g_overflow;  // shared by threads beyond kSlots: atomic adds

constinit thread_local Slot* t_slot = nullptr;

[[gnu::noinline]] void count_slow(std::size_t n) noexcept {
  if (!t_slot) {
    const unsigned i = g_slots_used.fetch_add(1, std::memory_order_relaxed);
    t_slot = i < kSlots ? &g_slots[i] : &g_overflow;
  }
  if (t_slot == &g_overflow) {
    g_overflow.allocations.fetch_add(1, std::memory_order_relaxed);
    g_overflow.bytes.fetch_add(n, std::memory_order_relaxed);
    return;
  }
  Slot& s = *t_slot;  // written by this thread only
  s.allocations.store(s.allocations.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s.bytes.store(s.bytes.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

inline void count(std::size_t n) noexcept {
  if (g_enabled.load(std::memory_order_relaxed)) [[unlikely]]
    count_slow(n);
}

[[gnu::noinline]] void* allocate_failed(std::size_t n, std::size_t align, bool nothrow) {
  // Part of operator new's contract: call the new-handler until it gives up, then throw (or return null).
  for (;;) {
    std::new_handler handler = std::get_new_handler();
    if (!handler) {
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    handler();
    void* p = nullptr;
    if (align <= alignof(std::max_align_t)) {
      p = std::malloc(n);
    } else if (posix_memalign(&p, align, n) != 0) {
      p = nullptr;
    }
    if (p) return p;
  }
}

inline void* allocate(std::size_t n) {
  count(n);
  if (n == 0) n = 1;
  void* p = std::malloc(n);
  return p ? p : allocate_failed(n, 0, false);
}

inline void* allocate_nothrow(std::size_t n) noexcept {
  count(n);
  if (n == 0) n = 1;
  void* p = std::malloc(n);
  if (p) return p;
  try {
    return allocate_failed(n, 0, true);
  } catch (...) {
    return nullptr;
  }
}

inline void* allocate_aligned(std::size_t n, std::align_val_t al, bool nothrow) {
  count(n);
  if (n == 0) n = 1;
  const auto align = static_cast<std::size_t>(al);
  void* p = nullptr;
  if (posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, n) == 0) return p;
  return allocate_failed(n, align, nothrow);
}

}  // namespace

void enable(bool on) noexcept {
  g_enabled.store(on, std::memory_order_relaxed);
}

bool enabled() noexcept {
  return g_enabled.load(std::memory_order_relaxed);
}

Totals totals() noexcept {
  Totals t;
  const unsigned used = g_slots_used.load(std::memory_order_relaxed);
  for (unsigned i = 0; i < used && i < kSlots; ++i) {
    t.allocations += g_slots[i].allocations.load(std::memory_order_relaxed);
    t.bytes += g_slots[i].bytes.load(std::memory_order_relaxed);
  }
  t.allocations += g_overflow.allocations.load(std::memory_order_relaxed);
  t.bytes += g_overflow.bytes.load(std::memory_order_relaxed);
  return t;
}

// OpenSSL allocates with its own malloc wrappers, not operator new; secured channels call into libcrypto
// for every chunk, so its allocations are counted as well.
namespace {
void* crypto_malloc(std::size_t n, const char*, int) noexcept {
  count(n);
  return std::malloc(n);
}
void* crypto_realloc(void* p, std::size_t n, const char*, int) noexcept {
  count(n);
  return std::realloc(p, n);
}
void crypto_free(void* p, const char*, int) noexcept {
  std::free(p);
}
}  // namespace

bool count_openssl() noexcept {
  return CRYPTO_set_mem_functions(crypto_malloc, crypto_realloc, crypto_free) == 1;
}

}  // namespace opcuad::alloc_counters

// ---- the replaceable global allocation functions ([new.delete]); they must sit at global scope.

namespace ac = opcuad::alloc_counters;

void* operator new(std::size_t n) {
  return ac::allocate(n);
}
void* operator new[](std::size_t n) {
  return ac::allocate(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return ac::allocate_nothrow(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return ac::allocate_nothrow(n);
}
void* operator new(std::size_t n, std::align_val_t al) {
  return ac::allocate_aligned(n, al, false);
}
void* operator new[](std::size_t n, std::align_val_t al) {
  return ac::allocate_aligned(n, al, false);
}
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  try {
    return ac::allocate_aligned(n, al, true);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  try {
    return ac::allocate_aligned(n, al, true);
  } catch (...) {
    return nullptr;
  }
}

void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
