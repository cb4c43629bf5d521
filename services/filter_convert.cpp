#include "services/filter_convert.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace opcuad::services::filter {
namespace {

using ua::BuiltinType;
using BT = ua::BuiltinType;

// The Conversion Rules table of Part 4 §7.7.3 (Table 125 in v1.05, Table 122 in v1.04, §7.4.3), source
// type by row, target type by column, both in built-in type order from Boolean (1) to LocalizedText (21)
// (the specification's table has its own order): I implicit, E explicit (Cast only), '-' none.
// Between numbers a conversion towards the type of higher data precedence is implicit and the other
// direction explicit; String converts implicitly to the types that rank above it (the numbers, Boolean,
// Guid) and the ids and names below it convert implicitly to String; StatusCode converts to and from the
// 32- and 64-bit integers and UInt16 only; there is no ByteString to String and no StatusCode to Int16.
// One character per column: Boolean, SByte, Byte, Int16, UInt16, Int32, UInt32, Int64, UInt64, Float, Double,
// String, DateTime, Guid, ByteString, XmlElement, NodeId, ExpandedNodeId, StatusCode, QualifiedName,
// LocalizedText.
constexpr const char* kRules[21] = {
    /* Boolean        */ "IIIIIIIIIIIE---------",
    /* SByte          */ "EIEIIIIIIIIE---------",
    /* Byte           */ "EIIIIIIIIIIE---------",
    /* Int16          */ "EEEIEIIIIIIE---------",
    /* UInt16         */ "EEEIIIIIIIIE------I--",
    /* Int32          */ "EEEEEIEIIIIE------E--",
    /* UInt32         */ "EEEEEIIIIIIE------E--",
    /* Int64          */ "EEEEEEEIEIIE------E--",
    /* UInt64         */ "EEEEEEEIIIIE------E--",
    /* Float          */ "EEEEEEEEEIIE---------",
    /* Double         */ "EEEEEEEEEEIE---------",
    /* String         */ "IIIIIIIIIIIIEI--EE-EE",
    /* DateTime       */ "-----------EI--------",
    /* Guid           */ "-----------E-IE------",
    /* ByteString     */ "-------------EI------",
    /* XmlElement     */ "---------------I-----",
    /* NodeId         */ "-----------I----II---",
    /* ExpandedNodeId */ "-----------I----EI---",
    /* StatusCode     */ "----EIIII---------I--",
    /* QualifiedName  */ "-----------I-------II",
    /* LocalizedText  */ "-----------I--------I",
};

bool is_signed(BT t) {
  return t == BT::SByte || t == BT::Int16 || t == BT::Int32 || t == BT::Int64;
}
bool is_unsigned(BT t) {
  return t == BT::Byte || t == BT::UInt16 || t == BT::UInt32 || t == BT::UInt64;
}
bool is_float(BT t) {
  return t == BT::Float || t == BT::Double;
}
bool is_integer(BT t) {
  return is_signed(t) || is_unsigned(t);
}
bool is_number(BT t) {
  return is_integer(t) || is_float(t);
}

// The range of an integer type, as the widest types hold it.
void int_range(BT t, int64_t& lo, uint64_t& hi) {
  switch (t) {
    case BT::SByte:
      lo = INT8_MIN, hi = INT8_MAX;
      return;
    case BT::Byte:
      lo = 0, hi = UINT8_MAX;
      return;
    case BT::Int16:
      lo = INT16_MIN, hi = INT16_MAX;
      return;
    case BT::UInt16:
      lo = 0, hi = UINT16_MAX;
      return;
    case BT::Int32:
      lo = INT32_MIN, hi = INT32_MAX;
      return;
    case BT::UInt32:
      lo = 0, hi = UINT32_MAX;
      return;
    case BT::Int64:
      lo = INT64_MIN, hi = INT64_MAX;
      return;
    default:
      lo = 0, hi = UINT64_MAX;
      return;
  }
}

// A number held as what it is: a signed value, an unsigned value or a double.
struct Num {
  enum Kind : uint8_t { S, U, D } kind = S;
  int64_t s = 0;
  uint64_t u = 0;
  double d = 0;
};

// Stores a number into `out` as integer type `to`, failing when it is out of range. Part 4 §7.7.3 rounds
// a Float or Double by adding 0.5 and truncating. opcuad truncates towards minus infinity (the largest
// integer not above value + 0.5): halves go up (2.5 to 3, -2.5 to -2) and negative values still round to
// the nearest (-2.7 to -3), where truncating towards zero would turn -2.7 into -2. The fraction is taken
// as value - floor(value), which is exact, as adding 0.5 first would round 0.49999999999999994 up to 1.
bool store_int(const Num& n, BT to, FilterValue& out) {
  int64_t lo;
  uint64_t hi;
  int_range(to, lo, hi);
  out = FilterValue{};
  out.type = to;
  if (n.kind == Num::D) {
    if (!std::isfinite(n.d)) return false;
    double r = std::floor(n.d);
    if (n.d - r >= 0.5) r += 1;
    if (r < static_cast<double>(lo) || r >= 18446744073709551616.0) return false;
    if (r < 0) {
      const auto v = static_cast<int64_t>(r);
      if (is_unsigned(to)) return false;
      out.i = v;
      return true;
    }
    if (r > static_cast<double>(hi)) return false;
    const auto v = static_cast<uint64_t>(r);
    if (v > hi) return false;
    if (is_unsigned(to)) {
      out.u = v;
    } else {
      out.i = static_cast<int64_t>(v);
    }
    return true;
  }
  if (n.kind == Num::S && n.s < 0) {
    if (n.s < lo) return false;
    if (is_unsigned(to)) return false;
    out.i = n.s;
    return true;
  }
  const uint64_t v = n.kind == Num::S ? static_cast<uint64_t>(n.s) : n.u;
  if (v > hi) return false;
  if (is_unsigned(to)) {
    out.u = v;
  } else {
    out.i = static_cast<int64_t>(v);
  }
  return true;
}

bool store_number(const Num& n, BT to, FilterValue& out) {
  if (is_integer(to)) return store_int(n, to, out);
  out = FilterValue{};
  out.type = to;
  const double d = n.kind == Num::D   ? n.d
                   : n.kind == Num::S ? static_cast<double>(n.s)
                                      : static_cast<double>(n.u);
  if (to == BT::Float) {
    // A finite Double beyond Float's range does not convert; infinities and NaN carry over.
    if (std::isfinite(d) && std::fabs(d) > std::numeric_limits<float>::max()) return false;
    out.d = static_cast<float>(d);
  } else {
    out.d = d;
  }
  return true;
}

bool number_of(const FilterValue& v, Num& n) {
  if (is_signed(v.type)) {
    n.kind = Num::S, n.s = v.i;
  } else if (is_unsigned(v.type)) {
    n.kind = Num::U, n.u = v.u;
  } else if (is_float(v.type)) {
    n.kind = Num::D, n.d = v.d;
  } else if (v.type == BT::Boolean) {
    n.kind = Num::U, n.u = v.b ? 1 : 0;
  } else {
    return false;
  }
  return true;
}

bool equal_ci(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    char x = a[k], y = b[k];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// A number from its text (Part 4 §7.7.3: String to a number parses the text form; failure fails).
bool parse_number(std::string_view t, BT to, FilterValue& out) {
  const char* b = t.data();
  const char* e = b + t.size();
  if (!t.empty() && *b == '+') ++b;
  if (is_float(to)) {
    double d = 0;
    auto r = std::from_chars(b, e, d);
    if (r.ec != std::errc() || r.ptr != e || b == e) return false;
    return store_number(Num{Num::D, 0, 0, d}, to, out);
  }
  if (b != e && *b == '-') {
    int64_t s = 0;
    auto r = std::from_chars(b, e, s);
    if (r.ec != std::errc() || r.ptr != e) return false;
    return store_int(Num{Num::S, s, 0, 0}, to, out);
  }
  uint64_t u = 0;
  auto r = std::from_chars(b, e, u);
  if (r.ec != std::errc() || r.ptr != e || b == e) return false;
  return store_int(Num{Num::U, 0, u, 0}, to, out);
}

// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (m 1..12, d 1..31).
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;                                   // 0..399
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;  // 0..365, from March
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;           // 0..146096
  return era * 146097 + doe - 719468;
}

// A DateTime from its ISO 8601 text, the form DateTime converts to: "YYYY-MM-DDThh:mm:ss", an optional
// fraction of a second (digits beyond the 7th, below 100 ns, are dropped) and a zone, "Z" or "+hh:mm" /
// "-hh:mm". A text without a zone is refused, as its instant is unknown. Years 1601..9999, the range
// Part 6 gives DateTime.
bool parse_date_time(std::string_view t, FilterValue& out) {
  size_t at = 0;
  auto digits = [&](size_t n, int& v) {
    if (t.size() - at < n) return false;
    v = 0;
    for (size_t k = 0; k < n; ++k) {
      const char c = t[at + k];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    at += n;
    return true;
  };
  auto sep = [&](char c) {
    if (at >= t.size() || t[at] != c) return false;
    ++at;
    return true;
  };
  int y, mo, d, h, mi, sec;
  if (!digits(4, y) || !sep('-') || !digits(2, mo) || !sep('-') || !digits(2, d)) return false;
  if (at >= t.size() || (t[at] != 'T' && t[at] != 't')) return false;
  ++at;
  if (!digits(2, h) || !sep(':') || !digits(2, mi) || !sep(':') || !digits(2, sec)) return false;
  static constexpr int kMonthDays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1601 || mo < 1 || mo > 12 || d < 1 || d > kMonthDays[mo - 1] || h > 23 || mi > 59 || sec > 59) {
    return false;
  }
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo == 2 && d == 29 && !leap) return false;
  int64_t frac = 0;
  if (at < t.size() && t[at] == '.') {
    ++at;
    const size_t first = at;
    int scale = 0;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9') {
      if (scale < 7) frac = frac * 10 + (t[at] - '0'), ++scale;
      ++at;
    }
    if (at == first) return false;
    for (; scale < 7; ++scale) frac *= 10;
  }
  int64_t offset_min = 0;
  if (at < t.size() && (t[at] == 'Z' || t[at] == 'z')) {
    ++at;
  } else if (at < t.size() && (t[at] == '+' || t[at] == '-')) {
    const int sign = t[at] == '-' ? -1 : 1;
    ++at;
    int oh, om;
    if (!digits(2, oh) || !sep(':') || !digits(2, om) || oh > 23 || om > 59) return false;
    offset_min = sign * (oh * 60 + om);
  } else {
    return false;
  }
  if (at != t.size()) return false;
  const int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset_min * 60;
  const int64_t ticks = ua::DateTime::kUnixEpochTicks + secs * 10000000 + frac;
  // The zone can carry the instant just outside the years; Part 6 keeps DateTime within them.
  constexpr int64_t kLastTicks = 2650467743999999999LL;  // 9999-12-31T23:59:59.9999999Z
  if (ticks < 0 || ticks > kLastTicks) return false;
  out = FilterValue{};
  out.type = BT::DateTime;
  out.i = ticks;
  return true;
}

