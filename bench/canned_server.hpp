#pragma once
// The canned-response "ceiling" server: it speaks just enough OPC UA (HEL/ACK, OPN with SecurityPolicy
// None, CreateSession, ActivateSession, CloseSession) and answers every request of the scenario with one
// pre-encoded response of the right size, copied and its RequestHandle patched. It does no service work,
// so a run against it measures loopback plus the load generator: the ceiling any real server is held to.
//
// One thread, one io_context, like one shard of opcuad; `opcuad-bench --serve-canned PORT` runs it as a
// child process so it is pinned and measured exactly like the server under test.

#include <cstdint>
#include <string>
#include <vector>

#include "bench/workload.hpp"

namespace opcuad::bench {

struct CannedResponse {
  uint32_t request_type_id = 0;  // the request it answers (binary encoding id)
  std::vector<uint8_t> body;     // type id + response, as it follows the sequence header
  size_t handle_offset = 0;      // of the ResponseHeader's RequestHandle in body
};

// A response like a real server's for the workload (Read: N Doubles with both timestamps; Write: N Good;
// Browse: 20 references; Translate: N one-target results). Used when no captured response is given.
CannedResponse synthesize_canned(const Workload& workload);
// Sets request_type_id and computes handle_offset for a captured body. False if it is not a response.
bool make_canned(uint32_t request_type_id, std::vector<uint8_t> body, CannedResponse& out);
bool save_canned(const std::string& path, const CannedResponse& canned);
bool load_canned(const std::string& path, CannedResponse& out);

// Listens on 127.0.0.1:port (0: any free port), logs "listening on opc.tcp://127.0.0.1:PORT for canned
// responses" on standard error, and serves until SIGTERM or SIGINT. Returns the process exit code.
int run_canned_server(uint16_t port, CannedResponse canned);

}  // namespace opcuad::bench
