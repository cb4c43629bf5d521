#include "addressspace/value_store.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

namespace opcuad::addressspace {

namespace {
template <class T>
uint64_t to_bits(T v) noexcept {
  // A number or a pointer (a cell's ValueSource), kept as the payload's bits.
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));  // NOLINT(bugprone-sizeof-expression): the pointer itself is the value
  return bits;
}
template <class T>
T from_bits(uint64_t bits) noexcept {
  // A number or a pointer (a cell's ValueSource), kept as the payload's bits.
  T v;
  std::memcpy(&v, &bits, sizeof(T));  // NOLINT(bugprone-sizeof-expression): the pointer itself is the value
  return v;
}
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
// Boxes (the Variants of values that do not fit a cell) that the reclaimer freed on this thread, kept for
// its next boxed writes, by the type they held: a box given a value of the type it held keeps that value's
// storage (a string's capacity), so a steady stream of boxed writes on one thread (a condition's texts,
// ids and EventId; a client writing strings) allocates nothing once warm. Writes are reclaimed by the
// thread that made them (EpochReclaimer frees a participant's retired objects in its own quiescent()), so
// the boxes come back where they are needed. Only small scalars of the string-like types are kept (at most
// kKeptBytes of text), at most kKeptBoxes per type and thread: a box that held a large value is freed.
constexpr size_t kKeptBoxes = 2048;
constexpr size_t kKeptBytes = 256;

// The kept types: String, ByteString, XmlElement, NodeId, QualifiedName, LocalizedText, Guid.
constexpr size_t kKeptTypes = 7;
constexpr size_t kNotKept = kKeptTypes;
size_t kept_slot(const ua::Variant& v) noexcept {
  if (!v.is_scalar()) return kNotKept;
  switch (v.type()) {
    case ua::BuiltinType::String:
      return v.get_if<ua::String>()->size() <= kKeptBytes ? 0 : kNotKept;
    case ua::BuiltinType::ByteString:
      return v.get_if<ua::ByteString>()->size() <= kKeptBytes ? 1 : kNotKept;
    case ua::BuiltinType::XmlElement:
      return v.get_if<ua::XmlElement>()->size() <= kKeptBytes ? 2 : kNotKept;
    case ua::BuiltinType::NodeId:
      return v.get_if<ua::NodeId>()->string().size() <= kKeptBytes ? 3 : kNotKept;
    case ua::BuiltinType::QualifiedName:
      return v.get_if<ua::QualifiedName>()->name.size() <= kKeptBytes ? 4 : kNotKept;
    case ua::BuiltinType::LocalizedText: {
      const auto* t = v.get_if<ua::LocalizedText>();
      return t->locale.size() + t->text.size() <= kKeptBytes ? 5 : kNotKept;
    }
    case ua::BuiltinType::Guid:
      return 6;
    default:
      return kNotKept;
  }
}

struct BoxCache {
  std::array<std::vector<ua::Variant*>, kKeptTypes> boxes;
  ~BoxCache();
};
thread_local BoxCache t_boxes;
// Set once this thread's cache is destroyed (thread exit): boxes freed after that are deleted.
thread_local bool t_boxes_gone = false;

BoxCache::~BoxCache() {
  t_boxes_gone = true;
  for (auto& list : boxes) {
    for (ua::Variant* b : list) delete b;
  }
}

void recycle_box(void* object) noexcept {
  auto* box = static_cast<ua::Variant*>(object);
  const size_t slot = t_boxes_gone ? kNotKept : kept_slot(*box);
  if (slot == kNotKept) {
    delete box;
    return;
  }
  std::vector<ua::Variant*>& kept = t_boxes.boxes[slot];
  if (kept.capacity() == 0) {
    try {
      kept.reserve(kKeptBoxes);
    } catch (...) {
      delete box;
      return;
    }
  }
  if (kept.size() >= kKeptBoxes) {
    delete box;
    return;
  }
  kept.push_back(box);  // within the reserved capacity: no allocation, no throw
}

// A box holding a copy of `v`: a kept one of its type when this thread has one.
ua::Variant* boxed_copy(const ua::Variant& v) {
  const size_t slot = t_boxes_gone ? kNotKept : kept_slot(v);
  if (slot == kNotKept || t_boxes.boxes[slot].empty()) return new ua::Variant(v);
  std::vector<ua::Variant*>& kept = t_boxes.boxes[slot];
  ua::Variant* box = kept.back();
  kept.pop_back();
  try {
    *box = v;
  } catch (...) {
    delete box;
    throw;
  }
  return box;
}

}  // namespace