FilterValue text_value(BT type, std::string_view t) {
  FilterValue r;
  r.type = type;
  r.text = t;
  return r;
}

// The text form of a scalar, for the conversions to String.
bool to_text(const FilterValue& in, ConvertScratch& s, std::string_view& out) {
  char* b = s.digits.data();
  char* e = b + s.digits.size();
  std::to_chars_result r{};
  switch (in.type) {
    case BT::Boolean:
      out = in.b ? "true" : "false";
      return true;
    case BT::SByte:
    case BT::Int16:
    case BT::Int32:
    case BT::Int64:
      r = std::to_chars(b, e, in.i);
      break;
    case BT::Byte:
    case BT::UInt16:
    case BT::UInt32:
    case BT::UInt64:
      r = std::to_chars(b, e, in.u);
      break;
    case BT::Float:
      r = std::to_chars(b, e, static_cast<float>(in.d));
      break;
    case BT::Double:
      r = std::to_chars(b, e, in.d);
      break;
    case BT::String:
    case BT::LocalizedText:
    case BT::QualifiedName:
      out = in.text;
      return true;  // the name; the namespace index is dropped
    case BT::DateTime:
      s.text = ua::DateTime{in.i}.to_string();
      out = s.text;
      return true;
    case BT::Guid:
      s.text = in.guid.to_string();
      out = s.text;
      return true;
    case BT::NodeId:
      s.text = in.node->to_string();
      out = s.text;
      return true;
    case BT::ExpandedNodeId:
      s.text = in.expanded ? in.expanded->to_string() : in.node->to_string();
      out = s.text;
      return true;
    default:
      return false;
  }
  if (r.ec != std::errc()) return false;
  out = std::string_view(b, static_cast<size_t>(r.ptr - b));
  return true;
}

}  // namespace

