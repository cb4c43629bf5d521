#pragma once
// MonitoredItem (Part 4 §5.12.1): what one item samples, how it decides that a sample is a change worth
// reporting (DataChangeFilter, §7.22.2), and the bounded queue its notifications wait in (§5.12.1.5).
//
// Layout. A server holds hundreds of thousands of items, nearly all of them the same shape: the Value of
// a numeric-id variable, no deadband, no index range, no triggering, a queue of one. That shape fits in
// the 96-byte MonitoredItem alone; everything else lives in ItemExtras, allocated only for items that need
// it. The last sampled value (SampledValue) keeps a scalar the value store holds inline (kind + 8 bytes)
// with its status and timestamps; other values are boxed. A queue of one needs no storage of its own: the
// value it holds is always the last value that passed the filter, so `pending` marks `last` as queued and
// the timestamps the client asked for are applied when it is taken.
//
// shard-local: owned by its Subscription (Subscription::items, an ItemTable), sampled by its shard's
// Sampler, and touched only by that shard's thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_set>
#include <vector>

#include "addressspace/attributes.hpp"
#include "addressspace/node_store.hpp"
#include "addressspace/value_store.hpp"
#include "services/event_item.hpp"
#include "services/index_range.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::ua {
class Encoder;
}

namespace opcuad::services {

struct UserAccess;  // services/session.hpp

class Subscription;

// Part 4 §7.39: InfoType DataValue (bit 10) with the Overflow bit (bit 7), set on the StatusCode of the
// value next to the one a full queue lost.
inline constexpr uint32_t kOverflowInfoBits = 0x480;
// The largest queue a monitored item can get (queue_capacity_ is 16 bits); the configured
// limits.max_monitored_item_queue_size revises queueSize down further (Part 4 §5.12.2).
inline constexpr uint32_t kMaxQueueSize = 65535;
// The fastest sampling the engine serves by timer (100 Hz). A requested 0 means
// exception-based sampling on write (Part 4 §5.12.1.2): granted for Values (revised to 0, woken by
// writes), otherwise revised up to this.
inline constexpr double kFastestSamplingIntervalMs = 10;
inline constexpr double kSlowestSamplingIntervalMs = 3600000;

// A decoded DataChangeFilter (Part 4 §7.22.2); the default (no filter) is StatusValue without deadband.
struct ChangeFilter {
  ua::DataChangeTrigger trigger = ua::DataChangeTrigger::StatusValue;
  ua::DeadbandType deadband = ua::DeadbandType::None;
  double deadband_value = 0;  // as requested (engineering units, or percent of the EURange)
  double absolute = 0;        // the deadband in engineering units
};

// Does `next` differ from the last reported value enough to be reported (trigger, then deadband)?
bool passes_filter(const ChangeFilter& f, const ua::DataValue& last, const ua::DataValue& next);

// A DataValue in 32 bytes when its value is a scalar of at most 8 bytes (the value store's inline kinds)
// and it carries no picoseconds; otherwise the whole DataValue is boxed on the heap.
class SampledValue {
 public:
  SampledValue() noexcept = default;
  ~SampledValue() { unbox(); }
  // Inline, like unbox(): a sample moves the last value into the queue and assigns a new one per item
  // per tick.
  SampledValue(SampledValue&& o) noexcept
      : payload_(o.payload_),
        source_ts_(o.source_ts_),
        server_ts_(o.server_ts_),
        status_(o.status_),
        kind_(o.kind_) {
    o.kind_ = addressspace::ValueCell::kEmpty;
    o.payload_ = 0;
  }
  SampledValue& operator=(SampledValue&& o) noexcept {
    if (this != &o) {
      unbox();
      payload_ = o.payload_;
      source_ts_ = o.source_ts_;
      server_ts_ = o.server_ts_;
      status_ = o.status_;
      kind_ = o.kind_;
      o.kind_ = addressspace::ValueCell::kEmpty;
      o.payload_ = 0;
    }
    return *this;
  }
  SampledValue(const SampledValue&) = delete;
  SampledValue& operator=(const SampledValue&) = delete;

  // From a cell snapshot (REQUIRES: its boxed value still valid, i.e. before the next quiescent point).
  void assign(const addressspace::ValueSnapshot& s);
  void assign(ua::DataValue&& v);
  void to_data_value(ua::DataValue& out) const;
  void add_status_bits(uint32_t bits) noexcept;
  // Empty again; a boxed value is freed now.
  void clear() noexcept { unbox(); }

