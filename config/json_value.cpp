#include "config/json_value.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "ua/base64.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::config {

namespace {
using Json = nlohmann::json;
using B = ua::BuiltinType;

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

template <class T>
bool integer(const Json& j, ua::Variant& out) {
  if (!j.is_number_integer()) return false;
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    out = static_cast<T>(v);
    return true;
  }
  const int64_t v = j.get<int64_t>();
  if constexpr (std::is_unsigned_v<T>) {
    if (v < 0 || static_cast<uint64_t>(v) > std::numeric_limits<T>::max()) return false;
  } else {
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
  }
  out = static_cast<T>(v);
  return true;
}

bool localized(const Json& j, ua::LocalizedText& out) {
  if (j.is_string()) {
    out = ua::LocalizedText{ua::String(), ua::String(j.get<std::string>())};
    return true;
  }
  if (!j.is_object()) return false;
  out = {};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_string()) return false;
    if (it.key() == "locale") {
      out.locale = ua::String(it.value().get<std::string>());
    } else if (it.key() == "text") {
      out.text = ua::String(it.value().get<std::string>());
    } else {
      return false;
    }
  }
  return true;
}

bool structure(const Json& j, uint32_t data_type, ua::Variant& out) {
  if (!j.is_object()) return false;
  if (data_type == ua::Range::data_type_id) {
    ua::Range r;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it.value().is_number()) return false;
      if (it.key() == "low") {
        r.low = it.value().get<double>();
      } else if (it.key() == "high") {
        r.high = it.value().get<double>();
      } else {
        return false;
      }
    }
    out = ua::ExtensionObject::make(r);
    return true;
  }
  if (data_type == ua::EUInformation::data_type_id) {
    ua::EUInformation e;
    for (auto it = j.begin(); it != j.end(); ++it) {
      const Json& v = it.value();
      if (it.key() == "namespace_uri" && v.is_string()) {
        e.namespace_uri = ua::String(v.get<std::string>());
      } else if (it.key() == "unit_id" && v.is_number_integer()) {
        e.unit_id = v.get<int32_t>();
      } else if (it.key() == "display_name" && localized(v, e.display_name)) {
      } else if (it.key() == "description" && localized(v, e.description)) {
      } else {
        return false;
      }
    }
    if (e.namespace_uri.is_null())
      e.namespace_uri = ua::String("http://www.opcfoundation.org/UA/units/un/cefact");
    out = ua::ExtensionObject::make(std::move(e));
    return true;
  }
  return false;
}

// Why an object does not fit a structured value (LocalizedText, Range, EUInformation): the first key it
// does not know, or a key whose value has the wrong JSON type. Empty when nothing more can be said.
std::string object_problem(const Json& j, B t, uint32_t data_type) {
  if (!j.is_object()) return {};
  struct Key {
    const char* name;
    const char* wants;  // what its value must be
  };
  std::vector<Key> keys;
  if (t == B::LocalizedText) {
    keys = {{"locale", "a string"}, {"text", "a string"}};
  } else if (data_type == ua::Range::data_type_id) {
    keys = {{"low", "a number"}, {"high", "a number"}};
  } else if (data_type == ua::EUInformation::data_type_id) {
    keys = {{"namespace_uri", "a string"},
            {"unit_id", "an integer"},
            {"display_name", "a string or {\"locale\", \"text\"}"},
            {"description", "a string or {\"locale\", \"text\"}"}};
  } else {
    return {};
  }
  std::string known;
  for (const Key& k : keys) known += std::string(known.empty() ? "" : ", ") + k.name;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const Key* key = nullptr;
    for (const Key& k : keys) key = it.key() == k.name ? &k : key;
    if (!key) return "unknown key \"" + it.key() + "\" (" + known + ")";
    ua::LocalizedText ignored;
    const Json& v = it.value();
    const std::string_view wants = key->wants;
    const bool fits = wants == "a number"     ? v.is_number()
                      : wants == "an integer" ? v.is_number_integer()
                      : wants == "a string"   ? v.is_string()
                                              : localized(v, ignored);
    if (!fits) return "\"" + it.key() + "\" must be " + key->wants;
  }
  return {};
}

