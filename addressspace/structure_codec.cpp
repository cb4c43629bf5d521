// Structures transcoded by their StructureDefinition (structure_codec.hpp; Part 6 §5.2.7).
#include "addressspace/structure_codec.hpp"

#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::addressspace {

namespace {

// Decodes one value of built-in type T and writes it again.
template <class T>
void transcode_value(ua::Decoder& in, ua::Encoder& out) {
  T v{};
  ua::decode(in, v);
  if (in.ok()) ua::encode(out, v);
}

// A String, ByteString or XmlElement (Part 6 §5.2.2.4): its length and bytes copied, nothing decoded, so a
// structure of strings costs no allocation whatever their lengths.
void transcode_bytes(uint32_t max_length, ua::Decoder& in, ua::Encoder& out) {
  const int32_t n = in.read_bytes_length(max_length);
  if (!in.ok()) return;
  if (n < 0) return out.write_i32(-1);
  const auto bytes = in.take(static_cast<size_t>(n));
  if (!in.ok()) return;
  out.write_i32(n);
  out.write_raw(bytes.data(), bytes.size());
}

void transcode_builtin(ua::BuiltinType t, ua::Decoder& in, ua::Encoder& out) {
  using B = ua::BuiltinType;
  switch (t) {
    case B::Boolean:
      return transcode_value<bool>(in, out);
    case B::SByte:
      return transcode_value<int8_t>(in, out);
    case B::Byte:
      return transcode_value<uint8_t>(in, out);
    case B::Int16:
      return transcode_value<int16_t>(in, out);
    case B::UInt16:
      return transcode_value<uint16_t>(in, out);
    case B::Int32:
      return transcode_value<int32_t>(in, out);
    case B::UInt32:
      return transcode_value<uint32_t>(in, out);
    case B::Int64:
      return transcode_value<int64_t>(in, out);
    case B::UInt64:
      return transcode_value<uint64_t>(in, out);
    case B::Float:
      return transcode_value<float>(in, out);
    case B::Double:
      return transcode_value<double>(in, out);
    case B::String:
    case B::XmlElement:
      return transcode_bytes(in.limits().max_string_length, in, out);
    case B::DateTime:
      return transcode_value<ua::DateTime>(in, out);
    case B::Guid:
      return transcode_value<ua::Guid>(in, out);
    case B::ByteString:
      return transcode_bytes(in.limits().max_byte_string_length, in, out);
    case B::NodeId:
      return transcode_value<ua::NodeId>(in, out);
    case B::ExpandedNodeId:
      return transcode_value<ua::ExpandedNodeId>(in, out);
    case B::StatusCode:
      return transcode_value<ua::StatusCode>(in, out);
    case B::QualifiedName:
      return transcode_value<ua::QualifiedName>(in, out);
    case B::LocalizedText:
      return transcode_value<ua::LocalizedText>(in, out);
    case B::ExtensionObject:
      return transcode_value<ua::ExtensionObject>(in, out);
    case B::DataValue:
      return transcode_value<ua::DataValue>(in, out);
    case B::Variant:
      return transcode_value<ua::Variant>(in, out);
    case B::DiagnosticInfo:
      return transcode_value<ua::DiagnosticInfo>(in, out);
    case B::Null:
      break;
  }
  in.fail(ua::status::BadDecodingError);
}

}  // namespace

