// Bounds on the work and memory one request may cost (docs/SECURITY.md): TranslateBrowsePathsToNodeIds,
// Browse / BrowseNext, operation counts read before decoding, and the shard scratch that returns to its
// normal size after a large request. Each test sends the hostile value and checks the status and the bound.
#include <set>

#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {

constexpr uint32_t kHierarchical = 33;
constexpr uint32_t kOrganizes = 35;
constexpr uint32_t kHasComponent = 47;

ua::RelativePathElement step(uint32_t reference_type, bool inverse, std::string name, uint16_t ns = 0) {
  ua::RelativePathElement e;
  e.reference_type_id = ua::NodeId(0, reference_type);
  e.is_inverse = inverse;
  e.include_subtypes = true;
  e.target_name = ua::QualifiedName{ns, name.empty() ? ua::String() : ua::String(name)};
  return e;
}

ua::TranslateBrowsePathsToNodeIdsRequest translate(ua::NodeId start,
                                                   std::vector<ua::RelativePathElement> elements) {
  ua::TranslateBrowsePathsToNodeIdsRequest req;
  ua::BrowsePath p;
  p.starting_node = std::move(start);
  p.relative_path.elements = std::move(elements);
  req.browse_paths.push_back(std::move(p));
  return req;
}

// Objects, then `steps` times down to any child and back up to any parent, then down to "Server": without
// deduplication the k children of Objects make k^steps intermediate nodes.
std::vector<ua::RelativePathElement> fan_out_path(int steps) {
  std::vector<ua::RelativePathElement> path;
  for (int i = 0; i < steps; ++i) {
    path.push_back(step(kHierarchical, false, ""));
    path.push_back(step(kHierarchical, true, ""));
  }
  path.push_back(step(kHierarchical, false, "Server"));
  return path;
}

// A node file with twelve objects under one folder, each with a variable named "Speed".
std::string twelve_pumps() {
  std::string nodes;
  for (int i = 0; i < 12; ++i) {
    if (i) nodes += ",";
    nodes += R"({"kind": "object", "name": "Pump)" + std::to_string(i) + R"(", "children": [
      {"kind": "variable", "name": "Speed", "data_type": "Double", "value": 1.0}]})";
  }
  return R"({"namespaces": ["urn:test"], "nodes": [{"kind": "folder", "name": "Pumps", "children": [)" +
         nodes + "]}]}";
}

}  // namespace

TEST_CASE("Translate: a path that fans out and back is deduplicated at every step",
          "[services][translate][hardening]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto resp =
      h.call<ua::TranslateBrowsePathsToNodeIdsResponse>(translate(ua::NodeId(0, 85), fan_out_path(40)));
  REQUIRE(resp.results.size() == 1);
  CHECK(resp.results[0].status_code == ua::status::Good);
  REQUIRE(resp.results[0].targets.size() == 1);  // Server, once
  CHECK(resp.results[0].targets[0].target_id.node_id == ua::NodeId(0, 2253));
  // The intermediate sets never held more than the store's nodes.
  const auto& t = h.server->shard_state(0).scratch;
  CHECK_FALSE(t.translate.leased());
}

TEST_CASE("Translate: the reference budget ends a path with BadQueryTooComplex",
          "[services][translate][hardening]") {
  ServiceHarness h("\"max_translate_references\": 200");
  REQUIRE(h.login().is_good());
  auto req = translate(ua::NodeId(0, 85), fan_out_path(40));
  req.browse_paths.push_back(req.browse_paths[0]);
  // A cheap path after the budget is spent fails too: the budget is the request's.
  req.browse_paths.push_back(
      translate(ua::NodeId(0, 84), {step(kOrganizes, false, "Objects")}).browse_paths[0]);
  auto resp = h.call<ua::TranslateBrowsePathsToNodeIdsResponse>(req);
  REQUIRE(resp.results.size() == 3);
  for (const auto& r : resp.results) {
    CHECK(r.status_code == ua::status::BadQueryTooComplex);
    CHECK(r.targets.empty());
  }
  // Within the budget the same server answers.
  auto ok = h.call<ua::TranslateBrowsePathsToNodeIdsResponse>(
      translate(ua::NodeId(0, 84), {step(kOrganizes, false, "Objects")}));
  CHECK(ok.results[0].status_code == ua::status::Good);
}

