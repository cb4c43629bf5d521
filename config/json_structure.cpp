// Structured and enumerated initial values in JSON, written by the DataTypeDefinition of their DataType
// (config/json_structure.hpp).
#include "config/json_structure.hpp"

#include "config/json_reader.hpp"
#include "config/json_value.hpp"
#include "ua/codec.hpp"
#include "ua/decoder.hpp"
#include "ua/encoder.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

using addressspace::kNoNode;
using addressspace::NodeIndex;
using addressspace::NodeStore;
using Json = nlohmann::json;

// Nested structures deeper than this are refused (a structure containing itself through an array).
constexpr int kMaxStructureDepth = 32;

class StructureWriter {
 public:
  StructureWriter(const NodeStore& s, const ua::NodeId::NamespaceResolver& resolver)
      : s_(s), resolver_(resolver) {
    structure_ = s.find(ua::NodeId(0, ua::id::Structure));
    enumeration_ = s.find(ua::NodeId(0, ua::id::Enumeration));
  }

  bool is_structure(NodeIndex dt) const {
    return structure_ != kNoNode && s_.is_data_type_subtype(dt, structure_);
  }
  bool is_enumeration(NodeIndex dt) const {
    return enumeration_ != kNoNode && s_.is_data_type_subtype(dt, enumeration_);
  }
  std::string name(NodeIndex dt) const { return std::string(s_.string(s_.record(dt).browse_name)); }

  // An enumeration value: a name of its EnumDefinition or an integer it defines.
  bool enumeration(const Json& j, NodeIndex dt, const std::string& at, int32_t& out) {
    const ua::ExtensionObject* def = s_.data_type_definition(dt);
    const auto* e = def ? def->get<ua::EnumDefinition>() : nullptr;
    if (j.is_number_integer()) {
      const int64_t v = j.get<int64_t>();
      if (e) {
        for (const ua::EnumField& f : e->fields) {
          if (f.value == v) {
            out = static_cast<int32_t>(v);
            return true;
          }
        }
        return fail(at, "enumeration " + name(dt) + " has no value " + std::to_string(v) + choices(*e));
      }
      if (v < INT32_MIN || v > INT32_MAX) return fail(at, "out of range of Int32");
      out = static_cast<int32_t>(v);
      return true;
    }
    if (!j.is_string())
      return fail(at, "expected a name or a value of enumeration " + name(dt) + ", got " + json_type_name(j));
    if (e) {
      for (const ua::EnumField& f : e->fields) {
        if (f.name.view() == j.get<std::string>()) {
          out = static_cast<int32_t>(f.value);
          return true;
        }
      }
    }
    return fail(at, "enumeration " + name(dt) + " has no field \"" + j.get<std::string>() + "\"" +
                        (e ? choices(*e) : std::string(" (it has no EnumDefinition: give the value)")));
  }

