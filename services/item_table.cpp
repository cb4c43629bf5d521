#include "services/item_table.hpp"

#include <bit>

namespace opcuad::services {

MonitoredItem& ItemTable::insert(MonitoredItem&& item) {
  MonitoredItem* slot = nullptr;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    if (pages_.empty() || used_in_last_ == page_size(pages_.size() - 1)) {
      pages_.push_back(std::make_unique<MonitoredItem[]>(page_size(pages_.size())));
      used_in_last_ = 0;
    }
    slot = &pages_.back()[used_in_last_++];
  }
  *slot = std::move(item);
  // Load at most 7/8: linear probing stays short with ids that are mostly consecutive (the hash spreads
  // them), and the table costs 8 / load bytes per item.
  if ((size_ + 1) * 8 > index_.size() * 7) grow_index();
  index(slot);
  ++size_;
  return *slot;
}

MonitoredItem* ItemTable::find(uint32_t id) noexcept {
  if (id == 0 || index_.empty()) return nullptr;
  const size_t mask = index_.size() - 1;
  for (size_t b = bucket(id);; b = (b + 1) & mask) {
    MonitoredItem* item = index_[b];
    if (!item) return nullptr;
    if (item->id == id) return item;
  }
}

bool ItemTable::erase(uint32_t id) {
  if (id == 0 || index_.empty()) return false;
  const size_t mask = index_.size() - 1;
  size_t b = bucket(id);
  for (;; b = (b + 1) & mask) {
    if (!index_[b]) return false;
    if (index_[b]->id == id) break;
  }
  MonitoredItem* item = index_[b];
  // Backward-shift deletion: later entries of the probe run move up, so no tombstones are needed.
  size_t hole = b;
  for (size_t next = (hole + 1) & mask; index_[next]; next = (next + 1) & mask) {
    const size_t home = bucket(index_[next]->id);
    // The entry may fill the hole when its home is not in the cyclic range (hole, next].
    if (((next - home) & mask) >= ((next - hole) & mask)) {
      index_[hole] = index_[next];
      hole = next;
    }
  }
  index_[hole] = nullptr;
  *item = MonitoredItem{};  // releases its extras and boxed value; id 0 marks the slot free
  free_.push_back(item);
  --size_;
  return true;
}

void ItemTable::index(MonitoredItem* item) {
  const size_t mask = index_.size() - 1;
  size_t b = bucket(item->id);
  while (index_[b]) b = (b + 1) & mask;
  index_[b] = item;
}

void ItemTable::grow_index() {
  std::vector<MonitoredItem*> old = std::move(index_);
  const size_t n = old.empty() ? 8 : old.size() * 2;
  index_.assign(n, nullptr);
  shift_ = 32 - static_cast<unsigned>(std::countr_zero(n));
  for (MonitoredItem* item : old) {
    if (item) index(item);
  }
}

}  // namespace opcuad::services
