#include "addressspace/namespace0.hpp"

#include <charconv>
#include <string_view>

#include "addressspace/generated/ns0_parts.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::addressspace {

void add_namespace0(NodeStoreBuilder& b) {
  ns0::add_all(b);
}
size_t namespace0_node_count() noexcept {
  return ns0::kNodeCount;
}

namespace ns0 {

namespace {
std::vector<uint32_t> parse_dims(const char* s) {
  std::vector<uint32_t> dims;
  if (!s) return dims;
  std::string_view text(s);
  while (!text.empty()) {
    uint32_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc()) break;
    dims.push_back(v);
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    if (!text.empty() && text.front() == ',') text.remove_prefix(1);
  }
  return dims;
}

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}
}  // namespace

void add_rows(NodeStoreBuilder& b, std::span<const NodeRow> nodes, std::span<const ReferenceRow> refs) {
  NodeSpec spec;
  for (const NodeRow& r : nodes) {
    spec.node_id = ua::NodeId(0, r.id);
    spec.node_class = r.node_class;
    spec.browse_name = ua::QualifiedName{0, ua::String(r.browse_name)};
    spec.display_name =
        ua::LocalizedText{ua::String(), ua::String(r.display_name ? r.display_name : r.browse_name)};
    spec.is_abstract = (r.flags & flag::kIsAbstract) != 0;
    spec.symmetric = (r.flags & flag::kSymmetric) != 0;
    spec.historizing = (r.flags & flag::kHistorizing) != 0;
    spec.contains_no_loops = (r.flags & flag::kContainsNoLoops) != 0;
    spec.executable = (r.flags & flag::kExecutable) != 0;
    spec.inverse_name =
        r.inverse_name ? ua::LocalizedText{ua::String(), ua::String(r.inverse_name)} : ua::LocalizedText{};
    spec.data_type = ua::NodeId(0, r.data_type ? r.data_type : ua::id::BaseDataType);
    spec.value_rank = r.value_rank;
    spec.array_dimensions = parse_dims(r.array_dimensions);
    spec.access_level = r.node_class == NodeClass::Variable ? r.access_or_events : access::kCurrentRead;
    spec.user_access_level = spec.access_level;
    spec.event_notifier = r.node_class == NodeClass::Variable ? 0 : r.access_or_events;
    spec.minimum_sampling_interval = r.minimum_sampling_interval;
    (void)b.add_node(spec);
  }
  for (const ReferenceRow& r : refs)
    b.add_reference(ua::NodeId(0, r.source), ua::NodeId(0, r.type), ua::NodeId(0, r.target));
}

void add_definitions(NodeStoreBuilder& b, std::span<const DefinitionRow> defs,
                     std::span<const FieldRow> fields) {
  for (const DefinitionRow& d : defs) {
    const auto fs = fields.subspan(d.first_field, d.field_count);
    if (d.kind == DefinitionKind::Enum) {
      ua::EnumDefinition e;
      for (const FieldRow& f : fs) {
        ua::EnumField ef;
        ef.value = f.value;
        ef.name = ua::String(f.name);
        ef.display_name.text = ua::String(f.name);
        e.fields.push_back(std::move(ef));
      }
      (void)b.set_definition(ua::NodeId(0, d.data_type), ua::ExtensionObject::make(std::move(e)));
      continue;
    }
    ua::StructureDefinition s;
    s.default_encoding_id = ua::NodeId(0, d.encoding);
    s.base_data_type = ua::NodeId(0, d.base);
    s.structure_type = d.kind == DefinitionKind::Union ? ua::StructureTypeEnum::Union
                       : d.kind == DefinitionKind::StructureWithOptionalFields
                           ? ua::StructureTypeEnum::StructureWithOptionalFields
                           : ua::StructureTypeEnum::Structure;
    for (const FieldRow& f : fs) {
      ua::StructureField sf;
      sf.name = ua::String(f.name);
      sf.data_type = ua::NodeId(0, f.data_type);
      sf.value_rank = f.value_rank;
      sf.is_optional = f.is_optional;
      s.fields.push_back(std::move(sf));
    }
    (void)b.set_definition(ua::NodeId(0, d.data_type), ua::ExtensionObject::make(std::move(s)));
  }
}

void set(NodeStoreBuilder& b, uint32_t id, ua::Variant v) {
  ua::DataValue dv;
  dv.value = std::move(v);
  (void)b.set_value(ua::NodeId(0, id), dv);
}

ua::LocalizedText text(const char* s) {
  return ua::LocalizedText{ua::String(), ua::String(s)};
}

ua::Variant texts(std::initializer_list<const char*> items) {
  std::vector<ua::LocalizedText> v;
  for (const char* s : items) v.push_back(text(s));
  return ua::Variant(std::move(v));
}

ua::Variant strings(std::initializer_list<const char*> items) {
  std::vector<ua::String> v;
  for (const char* s : items) v.emplace_back(s);
  return ua::Variant(std::move(v));
}

ua::Variant arguments(std::initializer_list<ArgumentRow> items) {
  std::vector<ua::ExtensionObject> v;
  for (const ArgumentRow& a : items) {
    ua::Argument arg;
    arg.name = ua::String(a.name);
    arg.data_type = ua::NodeId(0, a.data_type);
    arg.value_rank = a.value_rank;
    arg.array_dimensions.assign(a.dims.begin(), a.dims.end());
    v.push_back(ua::ExtensionObject::make(std::move(arg)));
  }
  return ua::Variant(std::move(v));
}

ua::Variant enum_values(std::initializer_list<EnumValueRow> items) {
  std::vector<ua::ExtensionObject> v;
  for (const EnumValueRow& e : items) {
    ua::EnumValueType ev;
    ev.value = e.value;
    ev.display_name = text(e.name);
    v.push_back(ua::ExtensionObject::make(std::move(ev)));
  }
  return ua::Variant(std::move(v));
}

ua::Variant date_time(const char* iso8601) {
  // "YYYY-MM-DDThh:mm:ssZ"
  int y = 0;
  unsigned mo = 1, d = 1, h = 0, mi = 0, s = 0;
  std::string_view t(iso8601);
  auto num = [&](size_t pos, size_t len, auto& out) {
    std::from_chars(t.data() + pos, t.data() + pos + len, out);
  };
  if (t.size() >= 19) {
    num(0, 4, y);
    num(5, 2, mo);
    num(8, 2, d);
    num(11, 2, h);
    num(14, 2, mi);
    num(17, 2, s);
  }
  const int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  return ua::Variant(ua::DateTime::from_unix_ms(secs * 1000));
}

}  // namespace ns0
}  // namespace opcuad::addressspace
