#pragma once
// Value cells: the Value attribute of every Variable and VariableType, kept apart from the immutable
// structure so that a write never touches a NodeStore.
//
// Each cell is one cache line and a seqlock:
//
//   +----------+---------+------+-----------------+----------------+----------------+--------+--------+
//   | sequence | version | kind | payload (8 B)   | source ts      | server ts      | status | boxed* |
//   +----------+---------+------+-----------------+----------------+----------------+--------+--------+
//
// A write makes `sequence` odd (a CAS, so concurrent writers of one cell take turns), stores the fields,
// bumps `version` and makes `sequence` even again. A read copies the fields and retries only when the
// sequence was odd or changed meanwhile; readers never write shared memory. Every field is a
// std::atomic accessed accessed with release stores and acquire loads, so the scheme is free of data races (and clean under
// ThreadSanitizer).
//
// Scalars of at most 8 bytes (Boolean .. Double, DateTime, StatusCode) sit inline in `payload`. Any other
// value (strings, arrays, structures) is an immutable heap Variant behind `boxed`, published with release
// and replaced, never mutated, on write; the old one is retired to the EpochReclaimer, so a reader may
// use the pointer it read until its next quiescent point.
//
// `version` increases by one per write: sampling compares it with the version it last saw and copies
// nothing when it did not change.
//
// Cells are allocated in chunks per partition (partition = NodeId hash) and never move or get freed
// before the ValueStore, so a NodeStore can hold plain ValueCell pointers.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "addressspace/epoch.hpp"
#include "ua/node_id.hpp"
#include "ua/variant.hpp"

namespace opcuad::addressspace {

class alignas(64) ValueCell {
 public:
  static constexpr uint8_t kEmpty = 0;
  static constexpr uint8_t kBoxed = 0xFF;  // otherwise kind is the inline built-in type

 private:
  friend class ValueStore;
  std::atomic<uint32_t> sequence_{0};
  std::atomic<uint8_t> kind_{kEmpty};
  std::atomic<uint64_t> version_{0};
  std::atomic<uint64_t> payload_{0};
  std::atomic<int64_t> source_ts_{0};
  std::atomic<int64_t> server_ts_{0};
  std::atomic<uint32_t> status_{0};
  std::atomic<uint32_t> picoseconds_{0};  // source << 16 | server
  std::atomic<const ua::Variant*> boxed_{nullptr};
};
static_assert(sizeof(ValueCell) == 64, "a value cell is one cache line");

// A value read without copying a boxed Variant. `boxed` stays valid until the reading participant's next
// quiescent point.
struct ValueSnapshot {
  uint64_t version = 0;
  uint8_t kind = ValueCell::kEmpty;
  uint64_t payload = 0;
  const ua::Variant* boxed = nullptr;
  ua::StatusCode status;
  ua::DateTime source_timestamp;
  ua::DateTime server_timestamp;
  uint16_t source_picoseconds = 0;
  uint16_t server_picoseconds = 0;

  void to_data_value(ua::DataValue& out) const;  // copies a boxed value
};

class ValueStore {
 public:
  explicit ValueStore(size_t partitions = 16);
  ~ValueStore();  // frees the boxed values still in cells; REQUIRES: no reader or writer running
  ValueStore(const ValueStore&) = delete;
  ValueStore& operator=(const ValueStore&) = delete;

  // Control plane (builder thread only): a new empty cell in the partition of `id`.
  ValueCell* allocate(const ua::NodeId& id);

  // Any thread that is a participant of `reclaimer`.
  void write(ValueCell& cell, const ua::DataValue& value, EpochReclaimer::Participant& p);
  static ValueSnapshot snapshot(const ValueCell& cell) noexcept;
  static void read(const ValueCell& cell, ua::DataValue& out) { snapshot(cell).to_data_value(out); }
  static uint64_t version(const ValueCell& cell) noexcept { return cell.version_.load(std::memory_order_acquire); }
  // Copies the value only when the version differs from `last_version`, which it then updates.
  static bool read_if_changed(const ValueCell& cell, uint64_t& last_version, ua::DataValue& out);

  EpochReclaimer& reclaimer() noexcept { return reclaimer_; }
  size_t cell_count() const noexcept;
  size_t partitions() const noexcept { return partitions_.size(); }
  // Heap bytes of the cells themselves (boxed values not included).
  size_t bytes() const noexcept;

 private:
  static constexpr size_t kChunkCells = 4096;
  static constexpr size_t kMaxChunks = 4096;
  struct Partition {
    std::vector<std::unique_ptr<ValueCell[]>> chunks;  // reserved to kMaxChunks: never reallocates
    size_t used = 0;                                   // cells handed out in the last chunk
  };

  std::vector<Partition> partitions_;
  EpochReclaimer reclaimer_;

 public:
  // Participants: one per shard plus the control thread. (Declared after reclaimer_ for clarity.)
  static constexpr size_t kMaxParticipants = 256;
};

// Encodes whether a value can live inline in a cell and, if so, its 8 payload bytes.
bool encode_inline(const ua::Variant& v, uint8_t& kind, uint64_t& payload) noexcept;
void decode_inline(uint8_t kind, uint64_t payload, ua::Variant& out);

}  // namespace opcuad::addressspace
