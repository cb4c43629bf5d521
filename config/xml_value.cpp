// XML-encoded values (Part 6 §5.3) of NodeSet2 files -> Variant.
#include "config/xml_value.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "config/json_value.hpp"
#include "config/type_names.hpp"
#include "ua/base64.hpp"
#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::config {

namespace {

constexpr int kMaxDepth = 32;

// The built-in type an XML element names (Part 6 §5.3.1: the element is named by its type).
// Looked up once per value element: a table built once, not a scan of the names.
std::optional<ua::BuiltinType> builtin_by_name(std::string_view name) {
  static const auto table = [] {
    std::unordered_map<std::string_view, ua::BuiltinType> m;
    for (uint8_t i = 1; i <= ua::kMaxBuiltinType; ++i) {
      const auto t = static_cast<ua::BuiltinType>(i);
      m.emplace(ua::builtin_type_name(t), t);
    }
    return m;
  }();
  const auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

// The first child element whose local name is `name`.
std::string_view text_of(pugi::xml_node n) {
  return n ? std::string_view(n.text().get()) : std::string_view();
}

// Namespace 0's structure encodings: the "Default XML" / "Default Binary" encoding nodes (HasEncoding
// targets, Part 3 §5.8.4) and the DataType itself -> the DataType, for an ExtensionObject's TypeId.
const std::unordered_map<uint32_t, addressspace::NodeIndex>& ns0_encodings() {
  static const auto table = [] {
    std::unordered_map<uint32_t, addressspace::NodeIndex> m;
    const addressspace::NodeStore& s = ns0_store();
    const addressspace::NodeIndex has_encoding = s.find(ua::NodeId(0, ua::id::HasEncoding));
    for (addressspace::NodeIndex n = 0; n < s.size(); ++n) {
      if (s.node_class(n) != addressspace::NodeClass::DataType || !s.data_type_definition(n)) continue;
      m.emplace(s.node_id(n).numeric(), n);
      for (const auto& r : s.references(n)) {
        if (!r.is_inverse && s.reference_type_node(r.type) == has_encoding) {
          const ua::NodeId& target = s.node_id(r.target);
          if (target.type() == ua::IdType::Numeric) m.emplace(target.numeric(), n);
        }
      }
    }
    return m;
  }();
  return table;
}

}  // namespace

pugi::xml_node xml_child(pugi::xml_node n, std::string_view name) {
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element && local_name(c.name()) == name) return c;
  }
  return {};
}

pugi::xml_node xml_first_element(pugi::xml_node n) {
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
    if (c.type() == pugi::node_element) return c;
  }
  return {};
}

// Dispatch on the built-in type: scalar_as<I> / array_as<I> read the alternative I of Variant::Storage.
struct XmlValueAccess {
  template <size_t I>
  static bool scalar_as(XmlValueReader& r, pugi::xml_node n, ua::Variant& out) {
    using T = std::variant_alternative_t<I, ua::Variant::Storage>;
    if constexpr (std::is_same_v<T, ua::NotAllowed>) {
      return r.fail(n, "a Variant cannot hold a scalar Variant (Part 6 §5.2.2.16)");
    } else if constexpr (std::is_same_v<T, ua::Box<ua::DataValue>> ||
                         std::is_same_v<T, ua::Box<ua::DiagnosticInfo>>) {
      std::remove_cvref_t<decltype(*std::declval<T>())> v;
      if (!r.parse(n, v)) return false;
      out = ua::Variant(std::move(v));
      return true;
    } else {
      T v{};
      if (!r.parse(n, v)) return false;
      out.storage().template emplace<I>(std::move(v));
      return true;
    }
  }
  template <size_t I>
  static bool array_as(XmlValueReader& r, pugi::xml_node list, ua::Variant& out) {
    using V = std::variant_alternative_t<I + ua::Variant::kArrayBase, ua::Variant::Storage>;
    using T = typename V::value_type;
    V items;
    for (pugi::xml_node c = list.first_child(); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      if (local_name(c.name()) != ua::builtin_type_name(static_cast<ua::BuiltinType>(I))) {
        return r.fail(c, "a ListOf" + std::string(ua::builtin_type_name(static_cast<ua::BuiltinType>(I))) +
                             " element holds a " + std::string(local_name(c.name())));
      }
      T v{};
      if (!r.parse(c, v)) return false;
      items.push_back(std::move(v));
    }
    out.storage().template emplace<I + ua::Variant::kArrayBase>(std::move(items));
    return true;
  }
};

