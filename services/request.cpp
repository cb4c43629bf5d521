#include "services/request.hpp"

#include "transport/uatcp.hpp"

namespace opcuad::services {

void Call::send_encoded(ua::ByteBuffer buf, ua::StatusCode encoded, uint32_t request_handle) const {
  ua::StatusCode refused = encoded;
  if (refused.is_good() && buf.size() - transport::kSymmetricPrefix > max_response_body()) {
    refused = ua::status::BadResponseTooLarge;
  }
  if (!refused.is_good()) return channel.send_fault(request_id, request_handle, refused);
  channel.send_response(request_id, std::move(buf));
}

void skip_node_id(ua::Decoder& d) noexcept {
  const uint8_t encoding = d.read_u8();
  switch (encoding & 0x3F) {
    case 0: d.take(1); break;   // two-byte
    case 1: d.take(3); break;   // four-byte
    case 2: d.take(6); break;   // numeric
    case 4: d.take(18); break;  // GUID
    case 3:                     // string
    case 5: {                   // opaque
      d.take(2);
      const int32_t n = d.read_bytes_length(d.limits().max_byte_string_length);
      if (n > 0) d.take(static_cast<size_t>(n));
      break;
    }
    default: d.fail(ua::status::BadDecodingError);
  }
}

uint32_t skip_request_header(ua::Decoder& d) noexcept {
  skip_node_id(d);  // authenticationToken
  d.read_u64();     // timestamp
  const uint32_t handle = d.read_u32();
  d.read_u32();     // returnDiagnostics
  const int32_t audit = d.read_bytes_length(d.limits().max_string_length);
  if (audit > 0) d.take(static_cast<size_t>(audit));
  d.read_u32();     // timeoutHint
  skip_node_id(d);  // additionalHeader: type id, encoding byte, body
  if (d.read_u8() != 0) {
    const int32_t n = d.read_bytes_length(d.limits().max_byte_string_length);
    if (n > 0) d.take(static_cast<size_t>(n));
  }
  return handle;
}

bool precheck_operation_count(Call& call, const ua::Decoder& body, OperationList list, uint32_t limit) {
  if (limit == 0) return true;
  ua::Decoder d = body;
  const uint32_t handle = skip_request_header(d);
  if (list.view_description) {
    skip_node_id(d);
    d.take(12);  // timestamp, viewVersion
  }
  d.take(list.fixed_bytes);
  const int32_t count = d.read_i32();
  if (!d.ok() || count <= 0 || static_cast<uint32_t>(count) <= limit) return true;
  call.channel.send_fault(call.request_id, handle, ua::status::BadTooManyOperations);
  return false;
}

}  // namespace opcuad::services
