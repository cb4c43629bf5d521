#pragma once
// Variant, DataValue and DiagnosticInfo (Part 6 §5.2.2.16-17, §5.2.2.12). They refer to each other, so
// they share a header.
//
// A Variant holds nothing, one scalar of a built-in type, or a one-dimensional array of one built-in
// type; an array may carry ArrayDimensions, which makes it a matrix stored in row-major order (the last
// index varies fastest) whose dimensions multiply to the element count.
//
// The storage is a std::variant whose index encodes the built-in type: index 0 is empty, index t
// (1..25) a scalar of built-in type t, index 25 + t an array of built-in type t. A scalar Variant inside
// a Variant is not allowed by Part 6, so that slot holds the NotAllowed placeholder.

#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <variant>
#include <vector>

#include "ua/builtin_type.hpp"
#include "ua/bytes.hpp"
#include "ua/extension_object.hpp"
#include "ua/node_id.hpp"
#include "ua/scalars.hpp"
#include "ua/status_code.hpp"
#include "ua/text.hpp"

namespace opcuad::ua {

class Variant;
struct DataValue;
struct DiagnosticInfo;

// A heap box with value semantics, for the recursive members (DataValue in a Variant, the inner
// DiagnosticInfo).
template <class T>
class Box {
 public:
  Box() : p_(std::make_unique<T>()) {}
  Box(T v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT: implicit boxing
  Box(const Box& o) : p_(std::make_unique<T>(*o.p_)) {}
  Box(Box&&) noexcept = default;
  Box& operator=(const Box& o) {
    if (this != &o) *p_ = *o.p_;
    return *this;
  }
  Box& operator=(Box&&) noexcept = default;
  T& operator*() noexcept { return *p_; }
  const T& operator*() const noexcept { return *p_; }
  T* operator->() noexcept { return p_.get(); }
  const T* operator->() const noexcept { return p_.get(); }
  friend bool operator==(const Box& a, const Box& b) { return *a.p_ == *b.p_; }

 private:
  std::unique_ptr<T> p_;
};

struct NotAllowed {
  friend constexpr bool operator==(NotAllowed, NotAllowed) noexcept { return true; }
};

class Variant {
 public:
  using Storage =
      std::variant<std::monostate,
                   // scalars, index == BuiltinType
                   bool, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, float,
                   double, String, DateTime, Guid, ByteString, XmlElement, NodeId, ExpandedNodeId, StatusCode,
                   QualifiedName, LocalizedText, ExtensionObject, Box<DataValue>, NotAllowed,
                   Box<DiagnosticInfo>,
                   // arrays, index == 25 + BuiltinType
                   std::vector<bool>, std::vector<int8_t>, std::vector<uint8_t>, std::vector<int16_t>,
                   std::vector<uint16_t>, std::vector<int32_t>, std::vector<uint32_t>, std::vector<int64_t>,
                   std::vector<uint64_t>, std::vector<float>, std::vector<double>, std::vector<String>,
                   std::vector<DateTime>, std::vector<Guid>, std::vector<ByteString>, std::vector<XmlElement>,
                   std::vector<NodeId>, std::vector<ExpandedNodeId>, std::vector<StatusCode>,
                   std::vector<QualifiedName>, std::vector<LocalizedText>, std::vector<ExtensionObject>,
                   std::vector<DataValue>, std::vector<Variant>, std::vector<DiagnosticInfo>>;
  static constexpr size_t kArrayBase = 25;

  Variant() = default;
  // Scalars and arrays of any built-in type: Variant(3.5), Variant(std::vector<int32_t>{1, 2}).
  template <class T>
  requires(!std::is_same_v<std::remove_cvref_t<T>, Variant> && std::is_constructible_v<Storage, T&&>)
      Variant(T&& v)
      : storage_(std::forward<T>(v)) {}  // NOLINT: implicit by design
  Variant(const char* s);                // NOLINT
  Variant(DataValue v);                  // NOLINT
  Variant(DiagnosticInfo v);             // NOLINT

