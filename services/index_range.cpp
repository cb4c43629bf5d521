#include "services/index_range.hpp"

#include <charconv>

namespace opcuad::services {

namespace {

namespace status = ua::status;

template <class T>
constexpr bool is_vector = false;
template <class T>
constexpr bool is_vector<std::vector<T>> = true;

bool parse_number(std::string_view s, uint32_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The value's shape: its ArrayDimensions, or its length for a plain array.
std::vector<uint32_t> shape_of(const ua::Variant& v) {
  if (!v.dimensions().empty()) {
    std::vector<uint32_t> s;
    for (int32_t d : v.dimensions()) s.push_back(static_cast<uint32_t>(d));
    return s;
  }
  return {static_cast<uint32_t>(v.array_length())};
}

// Clamps the range to the shape; false when a dimension selects nothing.
bool clamp(const IndexRange& r, const std::vector<uint32_t>& shape, std::vector<IndexRange::Dim>& out) {
  out = r.dims;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].first >= shape[i]) return false;
    out[i].last = std::min(out[i].last, shape[i] - 1);
  }
  return true;
}

// Calls f(flat index in the source) for every element of the selected box, in row-major order.
template <class F>
void for_each_index(const std::vector<IndexRange::Dim>& box, const std::vector<uint32_t>& shape, F&& f) {
  std::vector<uint32_t> at(box.size());
  for (size_t i = 0; i < box.size(); ++i) at[i] = box[i].first;
  for (;;) {
    size_t flat = 0;
    for (size_t i = 0; i < box.size(); ++i) flat = flat * shape[i] + at[i];
    f(flat);
    size_t d = box.size();
    while (d > 0) {
      --d;
      if (at[d] < box[d].last) {
        ++at[d];
        break;
      }
      at[d] = box[d].first;
      if (d == 0) return;
    }
  }
}

}  // namespace

std::optional<IndexRange> IndexRange::parse(std::string_view text, bool& ok) {
  ok = true;
  if (text.empty()) return std::nullopt;
  IndexRange r;
  while (true) {
    auto comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    Dim d;
    auto colon = part.find(':');
    if (colon == std::string_view::npos) {
      if (!parse_number(part, d.first)) break;
      d.last = d.first;
    } else {
      // Part 4 §7.27: "a:b" needs a < b.
      if (!parse_number(part.substr(0, colon), d.first) || !parse_number(part.substr(colon + 1), d.last) ||
          d.first >= d.last) {
        break;
      }
    }
    r.dims.push_back(d);
    if (comma == std::string_view::npos) return r;
    text.remove_prefix(comma + 1);
  }
  ok = false;
  return std::nullopt;
}

ua::StatusCode read_range(const ua::Variant& value, const IndexRange& range, ua::Variant& out) {
  if (value.is_scalar()) {
    // A String or ByteString is indexed by byte.
    const auto* s = value.get_if<ua::String>();
    const auto* b = value.get_if<ua::ByteString>();
    std::string_view bytes = s ? s->view() : b ? b->view() : std::string_view();
    if ((!s && !b) || range.dims.size() != 1 || range.dims[0].first >= bytes.size())
      return status::BadIndexRangeNoData;
    const uint32_t last = std::min<uint32_t>(range.dims[0].last, static_cast<uint32_t>(bytes.size() - 1));
    std::string_view sub = bytes.substr(range.dims[0].first, last - range.dims[0].first + 1);
    out = s ? ua::Variant(ua::String(sub)) : ua::Variant(ua::ByteString(sub));
    return status::Good;
  }
  if (!value.is_array()) return status::BadIndexRangeNoData;
  const std::vector<uint32_t> shape = shape_of(value);
  if (range.dims.size() != shape.size()) return status::BadIndexRangeNoData;
  std::vector<IndexRange::Dim> box;
  if (!clamp(range, shape, box)) return status::BadIndexRangeNoData;
  std::visit(
      [&](const auto& src) {
        using V = std::decay_t<decltype(src)>;
        if constexpr (is_vector<V>) {
          V part;
          for_each_index(box, shape, [&](size_t i) { part.push_back(src[i]); });
          out = ua::Variant(std::move(part));
        }
      },
      value.storage());
  if (shape.size() > 1) {
    std::vector<int32_t> dims;
    for (const auto& d : box) dims.push_back(static_cast<int32_t>(d.last - d.first + 1));
    out.set_dimensions(std::move(dims));
  }
  return status::Good;
}

ua::StatusCode write_range(ua::Variant& target, const IndexRange& range, const ua::Variant& part) {
  if (target.is_scalar()) {
    auto* s = target.get_if<ua::String>();
    auto* b = target.get_if<ua::ByteString>();
    if ((!s && !b) || range.dims.size() != 1) return status::BadIndexRangeNoData;
    const auto* ps = part.get_if<ua::String>();
    const auto* pb = part.get_if<ua::ByteString>();
    if ((s && !ps) || (b && !pb)) return status::BadTypeMismatch;
    std::string bytes(s ? s->view() : b->view());
    std::string_view with = ps ? ps->view() : pb->view();
    const auto& d = range.dims[0];
    if (d.last >= bytes.size()) return status::BadIndexRangeNoData;
    if (with.size() != d.last - d.first + 1) return status::BadIndexRangeInvalid;
    bytes.replace(d.first, with.size(), with);
    target = s ? ua::Variant(ua::String(std::move(bytes))) : ua::Variant(ua::ByteString(std::move(bytes)));
    return status::Good;
  }
  if (!target.is_array()) return status::BadIndexRangeNoData;
  if (!part.is_array() || part.type() != target.type()) return status::BadTypeMismatch;
  const std::vector<uint32_t> shape = shape_of(target);
  if (range.dims.size() != shape.size()) return status::BadIndexRangeNoData;
  size_t selected = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (range.dims[i].last >= shape[i]) return status::BadIndexRangeNoData;
    selected *= range.dims[i].last - range.dims[i].first + 1;
  }
  if (part.array_length() != selected) return status::BadIndexRangeInvalid;
  std::visit(
      [&](auto& dst) {
        using V = std::decay_t<decltype(dst)>;
        if constexpr (is_vector<V>) {
          const V& src = *part.get_if<V>();
          size_t k = 0;
          for_each_index(range.dims, shape, [&](size_t i) { dst[i] = src[k++]; });
        }
      },
      target.storage());
  return status::Good;
}

}  // namespace opcuad::services
