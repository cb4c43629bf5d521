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
// std::atomic accessed with release stores and acquire loads, so the scheme is free of data races (and clean
// under ThreadSanitizer).
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
// before the ValueStore, so a NodeStore can hold plain ValueCell pointers. A reload that removes a
// variable or gives it another DataType or shape leaves its cell without a node: such a cell is kept as
// a spare under its NodeId (orphan) and taken again when a later store needs a new cell for that NodeId,
// so repeated reloads hold at most two cells per NodeId instead of one more per reload.
//
// Computed cells (ValueSource, below): a value that must be the one at the time of the read, such as
// Server.ServerStatus.CurrentTime (Part 5 §6.3.1, §12.10: "the current time (UTC) known by the Server").
// set_source() marks a cell computed: kind becomes kComputed, payload the ValueSource pointer, the
// version gets kComputedVersion set, and what write() stores is kept boxed as the source's template.
// snapshot() and version() check for that once (one predictable branch on the ordinary path), so every
// reader (Read, sampling, the service internals) sees the computed value with no change on its side.

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "addressspace/epoch.hpp"
#include "ua/node_id.hpp"
#include "ua/variant.hpp"

namespace opcuad::addressspace {

class alignas(64) ValueCell {
 public:
  static constexpr uint8_t kEmpty = 0;
  static constexpr uint8_t kComputed = 0xFE;  // payload is a ValueSource*; never seen in a snapshot
  static constexpr uint8_t kBoxed = 0xFF;     // otherwise kind is the inline built-in type

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

// The on-read value of a computed cell. compute() runs on the reading thread (any shard, concurrently
// with other readers), inside the read: it must not block, take locks, or touch the value store.
// `stored` is the cell's template (the last value write() stored, boxed; nullptr when none), valid for
// the call. The result gets the read time as source and server timestamp and the stored status.
// REQUIRES: a source outlives every cell it is set on (sources are typically static objects).
class ValueSource {
 public:
  virtual ~ValueSource() = default;
  virtual void compute(const ua::Variant* stored, ua::DateTime now, ua::Variant& out) const = 0;
};

bool inline_number(uint8_t kind, uint64_t payload, double& out) noexcept;  // below

class ValueStore {
 public:
  // Set in the version of a computed cell; version() of such a cell is this bit | the read time, so
  // a sampler's change detection sees a new version at every sample.
  static constexpr uint64_t kComputedVersion = uint64_t{1} << 63;

  explicit ValueStore(size_t partitions = 16);
  ~ValueStore();  // frees the boxed values still in cells; REQUIRES: no reader or writer running
  ValueStore(const ValueStore&) = delete;
  ValueStore& operator=(const ValueStore&) = delete;

  // Control plane (builder thread only): a new empty cell in the partition of `id`.
  ValueCell* allocate(const ua::NodeId& id);
  // Control plane: keeps `cell`, which no published store's node `id` uses any more, as a spare of `id`.
  // A reload takes a spare before it allocates, so an id has at most two cells (one in use, one spare).
  // REQUIRES: no store about to be published uses it.
  void orphan(const ua::NodeId& id, ValueCell* cell);
  // Control plane: the spare of `id`, which the caller now owns, or nullptr. Its old value is still in it.
  ValueCell* adopt(const ua::NodeId& id);
  size_t orphan_count() const noexcept { return orphans_.size(); }

  // Any thread that is a participant of `reclaimer`. On a computed cell, write() replaces the template
  // and the cell stays computed.
  void write(ValueCell& cell, const ua::DataValue& value, EpochReclaimer::Participant& p);
  // The same from a value and its status and timestamps, with no DataValue to build (the Write service).
  struct ValueStamp {
    ua::StatusCode status;
    ua::DateTime source_timestamp;
    ua::DateTime server_timestamp;
    uint16_t source_picoseconds = 0;
    uint16_t server_picoseconds = 0;
  };
  void write(ValueCell& cell, const ua::Variant& value, const ValueStamp& stamp,
             EpochReclaimer::Participant& p);
  // Makes `cell` computed by `source`; its current value becomes the template. Idempotent.
  void set_source(ValueCell& cell, const ValueSource& source, EpochReclaimer::Participant& p);
  static bool computed(const ValueCell& cell) noexcept {
    return cell.version_.load(std::memory_order_acquire) & kComputedVersion;
  }