  bool boxed() const noexcept { return kind_ == kBoxed; }
  const ua::DataValue& box() const noexcept { return *box_; }  // REQUIRES: boxed()
  uint8_t kind() const noexcept { return kind_; }              // inline kind (ValueCell::kEmpty, a type)
  uint64_t payload() const noexcept { return payload_; }
  uint32_t status() const noexcept { return status_; }
  int64_t source_ticks() const noexcept { return source_ts_; }
  int64_t server_ticks() const noexcept { return server_ts_; }

 private:
  static constexpr uint8_t kBoxed = addressspace::ValueCell::kBoxed;
  void unbox() noexcept {
    if (kind_ == kBoxed) free_box();
    kind_ = addressspace::ValueCell::kEmpty;
    payload_ = 0;
  }
  void free_box() noexcept;  // REQUIRES: kind_ == kBoxed
  ua::DataValue& make_box();

  union {
    uint64_t payload_ = 0;
    ua::DataValue* box_;  // kind_ == kBoxed
  };
  int64_t source_ts_ = 0;
  int64_t server_ts_ = 0;
  uint32_t status_ = 0;
  uint8_t kind_ = addressspace::ValueCell::kEmpty;
};

// The rare parts of an item; an item has none (extras == nullptr) in the common case.
struct ItemExtras {
  std::unique_ptr<ua::NodeId> node_id;  // when it is not a numeric NodeId (MonitoredItem::node_numeric)
  std::optional<IndexRange> range;
  double absolute_deadband = 0;  // in engineering units
  ua::DeadbandType deadband = ua::DeadbandType::None;
  // Queued values older than the newest one (the newest is MonitoredItem::last), oldest first: a ring
  // grown on demand up to the queue size minus one.
  uint16_t older_head = 0;
  uint16_t older_count = 0;
  std::vector<SampledValue> older;
  // SetTriggering links (Part 4 §5.12.1.6): a set, so adding or removing one of many links is O(1).
  std::unordered_set<uint32_t> triggered;
  // An event item's filter and queue (event_item.hpp); null for data items.
  std::unique_ptr<EventItemState> event;

  bool needed() const noexcept {
    return node_id || range || deadband != ua::DeadbandType::None || older_count > 0 || !triggered.empty() ||
           event;
  }
};

struct MonitoredItem {
  static constexpr uint32_t kNoGroup = UINT32_MAX;

  uint32_t id = 0;  // 0: a free slot of the ItemTable
  uint32_t client_handle = 0;
  Subscription* subscription = nullptr;
  const addressspace::ValueCell* cell = nullptr;  // the Value cell (attribute Value only); never freed
  uint64_t last_version = ~uint64_t{0};           // the cell's version at the last sample; ~0: none yet
  SampledValue last;                              // the last value that passed the filter
  std::unique_ptr<ItemExtras> extras;
  uint32_t node_numeric = 0;          // the NodeId is ns=node_ns;i=node_numeric unless extras->node_id
  uint32_t sampling_interval_ms = 0;  // as revised: whole milliseconds, 0 for exception-based
  uint32_t sampler_key = kNoGroup;    // the Sampler group it is in (interval in us; 0: by cell)
  uint32_t sampler_slot = 0;
  uint16_t node_ns = 0;
  uint16_t queue_capacity_ = 1;  // revised queueSize, at most kMaxQueueSize
  uint8_t attribute_id = addressspace::attr::kValue;
  uint8_t mode_ : 2 = 0;        // ua::MonitoringMode
  uint8_t timestamps_ : 2 = 2;  // ua::TimestampsToReturn (Both)
  uint8_t trigger_ : 2 = 1;     // ua::DataChangeTrigger (StatusValue)
  bool discard_oldest : 1 = true;
  bool follows_publishing : 1 = false;  // asked for -1: tracks the publishing interval (Part 4 §5.12.1.2)
  bool has_last : 1 = false;            // the first sample is always reported (the initial value)
  bool ready : 1 = false;               // has values to report (counted by its subscription)
  bool listed : 1 = false;              // has an entry on its subscription's ready list (maybe stale)
  bool pending : 1 = false;             // `last` is queued (as the newest value of the queue)
  bool newest_overflow : 1 = false;     // ... and carries the overflow bits (Part 4 §5.12.1.5)
  bool session_scoped : 1 = false;      // a diagnostics array: sampled through its session's filter

  // An event item (Part 4 §5.12.1.1: AttributeId EventNotifier): never sampled, fed by the server's event
  // drain; its queue is extras->event, and `pending` says whether that queue holds anything.
  bool is_event() const noexcept { return attribute_id == addressspace::attr::kEventNotifier; }
  EventItemState* event() const noexcept { return extras ? extras->event.get() : nullptr; }
  EventItemState& make_event();  // creates the extras and the state
  void set_event(std::unique_ptr<EventItemState> state) { ensure_extras().event = std::move(state); }

