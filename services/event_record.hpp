#pragma once
// EventRecord: one event the server raised (Part 3 §6.4.2, Part 5 §6.4.2 BaseEventType), as every
// consumer reads it: immutable once built, shared by the shards that deliver it (std::shared_ptr; the
// count is the only thing they write), and seen by the filter engine as an EventView (content_filter.hpp).
//
// A record refers to one NodeStore generation: its type is an EventTypeIdx of that store's event-type
// index and its notifiers (the nodes whose event items receive it, Part 3 HasEventSource / HasNotifier,
// addressspace/event_types.hpp) are NodeIndexes there. A shard that has adapted to another generation
// cannot evaluate it against its filters, which were compiled for that other index (Server::raise_event).
//
// EventBuilder fills what every event carries (Part 5 §6.4.2): EventId (unless set: 16 bytes, a random
// prefix drawn once per process and a count, unique per event; an EventId is no secret: a client reads it
// from the event or the condition, and what it allows, Acknowledge, is checked by role), EventType,
// SourceNode, SourceName (the source's BrowseName unless set), Time and ReceiveTime (now unless set),
// Severity (1, the lowest, unless set) and Message (empty unless set); the producer adds the fields of its
// type. Fields are kept sorted by FieldKey, found by a binary search.
//
// Cost: records are recycled. The last owner to drop a record hands it to a per-thread pool (at most
// kKeptRecords per thread) with its field table, notifier list and EventId storage kept, and its
// shared_ptr control block goes to a per-thread list of blocks; the next record built on that thread
// takes both. When an event is raised and delivered on one shard (alarms judged on the writer's shard,
// items on that shard), building it allocates nothing once warm but what its values need beyond the
// strings' small-string storage. A record released on another thread than the one that builds the next
// one is freed there instead when that pool is full. The consumer side, filter and encoding, allocates
// nothing (event_item.hpp).
//
// Thread-safe once built: any thread reads it.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "addressspace/event_types.hpp"
#include "addressspace/node_store.hpp"
#include "addressspace/store_diff.hpp"
#include "config/roles.hpp"
#include "services/content_filter.hpp"
#include "ua/generated/types.hpp"
#include "ua/variant.hpp"

namespace opcuad::services {

struct RecordRecycler;

class EventRecord final : public EventView {
 public:
  // Records a thread keeps for reuse (see Cost above).
  static constexpr size_t kKeptRecords = 1024;

  EventTypeIdx type() const override { return type_; }
  const ua::Variant* field(FieldKey key) const override;

  addressspace::NodeIndex source() const noexcept { return source_; }
  uint64_t generation() const noexcept { return generation_; }
  // The notifiers whose event items receive the event: sorted, no duplicates.
  std::span<const addressspace::NodeIndex> notifiers() const noexcept { return notifiers_; }
  // The roles a session needs one of to receive the event; 0: any session (access_control).
  config::RoleSet readers() const noexcept { return readers_; }

 private:
  friend class EventBuilder;
  friend struct RecordRecycler;
  EventTypeIdx type_ = 0;
  addressspace::NodeIndex source_ = addressspace::kNoNode;
  uint64_t generation_ = 0;
  config::RoleSet readers_ = 0;
  std::vector<addressspace::NodeIndex> notifiers_;
  std::vector<std::pair<FieldKey, ua::Variant>> fields_;  // sorted by key; never kEventId or kMessage
  // Fields shared with other records (EventBuilder::share), consulted after fields_; sorted by key.
  std::shared_ptr<const std::vector<std::pair<FieldKey, ua::Variant>>> shared_;
  // The EventId and the Message, apart so that a recycled record keeps their storage.
  ua::Variant event_id_;
  ua::Variant message_;
  bool has_event_id_ = false;
  bool has_message_ = false;
};

class EventBuilder {
 public:
  // An event of type `type` (an event type of `store`: BaseEventType or a subtype) from `source` (a node
  // of `store`). valid() is false when the store has no event types, `type` is none of them or `source`
  // is kNoNode. REQUIRES: `store` outlives the builder (not the record).
  EventBuilder(const addressspace::NodeStore& store, const ua::NodeId& type, addressspace::NodeIndex source);
  bool valid() const noexcept { return record_ != nullptr; }

  // Room for `n` fields, so that setting them does not grow the table again. REQUIRES: valid().
  EventBuilder& reserve(size_t n);
  // Fields kept in a table other records share (an immutable one: a condition's member variables that only
  // a reload changes), below the fields set here: a field set here wins. REQUIRES: valid().
  EventBuilder& share(std::shared_ptr<const std::vector<std::pair<FieldKey, ua::Variant>>> fields);
  // Sets (or replaces) a field. REQUIRES: valid().
  EventBuilder& set(FieldKey key, ua::Variant value);
  // Sets a field by its namespace-0 browse name, declared by the event's type or a supertype (the
  // fields of Part 5's audit types, e.g. "SessionId"); a name the type does not declare is left out.
  EventBuilder& set(std::string_view name, ua::Variant value);
  // Only sessions with one of `roles` receive the event (EventRecord::readers).
  EventBuilder& readers(config::RoleSet roles);
  // The Message (a LocalizedText without locale), written into the record's own storage: a recycled
  // record's text keeps its capacity, so a message of about the same length allocates nothing.
  EventBuilder& message(std::string_view text);
  EventBuilder& severity(uint16_t severity);

  // The finished record; the builder is spent. nullptr when !valid() or when the random source failed
  // (no EventId can be made unique then).
  std::shared_ptr<const EventRecord> build();

 private:
  bool has(FieldKey key) const noexcept;
  const addressspace::NodeStore& store_;
  std::shared_ptr<EventRecord> record_;
};

// A SystemStatusChangeEventType event (Part 5 §6.4.30) from the Server object: SystemState `state` (the
// ServerState enumeration, Part 5 §12.6), with this severity and message. nullptr when `store` has no
// event types or no Server object.
std::shared_ptr<const EventRecord> system_status_event(const addressspace::NodeStore& store,
                                                       ua::ServerState state, uint16_t severity,
                                                       std::string_view message);

// The event of a reload that changed the address space (Part 3 §9.32, Part 5 §6.4.31-§6.4.32): a
// GeneralModelChangeEventType from the Server object whose Changes list `changes`, or, when the list was
// cut at its bound, a BaseModelChangeEventType without one (a client then browses again what it shows).
// nullptr when nothing has a verb to report or the store has no event types. `store` is the new one.
std::shared_ptr<const EventRecord> model_change_event(const addressspace::NodeStore& store,
                                                      const addressspace::ModelChanges& changes);

}  // namespace opcuad::services
