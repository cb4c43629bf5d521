// View service set (Part 4 §5.8): Browse, BrowseNext, TranslateBrowsePathsToNodeIds, RegisterNodes,
// UnregisterNodes.
#include <cstring>

#include "services/access_control.hpp"
#include "services/handlers.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using addressspace::BrowseDirection;
using addressspace::NodeIndex;
using addressspace::NodeStore;

// ReferenceDescription fields selected by BrowseDescription.resultMask (Part 4 §5.8.2.2).
enum ResultMask : uint32_t {
  kReferenceType = 1,
  kIsForward = 2,
  kNodeClass = 4,
  kBrowseName = 8,
  kDisplayName = 16,
  kTypeDefinition = 32,
};

// References one Browse or BrowseNext may examine, as a multiple of the references it may return
// (limits.max_references_per_browse): filtering by type or node class skips references, and a node with a
// million references none of which match must not cost a million steps per node browsed.
constexpr uint64_t kExaminedPerReturned = 10;

// What one Browse or BrowseNext request may still spend. When it runs out, the node being walked keeps
// its position in a continuation point, and the nodes after it get a continuation point with no
// references (Part 4 §5.8.2: the server may return fewer references than asked, with a continuation point).
struct BrowseBudget {
  uint32_t per_node;  // limits.max_references_per_node
  uint64_t returned;  // references left to return
  uint64_t examined;  // references left to look at
};

BrowseBudget browse_budget(const Server& server) {
  const auto& l = server.config().limits;
  return {l.max_references_per_node, l.max_references_per_browse,
          uint64_t{l.max_references_per_browse} * kExaminedPerReturned};
}

// One ReferenceDescription (Part 4 §7.30) with the fields `mask` selects (Part 4 §5.8.2.2), the others
// left at their defaults: the generated encoding of the same structure, field by field.
void encode_reference(ua::Encoder& e, const NodeStore& store, const addressspace::Reference& r, uint32_t mask,
                      NodeIndex has_type_definition) {
  static const ua::NodeId kNull;
  const auto cls = store.node_class(r.target);
  ua::encode(e, mask & kReferenceType ? store.node_id(store.reference_type_node(r.type)) : kNull);
  ua::encode(e, (mask & kIsForward) != 0 && !r.is_inverse);
  ua::encode(e, store.node_id(r.target));  // an ExpandedNodeId with no URI or server index: its NodeId
  addressspace::encode(
      e, mask & kBrowseName ? store.browse_name_view(r.target) : addressspace::QualifiedNameView{});
  addressspace::encode(
      e, mask & kDisplayName ? store.display_name_view(r.target) : addressspace::LocalizedTextView{});
  e.write_i32(mask & kNodeClass ? static_cast<int32_t>(cls) : 0);
  NodeIndex type = addressspace::kNoNode;
  if ((mask & kTypeDefinition) &&
      (cls == addressspace::NodeClass::Object || cls == addressspace::NodeClass::Variable)) {
    type = store.forward_target(r.target, has_type_definition);
  }
  ua::encode(e, type != addressspace::kNoNode ? store.node_id(type) : kNull);
}

// A BrowseResponse or BrowseNextResponse: {ResponseHeader, BrowseResult[], DiagnosticInfo[]}, the two
// of them laid out alike (Part 4 §5.8.2, §5.8.3).
// The encoding stops as soon as it passes what the client accepts (Call::max_response_body()):
// BadResponseTooLarge, without encoding the rest (Part 4 §7.33, §5.6.2 maxResponseMessageSize).
void send_browse_response(Call& call, const NodeStore& store, const ua::ResponseHeader& header,
                          const BrowseScratch& out, uint32_t binary_encoding_id) {
  const NodeIndex has_type_definition = store.find(ua::NodeId(0, ua::id::HasTypeDefinition));
  const size_t limit = call.max_response_body();
  ua::ByteBuffer buf = call.channel.acquire_buffer();
  ua::Encoder e(buf);
  ua::encode(e, ua::NodeId(0, binary_encoding_id));
  ua::encode(e, header);
  e.write_length(out.results.size());
  for (const BrowseOutcome& r : out.results) {
    ua::encode(e, r.status);
    ua::encode(e, r.continuation_point);
    e.write_length(r.end - r.begin);
    for (uint32_t i = r.begin; i < r.end; ++i) {
      encode_reference(e, store, *out.references[i], r.result_mask, has_type_definition);
    }
    if (buf.size() - transport::kSymmetricPrefix > limit) {
      e.fail(status::BadResponseTooLarge);
      break;
    }
  }
  e.write_length(0);  // no diagnostic infos
  if (!e.status().is_good()) {
    return call.fault(e.status());
  }
  call.channel.send_response(call.request_id, std::move(buf));
}