bool scalar(const Json& j, B t, uint32_t data_type, const ua::NodeId::NamespaceResolver& resolver,
            ua::Variant& out) {
  switch (t) {
    case B::Boolean:
      if (!j.is_boolean()) return false;
      out = j.get<bool>();
      return true;
    case B::SByte:
      return integer<int8_t>(j, out);
    case B::Byte:
      return integer<uint8_t>(j, out);
    case B::Int16:
      return integer<int16_t>(j, out);
    case B::UInt16:
      return integer<uint16_t>(j, out);
    case B::Int32:
      return integer<int32_t>(j, out);
    case B::UInt32:
      return integer<uint32_t>(j, out);
    case B::Int64:
      return integer<int64_t>(j, out);
    case B::UInt64:
      return integer<uint64_t>(j, out);
    case B::Float:
      if (!j.is_number()) return false;
      out = j.get<float>();
      return true;
    case B::Double:
      if (!j.is_number()) return false;
      out = j.get<double>();
      return true;
    case B::String:
      if (!j.is_string()) return false;
      out = ua::String(j.get<std::string>());
      return true;
    case B::XmlElement:
      if (!j.is_string()) return false;
      out = ua::XmlElement(j.get<std::string>());
      return true;
    case B::DateTime: {
      ua::DateTime d;
      if (!j.is_string() || !parse_date_time(j.get<std::string>(), d)) return false;
      out = d;
      return true;
    }
    case B::Guid: {
      if (!j.is_string()) return false;
      auto g = ua::Guid::parse(j.get<std::string>());
      if (!g) return false;
      out = *g;
      return true;
    }
    case B::ByteString: {
      if (!j.is_string()) return false;
      auto bytes = ua::base64_decode(j.get<std::string>());
      if (!bytes) return false;
      out = ua::ByteString(std::move(*bytes));
      return true;
    }
    case B::NodeId: {
      if (!j.is_string()) return false;
      auto id = ua::NodeId::parse(j.get<std::string>(), resolver);
      if (!id) return false;
      out = *id.value;
      return true;
    }
    case B::ExpandedNodeId: {
      if (!j.is_string()) return false;
      auto id = ua::ExpandedNodeId::parse(j.get<std::string>());
      if (!id) return false;
      out = *id.value;
      return true;
    }
    case B::StatusCode:
      if (!j.is_number_unsigned() || j.get<uint64_t>() > UINT32_MAX) return false;
      out = ua::StatusCode(j.get<uint32_t>());
      return true;
    case B::QualifiedName: {
      if (!j.is_string()) return false;
      const std::string s = j.get<std::string>();
      ua::QualifiedName q;
      const auto colon = s.find(':');
      uint16_t ns = 0;
      if (colon != std::string::npos &&
          std::from_chars(s.data(), s.data() + colon, ns).ptr == s.data() + colon && colon > 0) {
        q.namespace_index = ns;
        q.name = ua::String(s.substr(colon + 1));
      } else {
        q.name = ua::String(s);
      }
      out = std::move(q);
      return true;
    }
    case B::LocalizedText: {
      ua::LocalizedText l;
      if (!localized(j, l)) return false;
      out = std::move(l);
      return true;
    }
    case B::ExtensionObject:
      return structure(j, data_type, out);
    default:
      return false;
  }
}

template <class T>
bool collect(std::vector<ua::Variant>& items, ua::Variant& out) {
  std::vector<T> v;
  v.reserve(items.size());
  for (auto& i : items) {
    T* x = i.get_if<T>();
    if (!x) return false;
    v.push_back(std::move(*x));
  }
  out = ua::Variant(std::move(v));
  return true;
}

bool make_array(std::vector<ua::Variant>& items, B t, ua::Variant& out) {
  switch (t) {
    case B::Boolean:
      return collect<bool>(items, out);
    case B::SByte:
      return collect<int8_t>(items, out);
    case B::Byte:
      return collect<uint8_t>(items, out);
    case B::Int16:
      return collect<int16_t>(items, out);
    case B::UInt16:
      return collect<uint16_t>(items, out);
    case B::Int32:
      return collect<int32_t>(items, out);
    case B::UInt32:
      return collect<uint32_t>(items, out);
    case B::Int64:
      return collect<int64_t>(items, out);
    case B::UInt64:
      return collect<uint64_t>(items, out);
    case B::Float:
      return collect<float>(items, out);
    case B::Double:
      return collect<double>(items, out);
    case B::String:
      return collect<ua::String>(items, out);
    case B::DateTime:
      return collect<ua::DateTime>(items, out);
    case B::Guid:
      return collect<ua::Guid>(items, out);
    case B::ByteString:
      return collect<ua::ByteString>(items, out);
    case B::XmlElement:
      return collect<ua::XmlElement>(items, out);
    case B::NodeId:
      return collect<ua::NodeId>(items, out);
    case B::ExpandedNodeId:
      return collect<ua::ExpandedNodeId>(items, out);
    case B::StatusCode:
      return collect<ua::StatusCode>(items, out);
    case B::QualifiedName:
      return collect<ua::QualifiedName>(items, out);
    case B::LocalizedText:
      return collect<ua::LocalizedText>(items, out);
    case B::ExtensionObject:
      return collect<ua::ExtensionObject>(items, out);
    default:
      return false;
  }
}