TEST_CASE("Translate: more targets than max_translate_matches is BadTooManyMatches",
          "[services][translate][hardening]") {
  ServiceHarness h("\"max_translate_matches\": 10", twelve_pumps());
  REQUIRE(h.login().is_good());
  const ua::NodeId pumps(2, ua::String("Pumps"));
  auto resp = h.call<ua::TranslateBrowsePathsToNodeIdsResponse>(
      translate(pumps, {step(kHierarchical, false, ""), step(kHasComponent, false, "Speed", 2)}));
  CHECK(resp.results[0].status_code == ua::status::BadTooManyMatches);
  CHECK(resp.results[0].targets.empty());

  ServiceHarness roomy("\"max_translate_matches\": 12", twelve_pumps());
  REQUIRE(roomy.login().is_good());
  auto all = roomy.call<ua::TranslateBrowsePathsToNodeIdsResponse>(
      translate(pumps, {step(kHierarchical, false, ""), step(kHasComponent, false, "Speed", 2)}));
  REQUIRE(all.results[0].status_code == ua::status::Good);
  std::set<std::string> ids;
  for (const auto& t : all.results[0].targets) ids.insert(t.target_id.node_id.to_string());
  CHECK(ids.size() == 12);
  CHECK(all.results[0].targets.size() == 12);
}

TEST_CASE("Translate: only the last element must name its target", "[services][translate]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto empty_last = h.call<ua::TranslateBrowsePathsToNodeIdsResponse>(
      translate(ua::NodeId(0, 84), {step(kOrganizes, false, "Objects"), step(kOrganizes, false, "")}));
  CHECK(empty_last.results[0].status_code == ua::status::BadBrowseNameInvalid);
  auto any_middle = h.call<ua::TranslateBrowsePathsToNodeIdsResponse>(
      translate(ua::NodeId(0, 84), {step(kOrganizes, false, ""), step(kOrganizes, false, "Server")}));
  REQUIRE(any_middle.results[0].status_code == ua::status::Good);
  CHECK(any_middle.results[0].targets.at(0).target_id.node_id == ua::NodeId(0, 2253));
}

TEST_CASE("Browse: references per response are capped; continuation points carry the rest",
          "[services][browse][hardening]") {
  ServiceHarness h("\"max_references_per_browse\": 8", twelve_pumps());  // 2 continuation points
  REQUIRE(h.login().is_good());
  const ua::NodeId pumps(2, ua::String("Pumps"));
  ua::BrowseRequest req;
  for (int i = 0; i < 2; ++i) {
    ua::BrowseDescription d;
    d.node_id = pumps;
    d.browse_direction = ua::BrowseDirection::Forward;
    d.reference_type_id = ua::NodeId(0, kHierarchical);
    d.include_subtypes = true;
    d.result_mask = 63;
    req.nodes_to_browse.push_back(d);
  }
  auto resp = h.call<ua::BrowseResponse>(req);
  REQUIRE(resp.results.size() == 2);
  size_t total = 0;
  for (const auto& r : resp.results) {
    total += r.references.size();
    CHECK(r.status_code == ua::status::Good);
  }
  CHECK(total == 8);
  // Every node's references arrive in full through BrowseNext.
  for (auto& r : resp.results) {
    std::set<std::string> seen;
    for (const auto& ref : r.references) seen.insert(ref.node_id.node_id.to_string());
    ua::ByteString cp = r.continuation_point;
    for (int rounds = 0; !cp.empty() && rounds < 10; ++rounds) {
      ua::BrowseNextRequest next;
      next.continuation_points.push_back(cp);
      auto more = h.call<ua::BrowseNextResponse>(next);
      REQUIRE(more.results.size() == 1);
      REQUIRE(more.results[0].status_code == ua::status::Good);
      CHECK(more.results[0].references.size() <= 8);
      for (const auto& ref : more.results[0].references) seen.insert(ref.node_id.node_id.to_string());
      cp = more.results[0].continuation_point;
    }
    CHECK(cp.empty());
    CHECK(seen.size() == 12);
  }
}

