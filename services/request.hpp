#pragma once
// Helpers every handler uses: decode the request (answering BadDecodingError when it is malformed) and
// apply the per-request operation checks of Part 4 (BadNothingToDo, BadTooManyOperations), the second
// one before the operations are decoded.

#include "services/server.hpp"

namespace opcuad::services {

// Decodes a whole request; on failure answers ServiceFault(BadDecodingError) and returns false.
template <class T>
bool decode_request(Call& call, ua::Decoder& body, T& request) {
  ua::decode(body, request);
  if (body.ok()) return true;
  call.channel.send_fault(call.request_id, request.request_header.request_handle,
                          body.status() == ua::status::BadEncodingLimitsExceeded ? ua::status::BadEncodingLimitsExceeded
                                                                                 : ua::status::BadDecodingError);
  return false;
}

// Part 4 §5.1: an empty operation list is BadNothingToDo, more than the server's limit BadTooManyOperations
// (a limit of 0 means none). Answers the fault and returns false when the request cannot proceed.
inline bool check_operation_count(Call& call, const ua::RequestHeader& header, size_t count, uint32_t limit) {
  ua::StatusCode s = ua::status::Good;
  if (count == 0) s = ua::status::BadNothingToDo;
  else if (limit != 0 && count > limit) s = ua::status::BadTooManyOperations;
  if (s.is_good()) return true;
  call.channel.send_fault(call.request_id, header.request_handle, s);
  return false;
}

// Skips an encoded NodeId (Part 6 §5.2.2.9) without materialising it.
void skip_node_id(ua::Decoder& d) noexcept;
// Skips a RequestHeader (Part 4 §7.33) and returns its requestHandle.
uint32_t skip_request_header(ua::Decoder& d) noexcept;

// The fields that stand between a request's RequestHeader and its list of operations: a request type is
// listed here when that list is what an operation limit counts.
struct OperationList {
  size_t fixed_bytes = 0;         // fixed-size fields after the header
  bool view_description = false;  // a ViewDescription first (Browse)
};

// Reads the length of the operation list from the encoded request, before anything is decoded, and
// answers ServiceFault(BadTooManyOperations) when it exceeds `limit` (0: none): a request cannot make the
// server decode a million operations only to refuse them (Part 4 §5.1; the decoded form of an operation
// takes far more memory than its bytes). Returns false when it answered. Malformed bytes are left to the
// full decode, which reports them.
bool precheck_operation_count(Call& call, const ua::Decoder& body, OperationList list, uint32_t limit);

}  // namespace opcuad::services
