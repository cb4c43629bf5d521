// Built-in types of Part 6 §5.2.2: round trips and golden encodings.
#include <cmath>
#include <limits>

#include "tests/unit/ua/test_bytes.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad::ua;
using opcuad::ua::test::decode_status;
using opcuad::ua::test::encoded;
using opcuad::ua::test::hex;
using opcuad::ua::test::round_trip;

TEST_CASE("numbers encode little-endian with their exact width", "[ua][codec]") {
  CHECK(encoded(true) == hex("01"));
  CHECK(encoded(false) == hex("00"));
  CHECK(encoded(int8_t{-2}) == hex("fe"));
  CHECK(encoded(uint8_t{0xab}) == hex("ab"));
  CHECK(encoded(int16_t{-2}) == hex("fe ff"));
  CHECK(encoded(uint16_t{0x1234}) == hex("34 12"));
  CHECK(encoded(int32_t{-1}) == hex("ff ff ff ff"));
  CHECK(encoded(uint32_t{0x12345678}) == hex("78 56 34 12"));
  CHECK(encoded(int64_t{-2}) == hex("fe ff ff ff ff ff ff ff"));
  CHECK(encoded(uint64_t{0x0102030405060708}) == hex("08 07 06 05 04 03 02 01"));
  // IEEE 754: 1.0f = 0x3F800000, -6.5 = 0xC01A000000000000.
  CHECK(encoded(1.0f) == hex("00 00 80 3f"));
  CHECK(encoded(-6.5) == hex("00 00 00 00 00 00 1a c0"));
  // Part 6 §5.2.2.2: any non-zero byte decodes as true.
  bool b = false;
  REQUIRE(decode_from(hex("07"), b).is_good());
  CHECK(b);
}

TEST_CASE("every fixed-size built-in round-trips at its extremes", "[ua][codec]") {
  round_trip(std::numeric_limits<int8_t>::min());
  round_trip(std::numeric_limits<uint16_t>::max());
  round_trip(std::numeric_limits<int32_t>::min());
  round_trip(std::numeric_limits<uint32_t>::max());
  round_trip(std::numeric_limits<int64_t>::min());
  round_trip(std::numeric_limits<uint64_t>::max());
  round_trip(std::numeric_limits<float>::denorm_min());
  round_trip(-std::numeric_limits<double>::infinity());
  round_trip(DateTime{0x7FFFFFFFFFFFFFFF});
  round_trip(DateTime::now());
  CHECK(round_trip(status::BadNodeIdUnknown) == status::BadNodeIdUnknown);
  // NaN does not compare equal, so check its bytes survive instead.
  double nan = std::numeric_limits<double>::quiet_NaN();
  double back = 0;
  REQUIRE(decode_from(encoded(nan), back).is_good());
  CHECK(std::isnan(back));
}

TEST_CASE("String keeps null apart from empty and counts bytes, not characters", "[ua][codec]") {
  CHECK(encoded(String()) == hex("ff ff ff ff"));
  CHECK(encoded(String("")) == hex("00 00 00 00"));
  // Part 6 §5.2.2.4: "水Boy" is 6 bytes of UTF-8.
  CHECK(encoded(String("\xE6\xB0\xB4"
                       "Boy")) == hex("06 00 00 00 e6 b0 b4 42 6f 79"));
  CHECK(round_trip(String()).is_null());
  CHECK(!round_trip(String("")).is_null());
  CHECK(round_trip(ByteString(std::string("\0\1\2", 3))).size() == 3);
  CHECK(round_trip(XmlElement("<a/>")).view() == "<a/>");
}

TEST_CASE("Guid has its first three fields little-endian", "[ua][codec]") {
  auto g = Guid::parse("72962B91-FA75-4AE6-8D28-B404DC7DAF63");
  REQUIRE(g);
  // Part 6 §5.2.2.6 example.
  CHECK(encoded(*g) == hex("91 2b 96 72 75 fa e6 4a 8d 28 b4 04 dc 7d af 63"));
  CHECK(round_trip(*g) == *g);
  CHECK(g->to_string() == "72962b91-fa75-4ae6-8d28-b404dc7daf63");
  CHECK(Guid::parse("{72962b91-fa75-4ae6-8d28-b404dc7daf63}") == g);
  CHECK_FALSE(Guid::parse("72962B91-FA75-4AE6-8D28-B404DC7DAF6"));
  CHECK_FALSE(Guid::parse("72962B91+FA75-4AE6-8D28-B404DC7DAF63"));
  CHECK_FALSE(Guid::parse("7296zB91-FA75-4AE6-8D28-B404DC7DAF63"));
}

