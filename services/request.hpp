#pragma once
// Helpers every handler uses: decode the request (answering BadDecodingError when it is malformed) and
// apply the per-request operation checks of Part 4 (BadNothingToDo, BadTooManyOperations).

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

}  // namespace opcuad::services
