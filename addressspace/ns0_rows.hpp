#pragma once
// Row types of the generated namespace-0 tables (addressspace/generated/, tools/gen_ns0.py) and the
// functions that feed them to a NodeStoreBuilder. Internal to addressspace/.

#include <cstdint>
#include <initializer_list>
#include <span>

#include "addressspace/node_store_builder.hpp"

namespace opcuad::addressspace::ns0 {

struct NodeRow {
  uint32_t id;
  NodeClass node_class;
  const char* browse_name;
  const char* display_name;      // nullptr: same as the browse name
  uint32_t data_type;            // Variable, VariableType
  int32_t value_rank;            // Variable, VariableType
  uint8_t flags;                 // flag:: bits
  uint8_t access_or_events;      // AccessLevel (Variable) or EventNotifier (Object, View)
  const char* inverse_name;      // ReferenceType
  const char* array_dimensions;  // "0,0" or nullptr
  double minimum_sampling_interval;
};

struct ReferenceRow {
  uint32_t source, type, target;  // forward
};

enum class DefinitionKind : uint8_t { Structure, StructureWithOptionalFields, Union, Enum };

struct FieldRow {
  const char* name;
  uint32_t data_type;  // structures
  int32_t value_rank;  // structures
  int64_t value;       // enumerations
  bool is_optional;
};

struct DefinitionRow {
  uint32_t data_type;
  DefinitionKind kind;
  uint32_t base;      // supertype (structures)
  uint32_t encoding;  // Default Binary encoding node (structures), 0 if none
  uint32_t first_field, field_count;
};

struct ArgumentRow {
  const char* name;
  uint32_t data_type;
  int32_t value_rank;
  std::initializer_list<uint32_t> dims;
};
struct EnumValueRow {
  int64_t value;
  const char* name;
};

void add_rows(NodeStoreBuilder& b, std::span<const NodeRow> nodes, std::span<const ReferenceRow> refs);
void add_definitions(NodeStoreBuilder& b, std::span<const DefinitionRow> defs,
                     std::span<const FieldRow> fields);
void set(NodeStoreBuilder& b, uint32_t id, ua::Variant v);
ua::LocalizedText text(const char* s);
ua::Variant texts(std::initializer_list<const char*> items);
ua::Variant strings(std::initializer_list<const char*> items);
ua::Variant arguments(std::initializer_list<ArgumentRow> items);
ua::Variant enum_values(std::initializer_list<EnumValueRow> items);
ua::Variant date_time(const char* iso8601);

}  // namespace opcuad::addressspace::ns0
