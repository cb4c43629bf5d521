// Write, Read and monitored items of Variables whose DataType is a structure a NodeSet2 file defines
// (addressspace/type_check.hpp, check_structures; structure_codec.hpp): a binary body is transcoded by its
// StructureDefinition with the request's decoding limits; hostile bodies (huge counts, deep nesting, a
// SwitchField or EncodingMask out of range, truncation) get their status quickly and cost nothing.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "addressspace/type_check.hpp"
#include "config/address_space_loader.hpp"
#include "tests/unit/services/allocation_counter.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = opcuad::ua::status;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(OPCUAD_SOURCE_DIR) / "tests/unit/config/nodesets" / name,
                   std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::pair<std::string, std::string>> type_files() {
  return {{"types.xml", fixture("types.xml")},
          {"types_more.xml", fixture("types_more.xml")},
          {"types_values.xml", fixture("types_values.xml")}};
}

uint16_t namespace_of(const ServiceHarness& h, const std::string& uri) {
  const auto& ns = h.loaded.config.namespaces;
  for (size_t i = 0; i < ns.size(); ++i) {
    if (ns[i] == uri) return static_cast<uint16_t>(i);
  }
  FAIL("namespace " << uri << " not loaded");
  return 0;
}

// A body being written; copies share the buffer, so the encoder stays valid whichever copy is used.
struct Bytes {
  std::shared_ptr<ua::ByteBuffer> b = std::make_shared<ua::ByteBuffer>();
  ua::Encoder e{*b};
  ua::ByteString str() const { return ua::ByteString::from_bytes(b->span()); }
};

// Outer (types.xml): Count, Inner {V}, Inners [Inner], Mode, Label, Far {Code}.
Bytes outer(int32_t inners, const std::string& label = "abc") {
  Bytes x;
  x.e.write_i32(7);
  x.e.write_f64(1.5);
  x.e.write_i32(inners);
  for (int32_t i = 0; i < inners; ++i) x.e.write_f64(2.5 + i);
  x.e.write_i32(5);
  ua::encode(x.e, ua::String(label));
  x.e.write_u32(9);
  return x;
}

struct Fixture {
  ServiceHarness h{"", "", "", type_files()};
  uint16_t v = namespace_of(h, "urn:types:values");
  uint16_t t = namespace_of(h, "urn:types");
  Fixture() { REQUIRE(h.login().is_good()); }
  ua::NodeId var(uint32_t i) const { return ua::NodeId(v, i); }
  // The binary ExtensionObject of `body` under encoding node `encoding` of urn:types.
  ua::ExtensionObject object(const ua::NodeId& encoding, const Bytes& body) const {
    return ua::ExtensionObject::undecoded(encoding, ua::ExtensionObject::Encoding::ByteString, body.str());
  }
  ua::NodeId outer_encoding() const { return ua::NodeId(t, 5101); }
  ua::NodeId inner_encoding() const { return ua::NodeId(t, 5103); }
  // A Write of `eo` to variable `i`, which must answer within a second.
  ua::StatusCode write(uint32_t i, ua::Variant value, const std::string& range = "") {
    const auto start = std::chrono::steady_clock::now();
    const ua::StatusCode st = h.write(var(i), std::move(value), range);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
    return st;
  }
};

ua::Variant inner_list(const Fixture& f, std::vector<double> values) {
  std::vector<ua::ExtensionObject> items;
  for (double d : values) {
    Bytes b;
    b.e.write_f64(d);
    items.push_back(f.object(f.inner_encoding(), b));
  }
  return ua::Variant(std::move(items));
}

}  // namespace

