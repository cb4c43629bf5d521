#include "services/request.hpp"

#include "transport/uatcp.hpp"

namespace opcuad::services {

void Call::send_encoded(ua::ByteBuffer buf, ua::StatusCode encoded) const {
  ua::StatusCode refused = encoded;
  if (refused.is_good() && buf.size() - transport::kSymmetricPrefix > max_response_body()) {
    refused = ua::status::BadResponseTooLarge;
  }
  if (!refused.is_good()) return fault(refused);
  channel.send_response(request_id, std::move(buf));
}

void skip_node_id(ua::Decoder& d) noexcept {
  const uint8_t encoding = d.read_u8();
  switch (encoding & 0x3F) {
    case 0:
      d.take(1);
      break;  // two-byte
    case 1:
      d.take(3);
      break;  // four-byte
    case 2:
      d.take(6);
      break;  // numeric
    case 4:
      d.take(18);
      break;   // GUID
    case 3:    // string
    case 5: {  // opaque
      d.take(2);
      const int32_t n = d.read_bytes_length(d.limits().max_byte_string_length);
      if (n > 0) d.take(static_cast<size_t>(n));
      break;
    }
    default:
      d.fail(ua::status::BadDecodingError);
  }
}

bool precheck_operation_count(Call& call, const ua::Decoder& body, OperationList list, uint32_t limit) {
  if (limit == 0) return true;
  ua::Decoder d = body;
  if (list.view_description) {
    skip_node_id(d);
    d.take(12);  // timestamp, viewVersion
  }
  d.take(list.fixed_bytes);
  const int32_t count = d.read_i32();
  if (!d.ok() || count <= 0 || static_cast<uint32_t>(count) <= limit) return true;
  call.fault(ua::status::BadTooManyOperations);
  return false;
}

ua::ResponseHeader response_header(const ua::RequestHeader& request, ua::StatusCode result) {
  ua::ResponseHeader h;
  set_response_header(h, request, result);
  return h;
}

void set_response_header(ua::ResponseHeader& h, const ua::RequestHeader& request, ua::StatusCode result) {
  h.timestamp = ua::DateTime::now();
  h.request_handle = request.request_handle;
  h.service_result = result;
  // The rest is empty in a fresh header; a reused one is cleared only if something was put there.
  if (!h.service_diagnostics.empty()) h.service_diagnostics = ua::DiagnosticInfo{};
  h.string_table.clear();
  if (!h.additional_header.is_empty() || !h.additional_header.type_id().is_null())
    h.additional_header.reset();
}

}  // namespace opcuad::services
