// View service set (Part 4 §5.8): Browse, BrowseNext, TranslateBrowsePathsToNodeIds, RegisterNodes,
// UnregisterNodes.
#include <cstring>

#include "services/request.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using addressspace::BrowseDirection;
using addressspace::NodeIndex;
using addressspace::NodeStore;

// References returned per node when the client sets no smaller limit; the rest go to a continuation
// point, so one Browse of a folder with a million children stays bounded.
constexpr uint32_t kServerMaxReferencesPerNode = 10000;

// ReferenceDescription fields selected by BrowseDescription.resultMask (Part 4 §5.8.2.2).
enum ResultMask : uint32_t {
  kReferenceType = 1, kIsForward = 2, kNodeClass = 4, kBrowseName = 8, kDisplayName = 16, kTypeDefinition = 32,
};

// What Browse and BrowseNext answer, before encoding: each BrowseResult's status and continuation
// point, and its references as a range of a shared list. The response is encoded from this straight
// out of the NodeStore (names and texts as views into its string pool), and both lists are reused by
// the shard thread, so a Browse in steady state copies no string and allocates nothing.
struct BrowseOutcome {
  ua::StatusCode status;
  ua::ByteString continuation_point;
  uint32_t result_mask = 0;
  uint32_t begin = 0;  // [begin, end) of BrowseScratch::references
  uint32_t end = 0;
};
struct BrowseScratch {
  std::vector<const addressspace::Reference*> references;
  std::vector<BrowseOutcome> results;

  void reset(size_t n) {
    references.clear();
    results.clear();
    results.resize(n);
  }
};

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
void send_browse_response(Call& call, const NodeStore& store, const ua::ResponseHeader& header,
                          const BrowseScratch& out, uint32_t binary_encoding_id) {
  const NodeIndex has_type_definition = store.find(ua::NodeId(0, 40));
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
  }
  e.write_length(0);  // no diagnostic infos
  if (!e.status().is_good())
    return call.channel.send_fault(call.request_id, header.request_handle, e.status());
  call.channel.send_response(call.request_id, std::move(buf));
}

// Continues (or starts) the walk `c` over its node's references; appends what it returns to
// out.references and sets `result`'s range and mask; says whether more references remain.
bool walk(const NodeStore& store, BrowseContinuation& c, BrowseScratch& out, BrowseOutcome& result) {
  auto refs = store.references(c.node);
  const uint32_t limit = c.max_references ? std::min(c.max_references, kServerMaxReferencesPerNode)
                                          : kServerMaxReferencesPerNode;
  result.result_mask = c.result_mask;
  result.begin = static_cast<uint32_t>(out.references.size());
  uint32_t found = 0;
  uint32_t i = c.next_reference;
  for (; i < refs.size(); ++i) {
    const auto& r = refs[i];
    if (!store.matches(r, c.reference_type, c.include_subtypes, c.direction)) continue;
    if (c.node_class_mask && !(c.node_class_mask & static_cast<uint32_t>(store.node_class(r.target))))
      continue;
    if (found == limit) break;
    out.references.push_back(&r);
    ++found;
  }
  result.end = static_cast<uint32_t>(out.references.size());
  c.next_reference = i;
  return i < refs.size();
}

// Saves `c` in the session as a continuation point; BadNoContinuationPoints when the session has used
// its allowance (Part 4 §5.8.2).
ua::StatusCode save_continuation(Server& server, Session& s, const BrowseContinuation& c, ua::ByteString& point) {
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
                uint32_t max_refs, BrowseScratch& out, BrowseOutcome& result) {
  BrowseContinuation c;
  c.store = &store;
  c.node = store.find(d.node_id);
  if (c.node == addressspace::kNoNode) {
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
  if (walk(store, c, out, result)) {
    ua::StatusCode saved = save_continuation(server, s, c, result.continuation_point);
    if (!saved.is_good()) {
      result.status = saved;
      out.references.resize(result.begin);  // no references with this error
      result.end = result.begin;
    }
  }
}

}  // namespace

void handle_browse(Server& server, Call& call, ua::Decoder& body) {
  // Reused per shard thread, as in handle_read: a warm request and warm lists allocate nothing.
  thread_local ua::BrowseRequest req;
  thread_local BrowseScratch out;
  if (!decode_request(call, body, req)) return;
  if (!req.view.view_id.is_null()) {
    // No views are defined: any view id is unknown (Part 4 §5.8.2.3).
    const NodeStore& store = *server.space().current();
    const NodeIndex v = store.find(req.view.view_id);
    if (v == addressspace::kNoNode || store.node_class(v) != addressspace::NodeClass::View) {
      return call.channel.send_fault(call.request_id, req.request_header.request_handle, status::BadViewIdUnknown);
    }
  }
  const auto& limits = server.config().limits.operations;
  if (!check_operation_count(call, req.request_header, req.nodes_to_browse.size(), limits.max_nodes_per_browse)) return;
  const NodeStore& store = *server.space().current();
  out.reset(req.nodes_to_browse.size());
  for (size_t i = 0; i < req.nodes_to_browse.size(); ++i) {
    browse_one(server, *call.session, store, req.nodes_to_browse[i], req.requested_max_references_per_node,
               out, out.results[i]);
  }
  send_browse_response(call, store, response_header(req.request_header), out,
                       ua::BrowseResponse::binary_encoding_id);
}

