#pragma once
// Ring<T>: a FIFO (with push_front for putting an item back) over one power-of-two array. It grows by
// doubling and never shrinks, so a queue that is emptied and refilled the same way every loop turn
// allocates nothing once warm, unlike std::deque, which frees and reallocates its blocks as it drains.
//
// Not thread-safe; owned by one shard like everything in a channel.

#include <cassert>
#include <cstddef>
#include <memory>
#include <utility>

namespace opcuad::transport {

template <class T>
class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  Ring(Ring&& o) noexcept
      : items_(std::move(o.items_)),
        capacity_(std::exchange(o.capacity_, 0)),
        head_(std::exchange(o.head_, 0)),
        size_(std::exchange(o.size_, 0)) {}
  Ring& operator=(Ring&& o) noexcept {
    items_ = std::move(o.items_);
    capacity_ = std::exchange(o.capacity_, 0);
    head_ = std::exchange(o.head_, 0);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }

  bool empty() const noexcept { return size_ == 0; }
  size_t size() const noexcept { return size_; }
  size_t capacity() const noexcept { return capacity_; }

  // REQUIRES: !empty() for front() and pop_front(); i < size() for operator[].
  T& front() noexcept {
    assert(size_ > 0);
    return items_[head_];
  }
  T& operator[](size_t i) noexcept {
    assert(i < size_);
    return items_[(head_ + i) & (capacity_ - 1)];
  }

  void push_back(T v) {
    if (size_ == capacity_) grow();
    items_[(head_ + size_) & (capacity_ - 1)] = std::move(v);
    ++size_;
  }
  void push_front(T v) {
    if (size_ == capacity_) grow();
    head_ = (head_ + capacity_ - 1) & (capacity_ - 1);
    items_[head_] = std::move(v);
    ++size_;
  }
  // The slot keeps its moved-from value (for a ByteBuffer: nothing), so popping never frees memory.
  void pop_front() noexcept {
    assert(size_ > 0);
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
  }
  void clear() noexcept {
    head_ = 0;
    size_ = 0;
  }

 private:
  static constexpr size_t kInitialCapacity = 4;

  void grow() {
    const size_t capacity = capacity_ ? capacity_ * 2 : kInitialCapacity;
    auto items = std::make_unique<T[]>(capacity);
    for (size_t i = 0; i < size_; ++i) items[i] = std::move((*this)[i]);
    items_ = std::move(items);
    capacity_ = capacity;
    head_ = 0;
  }

  std::unique_ptr<T[]> items_;
  size_t capacity_ = 0;  // 0 or a power of two
  size_t head_ = 0;
  size_t size_ = 0;
};

}  // namespace opcuad::transport