namespace {
using ReadFn = bool (*)(XmlValueReader&, pugi::xml_node, ua::Variant&);
template <size_t... I>
constexpr std::array<ReadFn, sizeof...(I)> scalar_readers(std::index_sequence<I...>) {
  return {&XmlValueAccess::scalar_as<I + 1>...};
}
template <size_t... I>
constexpr std::array<ReadFn, sizeof...(I)> array_readers(std::index_sequence<I...>) {
  return {&XmlValueAccess::array_as<I + 1>...};
}
// [built-in type - 1] -> the reader of a scalar / a ListOf element of that type.
constexpr auto kScalars = scalar_readers(std::make_index_sequence<25>());
constexpr auto kArrays = array_readers(std::make_index_sequence<25>());
}  // namespace

bool XmlValueReader::fail(pugi::xml_node where, std::string why) {
  if (why_.empty()) {
    why_ = std::move(why);
    where_ = where;
  }
  return false;
}

bool XmlValueReader::read(pugi::xml_node element, ua::Variant& out) {
  undecoded_ = 0;
  why_.clear();
  where_ = {};
  const std::string_view name = local_name(element.name());
  if (name == "Matrix") return matrix(element, out);
  if (name.starts_with("ListOf")) {
    const auto t = builtin_by_name(name.substr(6));
    if (!t) return fail(element, "unknown value element <" + std::string(name) + ">");
    return array(element, *t, out);
  }
  const auto t = builtin_by_name(name);
  if (!t) return fail(element, "unknown value element <" + std::string(name) + ">");
  return scalar(element, *t, out);
}

bool XmlValueReader::scalar(pugi::xml_node n, ua::BuiltinType t, ua::Variant& out) {
  return kScalars[static_cast<size_t>(t) - 1](*this, n, out);
}

bool XmlValueReader::array(pugi::xml_node list, ua::BuiltinType t, ua::Variant& out) {
  return kArrays[static_cast<size_t>(t) - 1](*this, list, out);
}

bool XmlValueReader::matrix(pugi::xml_node m, ua::Variant& out) {
  // Part 6 §5.3.1.17: the dimensions as a list of Int32, then the elements in row-major order.
  std::vector<int32_t> dims;
  size_t product = 1;
  for (pugi::xml_node d = xml_first_element(xml_child(m, "Dimensions")); d; d = d.next_sibling()) {
    if (d.type() != pugi::node_element) continue;
    int32_t v = 0;
    if (!parse(d, v)) return false;
    if (v < 0) return fail(d, "a matrix dimension must not be negative");
    dims.push_back(v);
    product *= static_cast<size_t>(v);
  }
  const pugi::xml_node elements = xml_child(m, "Elements");
  const pugi::xml_node first = xml_first_element(elements);
  if (dims.empty()) return fail(m, "a Matrix needs its Dimensions");
  if (!first) {
    if (product != 0) return fail(m, "a Matrix without Elements must have a zero dimension");
    return fail(m, "an empty Matrix names no element type");
  }
  const auto t = builtin_by_name(local_name(first.name()));
  if (!t) return fail(first, "unknown value element <" + std::string(local_name(first.name())) + ">");
  if (!array(elements, *t, out)) return false;
  if (out.array_length() != product) {
    return fail(m, "the Matrix has " + std::to_string(out.array_length()) +
                       " elements, its Dimensions multiply to " + std::to_string(product));
  }
  out.set_dimensions(std::move(dims));
  return true;
}

bool XmlValueReader::node_id(std::string_view text, ua::NodeId& out) {
  auto parsed = ua::NodeId::parse(xml_trim(text));
  if (!parsed) return fail(where_, "invalid NodeId \"" + std::string(text) + "\": " + parsed.error);
  const auto ns = ns_.map(parsed.value->namespace_index());
  if (!ns) {
    return fail(where_, "NodeId \"" + std::string(text) + "\": namespace index " +
                            std::to_string(parsed.value->namespace_index()) +
                            " is not in the file's NamespaceUris");
  }
  out = std::move(*parsed.value);
  switch (out.type()) {
    case ua::IdType::Numeric:
      out.set_numeric(*ns, out.numeric());
      break;
    case ua::IdType::Guid:
      out.set_guid(*ns, out.guid());
      break;
    default: {
      const std::string s(out.string());
      out.set_text(*ns, out.type(), s.data(), s.size());
      break;
    }
  }
  return true;
}

