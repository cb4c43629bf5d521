#include "services/event_item.hpp"

#include <algorithm>

#include "ua/codec.hpp"
#include "ua/encoder.hpp"

namespace opcuad::services {

namespace {

ua::SimpleAttributeOperand base_field(const char* name) {
  ua::SimpleAttributeOperand o;
  o.type_definition_id = ua::NodeId(0, 2041);  // BaseEventType
  o.browse_path.push_back(ua::QualifiedName{0, ua::String(name)});
  o.attribute_id = 13;  // Value
  return o;
}

}  // namespace

const ua::EventFilter& EventItemState::default_filter() {
  static const ua::EventFilter f = [] {
    ua::EventFilter out;
    for (const char* name :
         {"EventId", "EventType", "SourceNode", "SourceName", "Time", "ReceiveTime", "Message", "Severity"}) {
      out.select_clauses.push_back(base_field(name));
    }
    return out;
  }();
  return f;
}

ua::StatusCode EventItemState::compile(const ua::EventFilter* filter, const addressspace::NodeStore& store,
                                       ua::EventFilterResult& result) {
  const ua::EventFilter& f = filter ? *filter : default_filter();
  auto schema = std::make_unique<StoreEventSchema>(*store.event_types());
  FilterCompilation c = services::compile(f, *schema, FilterLimits{});
  result = std::move(c.result);
  if (!c.status.is_good()) return c.status;
  requested_ = f;
  compiled_ = std::move(c.filter);
  schema_ = std::move(schema);
  generation_ = store.generation();
  return c.status;
}

void EventItemState::release(Slot& s) noexcept {
  bytes_ -= s.bytes.size();
  s.overflow = false;
  if (s.bytes.capacity() > kSlotKeepBytes) {
    ua::ByteBuffer none;
    std::swap(s.bytes, none);
  } else {
    s.bytes.clear();
  }
}

void EventItemState::pop_front() noexcept {
  release(slots_[head_]);
  head_ = (head_ + 1) % slots_.size();
  --count_;
}

void EventItemState::pop_back() noexcept {
  release(slot(count_ - 1));
  --count_;
}

void EventItemState::clear() noexcept {
  while (count_ > 0) pop_front();
  head_ = 0;
}

void EventItemState::trim(uint32_t capacity) noexcept {
  while (count_ > capacity) pop_front();
}

EventItemState::Slot& EventItemState::grow_back() {
  if (count_ == slots_.size()) {
    std::rotate(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(head_), slots_.end());
    head_ = 0;
    slots_.emplace_back();
  }
  return slot(count_);
}

EventItemState::Slot& EventItemState::grow_front() {
  if (count_ == slots_.size()) {
    std::rotate(slots_.begin(), slots_.begin() + static_cast<std::ptrdiff_t>(head_), slots_.end());
    slots_.emplace_back();
    head_ = 0;
  }
  head_ = (head_ + slots_.size() - 1) % slots_.size();
  return slots_[head_];
}

void EventItemState::push_back(const EventView& event, bool overflow) {
  Slot& s = grow_back();
  encode(event, s);
  s.overflow = overflow;
  ++count_;
}

void EventItemState::push_front(const EventView& event, bool overflow) {
  Slot& s = grow_front();
  encode(event, s);
  s.overflow = overflow;
  ++count_;
}

// Int32 n, then one Variant per select clause (Part 4 §7.25.3: "a one to one match with the fields
// selected in the EventFilter"). A field whose encoding fails or would take the list past kMaxEventBytes
// is written as a null Variant (encoding mask 0, Part 6 §5.2.2.16).
void EventItemState::encode(const EventView& event, Slot& s) {
  s.bytes.clear();
  {
    ua::Encoder e(s.bytes);
    e.write_i32(static_cast<int32_t>(compiled_.select_count()));
  }
  for (size_t i = 0; i < compiled_.select_count(); ++i) {
    const size_t mark = s.bytes.size();
    ua::Encoder e(s.bytes);
    ua::encode(e, selected_value(compiled_, i, event, scratch_));
    if (!e.status().is_good() || s.bytes.size() + (compiled_.select_count() - i - 1) > kMaxEventBytes) {
      s.bytes.resize(mark);
      s.bytes.append("\0", 1);
    }
  }
  bytes_ += s.bytes.size();
}

}  // namespace opcuad::services
