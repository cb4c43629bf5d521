#include "services/event_record.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ua/generated/node_ids.hpp"

namespace opcuad::services {

namespace field = addressspace::event_field;

namespace {

// EventIds (Part 5 §6.4.2: unique per event notification): 8 bytes the DRBG draws once per process,
// followed by a 64-bit count. The count is taken by each thread in blocks of kIdBlock from one shared
// counter, so raising an event costs no system call and no shared write but once per block; the random
// prefix keeps the ids of one run apart from those of an earlier run (whose conditions' EventIds the
// state file may still hold). False when the DRBG failed: no id can be promised unique.
constexpr uint64_t kIdBlock = 4096;
std::atomic<uint64_t> g_next_id_block{0};

bool next_event_id(char (&out)[16]) {
  struct Prefix {
    unsigned char bytes[8] = {};
    bool ok = RAND_bytes(bytes, sizeof bytes) == 1;
  };
  static const Prefix prefix;
  if (!prefix.ok) return false;
  thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = g_next_id_block.fetch_add(kIdBlock, std::memory_order_relaxed);
    end = next + kIdBlock;
  }
  const uint64_t n = next++;
  std::memcpy(out, prefix.bytes, 8);
  for (size_t i = 0; i < 8; ++i) out[8 + i] = static_cast<char>(n >> (56 - 8 * i));
  return true;
}

// The per-thread pools of records and of their shared_ptr control blocks (event_record.hpp, Cost). A
// pool is freed at its thread's exit; what is released on that thread after that is freed at once.
template <class T>
struct Kept {
  std::vector<T*> items;
  bool gone = false;
  ~Kept() {
    gone = true;
    for (T* x : items) {
      if constexpr (std::is_void_v<T>) {
        ::operator delete(x);
      } else {
        delete x;
      }
    }
  }
  // Keeps `x` when there is room (reserved once, so keeping never allocates); false: free it instead.
  bool keep(T* x) noexcept {
    if (gone || items.size() >= EventRecord::kKeptRecords) return false;
    if (items.capacity() == 0) {
      try {
        items.reserve(EventRecord::kKeptRecords);
      } catch (...) {
        return false;
      }
    }
    items.push_back(x);
    return true;
  }
  T* take() noexcept {
    if (gone || items.empty()) return nullptr;
    T* x = items.back();
    items.pop_back();
    return x;
  }
};

thread_local Kept<EventRecord> t_records;

// The allocator of the records' control blocks: single blocks from a per-thread pool of blocks of T's size.
template <class T>
struct BlockAllocator {
  using value_type = T;
  BlockAllocator() = default;
  template <class U>
  BlockAllocator(const BlockAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit
  static Kept<void>& blocks() noexcept {
    thread_local Kept<void> kept;
    return kept;
  }
  T* allocate(size_t n) {
    if (n == 1) {
      if (void* b = blocks().take()) return static_cast<T*>(b);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n != 1 || !blocks().keep(p)) ::operator delete(p);
  }
  friend bool operator==(const BlockAllocator&, const BlockAllocator&) noexcept { return true; }
};

}  // namespace

// The deleter of every record (event_record.hpp, Cost): the record back to this thread's pool, cleared.
struct RecordRecycler {
  void operator()(EventRecord* r) const noexcept;
};

void RecordRecycler::operator()(EventRecord* r) const noexcept {
  r->fields_.clear();
  r->notifiers_.clear();
  r->shared_.reset();
  r->readers_ = 0;
  r->has_event_id_ = false;
  r->has_message_ = false;
  if (!t_records.keep(r)) delete r;
}

namespace {

std::shared_ptr<EventRecord> new_record() {
  EventRecord* r = t_records.take();
  if (!r) r = new EventRecord();
  return std::shared_ptr<EventRecord>(r, RecordRecycler{}, BlockAllocator<EventRecord>{});
}

}  // namespace

namespace {

const ua::Variant* find_field(const std::vector<std::pair<FieldKey, ua::Variant>>& fields, FieldKey key) {
  auto it = std::lower_bound(fields.begin(), fields.end(), key,
                             [](const auto& f, FieldKey k) { return f.first < k; });
  return it != fields.end() && it->first == key ? &it->second : nullptr;
}

}  // namespace

const ua::Variant* EventRecord::field(FieldKey key) const {
  if (key == field::kEventId) return has_event_id_ ? &event_id_ : nullptr;
  if (key == field::kMessage && has_message_) return &message_;
  if (const ua::Variant* v = find_field(fields_, key)) return v;
  return shared_ ? find_field(*shared_, key) : nullptr;
}

EventBuilder::EventBuilder(const addressspace::NodeStore& store, const ua::NodeId& type,
                           addressspace::NodeIndex source)
    : store_(store) {
  const addressspace::EventTypes* types = store.event_types();
  if (!types || source == addressspace::kNoNode) return;
  const std::optional<EventTypeIdx> t = types->event_type(type);
  if (!t) return;
  record_ = new_record();
  record_->type_ = *t;
  record_->source_ = source;
  record_->generation_ = store.generation();
  const auto notifiers = types->notifiers_of(source);
  record_->notifiers_.assign(notifiers.begin(), notifiers.end());
  set(field::kEventType, ua::Variant(type));
  set(field::kSourceNode, ua::Variant(store.node_id(source)));
}

bool EventBuilder::has(FieldKey key) const noexcept {
  return record_->field(key) != nullptr;
}

EventBuilder& EventBuilder::share(
    std::shared_ptr<const std::vector<std::pair<FieldKey, ua::Variant>>> fields) {
  record_->shared_ = std::move(fields);
  return *this;
}

EventBuilder& EventBuilder::reserve(size_t n) {
  record_->fields_.reserve(n);
  return *this;
}

EventBuilder& EventBuilder::set(FieldKey key, ua::Variant value) {
  if (key == field::kEventId) {
    record_->event_id_ = std::move(value);
    record_->has_event_id_ = true;
    return *this;
  }
  if (key == field::kMessage) {
    record_->message_ = std::move(value);
    record_->has_message_ = true;
    return *this;
  }
  auto& fields = record_->fields_;
  auto it = std::lower_bound(fields.begin(), fields.end(), key,
                             [](const auto& f, FieldKey k) { return f.first < k; });
  if (it != fields.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    fields.emplace(it, key, std::move(value));
  }
  return *this;
}

EventBuilder& EventBuilder::set(std::string_view name, ua::Variant value) {
  const ua::QualifiedName path[1] = {ua::QualifiedName{0, ua::String(name)}};
  const std::optional<FieldKey> key = store_.event_types()->field(record_->type_, path);
  if (key) set(*key, std::move(value));
  return *this;
}

EventBuilder& EventBuilder::readers(config::RoleSet roles) {
  record_->readers_ = roles;
  return *this;
}

EventBuilder& EventBuilder::message(std::string_view text) {
  ua::LocalizedText* t = record_->message_.get_if<ua::LocalizedText>();
  if (!t) {
    record_->message_ = ua::Variant(ua::LocalizedText{});
    t = record_->message_.get_if<ua::LocalizedText>();
  }
  t->locale.set_null();
  t->text.assign(text.data(), text.size());
  record_->has_message_ = true;
  return *this;
}

EventBuilder& EventBuilder::severity(uint16_t severity) {
  return set(field::kSeverity, ua::Variant(severity));
}

std::shared_ptr<const EventRecord> EventBuilder::build() {
  if (!record_) return nullptr;
  // EventId (Part 5 §6.4.2): "generated by the Server to uniquely identify a particular Event
  // Notification" (next_event_id above). A producer that re-sends an event it raised before
  // (ConditionRefresh, Part 9 §5.5.7) sets its EventId.
  if (!record_->has_event_id_) {
    char id[16];
    if (!next_event_id(id)) return nullptr;
    // Into the recycled record's own ByteString, whose storage it keeps.
    ua::ByteString* b = record_->event_id_.get_if<ua::ByteString>();
    if (!b) b = &record_->event_id_.storage().emplace<ua::ByteString>();
    b->assign(id, sizeof id);
    record_->has_event_id_ = true;
  }
  const ua::DateTime now = ua::DateTime::now();
  if (!has(field::kTime)) set(field::kTime, ua::Variant(now));
  // ReceiveTime: when the server received the event from the underlying source; the server is the
  // source of every event it raises itself.
  if (!has(field::kReceiveTime)) set(field::kReceiveTime, ua::Variant(now));
  if (!has(field::kSourceName)) {
    set(field::kSourceName, ua::Variant(ua::String(store_.browse_name_view(record_->source_).name.text)));
  }
  if (!has(field::kSeverity)) severity(1);
  if (!has(field::kMessage)) message("");
  std::shared_ptr<const EventRecord> out = std::move(record_);
  return out;
}

std::shared_ptr<const EventRecord> system_status_event(const addressspace::NodeStore& store,
                                                       ua::ServerState state, uint16_t severity,
                                                       std::string_view message) {
  EventBuilder b(store, ua::NodeId(0, ua::id::SystemStatusChangeEventType),
                 store.find(ua::NodeId(0, ua::id::Server)));
  if (!b.valid()) return nullptr;
  b.set(field::kSystemState, ua::Variant(static_cast<int32_t>(state))).severity(severity).message(message);
  return b.build();
}

std::shared_ptr<const EventRecord> model_change_event(const addressspace::NodeStore& store,
                                                      const addressspace::ModelChanges& changes) {
  const addressspace::NodeIndex server = store.find(ua::NodeId(0, ua::id::Server));
  if (!changes.complete) {
    // Too many to list: the coarse event, which tells a client to browse again what it shows.
    EventBuilder b(store, ua::NodeId(0, ua::id::BaseModelChangeEventType), server);
    if (!b.valid()) return nullptr;
    b.message("The address space was reloaded; too many changes to list");
    return b.build();
  }
  if (changes.entries.empty()) return nullptr;
  EventBuilder b(store, ua::NodeId(0, ua::id::GeneralModelChangeEventType), server);
  if (!b.valid()) return nullptr;
  std::vector<ua::ExtensionObject> list;
  list.reserve(changes.entries.size());
  for (const addressspace::ModelChange& c : changes.entries) {
    list.push_back(
        ua::ExtensionObject::make(ua::ModelChangeStructureDataType{c.affected, c.affected_type, c.verb}));
  }
  b.set(field::kChanges, ua::Variant(std::move(list)));
  b.message("The address space was reloaded");
  return b.build();
}

}  // namespace opcuad::services
