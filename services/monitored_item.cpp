#include "services/monitored_item.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "addressspace/attributes.hpp"
#include "services/attribute_read.hpp"
#include "services/diagnostics.hpp"
#include "services/subscription.hpp"
#include "ua/codec.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using addressspace::NodeClass;
using addressspace::ValueCell;
using addressspace::ValueSnapshot;
using addressspace::ValueStore;
using ua::BuiltinType;

using addressspace::attr::kValue;

// The numbers of a numeric scalar or array, for the deadband; false for anything else.
bool numbers(const ua::Variant& v, std::vector<double>& out) {
  out.clear();
  bool numeric = false;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
          out.push_back(static_cast<double>(x));
          numeric = true;
        } else if constexpr (requires { typename T::value_type; }) {
          using E = typename T::value_type;
          if constexpr (std::is_arithmetic_v<E> && !std::is_same_v<E, bool>) {
            for (auto e : x) out.push_back(static_cast<double>(e));
            numeric = true;
          }
        }
      },
      v.storage());
  return numeric;
}

// Part 4 §7.22.2: a value is reported when any element moved by more than the deadband; arrays whose size
// changed, and values that are not numbers, are compared for equality.
bool exceeds_deadband(const ua::Variant& last, const ua::Variant& next, double deadband) {
  thread_local std::vector<double> a, b;  // shard-local scratch: no allocation per sample once warm
  if (!numbers(last, a) || !numbers(next, b)) return !(last == next);
  if (a.size() != b.size() || last.type() != next.type()) return true;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::fabs(a[i] - b[i]) > deadband) return true;
  }
  return false;
}

