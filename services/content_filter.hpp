#pragma once
// The EventFilter of an event monitored item (Part 4 §7.22.3): its select clauses and its where clause
// (a ContentFilter, Part 4 §7.7), compiled once against the server's event types and then evaluated per
// event without allocation.
//
//   compile(filter, schema, limits) -> FilterCompilation { status, CompiledFilter, EventFilterResult }
//   matches(compiled, event)        -> does the event pass the where clause
//   selected_value(compiled, i, event, scratch) -> the value of select clause i for the EventFieldList
//
// Compilation checks the FilterLimits first (counts only, before any resolution), then resolves every
// select clause to (event type, FieldKey, attribute, index range) and every where-clause element to a
// flat instruction whose operands are literals, fields or earlier-computed element results. Elements are
// evaluated from the last to the first: an ElementOperand may only name a later element (Part 4 §7.7.4.2),
// so every operand is ready when its element runs, no loop can form, and one pass over the elements costs
// time linear in the filter's size.
//
// Threads: a CompiledFilter is evaluated by one thread at a time (its result slots and conversion
// scratch are reused between events); it keeps a pointer to the EventSchema it was compiled with, which
// must outlive it (recompile after the schema changes).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "services/filter_convert.hpp"
#include "services/index_range.hpp"
#include "ua/builtin_type.hpp"
#include "ua/generated/types.hpp"
#include "ua/status_code.hpp"
#include "ua/variant.hpp"

namespace opcuad::services {

using EventTypeIdx = uint16_t;  // dense index of an event type (BaseEventType or a subtype)
using FieldKey = uint16_t;      // one per distinct browse path of an event field, shared across types
// Empty browse path + AttributeId NodeId: the ConditionId (Part 9 §5.5.2).
inline constexpr FieldKey kThisNodeField = 0xFFFF;

// What the filter needs from the address space's event types.
class EventSchema {
 public:
  virtual ~EventSchema() = default;
  virtual std::optional<EventTypeIdx> event_type(
      const ua::NodeId& id) const = 0;                                      // nullopt: not an event type
  virtual bool is_subtype(EventTypeIdx sub, EventTypeIdx super) const = 0;  // reflexive
  // The field declared on `type` or inherited from a supertype at this browse path (namespace-qualified
  // names), nullopt if none. For BaseEventType the answer covers every event type's fields: Part 4 §7.22.3
  // evaluates a BaseEventType operand's browse path "without considering the typeDefinitionId".
  virtual std::optional<FieldKey> field(EventTypeIdx type, std::span<const ua::QualifiedName> path) const = 0;
  // For Cast and for OfType on a non-event type: the built-in type of a DataType NodeId (nullopt: not a
  // DataType / unknown).
  virtual std::optional<ua::BuiltinType> builtin_of_data_type(const ua::NodeId& id) const = 0;
};

// One event as the filter sees it.
class EventView {
 public:
  virtual ~EventView() = default;
  virtual EventTypeIdx type() const = 0;
  // The field's value, nullptr when the event has no such field (the filter reads it as null).
  // kThisNodeField: the ConditionId of a condition event, nullptr for other events.
  virtual const ua::Variant* field(FieldKey key) const = 0;
};

// Bounds on a filter, checked before any work (docs/SECURITY.md, "Bounds").
struct FilterLimits {
  uint32_t max_select_clauses = 256;
  uint32_t max_browse_path = 8;  // elements per SimpleAttributeOperand
  uint32_t max_elements = 64;    // where-clause elements
  uint32_t max_operands_per_element = 1024;
  uint32_t max_operands = 2048;       // in the whole where clause
  uint32_t max_literal_bytes = 4096;  // a LiteralOperand's encoded Variant
  uint32_t max_like_pattern = 1024;   // bytes of a Like pattern
};

// A resolved SimpleAttributeOperand (select clause or where-clause operand).
struct ResolvedField {
  std::optional<EventTypeIdx> type;  // nullopt: BaseEventType (any event)
  FieldKey key = 0;
  bool always_null = false;  // a BaseEventType path that no event type declares
  std::optional<IndexRange> range;
};

class CompiledFilter {
 public:
  // Selected clauses in order; an invalid clause delivers null.
  size_t select_count() const noexcept { return select_.size(); }
  bool has_where_clause() const noexcept { return !elements_.empty(); }

