// NodeId text forms (Part 6 §5.3.1.10), identity and hashing.
#include <catch2/catch.hpp>

#include <unordered_set>

#include "ua/node_id.hpp"

using namespace opcuad::ua;

TEST_CASE("NodeId text forms parse and print back", "[ua][nodeid]") {
  const char* forms[] = {
      "i=2258",          "ns=2;s=Line1.Temp",     "ns=1;g=72962b91-fa75-4ae6-8d28-b404dc7daf63",
      "ns=3;b=SGVsbG8=", "ns=65535;i=4294967295", "s=with;semicolons=inside",
      "ns=1;s="};
  for (const char* text : forms) {
    auto parsed = NodeId::parse(text);
    INFO(text << ": " << parsed.error);
    REQUIRE(parsed);
    CHECK(parsed.value->to_string() == text);
  }
  CHECK(NodeId::parse("i=2258").value == NodeId(0, 2258));
  CHECK(NodeId::parse("ns=2;s=Line1.Temp").value == NodeId(2, String("Line1.Temp")));
  CHECK(NodeId::parse("ns=3;b=SGVsbG8=").value->string() == "Hello");
  CHECK(NodeId::parse("ns=1;g={72962B91-FA75-4AE6-8D28-B404DC7DAF63}").value->type() == IdType::Guid);
}

TEST_CASE("malformed NodeId text gets a message naming the problem", "[ua][nodeid]") {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "expected an identifier"},
      {"x=1", "unknown identifier type"},
      {"i=abc", "is not a number"},
      {"i=4294967296", "is not a number"},
      {"i=-1", "is not a number"},
      {"ns=70000;i=1", "namespace index '70000'"},
      {"ns=;i=1", "namespace index ''"},
      {"ns=1;g=not-a-guid", "GUID identifier"},
      {"ns=1;b=***", "not valid base64"},
      {"nsu=urn:x;i=1", "cannot be resolved here"},
      {"svr=1;i=1", "belongs to an ExpandedNodeId"},
      {"2258", "expected an identifier"},
  };
  for (const auto& c : cases) {
    auto parsed = NodeId::parse(c.text);
    INFO(c.text << " -> " << parsed.error);
    CHECK_FALSE(parsed);
    CHECK_THAT(parsed.error, Catch::Contains(c.says));
    CHECK_THAT(parsed.error, Catch::Contains("invalid NodeId"));
  }
}

TEST_CASE("nsu= resolves through a namespace table", "[ua][nodeid]") {
  NodeId::NamespaceResolver resolver = [](std::string_view uri) -> std::optional<uint16_t> {
    if (uri == "urn:plant;line") return 4;
    return std::nullopt;
  };
  auto parsed = NodeId::parse("nsu=urn:plant%3Bline;s=Temp", resolver);
  INFO(parsed.error);
  REQUIRE(parsed);
  CHECK(*parsed.value == NodeId(4, String("Temp")));
  auto unknown = NodeId::parse("nsu=urn:other;i=1", resolver);
  CHECK_THAT(unknown.error, Catch::Contains("not in the namespace table"));
}

TEST_CASE("ExpandedNodeId text forms", "[ua][nodeid]") {
  auto x = ExpandedNodeId::parse("svr=2;nsu=urn:a%3Bb;i=5");
  INFO(x.error);
  REQUIRE(x);
  CHECK(x.value->server_index == 2);
  CHECK(x.value->namespace_uri.view() == "urn:a;b");
  CHECK(x.value->node_id == NodeId(0, 5));
  CHECK(x.value->to_string() == "svr=2;nsu=urn:a%3Bb;i=5");
  auto local = ExpandedNodeId::parse("ns=2;s=T");
  REQUIRE(local);
  CHECK(local.value->is_local());
  CHECK(local.value->to_string() == "ns=2;s=T");
  CHECK_FALSE(ExpandedNodeId::parse("nsu=bad%2;i=1"));
}

TEST_CASE("NodeId equality, order and hash", "[ua][nodeid]") {
  CHECK(NodeId(0, 5) == NodeId(5));
  CHECK(NodeId(0, 5) != NodeId(1, 5));
  CHECK(NodeId(1, String("5")) != NodeId(1, 5));
  CHECK(NodeId(1, String("a")) != NodeId::opaque(1, ByteString("a")));
  CHECK(NodeId(0, 1) < NodeId(0, 2));
  CHECK(NodeId(0, 9) < NodeId(1, 0));
  CHECK(NodeId().is_null());
  CHECK(NodeId(0, String("")).is_null());
  CHECK_FALSE(NodeId(1, 0).is_null());
  CHECK(NodeId(2, String("abc")).hash() == NodeId(2, String("abc")).hash());
  // Sequential ids must spread over a power-of-two table: count distinct low 16 bits of 10,000 ids.
  std::unordered_set<size_t> buckets;
  for (uint32_t i = 0; i < 10000; ++i) buckets.insert(NodeId(2, i).hash() & 0xFFFF);
  CHECK(buckets.size() > 8500);
  std::unordered_set<NodeId> set{NodeId(1, 1), NodeId(1, String("1")), NodeId(1, 1)};
  CHECK(set.size() == 2);
}

TEST_CASE("node id: string identifiers hash by every byte and spread", "[ua][node_id]") {
  // Identifiers that differ in one byte anywhere (the 8-byte words and the tail alike) hash apart, and
  // names with a common prefix and a counter, as integrators write them, spread over a power-of-two table.
  const std::string base = "Plant.Line1.Cell04.Temperature";  // 30 bytes: three words and a tail
  const size_t h = NodeId(2, String(base)).hash();
  for (size_t i = 0; i < base.size(); ++i) {
    std::string other = base;
    other[i] ^= 0x01;
    CHECK(NodeId(2, String(other)).hash() != h);
  }
  CHECK(NodeId(2, String(base + "x")).hash() != h);
  CHECK(NodeId(2, String(base.substr(0, 29))).hash() != h);
  CHECK(NodeId(3, String(base)).hash() != h);
  CHECK(NodeId::opaque(2, ByteString(base)).hash() != h);
  for (size_t n = 0; n <= 17; ++n) {  // every length around the word size, the empty one included
    const std::string s(n, 'a');
    CHECK(NodeId(1, String(s)).hash() == NodeId(1, String(std::string(n, 'a'))).hash());
    if (n > 0) CHECK(NodeId(1, String(s)).hash() != NodeId(1, String(std::string(n - 1, 'a'))).hash());
  }
  std::unordered_set<size_t> buckets;
  for (uint32_t i = 0; i < 10000; ++i) {
    buckets.insert(NodeId(2, String("Bench.V" + std::to_string(i))).hash() & 0xFFFF);
  }
  CHECK(buckets.size() > 8500);
}
