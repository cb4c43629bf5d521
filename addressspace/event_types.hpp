#pragma once
// EventTypes: what the event code asks of a NodeStore's event types and notifiers, indexed once when the
// store is built (NodeStoreBuilder::build(), NodeStore::event_types()), immutable afterwards and read by
// every shard without synchronisation. Each store generation, a reloaded one too, brings its own.
//
// Event types (Part 3 §6.4.2 / Part 5 §6.4.2). Every ObjectType that is BaseEventType (i=2041) or a
// subtype, namespace 0's and the loaded models', gets a dense index (EventTypeIdx) in depth-first pre-order
// of the HasSubtype tree below BaseEventType. ObjectTypes have a single supertype (Part 3 §6.3.3), so the
// subtypes of a type are exactly the indexes [type, subtree_end(type)): is_subtype() is two compares, and
// the memory is linear in the number of types (a K x K bit matrix would be 512 MiB at the u16 limit).
//
// Fields (Part 4 §7.22.3, SimpleAttributeOperand of an EventFilter): a select clause names an
// InstanceDeclaration by its browse path from the fully inherited EventType, following forward
// hierarchical references to nodes that are the source of a HasModellingRule reference. Every distinct
// path below any event type (Variables and Objects reached by HasComponent, HasProperty and their
// subtypes, HasOrderedComponent included; at most kMaxFieldDepth elements) is interned to one FieldKey
// shared by all types; per type the FieldKey -> InstanceDeclaration map includes the supertypes'
// declarations, and a subtype's declaration of the same path overrides its supertype's (Part 3 §6.3.3,
// e.g. AlarmConditionType.EnabledState i=9118 over ConditionType.EnabledState i=9011).
//
// Well-known fields (event_field::k*) are interned first, in a fixed order, so their keys are the same
// constants in every store; building the index checks that each is declared by the type that defines it
// in namespace 0 (an error of the store's build when not: namespace 0 is broken).
//
// Notifiers (Part 3 §5.5.1 EventNotifier; HasEventSource and HasNotifier ReferenceTypes, Part 3 §7.17 and
// §7.18 of v1.05): a node is a notifier when it is an Object or View whose EventNotifier has
// SubscribeToEvents (bit 0 of the EventNotifierType DataType, Part 3 §8, Table 42 in v1.05). An event whose
// SourceNode is S is reported to the notifiers_of(S): every notifier from which S is reachable by forward
// HasEventSource references (HasNotifier and other subtypes included), S itself when it is a notifier, and
// the Server object (i=2253) always: Part 3 says of HasEventSource that the Server Object "is always capable
// of supplying all Events from a Server and as such has implied HasEventSource References to every event
// source", so no explicit reference to it is required. The lists are computed once per store for every node
// that is a notifier or the target (or, transitively, a source) of such a reference; any other node's list is
// the Server's alone. Part 3 forbids loops of HasEventSource references; a model that has one anyway is
// handled (every node of a loop reaches every other), never followed forever. Identical lists are kept
// once, so a million variables below one notifier share one list.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "addressspace/node.hpp"
#include "ua/builtin_type.hpp"
#include "ua/node_id.hpp"
#include "ua/text.hpp"

