#pragma once
// The EventSchema a filter is compiled against (content_filter.hpp), answered by the event-type index of
// one NodeStore generation (addressspace/event_types.hpp). A filter compiled against it keeps a pointer to
// it: the schema lives as long as the store whose index it reads, and an item is compiled again for the
// store a reload publishes.

#include "addressspace/event_types.hpp"
#include "services/content_filter.hpp"

namespace opcuad::services {

class StoreEventSchema final : public EventSchema {
 public:
  explicit StoreEventSchema(const addressspace::EventTypes& types) noexcept : types_(types) {}

  std::optional<EventTypeIdx> event_type(const ua::NodeId& id) const override {
    return types_.event_type(id);
  }
  bool is_subtype(EventTypeIdx sub, EventTypeIdx super) const override {
    return types_.is_subtype(sub, super);
  }
  // Part 4 §7.22.3: a BaseEventType operand's browse path is resolved whatever type declares it.
  std::optional<FieldKey> field(EventTypeIdx type, std::span<const ua::QualifiedName> path) const override {
    return type == addressspace::EventTypes::kBaseEventType ? types_.field_key(path)
                                                            : types_.field(type, path);
  }
  std::optional<ua::BuiltinType> builtin_of_data_type(const ua::NodeId& id) const override {
    return types_.builtin_of_data_type(id);
  }

 private:
  const addressspace::EventTypes& types_;
};

}  // namespace opcuad::services
