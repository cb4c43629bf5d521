#pragma once
// One request as its handler sees it (Call), and what every handler does with it: decode the request
// (answering BadDecodingError when it is malformed), apply the per-request operation checks of Part 4
// (BadNothingToDo, BadTooManyOperations, the second one before the operations are decoded), and answer,
// with a response or a ServiceFault, through the Call, which is the one place that replies.
//
// The RequestHeader (Part 4 §7.33) is decoded once per request, by the dispatcher (dispatcher.hpp), before
// it checks the session; `body` then starts after it, and decode_request() decodes the rest and hands the
// header over to the request.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "services/session.hpp"
#include "services/shard.hpp"
#include "transport/secure_channel.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::services {

// What one request's handler gets: the channel, the request id and handle, and the session (when
// required).
struct Call {
  transport::SecureChannel& channel;
  uint32_t request_id;
  ShardState& shard;
  Session* session;  // nullptr for services that need none
  // The request's RequestHeader, as the dispatcher decoded it: its handle is echoed by every answer. The
  // header itself goes to the request at decode_request() (Call::take_header).
  ua::RequestHeader* header;
  uint32_t request_handle;

  // The largest response body this request may be answered with: the client's MaxMessageSize and
  // MaxChunkCount from Hello, and its session's maxResponseMessageSize (Part 4 §5.6.2), 0 meaning none.
  size_t max_response_body() const noexcept {
    size_t limit = channel.max_response_body();
    if (session && session->max_response_message_size) {
      limit = std::min<size_t>(limit, session->max_response_message_size);
    }
    return limit;
  }

  // Answers with a ServiceFault (Part 4 §7.35) carrying `result`; `stream` is the output writer's
  // fairness key (0: the channel's own; a Publish answers on its session's, publish_stream()).
  void fault(ua::StatusCode result, uint64_t stream = 0) const {
    channel.send_fault(request_id, request_handle, result, stream);
  }

  // Answers with `response`, or with ServiceFault BadResponseTooLarge when its encoded body is larger
  // than max_response_body() (Part 4 §5.6.2 maxResponseMessageSize, Part 6 §6.7.2.2). Handlers answer
  // through here (or send_encoded() for what they encode themselves), so the client's limits hold for
  // every service; the check is one comparison after the encoding.
  template <class T>
  void send(const T& response) const {
    ua::ByteBuffer buf = channel.acquire_buffer();
    ua::Encoder e(buf);
    ua::encode(e, ua::NodeId(0, T::binary_encoding_id));
    ua::encode(e, response);
    send_encoded(std::move(buf), e.status());
  }
  // `buf` from channel.acquire_buffer(), holding the encoded type id and response; `encoded` is the
  // encoder's status (a failed encoding is answered with it in a ServiceFault).
  void send_encoded(ua::ByteBuffer buf, ua::StatusCode encoded) const;

  // Hands the decoded RequestHeader over to `into`. Assigned field by field, not swapped: `into` is
  // usually a reused request whose token and strings keep their capacity, so a warm request allocates
  // nothing, and the empty additionalHeader of nearly every request costs one test. Once only: `header`
  // is then nullptr.
  void take_header(ua::RequestHeader& into) {
    if (!header) return;
    ua::RequestHeader& h = *header;
    into.authentication_token = h.authentication_token;
    into.timestamp = h.timestamp;
    into.request_handle = h.request_handle;
    into.return_diagnostics = h.return_diagnostics;
    into.audit_entry_id = h.audit_entry_id;
    into.timeout_hint = h.timeout_hint;
    if (!h.additional_header.is_empty() || !h.additional_header.type_id().is_null()) {
      into.additional_header = std::move(h.additional_header);
    } else if (!into.additional_header.is_empty() || !into.additional_header.type_id().is_null()) {
      into.additional_header.reset();
    }
    header = nullptr;
  }
};

// The status a request that failed to decode is answered with.
inline ua::StatusCode decoding_fault(const ua::Decoder& d) noexcept {
  return d.status() == ua::status::BadEncodingLimitsExceeded ? ua::status::BadEncodingLimitsExceeded
                                                             : ua::status::BadDecodingError;
}

// Decodes the request after its RequestHeader, which it takes from the Call; on failure answers
// ServiceFault(BadDecodingError) and returns false.
template <class T>
bool decode_request(Call& call, ua::Decoder& body, T& request) {
  call.take_header(request.request_header);
  ua::decode_after_header(body, request);
  if (body.ok()) return true;
  call.fault(decoding_fault(body));
  return false;
}

// Part 4 §5.1: an empty operation list is BadNothingToDo, more than the server's limit BadTooManyOperations
// (a limit of 0 means none). Answers the fault and returns false when the request cannot proceed.
inline bool check_operation_count(Call& call, size_t count, uint32_t limit) {
  ua::StatusCode s = ua::status::Good;
  if (count == 0)
    s = ua::status::BadNothingToDo;
  else if (limit != 0 && count > limit)
    s = ua::status::BadTooManyOperations;
  if (s.is_good()) return true;
  call.fault(s);
  return false;
}

// Skips an encoded NodeId (Part 6 §5.2.2.9) without materialising it.
void skip_node_id(ua::Decoder& d) noexcept;

// The fields that stand between a request's RequestHeader and its list of operations: a request type is
// listed here when that list is what an operation limit counts.
struct OperationList {
  size_t fixed_bytes = 0;         // fixed-size fields after the header
  bool view_description = false;  // a ViewDescription first (Browse)
};

// Reads the length of the operation list from the encoded request (`body` after its RequestHeader),
// before anything else is decoded, and answers ServiceFault(BadTooManyOperations) when it exceeds `limit`
// (0: none): a request cannot make the server decode a million operations only to refuse them (Part 4
// §5.1; the decoded form of an operation takes far more memory than its bytes). Returns false when it
// answered. Malformed bytes are left to the full decode, which reports them.
bool precheck_operation_count(Call& call, const ua::Decoder& body, OperationList list, uint32_t limit);

// A response header for `request`: the handle echoed, the server's timestamp, a service result.
ua::ResponseHeader response_header(const ua::RequestHeader& request,
                                   ua::StatusCode result = ua::status::Good);
// The same, written over `h` in place: what a handler does with its reused response, so a warm response
// header costs a clock read and three stores (assigning a fresh one moved a DiagnosticInfo and an
// ExtensionObject, about a sixth of a Read-1 request's instructions).
void set_response_header(ua::ResponseHeader& h, const ua::RequestHeader& request,
                         ua::StatusCode result = ua::status::Good);

}  // namespace opcuad::services