// Continues (or starts) the walk `c` over its node's references within `budget`; appends what it returns
// to out.references and sets `result`'s range and mask; says whether more references remain. A target the
// user may not browse (access_control::may_browse) is skipped like one that does not match.
bool walk(const NodeStore& store, BrowseContinuation& c, BrowseScratch& out, BrowseOutcome& result,
          BrowseBudget& budget, const UserAccess& user) {
  auto refs = store.references(c.node);
  uint64_t limit = c.max_references ? std::min(c.max_references, budget.per_node) : budget.per_node;
  limit = std::min(limit, budget.returned);
  result.result_mask = c.result_mask;
  result.begin = static_cast<uint32_t>(out.references.size());
  uint32_t found = 0;
  uint32_t i = c.next_reference;
  for (; i < refs.size(); ++i) {
    if (budget.examined == 0) break;
    const auto& r = refs[i];
    if (!store.matches(r, c.reference_type, c.include_subtypes, c.direction)) {
      --budget.examined;
      continue;
    }
    if (c.node_class_mask && !(c.node_class_mask & static_cast<uint32_t>(store.node_class(r.target)))) {
      --budget.examined;
      continue;
    }
    if (!access_control::may_browse(store, r.target, user)) {
      --budget.examined;
      continue;
    }
    if (found == limit) break;
    --budget.examined;
    out.references.push_back(&r);
    ++found;
  }
  budget.returned -= found;
  result.end = static_cast<uint32_t>(out.references.size());
  c.next_reference = i;
  return i < refs.size();
}

// Saves `c` in the session as a continuation point; BadNoContinuationPoints when the session has used
// its allowance (Part 4 §5.8.2).
ua::StatusCode save_continuation(Server& server, Session& s, const BrowseContinuation& c,
                                 ua::ByteString& point) {
  if (s.continuations.size() >= server.config().limits.max_browse_continuation_points) {
    return status::BadNoContinuationPoints;
  }
  const uint64_t id = s.next_continuation++;
  std::string key(8, '\0');
  std::memcpy(key.data(), &id, 8);
  s.continuations.emplace(key, c);
  point = ua::ByteString(key);
  return status::Good;
}

void browse_one(Server& server, Session& s, const NodeStore& store, const ua::BrowseDescription& d,
                uint32_t max_refs, BrowseScratch& out, BrowseOutcome& result, BrowseBudget& budget) {
  BrowseContinuation c;
  c.generation = store.generation();
  c.node = store.find(d.node_id);
  if (c.node == addressspace::kNoNode || !access_control::may_browse(store, c.node, s.access)) {
    result.status = status::BadNodeIdUnknown;
    return;
  }
  if (static_cast<uint32_t>(d.browse_direction) > 2) {
    result.status = status::BadBrowseDirectionInvalid;
    return;
  }
  if (!d.reference_type_id.is_null()) {
    const NodeIndex rt = store.find(d.reference_type_id);
    c.reference_type = rt == addressspace::kNoNode ? -1 : store.reference_type_index(rt);
    if (c.reference_type < 0) {
      result.status = status::BadReferenceTypeIdInvalid;
      return;
    }
  }
  c.include_subtypes = d.include_subtypes;
  c.direction = static_cast<BrowseDirection>(d.browse_direction);
  c.node_class_mask = d.node_class_mask;
  c.result_mask = d.result_mask;
  c.max_references = max_refs;
  if (walk(store, c, out, result, budget, s.access)) {
    ua::StatusCode saved = save_continuation(server, s, c, result.continuation_point);
    if (!saved.is_good()) {
      result.status = saved;
      out.references.resize(result.begin);  // no references with this error
      result.end = result.begin;
    }
  }
}