namespace opcuad::addressspace {

class NodeStore;

using EventTypeIdx = uint16_t;
using FieldKey = uint16_t;

// Browse paths deeper than this are not fields (the deepest path of namespace 0's event types has 3
// elements, e.g. LimitState/LastTransition/Id).
inline constexpr size_t kMaxFieldDepth = 8;

// The FieldKeys of the fields the server itself fills in, the same in every store. Each is the path of
// namespace-0 browse names written with '/' (kWellKnownFields in event_types.cpp gives the path and the
// type that declares it).
namespace event_field {
enum : FieldKey {
  // BaseEventType (Part 5 §6.4.2)
  kEventId,
  kEventType,
  kSourceNode,
  kSourceName,
  kTime,
  kReceiveTime,
  kLocalTime,
  kMessage,
  kSeverity,
  kConditionClassId,    // optional on BaseEventType (v1.05), mandatory on ConditionType
  kConditionClassName,  // likewise
  // AuditEventType (Part 5 §6.4.3)
  kActionTimeStamp,
  kStatus,
  kServerId,
  kClientAuditEntryId,
  kClientUserId,  // AuditEventType and ConditionType share the path
  // SystemStatusChangeEventType (Part 5 §6.4.30), GeneralModelChangeEventType (Part 5 §6.4.32)
  kSystemState,
  kChanges,
  // ConditionType (Part 9 §5.5.2)
  kConditionName,
  kBranchId,
  kRetain,
  kEnabledState,
  kEnabledStateId,
  kEnabledStateTransitionTime,
  kQuality,
  kQualitySourceTimestamp,
  kLastSeverity,
  kLastSeveritySourceTimestamp,
  kComment,
  kCommentSourceTimestamp,
  // AcknowledgeableConditionType (Part 9 §5.7.2)
  kAckedState,
  kAckedStateId,
  kAckedStateTransitionTime,
  kConfirmedState,
  kConfirmedStateId,
  kConfirmedStateTransitionTime,
  // AlarmConditionType (Part 9 §5.8.2)
  kActiveState,
  kActiveStateId,
  kActiveStateTransitionTime,
  kActiveStateEffectiveDisplayName,
  kInputNode,
  kSuppressedOrShelved,
  // LimitAlarmType (Part 9 §5.8.18)
  kHighHighLimit,
  kHighLimit,
  kLowLimit,
  kLowLowLimit,
  // ExclusiveLimitAlarmType (Part 9 §5.8.19.3)
  kLimitState,
  kLimitStateCurrentState,
  kLimitStateCurrentStateId,
  kLimitStateLastTransition,
  kLimitStateLastTransitionId,
  kLimitStateLastTransitionTransitionTime,
  // NonExclusiveLimitAlarmType (Part 9 §5.8.20)
  kHighHighState,
  kHighHighStateId,
  kHighState,
  kHighStateId,
  kLowState,
  kLowStateId,
  kLowLowState,
  kLowLowStateId,
  // OffNormalAlarmType (Part 9 §5.8.23), ExclusiveDeviationAlarmType (Part 9 §5.8.21.3)
  kNormalState,
  kSetpointNode,
  kWellKnownCount
};
}  // namespace event_field

class EventTypes {
 public:
  struct BuildResult {
    std::shared_ptr<const EventTypes> index;  // null when errors is not empty
    std::vector<std::string> errors;
  };
  // The index of `s`, whose references and type hierarchies are final. A store without BaseEventType (one
  // built without namespace 0) gets an index with no event types, and no error. The index reads `s`
  // afterwards (node ids, DataTypes): REQUIRES `s` outlives it (the store owns it).
  static BuildResult build(const NodeStore& s);

  // Event types. nullopt: `id` is not BaseEventType or one of its subtypes.
  std::optional<EventTypeIdx> event_type(const ua::NodeId& id) const noexcept;
  std::optional<EventTypeIdx> event_type_of(NodeIndex n) const noexcept;
  // Is `sub` the type `super` or a subtype of it (reflexive)? False for indexes out of range.
  bool is_subtype(EventTypeIdx sub, EventTypeIdx super) const noexcept {
    return super <= sub && sub < subtree_end_.size() && sub < subtree_end_[super];
  }
  // BaseEventType's index (0) when the store has event types.
  static constexpr EventTypeIdx kBaseEventType = 0;
  size_t type_count() const noexcept { return types_.size(); }
  // REQUIRES: type < type_count().
  NodeIndex type_node(EventTypeIdx type) const noexcept { return types_[type]; }
  const ua::NodeId& type_id(EventTypeIdx type) const noexcept;