Conversion conversion_rule(BT from, BT to) noexcept {
  const auto f = static_cast<uint8_t>(from), t = static_cast<uint8_t>(to);
  if (f < 1 || f > 21 || t < 1 || t > 21) return Conversion::None;
  switch (kRules[f - 1][t - 1]) {
    case 'I':
      return Conversion::Implicit;
    case 'E':
      return Conversion::Explicit;
    default:
      return Conversion::None;
  }
}

int precedence(BT t) noexcept {
  switch (t) {
    case BT::Double:
      return 1;
    case BT::Float:
      return 2;
    case BT::Int64:
      return 3;
    case BT::UInt64:
      return 4;
    case BT::Int32:
      return 5;
    case BT::UInt32:
      return 6;
    case BT::StatusCode:
      return 7;
    case BT::Int16:
      return 8;
    case BT::UInt16:
      return 9;
    case BT::SByte:
      return 10;
    case BT::Byte:
      return 11;
    case BT::Boolean:
      return 12;
    case BT::Guid:
      return 13;
    case BT::String:
      return 14;
    case BT::ExpandedNodeId:
      return 15;
    case BT::NodeId:
      return 16;
    case BT::LocalizedText:
      return 17;
    case BT::QualifiedName:
      return 18;
    default:
      return 0;
  }
}