TEST_CASE("NodeId picks the most compact encoding", "[ua][codec][nodeid]") {
  // Part 6 §5.2.2.9 examples.
  CHECK(encoded(NodeId(0, 72)) == hex("00 48"));
  CHECK(encoded(NodeId(5, 1025)) == hex("01 05 01 04"));
  CHECK(encoded(NodeId(1, String("Hot\xE6\xB0\xB4"))) == hex("03 01 00 06 00 00 00 48 6f 74 e6 b0 b4"));
  CHECK(encoded(NodeId(0, 256)) == hex("01 00 00 01"));
  CHECK(encoded(NodeId(256, 1)) == hex("02 00 01 01 00 00 00"));
  CHECK(encoded(NodeId(1, 70000)) == hex("02 01 00 70 11 01 00"));
  auto g = *Guid::parse("72962B91-FA75-4AE6-8D28-B404DC7DAF63");
  CHECK(encoded(NodeId(4, g)) == hex("04 04 00 91 2b 96 72 75 fa e6 4a 8d 28 b4 04 dc 7d af 63"));
  CHECK(encoded(NodeId::opaque(2, ByteString("AB"))) == hex("05 02 00 02 00 00 00 41 42"));
  for (const NodeId& n : {NodeId(0, 72), NodeId(5, 1025), NodeId(7, 0xFFFFFFFF), NodeId(1, String("x;y")),
                          NodeId(4, g), NodeId::opaque(3, ByteString(std::string("\0\xff", 2)))}) {
    CHECK(round_trip(n) == n);
  }
  // Any numeric encoding decodes to the same NodeId.
  NodeId n;
  REQUIRE(decode_from(hex("02 00 00 48 00 00 00"), n).is_good());
  CHECK(n == NodeId(0, 72));
}

TEST_CASE("NodeId rejects unknown encodings and ExpandedNodeId flags", "[ua][codec][nodeid]") {
  CHECK(decode_status<NodeId>(hex("06 00 00")) == status::BadDecodingError);
  CHECK(decode_status<NodeId>(hex("80 48")) == status::BadDecodingError);
  CHECK(decode_status<NodeId>(hex("01 05 01")) == status::BadDecodingError);  // truncated
}

TEST_CASE("ExpandedNodeId carries namespace URI and server index flags", "[ua][codec][nodeid]") {
  ExpandedNodeId x{NodeId(0, 72), String("urn:a"), 3};
  CHECK(encoded(x) == hex("c0 48 05 00 00 00 75 72 6e 3a 61 03 00 00 00"));
  CHECK(round_trip(x) == x);
  ExpandedNodeId local{NodeId(2, String("T")), String(), 0};
  CHECK(encoded(local) == hex("03 02 00 01 00 00 00 54"));
  CHECK(round_trip(local) == local);
}

TEST_CASE("QualifiedName and LocalizedText", "[ua][codec]") {
  CHECK(encoded(QualifiedName{2, String("Temp")}) == hex("02 00 04 00 00 00 54 65 6d 70"));
  CHECK(round_trip(QualifiedName{0, String()}) == QualifiedName{0, String()});
  // Part 6 §5.2.2.14: the mask says which of locale and text follow.
  CHECK(encoded(LocalizedText{}) == hex("00"));
  CHECK(encoded(LocalizedText{String(), String("Hi")}) == hex("02 02 00 00 00 48 69"));
  CHECK(encoded(LocalizedText{String("en"), String("Hi")}) == hex("03 02 00 00 00 65 6e 02 00 00 00 48 69"));
  LocalizedText only_locale{String("de"), String()};
  CHECK(round_trip(only_locale) == only_locale);
  CHECK(decode_status<LocalizedText>(hex("04")) == status::BadDecodingError);
}