  // The Default Binary body of structure `dt` (Part 6 §5.2.7) from a JSON object.
  bool body(const Json& j, NodeIndex dt, const std::string& at, ua::Encoder& e, int depth) {
    if (depth > kMaxStructureDepth)
      return fail(at, "structures nest deeper than " + std::to_string(kMaxStructureDepth) + " levels");
    const ua::ExtensionObject* def = s_.data_type_definition(dt);
    const auto* sd = def ? def->get<ua::StructureDefinition>() : nullptr;
    if (!sd) return fail(at, "DataType " + name(dt) + " has no StructureDefinition (an abstract structure?)");
    if (!j.is_object())
      return fail(at, "expected an object with the fields of " + name(dt) + ", got " + json_type_name(j));
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (const ua::StructureField& f : sd->fields) known = known || f.name.view() == it.key();
      if (!known) return fail(pointer(at, it.key()), "unknown field of " + name(dt) + field_list(*sd));
    }
    using T = ua::StructureTypeEnum;
    const bool is_union = sd->structure_type == T::Union || sd->structure_type == T::UnionWithSubtypedValues;
    // Part 3 §8.48: in a structure "with subtyped values" IsOptional means that the field allows subtypes
    // of its DataType, encoded as an ExtensionObject (Part 6 §5.2.7).
    const bool subtyped = sd->structure_type == T::StructureWithSubtypedValues ||
                          sd->structure_type == T::UnionWithSubtypedValues;
    if (is_union) {
      if (j.size() > 1)
        return fail(at, "a union (" + name(dt) + ") takes one field, got " + std::to_string(j.size()));
      for (size_t i = 0; i < sd->fields.size(); ++i) {
        const ua::StructureField& f = sd->fields[i];
        if (!j.contains(std::string(f.name.view()))) continue;
        e.write_u32(static_cast<uint32_t>(i + 1));  // SwitchField: 1-based field index
        return field(j[std::string(f.name.view())], f, pointer(at, std::string(f.name.view())), e, depth,
                     subtyped && f.is_optional);
      }
      e.write_u32(0);  // {}: no field
      return true;
    }
    const bool optional_fields = sd->structure_type == T::StructureWithOptionalFields;
    if (optional_fields) {
      uint32_t mask = 0, bit = 0;
      for (const ua::StructureField& f : sd->fields) {
        if (!f.is_optional) continue;
        if (bit >= 32) return fail(at, name(dt) + " has more than 32 optional fields");
        if (j.contains(std::string(f.name.view()))) mask |= 1u << bit;
        ++bit;
      }
      e.write_u32(mask);  // EncodingMask: bit i for the i-th optional field
    }
    for (const ua::StructureField& f : sd->fields) {
      const std::string key(f.name.view());
      if (!j.contains(key)) {
        if (optional_fields && f.is_optional) continue;  // its mask bit is 0
        return fail(at, "missing field \"" + key + "\" of " + name(dt));
      }
      if (!field(j[key], f, pointer(at, key), e, depth, subtyped && f.is_optional)) return false;
    }
    return true;
  }

  // A whole value of structure `dt`: its body in an ExtensionObject with the Default Binary encoding's
  // NodeId; namespace 0's generated structures come back decoded.
  bool extension_object(const Json& j, NodeIndex dt, const std::string& at, ua::ExtensionObject& out,
                        int depth) {
    const ua::NodeId encoding = default_binary(dt);
    if (encoding.is_null()) return fail(at, "DataType " + name(dt) + " has no Default Binary encoding");
    ua::ByteBuffer bytes;
    ua::Encoder e(bytes);
    if (!body(j, dt, at, e, depth)) return false;
    if (!e.status().is_good()) return fail(at, "the value is too large to encode");
    ua::ByteString b(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    out = ua::ExtensionObject::undecoded(encoding, ua::ExtensionObject::Encoding::ByteString, std::move(b));
    if (encoding.namespace_index() == 0) {
      // Through the decoder, which knows namespace 0's structures: Read then serves the same value a
      // built-in node of that DataType has.
      ua::ByteBuffer whole;
      ua::Encoder w(whole);
      ua::encode(w, out);
      ua::Decoder d(std::span<const uint8_t>(whole.data(), whole.size()));
      ua::ExtensionObject decoded;
      ua::decode(d, decoded);
      if (d.status().is_good() && d.remaining() == 0) out = std::move(decoded);
    }
    return true;
  }

  const std::string& why() const noexcept { return why_; }

 private:
  bool fail(const std::string& at, std::string reason) {
    why_ = at.empty() ? std::move(reason) : at + ": " + reason;
    return false;
  }
  static std::string field_list(const ua::StructureDefinition& sd) {
    std::string out = " (fields:";
    for (const ua::StructureField& f : sd.fields) out += " " + std::string(f.name.view());
    return out + ")";
  }
  static std::string choices(const ua::EnumDefinition& e) {
    std::string out = " (";
    for (size_t i = 0; i < e.fields.size(); ++i)
      out +=
          (i ? ", " : "") + std::string(e.fields[i].name.view()) + " = " + std::to_string(e.fields[i].value);
    return out + ")";
  }

  ua::NodeId default_binary(NodeIndex dt) const {
    const ua::ExtensionObject* def = s_.data_type_definition(dt);
    if (const auto* sd = def ? def->get<ua::StructureDefinition>() : nullptr;
        sd && !sd->default_encoding_id.is_null())
      return sd->default_encoding_id;
    const NodeIndex has_encoding = s_.find(ua::NodeId(0, ua::id::HasEncoding));
    if (has_encoding == kNoNode) return {};
    const int type = s_.reference_type_index(has_encoding);
    for (const addressspace::Reference& r : s_.references(dt)) {
      if (r.is_inverse || r.type != type) continue;
      if (s_.string(s_.record(r.target).browse_name) == "Default Binary") return s_.node_id(r.target);
    }
    return {};
  }

  // One field: ValueRank -1 a single element, >= 1 an Int32 length and the elements (Part 6 §5.2.5; the
  // dimensions of a matrix are not written in JSON: refused).
  bool field(const Json& j, const ua::StructureField& f, const std::string& at, ua::Encoder& e, int depth,
             bool as_extension_object) {
    const NodeIndex dt = s_.find(f.data_type);
    if (dt == kNoNode) return fail(at, "the field's DataType " + f.data_type.to_string() + " is unknown");
    if (f.value_rank == -1) return element(j, dt, f, at, e, depth, as_extension_object);
    if (f.value_rank != 1)
      return fail(at, "fields with ValueRank " + std::to_string(f.value_rank) + " cannot be given in JSON");
    if (!j.is_array()) return fail(at, "expected an array, got " + json_type_name(j));
    e.write_length(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      if (!element(j[i], dt, f, at + "/" + std::to_string(i), e, depth, as_extension_object)) return false;
    }
    return true;
  }

  bool element(const Json& j, NodeIndex dt, const ua::StructureField& f, const std::string& at,
               ua::Encoder& e, int depth, bool as_extension_object) {
    if (is_enumeration(dt)) {
      int32_t v = 0;
      if (!enumeration(j, dt, at, v)) return false;
      e.write_i32(v);
      return true;
    }
    if (is_structure(dt)) {
      if (s_.node_id(dt) == ua::NodeId(0, ua::id::Structure))
        return fail(at,
                    "field \"" + std::string(f.name.view()) + "\" takes any structure: not writable in JSON");
      // A structure in place, or an ExtensionObject where subtypes are allowed (Part 6 §5.2.7).
      const ua::ExtensionObject* def = s_.data_type_definition(dt);
      const auto* sd = def ? def->get<ua::StructureDefinition>() : nullptr;
      if (!sd)
        return fail(at, "DataType " + name(dt) + " has no StructureDefinition (an abstract structure?)");
      if (!as_extension_object) return body(j, dt, at, e, depth + 1);
      ua::ExtensionObject x;  // JSON names no subtype: the field's own DataType
      if (!extension_object(j, dt, at, x, depth + 1)) return false;
      ua::encode(e, x);
      return true;
    }
    const addressspace::DataTypeAttributes* a = s_.data_type(dt);
    const uint8_t builtin = a ? a->builtin : 0;
    if (builtin == 0 || builtin == static_cast<uint8_t>(ua::BuiltinType::Variant) ||
        builtin == static_cast<uint8_t>(ua::BuiltinType::DataValue) ||
        builtin == static_cast<uint8_t>(ua::BuiltinType::DiagnosticInfo) ||
        builtin == static_cast<uint8_t>(ua::BuiltinType::ExtensionObject)) {
      return fail(at, "field \"" + std::string(f.name.view()) + "\" of DataType " + name(dt) +
                          " cannot be written in JSON");
    }
    ua::Variant v;
    std::string why;
    if (!json_to_variant(j, s_, dt, -1, resolver_, v, why)) return fail(at, why);
    // A scalar Variant is its EncodingMask byte and the value (Part 6 §5.2.2.16): the value alone is the
    // field's encoding.
    ua::ByteBuffer tmp;
    ua::Encoder te(tmp);
    ua::encode(te, v);
    if (!te.status().is_good() || tmp.size() < 1) return fail(at, "the value is too large to encode");
    e.write_raw(tmp.data() + 1, tmp.size() - 1);
    return true;
  }

  const NodeStore& s_;
  const ua::NodeId::NamespaceResolver& resolver_;
  NodeIndex structure_ = kNoNode, enumeration_ = kNoNode;
  std::string why_;
};

}  // namespace