FilterValue view_of(const ua::Variant* v) noexcept {
  FilterValue r;
  if (v == nullptr || v->is_empty()) return r;
  r.type = v->type();
  r.source = v;
  if (v->is_array()) {
    r.array = true;
    return r;
  }
  const auto& st = v->storage();
  switch (r.type) {
    case BT::Boolean:
      r.b = std::get<bool>(st);
      break;
    case BT::SByte:
      r.i = std::get<int8_t>(st);
      break;
    case BT::Byte:
      r.u = std::get<uint8_t>(st);
      break;
    case BT::Int16:
      r.i = std::get<int16_t>(st);
      break;
    case BT::UInt16:
      r.u = std::get<uint16_t>(st);
      break;
    case BT::Int32:
      r.i = std::get<int32_t>(st);
      break;
    case BT::UInt32:
      r.u = std::get<uint32_t>(st);
      break;
    case BT::Int64:
      r.i = std::get<int64_t>(st);
      break;
    case BT::UInt64:
      r.u = std::get<uint64_t>(st);
      break;
    case BT::Float:
      r.d = std::get<float>(st);
      break;
    case BT::Double:
      r.d = std::get<double>(st);
      break;
    case BT::String: {
      const auto& s = std::get<ua::String>(st);
      r.text = s.view(), r.text_null = s.is_null();
      break;
    }
    case BT::ByteString: {
      const auto& s = std::get<ua::ByteString>(st);
      r.text = s.view(), r.text_null = s.is_null();
      break;
    }
    case BT::XmlElement:
      r.text = std::get<ua::XmlElement>(st).view();
      break;
    case BT::DateTime:
      r.i = std::get<ua::DateTime>(st).ticks;
      break;
    case BT::Guid:
      r.guid = std::get<ua::Guid>(st);
      break;
    case BT::NodeId:
      r.node = &std::get<ua::NodeId>(st);
      break;
    case BT::ExpandedNodeId:
      r.expanded = &std::get<ua::ExpandedNodeId>(st);
      r.node = &r.expanded->node_id;
      break;
    case BT::StatusCode:
      r.u = std::get<ua::StatusCode>(st).value();
      break;
    case BT::QualifiedName: {
      const auto& q = std::get<ua::QualifiedName>(st);
      r.u = q.namespace_index, r.text = q.name.view();
      break;
    }
    case BT::LocalizedText: {
      const auto& l = std::get<ua::LocalizedText>(st);
      r.text = l.text.view(), r.locale = l.locale.view();
      break;
    }
    default:
      break;  // ExtensionObject, DataValue, DiagnosticInfo: compared through `source`
  }
  return r;
}

