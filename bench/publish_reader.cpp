#include "bench/publish_reader.hpp"

#include "ua/generated/types.hpp"

namespace opcuad::bench::detail {

PublishRead read_publish_head(ua::Decoder& d, PublishErrors& errors, PublishHead& head) {
  ua::NodeId type;
  ua::decode(d, type);
  if (type.is_ns0(ua::ServiceFault::binary_encoding_id)) {
    ua::ServiceFault fault;
    ua::decode(d, fault);
    ++errors["Publish ServiceFault " + std::string(fault.response_header.service_result.name())];
    return PublishRead::Refused;
  }
  if (!type.is_ns0(ua::PublishResponse::binary_encoding_id)) {
    ++errors["unexpected response type"];
    return PublishRead::Unexpected;
  }
  ua::ResponseHeader header;
  ua::decode(d, header);
  if (!header.service_result.is_good()) {
    ++errors["Publish " + std::string(header.service_result.name())];
    return PublishRead::Refused;
  }
  head.subscription_id = d.read_u32();
  for (int32_t i = 0, n = d.read_i32(); i < n && d.ok(); ++i) d.read_u32();  // available sequence numbers
  d.read_u8();                                                               // more notifications
  head.sequence = d.read_u32();
  head.publish_time = static_cast<int64_t>(d.read_u64());
  head.data_count = d.read_i32();
  return PublishRead::Read;
}

void read_publish_tail(ua::Decoder& d, PublishErrors& errors) {
  if (!d.ok()) ++errors["malformed PublishResponse"];
  for (int32_t i = 0, n = d.read_i32(); i < n && d.ok(); ++i) {
    const ua::StatusCode ack(d.read_u32());
    if (!ack.is_good()) ++errors["acknowledgement " + std::string(ack.name())];
  }
}

bool status_change(const ua::NodeId& body_type, ua::Decoder& inner, PublishErrors& errors) {
  if (!body_type.is_ns0(ua::StatusChangeNotification::binary_encoding_id)) return false;
  const ua::StatusCode status(inner.read_u32());
  ++errors["StatusChangeNotification " + std::string(status.name())];
  return true;
}

}  // namespace opcuad::bench::detail