// ---- one type each

bool XmlValueReader::parse(pugi::xml_node n, bool& v) {
  const std::string_view s = xml_trim(text_of(n));
  if (!n || s == "false" || s == "0") {
    v = false;
  } else if (s == "true" || s == "1") {
    v = true;
  } else {
    return fail(n, "not a Boolean: \"" + std::string(s) + "\"");
  }
  return true;
}

template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) bool XmlValueReader::parse(pugi::xml_node n,
                                                                                       T& v) {
  v = 0;
  if (!n) return true;
  const std::string_view s = xml_trim(text_of(n));
  const char* begin = s.data();
  if (!s.empty() && s.front() == '+') ++begin;
  const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return fail(n, "not a valid " + std::string(local_name(n.name())) + " value: \"" + std::string(s) + "\"" +
                       (ec == std::errc::result_out_of_range ? " (out of range)" : ""));
  }
  return true;
}

namespace {
template <class T>
bool parse_float(std::string_view s, T& v) {
  // xs:float / xs:double spell the special values INF, -INF and NaN.
  if (s == "INF") {
    v = std::numeric_limits<T>::infinity();
  } else if (s == "-INF") {
    v = -std::numeric_limits<T>::infinity();
  } else if (s == "NaN") {
    v = std::numeric_limits<T>::quiet_NaN();
  } else {
    const char* begin = s.data();
    if (!s.empty() && s.front() == '+') ++begin;
    const auto [end, ec] = std::from_chars(begin, s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
  }
  return true;
}
}  // namespace

bool XmlValueReader::parse(pugi::xml_node n, float& v) {
  v = 0;
  if (n && !parse_float(xml_trim(text_of(n)), v))
    return fail(n, "not a Float: \"" + std::string(xml_trim(text_of(n))) + "\"");
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, double& v) {
  v = 0;
  if (n && !parse_float(xml_trim(text_of(n)), v))
    return fail(n, "not a Double: \"" + std::string(xml_trim(text_of(n))) + "\"");
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::String& v) {
  // An absent element is a null String; <String/> an empty one.
  v = n ? ua::String(std::string_view(text_of(n))) : ua::String();
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::DateTime& v) {
  v = ua::DateTime{};
  if (!n) return true;
  const std::string_view s = xml_trim(text_of(n));
  if (!parse_date_time(s, v)) return fail(n, "not a DateTime (xs:dateTime, UTC): \"" + std::string(s) + "\"");
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::Guid& v) {
  v = ua::Guid{};
  if (!n) return true;
  // <Guid><String>...</String></Guid> (Part 6 §5.3.1).
  const std::string_view s = xml_trim(text_of(xml_child(n, "String")));
  const auto g = ua::Guid::parse(s);
  if (!g) return fail(n, "not a Guid: \"" + std::string(s) + "\"");
  v = *g;
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::ByteString& v) {
  v = ua::ByteString();
  if (!n) return true;
  std::string compact;  // xs:base64Binary allows white space between the characters
  for (char c : text_of(n)) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') compact.push_back(c);
  }
  auto bytes = ua::base64_decode(compact);
  if (!bytes) return fail(n, "not base64 (a ByteString)");
  v = ua::ByteString(std::move(*bytes));
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::XmlElement& v) {
  v = ua::XmlElement();
  if (!n) return true;
  const pugi::xml_node inner = xml_first_element(n);
  if (!inner) return true;
  std::string text;
  if (!serialize(inner, false, text)) return false;
  v = ua::XmlElement(std::move(text));
  return true;
}