bool encode_inline(const ua::Variant& v, uint8_t& kind, uint64_t& payload) noexcept {
  if (v.is_empty()) {
    kind = ValueCell::kEmpty;
    payload = 0;
    return true;
  }
  if (!v.is_scalar() || !v.dimensions().empty()) return false;
  kind = static_cast<uint8_t>(v.type());
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_arithmetic_v<T>) {
          payload = to_bits(x);
          return true;
        } else if constexpr (std::is_same_v<T, ua::DateTime>) {
          payload = to_bits(x.ticks);
          return true;
        } else if constexpr (std::is_same_v<T, ua::StatusCode>) {
          payload = x.value();
          return true;
        } else {
          return false;
        }
      },
      v.storage());
}

bool inline_number(uint8_t kind, uint64_t payload, double& out) noexcept {
  using B = ua::BuiltinType;
  switch (static_cast<B>(kind)) {
    case B::SByte:
      out = from_bits<int8_t>(payload);
      return true;
    case B::Byte:
      out = from_bits<uint8_t>(payload);
      return true;
    case B::Int16:
      out = from_bits<int16_t>(payload);
      return true;
    case B::UInt16:
      out = from_bits<uint16_t>(payload);
      return true;
    case B::Int32:
      out = from_bits<int32_t>(payload);
      return true;
    case B::UInt32:
      out = from_bits<uint32_t>(payload);
      return true;
    case B::Int64:
      out = static_cast<double>(from_bits<int64_t>(payload));
      return true;
    case B::UInt64:
      out = static_cast<double>(from_bits<uint64_t>(payload));
      return true;
    case B::Float:
      out = from_bits<float>(payload);
      return std::isfinite(out);
    case B::Double:
      out = from_bits<double>(payload);
      return std::isfinite(out);
    default:
      return false;
  }
}

void decode_inline(uint8_t kind, uint64_t payload, ua::Variant& out) {
  using B = ua::BuiltinType;
  switch (static_cast<B>(kind)) {
    case B::Boolean:
      out.set_scalar(from_bits<bool>(payload));
      return;
    case B::SByte:
      out.set_scalar(from_bits<int8_t>(payload));
      return;
    case B::Byte:
      out.set_scalar(from_bits<uint8_t>(payload));
      return;
    case B::Int16:
      out.set_scalar(from_bits<int16_t>(payload));
      return;
    case B::UInt16:
      out.set_scalar(from_bits<uint16_t>(payload));
      return;
    case B::Int32:
      out.set_scalar(from_bits<int32_t>(payload));
      return;
    case B::UInt32:
      out.set_scalar(from_bits<uint32_t>(payload));
      return;
    case B::Int64:
      out.set_scalar(from_bits<int64_t>(payload));
      return;
    case B::UInt64:
      out.set_scalar(from_bits<uint64_t>(payload));
      return;
    case B::Float:
      out.set_scalar(from_bits<float>(payload));
      return;
    case B::Double:
      out.set_scalar(from_bits<double>(payload));
      return;
    case B::DateTime:
      out.set_scalar(ua::DateTime{from_bits<int64_t>(payload)});
      return;
    case B::StatusCode:
      out.set_scalar(ua::StatusCode(static_cast<uint32_t>(payload)));
      return;
    default:
      out.clear();
      return;
  }
}

void ValueSnapshot::to_data_value(ua::DataValue& out) const {
  if (kind == ValueCell::kBoxed) {
    out.value = *boxed;
  } else {
    decode_inline(kind, payload, out.value);
  }
  out.status = status;
  out.source_timestamp = source_timestamp;
  out.server_timestamp = server_timestamp;
  out.source_picoseconds = source_picoseconds;
  out.server_picoseconds = server_picoseconds;
}

ValueStore::ValueStore(size_t partitions)
    : partitions_(partitions == 0 ? 1 : partitions), reclaimer_(kMaxParticipants) {
  for (auto& p : partitions_) p.chunks.reserve(kMaxChunks);
}

ValueStore::~ValueStore() {
  for (auto& p : partitions_) {
    for (size_t c = 0; c < p.chunks.size(); ++c) {
      const size_t n = c + 1 == p.chunks.size() ? p.used : kChunkCells;
      for (size_t i = 0; i < n; ++i) delete p.chunks[c][i].boxed_.load(std::memory_order_relaxed);
    }
  }
}

ValueCell* ValueStore::allocate(const ua::NodeId& id) {
  Partition& p = partitions_[id.hash() % partitions_.size()];
  if (p.chunks.empty() || p.used == kChunkCells) {
    if (p.chunks.size() == kMaxChunks) return nullptr;
    p.chunks.push_back(std::make_unique<ValueCell[]>(kChunkCells));
    p.used = 0;
  }
  return &p.chunks.back()[p.used++];
}

