#pragma once
// NodeId and ExpandedNodeId (Part 3 §8.2, Part 6 §5.2.2.9-10, text form Part 6 §5.3.1.10-11).
//
// A NodeId is a namespace index plus one identifier of four kinds. The binary codec picks the most
// compact encoding (two-byte, four-byte, numeric) for numeric ids; equality ignores the encoding.
//
// Text forms accepted and produced:
//   i=2258                      numeric in namespace 0
//   ns=2;s=Line1.Temp           string
//   ns=1;g=72962B91-FA75-4AE6-8D28-B404DC7DAF63
//   ns=3;b=SGVsbG8=             opaque (base64)
//   nsu=urn:example;s=Temp      namespace by URI (ExpandedNodeId, or NodeId with a namespace table)
//   svr=1;nsu=urn:x;i=5         server index (ExpandedNodeId only)

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ua/bytes.hpp"
#include "ua/scalars.hpp"

namespace opcuad::ua {

enum class IdType : uint8_t { Numeric = 0, String = 1, Guid = 2, Opaque = 3 };

// The outcome of parsing a text form: a value, or a message saying what is wrong with the text.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;
  explicit operator bool() const noexcept { return value.has_value(); }
};

class NodeId {
 public:
  constexpr NodeId() noexcept = default;  // ns=0;i=0, the null NodeId
  constexpr NodeId(uint16_t ns, uint32_t id) noexcept : ns_(ns), type_(IdType::Numeric), numeric_(id) {}
  constexpr explicit NodeId(uint32_t id) noexcept : NodeId(0, id) {}
  NodeId(uint16_t ns, String s) : ns_(ns), type_(IdType::String), text_(std::string(s.view())) {}
  NodeId(uint16_t ns, const Guid& g) noexcept : ns_(ns), type_(IdType::Guid), guid_(g) {}
  static NodeId opaque(uint16_t ns, ByteString b) {
    NodeId n;
    n.ns_ = ns;
    n.type_ = IdType::Opaque;
    n.text_ = std::string(b.view());
    return n;
  }

  constexpr uint16_t namespace_index() const noexcept { return ns_; }
  constexpr IdType type() const noexcept { return type_; }
  constexpr uint32_t numeric() const noexcept { return numeric_; }  // REQUIRES: type() == Numeric
  std::string_view string() const noexcept { return text_; }        // String text or opaque bytes
  const Guid& guid() const noexcept { return guid_; }               // REQUIRES: type() == Guid

  // Part 3 §8.2.4: ns=0 and a numeric zero, an empty string, a zero GUID or an empty opaque id.
  bool is_null() const noexcept;
  constexpr bool is_ns0(uint32_t id) const noexcept {
    return ns_ == 0 && type_ == IdType::Numeric && numeric_ == id;
  }

  // Text form. A resolver maps a namespace URI (nsu=) to its index; without one, nsu= is an error.
  using NamespaceResolver = std::function<std::optional<uint16_t>(std::string_view uri)>;
  static Parsed<NodeId> parse(std::string_view text, const NamespaceResolver& resolver = nullptr);
  std::string to_string() const;

  size_t hash() const noexcept;
  friend bool operator==(const NodeId& a, const NodeId& b) noexcept {
    if (a.ns_ != b.ns_ || a.type_ != b.type_) return false;
    if (a.type_ == IdType::Numeric) return a.numeric_ == b.numeric_;
    if (a.type_ == IdType::Guid) return a.guid_ == b.guid_;
    return a.text_ == b.text_;
  }
  friend std::strong_ordering operator<=>(const NodeId& a, const NodeId& b) noexcept;

  // Decoder access: assigns in place, keeping the string buffer's capacity.
  void set_numeric(uint16_t ns, uint32_t id) noexcept {
    ns_ = ns;
    type_ = IdType::Numeric;
    numeric_ = id;
  }
  void set_guid(uint16_t ns, const Guid& g) noexcept {
    ns_ = ns;
    type_ = IdType::Guid;
    guid_ = g;
  }
  void set_text(uint16_t ns, IdType type, const char* p, size_t n) {
    ns_ = ns;
    type_ = type;
    // A reused request names ids of the same length again and again: copied over in place, without
    // std::string's general replace.
    if (n == text_.size()) {
      if (n > 0) std::memcpy(text_.data(), p, n);
    } else {
      text_.assign(p, n);
    }
  }

 private:
  uint16_t ns_ = 0;
  IdType type_ = IdType::Numeric;
  uint32_t numeric_ = 0;
  Guid guid_{};
  std::string text_;  // String or Opaque identifier
};

struct ExpandedNodeId {
  NodeId node_id;
  String namespace_uri;  // null when node_id.namespace_index() is meaningful
  uint32_t server_index = 0;

  static Parsed<ExpandedNodeId> parse(std::string_view text);
  std::string to_string() const;
  bool is_local() const noexcept { return server_index == 0 && namespace_uri.is_null(); }

  friend bool operator==(const ExpandedNodeId&, const ExpandedNodeId&) = default;
};

}  // namespace opcuad::ua

template <>
struct std::hash<opcuad::ua::NodeId> {
  size_t operator()(const opcuad::ua::NodeId& n) const noexcept { return n.hash(); }
};
