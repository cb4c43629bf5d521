#include "services/alarm_eval.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "ua/generated/node_ids.hpp"

namespace opcuad::services::alarm {

namespace {

namespace field = addressspace::event_field;
namespace limit = addressspace::alarm_limit;
using addressspace::ConditionKind;
using addressspace::ConditionLock;
using addressspace::ConditionSpec;
using addressspace::ConditionState;
using addressspace::LimitState;
using addressspace::ValueStore;
namespace status = ua::status;

ua::LocalizedText text(std::string_view s) {
  return ua::LocalizedText{ua::String("en"), ua::String(s)};
}

// The limit position of an exclusive LimitState, and back.
size_t limit_of(LimitState s) noexcept {
  switch (s) {
    case LimitState::HighHigh:
      return limit::kHighHigh;
    case LimitState::High:
      return limit::kHigh;
    case LimitState::Low:
      return limit::kLow;
    case LimitState::LowLow:
      return limit::kLowLow;
    case LimitState::None:
      break;
  }
  return limit::kCount;
}
constexpr LimitState kStateOfLimit[limit::kCount] = {LimitState::HighHigh, LimitState::High, LimitState::Low,
                                                     LimitState::LowLow};
constexpr const char* kLimitName[limit::kCount] = {"HighHigh", "High", "Low", "LowLow"};
// ExclusiveLimitStateMachineType's states (Part 9 §5.8.19.2), by limit position.
constexpr uint32_t kStateNode[limit::kCount] = {
    ua::id::ExclusiveLimitStateMachineType_HighHigh, ua::id::ExclusiveLimitStateMachineType_High,
    ua::id::ExclusiveLimitStateMachineType_Low, ua::id::ExclusiveLimitStateMachineType_LowLow};
// Its transitions: 1 LowLowToLow, 2 LowToLowLow, 3 HighHighToHigh, 4 HighToHighHigh.
constexpr uint32_t kTransitionNode[5] = {0, ua::id::ExclusiveLimitStateMachineType_LowLowToLow,
                                         ua::id::ExclusiveLimitStateMachineType_LowToLowLow,
                                         ua::id::ExclusiveLimitStateMachineType_HighHighToHigh,
                                         ua::id::ExclusiveLimitStateMachineType_HighToHighHigh};
constexpr const char* kTransitionName[5] = {"", "LowLowToLow", "LowToLowLow", "HighHighToHigh",
                                            "HighToHighHigh"};

uint8_t transition(LimitState from, LimitState to) noexcept {
  if (from == LimitState::LowLow && to == LimitState::Low) return 1;
  if (from == LimitState::Low && to == LimitState::LowLow) return 2;
  if (from == LimitState::HighHigh && to == LimitState::High) return 3;
  if (from == LimitState::High && to == LimitState::HighHigh) return 4;
  return 0;
}

bool to_double(const ua::Variant& v, double& out) noexcept {
  if (!v.is_scalar()) return false;
  switch (v.type()) {
    case ua::BuiltinType::SByte:
      out = *v.get_if<int8_t>();
      return true;
    case ua::BuiltinType::Byte:
      out = *v.get_if<uint8_t>();
      return true;
    case ua::BuiltinType::Int16:
      out = *v.get_if<int16_t>();
      return true;
    case ua::BuiltinType::UInt16:
      out = *v.get_if<uint16_t>();
      return true;
    case ua::BuiltinType::Int32:
      out = *v.get_if<int32_t>();
      return true;
    case ua::BuiltinType::UInt32:
      out = *v.get_if<uint32_t>();
      return true;
    case ua::BuiltinType::Int64:
      out = static_cast<double>(*v.get_if<int64_t>());
      return true;
    case ua::BuiltinType::UInt64:
      out = static_cast<double>(*v.get_if<uint64_t>());
      return true;
    case ua::BuiltinType::Float:
      out = *v.get_if<float>();
      return std::isfinite(out);
    case ua::BuiltinType::Double:
      out = *v.get_if<double>();
      return std::isfinite(out);
    default:
      return false;
  }
}

// The values of the two scalars equal, numbers by value whatever their types (off-normal alarms).
bool same_value(const ua::Variant& a, const ua::Variant& b) {
  double x = 0, y = 0;
  if (to_double(a, x) && to_double(b, y)) return x == y;
  return a == b;
}

void append_number(std::string& out, double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  if (r.ec == std::errc()) out.append(buf, r.ptr);
}

void append_value(std::string& out, const ua::Variant& v) {
  double d = 0;
  if (v.is_scalar() && v.type() == ua::BuiltinType::Boolean) {
    out += *v.get_if<bool>() ? "true" : "false";
  } else if (to_double(v, d)) {
    append_number(out, d);
  } else if (const ua::String* s = v.is_scalar() ? v.get_if<ua::String>() : nullptr) {
    out.append(s->view().substr(0, kMaxMessageBytes));
  }
}

// What a judgement concludes.
struct Verdict {
  bool valid = false;  // the input could be judged (a number for the limit kinds, a Good status)
  bool active = false;
  LimitState state = LimitState::None;  // exclusive kinds
  uint8_t bits = 0;                     // non-exclusive
  uint16_t severity = 0;
  size_t crossed = limit::kCount;  // the limit reached, for {limit}
};

// The high side of an exclusive judgement: 2 HighHigh, 1 High, 0 none; `held` is the current level, kept
// while the value stays within the deadband of its limit (and the low side mirrored).
int high_level(const ConditionSpec& c, double v, int held) {
  int level = 0;
  if (c.has_limit(limit::kHigh) && v >= c.limits[limit::kHigh]) level = 1;
  if (c.has_limit(limit::kHighHigh) && v >= c.limits[limit::kHighHigh]) level = 2;
  if (c.deadband > 0) {
    if (held >= 2 && c.has_limit(limit::kHighHigh) && v > c.limits[limit::kHighHigh] - c.deadband) {
      level = std::max(level, 2);
    } else if (held >= 1 && c.has_limit(limit::kHigh) && v > c.limits[limit::kHigh] - c.deadband) {
      level = std::max(level, 1);
    }
  }
  return level;
}
int low_level(const ConditionSpec& c, double v, int held) {
  int level = 0;
  if (c.has_limit(limit::kLow) && v <= c.limits[limit::kLow]) level = 1;
  if (c.has_limit(limit::kLowLow) && v <= c.limits[limit::kLowLow]) level = 2;
  if (c.deadband > 0) {
    if (held >= 2 && c.has_limit(limit::kLowLow) && v < c.limits[limit::kLowLow] + c.deadband) {
      level = std::max(level, 2);
    } else if (held >= 1 && c.has_limit(limit::kLow) && v < c.limits[limit::kLow] + c.deadband) {
      level = std::max(level, 1);
    }
  }
  return level;
}

Verdict judge_number(const ConditionSpec& c, LimitState held_state, uint8_t held_bits, double x);

// `held_state` / `held_bits`: the condition's current limit state, which the deadband holds.
Verdict judge(const ConditionSpec& c, LimitState held_state, uint8_t held_bits, const ua::Variant& input,
              const ua::Variant* reference) {
  Verdict v;
  if (c.kind == ConditionKind::OffNormal) {
    if (!reference) return v;
    v.valid = true;
    v.active = !same_value(input, *reference);
    v.severity = c.severity;
    return v;
  }
  double x = 0;
  if (!to_double(input, x)) return v;
  if (c.kind == ConditionKind::Deviation) {
    double setpoint = 0;
    if (!reference || !to_double(*reference, setpoint)) return v;
    x -= setpoint;
  }
  return judge_number(c, held_state, held_bits, x);
}

// The limit kinds on the number `x` (the input, or input - setpoint).
Verdict judge_number(const ConditionSpec& c, LimitState held_state, uint8_t held_bits, double x) {
  Verdict v;
  v.valid = true;
  if (c.kind == ConditionKind::NonExclusiveLimit) {
    for (size_t i = 0; i < limit::kCount; ++i) {
      if (!c.has_limit(i)) continue;
      const bool high = i == limit::kHighHigh || i == limit::kHigh;
      const bool was = (held_bits >> i) & 1;
      const double l = c.limits[i];
      const bool on = high ? (x >= l || (was && c.deadband > 0 && x > l - c.deadband))
                           : (x <= l || (was && c.deadband > 0 && x < l + c.deadband));
      if (!on) continue;
      v.bits |= static_cast<uint8_t>(1u << i);
      if (c.limit_severity[i] >= v.severity) {
        v.severity = c.limit_severity[i];
        v.crossed = i;
      }
    }
    v.active = v.bits != 0;
    return v;
  }
  const int held_high = held_state == LimitState::HighHigh ? 2 : held_state == LimitState::High ? 1 : 0;
  const int held_low = held_state == LimitState::LowLow ? 2 : held_state == LimitState::Low ? 1 : 0;
  const int high = high_level(c, x, held_high);
  const int low = high ? 0 : low_level(c, x, held_low);
  if (high) v.crossed = high == 2 ? limit::kHighHigh : limit::kHigh;
  if (low) v.crossed = low == 2 ? limit::kLowLow : limit::kLow;
  if (v.crossed != limit::kCount) {
    v.active = true;
    v.state = kStateOfLimit[v.crossed];
    v.severity = c.limit_severity[v.crossed];
  }
  return v;
}

// The state text of the verdict for {state}.
std::string_view state_text(const ConditionSpec& c, const ConditionState& s) {
  if (!s.active) return "Inactive";
  if (c.kind == ConditionKind::ExclusiveLimit || c.kind == ConditionKind::Deviation) {
    const size_t l = limit_of(s.limit_state);
    return l < limit::kCount ? kLimitName[l] : "Active";
  }
  if (c.kind == ConditionKind::NonExclusiveLimit) {
    for (size_t i : {limit::kHighHigh, limit::kLowLow, limit::kHigh, limit::kLow}) {
      if ((s.limit_bits >> i) & 1) return kLimitName[i];
    }
  }
  return "Active";
}

// Into `out`, whose storage it reuses (the state's own message: no allocation once it held one as long).
void expand_message(const ConditionSpec& c, const ConditionState& s, const ua::Variant& input, size_t crossed,
                    std::string& out) {
  out.clear();
  // Without a template the Message still says what happened (docs/CONFIGURATION.md, "Alarms").
  const std::string_view t =
      c.message.empty() ? std::string_view("{name} is {state}") : std::string_view(c.message);
  for (size_t i = 0; i < t.size() && out.size() < kMaxMessageBytes;) {
    if (t[i] == '{') {
      const size_t end = t.find('}', i);
      const std::string_view name =
          end == std::string_view::npos ? std::string_view() : t.substr(i + 1, end - i - 1);
      if (name == "name") {
        out += c.name;
      } else if (name == "value") {
        append_value(out, input);
      } else if (name == "state") {
        out += state_text(c, s);
      } else if (name == "limit") {
        if (crossed < limit::kCount) append_number(out, c.limits[crossed]);
      } else {
        out += t[i++];
        continue;
      }
      i = end + 1;
      continue;
    }
    out += t[i++];
  }
  if (out.size() > kMaxMessageBytes) out.resize(kMaxMessageBytes);
}

void set_state_text(bool on, const char* yes, const char* no, ua::Variant& out) {
  out = ua::Variant(text(on ? yes : no));
}

// The value of `key` that follows from the live state, or false for a field the state does not own (its
// member variable's value is the field).
bool dynamic_field(FieldKey key, const ConditionSpec& c, const ConditionState& s, ua::Variant& out) {
  auto time_or_null = [&](ua::DateTime t) { out = t.is_null() ? ua::Variant() : ua::Variant(t); };
  const bool exclusive = c.kind == ConditionKind::ExclusiveLimit || c.kind == ConditionKind::Deviation;
  switch (key) {
    case field::kEventId:
      out = ua::Variant(s.event_id);
      return true;
    case field::kTime:
    case field::kReceiveTime:
      time_or_null(s.event_time);
      return true;
    case field::kMessage:
      out = ua::Variant(ua::LocalizedText{ua::String(), ua::String(s.message)});
      return true;
    case field::kSeverity:
      out = ua::Variant(s.severity);
      return true;
    case field::kLastSeverity:
      out = ua::Variant(s.last_severity);
      return true;
    case field::kLastSeveritySourceTimestamp:
      time_or_null(s.severity_time);
      return true;
    case field::kRetain:
      out = ua::Variant(retained(c, s));
      return true;
    case field::kEnabledState:
      set_state_text(s.enabled, "Enabled", "Disabled", out);
      return true;
    case field::kEnabledStateId:
      out = ua::Variant(s.enabled);
      return true;
    case field::kEnabledStateTransitionTime:
      time_or_null(s.enabled_time);
      return true;
    case field::kQuality:
      out = ua::Variant(s.quality);
      return true;
    case field::kQualitySourceTimestamp:
      time_or_null(s.quality_time);
      return true;
    case field::kComment:
      out = ua::Variant(s.comment);
      return true;
    case field::kCommentSourceTimestamp:
      time_or_null(s.comment_time);
      return true;
    case field::kClientUserId:
      out = ua::Variant(s.client_user_id);
      return true;
    case field::kAckedState:
      set_state_text(s.acked, "Acknowledged", "Unacknowledged", out);
      return true;
    case field::kAckedStateId:
      out = ua::Variant(s.acked);
      return true;
    case field::kAckedStateTransitionTime:
      time_or_null(s.acked_time);
      return true;
    case field::kConfirmedState:
      set_state_text(s.confirmed, "Confirmed", "Unconfirmed", out);
      return true;
    case field::kConfirmedStateId:
      out = ua::Variant(s.confirmed);
      return true;
    case field::kConfirmedStateTransitionTime:
      time_or_null(s.confirmed_time);
      return true;
    case field::kActiveState:
      set_state_text(s.active, "Active", "Inactive", out);
      return true;
    case field::kActiveStateId:
      out = ua::Variant(s.active);
      return true;
    case field::kActiveStateTransitionTime:
      time_or_null(s.active_time);
      return true;
    case field::kActiveStateEffectiveDisplayName: {
      // Part 5 §7.3.2 (EffectiveDisplayName): the state with its current sub-state.
      std::string t(s.active ? "Active" : "Inactive");
      if (s.active && exclusive && s.limit_state != LimitState::None)
        t += std::string(" ") + kLimitName[limit_of(s.limit_state)];
      out = ua::Variant(text(t));
      return true;
    }
    case field::kLimitStateCurrentState:
    case field::kLimitStateCurrentStateId: {
      const size_t l = limit_of(s.limit_state);
      if (!exclusive || l == limit::kCount) {
        out = ua::Variant();
      } else if (key == field::kLimitStateCurrentState) {
        out = ua::Variant(text(kLimitName[l]));
      } else {
        out = ua::Variant(ua::NodeId(0, kStateNode[l]));
      }
      return true;
    }
    case field::kLimitStateLastTransition:
      out = s.last_transition ? ua::Variant(text(kTransitionName[s.last_transition])) : ua::Variant();
      return true;
    case field::kLimitStateLastTransitionId:
      out =
          s.last_transition ? ua::Variant(ua::NodeId(0, kTransitionNode[s.last_transition])) : ua::Variant();
      return true;
    case field::kLimitStateLastTransitionTransitionTime:
      time_or_null(s.last_transition ? s.transition_time : ua::DateTime{});
      return true;
    case field::kHighHighState:
    case field::kHighState:
    case field::kLowState:
    case field::kLowLowState:
    case field::kHighHighStateId:
    case field::kHighStateId:
    case field::kLowStateId:
    case field::kLowLowStateId: {
      size_t i = limit::kHighHigh;
      bool id = false;
      switch (key) {
        case field::kHighHighStateId:
          id = true;
          [[fallthrough]];
        case field::kHighHighState:
          i = limit::kHighHigh;
          break;
        case field::kHighStateId:
          id = true;
          [[fallthrough]];
        case field::kHighState:
          i = limit::kHigh;
          break;
        case field::kLowStateId:
          id = true;
          [[fallthrough]];
        case field::kLowState:
          i = limit::kLow;
          break;
        default:
          id = key == field::kLowLowStateId;
          i = limit::kLowLow;
      }
      const bool on = (s.limit_bits >> i) & 1;
      if (id) {
        out = ua::Variant(on);
      } else {
        out = ua::Variant(text(std::string(kLimitName[i]) + (on ? " active" : " inactive")));
      }
      return true;
    }
    default:
      return false;
  }
}

// The value of a snapshot, without copying a boxed one.
const ua::Variant& value_of(const addressspace::ValueSnapshot& snap, ua::Variant& scratch) {
  if (snap.kind == addressspace::ValueCell::kBoxed && snap.boxed) return *snap.boxed;
  if (snap.kind == addressspace::ValueCell::kEmpty) {
    scratch = ua::Variant();
  } else {
    addressspace::decode_inline(snap.kind, snap.payload, scratch);
  }
  return scratch;
}

using FieldTable = std::vector<std::pair<FieldKey, ua::Variant>>;

// The fields every event of `c` shares until a reload (ConditionState::member_fields), built when this
// store generation has none yet: the member variables the state does not own, and the ConditionId,
// SourceNode and SourceName. Under the lock.
std::shared_ptr<const FieldTable> member_fields(const addressspace::NodeStore& store, const ConditionSpec& c,
                                                ConditionState& s) {
  if (s.member_fields && s.member_fields_generation == store.generation() && s.member_fields_spec == &c)
    return s.member_fields;
  auto t = std::make_shared<FieldTable>();
  t->reserve(c.fields.size() + 3);
  ua::Variant scratch;
  ua::DataValue dv;
  for (const auto& [key, cell] : c.fields) {
    if (dynamic_field(key, c, s, scratch)) continue;
    ValueStore::read(*cell, dv);
    t->emplace_back(key, std::move(dv.value));
  }
  // Part 9 §5.5.2: the ConditionId (the empty path with AttributeId NodeId, content_filter.hpp) is the
  // condition object; SourceNode and SourceName are the input's (the ConditionSource).
  t->emplace_back(kThisNodeField, ua::Variant(store.node_id(c.node)));
  t->emplace_back(field::kSourceNode, ua::Variant(store.node_id(c.input)));
  t->emplace_back(field::kSourceName, ua::Variant(ua::String(store.browse_name_view(c.input).name.text)));
  std::stable_sort(t->begin(), t->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // The first of a key wins (a member variable named like a well-known field keeps its own value).
  t->erase(std::unique(t->begin(), t->end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
           t->end());
  s.member_fields = std::move(t);
  s.member_fields_generation = store.generation();
  s.member_fields_spec = &c;
  return s.member_fields;
}

// The condition event of state `s` (under its lock); `fresh`: a new event (new EventId, Time now), else the
// last one again. Writes nothing but the state's member_fields table.
std::shared_ptr<const EventRecord> make_event(const addressspace::NodeStore& store, const ConditionSpec& c,
                                              ConditionState& s, bool fresh) {
  const addressspace::EventTypes* events = store.event_types();
  if (!events) return nullptr;
  EventBuilder b(store, events->type_id(c.type), c.input);
  if (!b.valid()) return nullptr;
  b.share(member_fields(store, c, s));
  b.reserve(c.fields.size() + 8);
  ua::Variant v;
  for (const auto& [key, cell] : c.fields) {
    if (fresh && key == field::kEventId) continue;  // the builder makes a new one
    if (key == field::kSeverity || key == field::kMessage || key == field::kRetain) continue;  // below
    if (dynamic_field(key, c, s, v)) b.set(key, std::move(v));
  }
  b.set(field::kSeverity, ua::Variant(s.severity));
  b.message(s.message);
  b.set(field::kRetain, ua::Variant(retained(c, s)));
  if (!fresh) {
    b.set(field::kEventId, ua::Variant(s.event_id));
    b.set(field::kTime, ua::Variant(s.event_time));
    b.set(field::kReceiveTime, ua::Variant(s.event_time));
  }
  return b.build();
}

// The member variables the state owns, written from it where they differ (a variable that holds its value
// with a Good status is left alone: no write, no notification, its timestamps stay those of its change).
void write_fields(ValueStore& values, addressspace::EpochReclaimer::Participant& p, const ConditionSpec& c,
                  const ConditionState& s, ua::DateTime now, Outcome& out) {
  ua::Variant value, scratch;
  // The EventId, 16 bytes, past a string's own storage: copied into a ByteString this thread keeps, so
  // writing it allocates nothing once warm (the cell's box is a kept one too, value_store.cpp).
  thread_local ua::Variant event_id{ua::ByteString()};
  // The same for the Message, which is often longer than that storage too.
  thread_local ua::Variant message{ua::LocalizedText{}};
  const ValueStore::ValueStamp stamp{ua::StatusCode(0), now, now, 0, 0};
  for (const auto& [key, cell] : c.fields) {
    const ua::Variant* v = &value;
    if (key == field::kEventId) {
      *event_id.get_if<ua::ByteString>() = s.event_id;
      v = &event_id;
    } else if (key == field::kMessage) {
      message.get_if<ua::LocalizedText>()->text.assign(s.message.data(), s.message.size());
      v = &message;
    } else if (!dynamic_field(key, c, s, value)) {
      continue;
    }
    const addressspace::ValueSnapshot held = ValueStore::snapshot(*cell);
    if (held.status.is_good() && value_of(held, scratch) == *v) continue;
    values.write(*cell, *v, stamp, p);
    if (out.cell_count < Outcome::kMaxCells) out.cells[out.cell_count++] = cell;
  }
}

// A change of state: the new event, its EventId and Time kept in the state, and the member variables the
// state owns written.
void publish(const addressspace::NodeStore& store, ValueStore& values,
             addressspace::EpochReclaimer::Participant& p, const ConditionSpec& c, ConditionState& s,
             ua::DateTime now, Outcome& out) {
  s.event_time = now;
  out.event = make_event(store, c, s, true);
  if (out.event) {
    if (const ua::Variant* id = out.event->field(field::kEventId)) {
      if (const ua::ByteString* b = id->get_if<ua::ByteString>()) s.event_id = *b;
    }
  }
  write_fields(values, p, c, s, now, out);
}

}  // namespace

bool retained(const ConditionSpec& c, const ConditionState& s) noexcept {
  return s.enabled && (s.active || !s.acked || (c.confirm && !s.confirmed));
}

namespace {

// ConditionState::summary: what a judgement compares against, published under the lock at the end of
// every change so that the common judgement (nothing changes) needs no lock. Bits 0-7 flags, 8-15 the
// limit state, 16-23 the non-exclusive bits, 32-63 the Quality.
using detail::kSummaryActive;
using detail::kSummaryEnabled;
using detail::kSummaryPending;
using detail::kSummaryValid;

void publish_summary(ConditionState& s) noexcept {
  const uint64_t v = kSummaryValid | (s.enabled ? kSummaryEnabled : 0) | (s.active ? kSummaryActive : 0) |
                     (s.pending ? kSummaryPending : 0) |
                     (uint64_t{static_cast<uint8_t>(s.limit_state)} << 8) | (uint64_t{s.limit_bits} << 16) |
                     (uint64_t{s.quality.value()} << 32);
  s.summary.store(v, std::memory_order_release);
}

// The judgement of a value that changes nothing, made without the lock: true when the condition's
// published summary is current (nobody holds the lock, no delay pending) and the input (and reference)
// as they are now give the same Quality, ActiveState, limit state and bits. A writer stores its value,
// then (after a full fence, Server::evaluate_alarms) finds the lock free: a judgement that runs later
// reads its value, so returning here loses nothing. False: judge under the lock.
bool unchanged_without_lock(const ConditionSpec& c, const ConditionState& s) {
  if (s.locked.load(std::memory_order_acquire)) return false;
  const uint64_t sum = s.summary.load(std::memory_order_acquire);
  if (!(sum & kSummaryValid) || (sum & kSummaryPending)) return false;
  if (!(sum & kSummaryEnabled)) return true;  // disabled: not judged
  const addressspace::ValueSnapshot in = ValueStore::snapshot(*c.input_cell);
  ua::StatusCode quality = in.status;
  addressspace::ValueSnapshot ref;
  if (c.reference_cell) {
    ref = ValueStore::snapshot(*c.reference_cell);
    if (ref.status.is_bad() && !quality.is_bad()) quality = ref.status;
  }
  if (quality.value() != static_cast<uint32_t>(sum >> 32)) return false;
  if (quality.is_bad()) return true;  // a Bad input changes nothing but Quality
  const auto held_state = static_cast<LimitState>((sum >> 8) & 0xFF);
  const auto held_bits = static_cast<uint8_t>((sum >> 16) & 0xFF);
  Verdict v;
  double x = 0, setpoint = 0;
  if (c.kind != ConditionKind::OffNormal && addressspace::inline_number(in.kind, in.payload, x) &&
      (c.kind != ConditionKind::Deviation || addressspace::inline_number(ref.kind, ref.payload, setpoint))) {
    // The common case, numbers inline in their cells: no Variant.
    v = judge_number(c, held_state, held_bits, x - setpoint);
  } else {
    ua::Variant in_scratch, ref_scratch;
    v = judge(c, held_state, held_bits, value_of(in, in_scratch),
              c.reference_cell ? &value_of(ref, ref_scratch) : nullptr);
  }
  if (!v.valid) return true;
  const bool active = (sum & kSummaryActive) != 0;
  return v.active == active && (v.active ? v.state : LimitState::None) == held_state &&
         (v.active ? v.bits : 0) == held_bits;
}

}  // namespace

void initialise(const ConditionSpec& c) {
  ConditionState& s = *c.state;
  if (s.initialised_flag.load(std::memory_order_acquire)) return;
  ConditionLock lock(s);
  if (s.initialised) {  // restored from the state file
    s.initialised_flag.store(true, std::memory_order_release);
    return;
  }
  s.initialised = true;
  s.enabled = c.enabled;
  s.active = false;
  s.acked = true;
  s.confirmed = true;
  uint16_t severity = c.severity;
  if (c.kind != ConditionKind::OffNormal) {
    severity = 1;
    for (size_t i = 0; i < limit::kCount; ++i)
      if (c.has_limit(i)) severity = std::max(severity, c.limit_severity[i]);
  }
  s.severity = s.last_severity = severity;
  publish_summary(s);
  s.initialised_flag.store(true, std::memory_order_release);
}

namespace {

// Judges `c` as its inputs are now and changes `s` accordingly (under its lock). True when an event field
// changed.
bool judge_locked(const ConditionSpec& c, ConditionState& s, ua::DateTime now, bool delay_expired,
                  Outcome& out) {
  s.input_version = ValueStore::version(*c.input_cell);
  s.reference_version = c.reference_cell ? ValueStore::version(*c.reference_cell) : 0;
  ua::DataValue input, reference;
  ValueStore::read(*c.input_cell, input, now);
  if (c.reference_cell) ValueStore::read(*c.reference_cell, reference, now);

  // Quality (Part 9 §5.5.2): the input's status, or the setpoint's when that one is worse.
  ua::StatusCode quality = input.status;
  if (c.reference_cell && reference.status.is_bad() && !quality.is_bad()) quality = reference.status;
  bool changed = false;
  if (quality != s.quality) {
    s.quality = quality;
    s.quality_time = input.source_timestamp.is_null() ? now : input.source_timestamp;
    changed = true;
  }
  Verdict v;
  if (!quality.is_bad())
    v = judge(c, s.limit_state, s.limit_bits, input.value, c.reference_cell ? &reference.value : nullptr);
  if (!v.valid) return changed;
  if (v.active != s.active) {
    const uint32_t delay = v.active ? c.on_delay_ms : c.off_delay_ms;
    if (delay > 0) {
      if (!s.pending || s.pending_active != v.active) {
        s.pending = true;
        s.pending_active = v.active;
        s.pending_since = now;
        // One timer per condition at most: one still armed for an earlier wait fires first and arms
        // itself again for the rest of this one.
        if (!s.timer_armed) {
          s.timer_armed = true;
          out.delay_ms = delay;
        }
        return changed;
      }
      const int64_t waited_ms = (now.ticks - s.pending_since.ticks) / 10000;
      if (waited_ms < delay) {
        // Its timer is armed; only that timer, woken early (the clocks differ), arms the rest.
        if (delay_expired) {
          s.timer_armed = true;
          out.delay_ms = static_cast<uint32_t>(delay - std::max<int64_t>(waited_ms, 0));
        }
        return changed;
      }
    }
  }
  s.pending = false;
  if (v.active != s.active) {
    s.active = v.active;
    s.active_time = now;
    if (v.active) {
      // A new activation needs a new acknowledgement (Part 9 §5.7.2).
      s.acked = false;
      s.acked_time = now;
    }
    out.persist = true;
    changed = true;
  }
  const LimitState state = v.active ? v.state : LimitState::None;
  const uint8_t bits = v.active ? v.bits : 0;
  if (state != s.limit_state || bits != s.limit_bits) {
    if (const uint8_t t = transition(s.limit_state, state)) {
      s.last_transition = t;
      s.transition_time = now;
    }
    s.limit_state = state;
    s.limit_bits = bits;
    out.persist = true;
    changed = true;
  }
  if (v.active && v.severity != 0 && v.severity != s.severity) {
    s.last_severity = s.severity;
    s.severity = v.severity;
    s.severity_time = now;
    out.persist = true;
    changed = true;
  }
  if (changed) expand_message(c, s, input.value, v.active ? v.crossed : limit::kCount, s.message);
  return changed;
}

}  // namespace

bool detail::quiet_slow(const ConditionSpec& c) {
  return unchanged_without_lock(c, *c.state);
}

Outcome evaluate(const addressspace::NodeStore& store, ValueStore& values,
                 addressspace::EpochReclaimer::Participant& p, const ConditionSpec& c, ua::DateTime now,
                 bool force, bool delay_expired) {
  Outcome out;
  if (!c.state || !c.input_cell) return out;
  initialise(c);
  ConditionState& s = *c.state;
  if (!force && !delay_expired && unchanged_without_lock(c, s)) return out;
  ConditionLock lock(s);
  if (delay_expired) s.timer_armed = false;  // the timer that called is spent
  const bool inputs_unchanged =
      ValueStore::version(*c.input_cell) == s.input_version &&
      (!c.reference_cell || ValueStore::version(*c.reference_cell) == s.reference_version);
  if (s.enabled && (force || !inputs_unchanged) && judge_locked(c, s, now, delay_expired, out)) {
    publish(store, values, p, c, s, now, out);
  } else if (force && !delay_expired) {
    // At start and after a reload the state may be one the variables do not show yet (restored from the
    // state file, kept across the reload) although judging the inputs changed nothing: no event, but
    // the variables follow the state.
    write_fields(values, p, c, s, now, out);
  }
  publish_summary(s);
  return out;
}

ua::StatusCode call(const addressspace::NodeStore& store, ValueStore& values,
                    addressspace::EpochReclaimer::Participant& p, const ConditionSpec& c, const MethodCall& m,
                    ua::DateTime now, Outcome& out) {
  if (!c.state) return status::BadNodeIdInvalid;
  if (!(m.roles & c.ack_roles)) return status::BadUserAccessDenied;
  if (m.method == Method::Confirm && !c.confirm) return status::BadMethodInvalid;  // no ConfirmedState
  const bool with_comment =
      m.method == Method::AddComment || m.method == Method::Acknowledge || m.method == Method::Confirm;
  // Part 9 §5.5.6: a null comment (no locale, no text) changes nothing; AddComment needs one.
  const bool comment_given = m.comment && (!m.comment->locale.is_null() || !m.comment->text.is_null());
  if (with_comment && m.comment &&
      m.comment->locale.view().size() + m.comment->text.view().size() > kMaxCommentBytes)
    return status::BadInvalidArgument;
  if (m.method == Method::AddComment && !comment_given) return status::BadInvalidArgument;
  initialise(c);
  ConditionState& s = *c.state;
  ConditionLock lock(s);
  switch (m.method) {
    case Method::Enable:
      if (s.enabled) return status::BadConditionAlreadyEnabled;
      s.enabled = true;
      s.enabled_time = now;
      // Part 9 §5.5.5: the state follows the input as it is now, in the same event.
      if (c.input_cell) judge_locked(c, s, now, false, out);
      break;
    case Method::Disable:
      if (!s.enabled) return status::BadConditionAlreadyDisabled;
      s.enabled = false;
      s.enabled_time = now;
      s.pending = false;
      break;
    default:
      if (!s.enabled) return status::BadConditionDisabled;
      if (!m.event_id || s.event_id.is_null() || *m.event_id != s.event_id) return status::BadEventIdUnknown;
      if (m.method == Method::Acknowledge) {
        if (s.acked) return status::BadConditionBranchAlreadyAcked;
        s.acked = true;
        s.acked_time = now;
        if (c.confirm) {
          // Part 9 §5.7.4: a condition that uses Confirm waits for it after the acknowledgement.
          s.confirmed = false;
          s.confirmed_time = now;
        }
      } else if (m.method == Method::Confirm) {
        if (s.confirmed) return status::BadConditionBranchAlreadyConfirmed;
        s.confirmed = true;
        s.confirmed_time = now;
      }
      if (comment_given) {
        s.comment = *m.comment;
        s.comment_time = now;
      }
  }
  s.client_user_id = ua::String(m.user);
  out.persist = true;
  publish(store, values, p, c, s, now, out);
  publish_summary(s);
  return status::Good;
}

std::shared_ptr<const EventRecord> refresh_event(const addressspace::NodeStore& store,
                                                 const ConditionSpec& c) {
  if (!c.state) return nullptr;
  ConditionLock lock(*c.state);
  if (!retained(c, *c.state) || c.state->event_id.is_null()) return nullptr;
  return make_event(store, c, *c.state, false);
}

}  // namespace opcuad::services::alarm
