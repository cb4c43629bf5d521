#pragma once
// A bench subscriber's reading of a PublishResponse (Part 4 §5.13.5) in place: the service result, the
// NotificationMessage's header, each NotificationData's binary ExtensionObject body and the
// acknowledgement results. What the message carries (data changes, events) is the caller's; everything
// else that is not as expected is counted in `errors` under a name the report prints.

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "ua/codec.hpp"
#include "ua/decoder.hpp"
#include "ua/node_id.hpp"

namespace opcuad::bench {

struct PublishHead {
  uint32_t subscription_id = 0;
  uint32_t sequence = 0;
  int64_t publish_time = 0;  // DateTime ticks
  int32_t data_count = 0;    // NotificationData entries
};

enum class PublishRead : uint8_t {
  Read,        // the response was read (its errors counted): check the sequence, send the next Publish
  Refused,     // a ServiceFault or a Bad service result (counted): send the next Publish
  Unexpected,  // another response type (counted): nothing to send
};

// A notification body: `on_body(head, body_type, inner)` reads the body of one NotificationData whose
// type is `body_type` from `inner` and returns false for a type it does not read. StatusChangeNotification
// is counted here before the caller sees it.
using PublishErrors = std::map<std::string, uint64_t>;

namespace detail {
PublishRead read_publish_head(ua::Decoder& d, PublishErrors& errors, PublishHead& head);
// After head.data_count bodies: "malformed PublishResponse" and the acknowledgement results.
void read_publish_tail(ua::Decoder& d, PublishErrors& errors);
bool status_change(const ua::NodeId& body_type, ua::Decoder& inner, PublishErrors& errors);
}  // namespace detail

template <class OnBody>
PublishRead read_publish_response(std::span<const uint8_t> body, PublishErrors& errors, PublishHead& head,
                                  OnBody&& on_body) {
  ua::Decoder d(body);
  const PublishRead r = detail::read_publish_head(d, errors, head);
  if (r != PublishRead::Read) return r;
  for (int32_t i = 0; i < head.data_count && d.ok(); ++i) {
    ua::NodeId body_type;
    ua::decode(d, body_type);
    const uint8_t encoding = d.read_u8();
    const int32_t len = d.read_i32();
    auto inner_bytes = d.take(len > 0 ? static_cast<size_t>(len) : 0);
    if (encoding != 1) {
      ++errors["notification not in a binary ExtensionObject"];
      continue;
    }
    ua::Decoder inner(inner_bytes);
    if (!detail::status_change(body_type, inner, errors) && !on_body(head, body_type, inner))
      ++errors["unexpected notification type"];
    if (!inner.ok()) ++errors["malformed notification"];
  }
  detail::read_publish_tail(d, errors);
  return PublishRead::Read;
}

}  // namespace opcuad::bench
