#pragma once
// The input format of the services fuzz target, shared with the seed generator.
//
//   input    := op*
//   op       := selector:UInt8 length:UInt16 (little endian) body:length bytes (cut short by the input's end)
//   selector := bits 0-4: the operation, modulo kOpCount: a service of kServices (its request's body, from
//               the RequestHeader on, is `body`) or kWaitOp (the shard's clock runs body[0] ms, at most
//               kMaxWaitMs, so publishing and sampling timers fire)
//               bit 5 (kSecondChannel): sent on the second channel, which is on another shard of the same
//               server (a client that reconnected: ActivateSession there moves the session, Part 4 §5.6.3)
//               bit 6 (kKeepToken): the authentication token is left as the fuzzer wrote it
//               bit 7 (kRawBody): the body goes out byte for byte (only its leading NodeId, the token, is
//               replaced); without it, a body that decodes as the service's request is re-encoded with the
//               session's token, and its subscription ids 1..kMappedIds name the subscriptions this input
//               created, in order (the server numbers subscriptions process-wide, so the fuzzer cannot
//               know them). Likewise in a Call: ConditionRefresh(2)'s SubscriptionId, and an EventId
//               argument of one byte n (Acknowledge, Confirm, AddComment) stands for the n-th newest
//               EventId the input's Publish responses carried (0: the newest; Part 9 §5.7.3: only a
//               real one acknowledges).
//               A body that does not decode goes out raw.
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ua/generated/types.hpp"

namespace opcuad::fuzz {

template <class Req, class Resp>
struct Service {
  using Request = Req;
  using Response = Resp;
};

// Every service the Server dispatches; the index is the selector.
using Services = std::tuple<
    Service<ua::ReadRequest, ua::ReadResponse>,                                                    // 0
    Service<ua::WriteRequest, ua::WriteResponse>,                                                  // 1
    Service<ua::BrowseRequest, ua::BrowseResponse>,                                                // 2
    Service<ua::BrowseNextRequest, ua::BrowseNextResponse>,                                        // 3
    Service<ua::TranslateBrowsePathsToNodeIdsRequest, ua::TranslateBrowsePathsToNodeIdsResponse>,  // 4
    Service<ua::RegisterNodesRequest, ua::RegisterNodesResponse>,                                  // 5
    Service<ua::UnregisterNodesRequest, ua::UnregisterNodesResponse>,                              // 6
    Service<ua::CallRequest, ua::CallResponse>,                                                    // 7
    Service<ua::CreateSubscriptionRequest, ua::CreateSubscriptionResponse>,                        // 8
    Service<ua::ModifySubscriptionRequest, ua::ModifySubscriptionResponse>,                        // 9
    Service<ua::SetPublishingModeRequest, ua::SetPublishingModeResponse>,                          // 10
    Service<ua::PublishRequest, ua::PublishResponse>,                                              // 11
    Service<ua::RepublishRequest, ua::RepublishResponse>,                                          // 12
    Service<ua::DeleteSubscriptionsRequest, ua::DeleteSubscriptionsResponse>,                      // 13
    Service<ua::TransferSubscriptionsRequest, ua::TransferSubscriptionsResponse>,                  // 14
    Service<ua::CreateMonitoredItemsRequest, ua::CreateMonitoredItemsResponse>,                    // 15
    Service<ua::ModifyMonitoredItemsRequest, ua::ModifyMonitoredItemsResponse>,                    // 16
    Service<ua::DeleteMonitoredItemsRequest, ua::DeleteMonitoredItemsResponse>,                    // 17
    Service<ua::SetMonitoringModeRequest, ua::SetMonitoringModeResponse>,                          // 18
    Service<ua::SetTriggeringRequest, ua::SetTriggeringResponse>,                                  // 19
    Service<ua::CancelRequest, ua::CancelResponse>,                                                // 20
    Service<ua::CloseSessionRequest, ua::CloseSessionResponse>,                                    // 21
    Service<ua::ActivateSessionRequest, ua::ActivateSessionResponse>,                              // 22
    Service<ua::CreateSessionRequest, ua::CreateSessionResponse>,                                  // 23
    Service<ua::GetEndpointsRequest, ua::GetEndpointsResponse>,                                    // 24
    Service<ua::FindServersRequest, ua::FindServersResponse>>;                                     // 25

inline constexpr size_t kServiceCount = std::tuple_size_v<Services>;
inline constexpr uint8_t kWaitOp = kServiceCount;
inline constexpr uint8_t kOpCount = kServiceCount + 1;
inline constexpr uint8_t kSecondChannel = 0x20;
inline constexpr uint8_t kKeepToken = 0x40;
inline constexpr uint8_t kRawBody = 0x80;
inline constexpr uint32_t kMappedIds = 16;
inline constexpr uint32_t kMaxWaitMs = 12;  // just over the fastest publishing interval (10 ms)

inline constexpr uint8_t op_of(uint8_t selector) noexcept {
  return (selector & 0x1f) % kOpCount;
}

// The index of the service whose request is `Req`.
template <class Req, size_t I = 0>
constexpr uint8_t service_index() noexcept {
  static_assert(I < kServiceCount, "not a service of Services");
  if constexpr (std::is_same_v<typename std::tuple_element_t<I, Services>::Request, Req>) {
    return I;
  } else {
    return service_index<Req, I + 1>();
  }
}

// Calls f.template operator()<Service<...>>() for service `index` (< kServiceCount).
template <class F, size_t... I>
void visit_service(size_t index, F&& f, std::index_sequence<I...>) {
  ((index == I ? (f.template operator()<std::tuple_element_t<I, Services>>(), 0) : 0), ...);
}
template <class F>
void visit_service(size_t index, F&& f) {
  visit_service(index, std::forward<F>(f), std::make_index_sequence<kServiceCount>{});
}

}  // namespace opcuad::fuzz