template <class T>
T from_bits(uint64_t bits) noexcept {
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// Variant equality for two inline scalars without building Variants: floating kinds compare as numbers
// (NaN differs from itself, -0 equals 0, exactly as Variant's operator==), every other kind by its bits.
bool inline_equal(uint8_t kind_a, uint64_t a, uint8_t kind_b, uint64_t b) noexcept {
  if (kind_a != kind_b) return false;
  switch (static_cast<BuiltinType>(kind_a)) {
    case BuiltinType::Float:
      return from_bits<float>(a) == from_bits<float>(b);
    case BuiltinType::Double:
      return from_bits<double>(a) == from_bits<double>(b);
    default:
      return a == b;
  }
}

// What the filter looks at in a sample, whichever form it is in. An inline value has `variant` null.
struct SampleView {
  uint8_t kind = ValueCell::kEmpty;
  uint64_t payload = 0;
  const ua::Variant* variant = nullptr;
  uint32_t status = 0;
  int64_t source_ticks = 0;
  uint16_t source_picoseconds = 0;

  static SampleView of(const ua::DataValue& v) {
    return {ValueCell::kBoxed, 0, &v.value, v.status.value(), v.source_timestamp.ticks, v.source_picoseconds};
  }
  static SampleView of(const SampledValue& v) {
    if (v.boxed()) return of(v.box());
    return {v.kind(), v.payload(), nullptr, v.status(), v.source_ticks(), 0};
  }
  // The value as a Variant; an inline one is decoded into `scratch` (a scalar: no allocation).
  const ua::Variant& value(ua::Variant& scratch) const {
    if (variant) return *variant;
    addressspace::decode_inline(kind, payload, scratch);
    return scratch;
  }
};

bool passes(ua::DataChangeTrigger trigger, ua::DeadbandType deadband, double absolute, const SampleView& last,
            const SampleView& next) {
  if (last.status != next.status) return true;
  if (trigger == ua::DataChangeTrigger::Status) return false;
  if (trigger == ua::DataChangeTrigger::StatusValueTimestamp &&
      (last.source_ticks != next.source_ticks || last.source_picoseconds != next.source_picoseconds)) {
    return true;
  }
  if (deadband == ua::DeadbandType::None && !last.variant && !next.variant) {
    return !inline_equal(last.kind, last.payload, next.kind, next.payload);
  }
  ua::Variant a, b;
  const ua::Variant& lv = last.value(a);
  const ua::Variant& nv = next.value(b);
  if (deadband == ua::DeadbandType::None) return !(lv == nv);
  return exceeds_deadband(lv, nv, absolute);
}

// DataValue encoding (Part 6 §5.2.2.17) with TimestampsToReturn applied on the way, so a stored value
// never has to be copied to drop a timestamp.
void encode_data_value(ua::Encoder& e, const ua::Variant& value, uint32_t status_code, int64_t source,
                       uint16_t source_ps, int64_t server, uint16_t server_ps, ua::TimestampsToReturn ts) {
  using T = ua::TimestampsToReturn;
  if (ts == T::Server || ts == T::Neither) source = 0, source_ps = 0;
  if (ts == T::Source || ts == T::Neither) server = 0, server_ps = 0;
  uint8_t mask = 0;
  if (!value.is_empty()) mask |= 0x01;
  if (status_code != 0) mask |= 0x02;
  if (source != 0) mask |= 0x04;
  if (server != 0) mask |= 0x08;
  if (source_ps) mask |= 0x10;
  if (server_ps) mask |= 0x20;
  e.write_u8(mask);
  if (mask & 0x01) ua::encode(e, value);
  if (mask & 0x02) e.write_u32(status_code);
  if (mask & 0x04) e.write_u64(static_cast<uint64_t>(source));
  if (mask & 0x10) e.write_u16(source_ps);
  if (mask & 0x08) e.write_u64(static_cast<uint64_t>(server));
  if (mask & 0x20) e.write_u16(server_ps);
}

// A MonitoredItemNotification {clientHandle, DataValue} of an inline scalar, written with one append:
// the DataValue's mask, the Variant's encoding byte (its built-in type id, Part 6 §5.2.2.16) and the
// value's bytes, the status, the timestamps TimestampsToReturn keeps (inline values have no picoseconds).
// False for a kind it does not know (the Variant path then encodes it).
bool encode_inline_notification(ua::Encoder& e, uint32_t client_handle, uint8_t kind, uint64_t payload,
                                uint32_t status_code, int64_t source, int64_t server,
                                ua::TimestampsToReturn ts) {
  using B = BuiltinType;
  size_t value_bytes = 0;
  if (kind != ValueCell::kEmpty) {
    switch (static_cast<B>(kind)) {
      case B::Boolean:
      case B::SByte:
      case B::Byte:
        value_bytes = 1;
        break;
      case B::Int16:
      case B::UInt16:
        value_bytes = 2;
        break;
      case B::Int32:
      case B::UInt32:
      case B::Float:
      case B::StatusCode:
        value_bytes = 4;
        break;
      case B::Int64:
      case B::UInt64:
      case B::Double:
      case B::DateTime:
        value_bytes = 8;
        break;
      default:
        return false;
    }
  }
  using T = ua::TimestampsToReturn;
  if (ts == T::Server || ts == T::Neither) source = 0;
  if (ts == T::Source || ts == T::Neither) server = 0;
  uint8_t out[4 + 1 + 1 + 8 + 4 + 8 + 8];
  size_t n = 0;
  auto put = [&](const void* p, size_t size) {
    std::memcpy(out + n, p, size);
    n += size;
  };
  put(&client_handle, 4);
  const uint8_t mask =
      (value_bytes ? 0x01 : 0) | (status_code ? 0x02 : 0) | (source ? 0x04 : 0) | (server ? 0x08 : 0);
  put(&mask, 1);
  if (value_bytes) {
    put(&kind, 1);
    put(&payload, value_bytes);  // the value's own bytes, as the cell keeps them (little-endian, as Encoder)
  }
  if (status_code) put(&status_code, 4);
  if (source) put(&source, 8);
  if (server) put(&server, 8);
  e.write_raw(out, n);
  return true;
}

void strip_timestamps(ua::DataValue& v, ua::TimestampsToReturn ts) {
  using T = ua::TimestampsToReturn;
  if (ts == T::Server || ts == T::Neither) {
    v.source_timestamp = {};
    v.source_picoseconds = 0;
  }
  if (ts == T::Source || ts == T::Neither) {
    v.server_timestamp = {};
    v.server_picoseconds = 0;
  }
}

}  // namespace

bool passes_filter(const ChangeFilter& f, const ua::DataValue& last, const ua::DataValue& next) {
  return passes(f.trigger, f.deadband, f.absolute, SampleView::of(last), SampleView::of(next));
}

