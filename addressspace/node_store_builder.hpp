#pragma once
// NodeStoreBuilder: assembles a NodeStore from node descriptions and references (namespace 0, then the
// configured nodes), then closes the type hierarchies and freezes it.
//
// Values: a Variable or VariableType gets a value cell when it is added, and its initial value is
// written at once. When the builder is given the previous store (a reload), a variable whose NodeId
// existed before keeps its cell and its live value (set_value() does not overwrite it either), except:
// - its DataType, ValueRank or ArrayDimensions changed: it gets a new cell holding its initial value, so
//   no reader ever sees a value of the old type under the new DataType (the old cell keeps serving the
//   old store until that is freed; cells are never freed before the ValueStore);
// - NodeSpec::replace_value (its initial value changed in the configuration): its initial value is
//   written into the kept cell, but only by a build() without errors, so a reload that fails changes no
//   value of the running address space.
//
// References may name nodes that are added later; build() reports any that never were.
// Threads: one builder is used by one thread (the control plane), never by the shards.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "addressspace/condition_specs.hpp"
#include "addressspace/node_store.hpp"
#include "addressspace/value_store.hpp"
#include "ua/generated/node_ids_data_type.hpp"
#include "ua/variant.hpp"

namespace opcuad::addressspace {

// Everything a node can have; the fields that do not belong to spec.node_class are ignored.
struct NodeSpec {
  ua::NodeId node_id;
  NodeClass node_class = NodeClass::Object;
  ua::QualifiedName browse_name;
  ua::LocalizedText display_name;
  ua::LocalizedText description;
  uint32_t write_mask = 0;
  uint8_t event_notifier = 0;      // Object, View
  bool contains_no_loops = false;  // View
  bool is_abstract = false;        // types
  bool symmetric = false;          // ReferenceType
  ua::LocalizedText inverse_name;  // ReferenceType
  bool executable = true;          // Method
  bool user_executable = true;     // Method: with executable, UserExecutable for every user
  // Variable, VariableType
  ua::NodeId data_type = ua::NodeId(0, ua::id::BaseDataType);
  int32_t value_rank = -2;
  std::vector<uint32_t> array_dimensions;
  uint8_t access_level = access::kCurrentRead;
  uint8_t user_access_level = access::kCurrentRead;
  uint32_t access_level_ex = 0;
  double minimum_sampling_interval = 0;
  bool historizing = false;
  // Role sets (config/roles.hpp) that may read / write the Value, when user_access_level has the has-roles
  // bit.
  uint8_t read_roles = 0xFF;
  uint8_t write_roles = 0xFF;
  std::optional<ua::DataValue> value;  // initial Value
  bool replace_value = false;          // a reload writes `value` over the live one (see above)
  // A Variable that has no initial Value at all (a NodeSet2 file's without <Value>): without `value`, its
  // new cell holds no value and the status Bad_NoValue (Part 6 §F.8).
  bool no_value = false;
  // DataType
  std::optional<ua::ExtensionObject> definition;
};

class NodeStoreBuilder {
 public:
  // `p` is the calling thread's participant of values.reclaimer(); `previous` the store being replaced.
  NodeStoreBuilder(ValueStore& values, EpochReclaimer::Participant& p, const NodeStore* previous = nullptr);
  ~NodeStoreBuilder();

  // False (and nothing added) when a node with this NodeId was already added.
  bool add_node(const NodeSpec& spec);
  // A reference from `source` to `target`; forward == false means target --type--> source.
  void add_reference(const ua::NodeId& source, const ua::NodeId& type, const ua::NodeId& target,
                     bool forward = true);
  // Writes the Value of a Variable or VariableType added before. False when there is none.
  bool set_value(const ua::NodeId& node, const ua::DataValue& value);
  // Gives a Variable added before read / write roles (its user_access_level gets `has_roles_bit`, see
  // NodeSpec::read_roles): for standard nodes whose access the server restricts (the Server object's
  // diagnostics, server_object.hpp). False when there is no such variable.
  bool set_roles(const ua::NodeId& node, uint8_t has_roles_bit, uint8_t read_roles, uint8_t write_roles);
  // Sets flag:: bits on a node added before (flag::kSessionScoped). False when there is none.
  bool add_flags(const ua::NodeId& node, uint8_t flags);
  // Sets EventNotifier bits (Part 3 §5.5.1) on an Object or View added before. False when there is none.
  bool add_event_notifier(const ua::NodeId& node, uint8_t bits);
  // An alarm condition whose nodes are (or will be) added: build() turns it into the store's
  // ConditionSpecs and marks its input, setpoint and normal-value variables flag::kHasAlarm.
  void add_condition(ConditionDecl decl) { conditions_.push_back(std::move(decl)); }
  // Sets the DataTypeDefinition of a DataType added before. False when there is none.
  bool set_definition(const ua::NodeId& data_type, ua::ExtensionObject definition);

  // Drops the replace_value writes build() would make (the caller found errors of its own).
  void cancel_value_writes() noexcept { deferred_writes_.clear(); }
  // A reload that is not published: the cells this builder took for new variables go back as spares
  // (ValueStore::orphan), so a corrected reload takes them again instead of allocating.
  void return_new_cells();

  // Whether a node with this id was added (not merely referenced).
  bool contains(const ua::NodeId& id) const;
  size_t node_count() const noexcept { return defined_; }

  struct Result {
    std::unique_ptr<NodeStore> store;  // null when errors is not empty
    std::vector<std::string> errors;
    // A reload: variables whose live value was replaced by their initial value (a new cell for a changed
    // DataType, ValueRank or ArrayDimensions, or replace_value).
    size_t values_reset = 0;
  };
  // Consumes the builder's contents.
  Result build();

 private:
  NodeIndex intern_node(const ua::NodeId& id);
  StringId intern(std::string_view s);
  StringId intern(const ua::String& s) { return s.is_null() ? kNullString : intern(s.view()); }
  LocalizedTextRef intern(const ua::LocalizedText& t) { return {intern(t.locale), intern(t.text)}; }
  void close_hierarchies(std::vector<std::string>& errors);
  // The cell of the previous store's variable `spec` may keep (same NodeId, DataType, ValueRank and
  // ArrayDimensions), or nullptr.
  ValueCell* reusable_cell(const NodeSpec& spec) const;
  bool reused(const ValueCell* cell, const ua::NodeId& id) const;

  struct PendingRef {
    NodeIndex source, type, target;
  };
  ValueStore& values_;
  EpochReclaimer::Participant& participant_;
  const NodeStore* previous_;
  std::unique_ptr<NodeStore> store_;
  std::vector<PendingRef> refs_;
  std::vector<ConditionDecl> conditions_;
  std::vector<uint32_t> string_slots_;  // open addressing over StringIds, for interning
  size_t string_count_ = 0;
  size_t defined_ = 0;
  // Initial values for kept cells (replace_value), written by a build() without errors.
  std::vector<std::pair<ValueCell*, ua::DataValue>> deferred_writes_;
  std::vector<std::pair<ua::NodeId, ValueCell*>> new_cells_;  // a reload's (previous_ set)
  size_t values_reset_ = 0;
};

}  // namespace opcuad::addressspace