bool convert(const FilterValue& in, BT to, bool explicit_cast, ConvertScratch& s, FilterValue& out) noexcept {
  if (in.is_null() || in.array) return false;
  if (in.type == to) {
    out = in;
    return true;
  }
  const Conversion rule = conversion_rule(in.type, to);
  if (rule == Conversion::None || (rule == Conversion::Explicit && !explicit_cast)) return false;
  try {
    Num n;
    // Numbers and Boolean among themselves.
    if (number_of(in, n) && (is_number(to) || to == BT::Boolean)) {
      if (to == BT::Boolean) {
        out = boolean(n.kind == Num::D ? n.d != 0 : n.kind == Num::S ? n.s != 0 : n.u != 0);
        return true;
      }
      return store_number(n, to, out);
    }
    // StatusCode (Part 4 §7.7.3): its 32 bits as an integer; to UInt16 its top 16 bits (the code without
    // the info bits); from UInt16 the code in the top 16 bits.
    if (in.type == BT::StatusCode) {
      if (to == BT::UInt16) {
        out = FilterValue{};
        out.type = BT::UInt16;
        out.u = in.u >> 16;
        return true;
      }
      return store_int(Num{Num::U, 0, in.u, 0}, to, out);
    }
    if (to == BT::StatusCode) {
      if (!number_of(in, n)) return false;
      FilterValue tmp;
      if (in.type == BT::UInt16) {
        out = FilterValue{};
        out.type = BT::StatusCode;
        out.u = in.u << 16;
        return true;
      }
      if (!store_int(n, BT::UInt32, tmp)) return false;
      out = FilterValue{};
      out.type = BT::StatusCode;
      out.u = tmp.u;
      return true;
    }
    switch (to) {
      case BT::String: {
        std::string_view t;
        if (!to_text(in, s, t)) return false;
        out = text_value(BT::String, t);
        return true;
      }
      case BT::LocalizedText:  // from String and QualifiedName: the text, no locale
        out = text_value(BT::LocalizedText, in.text);
        return true;
      case BT::QualifiedName:  // from String: namespace 0
        out = text_value(BT::QualifiedName, in.text);
        return true;
      case BT::Boolean: {  // from String: "true" / "false" (any case) or "1" / "0"
        if (equal_ci(in.text, "true") || in.text == "1") {
          out = boolean(true);
        } else if (equal_ci(in.text, "false") || in.text == "0") {
          out = boolean(false);
        } else {
          return false;
        }
        return true;
      }
      case BT::Guid: {
        out = FilterValue{};
        out.type = BT::Guid;
        if (in.type == BT::String) {
          auto g = ua::Guid::parse(in.text);
          if (!g) return false;
          out.guid = *g;
          return true;
        }
        // ByteString: the 16 bytes of the Guid's binary encoding (Part 6 §5.2.2.7).
        if (in.text.size() != 16) return false;
        const auto* p = reinterpret_cast<const uint8_t*>(in.text.data());
        out.guid.data1 =
            static_cast<uint32_t>(p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24);
        out.guid.data2 = static_cast<uint16_t>(p[4] | p[5] << 8);
        out.guid.data3 = static_cast<uint16_t>(p[6] | p[7] << 8);
        for (int k = 0; k < 8; ++k) out.guid.data4[static_cast<size_t>(k)] = p[8 + k];
        return true;
      }
      case BT::ByteString: {  // from Guid: its binary encoding, in the scratch text
        const auto& g = in.guid;
        s.text.resize(16);
        auto* p = reinterpret_cast<uint8_t*>(s.text.data());
        for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(g.data1 >> (8 * k));
        p[4] = static_cast<uint8_t>(g.data2), p[5] = static_cast<uint8_t>(g.data2 >> 8);
        p[6] = static_cast<uint8_t>(g.data3), p[7] = static_cast<uint8_t>(g.data3 >> 8);
        for (size_t k = 0; k < 8; ++k) p[8 + k] = g.data4[k];
        out = text_value(BT::ByteString, s.text);
        return true;
      }
      case BT::NodeId: {
        out = FilterValue{};
        out.type = BT::NodeId;
        if (in.type == BT::ExpandedNodeId) {  // only an ExpandedNodeId of this server, by index
          if (in.expanded && !in.expanded->is_local()) return false;
          out.node = in.node;
          return true;
        }
        auto p = ua::NodeId::parse(in.text);
        if (!p) return false;
        s.node = std::move(*p.value);
        out.node = &s.node;
        return true;
      }
      case BT::ExpandedNodeId: {
        out = FilterValue{};
        out.type = BT::ExpandedNodeId;
        if (in.type == BT::NodeId) {
          out.node = in.node;
          return true;
        }
        auto p = ua::ExpandedNodeId::parse(in.text);
        if (!p) return false;
        s.expanded = std::move(*p.value);
        out.expanded = &s.expanded;
        out.node = &s.expanded.node_id;
        return true;
      }
      case BT::DateTime:  // from String
        return parse_date_time(in.text, out);
      default:
        break;
    }
    if (is_number(to) && in.type == BT::String) return parse_number(in.text, to, out);
    return false;
  } catch (...) {
    // Only the text forms of ids allocate; a failed allocation fails the conversion.
    return false;
  }
}