bool XmlValueReader::serialize(pugi::xml_node inner, bool remap, std::string& out) {
  struct Writer : pugi::xml_writer {
    std::string& out;
    explicit Writer(std::string& o) : out(o) {}
    void write(const void* data, size_t size) override { out.append(static_cast<const char*>(data), size); }
  } w(out);
  pugi::xml_document copy;
  pugi::xml_node root = copy.append_copy(inner);
  // The element on its own must still say which XML namespaces its names are in: each prefix it or an
  // element inside uses (and the default namespace) gets the declaration an ancestor of it made.
  std::vector<std::string> declare{"xmlns"};
  for (pugi::xml_node e = root; e;) {
    const std::string_view name(e.name());
    const auto colon = name.find(':');
    if (e.type() == pugi::node_element && colon != std::string_view::npos) {
      std::string attribute = "xmlns:" + std::string(name.substr(0, colon));
      if (std::find(declare.begin(), declare.end(), attribute) == declare.end())
        declare.push_back(std::move(attribute));
    }
    if (remap && e.type() == pugi::node_element && !remap_namespaces(e)) return false;
    // Depth first, without recursion.
    if (pugi::xml_node c = xml_first_element(e)) {
      e = c;
      continue;
    }
    while (e && e != root && !e.next_sibling()) e = e.parent();
    if (!e || e == root) break;
    e = e.next_sibling();
  }
  for (const std::string& attribute : declare) {
    if (root.attribute(attribute.c_str())) continue;
    pugi::xml_attribute declared;
    for (pugi::xml_node a = inner.parent(); a && !declared; a = a.parent())
      declared = a.attribute(attribute.c_str());
    if (declared) root.prepend_attribute(attribute.c_str()).set_value(declared.value());
  }
  root.print(w, "", pugi::format_raw);
  return true;
}

bool XmlValueReader::remap_namespaces(pugi::xml_node e) {
  // The NodeIds (<Identifier>ns=1;i=5</Identifier>) and QualifiedNames (<NamespaceIndex> beside a <Name>)
  // of a kept body are written with the file's namespace indexes: a reader has only the server's table.
  const std::string_view local = local_name(e.name());
  if (local == "Identifier" && e.first_child() && e.first_child() == e.last_child() &&
      e.first_child().type() == pugi::node_pcdata) {
    const std::string_view id_text = xml_trim(e.text().get());
    if (!id_text.starts_with("ns=")) return true;
    ua::NodeId id;
    where_ = e;
    if (!node_id(id_text, id)) return false;
    e.text().set(id.to_string().c_str());
  } else if (local == "NamespaceIndex" && xml_child(e.parent(), "Name")) {
    uint16_t file_ns = 0;
    if (!parse(e, file_ns)) return false;
    const auto ns = ns_.map(file_ns);
    if (!ns)
      return fail(e, "namespace index " + std::to_string(file_ns) + " is not in the file's NamespaceUris");
    e.text().set(static_cast<unsigned>(*ns));
  }
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::NodeId& v) {
  v = ua::NodeId();
  if (!n) return true;
  const pugi::xml_node id = xml_child(n, "Identifier");
  if (!id) return true;  // the null NodeId
  where_ = id;
  return node_id(text_of(id), v);
}

bool XmlValueReader::parse(pugi::xml_node n, ua::ExpandedNodeId& v) {
  v = ua::ExpandedNodeId();
  if (!n) return true;
  const pugi::xml_node id = xml_child(n, "Identifier");
  if (!id) return true;
  const std::string_view text = xml_trim(text_of(id));
  if (text.starts_with("nsu=") || text.starts_with("svr=")) {
    auto parsed = ua::ExpandedNodeId::parse(text);
    if (!parsed) return fail(id, "invalid ExpandedNodeId \"" + std::string(text) + "\": " + parsed.error);
    v = std::move(*parsed.value);
    return true;
  }
  where_ = id;
  return node_id(text, v.node_id);
}

bool XmlValueReader::parse(pugi::xml_node n, ua::StatusCode& v) {
  uint32_t code = 0;
  if (n && !parse(xml_child(n, "Code"), code)) return false;
  v = ua::StatusCode(code);
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::QualifiedName& v) {
  v = ua::QualifiedName();
  if (!n) return true;
  uint16_t file_ns = 0;
  if (!parse(xml_child(n, "NamespaceIndex"), file_ns)) return false;
  const auto ns = ns_.map(file_ns);
  if (!ns) {
    return fail(n, "QualifiedName: namespace index " + std::to_string(file_ns) +
                       " is not in the file's NamespaceUris");
  }
  v.namespace_index = *ns;
  return parse(xml_child(n, "Name"), v.name);
}

bool XmlValueReader::parse(pugi::xml_node n, ua::LocalizedText& v) {
  v = ua::LocalizedText();
  if (!n) return true;
  parse(xml_child(n, "Locale"), v.locale);
  parse(xml_child(n, "Text"), v.text);
  return true;
}

