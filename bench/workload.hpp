#pragma once
// Workload: what one scenario sends and how its responses are checked.
//
//   read       ReadRequest of N Value attributes (ns=2;s=Bench.V1 .. VN), TimestampsToReturn Both
//   write      WriteRequest of N Double values to the same variables
//   browse     BrowseRequest of the Server object (i=2253), both directions, all references, all fields
//   translate  TranslateBrowsePathsToNodeIds of N paths Objects -> 2:Bench -> 2:V<k>
//
// The harness writes the server configuration that declares these nodes (see opcuad_bench.cpp); a server
// targeted with --url must declare them the same way.

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "ua/buffer.hpp"
#include "ua/decoder.hpp"
#include "ua/node_id.hpp"
#include "ua/status_code.hpp"

namespace opcuad::bench {

enum class Scenario { Read, Write, Browse, Translate };

std::optional<Scenario> parse_scenario(std::string_view name);
std::string_view scenario_name(Scenario s);

// Errors by status code: the service result of a response (or its ServiceFault) and every Bad status
// of a single operation.
struct ErrorCounts {
  std::map<uint32_t, uint64_t> service;
  std::map<uint32_t, uint64_t> operation;
  uint64_t total() const noexcept;
  void merge(const ErrorCounts& o);
};

// What checking one response found.
struct ResponseSummary {
  uint32_t request_handle = 0;
  uint32_t operations = 0;  // results in the response
  uint32_t references = 0;  // browse only
  bool good = false;        // service result Good, every result present
  uint32_t bad_operations = 0;
};

class Workload {
 public:
  Workload(Scenario scenario, uint32_t nodes, uint16_t namespace_index);
  // Read: every one of the N ReadValueIds names `node` instead of ns=2;s=Bench.V1 .. VN (--read-node,
  // e.g. i=2258, Server.ServerStatus.CurrentTime, computed at read time).
  void set_read_node(ua::NodeId node) { read_node_ = std::move(node); }
  const std::optional<ua::NodeId>& read_node() const noexcept { return read_node_; }
  // Write: every other request of a connection writes 0.5 k + `offset` instead of 0.5 k to Bench.V<k>
  // (--alarm-toggle: across the alarms' high limit and back, so every write changes the limit state).
  void set_alternate_offset(double offset) { alternate_offset_ = offset; }
  bool alternates() const noexcept { return alternate_offset_ != 0; }

  Scenario scenario() const noexcept { return scenario_; }
  uint32_t nodes() const noexcept { return nodes_; }
  // Operations per request: N, or 1 for browse.
  uint32_t operations_per_request() const noexcept;
  uint32_t request_type_id() const noexcept;
  uint32_t response_type_id() const noexcept;

  // Encodes type id + request into `out` for a session; returns the offset of the RequestHeader's
  // RequestHandle in `out`, which the connection patches per send.
  // `alternate`: the request with the alternate values (set_alternate_offset); the same size and layout.
  size_t encode_request(const ua::NodeId& authentication_token, ua::ByteBuffer& out,
                        bool alternate = false) const;

  // Decodes a response body after its type id (`type` already read) into objects reused per thread,
  // counting bad codes into `errors`. Never throws, never allocates once warm.
  ResponseSummary check_response(uint32_t type, ua::Decoder& d, ErrorCounts& errors) const;

 private:
  Scenario scenario_;
  uint32_t nodes_;
  uint16_t ns_;
  std::optional<ua::NodeId> read_node_;
  double alternate_offset_ = 0;
};

// The NodeId the harness's configuration gives variable k (1-based).
ua::NodeId bench_variable(uint16_t ns, uint32_t k);

}  // namespace opcuad::bench
