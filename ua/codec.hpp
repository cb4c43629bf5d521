#pragma once
// The binary codec (Part 6 §5.2): one encode/decode overload pair per built-in type, templates for
// enumerations and arrays, and the same pair for every generated structure (found by ADL). Generated
// code is nothing but calls to these.
//
// decode() assigns into an existing object, reusing the capacity of its strings and vectors, so that
// decoding into a warm request object does not allocate.

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ua/decoder.hpp"
#include "ua/encoder.hpp"
#include "ua/variant.hpp"

namespace opcuad::ua {

// ---- fixed-size numbers
inline void encode(Encoder& e, bool v) {
  e.write_u8(v ? 1 : 0);
}
inline void decode(Decoder& d, bool& v) {
  v = d.read_u8() != 0;
}
inline void encode(Encoder& e, int8_t v) {
  e.write_u8(static_cast<uint8_t>(v));
}
inline void decode(Decoder& d, int8_t& v) {
  v = static_cast<int8_t>(d.read_u8());
}
inline void encode(Encoder& e, uint8_t v) {
  e.write_u8(v);
}
inline void decode(Decoder& d, uint8_t& v) {
  v = d.read_u8();
}
inline void encode(Encoder& e, int16_t v) {
  e.write_u16(static_cast<uint16_t>(v));
}
inline void decode(Decoder& d, int16_t& v) {
  v = static_cast<int16_t>(d.read_u16());
}
inline void encode(Encoder& e, uint16_t v) {
  e.write_u16(v);
}
inline void decode(Decoder& d, uint16_t& v) {
  v = d.read_u16();
}
inline void encode(Encoder& e, int32_t v) {
  e.write_u32(static_cast<uint32_t>(v));
}
inline void decode(Decoder& d, int32_t& v) {
  v = static_cast<int32_t>(d.read_u32());
}
inline void encode(Encoder& e, uint32_t v) {
  e.write_u32(v);
}
inline void decode(Decoder& d, uint32_t& v) {
  v = d.read_u32();
}
inline void encode(Encoder& e, int64_t v) {
  e.write_u64(static_cast<uint64_t>(v));
}
inline void decode(Decoder& d, int64_t& v) {
  v = static_cast<int64_t>(d.read_u64());
}
inline void encode(Encoder& e, uint64_t v) {
  e.write_u64(v);
}
inline void decode(Decoder& d, uint64_t& v) {
  v = d.read_u64();
}
inline void encode(Encoder& e, float v) {
  e.write_f32(v);
}
inline void decode(Decoder& d, float& v) {
  v = d.read_f32();
}
inline void encode(Encoder& e, double v) {
  e.write_f64(v);
}
inline void decode(Decoder& d, double& v) {
  v = d.read_f64();
}
inline void encode(Encoder& e, DateTime v) {
  e.write_u64(static_cast<uint64_t>(v.ticks));
}
inline void decode(Decoder& d, DateTime& v) {
  v.ticks = static_cast<int64_t>(d.read_u64());
}
inline void encode(Encoder& e, StatusCode v) {
  e.write_u32(v.value());
}
inline void decode(Decoder& d, StatusCode& v) {
  v = StatusCode(d.read_u32());
}
void encode(Encoder& e, const Guid& v);
void decode(Decoder& d, Guid& v);

// ---- length-prefixed bytes
template <class Tag>
void encode(Encoder& e, const NullableBytes<Tag>& v) {
  e.write_bytes(v.is_null(), v.view());
}
template <class Tag>
void decode(Decoder& d, NullableBytes<Tag>& v) {
  if (d.skip_null_bytes()) return v.set_null();
  const auto& l = d.limits();
  int32_t n = d.read_bytes_length(std::is_same_v<Tag, ByteStringTag> ? l.max_byte_string_length
                                                                     : l.max_string_length);
  if (n < 0) return v.set_null();
  auto s = d.take(static_cast<size_t>(n));
  v.assign(reinterpret_cast<const char*>(s.data()), s.size());
}

// ---- structured built-ins
void encode(Encoder& e, const NodeId& v);
void decode(Decoder& d, NodeId& v);
void encode(Encoder& e, const ExpandedNodeId& v);
void decode(Decoder& d, ExpandedNodeId& v);
void encode(Encoder& e, const QualifiedName& v);
void decode(Decoder& d, QualifiedName& v);
void encode(Encoder& e, const LocalizedText& v);
void decode(Decoder& d, LocalizedText& v);
void encode(Encoder& e, const ExtensionObject& v);
void decode(Decoder& d, ExtensionObject& v);
void encode(Encoder& e, const Variant& v);
void decode(Decoder& d, Variant& v);
void encode(Encoder& e, const DataValue& v);
void decode(Decoder& d, DataValue& v);
void encode(Encoder& e, const DiagnosticInfo& v);
void decode(Decoder& d, DiagnosticInfo& v);

// ---- enumerations: encoded as their underlying integer (Int32 for plain enumerations, Part 6 §5.2.4)
template <class E>
requires std::is_enum_v<E>
void encode(Encoder& e, E v) {
  encode(e, static_cast<std::underlying_type_t<E>>(v));
}
template <class E>
requires std::is_enum_v<E>
void decode(Decoder& d, E& v) {
  std::underlying_type_t<E> raw{};
  decode(d, raw);
  v = static_cast<E>(raw);
}

// ---- smallest encoded size of one value, used to bound array lengths by the bytes that remain
template <class T>
struct MinEncodedSize {
  static constexpr size_t value = T::kMinEncodedSize;  // generated structures
};
template <class T>
requires std::is_arithmetic_v<T> || std::is_enum_v<T>
struct MinEncodedSize<T> {
  static constexpr size_t value = sizeof(T);
};
template <class Tag>
struct MinEncodedSize<NullableBytes<Tag>> {
  static constexpr size_t value = 4;
};
template <class T>
struct MinEncodedSize<std::vector<T>> {
  static constexpr size_t value = 4;
};
template <>
struct MinEncodedSize<DateTime> {
  static constexpr size_t value = 8;
};
template <>
struct MinEncodedSize<Guid> {
  static constexpr size_t value = 16;
};
template <>
struct MinEncodedSize<StatusCode> {
  static constexpr size_t value = 4;
};
template <>
struct MinEncodedSize<NodeId> {
  static constexpr size_t value = 2;
};
template <>
struct MinEncodedSize<ExpandedNodeId> {
  static constexpr size_t value = 2;
};
template <>
struct MinEncodedSize<QualifiedName> {
  static constexpr size_t value = 6;
};
template <>
struct MinEncodedSize<LocalizedText> {
  static constexpr size_t value = 1;
};
template <>
struct MinEncodedSize<ExtensionObject> {
  static constexpr size_t value = 3;
};
template <>
struct MinEncodedSize<Variant> {
  static constexpr size_t value = 1;
};
template <>
struct MinEncodedSize<DataValue> {
  static constexpr size_t value = 1;
};
template <>
struct MinEncodedSize<DiagnosticInfo> {
  static constexpr size_t value = 1;
};
template <class T>
inline constexpr size_t kMinEncodedSize = MinEncodedSize<T>::value;

// ---- arrays (Part 6 §5.2.5): Int32 length, -1 for null; an empty vector encodes as length 0
template <class T>
void encode(Encoder& e, const std::vector<T>& v) {
  e.write_length(v.size());
  for (const auto& x : v) encode(e, x);
}
template <class T>
void decode(Decoder& d, std::vector<T>& v) {
  uint32_t n = d.read_array_length(kMinEncodedSize<T>);
  if (!d.charge(size_t{n} * sizeof(T))) return;
  v.resize(n);
  for (auto& x : v) {
    decode(d, x);
    if (!d.ok()) break;
  }
}
void encode(Encoder& e, const std::vector<bool>& v);
void decode(Decoder& d, std::vector<bool>& v);

// ---- generated structures: descriptor built from the codec above
template <class T>
constexpr StructureType make_structure_type(std::string_view name, uint32_t data_type_id,
                                            uint32_t binary_encoding_id) {
  return StructureType{
      name,
      data_type_id,
      binary_encoding_id,
      +[]() -> void* { return new T(); },
      +[](void* p) noexcept { delete static_cast<T*>(p); },
      +[](const void* p) -> void* { return new T(*static_cast<const T*>(p)); },
      +[](const void* a, const void* b) { return *static_cast<const T*>(a) == *static_cast<const T*>(b); },
      +[](Encoder& e, const void* p) { encode(e, *static_cast<const T*>(p)); },
      +[](Decoder& d, void* p) { decode(d, *static_cast<T*>(p)); },
      sizeof(T),
  };
}

// Convenience for tests and tools: encode a value into a fresh buffer / decode a whole span.
template <class T>
StatusCode encode_to(ByteBuffer& out, const T& v) {
  Encoder e(out);
  encode(e, v);
  return e.status();
}
template <class T>
StatusCode decode_from(std::span<const uint8_t> in, T& v,
                       const DecodeLimits& limits = Decoder::default_limits()) {
  Decoder d(in, limits);
  decode(d, v);
  return d.status();
}

}  // namespace opcuad::ua