StructureCodecs::StructureCodecs(const NodeStore& s) {
  const NodeIndex enumeration = s.find(ua::NodeId(0, ua::id::Enumeration));
  std::vector<const ua::StructureDefinition*> defs;
  for (NodeIndex n = 0; n < s.size(); ++n) {
    if (s.node_class(n) != NodeClass::DataType) continue;
    const ua::ExtensionObject* d = s.data_type_definition(n);
    const auto* sd = d ? d->get<ua::StructureDefinition>() : nullptr;
    if (!sd) continue;
    by_type_.emplace(n, static_cast<int32_t>(defs.size()));
    const NodeIndex encoding = sd->default_encoding_id.is_null() ? kNoNode : s.find(sd->default_encoding_id);
    if (encoding != kNoNode) by_encoding_.emplace(encoding, static_cast<int32_t>(defs.size()));
    defs.push_back(sd);
    types_.push_back(n);
  }
  codecs_.resize(defs.size());
  // Second pass: a field may name a structure whose codec comes later.
  for (size_t i = 0; i < defs.size(); ++i) {
    const ua::StructureDefinition& sd = *defs[i];
    Codec& c = codecs_[i];
    c.structure_type = sd.structure_type;
    const bool subtyped = sd.structure_type == ua::StructureTypeEnum::StructureWithSubtypedValues ||
                          sd.structure_type == ua::StructureTypeEnum::UnionWithSubtypedValues;
    for (const ua::StructureField& sf : sd.fields) {
      Field f;
      f.value_rank = sf.value_rank;
      f.optional = sd.structure_type == ua::StructureTypeEnum::StructureWithOptionalFields && sf.is_optional;
      c.optional_count += f.optional;
      const NodeIndex t = s.find(sf.data_type);
      const DataTypeAttributes* a = t == kNoNode ? nullptr : s.data_type(t);
      const auto nested = t == kNoNode ? by_type_.end() : by_type_.find(t);
      // Part 3 §8.51: in the subtyped kinds IsOptional means the field allows subtypes.
      const bool allows_subtypes = subtyped && sf.is_optional;
      if (!a || a->builtin == 0) {
        f.kind = Kind::Variant;  // BaseDataType, Number, Integer, UInteger: any value
      } else if (enumeration != kNoNode && s.is_data_type_subtype(t, enumeration)) {
        f.kind = Kind::Enumeration;
      } else if (a->builtin == static_cast<uint8_t>(ua::BuiltinType::ExtensionObject)) {
        const bool concrete =
            nested != by_type_.end() && !defs[nested->second]->default_encoding_id.is_null();
        if (allows_subtypes || !concrete) {
          f.kind = Kind::ExtensionObject;
        } else {
          f.kind = Kind::Nested;
          f.nested = nested->second;
        }
      } else if (allows_subtypes) {
        f.kind = Kind::Variant;
      } else {
        f.builtin = a->builtin;
      }
      c.fields.push_back(f);
    }
  }
}

int StructureCodecs::find(NodeIndex type) const noexcept {
  const auto it = by_type_.find(type);
  return it == by_type_.end() ? -1 : it->second;
}

int StructureCodecs::find_encoding(NodeIndex encoding) const noexcept {
  const auto it = by_encoding_.find(encoding);
  return it == by_encoding_.end() ? -1 : it->second;
}

void StructureCodecs::one(const Field& f, ua::Decoder& in, ua::Encoder& out) const {
  switch (f.kind) {
    case Kind::Builtin:
      return transcode_builtin(static_cast<ua::BuiltinType>(f.builtin), in, out);
    case Kind::Enumeration:
      return transcode_value<int32_t>(in, out);  // Part 6 §5.2.4
    case Kind::ExtensionObject:
      return transcode_value<ua::ExtensionObject>(in, out);
    case Kind::Variant:
      return transcode_value<ua::Variant>(in, out);
    case Kind::Nested:
      (void)transcode(f.nested, in, out);
      return;
  }
}

