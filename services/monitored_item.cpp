#include "services/monitored_item.hpp"

#include <algorithm>
#include <cmath>

#include "services/attribute_read.hpp"
#include "services/subscription.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using addressspace::NodeClass;
using addressspace::ValueStore;

constexpr uint32_t kValue = 13;

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

ua::StatusCode with_overflow(ua::StatusCode s) { return ua::StatusCode(s.value() | kOverflowInfoBits); }

}  // namespace

bool passes_filter(const ChangeFilter& f, const ua::DataValue& last, const ua::DataValue& next) {
  if (last.status != next.status) return true;
  if (f.trigger == ua::DataChangeTrigger::Status) return false;
  if (f.trigger == ua::DataChangeTrigger::StatusValueTimestamp &&
      (last.source_timestamp.ticks != next.source_timestamp.ticks ||
       last.source_picoseconds != next.source_picoseconds)) {
    return true;
  }
  if (f.deadband == ua::DeadbandType::None) return !(last.value == next.value);
  return exceeds_deadband(last.value, next.value, f.absolute);
}

void NotificationQueue::configure(uint32_t capacity, bool discard_oldest) {
  capacity = std::max<uint32_t>(capacity, 1);
  discard_oldest_ = discard_oldest;
  if (capacity == capacity_) return;
  std::vector<ua::DataValue> values;
  values.reserve(count_);
  while (!empty()) values.push_back(pop());
  ring_.clear();
  head_ = 0;
  capacity_ = capacity;
  // A smaller queue keeps the newest values (Part 4 §5.12.1.5 leaves the choice to the server).
  const size_t skip = values.size() > capacity ? values.size() - capacity : 0;
  for (size_t i = skip; i < values.size(); ++i) push(std::move(values[i]));
}

void NotificationQueue::push(ua::DataValue value) {
  if (count_ < capacity_) {
    if (count_ == ring_.size()) {
      // The ring is full but may grow: make it contiguous, then append.
      std::rotate(ring_.begin(), ring_.begin() + static_cast<ptrdiff_t>(head_), ring_.end());
      head_ = 0;
      ring_.push_back(std::move(value));
    } else {
      at(count_) = std::move(value);
    }
    ++count_;
    return;
  }
  if (capacity_ == 1) {
    at(0) = std::move(value);  // a queue of one holds the newest value; no overflow bit
    return;
  }
  if (discard_oldest_) {
    // Drop the oldest; the value now oldest is the one next to the lost one.
    at(0) = std::move(value);
    head_ = (head_ + 1) % ring_.size();
    at(0).status = with_overflow(at(0).status);
  } else {
    // Replace the newest; the replacement carries the flag.
    value.status = with_overflow(value.status);
    at(count_ - 1) = std::move(value);
  }
}

ua::DataValue NotificationQueue::pop() {
  ua::DataValue v = std::move(at(0));
  head_ = (head_ + 1) % ring_.size();
  if (--count_ == 0) head_ = 0;
  return v;
}

void NotificationQueue::clear() noexcept {
  ring_.clear();
  head_ = 0;
  count_ = 0;
}

void MonitoredItem::sample(const addressspace::NodeStore& store) {
  if (mode == ua::MonitoringMode::Disabled) return;
  ua::DataValue v;
  if (attribute_id == kValue) {
    if (cell) {
      // The version first: an unchanged cell costs one atomic load and no copy.
      if (!ValueStore::read_if_changed(*cell, last_version, v)) return;
    } else if (has_last) {
      return;  // a Value without a cell never changes
    }
  } else {
    const addressspace::NodeIndex n = store.find(node_id);
    v.status = n == addressspace::kNoNode ? status::BadNodeIdUnknown
                                          : read_plain_attribute(store, n, attribute_id, v.value);
    v.server_timestamp = ua::DateTime::now();
  }
  if (range && v.status.is_good()) {
    ua::Variant whole = std::move(v.value);
    ua::StatusCode s = read_range(whole, *range, v.value);
    if (!s.is_good()) {
      v.value.clear();
      v.status = s;
    }
  }
  if (has_last && !passes_filter(filter, last, v)) return;
  has_last = true;
  last = v;
  switch (timestamps) {
    case ua::TimestampsToReturn::Source:
      v.server_timestamp = {};
      v.server_picoseconds = 0;
      break;
    case ua::TimestampsToReturn::Server:
      v.source_timestamp = {};
      v.source_picoseconds = 0;
      break;
    case ua::TimestampsToReturn::Neither:
      v.source_timestamp = v.server_timestamp = {};
      v.source_picoseconds = v.server_picoseconds = 0;
      break;
    default:
      break;
  }
  queue.push(std::move(v));
  subscription->on_item_queued(*this);
}

}  // namespace opcuad::services