 private:
  friend struct FilterCompiler;
  friend bool matches(const CompiledFilter&, const EventView&) noexcept;
  friend const ua::Variant& selected_value(const CompiledFilter&, size_t, const EventView&, ua::Variant&);

  struct Operand {
    enum class Kind : uint8_t { Literal, Field, Element } kind = Kind::Literal;
    uint32_t index = 0;  // into literals_, fields_ or elements_
  };
  struct Element {
    ua::FilterOperator op = ua::FilterOperator::Equals;
    uint32_t first = 0;  // operands_[first, first + count)
    uint32_t count = 0;
    bool reachable = false;
    EventTypeIdx of_type = 0;                         // OfType
    uint32_t ids_first = 0, ids_count = 0;            // InList of NodeId literals: id_pool_, sorted
    ua::BuiltinType cast_to = ua::BuiltinType::Null;  // Cast
  };

  filter::FilterValue operand_value(const Operand& o, const EventView& ev) const noexcept;
  filter::FilterValue evaluate(const Element& e, size_t index, const EventView& ev) const noexcept;

  const EventSchema* schema_ = nullptr;
  std::vector<std::optional<ResolvedField>> select_;  // nullopt: an invalid clause
  std::vector<Element> elements_;
  std::vector<Operand> operands_;
  std::vector<ResolvedField> fields_;
  std::vector<ua::Variant> literals_;
  std::vector<filter::FilterValue> literal_values_;  // views of literals_
  std::vector<ua::NodeId> id_pool_;  // the NodeId lists of InList elements, each sorted for a binary search
  // Per-evaluation state, reused: each element's result, the storage its Cast result views, and the scratch
  // of comparisons.
  mutable std::vector<filter::FilterValue> results_;
  mutable std::unique_ptr<filter::ConvertScratch[]> cast_scratch_;
  mutable filter::ConvertScratch compare_scratch_;
  mutable std::vector<ua::Variant> field_scratch_;  // per field operand: the part its index range selects
  uint32_t max_like_pattern_ = 0;
};

struct FilterCompilation {
  // Good, or BadEventFilterInvalid: a bound exceeded (result left empty), no select clause or none valid,
  // or a where-clause element in error (result says which).
  ua::StatusCode status;
  CompiledFilter filter;
  // selectClauseResults: empty when every clause is Good, else one code per clause. whereClauseResult:
  // elementResults empty when every element is Good, else one per element, each with operandStatusCodes
  // empty unless an operand of that element is in error (Part 4 §7.7.2).
  ua::EventFilterResult result;
  bool result_empty() const noexcept {
    return result.select_clause_results.empty() && result.where_clause_result.element_results.empty();
  }
};

FilterCompilation compile(const ua::EventFilter& filter, const EventSchema& schema,
                          const FilterLimits& limits);

// TRUE when the where clause's first element evaluates to TRUE (FALSE and NULL drop the event); an empty
// where clause passes every event. No allocation once the filter has run with values of the same shapes
// (a Cast to String of a NodeId, DateTime or Guid builds its text in a reused string).
bool matches(const CompiledFilter& filter, const EventView& event) noexcept;

// The value of select clause `i` for `event`: the field itself, or `scratch` holding the part an index
// range selects, or a null Variant (an invalid clause, an event of another type, an absent field, a range
// that selects nothing).
const ua::Variant& selected_value(const CompiledFilter& filter, size_t i, const EventView& event,
                                  ua::Variant& scratch);

// Calls f(const ua::Variant&) for every select clause in order (for encoding an EventFieldList).
template <class F>
void for_each_selected(const CompiledFilter& filter, const EventView& event, ua::Variant& scratch, F&& f) {
  for (size_t i = 0; i < filter.select_count(); ++i) f(selected_value(filter, i, event, scratch));
}

// Like (Part 4 §7.7.3): `text` matches `pattern` with % (any run), _ (one character), [set] / [^set]
// (with ranges a-z) and \ escaping the next character. Two-pointer matching with one restart point per
// %: time O(|text| * |pattern|) at worst, no backtracking explosion. Characters are UTF-8 code points.
bool like_match(std::string_view text, std::string_view pattern) noexcept;
// Whether `pattern` is well formed (every [ closed, no trailing \).
bool like_pattern_valid(std::string_view pattern) noexcept;

}  // namespace opcuad::services