  // A computed cell's snapshot carries the computed value: inline when it fits, else `boxed` points
  // to a per-thread scratch Variant that is valid only until the calling thread's next snapshot of a
  // computed cell (REQUIRES: a caller copies or drops it before taking another snapshot).
  static ValueSnapshot snapshot(const ValueCell& cell);
  static void read(const ValueCell& cell, ua::DataValue& out) { read_versioned(cell, out, ua::DateTime{}); }
  // The same with the caller's clock reading: a computed cell takes `now` as its read time instead of
  // reading the clock itself, so all the values of one request share the request's one clock read.
  static void read(const ValueCell& cell, ua::DataValue& out, ua::DateTime now) {
    read_versioned(cell, out, now);
  }
  static uint64_t version(const ValueCell& cell) noexcept {
    const uint64_t v = cell.version_.load(std::memory_order_acquire);
    if (v & kComputedVersion) [[unlikely]]
      return computed_version();
    return v;
  }
  // The cell's value as a number, with its status, when it holds an inline number (SByte .. Double, finite;
  // inline_number()): what an alarm's quick judgement reads, without the rest of a snapshot. False for any
  // other value, a computed cell included.
  // Inline for that judgement's sake: a Double read without a torn copy in a few loads.
  static bool number(const ValueCell& cell, double& out, ua::StatusCode& status) noexcept {
    const uint32_t before = cell.sequence_.load(std::memory_order_acquire);
    const uint8_t kind = cell.kind_.load(std::memory_order_acquire);
    const uint64_t payload = cell.payload_.load(std::memory_order_acquire);
    const uint32_t st = cell.status_.load(std::memory_order_acquire);
    if ((before & 1u) || cell.sequence_.load(std::memory_order_relaxed) != before) [[unlikely]]
      return number_slow(cell, out, status);  // a writer was inside: wait for it
    status = ua::StatusCode(st);
    if (kind == static_cast<uint8_t>(ua::BuiltinType::Double)) {
      out = std::bit_cast<double>(payload);
      return std::isfinite(out);
    }
    return inline_number(kind, payload, out);
  }
  // Copies the value only when the version differs from `last_version`, which it then updates.
  static bool read_if_changed(const ValueCell& cell, uint64_t& last_version, ua::DataValue& out);

  EpochReclaimer& reclaimer() noexcept { return reclaimer_; }
  size_t cell_count() const noexcept;
  size_t partitions() const noexcept { return partitions_.size(); }
  // Heap bytes of the cells themselves (boxed values not included).
  size_t bytes() const noexcept;

 private:
  static ValueSnapshot load(const ValueCell& cell) noexcept;  // the seqlock copy, computed or not
  static bool number_slow(const ValueCell& cell, double& out, ua::StatusCode& status) noexcept;
  static uint64_t computed_version() noexcept;
  // Returns the version read. `now` is the read time of a computed cell; null: the clock's.
  static uint64_t read_versioned(const ValueCell& cell, ua::DataValue& out, ua::DateTime now);
  static void compute(ValueSnapshot& s, ua::Variant& out, ua::DateTime now);  // REQUIRES: s.kind == kComputed

  static constexpr size_t kChunkCells = 4096;
  static constexpr size_t kMaxChunks = 4096;
  struct Partition {
    std::vector<std::unique_ptr<ValueCell[]>> chunks;  // reserved to kMaxChunks: never reallocates
    size_t used = 0;                                   // cells handed out in the last chunk
  };

  std::vector<Partition> partitions_;
  std::unordered_multimap<ua::NodeId, ValueCell*> orphans_;  // control plane only
  EpochReclaimer reclaimer_;

 public:
  // Participants: one per shard plus the control thread. (Declared after reclaimer_ for clarity.)
  static constexpr size_t kMaxParticipants = 256;
};

// Encodes whether a value can live inline in a cell and, if so, its 8 payload bytes.
bool encode_inline(const ua::Variant& v, uint8_t& kind, uint64_t& payload) noexcept;
void decode_inline(uint8_t kind, uint64_t payload, ua::Variant& out);
// The number an inline payload of a numeric kind (SByte .. Double) holds, without a Variant; false for any
// other kind and for a Float or Double that is not finite.
bool inline_number(uint8_t kind, uint64_t payload, double& out) noexcept;

}  // namespace opcuad::addressspace