TEST_CASE("Variant scalars of every built-in type round-trip", "[ua][codec][variant]") {
  auto g = *Guid::parse("72962B91-FA75-4AE6-8D28-B404DC7DAF63");
  DataValue inner;
  inner.value = Variant(1.5);
  DiagnosticInfo diag;
  diag.symbolic_id = 4;
  const Variant scalars[] = {Variant(true),
                             Variant(int8_t{-1}),
                             Variant(uint8_t{2}),
                             Variant(int16_t{-3}),
                             Variant(uint16_t{4}),
                             Variant(int32_t{-5}),
                             Variant(uint32_t{6}),
                             Variant(int64_t{-7}),
                             Variant(uint64_t{8}),
                             Variant(9.5f),
                             Variant(10.25),
                             Variant(String("s")),
                             Variant(DateTime{12}),
                             Variant(g),
                             Variant(ByteString("b")),
                             Variant(XmlElement("<x/>")),
                             Variant(NodeId(2, 17)),
                             Variant(ExpandedNodeId{NodeId(0, 18), String("u"), 1}),
                             Variant(status::BadTimeout),
                             Variant(QualifiedName{1, String("q")}),
                             Variant(LocalizedText{String("en"), String("t")}),
                             Variant(ExtensionObject::undecoded(
                                 NodeId(3, 99), ExtensionObject::Encoding::ByteString, ByteString("xyz"))),
                             Variant(inner),
                             Variant(diag)};
  for (const Variant& v : scalars) {
    INFO(builtin_type_name(v.type()));
    CHECK(v.is_scalar());
    Variant back = round_trip(v);
    CHECK(back == v);
    CHECK(back.type() == v.type());
  }
  CHECK(std::size(scalars) == 24);  // all 25 built-ins but Variant, which cannot be a scalar in a Variant
  CHECK(encoded(Variant(int32_t{-5})) == hex("06 fb ff ff ff"));
  CHECK(encoded(Variant()) == hex("00"));
  CHECK(round_trip(Variant()).is_empty());
}

TEST_CASE("Variant arrays of every built-in type round-trip", "[ua][codec][variant]") {
  const Variant arrays[] = {Variant(std::vector<bool>{true, false}),
                            Variant(std::vector<int8_t>{1, -1}),
                            Variant(std::vector<uint8_t>{1, 2}),
                            Variant(std::vector<int16_t>{-1}),
                            Variant(std::vector<uint16_t>{1}),
                            Variant(std::vector<int32_t>{1, 2, 3}),
                            Variant(std::vector<uint32_t>{}),
                            Variant(std::vector<int64_t>{-9}),
                            Variant(std::vector<uint64_t>{9}),
                            Variant(std::vector<float>{1.5f}),
                            Variant(std::vector<double>{2.5, 3}),
                            Variant(std::vector<String>{String("a"), String()}),
                            Variant(std::vector<DateTime>{DateTime{1}}),
                            Variant(std::vector<Guid>{Guid{}}),
                            Variant(std::vector<ByteString>{ByteString("z")}),
                            Variant(std::vector<XmlElement>{XmlElement("<a/>")}),
                            Variant(std::vector<NodeId>{NodeId(1, 2)}),
                            Variant(std::vector<ExpandedNodeId>{ExpandedNodeId{}}),
                            Variant(std::vector<StatusCode>{status::Good}),
                            Variant(std::vector<QualifiedName>{QualifiedName{1, String("n")}}),
                            Variant(std::vector<LocalizedText>{LocalizedText{String(), String("t")}}),
                            Variant(std::vector<ExtensionObject>{ExtensionObject()}),
                            Variant(std::vector<DataValue>{DataValue{}}),
                            Variant(std::vector<Variant>{Variant(1.0), Variant(String("mixed"))}),
                            Variant(std::vector<DiagnosticInfo>{DiagnosticInfo{}})};
  CHECK(std::size(arrays) == 25);
  for (const Variant& v : arrays) {
    INFO(builtin_type_name(v.type()));
    CHECK(v.is_array());
    CHECK(round_trip(v) == v);
  }
  // Part 6 §5.2.2.16: mask 0x86 (Int32 array), length, elements.
  CHECK(encoded(Variant(std::vector<int32_t>{1, 2})) == hex("86 02 00 00 00 01 00 00 00 02 00 00 00"));
}