TEST_CASE("structures: a written body is checked by its definition and read back byte for byte",
          "[services][structures]") {
  Fixture f;
  SECTION("a body of the variable's DataType") {
    const ua::ExtensionObject eo = f.object(f.outer_encoding(), outer(2));
    REQUIRE(f.write(1, ua::Variant(eo)) == status::Good);
    const ua::DataValue dv = f.h.read(f.var(1));
    REQUIRE(dv.status.is_good());
    const auto* back = dv.value.get_if<ua::ExtensionObject>();
    REQUIRE(back);
    CHECK(*back == eo);
    CHECK(back->body() == outer(2).str());
  }
  SECTION("a body of a subtype (Part 3 §5.6.2): OuterPlus, with its EncodingMask") {
    Bytes plus;
    plus.e.write_u32(1);
    const Bytes o = outer(1);
    plus.b->append(o.b->data(), o.b->size());
    plus.e.write_f64(4);
    const ua::NodeId plus_encoding(f.t, ua::String("i=3002.DefaultBinary"));
    CHECK(f.write(1, ua::Variant(f.object(plus_encoding, plus))) == status::Good);
    CHECK(f.h.read(f.var(1)).value == ua::Variant(f.object(plus_encoding, plus)));
  }
  SECTION("another structure, an unknown encoding, an XML body: BadTypeMismatch") {
    Bytes inner;
    inner.e.write_f64(1);
    CHECK(f.write(1, ua::Variant(f.object(f.inner_encoding(), inner))) == status::BadTypeMismatch);
    CHECK(f.write(1, ua::Variant(f.object(ua::NodeId(f.t, 9999), outer(0)))) == status::BadTypeMismatch);
    CHECK(f.write(1, ua::Variant(ua::ExtensionObject::undecoded(
                         f.outer_encoding(), ua::ExtensionObject::Encoding::Xml,
                         ua::ByteString("<Outer/>")))) == status::BadTypeMismatch);
    // A namespace-0 structure, decoded by the generated codec, is no Outer either.
    CHECK(f.write(1, ua::Variant(ua::ExtensionObject::make(ua::Range{0, 1}))) == status::BadTypeMismatch);
  }
  SECTION("malformed bodies: BadDecodingError; nothing is written") {
    const ua::DataValue before = f.h.read(f.var(1));
    Bytes truncated = outer(2);
    truncated.b->resize(truncated.b->size() - 1);
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), truncated))) == status::BadDecodingError);
    Bytes longer = outer(2);
    longer.e.write_u8(0);
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), longer))) == status::BadDecodingError);
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), Bytes{}))) == status::BadDecodingError);
    CHECK(f.h.read(f.var(1)).value == before.value);
  }
  SECTION("an array of structures, element by element; IndexRange writes and reads") {
    REQUIRE(f.write(4, inner_list(f, {1, 2, 3})) == status::Good);
    CHECK(f.h.read(f.var(4)).value == inner_list(f, {1, 2, 3}));
    CHECK(f.write(4, inner_list(f, {9}), "1") == status::Good);
    CHECK(f.h.read(f.var(4)).value == inner_list(f, {1, 9, 3}));
    CHECK(f.h.read(f.var(4), 13, "1:2").value == inner_list(f, {9, 3}));
    // One bad element refuses the whole write, through a range too.
    std::vector<ua::ExtensionObject> items =
        *inner_list(f, {1, 2}).get_if<std::vector<ua::ExtensionObject>>();
    Bytes short_body;
    short_body.e.write_u32(1);
    items[1] = f.object(f.inner_encoding(), short_body);
    CHECK(f.write(4, ua::Variant(items)) == status::BadDecodingError);
    CHECK(f.write(4, ua::Variant(std::vector<ua::ExtensionObject>{items[1]}), "0") ==
          status::BadDecodingError);
    CHECK(f.h.read(f.var(4)).value == inner_list(f, {1, 9, 3}));
  }
  SECTION("a monitored item delivers the written body unchanged") {
    const auto sub = subscribe(f.h).subscription_id;
    REQUIRE(monitor(f.h, sub, {f.var(1)}).status_code.is_good());
    (void)next_changes(f.h);  // the initial value
    const ua::ExtensionObject eo = f.object(f.outer_encoding(), outer(3, "written"));
    REQUIRE(f.write(1, ua::Variant(eo)) == status::Good);
    const auto c = next_changes(f.h);
    REQUIRE(c.size() == 1);
    CHECK(c[0].value.value == ua::Variant(eo));
  }
  SECTION("the value loaded from the NodeSet2 file reads as its Default Binary body") {
    const ua::DataValue dv = f.h.read(f.var(1));
    const auto* eo = dv.value.get_if<ua::ExtensionObject>();
    REQUIRE(eo);
    CHECK(eo->type_id() == f.outer_encoding());
    CHECK(eo->body() == outer(2).str());
  }
}