// One browse path (Part 4 §5.8.4): each step keeps every node once (TranslateScratch marks them), and
// every reference it examines is paid from `budget`, shared by the request's paths. Bounds: the targets
// of a path (limits.max_translate_matches: Bad_TooManyMatches), the references one request examines
// (limits.max_translate_references: Bad_QueryTooComplex, Part 4 §5.8.4.4). Intermediate node sets need
// no bound of their own: a node enters one only through a reference that was paid for.
ua::StatusCode translate_path(const NodeStore& store, const ua::BrowsePath& path, TranslateScratch& t,
                              uint64_t& budget, uint32_t max_matches) {
  const NodeIndex start = store.find(path.starting_node);
  if (start == addressspace::kNoNode) return status::BadNodeIdUnknown;
  const auto& elements = path.relative_path.elements;
  if (elements.empty()) return status::BadNothingToDo;
  // Part 4 §7.31: only the last element must name its target; an empty name elsewhere matches any node.
  if (elements.back().target_name.name.empty()) return status::BadBrowseNameInvalid;
  t.current.assign(1, start);
  for (size_t step = 0; step < elements.size(); ++step) {
    const auto& e = elements[step];
    const bool last = step + 1 == elements.size();
    int type = -1;
    if (!e.reference_type_id.is_null()) {
      const NodeIndex rt = store.find(e.reference_type_id);
      type = rt == addressspace::kNoNode ? -2 : store.reference_type_index(rt);
      if (type < 0) return status::BadNoMatch;  // not a ReferenceType of this server
    }
    const auto dir = e.is_inverse ? BrowseDirection::Inverse : BrowseDirection::Forward;
    const bool any_name = e.target_name.name.empty();
    const std::string_view name = e.target_name.name.view();
    t.next_step(store.size());
    for (NodeIndex n : t.current) {
      const auto refs = store.references(n);
      if (refs.size() > budget) return status::BadQueryTooComplex;
      budget -= refs.size();
      for (const auto& r : refs) {
        if (!store.matches(r, type, e.include_subtypes, dir)) continue;
        const auto& rec = store.record(r.target);
        if (!any_name &&
            (rec.browse_ns != e.target_name.namespace_index || store.string(rec.browse_name) != name))
          continue;
        if (t.add(r.target) && last && t.next.size() > max_matches) return status::BadTooManyMatches;
      }
    }
    t.current.swap(t.next);
    if (t.current.empty()) return status::BadNoMatch;
  }
  return status::Good;
}

}  // namespace

void handle_browse(Server& server, Call& call, ua::Decoder& body) {
  const auto& limits = server.config().limits.operations;
  if (!precheck_operation_count(call, body, {.fixed_bytes = 4, .view_description = true},
                                limits.max_nodes_per_browse))
    return;
  auto req = call.shard.scratch.browse_request.lease();
  if (!decode_request(call, body, *req)) return;
  if (!req->view.view_id.is_null()) {
    // The view must be a View node (Part 4 §5.8.2.3); only NodeSet2 files define some, and a View does not
    // narrow what Browse returns (docs/CONFIGURATION.md, "What this version does not serve").
    const NodeStore& store = *server.space().current();
    const NodeIndex v = store.find(req->view.view_id);
    if (v == addressspace::kNoNode || store.node_class(v) != addressspace::NodeClass::View) {
      return call.fault(status::BadViewIdUnknown);
    }
  }
  if (!check_operation_count(call, req->nodes_to_browse.size(), limits.max_nodes_per_browse)) return;
  const NodeStore& store = *server.space().current();
  auto out = call.shard.scratch.browse.lease();
  out->reset(req->nodes_to_browse.size());
  BrowseBudget budget = browse_budget(server);
  for (size_t i = 0; i < req->nodes_to_browse.size(); ++i) {
    browse_one(server, *call.session, store, req->nodes_to_browse[i], req->requested_max_references_per_node,
               *out, out->results[i], budget);
  }
  send_browse_response(call, store, response_header(req->request_header), *out,
                       ua::BrowseResponse::binary_encoding_id);
}