  // Fields. The key of `path` when `type` (REQUIRES: < type_count()) declares it, itself or through a
  // supertype; nullopt otherwise (an empty path, one of an unknown name, one deeper than kMaxFieldDepth).
  std::optional<FieldKey> field(EventTypeIdx type, std::span<const ua::QualifiedName> path) const noexcept;
  // The key of `path` whichever event type declares it (a select clause naming BaseEventType is evaluated
  // against each event's own type, Part 4 §7.22.3); nullopt when no event type does.
  std::optional<FieldKey> field_key(std::span<const ua::QualifiedName> path) const noexcept;
  // The InstanceDeclaration of `field` in `type` (inherited or overridden), or kNoNode.
  NodeIndex declaration(EventTypeIdx type, FieldKey field) const noexcept;
  struct Declaration {
    FieldKey field;
    NodeIndex node;
  };
  // Every field of `type`, inherited ones included, by ascending key. REQUIRES: type < type_count().
  std::span<const Declaration> declarations(EventTypeIdx type) const noexcept {
    return {decls_.data() + decl_begin_[type], decl_begin_[type + 1] - decl_begin_[type]};
  }
  size_t field_count() const noexcept { return key_hash_.size(); }
  // The path of `field` ("ActiveState/Id", "2:Pressure/EURange" outside namespace 0), for messages.
  std::string field_path(FieldKey field) const;

  // The built-in type the values of DataType `id` are encoded as (Part 6 §5.1.2), from the HasSubtype
  // chain up to namespace 0's built-in DataTypes: Int32 for enumerations (Part 6 §5.2.4), Variant for the
  // abstract roots that admit any value (BaseDataType, Number, Integer, UInteger). nullopt: not a DataType.
  std::optional<ua::BuiltinType> builtin_of_data_type(const ua::NodeId& id) const noexcept;

  // Notifiers (see the header comment).
  bool is_notifier(NodeIndex n) const noexcept;
  // Sorted, no duplicates; valid as long as the store. Empty only in a store without the Server object.
  std::span<const NodeIndex> notifiers_of(NodeIndex source) const noexcept;
  size_t notifier_count() const noexcept { return notifiers_.size(); }
  // Nodes with a list of their own, and distinct lists.
  size_t source_count() const noexcept { return sources_.size(); }
  size_t list_count() const noexcept { return list_begin_.size() - 1; }

  // Heap bytes held (for the memory benchmark).
  size_t bytes() const noexcept;

 private:
  explicit EventTypes(const NodeStore& s) : store_(&s) {}
  class Builder;
  struct PathElem {
    uint16_t ns = 0;
    uint32_t name_begin = 0;  // in names_
    uint32_t name_size = 0;
  };
  struct Source {
    NodeIndex node;
    uint32_t list;
  };
  // The key of the path of `size` elements (namespace ns(i), name name(i)) whose hash is `hash`.
  template <class Ns, class Name>
  std::optional<FieldKey> lookup(size_t size, uint64_t hash, Ns ns, Name name) const noexcept;

  const NodeStore* store_;
  NodeIndex enumeration_ = kNoNode;  // the Enumeration DataType (i=29)
  // Event types, by EventTypeIdx.
  std::vector<NodeIndex> types_;
  std::vector<EventTypeIdx> subtree_end_;                         // one past the last subtype's index
  std::vector<std::pair<NodeIndex, EventTypeIdx>> type_of_node_;  // sorted by node
  // Field keys: key k's path is elems_[key_begin_[k], key_begin_[k+1]); an open-addressing table over
  // the keys (slot value key + 1, 0 empty) finds a path by its hash.
  std::vector<PathElem> elems_;
  std::vector<uint32_t> key_begin_{0};
  std::vector<uint64_t> key_hash_;
  std::vector<uint32_t> key_slots_;
  std::string names_;
  // Declarations: type t's are decls_[decl_begin_[t], decl_begin_[t+1]), sorted by field.
  std::vector<Declaration> decls_;
  std::vector<uint32_t> decl_begin_{0};
  // Notifiers: sorted. Sources: sorted by node; list l is list_nodes_[list_begin_[l], list_begin_[l+1]);
  // list 0 is the Server object's alone (the list of every other node).
  std::vector<NodeIndex> notifiers_;
  std::vector<Source> sources_;
  std::vector<uint32_t> list_begin_{0};
  std::vector<NodeIndex> list_nodes_;
};

}  // namespace opcuad::addressspace