// ----------------------------------------------------------------------------------------- SampledValue

void SampledValue::free_box() noexcept {
  delete box_;
}

ua::DataValue& SampledValue::make_box() {
  if (kind_ != kBoxed) {
    box_ = new ua::DataValue();
    kind_ = kBoxed;
  }
  return *box_;  // reused when already boxed: its storage may fit the new value
}

void SampledValue::assign(const ValueSnapshot& s) {
  if (s.kind == ValueCell::kBoxed || s.source_picoseconds || s.server_picoseconds) {
    s.to_data_value(make_box());
    return;
  }
  unbox();
  kind_ = s.kind;
  payload_ = s.payload;
  status_ = s.status.value();
  source_ts_ = s.source_timestamp.ticks;
  server_ts_ = s.server_timestamp.ticks;
}

void SampledValue::assign(ua::DataValue&& v) {
  uint8_t kind = 0;
  uint64_t payload = 0;
  if (v.source_picoseconds || v.server_picoseconds || !addressspace::encode_inline(v.value, kind, payload)) {
    make_box() = std::move(v);
    return;
  }
  unbox();
  kind_ = kind;
  payload_ = payload;
  status_ = v.status.value();
  source_ts_ = v.source_timestamp.ticks;
  server_ts_ = v.server_timestamp.ticks;
}

void SampledValue::add_status_bits(uint32_t bits) noexcept {
  if (kind_ == kBoxed) {
    box_->status = ua::StatusCode(box_->status.value() | bits);
  } else {
    status_ |= bits;
  }
}

void SampledValue::to_data_value(ua::DataValue& out) const {
  if (kind_ == kBoxed) {
    out = *box_;
    return;
  }
  addressspace::decode_inline(kind_, payload_, out.value);
  out.status = ua::StatusCode(status_);
  out.source_timestamp.ticks = source_ts_;
  out.server_timestamp.ticks = server_ts_;
  out.source_picoseconds = out.server_picoseconds = 0;
}

// ---------------------------------------------------------------------------------------- MonitoredItem

ItemExtras& MonitoredItem::ensure_extras() {
  if (!extras) extras = std::make_unique<ItemExtras>();
  return *extras;
}

void MonitoredItem::drop_unneeded_extras() noexcept {
  if (extras && !extras->needed()) extras.reset();
}

void MonitoredItem::set_node_id(const ua::NodeId& id) {
  if (id.type() == ua::IdType::Numeric) {
    node_ns = id.namespace_index();
    node_numeric = id.numeric();
    if (extras) extras->node_id.reset();
    drop_unneeded_extras();
  } else {
    ensure_extras().node_id = std::make_unique<ua::NodeId>(id);
  }
}

ua::NodeId MonitoredItem::node_id() const {
  if (extras && extras->node_id) return *extras->node_id;
  return ua::NodeId(node_ns, node_numeric);
}

void MonitoredItem::set_range(std::optional<IndexRange> r) {
  if (r) {
    ensure_extras().range = std::move(r);
  } else if (extras) {
    extras->range.reset();
    drop_unneeded_extras();
  }
}

ChangeFilter MonitoredItem::filter() const noexcept {
  ChangeFilter f;
  f.trigger = static_cast<ua::DataChangeTrigger>(trigger_);
  if (extras) {
    f.deadband = extras->deadband;
    f.absolute = extras->absolute_deadband;
  }
  return f;
}

void MonitoredItem::set_filter(const ChangeFilter& f) {
  trigger_ = static_cast<uint8_t>(f.trigger);
  if (f.deadband != ua::DeadbandType::None) {
    ItemExtras& x = ensure_extras();
    x.deadband = f.deadband;
    x.absolute_deadband = f.absolute;
  } else if (extras) {
    extras->deadband = ua::DeadbandType::None;
    extras->absolute_deadband = 0;
    drop_unneeded_extras();
  }
}

std::unordered_set<uint32_t>& MonitoredItem::triggered_links() {
  return ensure_extras().triggered;
}

EventItemState& MonitoredItem::make_event() {
  ItemExtras& x = ensure_extras();
  if (!x.event) x.event = std::make_unique<EventItemState>();
  return *x.event;
}

