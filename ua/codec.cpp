// Binary codec of the structured built-in types (Part 6 §5.2.2).
#include "ua/codec.hpp"

#include <cstdint>
#include <cstring>
#include <limits>

namespace opcuad::ua {

namespace {

// NodeId encoding byte (Part 6 §5.2.2.9, Table 9); the top two bits are ExpandedNodeId flags.
enum NodeIdEncoding : uint8_t {
  kTwoByte = 0x00,
  kFourByte = 0x01,
  kNumeric = 0x02,
  kString = 0x03,
  kGuid = 0x04,
  kByteString = 0x05,
  kServerIndexFlag = 0x40,
  kNamespaceUriFlag = 0x80,
};

void encode_node_id(Encoder& e, const NodeId& v, uint8_t flags) {
  const uint16_t ns = v.namespace_index();
  switch (v.type()) {
    case IdType::Numeric:
      if (ns == 0 && v.numeric() <= 0xFF) {
        e.write_u8(kTwoByte | flags);
        e.write_u8(static_cast<uint8_t>(v.numeric()));
      } else if (ns <= 0xFF && v.numeric() <= 0xFFFF) {
        e.write_u8(kFourByte | flags);
        e.write_u8(static_cast<uint8_t>(ns));
        e.write_u16(static_cast<uint16_t>(v.numeric()));
      } else {
        e.write_u8(kNumeric | flags);
        e.write_u16(ns);
        e.write_u32(v.numeric());
      }
      return;
    case IdType::String:
      e.write_u8(kString | flags);
      e.write_u16(ns);
      e.write_bytes(false, v.string());
      return;
    case IdType::Guid:
      e.write_u8(kGuid | flags);
      e.write_u16(ns);
      encode(e, v.guid());
      return;
    case IdType::Opaque:
      e.write_u8(kByteString | flags);
      e.write_u16(ns);
      e.write_bytes(false, v.string());
      return;
  }
}

// Decodes the NodeId part; returns the flag bits of the encoding byte for ExpandedNodeId.
uint8_t decode_node_id(Decoder& d, NodeId& v) {
  const uint8_t enc = d.read_u8();
  switch (enc & 0x3F) {
    case kTwoByte:
      v.set_numeric(0, d.read_u8());
      break;
    case kFourByte: {
      uint8_t ns = d.read_u8();
      v.set_numeric(ns, d.read_u16());
      break;
    }
    case kNumeric: {
      uint16_t ns = d.read_u16();
      v.set_numeric(ns, d.read_u32());
      break;
    }
    case kString:
    case kByteString: {
      const bool is_string = (enc & 0x3F) == kString;
      const uint32_t limit = is_string ? d.limits().max_string_length : d.limits().max_byte_string_length;
      // The namespace, the length and the identifier in place with one bounds check, when they are all
      // there and within the limit (what every request naming string ids sends); else field by field.
      if (const uint8_t* h = d.peek(6)) {
        uint16_t ns = 0;
        int32_t n = 0;
        std::memcpy(&ns, h, 2);
        std::memcpy(&n, h + 2, 4);
        if (n >= 0 && static_cast<uint32_t>(n) <= limit && d.remaining() - 6 >= static_cast<size_t>(n)) {
          d.skip(6 + static_cast<size_t>(n));
          v.set_text(ns, is_string ? IdType::String : IdType::Opaque, reinterpret_cast<const char*>(h + 6),
                     static_cast<size_t>(n));
          break;
        }
      }
      uint16_t ns = d.read_u16();
      int32_t n = d.read_bytes_length(limit);
      auto s = d.take(n < 0 ? 0 : static_cast<size_t>(n));
      // A null string identifier is treated as empty: both are the null NodeId of that kind.
      v.set_text(ns, is_string ? IdType::String : IdType::Opaque, reinterpret_cast<const char*>(s.data()),
                 s.size());
      break;
    }
    case kGuid: {
      uint16_t ns = d.read_u16();
      Guid g;
      decode(d, g);
      v.set_guid(ns, g);
      break;
    }
    default:
      d.fail(status::BadDecodingError);
      v.set_numeric(0, 0);
      return 0;
  }
  return enc & 0xC0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------- Guid
void encode(Encoder& e, const Guid& v) {
  e.write_u32(v.data1);
  e.write_u16(v.data2);
  e.write_u16(v.data3);
  e.write_raw(v.data4.data(), 8);
}
void decode(Decoder& d, Guid& v) {
  v.data1 = d.read_u32();
  v.data2 = d.read_u16();
  v.data3 = d.read_u16();
  d.read_raw(v.data4.data(), 8);
}

// ---------------------------------------------------------------------------------------------- NodeId
void encode(Encoder& e, const NodeId& v) {
  encode_node_id(e, v, 0);
}
void decode(Decoder& d, NodeId& v) {
  if (decode_node_id(d, v) != 0) d.fail(status::BadDecodingError);  // flags belong to ExpandedNodeId only
}

void encode(Encoder& e, const ExpandedNodeId& v) {
  uint8_t flags = 0;
  if (!v.namespace_uri.is_null()) flags |= kNamespaceUriFlag;
  if (v.server_index != 0) flags |= kServerIndexFlag;
  encode_node_id(e, v.node_id, flags);
  if (flags & kNamespaceUriFlag) encode(e, v.namespace_uri);
  if (flags & kServerIndexFlag) e.write_u32(v.server_index);
}
void decode(Decoder& d, ExpandedNodeId& v) {
  uint8_t flags = decode_node_id(d, v.node_id);
  if (flags & kNamespaceUriFlag) {
    decode(d, v.namespace_uri);
  } else {
    v.namespace_uri.set_null();
  }
  v.server_index = (flags & kServerIndexFlag) ? d.read_u32() : 0;
}

// ---------------------------------------------------------------------------------------------- names and
// text
void encode(Encoder& e, const QualifiedName& v) {
  e.write_u16(v.namespace_index);
  encode(e, v.name);
}
void decode(Decoder& d, QualifiedName& v) {
  v.namespace_index = d.read_u16();
  decode(d, v.name);
}

void encode(Encoder& e, const LocalizedText& v) {
  const uint8_t mask = (v.locale.is_null() ? 0 : 0x01) | (v.text.is_null() ? 0 : 0x02);
  e.write_u8(mask);
  if (mask & 0x01) encode(e, v.locale);
  if (mask & 0x02) encode(e, v.text);
}
void decode(Decoder& d, LocalizedText& v) {
  const uint8_t mask = d.read_u8();
  if (mask & ~0x03) d.fail(status::BadDecodingError);
  if (mask & 0x01) {
    decode(d, v.locale);
  } else {
    v.locale.set_null();
  }
  if (mask & 0x02) {
    decode(d, v.text);
  } else {
    v.text.set_null();
  }
}

// ----------------------------------------------------------------------------------------------
// ExtensionObject
void encode(Encoder& e, const ExtensionObject& v) {
  if (const StructureType* type = v.structure_type()) {
    encode(e, NodeId(0, type->binary_encoding_id));
    e.write_u8(static_cast<uint8_t>(ExtensionObject::Encoding::ByteString));
    const size_t length_at = e.position();
    e.write_u32(0);  // patched below, once the body's length is known
    type->encode(e, v.decoded_data());
    const size_t length = e.position() - length_at - 4;
    if (length > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      e.fail(status::BadEncodingLimitsExceeded);
      return;
    }
    e.patch_u32(length_at, static_cast<uint32_t>(length));
    return;
  }
  encode(e, v.type_id());
  e.write_u8(static_cast<uint8_t>(v.encoding()));
  if (v.encoding() != ExtensionObject::Encoding::None) encode(e, v.body());
}

void decode(Decoder& d, ExtensionObject& v) {
  if (!d.enter()) return;
  NodeId type_id;
  decode(d, type_id);
  const uint8_t encoding = d.read_u8();
  if (encoding > 2) {
    d.fail(status::BadDecodingError);
  } else if (encoding == 0) {
    // The common case (every RequestHeader's AdditionalHeader): no body. Reset in place, no temporary.
    v.reset();
    if (!type_id.is_null())
      v = ExtensionObject::undecoded(std::move(type_id), ExtensionObject::Encoding::None, ByteString());
  } else {
    int32_t n = d.read_bytes_length(d.limits().max_byte_string_length);
    auto body = d.take(n < 0 ? 0 : static_cast<size_t>(n));
    const StructureType* type = nullptr;
    if (encoding == 1 && type_id.namespace_index() == 0 && type_id.type() == IdType::Numeric) {
      type = find_structure_by_encoding_id(type_id.numeric());
    }
    if (type && d.ok() && d.charge(type->size)) {
      // A known structure: decode it from its body alone. Trailing bytes are tolerated (a newer peer may
      // append fields); a body too short for the structure is an error.
      Decoder sub = d.sub(body);
      void* data = type->create();
      type->decode(sub, data);
      d.absorb(sub);
      if (sub.ok()) {
        v.adopt_decoded(std::move(type_id), type, data);
      } else {
        type->destroy(data);
        d.fail(sub.status());
      }
    } else if (d.ok()) {
      auto enc = encoding == 1 ? ExtensionObject::Encoding::ByteString : ExtensionObject::Encoding::Xml;
      v = ExtensionObject::undecoded(std::move(type_id), enc,
                                     n < 0 ? ByteString() : ByteString::from_bytes(body));
    }
  }
  d.leave();
}

// ---------------------------------------------------------------------------------------------- Variant
namespace {

constexpr uint8_t kVariantArrayDims = 0x40;
constexpr uint8_t kVariantArray = 0x80;

template <size_t I>
void decode_scalar_at(Decoder& d, Variant::Storage& s) {
  using T = std::variant_alternative_t<I, Variant::Storage>;
  if constexpr (std::is_same_v<T, NotAllowed> || std::is_same_v<T, std::monostate>) {
    d.fail(status::BadDecodingError);
  } else if constexpr (std::is_same_v<T, Box<DataValue>>) {
    if (!d.charge(sizeof(DataValue))) return;
    Box<DataValue> box;
    decode(d, *box);
    s.template emplace<I>(std::move(box));
  } else if constexpr (std::is_same_v<T, Box<DiagnosticInfo>>) {
    if (!d.charge(sizeof(DiagnosticInfo))) return;
    Box<DiagnosticInfo> box;
    decode(d, *box);
    s.template emplace<I>(std::move(box));
  } else {
    // Reuse the existing object (and its buffers) when it already holds this type.
    if (s.index() != I) s.template emplace<I>();
    decode(d, std::get<I>(s));
  }
}

template <size_t I>
void decode_array_at(Decoder& d, Variant::Storage& s) {
  if constexpr (I <= Variant::kArrayBase) {
    d.fail(status::BadDecodingError);  // type 0: there is no array of Null
  } else {
    if (s.index() != I) s.template emplace<I>();
    decode(d, std::get<I>(s));
  }
}

template <size_t... Is>
void decode_scalar_dispatch(Decoder& d, Variant::Storage& s, size_t type, std::index_sequence<Is...>) {
  ((type == Is ? decode_scalar_at<Is>(d, s) : void()), ...);
}
template <size_t... Is>
void decode_array_dispatch(Decoder& d, Variant::Storage& s, size_t type, std::index_sequence<Is...>) {
  ((type == Is ? decode_array_at<Variant::kArrayBase + Is>(d, s) : void()), ...);
}

template <class T>
void encode_variant_value(Encoder& e, const T& x) {
  if constexpr (std::is_same_v<T, std::monostate> || std::is_same_v<T, NotAllowed>) {
  } else if constexpr (std::is_same_v<T, Box<DataValue>> || std::is_same_v<T, Box<DiagnosticInfo>>) {
    encode(e, *x);
  } else {
    encode(e, x);
  }
}

}  // namespace

void encode(Encoder& e, const Variant& v) {
  // The scalars a value cell holds inline, written without the visit's indirect call: what every value
  // of a Read response and a data-change notification usually is.
  switch (v.type()) {
    case BuiltinType::Double:
      if (const double* x = v.get_if<double>()) {
        e.write_u8(static_cast<uint8_t>(BuiltinType::Double));
        e.write_f64(*x);
        return;
      }
      break;
    case BuiltinType::Int32:
      if (const int32_t* x = v.get_if<int32_t>()) {
        e.write_u8(static_cast<uint8_t>(BuiltinType::Int32));
        e.write_i32(*x);
        return;
      }
      break;
    case BuiltinType::DateTime:
      if (const DateTime* x = v.get_if<DateTime>()) {
        e.write_u8(static_cast<uint8_t>(BuiltinType::DateTime));
        e.write_u64(static_cast<uint64_t>(x->ticks));
        return;
      }
      break;
    default:
      break;
  }
  uint8_t mask = static_cast<uint8_t>(v.type());
  if (v.is_array()) mask |= kVariantArray;
  if (v.is_array() && !v.dimensions().empty()) mask |= kVariantArrayDims;
  e.write_u8(mask);
  std::visit([&](const auto& x) { encode_variant_value(e, x); }, v.storage());
  if (mask & kVariantArrayDims) encode(e, v.dimensions());
}

void decode(Decoder& d, Variant& v) {
  if (!d.enter()) return;
  const uint8_t mask = d.read_u8();
  // The scalars a Write usually carries, straight into the Variant (its storage reused): no dispatch.
  switch (mask) {
    case static_cast<uint8_t>(BuiltinType::Double):
      v.set_scalar(d.read_f64());
      return d.leave();
    case static_cast<uint8_t>(BuiltinType::Float):
      v.set_scalar(d.read_f32());
      return d.leave();
    case static_cast<uint8_t>(BuiltinType::Int32):
      v.set_scalar(d.read_i32());
      return d.leave();
    case static_cast<uint8_t>(BuiltinType::Boolean):
      v.set_scalar(d.read_u8() != 0);
      return d.leave();
    default:
      break;
  }
  const size_t type = mask & 0x3F;
  const bool array = mask & kVariantArray;
  const bool dims = mask & kVariantArrayDims;
  if (type > kMaxBuiltinType || (dims && !array)) {
    d.fail(status::BadDecodingError);
  } else if (type == 0) {
    // Null: Part 6 allows no array of Null; a mask of 0 is the empty Variant.
    if (array) d.fail(status::BadDecodingError);
    v.clear();
  } else if (!array) {
    decode_scalar_dispatch(d, v.storage(), type, std::make_index_sequence<Variant::kArrayBase + 1>());
    v.set_dimensions({});
  } else {
    decode_array_dispatch(d, v.storage(), type, std::make_index_sequence<Variant::kArrayBase + 1>());
    std::vector<int32_t> dimensions;
    if (dims) {
      decode(d, dimensions);
      // Part 6 §5.2.2.16: the dimensions must multiply to the array length, each one positive.
      uint64_t product = dimensions.empty() ? 0 : 1;
      for (int32_t n : dimensions) {
        if (n <= 0) {
          product = UINT64_MAX;
          break;
        }
        product *= static_cast<uint64_t>(n);
        if (product > UINT32_MAX) break;
      }
      if (d.ok() && product != v.array_length()) d.fail(status::BadDecodingError);
    }
    v.set_dimensions(std::move(dimensions));
  }
  d.leave();
}

// ---------------------------------------------------------------------------------------------- DataValue
namespace {
template <class T>
uint8_t* put(uint8_t* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
  return p + sizeof v;
}

// Any other DataValue, field by field. Apart from the fast path so that its frame does not burden it.
[[gnu::noinline]] void encode_general(Encoder& e, const DataValue& v) {
  uint8_t mask = 0;
  if (!v.value.is_empty()) mask |= 0x01;
  if (v.status.value() != 0) mask |= 0x02;
  if (!v.source_timestamp.is_null()) mask |= 0x04;
  if (!v.server_timestamp.is_null()) mask |= 0x08;
  if (v.source_picoseconds) mask |= 0x10;
  if (v.server_picoseconds) mask |= 0x20;
  e.write_u8(mask);
  if (mask & 0x01) encode(e, v.value);
  if (mask & 0x02) encode(e, v.status);
  if (mask & 0x04) encode(e, v.source_timestamp);
  if (mask & 0x10) e.write_u16(v.source_picoseconds);
  if (mask & 0x08) encode(e, v.server_timestamp);
  if (mask & 0x20) e.write_u16(v.server_picoseconds);
}
}  // namespace

void encode(Encoder& e, const DataValue& v) {
  // A Double, Int32 or DateTime value, or none, with its status and timestamps: the whole DataValue in
  // one span (what a Read response and a data-change notification carry), byte for byte the general path.
  const BuiltinType type = v.value.type();
  const size_t value_size = v.value.is_empty()                                             ? 0
                            : !v.value.is_scalar()                                         ? SIZE_MAX
                            : type == BuiltinType::Double || type == BuiltinType::DateTime ? 9
                            : type == BuiltinType::Int32                                   ? 5
                                                                                           : SIZE_MAX;
  if (value_size != SIZE_MAX) {
    const bool status = v.status.value() != 0;
    const bool source = !v.source_timestamp.is_null();
    const bool server = !v.server_timestamp.is_null();
    const uint8_t mask = (value_size ? 0x01 : 0) | (status ? 0x02 : 0) | (source ? 0x04 : 0) |
                         (server ? 0x08 : 0) | (v.source_picoseconds ? 0x10 : 0) |
                         (v.server_picoseconds ? 0x20 : 0);
    const size_t size = 1 + value_size + (status ? 4 : 0) + (source ? 8 : 0) + (server ? 8 : 0) +
                        (v.source_picoseconds ? 2 : 0) + (v.server_picoseconds ? 2 : 0);
    uint8_t* p = e.write_span(size);
    *p++ = mask;
    if (value_size) {
      *p++ = static_cast<uint8_t>(type);
      if (type == BuiltinType::Double) {
        p = put(p, *v.value.get_if<double>());
      } else if (type == BuiltinType::DateTime) {
        p = put(p, v.value.get_if<DateTime>()->ticks);
      } else {
        p = put(p, *v.value.get_if<int32_t>());
      }
    }
    if (status) p = put(p, v.status.value());
    if (source) p = put(p, v.source_timestamp.ticks);
    if (v.source_picoseconds) p = put(p, v.source_picoseconds);
    if (server) p = put(p, v.server_timestamp.ticks);
    if (v.server_picoseconds) p = put(p, v.server_picoseconds);
    return;
  }
  encode_general(e, v);
}

void decode(Decoder& d, DataValue& v) {
  if (!d.enter()) return;
  const uint8_t mask = d.read_u8();
  if (mask & 0xC0) d.fail(status::BadDecodingError);
  if (mask & 0x01) {
    decode(d, v.value);
  } else {
    v.value.clear();
  }
  v.status = (mask & 0x02) ? StatusCode(d.read_u32()) : StatusCode();
  v.source_timestamp = (mask & 0x04) ? DateTime{static_cast<int64_t>(d.read_u64())} : DateTime{};
  v.source_picoseconds = (mask & 0x10) ? d.read_u16() : 0;
  v.server_timestamp = (mask & 0x08) ? DateTime{static_cast<int64_t>(d.read_u64())} : DateTime{};
  v.server_picoseconds = (mask & 0x20) ? d.read_u16() : 0;
  d.leave();
}

// ----------------------------------------------------------------------------------------------
// DiagnosticInfo
void encode(Encoder& e, const DiagnosticInfo& v) {
  uint8_t mask = 0;
  if (v.symbolic_id) mask |= 0x01;
  if (v.namespace_uri) mask |= 0x02;
  if (v.localized_text) mask |= 0x04;
  if (v.locale) mask |= 0x08;
  if (!v.additional_info.is_null()) mask |= 0x10;
  if (v.inner_status_code) mask |= 0x20;
  if (v.inner_diagnostic_info) mask |= 0x40;
  e.write_u8(mask);
  if (v.symbolic_id) e.write_i32(*v.symbolic_id);
  if (v.namespace_uri) e.write_i32(*v.namespace_uri);
  if (v.locale) e.write_i32(*v.locale);
  if (v.localized_text) e.write_i32(*v.localized_text);
  if (mask & 0x10) encode(e, v.additional_info);
  if (v.inner_status_code) encode(e, *v.inner_status_code);
  if (v.inner_diagnostic_info) encode(e, **v.inner_diagnostic_info);
}

void decode(Decoder& d, DiagnosticInfo& v) {
  if (!d.enter()) return;
  const uint8_t mask = d.read_u8();
  if (mask & 0x80) d.fail(status::BadDecodingError);
  auto read_opt = [&](uint8_t bit, std::optional<int32_t>& field) {
    field = (mask & bit) ? std::optional<int32_t>(d.read_i32()) : std::nullopt;
  };
  read_opt(0x01, v.symbolic_id);
  read_opt(0x02, v.namespace_uri);
  read_opt(0x08, v.locale);
  read_opt(0x04, v.localized_text);
  if (mask & 0x10) {
    decode(d, v.additional_info);
  } else {
    v.additional_info.set_null();
  }
  v.inner_status_code = (mask & 0x20) ? std::optional<StatusCode>(StatusCode(d.read_u32())) : std::nullopt;
  if ((mask & 0x40) && d.charge(sizeof(DiagnosticInfo))) {
    Box<DiagnosticInfo> inner;
    decode(d, *inner);
    v.inner_diagnostic_info = std::move(inner);
  } else {
    v.inner_diagnostic_info.reset();
  }
  d.leave();
}

// ---------------------------------------------------------------------------------------------- Boolean
// arrays
void encode(Encoder& e, const std::vector<bool>& v) {
  e.write_length(v.size());
  for (bool b : v) e.write_u8(b ? 1 : 0);
}
void decode(Decoder& d, std::vector<bool>& v) {
  uint32_t n = d.read_array_length(1);
  v.resize(n);
  for (uint32_t i = 0; i < n && d.ok(); ++i) v[i] = d.read_u8() != 0;
}

}  // namespace opcuad::ua