  ua::MonitoringMode mode() const noexcept { return static_cast<ua::MonitoringMode>(mode_); }
  void set_mode_value(ua::MonitoringMode m) noexcept { mode_ = static_cast<uint8_t>(m) & 3; }
  ua::TimestampsToReturn timestamps() const noexcept {
    return static_cast<ua::TimestampsToReturn>(timestamps_);
  }
  void set_timestamps(ua::TimestampsToReturn t) noexcept { timestamps_ = static_cast<uint8_t>(t) & 3; }

  void set_node_id(const ua::NodeId& id);
  ua::NodeId node_id() const;
  const IndexRange* range() const noexcept { return extras && extras->range ? &*extras->range : nullptr; }
  void set_range(std::optional<IndexRange> r);
  ChangeFilter filter() const noexcept;
  void set_filter(const ChangeFilter& f);
  const std::unordered_set<uint32_t>* triggered() const noexcept {
    return extras ? &extras->triggered : nullptr;
  }
  std::unordered_set<uint32_t>& triggered_links();  // creates the extras; call drop_unneeded_extras() after
  void drop_unneeded_extras() noexcept;

  // The queue (Part 4 §5.12.1.5): when full, discardOldest drops the oldest value and flags the new
  // oldest with the overflow bits; otherwise the newest is replaced and the replacement flagged. A queue
  // of one always holds the newest value and never flags overflow. TimestampsToReturn is applied when a
  // value leaves the queue.
  uint32_t queue_capacity() const noexcept { return queue_capacity_; }
  void configure_queue(uint32_t capacity, bool discard_oldest);  // keeps the newest values that fit
  bool queue_empty() const noexcept { return !pending; }         // the newest queued value is always `last`
  size_t queue_size() const noexcept {
    if (const EventItemState* ev = event()) return ev->size();
    return size_t{pending} + (extras ? extras->older_count : 0);
  }
  void clear_queue() noexcept;
  // `v` becomes the last value and is queued (what sample() does with a value that passed the filter).
  void enqueue(ua::DataValue v);
  // Encodes the oldest queued value as a MonitoredItemNotification {clientHandle, DataValue} and drops
  // it. REQUIRES: !queue_empty().
  void encode_front(ua::Encoder& e) {
    encode_oldest(e);
    drop_front();
  }
  // The two halves: encode without consuming (a Publish that finds the value does not fit the client's
  // limits leaves it queued), then drop it. REQUIRES: !queue_empty().
  void encode_oldest(ua::Encoder& e) const;
  void drop_front() noexcept;
  ua::DataValue pop();  // REQUIRES: !queue_empty()

  // The Value cell this item samples in `store`: its variable's, nullptr when the NodeId names no variable
  // there or the variable may no longer be read (its AccessLevel, or for `user` its read_roles: what
  // CreateMonitoredItems checked, which a reload may have changed). `user` null: the roles are not
  // checked (a subscription without a session; attaching it to one checks them). Unchanged for an item
  // not on the Value. A reload compares it with `cell` (Subscription::resolve_items).
  const addressspace::ValueCell* resolved_cell(const addressspace::NodeStore& store,
                                               const UserAccess* user) const;
  // Takes one sample; queues it when it passes the filter and tells the subscription.
  void sample(const addressspace::NodeStore& store);
  // Forget the last sample, so the next one is reported whatever its value (a mode change from Disabled).
  void reset_sampling() noexcept {
    last_version = ~uint64_t{0};
    has_last = false;
  }

 private:
  ItemExtras& ensure_extras();
  bool make_room();
  void drop_older_front() noexcept;
};
// The common item is this struct alone (plus its slot in the ItemTable index and its Sampler group).
static_assert(sizeof(MonitoredItem) <= 96, "keep the common monitored item small");

// Software prefetch for the walks over many items, whose queue rings are allocations of their own: the
// slot a sample moves the last value to (Sampler::run), the slot the oldest queued value is encoded from
// (the Publish walk). Both read the item and its extras: call them on an item fetched a few steps earlier.
inline void prefetch_next_slot(const MonitoredItem& item) noexcept {
  const ItemExtras* x = item.extras.get();
  if (!x || x->older.empty()) return;
  size_t at = size_t{x->older_head} + x->older_count;
  if (at >= x->older.size()) at -= x->older.size();
  __builtin_prefetch(x->older.data() + at, 1);
}
inline void prefetch_oldest(const MonitoredItem& item) noexcept {
  const ItemExtras* x = item.extras.get();
  if (x && x->older_count > 0) __builtin_prefetch(x->older.data() + x->older_head);
}

}  // namespace opcuad::services