// Flattens nested JSON arrays row-major, recording the dimensions; false when ragged.
bool flatten(const Json& j, size_t depth, std::vector<int32_t>& dims, std::vector<const Json*>& leaves) {
  if (!j.is_array()) {
    if (depth != dims.size()) return false;
    leaves.push_back(&j);
    return true;
  }
  if (depth == dims.size()) {
    dims.push_back(static_cast<int32_t>(j.size()));
  } else if (dims[depth] != static_cast<int32_t>(j.size())) {
    return false;
  }
  for (const Json& e : j) {
    if (!flatten(e, depth + 1, dims, leaves)) return false;
  }
  return true;
}
}  // namespace

bool parse_date_time(std::string_view t, ua::DateTime& out) {
  // YYYY-MM-DDThh:mm:ss[.fffffff]Z
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' ||
      t.back() != 'Z') {
    return false;
  }
  int y = 0;
  unsigned mo = 0, d = 0, h = 0, mi = 0, s = 0;
  auto num = [&](size_t pos, size_t len, auto& v) {
    auto r = std::from_chars(t.data() + pos, t.data() + pos + len, v);
    return r.ec == std::errc() && r.ptr == t.data() + pos + len;
  };
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) ||
      !num(17, 2, s)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
  int64_t ticks = 0;
  if (t.size() > 20) {
    if (t[19] != '.' || t.size() > 28) return false;
    int64_t scale = 1000000;
    for (size_t i = 20; i + 1 < t.size(); ++i, scale /= 10) {
      if (t[i] < '0' || t[i] > '9') return false;
      ticks += (t[i] - '0') * scale;
    }
  } else if (t.size() != 20) {
    return false;
  }
  const int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
  out = ua::DateTime{ua::DateTime::kUnixEpochTicks + secs * 10000000 + ticks};
  return true;
}

bool json_to_variant(const Json& j, const addressspace::NodeStore& store, addressspace::NodeIndex data_type,
                     int32_t value_rank, const ua::NodeId::NamespaceResolver& resolver, ua::Variant& out,
                     std::string& why) {
  const addressspace::DataTypeAttributes* d = store.data_type(data_type);
  const std::string type_name(store.string(store.record(data_type).browse_name));
  why = "value does not fit DataType " + type_name;
  if (!d || d->builtin == 0) {
    why = "DataType " + type_name + " is abstract: give a concrete DataType for an initial value";
    return false;
  }
  const auto t = static_cast<B>(d->builtin);
  const uint32_t type_id =
      store.node_id(data_type).type() == ua::IdType::Numeric ? store.node_id(data_type).numeric() : 0;
  if (!j.is_array()) {
    if (value_rank != -1 && value_rank != -2 && value_rank != -3) {
      why = "value must be an array: ValueRank is " + std::to_string(value_rank);
      return false;
    }
    if (scalar(j, t, type_id, resolver, out)) return true;
    if (const std::string problem = object_problem(j, t, type_id); !problem.empty()) why += ": " + problem;
    return false;
  }
  if (value_rank == -1) {
    why = "value must be a scalar: ValueRank is -1";
    return false;
  }
  std::vector<int32_t> dims;
  std::vector<const Json*> leaves;
  if (!flatten(j, 0, dims, leaves)) {
    why = "arrays of a matrix must all have the same length";
    return false;
  }
  const int32_t rank = static_cast<int32_t>(dims.size());
  if (!(value_rank == -2 || value_rank == rank || (value_rank == 0 && rank >= 1) ||
        (value_rank == -3 && rank == 1))) {
    why =
        "value has " + std::to_string(rank) + " dimension(s) but ValueRank is " + std::to_string(value_rank);
    return false;
  }
  std::vector<ua::Variant> items(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!scalar(*leaves[i], t, type_id, resolver, items[i])) {
      why = "element " + std::to_string(i) + " does not fit DataType " + type_name;
      if (const std::string problem = object_problem(*leaves[i], t, type_id); !problem.empty())
        why += ": " + problem;
      return false;
    }
  }
  if (!make_array(items, t, out)) return false;
  if (rank > 1) out.set_dimensions(std::move(dims));
  return true;
}

}  // namespace opcuad::config