  // A matrix: elements in row-major order; REQUIRES: the product of dims equals the element count.
  template <class T>
  static Variant matrix(std::vector<T> elements, std::vector<int32_t> dims);

  bool is_empty() const noexcept { return storage_.index() == 0; }
  bool is_array() const noexcept { return storage_.index() > kArrayBase; }
  bool is_scalar() const noexcept { return storage_.index() != 0 && storage_.index() <= kArrayBase; }
  BuiltinType type() const noexcept {
    auto i = storage_.index();
    return static_cast<BuiltinType>(i > kArrayBase ? i - kArrayBase : i);
  }
  // Number of array elements (0 for scalars and empty).
  size_t array_length() const noexcept;
  const std::vector<int32_t>& dimensions() const noexcept { return dims_; }
  void set_dimensions(std::vector<int32_t> dims) { dims_ = std::move(dims); }

  template <class T>
  const T* get_if() const noexcept {
    return std::get_if<T>(&storage_);
  }
  template <class T>
  T* get_if() noexcept {
    return std::get_if<T>(&storage_);
  }
  const Storage& storage() const noexcept { return storage_; }
  Storage& storage() noexcept { return storage_; }
  void clear() noexcept;
  // Makes this the scalar `v`: a plain store when it already holds a T (no destruction, no temporary
  // Variant), what the value-cell reads of the request path do.
  template <class T>
  requires(std::is_trivially_copyable_v<T>) void set_scalar(T v) noexcept {
    if (T* p = std::get_if<T>(&storage_)) [[likely]] {
      *p = v;
    } else {
      storage_.template emplace<T>(v);
    }
    if (!dims_.empty()) [[unlikely]]
      dims_.clear();
  }

  friend bool operator==(const Variant& a, const Variant& b);

 private:
  Storage storage_;
  std::vector<int32_t> dims_;  // ArrayDimensions; empty for scalars and plain arrays
};

// DataValue: the encoding mask marks a field present when it differs from its default: a non-empty
// value, a non-Good status, a set timestamp, non-zero picoseconds.
struct DataValue {
  Variant value;
  StatusCode status;
  DateTime source_timestamp;
  DateTime server_timestamp;
  uint16_t source_picoseconds = 0;
  uint16_t server_picoseconds = 0;

  friend bool operator==(const DataValue&, const DataValue&) = default;
};

// DiagnosticInfo: each field is present when set; inner_diagnostic_info nests (depth-limited on decode).
struct DiagnosticInfo {
  std::optional<int32_t> symbolic_id;
  std::optional<int32_t> namespace_uri;
  std::optional<int32_t> locale;
  std::optional<int32_t> localized_text;
  String additional_info;  // null when absent
  std::optional<StatusCode> inner_status_code;
  std::optional<Box<DiagnosticInfo>> inner_diagnostic_info;

  // No field present (what encodes as the single mask byte 0).
  bool empty() const noexcept {
    return !symbolic_id && !namespace_uri && !locale && !localized_text && additional_info.is_null() &&
           !inner_status_code && !inner_diagnostic_info;
  }
  friend bool operator==(const DiagnosticInfo&, const DiagnosticInfo&) = default;
};

// Defined here, where every alternative of the storage is a complete type.
inline Variant::Variant(const char* s) : storage_(String(s)) {}
template <class T>
Variant Variant::matrix(std::vector<T> elements, std::vector<int32_t> dims) {
  Variant v(std::move(elements));
  v.dims_ = std::move(dims);
  return v;
}
inline void Variant::clear() noexcept {
  storage_ = std::monostate{};
  dims_.clear();
}
inline Variant::Variant(DataValue v) : storage_(Box<DataValue>(std::move(v))) {}
inline Variant::Variant(DiagnosticInfo v) : storage_(Box<DiagnosticInfo>(std::move(v))) {}

}  // namespace opcuad::ua