namespace {

// Namespace 0's DataTypes, from the generated store.
class Ns0DataTypes final : public XmlDataTypes {
 public:
  XmlDataType type(const ua::NodeId& data_type) const override {
    const addressspace::NodeStore& s = ns0_store();
    static const addressspace::NodeIndex enumeration = s.find(ua::NodeId(0, ua::id::Enumeration));
    const addressspace::NodeIndex n = s.find(data_type);
    const addressspace::DataTypeAttributes* a = n == addressspace::kNoNode ? nullptr : s.data_type(n);
    if (!a) return {};
    XmlDataType t;
    t.known = true;
    t.builtin = a->builtin;
    t.enumeration = s.is_data_type_subtype(n, enumeration);
    const ua::ExtensionObject* def = s.data_type_definition(n);
    t.structure = def ? def->get<ua::StructureDefinition>() : nullptr;
    return t;
  }
  ua::NodeId data_type_of(const ua::NodeId& type_id) const override {
    if (type_id.namespace_index() != 0 || type_id.type() != ua::IdType::Numeric) return {};
    const auto& encodings = ns0_encodings();
    const auto it = encodings.find(type_id.numeric());
    return it == encodings.end() ? ua::NodeId() : ns0_store().node_id(it->second);
  }
};

// Builds the binary encoding (Part 6 §5.2.6, §5.2.7) of a structure from its XML body (Part 6 §5.3.7),
// field by field as its StructureDefinition lists them: a namespace-0 structure is then decoded by the
// generated decoder (one decoder for both encodings, and the same checks a binary client's value gets),
// one of a loaded model is kept as that binary body.
class StructureEncoder {
 public:
  StructureEncoder(XmlValueReader& reader, ua::Encoder& e, const XmlDataTypes& types)
      : r_(reader), e_(e), types_(types) {}

  bool structure(pugi::xml_node body, const ua::NodeId& type, int depth) {
    const XmlDataType t = types_.type(type);
    const ua::StructureDefinition* def = t.structure;
    if (!def) return fail(body, "DataType " + type.to_string() + " is not a structure");
    if (depth > kMaxDepth) return fail(body, "structures nest deeper than " + std::to_string(kMaxDepth));
    // An element that is no field of the structure is a value of another structure (Part 6 §5.3.7).
    for (pugi::xml_node c = xml_first_element(body); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      const std::string_view name = local_name(c.name());
      if (name == "SwitchField" || name == "EncodingMask") continue;
      const bool known = std::any_of(def->fields.begin(), def->fields.end(),
                                     [&](const ua::StructureField& f) { return f.name.view() == name; });
      if (!known) return fail(c, "<" + std::string(name) + "> is no field of " + type.to_string());
    }
    // Part 3 §8.51: in the subtyped kinds IsOptional says that a field allows subtypes.
    const bool subtyped = def->structure_type == ua::StructureTypeEnum::StructureWithSubtypedValues ||
                          def->structure_type == ua::StructureTypeEnum::UnionWithSubtypedValues;
    switch (def->structure_type) {
      case ua::StructureTypeEnum::Structure:
      case ua::StructureTypeEnum::StructureWithSubtypedValues:
        for (const auto& f : def->fields) {
          if (!field(body, xml_child(body, f.name.view()), f, subtyped && f.is_optional, depth)) return false;
        }
        return true;
      case ua::StructureTypeEnum::StructureWithOptionalFields: {
        // The EncodingMask: one bit per optional field, in order, set when it is present.
        uint32_t mask = 0, bit = 0;
        for (const auto& f : def->fields) {
          if (!f.is_optional) continue;
          if (bit == 32) return fail(body, "more than 32 optional fields");
          if (xml_child(body, f.name.view())) mask |= 1u << bit;
          ++bit;
        }
        e_.write_u32(mask);
        for (const auto& f : def->fields) {
          const pugi::xml_node c = xml_child(body, f.name.view());
          if (f.is_optional && !c) continue;
          if (!field(body, c, f, false, depth)) return false;
        }
        return true;
      }
      case ua::StructureTypeEnum::Union:
      case ua::StructureTypeEnum::UnionWithSubtypedValues: {
        // The SwitchField: 0 for no field, else the 1-based index of the one field encoded.
        uint32_t which = 0;
        if (!r_.parse(xml_child(body, "SwitchField"), which)) return false;
        if (which > def->fields.size())
          return fail(body, "SwitchField " + std::to_string(which) + " is out of range");
        e_.write_u32(which);
        if (which == 0) return true;
        const auto& f = def->fields[which - 1];
        return field(body, xml_child(body, f.name.view()), f, subtyped && f.is_optional, depth);
      }
      default:
        return fail(body,
                    "StructureType " + std::to_string(static_cast<int>(def->structure_type)) + " is unknown");
    }
  }