namespace {

template <class T>
Compared order(const T& a, const T& b) {
  if (a < b) return Compared::Less;
  if (b < a) return Compared::Greater;
  return Compared::Equal;
}

Compared same_type(const FilterValue& a, const FilterValue& b) {
  switch (a.type) {
    case BT::Boolean:
      return order(a.b, b.b);
    case BT::SByte:
    case BT::Int16:
    case BT::Int32:
    case BT::Int64:
    case BT::DateTime:
      return order(a.i, b.i);
    case BT::Byte:
    case BT::UInt16:
    case BT::UInt32:
    case BT::UInt64:
    case BT::StatusCode:
      return order(a.u, b.u);
    case BT::Float:
    case BT::Double:
      if (std::isnan(a.d) || std::isnan(b.d)) return Compared::Unequal;
      return order(a.d, b.d);
    case BT::String:
    case BT::ByteString:
      if (a.text_null || b.text_null) return a.text_null == b.text_null ? Compared::Equal : Compared::Unequal;
      return order(a.text, b.text);
    case BT::XmlElement:
      return a.text == b.text ? Compared::Equal : Compared::Unequal;
    case BT::Guid:
      return a.guid == b.guid ? Compared::Equal : Compared::Unequal;
    case BT::NodeId:
      return *a.node == *b.node ? Compared::Equal : Compared::Unequal;
    case BT::ExpandedNodeId: {
      const bool la = a.expanded == nullptr || a.expanded->is_local();
      const bool lb = b.expanded == nullptr || b.expanded->is_local();
      if (la && lb) return *a.node == *b.node ? Compared::Equal : Compared::Unequal;
      if (la != lb) return Compared::Unequal;
      return *a.expanded == *b.expanded ? Compared::Equal : Compared::Unequal;
    }
    case BT::QualifiedName:
      return a.u == b.u && a.text == b.text ? Compared::Equal : Compared::Unequal;
    case BT::LocalizedText:
      return a.text == b.text && a.locale == b.locale ? Compared::Equal : Compared::Unequal;
    default:
      if (a.source && b.source) return *a.source == *b.source ? Compared::Equal : Compared::Unequal;
      return Compared::Failed;
  }
}

}  // namespace

