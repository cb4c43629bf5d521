#pragma once
// The boundary between transport and services: the transport hands up each complete request and takes
// encoded responses back through the channel. transport/ never includes services/.

#include <cstdint>
#include <span>

#include "ua/decoder.hpp"
#include "ua/status_code.hpp"

namespace opcuad::transport {

class SecureChannel;

struct RequestContext {
  uint32_t request_id;  // secure-conversation request id, echoed in the response
  uint32_t type_id;     // the request's ns=0 binary encoding id (e.g. 631 for ReadRequest)
};

class ServiceHandler {
 public:
  virtual ~ServiceHandler() = default;
  // Called on the channel's shard thread; `body` starts after the type NodeId. Returns false when no
  // service handles type_id: the transport then answers ServiceFault(BadServiceUnsupported).
  // REQUIRES: after returning true, exactly one response for ctx.request_id is sent, now or later.
  virtual bool on_request(SecureChannel& channel, const RequestContext& ctx, ua::Decoder& body) = 0;
  // The channel closed (CLO, error or peer gone). Sessions outlive channels (Part 4 §5.6).
  virtual void on_channel_closed(SecureChannel& /*channel*/) {}
  // OpenSecureChannel refused the client's certificate (`chain`, leaf first) with `status`, the
  // validator's (untrusted, expired, revoked, ...); the channel is closed right after. The channel's shard
  // thread.
  virtual void on_certificate_refused(SecureChannel& /*channel*/, std::span<const uint8_t> /*chain*/,
                                      ua::StatusCode /*status*/) {}
};

}  // namespace opcuad::transport