TEST_CASE("structures: hostile bodies are bounded and get their status through Write",
          "[services][structures]") {
  Fixture f;
  SECTION("an array count far beyond the input or the limits") {
    Bytes huge;
    huge.e.write_i32(7);
    huge.e.write_f64(1.5);
    huge.e.write_i32(0x7FFFFFFF);
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), huge))) == status::BadEncodingLimitsExceeded);
    Bytes beyond;
    beyond.e.write_i32(7);
    beyond.e.write_f64(1.5);
    beyond.e.write_i32(100000);
    beyond.e.write_f64(1);
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), beyond))) == status::BadDecodingError);
    Bytes negative = outer(0);
    std::memcpy(negative.b->data() + 12, "\xFE\xFF\xFF\xFF", 4);  // Inners' count: -2
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), negative))) == status::BadDecodingError);
  }
  SECTION("a string length beyond the input or the limits") {
    Bytes b = outer(0, "x");
    // Label's length prefix sits after Count, Inner, Inners and Mode.
    std::memcpy(b.b->data() + 20, "\xFF\xFF\xFF\x7F", 4);
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), b))) == status::BadEncodingLimitsExceeded);
    std::memcpy(b.b->data() + 20, "\x00\x01\x00\x00", 4);
    CHECK(f.write(1, ua::Variant(f.object(f.outer_encoding(), b))) == status::BadDecodingError);
  }
  SECTION("nesting deeper than the decoding limit") {
    auto tree = [](int levels) {
      Bytes b;
      for (int i = 0; i < levels; ++i) b.e.write_i32(1);
      b.e.write_i32(0);
      return b;
    };
    const ua::NodeId tree_encoding(f.t, 5108);
    CHECK(f.write(7, ua::Variant(f.object(tree_encoding, tree(50)))) == status::Good);
    CHECK(f.write(7, ua::Variant(f.object(tree_encoding, tree(1000)))) == status::BadEncodingLimitsExceeded);
  }
  SECTION("a union's SwitchField out of range") {
    auto choice = [](uint32_t which) {
      Bytes b;
      b.e.write_u32(which);
      b.e.write_i32(3);
      return b;
    };
    const ua::NodeId choice_encoding(f.t, 5105);
    CHECK(f.write(3, ua::Variant(f.object(choice_encoding, choice(1)))) == status::Good);
    CHECK(f.write(3, ua::Variant(f.object(choice_encoding, choice(3)))) == status::BadDecodingError);
    CHECK(f.write(3, ua::Variant(f.object(choice_encoding, choice(0x80000000u)))) ==
          status::BadDecodingError);
  }
  SECTION("an EncodingMask with bits of no optional field") {
    const ua::NodeId plus_encoding(f.t, ua::String("i=3002.DefaultBinary"));
    for (uint32_t mask : {2u, 0x80000000u, 0xFFFFFFFFu}) {
      Bytes plus;
      plus.e.write_u32(mask);
      const Bytes o = outer(0);
      plus.b->append(o.b->data(), o.b->size());
      plus.e.write_f64(4);
      CHECK(f.write(1, ua::Variant(f.object(plus_encoding, plus))) == status::BadDecodingError);
    }
  }
  SECTION("a body cut at every byte") {
    const Bytes whole = outer(2);
    for (size_t n = 0; n < whole.b->size(); ++n) {
      Bytes cut;
      cut.b->append(whole.b->data(), n);
      INFO(n);
      CHECK(f.h.write(f.var(1), ua::Variant(f.object(f.outer_encoding(), cut))) == status::BadDecodingError);
    }
  }
}