void handle_browse_next(Server& server, Call& call, ua::Decoder& body) {
  const uint32_t limit = server.config().limits.operations.max_nodes_per_browse;
  if (!precheck_operation_count(call, body, {.fixed_bytes = 1}, limit)) return;
  auto req = call.shard.scratch.browse_next_request.lease();
  if (!decode_request(call, body, *req)) return;
  if (!check_operation_count(call, req->continuation_points.size(), limit)) return;
  Session& s = *call.session;
  const NodeStore& store = *server.space().current();
  auto out = call.shard.scratch.browse.lease();
  out->reset(req->continuation_points.size());
  BrowseBudget budget = browse_budget(server);
  for (size_t i = 0; i < req->continuation_points.size(); ++i) {
    auto& result = out->results[i];
    auto it = s.continuations.find(req->continuation_points[i].str());
    if (it == s.continuations.end()) {
      result.status = status::BadContinuationPointInvalid;
      continue;
    }
    BrowseContinuation c = it->second;
    s.continuations.erase(it);
    if (req->release_continuation_points) continue;  // released: an empty, good result
    if (c.generation != store.generation()) {
      result.status = status::BadContinuationPointInvalid;  // a reload published another store since
      continue;
    }
    if (walk(store, c, *out, result, budget, s.access)) {
      ua::StatusCode saved = save_continuation(server, s, c, result.continuation_point);
      if (!saved.is_good()) result.status = saved;
    }
  }
  send_browse_response(call, store, response_header(req->request_header), *out,
                       ua::BrowseNextResponse::binary_encoding_id);
}

void handle_translate(Server& server, Call& call, ua::Decoder& body) {
  const auto& limits = server.config().limits;
  const uint32_t limit = limits.operations.max_nodes_per_translate_browse_paths;
  if (!precheck_operation_count(call, body, {}, limit)) return;
  ua::TranslateBrowsePathsToNodeIdsRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.browse_paths.size(), limit)) return;
  const NodeStore& store = *server.space().current();
  ua::TranslateBrowsePathsToNodeIdsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.resize(req.browse_paths.size());
  auto scratch = call.shard.scratch.translate.lease();
  uint64_t budget = limits.max_translate_references;
  // Each target encodes in at least 6 bytes (a two-byte NodeId and remainingPathIndex): stop collecting
  // before the response could only end as BadResponseTooLarge.
  const size_t max_targets = call.max_response_body() / 6;
  size_t targets = 0;
  for (size_t p = 0; p < req.browse_paths.size(); ++p) {
    auto& result = resp.results[p];
    result.status_code =
        translate_path(store, req.browse_paths[p], *scratch, budget, limits.max_translate_matches);
    if (!result.status_code.is_good()) continue;
    targets += scratch->current.size();
    if (targets > max_targets) {
      return call.fault(status::BadResponseTooLarge);
    }
    result.targets.reserve(scratch->current.size());
    for (NodeIndex n : scratch->current) {
      result.targets.push_back(ua::BrowsePathTarget{ua::ExpandedNodeId{store.node_id(n), {}, 0}, UINT32_MAX});
    }
  }
  call.send(resp);
}

void handle_register_nodes(Server& server, Call& call, ua::Decoder& body) {
  const uint32_t limit = server.config().limits.operations.max_nodes_per_register_nodes;
  if (!precheck_operation_count(call, body, {}, limit)) return;
  ua::RegisterNodesRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.nodes_to_register.size(), limit)) return;
  // Every NodeId already resolves through one hash lookup, so a registered id is the id itself
  // (Part 4 §5.8.5 lets the server return the same ids).
  ua::RegisterNodesResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.registered_node_ids = std::move(req.nodes_to_register);
  call.send(resp);
}

void handle_unregister_nodes(Server& server, Call& call, ua::Decoder& body) {
  const uint32_t limit = server.config().limits.operations.max_nodes_per_register_nodes;
  if (!precheck_operation_count(call, body, {}, limit)) return;
  ua::UnregisterNodesRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.nodes_to_unregister.size(), limit)) return;
  ua::UnregisterNodesResponse resp;
  set_response_header(resp.response_header, req.request_header);
  call.send(resp);
}

}  // namespace opcuad::services