Compared compare(const FilterValue& a, const FilterValue& b, ConvertScratch& s) noexcept {
  if (a.is_null() || b.is_null()) return Compared::Failed;
  if (a.array || b.array) {
    // Arrays compare for equality only, element by element, when both are arrays of one type.
    if (!(a.array && b.array) || a.type != b.type) return Compared::Failed;
    return *a.source == *b.source ? Compared::Equal : Compared::Unequal;
  }
  if (a.type == b.type) return same_type(a, b);
  const int pa = precedence(a.type), pb = precedence(b.type);
  if (pa == 0 || pb == 0) return Compared::Failed;
  FilterValue c;
  // The operand of lower precedence (the larger number) is converted to the other's type.
  if (pa > pb) {
    if (!convert(a, b.type, false, s, c)) return Compared::Failed;
    return same_type(c, b);
  }
  if (!convert(b, a.type, false, s, c)) return Compared::Failed;
  return same_type(a, c);
}

ua::Variant to_variant(const FilterValue& v) {
  if (v.array && v.source) return *v.source;
  switch (v.type) {
    case BT::Boolean:
      return ua::Variant(v.b);
    case BT::SByte:
      return ua::Variant(static_cast<int8_t>(v.i));
    case BT::Byte:
      return ua::Variant(static_cast<uint8_t>(v.u));
    case BT::Int16:
      return ua::Variant(static_cast<int16_t>(v.i));
    case BT::UInt16:
      return ua::Variant(static_cast<uint16_t>(v.u));
    case BT::Int32:
      return ua::Variant(static_cast<int32_t>(v.i));
    case BT::UInt32:
      return ua::Variant(static_cast<uint32_t>(v.u));
    case BT::Int64:
      return ua::Variant(v.i);
    case BT::UInt64:
      return ua::Variant(v.u);
    case BT::Float:
      return ua::Variant(static_cast<float>(v.d));
    case BT::Double:
      return ua::Variant(v.d);
    case BT::String:
      return ua::Variant(ua::String(v.text));
    case BT::ByteString:
      return ua::Variant(ua::ByteString(v.text));
    case BT::DateTime:
      return ua::Variant(ua::DateTime{v.i});
    case BT::Guid:
      return ua::Variant(v.guid);
    case BT::NodeId:
      return ua::Variant(*v.node);
    case BT::ExpandedNodeId:
      if (v.expanded) return ua::Variant(*v.expanded);
      return ua::Variant(ua::ExpandedNodeId{*v.node, {}, 0});
    case BT::StatusCode:
      return ua::Variant(ua::StatusCode(static_cast<uint32_t>(v.u)));
    case BT::QualifiedName:
      return ua::Variant(ua::QualifiedName{static_cast<uint16_t>(v.u), ua::String(v.text)});
    case BT::LocalizedText: {
      ua::LocalizedText l;  // an empty locale is left null, as a text converted from a String has none
      if (!v.locale.empty()) l.locale = ua::String(v.locale);
      l.text = ua::String(v.text);
      return ua::Variant(std::move(l));
    }
    default:
      return v.source ? *v.source : ua::Variant();
  }
}

}  // namespace opcuad::services::filter