void ValueStore::orphan(const ua::NodeId& id, ValueCell* cell) {
  if (cell) orphans_.emplace(id, cell);
}

ValueCell* ValueStore::adopt(const ua::NodeId& id) {
  const auto it = orphans_.find(id);
  if (it == orphans_.end()) return nullptr;
  ValueCell* cell = it->second;
  orphans_.erase(it);
  return cell;
}

size_t ValueStore::cell_count() const noexcept {
  size_t n = 0;
  for (const auto& p : partitions_) n += p.chunks.empty() ? 0 : (p.chunks.size() - 1) * kChunkCells + p.used;
  return n;
}

size_t ValueStore::bytes() const noexcept {
  size_t n = 0;
  for (const auto& p : partitions_) n += p.chunks.size() * kChunkCells * sizeof(ValueCell);
  return n;
}

void ValueStore::write(ValueCell& cell, const ua::DataValue& value, EpochReclaimer::Participant& p) {
  write(cell, value.value,
        {value.status, value.source_timestamp, value.server_timestamp, value.source_picoseconds,
         value.server_picoseconds},
        p);
}

void ValueStore::write(ValueCell& cell, const ua::Variant& v, const ValueStamp& stamp,
                       EpochReclaimer::Participant& p) {
  uint8_t kind = 0;
  uint64_t payload = 0;
  const ua::Variant* fresh = nullptr;
  // A computed cell keeps its kind and source; the value becomes its template, always boxed. The kind
  // only changes in set_source() (control plane), so reading it outside the critical section is safe.
  const bool is_computed = cell.kind_.load(std::memory_order_acquire) == ValueCell::kComputed;
  if (is_computed) {
    kind = ValueCell::kComputed;
    payload = cell.payload_.load(std::memory_order_acquire);
    fresh = boxed_copy(v);
  } else if (!encode_inline(v, kind, payload)) {
    kind = ValueCell::kBoxed;
    fresh = boxed_copy(v);  // built before the critical section: it may allocate
  }

  // Enter: even -> odd. A CAS lets several writers of one cell take turns.
  uint32_t seq = cell.sequence_.load(std::memory_order_relaxed);
  for (;;) {
    if (seq & 1u) {
      cpu_relax();
      seq = cell.sequence_.load(std::memory_order_relaxed);
      continue;
    }
    if (cell.sequence_.compare_exchange_weak(seq, seq + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed))
      break;
  }
  // The field stores are releases and the reader's field loads acquires (instead of fences, which
  // ThreadSanitizer does not model): a reader that sees any new field also sees the odd sequence on its
  // re-check.
  cell.kind_.store(kind, std::memory_order_release);
  cell.payload_.store(payload, std::memory_order_release);
  cell.source_ts_.store(stamp.source_timestamp.ticks, std::memory_order_release);
  cell.server_ts_.store(stamp.server_timestamp.ticks, std::memory_order_release);
  cell.status_.store(stamp.status.value(), std::memory_order_release);
  cell.picoseconds_.store(uint32_t{stamp.source_picoseconds} << 16 | stamp.server_picoseconds,
                          std::memory_order_release);
  // Writers take turns on the sequence, so `boxed_` only changes here: an inline value replacing an
  // inline value (the common write) stores nothing there, saving a locked exchange.
  const ua::Variant* old = cell.boxed_.load(std::memory_order_acquire);
  if (old || fresh) cell.boxed_.store(fresh, std::memory_order_release);
  cell.version_.store(cell.version_.load(std::memory_order_relaxed) + 1, std::memory_order_release);

  cell.sequence_.store(seq + 2, std::memory_order_release);  // leave: odd -> even
  if (old) reclaimer_.retire(p, const_cast<ua::Variant*>(old), &recycle_box);
}

void ValueStore::set_source(ValueCell& cell, const ValueSource& source, EpochReclaimer::Participant& p) {
  // The stored value becomes the template; a cell already computed keeps its template (reading it
  // through read() would store a computed value instead).
  const ValueSnapshot stored = load(cell);
  const bool was_computed = stored.kind == ValueCell::kComputed;
  ua::DataValue current;
  if (!was_computed) stored.to_data_value(current);
  const ua::Variant* fresh = was_computed ? nullptr : new ua::Variant(std::move(current.value));
  uint32_t seq = cell.sequence_.load(std::memory_order_relaxed);
  for (;;) {
    if (seq & 1u) {
      cpu_relax();
      seq = cell.sequence_.load(std::memory_order_relaxed);
      continue;
    }
    if (cell.sequence_.compare_exchange_weak(seq, seq + 1, std::memory_order_acquire,
                                             std::memory_order_relaxed))
      break;
  }
  cell.kind_.store(ValueCell::kComputed, std::memory_order_release);
  cell.payload_.store(to_bits(&source), std::memory_order_release);
  const ua::Variant* old = was_computed ? nullptr : cell.boxed_.exchange(fresh, std::memory_order_acq_rel);
  cell.version_.store((cell.version_.load(std::memory_order_relaxed) + 1) | kComputedVersion,
                      std::memory_order_release);
  cell.sequence_.store(seq + 2, std::memory_order_release);
  if (old) reclaimer_.retire(p, const_cast<ua::Variant*>(old), &recycle_box);
}

