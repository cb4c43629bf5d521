// NodeId identity (equality, order, hash) and text forms (Part 6 §5.3.1.10-11).
#include "ua/node_id.hpp"

#include <charconv>
#include <cstring>

#include "ua/base64.hpp"

namespace opcuad::ua {

namespace {

// splitmix64's finaliser: spreads every input bit over the output, so sequential numeric ids do not
// collide in a power-of-two hash table.
constexpr uint64_t mix64(uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// A string or opaque identifier's bytes, 8 at a time: each word is folded in with a multiply and a shift.
// The last word overlaps the one before it (and a short identifier is read as two overlapping halves), so
// every byte counts and no byte loop runs; the length in the seed keeps strings whose overlapping words
// coincide apart. mix64 below spreads the result, and the node table compares the full 32-bit hash before
// it compares identifiers.
inline uint64_t load64(const char* p) noexcept {
  uint64_t w = 0;
  std::memcpy(&w, p, 8);
  return w;
}
inline uint64_t load32(const char* p) noexcept {
  uint32_t w = 0;
  std::memcpy(&w, p, 4);
  return w;
}
inline uint64_t fold(uint64_t h, uint64_t w) noexcept {
  h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 32);
}
uint64_t hash_bytes(std::string_view s) noexcept {
  const char* p = s.data();
  const size_t n = s.size();
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  if (n >= 8) {
    size_t i = 0;
    for (; i + 8 < n; i += 8) h = fold(h, load64(p + i));
    return fold(h, load64(p + n - 8));
  }
  if (n >= 4) return fold(h, load32(p) | load32(p + n - 4) << 32);
  if (n > 0) {
    const auto b = [p](size_t k) { return uint64_t{static_cast<uint8_t>(p[k])}; };
    return fold(h, b(0) | b(n / 2) << 8 | b(n - 1) << 16);
  }
  return h;
}

template <class T>
bool parse_decimal(std::string_view s, T& out) {
  if (s.empty() || s.size() > 20) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string quote(std::string_view text) {
  std::string q = "'";
  q.append(text.substr(0, 200));
  if (text.size() > 200) q += "...";
  q += "'";
  return q;
}

// Namespace URIs in the text form escape ';' and '%' as %XX (Part 6 §5.3.1.11).
std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size()) return std::nullopt;  // '%' needs two hex digits after it
    auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (ec != std::errc() || p != s.data() + i + 3) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

std::string percent_encode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    if (c == ';' || c == '%') {
      out += '%';
      out += kHex[static_cast<uint8_t>(c) >> 4];
      out += kHex[static_cast<uint8_t>(c) & 15];
    } else {
      out += c;
    }
  }
  return out;
}

// Parses the identifier part "i=..", "s=..", "g=..", "b=.." into n (namespace already set by caller).
bool parse_identifier(std::string_view id, uint16_t ns, NodeId& n, std::string& error) {
  if (id.size() < 2 || id[1] != '=') {
    error = "expected an identifier 'i=', 's=', 'g=' or 'b=' but found " + quote(id);
    return false;
  }
  std::string_view value = id.substr(2);
  switch (id[0]) {
    case 'i': {
      uint32_t v = 0;
      if (!parse_decimal(value, v)) {
        error = "numeric identifier " + quote(value) + " is not a number in 0..4294967295";
        return false;
      }
      n = NodeId(ns, v);
      return true;
    }
    case 's':
      n = NodeId(ns, String(value));
      return true;
    case 'g': {
      auto g = Guid::parse(value);
      if (!g) {
        error =
            "GUID identifier " + quote(value) + " is not of the form XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX";
        return false;
      }
      n = NodeId(ns, *g);
      return true;
    }
    case 'b': {
      auto bytes = base64_decode(value);
      if (!bytes) {
        error = "opaque identifier " + quote(value) + " is not valid base64";
        return false;
      }
      n = NodeId::opaque(ns, ByteString(*bytes));
      return true;
    }
    default:
      error = "unknown identifier type " + quote(id.substr(0, 1)) + " (expected i, s, g or b)";
      return false;
  }
}

struct Prefixes {
  std::optional<uint32_t> server_index;
  std::optional<uint16_t> ns;
  std::optional<std::string> namespace_uri;
  std::string_view identifier;
};

// Splits "svr=..;nsu=..;ns=..;" prefixes from the identifier. A string identifier may itself contain ';',
// so only the known prefixes are split off the front.
bool split_prefixes(std::string_view text, Prefixes& out, std::string& error) {
  std::string_view rest = text;
  auto take_field = [&](std::string_view key) -> std::optional<std::string_view> {
    if (rest.substr(0, key.size()) != key) return std::nullopt;
    auto semi = rest.find(';');
    if (semi == std::string_view::npos) return std::nullopt;
    auto value = rest.substr(key.size(), semi - key.size());
    rest.remove_prefix(semi + 1);
    return value;
  };
  if (auto v = take_field("svr=")) {
    uint32_t s = 0;
    if (!parse_decimal(*v, s)) {
      error = "server index " + quote(*v) + " is not a number";
      return false;
    }
    out.server_index = s;
  }
  if (auto v = take_field("nsu=")) {
    auto uri = percent_decode(*v);
    if (!uri || uri->empty()) {
      error = "namespace URI " + quote(*v) + " is empty or badly %-escaped";
      return false;
    }
    out.namespace_uri = std::move(*uri);
  } else if (auto v2 = take_field("ns=")) {
    uint16_t ns = 0;
    if (!parse_decimal(*v2, ns)) {
      error = "namespace index " + quote(*v2) + " is not a number in 0..65535";
      return false;
    }
    out.ns = ns;
  }
  out.identifier = rest;
  return true;
}

}  // namespace

