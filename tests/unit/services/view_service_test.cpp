// Browse encodes its ReferenceDescriptions straight from the NodeStore (views into the string pool).
// These tests decode what it sends with the generated decoder and compare every field with what the
// owning NodeStore accessors say, for every resultMask, so the hand-laid encoding stays the structure's.
#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
using addressspace::NodeIndex;
using addressspace::NodeStore;

namespace {

// What the ReferenceDescription of `r` holds under `mask` (Part 4 §5.8.2.2), built field by field.
ua::ReferenceDescription expected(const NodeStore& store, const addressspace::Reference& r, uint32_t mask) {
  ua::ReferenceDescription d;
  if (mask & 1) d.reference_type_id = store.node_id(store.reference_type_node(r.type));
  if (mask & 2) d.is_forward = !r.is_inverse;
  d.node_id.node_id = store.node_id(r.target);
  const auto cls = store.node_class(r.target);
  if (mask & 4) d.node_class = static_cast<ua::NodeClass>(cls);
  if (mask & 8) d.browse_name = store.browse_name(r.target);
  if (mask & 16) d.display_name = store.display_name(r.target);
  if ((mask & 32) && (cls == addressspace::NodeClass::Object || cls == addressspace::NodeClass::Variable)) {
    const NodeIndex t = store.forward_target(r.target, store.find(ua::NodeId(0, 40)));
    if (t != addressspace::kNoNode) d.type_definition.node_id = store.node_id(t);
  }
  return d;
}

}  // namespace

TEST_CASE("services: Browse encodes every resultMask field from the node store", "[services][browse]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const NodeStore& store = *h.space.current();
  // The Server object (many references of every kind), Root, a configured folder and a variable.
  for (const ua::NodeId& id : {ua::NodeId(0, 2253), ua::NodeId(0, 84), plant(""), plant(".Speed")}) {
    const NodeIndex n = store.find(id);
    REQUIRE(n != addressspace::kNoNode);
    for (uint32_t mask = 0; mask < 64; ++mask) {
      ua::BrowseRequest b;
      b.nodes_to_browse.push_back(ua::BrowseDescription{id, ua::BrowseDirection::Both, {}, true, 0, mask});
      // Two nodes in one request: results and their reference lists stay apart.
      b.nodes_to_browse.push_back(b.nodes_to_browse[0]);
      b.nodes_to_browse[1].browse_direction = ua::BrowseDirection::Inverse;
      auto resp = h.call<ua::BrowseResponse>(b);
      REQUIRE(resp.results.size() == 2);
      std::vector<ua::ReferenceDescription> both, inverse;
      for (const auto& r : store.references(n)) {
        both.push_back(expected(store, r, mask));
        if (r.is_inverse) inverse.push_back(expected(store, r, mask));
      }
      INFO(id.to_string() << " mask " << mask);
      CHECK(resp.results[0].status_code.is_good());
      CHECK(resp.results[0].references == both);
      CHECK(resp.results[1].references == inverse);
      CHECK(resp.diagnostic_infos.empty());
    }
  }
}

TEST_CASE("services: BrowseNext pages encode like Browse", "[services][browse]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const NodeStore& store = *h.space.current();
  const NodeIndex server = store.find(ua::NodeId(0, 2253));
  std::vector<ua::ReferenceDescription> all;
  for (const auto& r : store.references(server)) all.push_back(expected(store, r, 63));
  ua::BrowseRequest b;
  b.requested_max_references_per_node = 3;
  b.nodes_to_browse.push_back(
      ua::BrowseDescription{ua::NodeId(0, 2253), ua::BrowseDirection::Both, {}, true, 0, 63});
  auto first = h.call<ua::BrowseResponse>(b);
  REQUIRE(first.results.size() == 1);
  std::vector<ua::ReferenceDescription> got = first.results[0].references;
  CHECK(got.size() == 3);
  ua::BrowseNextRequest next;
  next.continuation_points.push_back(first.results[0].continuation_point);
  for (int guard = 0; guard < 100 && !next.continuation_points[0].empty(); ++guard) {
    auto more = h.call<ua::BrowseNextResponse>(next);
    REQUIRE(more.results.size() == 1);
    CHECK(more.results[0].status_code.is_good());
    got.insert(got.end(), more.results[0].references.begin(), more.results[0].references.end());
    next.continuation_points[0] = more.results[0].continuation_point;
  }
  CHECK(got == all);
  // An unknown continuation point: a result with its status and no references.
  auto bad = h.call<ua::BrowseNextResponse>(next);
  REQUIRE(bad.results.size() == 1);
  CHECK(bad.results[0].status_code == ua::status::BadContinuationPointInvalid);
  CHECK(bad.results[0].references.empty());
}

TEST_CASE("services: the hand-encoded Browse response is byte for byte the generated encoder's",
          "[services][browse]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::BrowseRequest b;
  for (uint32_t mask : {0u, 5u, 63u}) {
    b.nodes_to_browse.push_back(
        ua::BrowseDescription{ua::NodeId(0, 2253), ua::BrowseDirection::Both, {}, true, 0, mask});
  }
  b.nodes_to_browse.push_back(
      ua::BrowseDescription{ua::NodeId(0, 1), ua::BrowseDirection::Forward, {}, true, 0, 63});
  b.requested_max_references_per_node = 7;  // continuation points too
  const uint32_t id = h.send(b);
  ServerMessage m;
  REQUIRE(h.take_response(id, m));
  ua::BrowseResponse decoded;
  REQUIRE(decode_body(m, decoded));
  ua::ByteBuffer again;
  ua::Encoder e(again);
  ua::encode(e, ua::NodeId(0, ua::BrowseResponse::binary_encoding_id));
  ua::encode(e, decoded);
  REQUIRE(e.status().is_good());
  CHECK(std::vector<uint8_t>(again.data(), again.data() + again.size()) == m.body);
}
