#include "addressspace/type_check.hpp"

#include <algorithm>

#include "addressspace/structure_codec.hpp"
#include "ua/encoder.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::addressspace {

namespace {

ua::StatusCode check_body(const NodeStore& store, const StructureCodecs& codecs, NodeIndex data_type,
                          bool any_structure, const ua::ExtensionObject& eo, const ua::DecodeLimits& limits,
                          ua::ByteBuffer& scratch) {
  if (eo.is_empty() || eo.is_decoded()) return ua::status::Good;
  const NodeIndex encoding =
      eo.encoding() == ua::ExtensionObject::Encoding::ByteString ? store.find(eo.type_id()) : kNoNode;
  const int codec = encoding == kNoNode ? -1 : codecs.find_encoding(encoding);
  if (codec < 0) return any_structure ? ua::status::Good : ua::status::BadTypeMismatch;
  if (!store.is_data_type_subtype(codecs.data_type(codec), data_type)) return ua::status::BadTypeMismatch;
  scratch.clear();
  const std::span<const uint8_t> body = eo.body().bytes();
  ua::Decoder in(body, limits);
  ua::Encoder out(scratch);
  (void)codecs.transcode(codec, in, out);
  if (in.ok() && in.remaining() != 0) in.fail(ua::status::BadDecodingError);
  if (!in.ok()) return in.status();
  if (!std::equal(body.begin(), body.end(), scratch.span().begin(), scratch.span().end()))
    return ua::status::BadDecodingError;
  return ua::status::Good;
}

}  // namespace

ua::StatusCode check_structures(const NodeStore& store, const VariableAttributes& var,
                                const ua::Variant& value, const ua::DecodeLimits& limits,
                                ua::ByteBuffer& scratch) {
  const StructureCodecs* codecs = store.structure_codecs();
  if (!codecs || value.type() != ua::BuiltinType::ExtensionObject || var.data_type == kNoNode)
    return ua::status::Good;
  const ua::NodeId& type = store.node_id(var.data_type);
  const bool any_structure = type.is_ns0(ua::id::BaseDataType) || type.is_ns0(ua::id::Structure);
  if (const auto* eo = value.get_if<ua::ExtensionObject>())
    return check_body(store, *codecs, var.data_type, any_structure, *eo, limits, scratch);
  if (const auto* items = value.get_if<std::vector<ua::ExtensionObject>>()) {
    for (const ua::ExtensionObject& eo : *items) {
      const ua::StatusCode st = check_body(store, *codecs, var.data_type, any_structure, eo, limits, scratch);
      if (!st.is_good()) return st;
    }
  }
  return ua::status::Good;
}

bool data_type_accepts(const NodeStore& store, NodeIndex data_type, const ua::Variant& value) noexcept {
  if (value.is_empty()) return true;
  // The common write: a value of exactly the variable's built-in DataType (a Double to a Double), which the
  // subtype walk below would accept too, decided without a lookup.
  if (value.type() != ua::BuiltinType::ExtensionObject &&
      store.node_id(data_type).is_ns0(static_cast<uint32_t>(value.type())) && store.data_type(data_type)) {
    return true;
  }
  const DataTypeAttributes* d = store.data_type(data_type);
  if (!d) return false;
  const auto t = static_cast<uint32_t>(value.type());
  NodeIndex value_type = kNoNode;
  if (value.type() == ua::BuiltinType::ExtensionObject && value.is_scalar()) {
    const auto* eo = value.get_if<ua::ExtensionObject>();
    if (eo && eo->is_decoded()) value_type = store.find(ua::NodeId(0, eo->structure_type()->data_type_id));
  }
  if (value_type == kNoNode) value_type = store.find(ua::NodeId(0, t));
  if (value_type != kNoNode && store.is_data_type_subtype(value_type, data_type)) return true;
  if (value_type != kNoNode && value.type() == ua::BuiltinType::ExtensionObject && value.is_scalar() &&
      value_type != store.find(ua::NodeId(0, t))) {
    return false;  // a decoded structure of another type
  }
  if (value.type() == ua::BuiltinType::ExtensionObject && value.is_array()) {
    // Each element must be of a structure the DataType accepts.
    const auto* items = value.get_if<std::vector<ua::ExtensionObject>>();
    if (!items) return false;
    for (const auto& eo : *items) {
      NodeIndex et = eo.is_decoded() ? store.find(ua::NodeId(0, eo.structure_type()->data_type_id)) : kNoNode;
      if (et == kNoNode || !store.is_data_type_subtype(et, data_type)) return d->builtin == t;
    }
    return true;
  }
  return d->builtin != 0 && d->builtin == t;
}

bool value_rank_accepts(int32_t value_rank, std::span<const uint32_t> array_dimensions,
                        const ua::Variant& value) noexcept {
  if (value.is_empty()) return true;
  if (value.is_scalar()) return value_rank == -1 || value_rank == -2 || value_rank == -3;
  const size_t n = value.dimensions().empty() ? 1 : value.dimensions().size();
  bool ok = value_rank == -2 || (value_rank == -3 && n == 1) || (value_rank == 0 && n >= 1) ||
            (value_rank > 0 && n == static_cast<size_t>(value_rank));
  if (!ok) return false;
  // A non-zero ArrayDimensions entry is the maximum length of that dimension (Part 3 §5.6.2).
  if (!array_dimensions.empty() && array_dimensions.size() == n) {
    for (size_t i = 0; i < n; ++i) {
      const size_t len =
          value.dimensions().empty() ? value.array_length() : static_cast<size_t>(value.dimensions()[i]);
      if (array_dimensions[i] != 0 && len > array_dimensions[i]) return false;
    }
  }
  return true;
}

ua::StatusCode check_value_general(const NodeStore& store, const VariableAttributes& var,
                                   const ua::Variant& value) noexcept {
  if (!data_type_accepts(store, var.data_type, value)) return ua::status::BadTypeMismatch;
  if (!value_rank_accepts(var.value_rank, store.array_dimensions(var), value))
    return ua::status::BadTypeMismatch;
  return ua::status::Good;
}

}  // namespace opcuad::addressspace