TEST_CASE("structures: a reloaded store brings its own codecs", "[services][structures]") {
  Fixture f;
  Bytes one;
  one.e.write_f64(1);
  Bytes two;
  two.e.write_f64(1);
  two.e.write_f64(2);
  auto list_of = [&](const Bytes& b) {
    return ua::Variant(std::vector<ua::ExtensionObject>{f.object(f.inner_encoding(), b)});
  };
  REQUIRE(f.write(4, list_of(one)) == status::Good);
  CHECK(f.write(4, list_of(two)) == status::BadDecodingError);
  const uint64_t before = f.h.space.current()->generation();

  // types.xml again with a second field in Inner, as a SIGHUP would read it.
  std::string types = fixture("types.xml");
  const std::string v_field = R"(<Field Name="V" DataType="Double" />)";
  const auto at = types.find(v_field);
  REQUIRE(at != std::string::npos);
  types.insert(at + v_field.size(), R"(<Field Name="W" DataType="Double" />)");
  config::LoadResult next;
  next.config = f.h.loaded.config;
  next.config.imported = {};
  config::load_nodeset_file_text(types, "types.xml", next);
  config::load_nodeset_file_text(fixture("types_more.xml"), "types_more.xml", next);
  config::load_nodeset_file_text(fixture("types_values.xml"), "types_values.xml", next);
  config::resolve_nodesets(next);
  config::check_references(next);
  for (const auto& e : next.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(next.ok());
  f.h.space.reclaimer().go_online(*f.h.participant);
  const auto out = config::reload_address_space(f.h.loaded.config, next.config, f.h.space, *f.h.participant);
  f.h.space.reclaimer().go_offline(*f.h.participant);
  REQUIRE(out.errors.empty());
  REQUIRE(f.h.space.current()->generation() > before);

  CHECK(f.write(4, list_of(two)) == status::Good);
  CHECK(f.write(4, list_of(one)) == status::BadDecodingError);
}

#ifndef OPCUAD_ALLOCATION_COUNTER_OFF
namespace {

// Sends `request` through the session and channel of `f` and decodes the answer into `response`; returns
// the heap allocations of handling it (transport included).
template <class Request, class Response>
size_t counted_round_trip(Fixture& f, Request request, Response& response) {
  request.request_header.authentication_token = f.h.token;
  request.request_header.request_handle = ++f.h.handle;
  const std::string bytes = symmetric_chunk("MSG", 'F', f.h.channel_id, f.h.token_id, f.h.sequence++,
                                            f.h.handle, encode_request(request));
  opcuad::test::g_allocations = 0;
  opcuad::test::g_counting = true;
  f.h.feed(bytes);
  opcuad::test::g_counting = false;
  const size_t n = opcuad::test::g_allocations;
  ServerMessage m;
  REQUIRE(f.h.take_response(f.h.handle, m));
  REQUIRE(decode_body(m, response));
  return n;
}

}  // namespace

TEST_CASE("structures: the check of a written body allocates nothing in steady state",
          "[services][structures]") {
  Fixture f;
  const addressspace::NodeStore& store = *f.h.space.current();
  const auto* var = store.variable(store.find(f.var(1)));
  REQUIRE(var);
  const ua::DecodeLimits limits;
  ua::ByteBuffer scratch;
  // Many fields, nested structures, an array of them, a long String: nothing allocated per field.
  const ua::Variant big(f.object(f.outer_encoding(), outer(4, std::string(300, 'x'))));
  const ua::Variant small(f.object(f.outer_encoding(), outer(0, "a")));
  REQUIRE(addressspace::check_structures(store, *var, big, limits, scratch) ==
          status::Good);  // grows scratch
  opcuad::test::g_allocations = 0;
  opcuad::test::g_counting = true;
  for (int i = 0; i < 100; ++i) {
    (void)addressspace::check_structures(store, *var, big, limits, scratch);
    (void)addressspace::check_structures(store, *var, small, limits, scratch);
  }
  opcuad::test::g_counting = false;
  CHECK(opcuad::test::g_allocations == 0);

  // Through the Write service: a larger structure costs no more allocations than a small one (what a Write
  // allocates is the stored copy of the value, docs/ARCHITECTURE.md "ValueStore").
  f.h.sink.out.reserve(1 << 20);
  auto round = [&](const ua::Variant& v) {
    ua::WriteResponse resp;
    const size_t n = counted_round_trip(f, write_request(f.var(1), v), resp);
    REQUIRE(resp.results.size() == 1);
    CHECK(resp.results[0] == status::Good);
    return n;
  };
  for (int i = 0; i < 10; ++i) {
    round(big);
    round(small);
  }
  size_t big_n = ~size_t{0}, small_n = ~size_t{0};
  for (int i = 0; i < 5; ++i) {
    big_n = std::min(big_n, round(big));
    small_n = std::min(small_n, round(small));
  }
  INFO("allocations per Write round trip (transport included): big " << big_n << ", small " << small_n);
  CHECK(big_n == small_n);
}

TEST_CASE("structures: a Read of structured values allocates nothing per value in steady state",
          "[services][structures]") {
  Fixture f;
  const Bytes body = outer(4, std::string(300, 'x'));
  REQUIRE(f.write(1, ua::Variant(f.object(f.outer_encoding(), body))) == status::Good);
  f.h.sink.out.reserve(1 << 20);
  // A Read of `count` times the structured variable (the harness allows 5 a request); the response
  // objects and their bodies are reused from one request to the next, so only the per-request costs
  // remain.
  auto round = [&](size_t count) {
    ua::ReadRequest r;
    r.timestamps_to_return = ua::TimestampsToReturn::Both;
    for (size_t i = 0; i < count; ++i) r.nodes_to_read.push_back(ua::ReadValueId{f.var(1), 13, {}, {}});
    ua::ReadResponse resp;
    const size_t n = counted_round_trip(f, std::move(r), resp);
    REQUIRE(resp.results.size() == count);
    for (const ua::DataValue& dv : resp.results) {
      const auto* eo = dv.value.get_if<ua::ExtensionObject>();
      REQUIRE(eo);
      CHECK(eo->body() == body.str());
    }
    return n;
  };
  // Each size in a row of its own: a response that grows from one result to five makes four new ones.
  auto steady = [&](size_t count) {
    size_t least = ~size_t{0};
    for (int i = 0; i < 10; ++i) least = std::min(least, round(count));
    return least;
  };
  const size_t one = steady(1);
  const size_t many = steady(5);
  INFO("allocations per Read round trip (transport included): 1 value " << one << ", 5 values " << many);
  CHECK(many == one);
}
#endif  // OPCUAD_ALLOCATION_COUNTER_OFF
