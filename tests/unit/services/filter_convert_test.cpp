// The conversion rules, data precedence and comparisons of ContentFilter operands (Part 4 §7.7.3).
#include <catch2/catch.hpp>

#include "services/filter_convert.hpp"

// A namespace of its own: the unit tests are built as unity sources.
namespace opcuad::services::filter::convert_test {
namespace {

using BT = ua::BuiltinType;

// Converts `v` to `to` and returns the result as a Variant (empty when the conversion fails).
ua::Variant conv(const ua::Variant& v, BT to, bool explicit_cast) {
  ConvertScratch s;
  FilterValue out;
  if (!convert(view_of(&v), to, explicit_cast, s, out)) return {};
  return to_variant(out);
}

Compared cmp(const ua::Variant& a, const ua::Variant& b) {
  ConvertScratch s;
  return compare(view_of(&a), view_of(&b), s);
}

}  // namespace

TEST_CASE("conversion rules: the diagonal, types outside the table, XmlElement", "[filter][convert]") {
  for (uint8_t t = 1; t <= 21; ++t) {
    CHECK(conversion_rule(static_cast<BT>(t), static_cast<BT>(t)) == Conversion::Implicit);
  }
  for (BT t : {BT::ExtensionObject, BT::DataValue, BT::Variant, BT::DiagnosticInfo, BT::Null}) {
    CHECK(conversion_rule(t, BT::String) == Conversion::None);
    CHECK(conversion_rule(BT::String, t) == Conversion::None);
  }
  for (uint8_t t = 1; t <= 21; ++t) {
    if (t == static_cast<uint8_t>(BT::XmlElement)) continue;
    CHECK(conversion_rule(BT::XmlElement, static_cast<BT>(t)) == Conversion::None);
    CHECK(conversion_rule(static_cast<BT>(t), BT::XmlElement) == Conversion::None);
  }
}

TEST_CASE("conversion rules: every implicit cell converts towards higher data precedence",
          "[filter][convert]") {
  // The implicit conversions are the ones an operand of lower precedence takes to the other's type; a cell
  // marked implicit against the precedence order would never be used and would signal a transcription slip.
  for (uint8_t a = 1; a <= 21; ++a) {
    for (uint8_t b = 1; b <= 21; ++b) {
      if (a == b) continue;
      const BT from = static_cast<BT>(a), to = static_cast<BT>(b);
      if (conversion_rule(from, to) != Conversion::Implicit) continue;
      INFO(ua::builtin_type_name(from) << " -> " << ua::builtin_type_name(to));
      REQUIRE(precedence(from) != 0);
      REQUIRE(precedence(to) != 0);
      CHECK(precedence(to) < precedence(from));
    }
  }
}

TEST_CASE("conversion rules: cells that matter", "[filter][convert]") {
  // Numbers: widening implicit, narrowing explicit.
  CHECK(conversion_rule(BT::Int32, BT::Double) == Conversion::Implicit);
  CHECK(conversion_rule(BT::UInt16, BT::Int32) == Conversion::Implicit);
  CHECK(conversion_rule(BT::Byte, BT::SByte) == Conversion::Implicit);
  CHECK(conversion_rule(BT::Double, BT::Int32) == Conversion::Explicit);
  CHECK(conversion_rule(BT::Int64, BT::UInt64) == Conversion::Explicit);
  CHECK(conversion_rule(BT::UInt64, BT::Int64) == Conversion::Implicit);
  // Boolean and String.
  CHECK(conversion_rule(BT::Boolean, BT::Int32) == Conversion::Implicit);
  CHECK(conversion_rule(BT::Int32, BT::Boolean) == Conversion::Explicit);
  CHECK(conversion_rule(BT::String, BT::Int32) == Conversion::Implicit);
  CHECK(conversion_rule(BT::Int32, BT::String) == Conversion::Explicit);
  CHECK(conversion_rule(BT::String, BT::Boolean) == Conversion::Implicit);
  CHECK(conversion_rule(BT::String, BT::Guid) == Conversion::Implicit);
  CHECK(conversion_rule(BT::String, BT::DateTime) == Conversion::Explicit);
  CHECK(conversion_rule(BT::DateTime, BT::String) == Conversion::Explicit);
  CHECK(conversion_rule(BT::DateTime, BT::Int64) == Conversion::None);
  CHECK(conversion_rule(BT::String, BT::ByteString) == Conversion::None);
  CHECK(conversion_rule(BT::ByteString, BT::String) == Conversion::None);
  // Ids and names.
  CHECK(conversion_rule(BT::NodeId, BT::String) == Conversion::Implicit);
  CHECK(conversion_rule(BT::NodeId, BT::ExpandedNodeId) == Conversion::Implicit);
  CHECK(conversion_rule(BT::ExpandedNodeId, BT::NodeId) == Conversion::Explicit);
  CHECK(conversion_rule(BT::String, BT::NodeId) == Conversion::Explicit);
  CHECK(conversion_rule(BT::LocalizedText, BT::String) == Conversion::Implicit);
  CHECK(conversion_rule(BT::QualifiedName, BT::LocalizedText) == Conversion::Implicit);
  CHECK(conversion_rule(BT::Guid, BT::ByteString) == Conversion::Explicit);
  CHECK(conversion_rule(BT::ByteString, BT::Guid) == Conversion::Explicit);
  // StatusCode: the 32- and 64-bit integers and UInt16, not Int16.
  CHECK(conversion_rule(BT::StatusCode, BT::UInt32) == Conversion::Implicit);
  CHECK(conversion_rule(BT::StatusCode, BT::UInt16) == Conversion::Explicit);
  CHECK(conversion_rule(BT::StatusCode, BT::Int16) == Conversion::None);
  CHECK(conversion_rule(BT::UInt32, BT::StatusCode) == Conversion::Explicit);
  CHECK(conversion_rule(BT::Double, BT::StatusCode) == Conversion::None);
}

TEST_CASE("data precedence: the order of Part 4 and the unlisted types", "[filter][convert]") {
  const BT order[] = {BT::Double, BT::Float,         BT::Int64,        BT::UInt64, BT::Int32,
                      BT::UInt32, BT::StatusCode,    BT::Int16,        BT::UInt16, BT::SByte,
                      BT::Byte,   BT::Boolean,       BT::Guid,         BT::String, BT::ExpandedNodeId,
                      BT::NodeId, BT::LocalizedText, BT::QualifiedName};
  for (size_t i = 0; i < std::size(order); ++i) CHECK(precedence(order[i]) == static_cast<int>(i + 1));
  for (BT t : {BT::DateTime, BT::ByteString, BT::XmlElement, BT::ExtensionObject, BT::DataValue}) {
    CHECK(precedence(t) == 0);
  }
}

TEST_CASE("convert: numbers", "[filter][convert]") {
  CHECK(conv(int32_t{7}, BT::Double, false) == ua::Variant(7.0));
  CHECK(conv(uint16_t{65535}, BT::Int32, false) == ua::Variant(int32_t{65535}));
  CHECK(conv(int8_t{-1}, BT::UInt16, false).is_empty());  // implicit, but the value does not fit
  CHECK(conv(int64_t{1} << 40, BT::Float, false) == ua::Variant(static_cast<float>(1LL << 40)));
  // Float and Double to integers: explicit only, range-checked.
  CHECK(conv(2.5, BT::Int32, false).is_empty());
  CHECK(conv(2.4f, BT::Byte, true) == ua::Variant(uint8_t{2}));
  CHECK(conv(1e20, BT::Int32, true).is_empty());
  CHECK(conv(-0.7, BT::UInt32, true).is_empty());
  CHECK(conv(std::nan(""), BT::Int64, true).is_empty());
  CHECK(conv(1e300, BT::Float, true).is_empty());
  CHECK(conv(uint64_t{UINT64_MAX}, BT::Int64, false).is_empty());
  CHECK(conv(int64_t{-5}, BT::UInt64, true).is_empty());
  CHECK(conv(uint64_t{300}, BT::Byte, true).is_empty());
  CHECK(conv(int32_t{-128}, BT::SByte, true) == ua::Variant(int8_t{-128}));
}

TEST_CASE("convert: Float and Double to integers add 0.5 and truncate (Part 4 §7.7.3)", "[filter][convert]") {
  CHECK(conv(2.5, BT::Int32, true) == ua::Variant(int32_t{3}));
  CHECK(conv(2.5f, BT::Byte, true) == ua::Variant(uint8_t{3}));
  CHECK(conv(-2.5, BT::Int32, true) == ua::Variant(int32_t{-2}));  // up, not away from zero
  CHECK(conv(-2.5f, BT::Int64, true) == ua::Variant(int64_t{-2}));
  CHECK(conv(-2.7, BT::Int16, true) == ua::Variant(int16_t{-3}));  // still the nearest integer
  CHECK(conv(-2.2, BT::SByte, true) == ua::Variant(int8_t{-2}));
  CHECK(conv(-0.5, BT::UInt32, true) == ua::Variant(uint32_t{0}));  // -0.5 + 0.5 fits
  CHECK(conv(0.49999999999999994, BT::Int32, true) == ua::Variant(int32_t{0}));
  CHECK(conv(4503599627370495.5, BT::Int64, true) == ua::Variant(int64_t{4503599627370496}));
  CHECK(conv(-128.5, BT::SByte, true) == ua::Variant(int8_t{-128}));
  CHECK(conv(127.5, BT::SByte, true).is_empty());
}

TEST_CASE("convert: Boolean", "[filter][convert]") {
  CHECK(conv(true, BT::Int32, false) == ua::Variant(int32_t{1}));
  CHECK(conv(false, BT::Double, false) == ua::Variant(0.0));
  CHECK(conv(int32_t{5}, BT::Boolean, false).is_empty());
  CHECK(conv(int32_t{5}, BT::Boolean, true) == ua::Variant(true));
  CHECK(conv(0.0, BT::Boolean, true) == ua::Variant(false));
  CHECK(conv(ua::String("TRUE"), BT::Boolean, false) == ua::Variant(true));
  CHECK(conv(ua::String("0"), BT::Boolean, false) == ua::Variant(false));
  CHECK(conv(ua::String("yes"), BT::Boolean, false).is_empty());
  CHECK(conv(true, BT::String, true) == ua::Variant(ua::String("true")));
}

TEST_CASE("convert: String and numbers", "[filter][convert]") {
  CHECK(conv(ua::String("42"), BT::Int32, false) == ua::Variant(int32_t{42}));
  CHECK(conv(ua::String("-42"), BT::Int16, false) == ua::Variant(int16_t{-42}));
  CHECK(conv(ua::String("+7"), BT::Byte, false) == ua::Variant(uint8_t{7}));
  CHECK(conv(ua::String("1.5e3"), BT::Double, false) == ua::Variant(1500.0));
  CHECK(conv(ua::String("4x"), BT::Int32, false).is_empty());
  CHECK(conv(ua::String(""), BT::Int32, false).is_empty());
  CHECK(conv(ua::String("70000"), BT::UInt16, false).is_empty());
  CHECK(conv(ua::String("-1"), BT::UInt32, false).is_empty());
  CHECK(conv(int32_t{-17}, BT::String, false).is_empty());  // numbers to String: explicit
  CHECK(conv(int32_t{-17}, BT::String, true) == ua::Variant(ua::String("-17")));
  CHECK(conv(uint64_t{UINT64_MAX}, BT::String, true) == ua::Variant(ua::String("18446744073709551615")));
  CHECK(conv(0.5, BT::String, true) == ua::Variant(ua::String("0.5")));
}

TEST_CASE("convert: StatusCode", "[filter][convert]") {
  const ua::Variant bad(ua::status::BadNodeIdUnknown);
  CHECK(conv(bad, BT::UInt32, false) == ua::Variant(uint32_t{0x80340000u}));
  CHECK(conv(bad, BT::Int64, false) == ua::Variant(int64_t{0x80340000LL}));
  CHECK(conv(bad, BT::Int32, false).is_empty());  // 0x80340000 does not fit an Int32
  CHECK(conv(bad, BT::UInt16, true) == ua::Variant(uint16_t{0x8034}));
  CHECK(conv(uint16_t{0x8034}, BT::StatusCode, false) == bad);
  CHECK(conv(uint32_t{0x80340000u}, BT::StatusCode, true) == bad);
  CHECK(conv(int16_t{1}, BT::StatusCode, true).is_empty());
}

TEST_CASE("convert: Guid, ByteString, DateTime", "[filter][convert]") {
  const auto g = *ua::Guid::parse("72962B91-FA75-4AE6-8D28-B404DC7DAF63");
  CHECK(conv(ua::String("72962b91-fa75-4ae6-8d28-b404dc7daf63"), BT::Guid, false) == ua::Variant(g));
  CHECK(conv(ua::String("not a guid"), BT::Guid, false).is_empty());
  const ua::Variant bytes = conv(g, BT::ByteString, true);
  REQUIRE(bytes.get_if<ua::ByteString>());
  CHECK(bytes.get_if<ua::ByteString>()->size() == 16);
  CHECK(static_cast<uint8_t>(bytes.get_if<ua::ByteString>()->view()[0]) == 0x91);  // Data1 little-endian
  CHECK(conv(bytes, BT::Guid, true) == ua::Variant(g));
  CHECK(conv(ua::ByteString("short"), BT::Guid, true).is_empty());
  CHECK(conv(g, BT::String, true) == ua::Variant(ua::String("72962b91-fa75-4ae6-8d28-b404dc7daf63")));
  const ua::DateTime t = ua::DateTime::from_unix_ms(0);
  CHECK(conv(t, BT::String, true) == ua::Variant(ua::String(t.to_string())));
  CHECK(conv(t, BT::Int64, true).is_empty());
}

TEST_CASE("convert: NodeId, ExpandedNodeId, names", "[filter][convert]") {
  const ua::NodeId n(2, ua::String("Tank.Level"));
  CHECK(conv(n, BT::String, false) == ua::Variant(ua::String("ns=2;s=Tank.Level")));
  CHECK(conv(ua::String("ns=2;s=Tank.Level"), BT::NodeId, true) == ua::Variant(n));
  CHECK(conv(ua::String("ns=2;s=Tank.Level"), BT::NodeId, false).is_empty());
  CHECK(conv(ua::String("ns=2;x"), BT::NodeId, true).is_empty());
  CHECK(conv(n, BT::ExpandedNodeId, false) == ua::Variant(ua::ExpandedNodeId{n, {}, 0}));
  CHECK(conv(ua::ExpandedNodeId{n, {}, 0}, BT::NodeId, true) == ua::Variant(n));
  CHECK(conv(ua::ExpandedNodeId{n, {}, 3}, BT::NodeId, true).is_empty());  // another server's node
  CHECK(conv(ua::LocalizedText{ua::String("en"), ua::String("Hot")}, BT::String, false) ==
        ua::Variant(ua::String("Hot")));
  CHECK(conv(ua::QualifiedName{3, ua::String("Level")}, BT::String, false) ==
        ua::Variant(ua::String("Level")));
  CHECK(conv(ua::String("Level"), BT::QualifiedName, true) ==
        ua::Variant(ua::QualifiedName{0, ua::String("Level")}));
  CHECK(conv(ua::String("Hot"), BT::LocalizedText, true) ==
        ua::Variant(ua::LocalizedText{{}, ua::String("Hot")}));
}

TEST_CASE("convert: String to DateTime parses ISO 8601 with a zone", "[filter][convert]") {
  using ua::DateTime;
  const auto dt = [](const char* text) { return conv(ua::String(text), BT::DateTime, true); };
  CHECK(dt("1970-01-01T00:00:00Z") == ua::Variant(DateTime::from_unix_ms(0)));
  CHECK(conv(ua::String("1970-01-01T00:00:00Z"), BT::DateTime, false).is_empty());  // explicit only
  CHECK(dt("2026-12-06T13:45:10.25Z") == ua::Variant(DateTime::from_unix_ms(1796564710250)));
  CHECK(dt("2026-12-06T14:45:10.25+01:00") == ua::Variant(DateTime::from_unix_ms(1796564710250)));
  CHECK(dt("2026-12-06T08:15:10.25-05:30") == ua::Variant(DateTime::from_unix_ms(1796564710250)));
  CHECK(dt("1970-01-01T00:00:00.123456789Z") == ua::Variant(DateTime{DateTime::kUnixEpochTicks + 1234567}));
  CHECK(dt("1601-01-01T00:00:00Z") == ua::Variant(DateTime{0}));
  CHECK(dt("9999-12-31T23:59:59.9999999Z") == ua::Variant(DateTime{2650467743999999999LL}));
  CHECK(dt("2024-02-29T00:00:00Z") == ua::Variant(DateTime::from_unix_ms(1709164800000)));
  // The text DateTime converts to reads back as the same instant.
  const DateTime t{DateTime::kUnixEpochTicks + 17965647102501234LL};
  CHECK(conv(conv(t, BT::String, true), BT::DateTime, true) == ua::Variant(t));
  for (const char* bad : {"",
                          "2026-12-06",
                          "2026-12-06T13:45:10",
                          "2026-12-06 13:45:10Z",
                          "2026-02-29T00:00:00Z",
                          "1900-02-29T00:00:00Z",
                          "2026-13-01T00:00:00Z",
                          "2026-04-31T00:00:00Z",
                          "2026-12-06T24:00:00Z",
                          "2026-12-06T13:60:00Z",
                          "2026-12-06T13:45:60Z",
                          "2026-12-06T13:45:10.Z",
                          "2026-12-06T13:45:10Zx",
                          "2026-12-06T13:45:10+01",
                          "2026-12-06T13:45:10+24:00",
                          "1600-12-31T23:59:59Z",
                          "1601-01-01T00:30:00+01:00",
                          "9999-12-31T23:59:59-00:01",
                          "10000-01-01T00:00:00Z",
                          "+2026-12-06T13:45:10Z",
                          "2026-1a-06T13:45:10Z"}) {
    INFO(bad);
    CHECK(dt(bad).is_empty());
  }
}

TEST_CASE("compare: numbers across types", "[filter][convert]") {
  CHECK(cmp(int32_t{5}, 5.0) == Compared::Equal);
  CHECK(cmp(uint16_t{700}, int32_t{500}) == Compared::Greater);  // Severity > 500
  CHECK(cmp(uint16_t{100}, int32_t{500}) == Compared::Less);
  CHECK(cmp(int8_t{-1}, uint8_t{255}) == Compared::Failed);          // Byte -> SByte fails for 255
  CHECK(cmp(int64_t{-1}, uint64_t{1}) == Compared::Less);            // UInt64 -> Int64
  CHECK(cmp(uint64_t{UINT64_MAX}, int64_t{1}) == Compared::Failed);  // does not fit an Int64
  CHECK(cmp(1.5f, 1.5) == Compared::Equal);
  CHECK(cmp(std::nan(""), 1.0) == Compared::Unequal);
  CHECK(cmp(true, int32_t{1}) == Compared::Equal);
  CHECK(cmp(false, true) == Compared::Less);
}

TEST_CASE("compare: strings, text and ids", "[filter][convert]") {
  CHECK(cmp(ua::String("10"), int32_t{10}) == Compared::Equal);
  CHECK(cmp(ua::String("abc"), int32_t{10}) == Compared::Failed);
  CHECK(cmp(ua::String("abc"), ua::String("abd")) == Compared::Less);
  CHECK(cmp(ua::String("true"), true) == Compared::Equal);
  CHECK(cmp(ua::LocalizedText{ua::String("en"), ua::String("Hot")}, ua::String("Hot")) == Compared::Equal);
  CHECK(cmp(ua::LocalizedText{ua::String("en"), ua::String("Hot")},
            ua::LocalizedText{ua::String("de"), ua::String("Hot")}) == Compared::Unequal);
  CHECK(cmp(ua::NodeId(0, 2041), ua::String("i=2041")) == Compared::Equal);
  CHECK(cmp(ua::NodeId(0, 2041), ua::NodeId(0, 2041)) == Compared::Equal);
  CHECK(cmp(ua::NodeId(0, 2041), ua::NodeId(0, 2042)) == Compared::Unequal);
  CHECK(cmp(ua::NodeId(0, 2041), ua::ExpandedNodeId{ua::NodeId(0, 2041), {}, 0}) == Compared::Equal);
  CHECK(cmp(ua::QualifiedName{1, ua::String("A")}, ua::QualifiedName{2, ua::String("A")}) ==
        Compared::Unequal);
  CHECK(cmp(ua::String(), ua::String()) == Compared::Equal);
  CHECK(cmp(ua::String(), ua::String("")) == Compared::Unequal);
}

TEST_CASE("compare: DateTime, ByteString, StatusCode, arrays, null", "[filter][convert]") {
  const ua::DateTime a{1000}, b{2000};
  CHECK(cmp(a, b) == Compared::Less);
  CHECK(cmp(a, int64_t{1000}) == Compared::Failed);  // DateTime compares with DateTime only
  CHECK(cmp(ua::ByteString("ab"), ua::ByteString("ab")) == Compared::Equal);
  CHECK(cmp(ua::ByteString("ab"), ua::String("ab")) == Compared::Failed);
  CHECK(cmp(ua::Variant(ua::status::BadNodeIdUnknown), uint32_t{0x80340000u}) == Compared::Equal);
  CHECK(cmp(std::vector<int32_t>{1, 2}, std::vector<int32_t>{1, 2}) == Compared::Equal);
  CHECK(cmp(std::vector<int32_t>{1, 2}, std::vector<int32_t>{1, 3}) == Compared::Unequal);
  CHECK(cmp(std::vector<int32_t>{1}, int32_t{1}) == Compared::Failed);
  CHECK(cmp(std::vector<int32_t>{1}, std::vector<int64_t>{1}) == Compared::Failed);
  CHECK(cmp(ua::Variant(), int32_t{1}) == Compared::Failed);
  CHECK(cmp(ua::Variant(), ua::Variant()) == Compared::Failed);
  CHECK(cmp(ua::XmlElement("<a/>"), ua::XmlElement("<a/>")) == Compared::Equal);
}

}  // namespace opcuad::services::filter::convert_test