void MonitoredItem::configure_queue(uint32_t capacity, bool discard) {
  capacity = std::clamp<uint32_t>(capacity, 1, kMaxQueueSize);
  discard_oldest = discard;
  queue_capacity_ = static_cast<uint16_t>(capacity);
  if (EventItemState* ev = event()) {
    ev->trim(capacity);
    pending = !ev->empty();
    return;
  }
  // A smaller queue keeps the newest values (Part 4 §5.12.1.5 leaves the choice to the server).
  while (queue_size() > capacity) drop_older_front();
  drop_unneeded_extras();
}

void MonitoredItem::clear_queue() noexcept {
  pending = false;
  newest_overflow = false;
  if (EventItemState* ev = event()) return ev->clear();
  if (extras) {
    extras->older_head = extras->older_count = 0;
    drop_unneeded_extras();
  }
}

void MonitoredItem::drop_older_front() noexcept {
  ItemExtras& x = *extras;
  x.older[x.older_head].clear();  // frees a boxed value now rather than when overwritten
  if (++x.older_head == x.older.size()) x.older_head = 0;  // no division: this runs per notification
  if (--x.older_count == 0) x.older_head = 0;
}

// A value is about to become `last` and the newest queued value: the current newest moves to the older
// values, or is replaced, or the oldest is dropped (overflow). Returns whether the new value carries the
// overflow bits.
bool MonitoredItem::make_room() {
  if (!pending || queue_capacity_ == 1) return false;  // a queue of one never flags overflow
  bool flag_newest = newest_overflow;
  if (queue_size() == queue_capacity_) {
    if (!discard_oldest) return true;  // the newest is replaced; the replacement carries the flag
    // Drop the oldest; the value now oldest is the one next to the lost one.
    drop_older_front();
    if (extras->older_count > 0) {
      extras->older[extras->older_head].add_status_bits(kOverflowInfoBits);
    } else {
      flag_newest = true;
    }
  }
  ItemExtras& x = ensure_extras();
  if (x.older_count == x.older.size()) {
    // The ring is full but may grow (up to the queue size minus one): make it contiguous, then append.
    std::rotate(x.older.begin(), x.older.begin() + x.older_head, x.older.end());
    x.older_head = 0;
    x.older.emplace_back();
  }
  size_t at = size_t{x.older_head} + x.older_count;  // the ring's next free slot, without a division
  if (at >= x.older.size()) at -= x.older.size();
  SampledValue& slot = x.older[at];
  slot = std::move(last);
  if (flag_newest) slot.add_status_bits(kOverflowInfoBits);
  ++x.older_count;
  return false;
}

void MonitoredItem::enqueue(ua::DataValue v) {
  const bool flag = make_room();
  last.assign(std::move(v));
  has_last = true;
  pending = true;
  newest_overflow = flag;
}

void MonitoredItem::encode_oldest(ua::Encoder& e) const {
  const SampledValue* v = &last;
  uint32_t bits = newest_overflow ? kOverflowInfoBits : 0;
  if (extras && extras->older_count > 0) {
    v = &extras->older[extras->older_head];
    bits = 0;
  }
  if (v->boxed()) {
    e.write_u32(client_handle);
    const ua::DataValue& d = v->box();
    encode_data_value(e, d.value, d.status.value() | bits, d.source_timestamp.ticks, d.source_picoseconds,
                      d.server_timestamp.ticks, d.server_picoseconds, timestamps());
    return;
  }
  if (encode_inline_notification(e, client_handle, v->kind(), v->payload(), v->status() | bits,
                                 v->source_ticks(), v->server_ticks(), timestamps()))
    return;
  e.write_u32(client_handle);
  ua::Variant scalar;  // an inline kind: no allocation
  addressspace::decode_inline(v->kind(), v->payload(), scalar);
  encode_data_value(e, scalar, v->status() | bits, v->source_ticks(), 0, v->server_ticks(), 0, timestamps());
}

void MonitoredItem::drop_front() noexcept {
  if (extras && extras->older_count > 0) {
    drop_older_front();
  } else {
    pending = false;
    newest_overflow = false;
  }
}