void StructureCodecs::field(const Field& f, ua::Decoder& in, ua::Encoder& out) const {
  if (f.value_rank < 1) return one(f, in, out);
  uint32_t count = 1;
  if (f.value_rank > 1) {
    // Part 6 §5.2.5 (Table 22, the inline matrix): the dimensions, an Int32 array, then as many values
    // as their product, none when a dimension is <= 0. A null Dimensions array (-1) is a null matrix.
    const int32_t dims = in.read_i32();
    if (!in.ok()) return;
    if (dims == -1) return out.write_i32(-1);
    if (dims != f.value_rank) return in.fail(ua::status::BadDecodingError);
    if (static_cast<size_t>(dims) * 4 > in.remaining()) return in.fail(ua::status::BadDecodingError);
    out.write_i32(dims);
    uint64_t product = 1;
    for (int32_t i = 0; i < dims && in.ok(); ++i) {
      const int32_t d = in.read_i32();
      out.write_i32(d);
      if (d <= 0 || product == 0) {
        product = 0;
        continue;
      }
      product *= static_cast<uint64_t>(d);
      if (product > in.limits().max_array_length) return in.fail(ua::status::BadEncodingLimitsExceeded);
    }
    if (!in.ok()) return;
    count = static_cast<uint32_t>(product);
    if (f.kind != Kind::Nested && count > in.remaining()) return in.fail(ua::status::BadDecodingError);
  } else {
    const int32_t n = in.read_i32();
    if (!in.ok()) return;
    if (n < -1) return in.fail(ua::status::BadDecodingError);
    if (n > 0 && static_cast<uint32_t>(n) > in.limits().max_array_length)
      return in.fail(ua::status::BadEncodingLimitsExceeded);
    // Every element but a structure without fields takes at least a byte: a count beyond the input
    // is refused before any element is read.
    if (n > 0 && f.kind != Kind::Nested && static_cast<size_t>(n) > in.remaining())
      return in.fail(ua::status::BadDecodingError);
    out.write_i32(n);  // -1, a null array, stays one
    count = n > 0 ? static_cast<uint32_t>(n) : 0;
  }
  for (uint32_t i = 0; i < count && in.ok(); ++i) one(f, in, out);
}

ua::StatusCode StructureCodecs::transcode(int codec, ua::Decoder& in, ua::Encoder& out) const {
  if (codec < 0 || static_cast<size_t>(codec) >= codecs_.size()) {
    in.fail(ua::status::BadDecodingError);
    return in.status();
  }
  if (!in.enter()) return in.status();  // nesting is bounded as for the built-in types
  const Codec& c = codecs_[codec];
  switch (c.structure_type) {
    case ua::StructureTypeEnum::Structure:
    case ua::StructureTypeEnum::StructureWithSubtypedValues:
      for (const Field& f : c.fields) {
        if (!in.ok()) break;
        field(f, in, out);
      }
      break;
    case ua::StructureTypeEnum::StructureWithOptionalFields: {
      const uint32_t mask = in.read_u32();
      // Bits beyond the optional fields are malformed (Part 6 §5.2.7 sets only the fields' bits).
      if (c.optional_count < 32 && (mask >> c.optional_count) != 0) in.fail(ua::status::BadDecodingError);
      if (!in.ok()) break;
      out.write_u32(mask);
      uint32_t bit = 0;
      for (const Field& f : c.fields) {
        if (!in.ok()) break;
        if (f.optional && !(mask & (1u << bit++))) continue;
        field(f, in, out);
      }
      break;
    }
    case ua::StructureTypeEnum::Union:
    case ua::StructureTypeEnum::UnionWithSubtypedValues: {
      const uint32_t which = in.read_u32();
      if (!in.ok()) break;
      if (which > c.fields.size()) {
        in.fail(ua::status::BadDecodingError);
        break;
      }
      out.write_u32(which);
      if (which != 0) field(c.fields[which - 1], in, out);
      break;
    }
    default:
      in.fail(ua::status::BadDecodingError);
  }
  in.leave();
  return in.status();
}

ua::StatusCode StructureCodecs::transcode_body(int codec, std::span<const uint8_t> body,
                                               ua::ByteBuffer& out) const {
  ua::Decoder in(body);
  ua::Encoder e(out);
  (void)transcode(codec, in, e);
  if (in.ok() && in.remaining() != 0) in.fail(ua::status::BadDecodingError);
  return in.status();
}

}  // namespace opcuad::addressspace