 private:
  bool fail(pugi::xml_node n, std::string why) {
    reason_ = std::move(why);
    where_ = n;
    return false;
  }

 public:
  std::string reason_;
  pugi::xml_node where_;

 private:
  // `n`, the field's element in `body`, may be null: the field's default (an empty array for an array).
  bool field(pugi::xml_node body, pugi::xml_node n, const ua::StructureField& f, bool allows_subtypes,
             int depth) {
    const XmlDataType t = types_.type(f.data_type);
    const std::string name(f.name.view());
    if (!t.known) return fail(body, "field " + name + " has an unknown DataType " + f.data_type.to_string());
    if (f.value_rank >= 1) {
      // An array field: its element holds one element per item, named by the item's type.
      if (!n) {
        e_.write_i32(-1);  // a null array; of a matrix, a null Dimensions array (Part 6 §5.2.5)
        return true;
      }
      if (f.value_rank > 1) return matrix_field(n, f, t, allows_subtypes, depth);
      size_t count = 0;
      for (pugi::xml_node c = xml_first_element(n); c; c = c.next_sibling())
        count += c.type() == pugi::node_element;
      e_.write_length(count);
      for (pugi::xml_node c = xml_first_element(n); c; c = c.next_sibling()) {
        if (c.type() == pugi::node_element && !one(c, f, t, allows_subtypes, depth)) return false;
      }
      return true;
    }
    return one(n, f, t, allows_subtypes, depth);
  }

  // A matrix field (ValueRank > 1) as a Matrix (Part 6 §5.3.1.17): <Dimensions> of Int32, then <Elements>
  // in row-major order, one element per value; in binary the inline matrix of Part 6 §5.2.5 (Table 22):
  // the dimensions as an Int32 array, then the values.
  bool matrix_field(pugi::xml_node n, const ua::StructureField& f, const XmlDataType& t, bool allows_subtypes,
                    int depth) {
    const std::string name(f.name.view());
    std::vector<int32_t> dims;
    size_t product = 1;
    // Elements are counted below: a product past any count a file can hold (kCap) only has to stay unequal
    // to it, and must not overflow.
    constexpr size_t kCap = size_t{1} << 40;
    for (pugi::xml_node d = xml_first_element(xml_child(n, "Dimensions")); d; d = d.next_sibling()) {
      if (d.type() != pugi::node_element) continue;
      int32_t v = 0;
      if (!r_.parse(d, v)) return false;
      if (v < 0) return fail(d, "field " + name + ": a matrix dimension must not be negative");
      dims.push_back(v);
      const auto dim = static_cast<size_t>(v);
      product = dim != 0 && product > kCap / dim ? kCap + 1 : product * dim;
    }
    if (dims.empty()) return fail(n, "field " + name + ": a matrix field needs its <Dimensions>");
    if (f.value_rank >= 1 && dims.size() != static_cast<size_t>(f.value_rank)) {
      return fail(n, "field " + name + ": " + std::to_string(dims.size()) + " dimensions for ValueRank " +
                         std::to_string(f.value_rank));
    }
    const pugi::xml_node elements = xml_child(n, "Elements");
    size_t count = 0;
    for (pugi::xml_node c = xml_first_element(elements); c; c = c.next_sibling())
      count += c.type() == pugi::node_element;
    if (count != product) {
      return fail(n, "field " + name + ": the matrix has " + std::to_string(count) +
                         " elements, its Dimensions multiply to " +
                         (product > kCap ? "more than " + std::to_string(kCap) : std::to_string(product)));
    }
    e_.write_length(dims.size());
    for (int32_t d : dims) e_.write_i32(d);
    for (pugi::xml_node c = xml_first_element(elements); c; c = c.next_sibling()) {
      if (c.type() == pugi::node_element && !one(c, f, t, allows_subtypes, depth)) return false;
    }
    return true;
  }