TEST_CASE(
    "Browse: a response past the client's maxResponseMessageSize stops encoding with BadResponseTooLarge",
    "[services][browse][hardening]") {
  ServiceHarness h("\"max_nodes_per_browse\": 1000");
  REQUIRE(h.login({}, 60000, 4096).is_good());
  ua::BrowseRequest req;
  for (int i = 0; i < 500; ++i) {
    ua::BrowseDescription d;
    d.node_id = ua::NodeId(0, 2253);  // the Server object: dozens of references
    d.browse_direction = ua::BrowseDirection::Both;
    d.include_subtypes = true;
    d.result_mask = 63;
    req.nodes_to_browse.push_back(d);
  }
  ua::StatusCode fault;
  h.call<ua::BrowseResponse>(req, &fault);
  CHECK(fault == ua::status::BadResponseTooLarge);
  // A small Browse on the same session still works.
  req.nodes_to_browse.resize(1);
  auto ok = h.call<ua::BrowseResponse>(req, &fault);
  CHECK(fault == ua::status::Good);
  CHECK_FALSE(ok.results.at(0).references.empty());
}

TEST_CASE("Any response past the client's maxResponseMessageSize is BadResponseTooLarge",
          "[services][hardening]") {
  // Part 4 §5.6.2: maxResponseMessageSize bounds the body of every response of the session, not only
  // Browse and Publish; here a Read of a 40 KB array by a client that accepts 8 KiB.
  ServiceHarness h;
  REQUIRE(h.login({}, 60000, 8192).is_good());
  REQUIRE(h.write(plant(".Table"), ua::Variant(std::vector<int32_t>(10000, 7))).is_good());
  ua::ReadRequest read;
  read.nodes_to_read.push_back(ua::ReadValueId{plant(".Table"), 13, {}, {}});
  ua::StatusCode fault;
  h.call<ua::ReadResponse>(read, &fault);
  CHECK(fault == ua::status::BadResponseTooLarge);
  // What fits still goes out, on the same session.
  auto part = h.read(plant(".Table"), 13, "0:99");
  CHECK(part.status.is_good());
  CHECK(part.value.array_length() == 100);

  // Without a limit (0) the whole array is read.
  ServiceHarness roomy;
  REQUIRE(roomy.login().is_good());
  REQUIRE(roomy.write(plant(".Table"), ua::Variant(std::vector<int32_t>(10000, 7))).is_good());
  auto whole = roomy.call<ua::ReadResponse>(read, &fault);
  CHECK(fault == ua::status::Good);
  CHECK(whole.results.at(0).value.array_length() == 10000);
}

TEST_CASE("Operation limits are checked from the array length, before decoding", "[services][hardening]") {
  ServiceHarness h;  // max_nodes_per_read: 5
  REQUIRE(h.login().is_good());
  ua::ReadRequest read;
  read.request_header.authentication_token = h.token;
  read.request_header.request_handle = ++h.handle;
  std::string body = encode_request(read);
  // nodesToRead is the last field: claim a million elements with no bytes behind them.
  const int32_t claimed = 1000000;
  std::memcpy(body.data() + body.size() - 4, &claimed, 4);
  h.feed(symmetric_chunk("MSG", 'F', h.channel_id, h.token_id, h.sequence++, h.handle, body));
  ServerMessage m;
  REQUIRE(h.take_response(h.handle, m));
  ua::StatusCode fault;
  decode_response<ua::ReadResponse>(m, &fault, h.handle);
  CHECK(fault == ua::status::BadTooManyOperations);

  // Six real elements: the same answer, and so for every service with an operation list.
  read.nodes_to_read.resize(6, ua::ReadValueId{ua::NodeId(0, 2258), 13, {}, {}});
  h.call<ua::ReadResponse>(read, &fault);
  CHECK(fault == ua::status::BadTooManyOperations);
}