// Inlined into its callers here (every read of a value takes it): no other file calls it.
[[gnu::always_inline]] inline ValueSnapshot ValueStore::load(const ValueCell& cell) noexcept {
  ValueSnapshot s;
  for (;;) {
    const uint32_t before = cell.sequence_.load(std::memory_order_acquire);
    if (before & 1u) {
      cpu_relax();
      continue;
    }
    s.kind = cell.kind_.load(std::memory_order_acquire);
    s.payload = cell.payload_.load(std::memory_order_acquire);
    s.source_timestamp.ticks = cell.source_ts_.load(std::memory_order_acquire);
    s.server_timestamp.ticks = cell.server_ts_.load(std::memory_order_acquire);
    s.status = ua::StatusCode(cell.status_.load(std::memory_order_acquire));
    const uint32_t ps = cell.picoseconds_.load(std::memory_order_acquire);
    s.boxed = cell.boxed_.load(std::memory_order_acquire);
    s.version = cell.version_.load(std::memory_order_acquire);
    if (cell.sequence_.load(std::memory_order_relaxed) == before) {
      s.source_picoseconds = static_cast<uint16_t>(ps >> 16);
      s.server_picoseconds = static_cast<uint16_t>(ps & 0xFFFF);
      return s;
    }
  }
}

bool ValueStore::number_slow(const ValueCell& cell, double& out, ua::StatusCode& status) noexcept {
  for (;;) {
    const uint32_t before = cell.sequence_.load(std::memory_order_acquire);
    if (before & 1u) {
      cpu_relax();
      continue;
    }
    const uint8_t kind = cell.kind_.load(std::memory_order_acquire);
    const uint64_t payload = cell.payload_.load(std::memory_order_acquire);
    const uint32_t st = cell.status_.load(std::memory_order_acquire);
    if (cell.sequence_.load(std::memory_order_relaxed) == before) {
      status = ua::StatusCode(st);
      return inline_number(kind, payload, out);
    }
  }
}

uint64_t ValueStore::computed_version() noexcept {
  return kComputedVersion | static_cast<uint64_t>(ua::DateTime::now().ticks);
}

// The template (s.boxed) stays valid during the call: it is retired only through the epoch reclaimer,
// and the reading thread is between quiescent points.
void ValueStore::compute(ValueSnapshot& s, ua::Variant& out, ua::DateTime now) {
  const auto* source = from_bits<const ValueSource*>(s.payload);
  if (now.is_null()) now = ua::DateTime::now();
  source->compute(s.boxed, now, out);
  s.version = kComputedVersion | static_cast<uint64_t>(now.ticks);
  s.source_timestamp = now;
  s.server_timestamp = now;
  s.source_picoseconds = 0;
  s.server_picoseconds = 0;
}

ValueSnapshot ValueStore::snapshot(const ValueCell& cell) {
  ValueSnapshot s = load(cell);
  if (s.kind == ValueCell::kComputed) [[unlikely]] {
    // The per-thread scratch of the header's contract: one computed boxed value per thread at a time.
    thread_local ua::Variant scratch;
    compute(s, scratch, ua::DateTime{});
    if (encode_inline(scratch, s.kind, s.payload)) {
      s.boxed = nullptr;
    } else {
      s.kind = ValueCell::kBoxed;
      s.boxed = &scratch;
    }
  }
  return s;
}

uint64_t ValueStore::read_versioned(const ValueCell& cell, ua::DataValue& out, ua::DateTime now) {
  ValueSnapshot s = load(cell);
  if (s.kind == ValueCell::kComputed) [[unlikely]] {
    compute(s, out.value, now);  // straight into the caller's value: no scratch, no second copy
    out.status = s.status;
    out.source_timestamp = s.source_timestamp;
    out.server_timestamp = s.server_timestamp;
    out.source_picoseconds = 0;
    out.server_picoseconds = 0;
  } else {
    s.to_data_value(out);
  }
  return s.version;
}

bool ValueStore::read_if_changed(const ValueCell& cell, uint64_t& last_version, ua::DataValue& out) {
  if (version(cell) == last_version) return false;
  last_version = read_versioned(cell, out, ua::DateTime{});
  return true;
}

}  // namespace opcuad::addressspace
