#include "bench/workload.hpp"

#include <string>

#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::bench {

namespace {

constexpr uint32_t kValueAttribute = 13;
constexpr uint32_t kBrowseResultMaskAll = 63;  // ReferenceType .. TypeDefinition (Part 4 §5.8.2)

void count(std::map<uint32_t, uint64_t>& m, ua::StatusCode s) {
  ++m[s.value()];
}

// Request objects encoded once per session; the response objects each client thread decodes into.
// thread_local keeps their capacity warm per thread without sharing anything between threads.
struct ResponseObjects {
  ua::ReadResponse read;
  ua::WriteResponse write;
  ua::BrowseResponse browse;
  ua::TranslateBrowsePathsToNodeIdsResponse translate;
  ua::ServiceFault fault;
};
thread_local ResponseObjects t_responses;

// The per-operation results must match the request one to one (Part 4 §7.33: one result per item).
template <class Response, class PerResult>
ResponseSummary summarise(const Response& r, uint32_t expected, ErrorCounts& errors, PerResult per_result) {
  ResponseSummary s;
  s.request_handle = r.response_header.request_handle;
  s.operations = static_cast<uint32_t>(r.results.size());
  if (!r.response_header.service_result.is_good()) {
    count(errors.service, r.response_header.service_result);
    return s;
  }
  if (r.results.size() != expected) {
    count(errors.service, ua::status::BadUnexpectedError);
    return s;
  }
  for (const auto& x : r.results) per_result(x, s);
  s.good = true;
  return s;
}

}  // namespace

std::optional<Scenario> parse_scenario(std::string_view name) {
  if (name == "read") return Scenario::Read;
  if (name == "write") return Scenario::Write;
  if (name == "browse") return Scenario::Browse;
  if (name == "translate") return Scenario::Translate;
  return std::nullopt;
}

std::string_view scenario_name(Scenario s) {
  switch (s) {
    case Scenario::Read:
      return "read";
    case Scenario::Write:
      return "write";
    case Scenario::Browse:
      return "browse";
    case Scenario::Translate:
      return "translate";
  }
  return "?";
}

uint64_t ErrorCounts::total() const noexcept {
  uint64_t n = 0;
  for (const auto& [code, c] : service) n += c;
  for (const auto& [code, c] : operation) n += c;
  return n;
}

void ErrorCounts::merge(const ErrorCounts& o) {
  for (const auto& [code, c] : o.service) service[code] += c;
  for (const auto& [code, c] : o.operation) operation[code] += c;
}

ua::NodeId bench_variable(uint16_t ns, uint32_t k) {
  std::string name = "Bench.V";
  name += std::to_string(k);
  return ua::NodeId(ns, ua::String(std::move(name)));
}

Workload::Workload(Scenario scenario, uint32_t nodes, uint16_t namespace_index)
    : scenario_(scenario), nodes_(nodes == 0 ? 1 : nodes), ns_(namespace_index) {}

uint32_t Workload::operations_per_request() const noexcept {
  return scenario_ == Scenario::Browse ? 1 : nodes_;
}

uint32_t Workload::request_type_id() const noexcept {
  switch (scenario_) {
    case Scenario::Read:
      return ua::ReadRequest::binary_encoding_id;
    case Scenario::Write:
      return ua::WriteRequest::binary_encoding_id;
    case Scenario::Browse:
      return ua::BrowseRequest::binary_encoding_id;
    case Scenario::Translate:
      return ua::TranslateBrowsePathsToNodeIdsRequest::binary_encoding_id;
  }
  return 0;
}

uint32_t Workload::response_type_id() const noexcept {
  switch (scenario_) {
    case Scenario::Read:
      return ua::ReadResponse::binary_encoding_id;
    case Scenario::Write:
      return ua::WriteResponse::binary_encoding_id;
    case Scenario::Browse:
      return ua::BrowseResponse::binary_encoding_id;
    case Scenario::Translate:
      return ua::TranslateBrowsePathsToNodeIdsResponse::binary_encoding_id;
  }
  return 0;
}