TEST_CASE("Shard scratch returns to its normal size after one large request", "[services][hardening]") {
  ServiceHarness h("\"max_nodes_per_read\": 5000");  // replaces the harness's 5
  REQUIRE(h.login().is_good());
  ua::ReadRequest read;
  read.nodes_to_read.resize(3000, ua::ReadValueId{ua::NodeId(0, 2258), 13, {}, {}});
  auto resp = h.call<ua::ReadResponse>(read);
  CHECK(resp.results.size() == 3000);
  // Nothing of the 3,000-element request and response stays on the shard.
  // (Reusable keeps the object only while it is within services::kScratchKeepOperations.)
  auto small = h.call<ua::ReadResponse>(ua::ReadRequest{
      {}, 0, ua::TimestampsToReturn::Both, {ua::ReadValueId{ua::NodeId(0, 2258), 13, {}, {}}}});
  CHECK(small.results.size() == 1);
  auto& scratch = const_cast<services::Scratch&>(h.server->shard_state(0).scratch);
  auto req = scratch.read_request.lease();
  CHECK(req->nodes_to_read.capacity() <= services::kScratchKeepOperations);
  auto out = scratch.read_response.lease();
  CHECK(out->results.capacity() <= services::kScratchKeepOperations);
}

TEST_CASE("Reusable: a second lease while the first is held gets its own object", "[services][hardening]") {
  services::Reusable<std::vector<int>> r([](const std::vector<int>& v) noexcept { return v.capacity() > 4; });
  {
    auto a = r.lease();
    a->push_back(1);
    auto b = r.lease();  // as a re-entered handler would
    CHECK(b->empty());
    b->push_back(2);
    CHECK(a->size() == 1);
    CHECK(r.leased());
  }
  CHECK_FALSE(r.leased());
  {
    auto a = r.lease();
    CHECK(a->size() == 1);  // kept: within its normal size
    a->resize(100);
  }
  auto c = r.lease();
  CHECK(c->capacity() == 0);  // grown past it: replaced
}

TEST_CASE("Write: timestamps only where the node allows them, never the server's (Part 4 §5.10.4)",
          "[services][write]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const ua::NodeId speed = plant(".Speed");
  auto with = [&](auto set) {
    ua::WriteRequest w = write_request(speed, ua::Variant(42.0));
    set(w.nodes_to_write[0].value);
    auto resp = h.call<ua::WriteResponse>(w);
    REQUIRE(resp.results.size() == 1);
    return resp.results[0];
  };
  const ua::DateTime t = ua::DateTime::now();
  CHECK(with([&](ua::DataValue& v) { v.server_timestamp = t; }) == ua::status::BadWriteNotSupported);
  CHECK(with([&](ua::DataValue& v) { v.server_picoseconds = 5; }) == ua::status::BadWriteNotSupported);
  CHECK(with([&](ua::DataValue& v) { v.source_timestamp = t; }) == ua::status::BadWriteNotSupported);
  CHECK(with([&](ua::DataValue& v) { v.source_picoseconds = 7; }) == ua::status::BadWriteNotSupported);
  // Nothing of those was written.
  CHECK(h.read(speed).value == ua::Variant(10.0));
  CHECK(with([](ua::DataValue&) {}) == ua::status::Good);
  const ua::DataValue now = h.read(speed);
  CHECK(now.value == ua::Variant(42.0));
  CHECK_FALSE(now.server_timestamp.is_null());
  CHECK(now.server_picoseconds == 0);
  CHECK(now.source_picoseconds == 0);
}