bool json_to_model_value(const Json& j, const NodeStore& store, NodeIndex data_type, int32_t value_rank,
                         const ua::NodeId::NamespaceResolver& resolver, ua::Variant& out, std::string& why) {
  StructureWriter w(store, resolver);
  const bool structure = w.is_structure(data_type);
  const bool enumeration = w.is_enumeration(data_type);
  if (!structure && !enumeration) return json_to_variant(j, store, data_type, value_rank, resolver, out, why);
  const ua::NodeId& id = store.node_id(data_type);
  if (structure && (id == ua::NodeId(0, ua::id::Range) || id == ua::NodeId(0, ua::id::EUInformation))) {
    // Their snake_case form ({"low", "high"}, {"unit_id", ...}) first; its reason stands unless the object
    // uses the field names.
    if (json_to_variant(j, store, data_type, value_rank, resolver, out, why)) return true;
    const Json& first = j.is_array() && !j.empty() ? j[0] : j;
    const ua::ExtensionObject* def = store.data_type_definition(data_type);
    const auto* sd = def ? def->get<ua::StructureDefinition>() : nullptr;
    bool by_field_names = false;
    if (first.is_object() && sd) {
      for (const ua::StructureField& f : sd->fields)
        by_field_names = by_field_names || first.contains(std::string(f.name.view()));
    }
    if (!by_field_names) return false;
  }
  const bool array = j.is_array();
  if (array && value_rank == -1) {
    why = "value must be a scalar: ValueRank is -1";
    return false;
  }
  if (!array && value_rank >= 1) {
    why = "value must be an array: ValueRank is " + std::to_string(value_rank);
    return false;
  }
  if (array && value_rank >= 2) {
    why = "matrices of structures and enumerations cannot be given in JSON";
    return false;
  }
  auto one = [&](const Json& item, const std::string& at, auto& dst) {
    if constexpr (std::is_same_v<std::decay_t<decltype(dst)>, int32_t>) {
      return w.enumeration(item, data_type, at, dst);
    } else {
      return w.extension_object(item, data_type, at, dst, 0);
    }
  };
  if (enumeration) {
    if (!array) {
      int32_t v = 0;
      if (!one(j, "", v)) return why = w.why(), false;
      out = ua::Variant(v);
      return true;
    }
    std::vector<int32_t> items(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      if (!one(j[i], "/" + std::to_string(i), items[i])) return why = w.why(), false;
    }
    out = ua::Variant(std::move(items));
    return true;
  }
  if (!array) {
    ua::ExtensionObject e;
    if (!one(j, "", e)) return why = w.why(), false;
    out = ua::Variant(std::move(e));
    return true;
  }
  std::vector<ua::ExtensionObject> items(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    if (!one(j[i], "/" + std::to_string(i), items[i])) return why = w.why(), false;
  }
  out = ua::Variant(std::move(items));
  return true;
}

ValueFault value_fault(const std::string& value_path, const std::string& why) {
  const auto colon = why.starts_with("/") ? why.find(": ") : std::string::npos;
  if (colon == std::string::npos) return {value_path, why};
  return {value_path + why.substr(0, colon), why.substr(colon + 2)};
}

std::string array_dimensions_error(const std::vector<uint32_t>& array_dimensions, const ua::Variant& value) {
  if (array_dimensions.empty() || !value.is_array()) return {};
  const auto& dims = value.dimensions();
  for (size_t i = 0; i < array_dimensions.size(); ++i) {
    const size_t len =
        dims.empty() ? value.array_length() : (i < dims.size() ? static_cast<size_t>(dims[i]) : 0);
    if (array_dimensions[i] != 0 && len > array_dimensions[i])
      return "value is longer than array_dimensions allows";
  }
  return {};
}

}  // namespace opcuad::config