  bool one(pugi::xml_node n, const ua::StructureField& f, const XmlDataType& t, bool allows_subtypes,
           int depth) {
    using B = ua::BuiltinType;
    const auto eo = static_cast<uint8_t>(B::ExtensionObject);
    uint8_t builtin = t.builtin;
    if (allows_subtypes) {
      // Part 6 §5.2.7: a field that allows subtypes is an ExtensionObject (a structure) or a Variant.
      builtin = t.builtin == eo ? eo : 0;
    } else if (t.structure && !t.structure->default_encoding_id.is_null()) {
      return structure(n, f.data_type, depth + 1);  // a concrete structure is encoded in place
    } else if (t.enumeration) {
      // Part 6 §5.3.4 enumerations: "<symbol>_<value>", e.g. Mandatory_1; a bare number is accepted.
      int32_t value = 0;
      if (n) {
        const std::string_view text = xml_trim(text_of(n));
        const auto under = text.rfind('_');
        const std::string_view digits = under == std::string_view::npos ? text : text.substr(under + 1);
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
          return fail(n, "not an enumeration value (Name_Number): \"" + std::string(text) + "\"");
      }
      e_.write_i32(value);
      return true;
    }
    // BaseDataType, Number, Integer, UInteger: any value, a Variant (Part 6 §5.2.7); the element holds
    // the Variant's content (<Value>).
    if (builtin == 0 || builtin == static_cast<uint8_t>(B::Variant)) {
      ua::Variant any;
      if (!r_.parse(n, any)) return false;
      ua::encode(e_, any);
      return true;
    }
    ua::Variant v;
    if (!kScalars[builtin - 1](r_, n, v)) return false;
    std::visit(
        [&](const auto& x) {
          using T = std::remove_cvref_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate> || std::is_same_v<T, ua::NotAllowed>) {
          } else if constexpr (std::is_same_v<T, ua::Box<ua::DataValue>> ||
                               std::is_same_v<T, ua::Box<ua::DiagnosticInfo>>) {
            ua::encode(e_, *x);
          } else {
            ua::encode(e_, x);
          }
        },
        v.storage());
    return true;
  }

  XmlValueReader& r_;
  ua::Encoder& e_;
  const XmlDataTypes& types_;
};

}  // namespace