bool NodeId::is_null() const noexcept {
  if (ns_ != 0) return false;
  switch (type_) {
    case IdType::Numeric:
      return numeric_ == 0;
    case IdType::Guid:
      return guid_.is_null();
    default:
      return text_.empty();
  }
}

size_t NodeId::hash() const noexcept {
  uint64_t h = (uint64_t{ns_} << 32) ^ (uint64_t{static_cast<uint8_t>(type_)} << 48);
  switch (type_) {
    case IdType::Numeric:
      h ^= numeric_;
      break;
    case IdType::Guid: {
      uint64_t a = 0, b = 0;
      std::memcpy(&a, &guid_, 8);
      std::memcpy(&b, reinterpret_cast<const char*>(&guid_) + 8, 8);
      h ^= a ^ mix64(b);
      break;
    }
    default:
      h ^= hash_bytes(text_);
      break;
  }
  return static_cast<size_t>(mix64(h));
}

std::strong_ordering operator<=>(const NodeId& a, const NodeId& b) noexcept {
  if (auto c = a.ns_ <=> b.ns_; c != 0) return c;
  if (auto c = a.type_ <=> b.type_; c != 0) return c;
  switch (a.type_) {
    case IdType::Numeric:
      return a.numeric_ <=> b.numeric_;
    case IdType::Guid:
      return a.guid_ <=> b.guid_;
    default:
      return a.text_.compare(b.text_) <=> 0;
  }
}

Parsed<NodeId> NodeId::parse(std::string_view text, const NamespaceResolver& resolver) {
  Parsed<NodeId> r;
  Prefixes p;
  if (!split_prefixes(text, p, r.error)) {
    r.error = "invalid NodeId " + quote(text) + ": " + r.error;
    return r;
  }
  if (p.server_index) {
    r.error = "invalid NodeId " + quote(text) + ": svr= belongs to an ExpandedNodeId";
    return r;
  }
  uint16_t ns = p.ns.value_or(0);
  if (p.namespace_uri) {
    std::optional<uint16_t> index = resolver ? resolver(*p.namespace_uri) : std::nullopt;
    if (!index) {
      r.error = "invalid NodeId " + quote(text) + ": namespace URI " + quote(*p.namespace_uri) +
                (resolver ? " is not in the namespace table" : " cannot be resolved here (use ns=<index>)");
      return r;
    }
    ns = *index;
  }
  NodeId n;
  if (!parse_identifier(p.identifier, ns, n, r.error)) {
    r.error = "invalid NodeId " + quote(text) + ": " + r.error;
    return r;
  }
  r.value = std::move(n);
  return r;
}

std::string NodeId::to_string() const {
  std::string s;
  if (ns_ != 0) s = "ns=" + std::to_string(ns_) + ";";
  switch (type_) {
    case IdType::Numeric:
      return s + "i=" + std::to_string(numeric_);
    case IdType::String:
      return s + "s=" + text_;
    case IdType::Guid:
      return s + "g=" + guid_.to_string();
    case IdType::Opaque:
      return s + "b=" + base64_encode(text_);
  }
  return s;
}

Parsed<ExpandedNodeId> ExpandedNodeId::parse(std::string_view text) {
  Parsed<ExpandedNodeId> r;
  Prefixes p;
  if (!split_prefixes(text, p, r.error)) {
    r.error = "invalid ExpandedNodeId " + quote(text) + ": " + r.error;
    return r;
  }
  ExpandedNodeId x;
  if (!parse_identifier(p.identifier, p.ns.value_or(0), x.node_id, r.error)) {
    r.error = "invalid ExpandedNodeId " + quote(text) + ": " + r.error;
    return r;
  }
  if (p.namespace_uri) x.namespace_uri = String(*p.namespace_uri);
  x.server_index = p.server_index.value_or(0);
  r.value = std::move(x);
  return r;
}

std::string ExpandedNodeId::to_string() const {
  std::string s;
  if (server_index != 0) s += "svr=" + std::to_string(server_index) + ";";
  if (namespace_uri.is_null()) return s + node_id.to_string();
  s += "nsu=" + percent_encode(namespace_uri.view()) + ";";
  // The URI stands in for the namespace index: print the identifier part only ("ns=N;" is the first
  // field when present, and a string identifier may contain ';' only after it).
  std::string id = node_id.to_string();
  if (node_id.namespace_index() != 0) id.erase(0, id.find(';') + 1);
  return s + id;
}

}  // namespace opcuad::ua
