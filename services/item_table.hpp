#pragma once
// ItemTable: a subscription's monitored items, stored compactly with stable addresses.
//
// Items live in pages that never move (the Sampler and the ready list hold plain pointers), growing
// geometrically from a few items to kMaxPage, so a subscription with one item does not pay for a page of
// thousands. Freed slots are reused. Lookup by id is an open-addressing table of item pointers (the key
// is the item's own id), about 10-20 bytes per item instead of a std::map node and a unique_ptr.
//
// shard-local: owned by its Subscription.

#include <cstdint>
#include <memory>
#include <vector>

#include "services/monitored_item.hpp"

namespace opcuad::services {

class ItemTable {
 public:
  ItemTable() = default;
  ItemTable(const ItemTable&) = delete;
  ItemTable& operator=(const ItemTable&) = delete;

  // Stores `item` (REQUIRES: item.id != 0 and not yet in the table); the reference stays valid until
  // erase().
  MonitoredItem& insert(MonitoredItem&& item);
  MonitoredItem* find(uint32_t id) noexcept;
  // Destroys the item and frees its slot; false when no item has that id.
  bool erase(uint32_t id);
  size_t size() const noexcept { return size_; }

  // Every item, in slot order (creation order until slots are reused).
  template <class F>
  void for_each(F&& f) {
    for (size_t p = 0; p < pages_.size(); ++p) {
      MonitoredItem* page = pages_[p].get();
      const size_t n = p + 1 == pages_.size() ? used_in_last_ : page_size(p);
      for (size_t i = 0; i < n; ++i) {
        if (page[i].id != 0) f(page[i]);
      }
    }
  }

 private:
  static constexpr size_t kFirstPage = 4;
  static constexpr size_t kMaxPage = 4096;
  static size_t page_size(size_t p) noexcept { return p >= 10 ? kMaxPage : kFirstPage << p; }
  size_t bucket(uint32_t id) const noexcept { return (id * 0x9E3779B1u) >> shift_; }
  void index(MonitoredItem* item);
  void grow_index();

  std::vector<std::unique_ptr<MonitoredItem[]>> pages_;
  size_t used_in_last_ = 0;            // slots handed out in the last page
  std::vector<MonitoredItem*> free_;   // freed slots, reused first
  std::vector<MonitoredItem*> index_;  // open addressing, linear probing; size a power of two
  unsigned shift_ = 32;                // 32 - log2(index_.size())
  size_t size_ = 0;
};

}  // namespace opcuad::services
