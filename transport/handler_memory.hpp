#pragma once
// HandlerSlot: memory for one outstanding asio operation at a time, so an operation a channel starts
// for every request (its socket read, its gathered write, its posted drain) reuses the same bytes
// instead of the heap (docs/ARCHITECTURE.md, "How a request flows"). After asio's allocation example: the
// handler is bound to a SlotAllocator with asio::bind_allocator, and asio allocates the operation through it.
//
// A slot already in use, or an operation larger than the slot, falls back to the heap: still correct,
// and visible in the daemon's allocation counters (`server allocs/op` in opcuad-bench).
//
// REQUIRES: the slot outlives every operation allocated from it. asio frees an operation's memory
// before it invokes (or destroys) the handler moved out of it, so a slot owned by an object the
// handler keeps alive (a shared_ptr captured in it) is safe.
//
// shard-local: used only by the thread that runs the operations (one shard).

#include <cstddef>
#include <new>

namespace opcuad::transport {

template <size_t N>
class HandlerSlot {
 public:
  HandlerSlot() = default;
  HandlerSlot(const HandlerSlot&) = delete;
  HandlerSlot& operator=(const HandlerSlot&) = delete;

  void* allocate(size_t n) {
    if (!in_use_ && n <= N) {
      in_use_ = true;
      return storage_;
    }
    return ::operator new(n);
  }
  void deallocate(void* p) noexcept {
    if (p == storage_) {
      in_use_ = false;
    } else {
      ::operator delete(p);
    }
  }

 private:
  alignas(std::max_align_t) unsigned char storage_[N];
  bool in_use_ = false;
};

// The standard allocator interface over a HandlerSlot, for asio::bind_allocator.
template <class T, size_t N>
class SlotAllocator {
 public:
  using value_type = T;
  template <class U>
  struct rebind {
    using other = SlotAllocator<U, N>;
  };

  explicit SlotAllocator(HandlerSlot<N>& slot) noexcept : slot_(&slot) {}
  template <class U>
  SlotAllocator(const SlotAllocator<U, N>& other) noexcept : slot_(other.slot()) {}  // NOLINT: rebinding

  T* allocate(size_t n) { return static_cast<T*>(slot_->allocate(sizeof(T) * n)); }
  void deallocate(T* p, size_t) noexcept { slot_->deallocate(p); }

  HandlerSlot<N>* slot() const noexcept { return slot_; }
  template <class U>
  friend bool operator==(const SlotAllocator& a, const SlotAllocator<U, N>& b) noexcept {
    return a.slot() == b.slot();
  }

 private:
  HandlerSlot<N>* slot_;
};

}  // namespace opcuad::transport