TEST_CASE("Variant matrices carry their dimensions", "[ua][codec][variant]") {
  Variant m = Variant::matrix(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  // Mask 0xC6: Int32, array, dimensions; 6 elements; then 2 dimensions [2, 3].
  CHECK(encoded(m) ==
        hex("c6 06 00 00 00 01 00 00 00 02 00 00 00 03 00 00 00 04 00 00 00 05 00 00 00 06 00 00 00"
            " 02 00 00 00 02 00 00 00 03 00 00 00"));
  Variant back = round_trip(m);
  CHECK(back.dimensions() == std::vector<int32_t>{2, 3});
  // Dimensions that do not multiply to the length are a decoding error.
  CHECK(decode_status<Variant>(
            hex("c6 02 00 00 00 01 00 00 00 02 00 00 00 02 00 00 00 02 00 00 00 02 00 00 00")) ==
        status::BadDecodingError);
  // A zero or negative dimension is an error.
  CHECK(decode_status<Variant>(hex("c6 00 00 00 00 01 00 00 00 00 00 00 00")) == status::BadDecodingError);
  // Dimensions on a scalar are an error.
  CHECK(decode_status<Variant>(hex("46 01 00 00 00")) == status::BadDecodingError);
}

TEST_CASE("Variant rejects bad type ids", "[ua][codec][variant]") {
  CHECK(decode_status<Variant>(hex("1a")) == status::BadDecodingError);     // type 26
  CHECK(decode_status<Variant>(hex("18 00")) == status::BadDecodingError);  // scalar Variant in Variant
  CHECK(decode_status<Variant>(hex("80 00 00 00 00")) == status::BadDecodingError);  // array of Null
}

TEST_CASE("DataValue encodes exactly the fields that are set", "[ua][codec][datavalue]") {
  DataValue empty;
  CHECK(encoded(empty) == hex("00"));
  DataValue v;
  v.value = Variant(int32_t{7});
  CHECK(encoded(v) == hex("01 06 07 00 00 00"));
  v.status = status::UncertainInitialValue;
  v.source_timestamp = DateTime{1};
  v.source_picoseconds = 10;
  v.server_timestamp = DateTime{2};
  v.server_picoseconds = 20;
  // Mask 0x3F; order: value, status, source ts, source ps, server ts, server ps.
  CHECK(encoded(v) == hex("3f 06 07 00 00 00 00 00 92 40 01 00 00 00 00 00 00 00 0a 00"
                          " 02 00 00 00 00 00 00 00 14 00"));
  CHECK(round_trip(v) == v);
  for (uint8_t bit : {0x02, 0x04, 0x08, 0x10, 0x20}) {
    DataValue one;
    if (bit == 0x02) one.status = status::BadTimeout;
    if (bit == 0x04) one.source_timestamp = DateTime{5};
    if (bit == 0x08) one.server_timestamp = DateTime{6};
    if (bit == 0x10) one.source_picoseconds = 7;
    if (bit == 0x20) one.server_picoseconds = 8;
    CHECK(encoded(one)[0] == bit);
    CHECK(round_trip(one) == one);
  }
  CHECK(decode_status<DataValue>(hex("40")) == status::BadDecodingError);
}

TEST_CASE("DiagnosticInfo nests and encodes its mask", "[ua][codec][diagnostic]") {
  DiagnosticInfo d;
  d.symbolic_id = 1;
  d.namespace_uri = 2;
  d.localized_text = 3;
  d.locale = 4;
  d.additional_info = String("x");
  d.inner_status_code = status::BadInternalError;
  DiagnosticInfo inner;
  inner.symbolic_id = 9;
  d.inner_diagnostic_info = Box<DiagnosticInfo>(inner);
  // Mask 0x7F; order: symbolic id, namespace, locale, localized text, additional info, inner status, inner.
  CHECK(encoded(d) == hex("7f 01 00 00 00 02 00 00 00 04 00 00 00 03 00 00 00 01 00 00 00 78 00 00 02 80"
                          " 01 09 00 00 00"));
  CHECK(round_trip(d) == d);
  CHECK(encoded(DiagnosticInfo{}) == hex("00"));
}

TEST_CASE("ExtensionObject keeps unknown bodies byte for byte", "[ua][codec][extobj]") {
  auto x = ExtensionObject::undecoded(NodeId(2, 5001), ExtensionObject::Encoding::ByteString,
                                      ByteString("\x01\x02"));
  CHECK(encoded(x) == hex("01 02 89 13 01 02 00 00 00 01 02"));
  CHECK(round_trip(x) == x);
  auto xml = ExtensionObject::undecoded(NodeId(2, 5002), ExtensionObject::Encoding::Xml, ByteString("<a/>"));
  CHECK(round_trip(xml) == xml);
  ExtensionObject none;
  CHECK(encoded(none) == hex("00 00 00"));
  CHECK(round_trip(none).is_empty());
  CHECK(decode_status<ExtensionObject>(hex("00 00 03")) == status::BadDecodingError);
}

TEST_CASE("ExtensionObject moves hand over the body and leave the source empty", "[ua][extobj]") {
  // A decoded structure: moving must pass ownership exactly once (ASan reports a double free or a leak).
  ReadValueId rv;
  rv.node_id = NodeId(2, String("Plant.Speed"));
  rv.attribute_id = 13;
  ExtensionObject a = ExtensionObject::make(rv);
  const ExtensionObject copy = a;
  ExtensionObject b(std::move(a));
  REQUIRE(b.get<ReadValueId>() != nullptr);
  CHECK(*b.get<ReadValueId>() == rv);
  CHECK(b == copy);
  CHECK(a.is_empty());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  CHECK_FALSE(a.is_decoded());
  CHECK(a.type_id().is_null());

  // Move-assignment over a decoded object destroys the old one; over itself changes nothing.
  ExtensionObject c = ExtensionObject::make(rv);
  c = ExtensionObject::undecoded(NodeId(2, 5001), ExtensionObject::Encoding::ByteString, ByteString("\x01"));
  CHECK_FALSE(c.is_decoded());
  CHECK(c.body() == ByteString("\x01"));
  ExtensionObject& self = b;
  b = std::move(self);
  CHECK(b == copy);

  // Copy-assignment is deep: the copy survives the original.
  ExtensionObject d;
  d = b;
  b.reset();
  REQUIRE(d.get<ReadValueId>() != nullptr);
  CHECK(d.get<ReadValueId>()->node_id == rv.node_id);
  const ExtensionObject& same = d;
  d = same;  // self-copy
  CHECK(d == copy);
}

TEST_CASE("decoding failures are values, never crashes", "[ua][codec][limits]") {
  // Truncated.
  CHECK(decode_status<uint32_t>(hex("01 02 03")) == status::BadDecodingError);
  CHECK(decode_status<String>(hex("05 00 00 00 61 62")) == status::BadDecodingError);
  // Negative lengths other than -1.
  CHECK(decode_status<String>(hex("fe ff ff ff")) == status::BadDecodingError);
  CHECK(decode_status<std::vector<int32_t>>(hex("fe ff ff ff")) == status::BadDecodingError);
  CHECK(decode_status<std::vector<int32_t>>(hex("ff ff ff ff")).is_good());  // null array
  // An array length far beyond the bytes that follow is refused before anything is allocated.
  CHECK(decode_status<std::vector<double>>(hex("ff ff ff 7f 00 00 00 00")) != status::Good);
  CHECK(decode_status<std::vector<Variant>>(hex("00 00 10 00 00")) == status::BadDecodingError);
}

TEST_CASE("configured limits give BadEncodingLimitsExceeded", "[ua][codec][limits]") {
  DecodeLimits small;
  small.max_string_length = 3;
  small.max_byte_string_length = 2;
  small.max_array_length = 2;
  CHECK(decode_status<String>(hex("04 00 00 00 61 62 63 64"), small) == status::BadEncodingLimitsExceeded);
  CHECK(decode_status<String>(hex("03 00 00 00 61 62 63"), small).is_good());
  CHECK(decode_status<ByteString>(hex("03 00 00 00 61 62 63"), small) == status::BadEncodingLimitsExceeded);
  CHECK(decode_status<std::vector<uint8_t>>(hex("03 00 00 00 01 02 03"), small) ==
        status::BadEncodingLimitsExceeded);
  CHECK(decode_status<NodeId>(hex("03 00 00 04 00 00 00 61 62 63 64"), small) ==
        status::BadEncodingLimitsExceeded);
}

TEST_CASE("nesting is capped at the configured depth", "[ua][codec][limits]") {
  // A Variant array holding a Variant array holding ... 150 levels deep.
  std::vector<uint8_t> deep;
  for (int i = 0; i < 150; ++i) {
    for (uint8_t b : hex("98 01 00 00 00")) deep.push_back(b);  // array of Variant, length 1
  }
  deep.push_back(0x00);  // innermost: empty Variant
  CHECK(decode_status<Variant>(deep) == status::BadEncodingLimitsExceeded);
  DecodeLimits generous;
  generous.max_depth = 200;
  CHECK(decode_status<Variant>(deep, generous).is_good());

  // DiagnosticInfo nested through its inner field.
  std::vector<uint8_t> diag(120, 0x40);
  diag.push_back(0x00);
  CHECK(decode_status<DiagnosticInfo>(diag) == status::BadEncodingLimitsExceeded);

  // DataValue -> Variant(DataValue) -> ...
  std::vector<uint8_t> dv;
  for (int i = 0; i < 60; ++i) {
    dv.push_back(0x01);  // DataValue with value
    dv.push_back(0x17);  // Variant holding a DataValue
  }
  dv.push_back(0x00);
  CHECK(decode_status<DataValue>(dv) == status::BadEncodingLimitsExceeded);
}

TEST_CASE("decoding into a used object replaces every field", "[ua][codec]") {
  DataValue target;
  target.value = Variant(String("old"));
  target.status = status::BadTimeout;
  target.server_timestamp = DateTime{9};
  REQUIRE(decode_from(hex("01 0b 00 00 00 00 00 00 f0 3f"), target).is_good());
  DataValue expected;
  expected.value = Variant(1.0);
  CHECK(target == expected);
  LocalizedText t{String("en"), String("x")};
  REQUIRE(decode_from(hex("00"), t).is_good());
  CHECK(t == LocalizedText{});
}

TEST_CASE("variant: set_scalar stores in place, changes the type, and drops array dimensions",
          "[ua][variant]") {
  Variant v(2.5);
  v.set_scalar(3.5);
  CHECK(v == Variant(3.5));
  v.set_scalar(int32_t{-7});
  CHECK(v.type() == BuiltinType::Int32);
  CHECK(v == Variant(int32_t{-7}));
  Variant m = Variant::matrix(std::vector<int32_t>{1, 2, 3, 4}, {2, 2});
  REQUIRE(!m.dimensions().empty());
  m.set_scalar(DateTime{42});
  CHECK(m.is_scalar());
  CHECK(m.dimensions().empty());
  CHECK(m == Variant(DateTime{42}));
  Variant s(String("text"));
  s.set_scalar(StatusCode(0x80340000u));
  CHECK(s == Variant(StatusCode(0x80340000u)));
  // The fast encodings write what the general path writes.
  CHECK(encoded(Variant(1.0)) == hex("0b 00 00 00 00 00 00 f0 3f"));
  CHECK(encoded(Variant(int32_t{-2})) == hex("06 fe ff ff ff"));
  CHECK(encoded(Variant(DateTime{1})) == hex("0d 01 00 00 00 00 00 00 00"));
}

TEST_CASE("data value: every field combination encodes as Part 6 §5.2.2.17 lays it out", "[ua][codec]") {
  // The one-span path (Double, Int32, DateTime or no value) and the general one (a String) against the
  // layout written out field by field: mask, value, status, source timestamp and picoseconds, server
  // timestamp and picoseconds.
  const std::vector<Variant> values = {Variant(), Variant(-0.25), Variant(int32_t{7}), Variant(DateTime{99}),
                                       Variant(String("s"))};
  for (const Variant& value : values) {
    for (int fields = 0; fields < 32; ++fields) {
      DataValue dv;
      dv.value = value;
      if (fields & 1) dv.status = StatusCode(0x80340000u);
      if (fields & 2) dv.source_timestamp = DateTime{1234};
      if (fields & 4) dv.server_timestamp = DateTime{5678};
      if (fields & 8) dv.source_picoseconds = 11;
      if (fields & 16) dv.server_picoseconds = 22;
      ByteBuffer expected;
      Encoder x(expected);
      x.write_u8((value.is_empty() ? 0 : 0x01) | (fields & 1 ? 0x02 : 0) | (fields & 2 ? 0x04 : 0) |
                 (fields & 4 ? 0x08 : 0) | (fields & 8 ? 0x10 : 0) | (fields & 16 ? 0x20 : 0));
      if (!value.is_empty()) {
        ByteBuffer v;
        Encoder ve(v);
        encode(ve, value);
        x.write_raw(v.data(), v.size());
      }
      if (fields & 1) x.write_u32(0x80340000u);
      if (fields & 2) x.write_u64(1234);
      if (fields & 8) x.write_u16(11);
      if (fields & 4) x.write_u64(5678);
      if (fields & 16) x.write_u16(22);
      INFO("value type " << static_cast<int>(value.type()) << ", fields " << fields);
      CHECK(encoded(dv) == std::vector<uint8_t>(expected.data(), expected.data() + expected.size()));
      round_trip(dv);
    }
  }
}

TEST_CASE("string NodeId: the one-check path and the field-by-field path agree at every boundary",
          "[ua][codec][nodeid][limits]") {
  DecodeLimits small;
  small.max_string_length = 3;
  small.max_byte_string_length = 2;
  NodeId id;
  // At the limit, decoded in place; into a used NodeId of the same and of another length.
  REQUIRE(decode_from(hex("03 02 00 03 00 00 00 61 62 63"), id, small).is_good());
  CHECK(id == NodeId(2, String("abc")));
  REQUIRE(decode_from(hex("03 05 00 01 00 00 00 7a"), id, small).is_good());
  CHECK(id == NodeId(5, String("z")));
  // Null and empty identifiers are both the null String NodeId of their namespace.
  REQUIRE(decode_from(hex("03 01 00 ff ff ff ff"), id, small).is_good());
  CHECK(id == NodeId(1, String("")));
  REQUIRE(decode_from(hex("03 01 00 00 00 00 00"), id, small).is_good());
  CHECK(id == NodeId(1, String("")));
  // One past the limit; a ByteString id under its own, smaller limit.
  CHECK(decode_status<NodeId>(hex("03 02 00 04 00 00 00 61 62 63 64"), small) ==
        status::BadEncodingLimitsExceeded);
  CHECK(decode_status<NodeId>(hex("05 02 00 03 00 00 00 61 62 63"), small) ==
        status::BadEncodingLimitsExceeded);
  // Truncated: in the header, in the identifier; a negative length other than -1.
  CHECK(decode_status<NodeId>(hex("03 02 00 03 00")) == status::BadDecodingError);
  CHECK(decode_status<NodeId>(hex("03 02 00 03 00 00 00 61 62")) == status::BadDecodingError);
  CHECK(decode_status<NodeId>(hex("03 02 00 fe ff ff ff")) == status::BadDecodingError);
}

TEST_CASE("variant: the Write scalars decode in place and fail cleanly when truncated",
          "[ua][codec][variant]") {
  Variant v(String("old"));
  REQUIRE(decode_from(hex("0b 00 00 00 00 00 00 f0 3f"), v).is_good());
  CHECK(v == Variant(1.0));
  REQUIRE(decode_from(hex("0a 00 00 c0 3f"), v).is_good());
  CHECK(v == Variant(1.5f));
  REQUIRE(decode_from(hex("06 fe ff ff ff"), v).is_good());
  CHECK(v == Variant(int32_t{-2}));
  REQUIRE(decode_from(hex("01 01"), v).is_good());
  CHECK(v == Variant(true));
  // A matrix decoded into the same Variant, then a scalar: the dimensions go.
  REQUIRE(decode_from(hex("cb 01 00 00 00 00 00 00 00 00 00 f0 3f 01 00 00 00 01 00 00 00"), v).is_good());
  CHECK(v.dimensions() == std::vector<int32_t>{1});
  REQUIRE(decode_from(hex("0b 00 00 00 00 00 00 00 40"), v).is_good());
  CHECK(v == Variant(2.0));
  CHECK(v.dimensions().empty());
  CHECK(decode_status<Variant>(hex("0b 00 00 00 00 00 00 f0")) == status::BadDecodingError);
  CHECK(decode_status<Variant>(hex("06 01 00")) == status::BadDecodingError);
  CHECK(decode_status<Variant>(hex("01")) == status::BadDecodingError);
}