const XmlDataTypes& ns0_data_types() {
  static const Ns0DataTypes types;
  return types;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::ExtensionObject& v) {
  v = ua::ExtensionObject();
  if (!n) return true;
  ua::NodeId type_id;
  if (!parse(xml_child(n, "TypeId"), type_id)) return false;
  const pugi::xml_node body = xml_first_element(xml_child(n, "Body"));
  if (!body) {
    if (!type_id.is_null())
      return fail(n, "an ExtensionObject of " + type_id.to_string() + " without a Body");
    return true;  // no body: the null ExtensionObject
  }
  if (++depth_ > kMaxDepth) {
    --depth_;
    return fail(n, "values nest deeper than " + std::to_string(kMaxDepth));
  }
  struct Leave {
    int& d;
    ~Leave() { --d; }
  } leave{depth_};
  if (type_id.namespace_index() == 0 && type_id.type() == ua::IdType::Numeric) {
    const auto& encodings = ns0_encodings();
    const auto it = encodings.find(type_id.numeric());
    const ua::StructureType* st =
        it == encodings.end() ? nullptr
                              : ua::find_structure_by_data_type_id(ns0_store().node_id(it->second).numeric());
    if (!st)
      return fail(n, "ExtensionObject: " + type_id.to_string() + " is no structure encoding of namespace 0");
    if (local_name(body.name()) != st->name) {
      return fail(body, "the body of a " + std::string(st->name) + " is a <" +
                            std::string(local_name(body.name())) + ">");
    }
    ua::ByteBuffer bytes;
    ua::Encoder e(bytes);
    StructureEncoder enc(*this, e, types_ ? *types_ : ns0_data_types());
    if (!enc.structure(body, ns0_store().node_id(it->second), depth_)) {
      return why_.empty() ? fail(enc.where_ ? enc.where_ : body, enc.reason_) : false;
    }
    void* data = st->create();
    ua::Decoder d(bytes.span());
    st->decode(d, data);
    if (!e.status().is_good() || !d.status().is_good() || d.remaining() != 0) {
      st->destroy(data);
      return fail(body, "the " + std::string(st->name) + " does not decode");
    }
    v.adopt_decoded(ua::NodeId(0, st->binary_encoding_id), st, data);
    return true;
  }
  if (types_) {
    // A structure of a loaded model: its Default Binary body, built by its resolved StructureDefinition.
    const ua::NodeId data_type = types_->data_type_of(type_id);
    const XmlDataType t = data_type.is_null() ? XmlDataType() : types_->type(data_type);
    if (t.structure) {
      if (t.structure->default_encoding_id.is_null())
        return fail(
            n, "ExtensionObject: " + data_type.to_string() + " is abstract (no Default Binary encoding)");
      ua::ByteBuffer bytes;
      ua::Encoder e(bytes);
      StructureEncoder enc(*this, e, *types_);
      if (!enc.structure(body, data_type, depth_)) {
        return why_.empty() ? fail(enc.where_ ? enc.where_ : body, enc.reason_) : false;
      }
      if (!e.status().is_good()) return fail(body, "the " + data_type.to_string() + " does not encode");
      v = ua::ExtensionObject::undecoded(t.structure->default_encoding_id,
                                         ua::ExtensionObject::Encoding::ByteString,
                                         ua::ByteString::from_bytes(bytes.span()));
      return true;
    }
  }
  // A structure of a loaded model: kept as written (see xml_value.hpp), its namespace indexes the server's.
  std::string xml;
  if (!serialize(body, true, xml)) return false;
  v = ua::ExtensionObject::undecoded(std::move(type_id), ua::ExtensionObject::Encoding::Xml,
                                     ua::ByteString(std::move(xml)));
  ++undecoded_;
  return true;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::DataValue& v) {
  v = ua::DataValue();
  if (!n) return true;
  if (!parse(xml_child(n, "Value"), v.value)) return false;
  if (!parse(xml_child(n, "StatusCode"), v.status)) return false;
  if (!parse(xml_child(n, "SourceTimestamp"), v.source_timestamp)) return false;
  if (!parse(xml_child(n, "ServerTimestamp"), v.server_timestamp)) return false;
  return parse(xml_child(n, "SourcePicoseconds"), v.source_picoseconds) &&
         parse(xml_child(n, "ServerPicoseconds"), v.server_picoseconds);
}

bool XmlValueReader::parse(pugi::xml_node n, ua::Variant& v) {
  // <Variant><Value><Int32>5</Int32></Value></Variant> (Part 6 §5.3.1.17).
  v = ua::Variant();
  const pugi::xml_node inner = xml_first_element(xml_child(n, "Value"));
  if (!inner) return true;
  if (++depth_ > kMaxDepth) {
    --depth_;
    return fail(n, "values nest deeper than " + std::to_string(kMaxDepth));
  }
  const std::string_view name = local_name(inner.name());
  bool ok;
  if (name == "Matrix") {
    ok = matrix(inner, v);
  } else if (name.starts_with("ListOf")) {
    const auto t = builtin_by_name(name.substr(6));
    ok = t ? array(inner, *t, v) : fail(inner, "unknown value element <" + std::string(name) + ">");
  } else {
    const auto t = builtin_by_name(name);
    ok = t ? scalar(inner, *t, v) : fail(inner, "unknown value element <" + std::string(name) + ">");
  }
  --depth_;
  return ok;
}

bool XmlValueReader::parse(pugi::xml_node n, ua::DiagnosticInfo& v) {
  v = ua::DiagnosticInfo();
  if (!n) return true;
  auto opt = [&](const char* name, std::optional<int32_t>& out) {
    const pugi::xml_node c = xml_child(n, name);
    if (!c) return true;
    int32_t x = 0;
    if (!parse(c, x)) return false;
    out = x;
    return true;
  };
  if (!opt("SymbolicId", v.symbolic_id) || !opt("NamespaceUri", v.namespace_uri) ||
      !opt("Locale", v.locale) || !opt("LocalizedText", v.localized_text))
    return false;
  if (const pugi::xml_node c = xml_child(n, "AdditionalInfo")) parse(c, v.additional_info);
  if (const pugi::xml_node c = xml_child(n, "InnerStatusCode")) {
    ua::StatusCode s;
    if (!parse(c, s)) return false;
    v.inner_status_code = s;
  }
  return true;
}

}  // namespace opcuad::config