size_t Workload::encode_request(const ua::NodeId& authentication_token, ua::ByteBuffer& out,
                                bool alternate) const {
  ua::RequestHeader header;
  header.authentication_token = authentication_token;
  header.timestamp = ua::DateTime::now();
  header.request_handle = 0;
  header.timeout_hint = 10000;

  out.clear();
  ua::Encoder e(out);
  ua::encode(e, ua::NodeId(0, request_type_id()));
  // RequestHeader: AuthenticationToken, Timestamp (8), then RequestHandle.
  size_t handle_offset = 0;
  {
    ua::ByteBuffer probe;
    ua::Encoder pe(probe);
    ua::encode(pe, authentication_token);
    handle_offset = e.position() + probe.size() + 8;
  }
  switch (scenario_) {
    case Scenario::Read: {
      ua::ReadRequest r;
      r.request_header = header;
      r.timestamps_to_return = ua::TimestampsToReturn::Both;
      for (uint32_t k = 1; k <= nodes_; ++k) {
        ua::ReadValueId v;
        v.node_id = read_node_ ? *read_node_ : bench_variable(ns_, k);
        v.attribute_id = kValueAttribute;
        r.nodes_to_read.push_back(std::move(v));
      }
      ua::encode(e, r);
      break;
    }
    case Scenario::Write: {
      ua::WriteRequest r;
      r.request_header = header;
      for (uint32_t k = 1; k <= nodes_; ++k) {
        ua::WriteValue v;
        v.node_id = bench_variable(ns_, k);
        v.attribute_id = kValueAttribute;
        v.value.value = 0.5 * k + (alternate ? alternate_offset_ : 0.0);
        r.nodes_to_write.push_back(std::move(v));
      }
      ua::encode(e, r);
      break;
    }
    case Scenario::Browse: {
      ua::BrowseRequest r;
      r.request_header = header;
      ua::BrowseDescription b;
      b.node_id = ua::NodeId(ua::id::Server);
      b.browse_direction = ua::BrowseDirection::Both;
      b.include_subtypes = true;  // a null reference type means all references
      b.result_mask = kBrowseResultMaskAll;
      r.nodes_to_browse.push_back(std::move(b));
      ua::encode(e, r);
      break;
    }
    case Scenario::Translate: {
      ua::TranslateBrowsePathsToNodeIdsRequest r;
      r.request_header = header;
      for (uint32_t k = 1; k <= nodes_; ++k) {
        ua::BrowsePath p;
        p.starting_node = ua::NodeId(ua::id::ObjectsFolder);
        std::string leaf = "V";
        leaf += std::to_string(k);
        for (std::string_view name : {std::string_view("Bench"), std::string_view(leaf)}) {
          ua::RelativePathElement el;
          el.reference_type_id = ua::NodeId(ua::id::HierarchicalReferences);
          el.include_subtypes = true;
          el.target_name = ua::QualifiedName{ns_, ua::String(name)};
          p.relative_path.elements.push_back(std::move(el));
        }
        r.browse_paths.push_back(std::move(p));
      }
      ua::encode(e, r);
      break;
    }
  }
  return handle_offset;
}

ResponseSummary Workload::check_response(uint32_t type, ua::Decoder& d, ErrorCounts& errors) const {
  ResponseObjects& o = t_responses;
  if (type == ua::ServiceFault::binary_encoding_id) {
    ua::decode(d, o.fault);
    ResponseSummary s;
    s.request_handle = o.fault.response_header.request_handle;
    count(errors.service, d.ok() ? o.fault.response_header.service_result : d.status());
    return s;
  }
  if (type != response_type_id()) {
    count(errors.service, ua::status::BadUnknownResponse);
    return {};
  }
  const uint32_t expected = operations_per_request();
  uint32_t bad_operations = 0;
  auto bad = [&](ua::StatusCode sc) {
    if (sc.is_bad()) {
      count(errors.operation, sc);
      ++bad_operations;
    }
  };
  ResponseSummary s;
  switch (scenario_) {
    case Scenario::Read:
      ua::decode(d, o.read);
      if (d.ok())
        s = summarise(o.read, expected, errors,
                      [&](const ua::DataValue& v, ResponseSummary&) { bad(v.status); });
      break;
    case Scenario::Write:
      ua::decode(d, o.write);
      if (d.ok())
        s = summarise(o.write, expected, errors, [&](ua::StatusCode sc, ResponseSummary&) { bad(sc); });
      break;
    case Scenario::Browse:
      ua::decode(d, o.browse);
      if (d.ok())
        s = summarise(o.browse, expected, errors, [&](const ua::BrowseResult& r, ResponseSummary& sum) {
          bad(r.status_code);
          sum.references += static_cast<uint32_t>(r.references.size());
        });
      break;
    case Scenario::Translate:
      ua::decode(d, o.translate);
      if (d.ok())
        s = summarise(o.translate, expected, errors,
                      [&](const ua::BrowsePathResult& r, ResponseSummary&) { bad(r.status_code); });
      break;
  }
  if (!d.ok()) count(errors.service, d.status());
  s.bad_operations = bad_operations;
  return s;
}

}  // namespace opcuad::bench