ua::DataValue MonitoredItem::pop() {
  ua::DataValue out;
  if (extras && extras->older_count > 0) {
    extras->older[extras->older_head].to_data_value(out);
    drop_older_front();
  } else {
    last.to_data_value(out);
    if (newest_overflow) out.status = ua::StatusCode(out.status.value() | kOverflowInfoBits);
    pending = false;
    newest_overflow = false;
  }
  strip_timestamps(out, timestamps());
  return out;
}

const addressspace::ValueCell* MonitoredItem::resolved_cell(const addressspace::NodeStore& store,
                                                            const UserAccess* user) const {
  if (attribute_id != kValue) return cell;
  const addressspace::NodeIndex n = store.find(node_id());
  const addressspace::VariableAttributes* var = n == addressspace::kNoNode ? nullptr : store.variable(n);
  if (!var) return nullptr;
  if (!(var->access_level & addressspace::access::kCurrentRead)) return nullptr;
  if (user && !access_control::may_read_value(store, n, *var, *user)) return nullptr;
  return var->cell;
}

void MonitoredItem::sample(const addressspace::NodeStore& store) {
  if (mode() == ua::MonitoringMode::Disabled) return;
  const IndexRange* r = range();
  const ChangeFilter f = filter();
  if (attribute_id == kValue && cell && !r && !session_scoped) {
    // The common case, without building a DataValue: the version first (an unchanged cell costs one
    // atomic load), then the snapshot, whose boxed value stays valid until this shard's quiescent point.
    if (ValueStore::version(*cell) == last_version) return;
    const ValueSnapshot s = ValueStore::snapshot(*cell);
    last_version = s.version;
    if (has_last) {
      SampleView next{s.kind,
                      s.payload,
                      s.kind == ValueCell::kBoxed ? s.boxed : nullptr,
                      s.status.value(),
                      s.source_timestamp.ticks,
                      s.source_picoseconds};
      if (!passes(f.trigger, f.deadband, f.absolute, SampleView::of(last), next)) return;
    }
    const bool flag = make_room();
    last.assign(s);
    has_last = true;
    pending = true;
    newest_overflow = flag;
  } else {
    ua::DataValue v;
    if (attribute_id == kValue) {
      if (cell) {
        if (!ValueStore::read_if_changed(*cell, last_version, v)) return;
        // What this item's session may see of a diagnostics array (Part 5 §8.2.10, diagnostics.hpp).
        if (session_scoped) scope_to_reader(subscription->session(), v.value);
      } else if (has_last) {
        return;  // a Value without a cell never changes
      } else {
        // No variable any more, or one this session may no longer read (a reload removed the node or
        // changed its AccessLevel or read_roles, Subscription::resolve_items): one sample with the status
        // a Read of it gets (Part 4 §5.10.2), then nothing until the filter sees a change. The item stays,
        // and resumes with the node's value if a later reload brings the node or the right back.
        const addressspace::NodeIndex n = store.find(node_id());
        const addressspace::VariableAttributes* var =
            n == addressspace::kNoNode ? nullptr : store.variable(n);
        if (n == addressspace::kNoNode) {
          v.status = status::BadNodeIdUnknown;
        } else if (!var || !var->cell) {
          v.status = status::BadAttributeIdInvalid;
        } else if (!(var->access_level & addressspace::access::kCurrentRead)) {
          v.status = status::BadNotReadable;
        } else {
          v.status = status::BadUserAccessDenied;
        }
        v.server_timestamp = ua::DateTime::now();
      }
    } else {
      const addressspace::NodeIndex n = store.find(node_id());
      v.status = n == addressspace::kNoNode ? status::BadNodeIdUnknown
                                            : read_plain_attribute(store, n, attribute_id, v.value);
      v.server_timestamp = ua::DateTime::now();
    }
    if (r && v.status.is_good()) {
      ua::Variant whole = std::move(v.value);
      ua::StatusCode s = read_range(whole, *r, v.value);
      if (!s.is_good()) {
        v.value.clear();
        v.status = s;
      }
    }
    if (has_last && !passes(f.trigger, f.deadband, f.absolute, SampleView::of(last), SampleView::of(v)))
      return;
    enqueue(std::move(v));
  }
  subscription->on_item_queued(*this);
}

}  // namespace opcuad::services
