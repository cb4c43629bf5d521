#pragma once
// A request sent as ServiceHarness::send() does, with the heap allocations of handling it counted: the
// tests that a request path allocates nothing per item (docs/ARCHITECTURE.md).
#include <cstddef>
#include <string>

#include "tests/unit/services/allocation_counter.hpp"
#include "tests/unit/services/service_harness.hpp"

namespace opcuad::services::test {

// Sends `req` with h's session token and returns the allocations of handling it, the transport included
// (and the answer's, when it is sent at once); the request's bytes are made before counting starts.
template <class Req>
size_t send_counted(ServiceHarness& h, Req req) {
  req.request_header.authentication_token = h.token;
  req.request_header.request_handle = ++h.handle;
  const std::string bytes =
      symmetric_chunk("MSG", 'F', h.channel_id, h.token_id, h.sequence++, h.handle, encode_request(req));
  opcuad::test::g_allocations = 0;
  opcuad::test::g_counting = true;
  h.feed(bytes);
  opcuad::test::g_counting = false;
  return opcuad::test::g_allocations;
}

}  // namespace opcuad::services::test
