#pragma once
// What a session and a subscription count for the Server's diagnostics arrays (Part 5 §12.11
// SessionDiagnosticsDataType, §12.12 SessionSecurityDiagnosticsDataType, §12.15
// SubscriptionDiagnosticsDataType). The counters are plain integers in the session or subscription,
// bumped by its shard's thread on a structure it already holds (one increment, no atomic, no allocation);
// the daemon's control loop asks each shard for a copy once a second while diagnostics are enabled
// (services/diagnostics.hpp), so nothing is read across threads.
//
// shard-local: part of Session / Subscription, touched by their shard's thread only.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "services/service_stats.hpp"
#include "ua/bytes.hpp"
#include "ua/generated/types.hpp"
#include "ua/scalars.hpp"

namespace opcuad::services {

struct SessionCounters {
  struct Service {
    uint32_t total = 0;
    uint32_t errors = 0;  // answered with a ServiceFault (Part 5 §12.11 ServiceCounterDataType errorCount)
  };
  // Indexed like ServiceStats::requests (the dispatch table's rows).
  std::array<Service, kMaxServices> services{};
  // Requests with this session's token refused before their handler ran: not activated yet, or sent on
  // another secure channel than the session's (Part 4 §5.6.3). Part 5 §12.11 unauthorizedRequestCount.
  uint32_t unauthorized = 0;

  void count(size_t service, bool failed) noexcept {
    Service& s = services[service];
    ++s.total;
    s.errors += failed ? 1 : 0;
  }
};

// What the client said at CreateSession and how it authenticated, kept for the diagnostics entries.
// Filled outside the request path (CreateSession, ActivateSession); strings are bounded like the
// session's other client-chosen text.
struct SessionDescription {
  ua::DateTime connected;  // CreateSession's server time (clientConnectionTime)
  std::string server_uri;
  std::string endpoint_url;
  std::string product_uri;
  ua::ApplicationType application_type = ua::ApplicationType::Client;
  // The secure channel of the last activation (SessionSecurityDiagnosticsDataType).
  ua::MessageSecurityMode security_mode = ua::MessageSecurityMode::None;
  std::string_view security_policy_uri;  // a policy's static URI
  ua::ByteString client_certificate;     // the channel's client certificate at the last activation
  std::string_view authentication;       // "Anonymous", "UserName", "Certificate" (a static string)
};

// Part 5 §12.15: counters of one subscription. Those of Part 4 §5.13.1.1 (keep-alive and lifetime
// counters, sequence numbers) are the state machine's own and are read from it.
struct SubscriptionCounters {
  uint32_t modify = 0;
  uint32_t enable = 0;   // SetPublishingMode(TRUE)
  uint32_t disable = 0;  // SetPublishingMode(FALSE)
  uint32_t republish_requests = 0;
  uint32_t republished = 0;  // Republish requests answered with the message
  uint32_t transfer_requests = 0;
  uint32_t transferred_to_alt_client = 0;
  uint32_t transferred_to_same_client = 0;
  uint32_t publish_requests = 0;  // Publish requests this subscription answered (data or keep-alive)
  uint32_t data_change_notifications = 0;
  uint32_t event_notifications = 0;    // EventFieldLists sent
  uint32_t event_queue_overflows = 0;  // overflow events queued (EventQueueOverFlowCount)
  uint32_t events_too_large = 0;       // events dropped as larger than any message the client accepts
  uint32_t late = 0;                   // times it entered the LATE state (Part 4 §5.13.1.2)
  uint32_t discarded = 0;  // retained messages dropped unacknowledged when the retransmission queue was full
};

}  // namespace opcuad::services