void handle_browse_next(Server& server, Call& call, ua::Decoder& body) {
  thread_local ua::BrowseNextRequest req;  // reused, as in handle_browse
  thread_local BrowseScratch out;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.request_header, req.continuation_points.size(),
                             server.config().limits.operations.max_nodes_per_browse)) {
    return;
  }
  Session& s = *call.session;
  const NodeStore& store = *server.space().current();
  out.reset(req.continuation_points.size());
  for (size_t i = 0; i < req.continuation_points.size(); ++i) {
    auto& result = out.results[i];
    auto it = s.continuations.find(req.continuation_points[i].str());
    if (it == s.continuations.end()) {
      result.status = status::BadContinuationPointInvalid;
      continue;
    }
    BrowseContinuation c = it->second;
    s.continuations.erase(it);
    if (req.release_continuation_points) continue;  // released: an empty, good result
    if (c.store != &store) {
      result.status = status::BadContinuationPointInvalid;  // the address space changed since
      continue;
    }
    if (walk(store, c, out, result)) {
      ua::StatusCode saved = save_continuation(server, s, c, result.continuation_point);
      if (!saved.is_good()) result.status = saved;
    }
  }
  send_browse_response(call, store, response_header(req.request_header), out,
                       ua::BrowseNextResponse::binary_encoding_id);
}

void handle_translate(Server& server, Call& call, ua::Decoder& body) {
  ua::TranslateBrowsePathsToNodeIdsRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.request_header, req.browse_paths.size(),
                             server.config().limits.operations.max_nodes_per_translate_browse_paths)) {
    return;
  }
  const NodeStore& store = *server.space().current();
  ua::TranslateBrowsePathsToNodeIdsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.results.resize(req.browse_paths.size());
  std::vector<NodeIndex> current, next;
  for (size_t p = 0; p < req.browse_paths.size(); ++p) {
    const auto& path = req.browse_paths[p];
    auto& result = resp.results[p];
    const NodeIndex start = store.find(path.starting_node);
    if (start == addressspace::kNoNode) {
      result.status_code = status::BadNodeIdUnknown;
      continue;
    }
    const auto& elements = path.relative_path.elements;
    if (elements.empty()) {
      result.status_code = status::BadNothingToDo;
      continue;
    }
    bool names_ok = true;
    for (const auto& e : elements) names_ok &= !e.target_name.name.empty();
    if (!names_ok) {
      result.status_code = status::BadBrowseNameInvalid;
      continue;
    }
    current.assign(1, start);
    for (const auto& e : elements) {
      int type = -1;
      if (!e.reference_type_id.is_null()) {
        const NodeIndex rt = store.find(e.reference_type_id);
        type = rt == addressspace::kNoNode ? -2 : store.reference_type_index(rt);
      }
      next.clear();
      if (type != -2) {
        const auto dir = e.is_inverse ? BrowseDirection::Inverse : BrowseDirection::Forward;
        for (NodeIndex n : current) {
          for (const auto& r : store.references(n)) {
            if (!store.matches(r, type, e.include_subtypes, dir)) continue;
            const auto& rec = store.record(r.target);
            if (rec.browse_ns == e.target_name.namespace_index &&
                store.string(rec.browse_name) == e.target_name.name.view()) {
              next.push_back(r.target);
            }
          }
        }
      }
      current.swap(next);
      if (current.empty()) break;
    }
    if (current.empty()) {
      result.status_code = status::BadNoMatch;
      continue;
    }
    for (NodeIndex n : current) {
      result.targets.push_back(ua::BrowsePathTarget{ua::ExpandedNodeId{store.node_id(n), {}, 0}, UINT32_MAX});
    }
  }
  call.channel.send(call.request_id, resp);
}

void handle_register_nodes(Server& server, Call& call, ua::Decoder& body) {
  ua::RegisterNodesRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.request_header, req.nodes_to_register.size(),
                             server.config().limits.operations.max_nodes_per_register_nodes)) {
    return;
  }
  // Every NodeId already resolves through one hash lookup, so a registered id is the id itself
  // (Part 4 §5.8.5 lets the server return the same ids).
  ua::RegisterNodesResponse resp;
  set_response_header(resp.response_header, req.request_header);
  resp.registered_node_ids = std::move(req.nodes_to_register);
  call.channel.send(call.request_id, resp);
}

void handle_unregister_nodes(Server& server, Call& call, ua::Decoder& body) {
  ua::UnregisterNodesRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.request_header, req.nodes_to_unregister.size(),
                             server.config().limits.operations.max_nodes_per_register_nodes)) {
    return;
  }
  ua::UnregisterNodesResponse resp;
  set_response_header(resp.response_header, req.request_header);
  call.channel.send(call.request_id, resp);
}

}  // namespace opcuad::services
