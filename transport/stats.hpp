#pragma once
// Per-shard transport counters. Written only by the shard's own thread (relaxed load + store on atomics,
// so a statistics reader on another thread is race-free and the writer pays no locked instruction);
// each shard's block sits on its own cache lines. Readers (the control loop's diagnostics, the HTTP
// /metrics handler) sum the blocks of every shard; see docs/METRICS.md for what each one means.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ua/status_code.hpp"

namespace opcuad::transport {

// Security policies a channel may use (Part 7), as a dense index for per-policy counters: the values of
// security::PolicyId (transport/security/policy.hpp), in its order; the names are its URI fragments.
enum class SecurityPolicyId : uint8_t {
  None,
  Basic128Rsa15,
  Basic256,
  Basic256Sha256,
  Aes128_Sha256_RsaOaep,
  Aes256_Sha256_RsaPss,
  kCount
};
inline constexpr std::array<std::string_view, static_cast<size_t>(SecurityPolicyId::kCount)>
    kSecurityPolicyNames{"None",           "Basic128Rsa15",         "Basic256",
                         "Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"};

// Why the listener refused a connection (ERR BadTcpNotEnoughResources either way).
enum class RefuseReason : uint8_t { MaxConnections, MaxConnectionsPerAddress, kCount };
inline constexpr std::array<std::string_view, static_cast<size_t>(RefuseReason::kCount)> kRefuseReasonNames{
    "max_connections", "max_connections_per_address"};

// The ServiceFault results counted one by one; every other one goes to the last slot ("other"). A fixed
// table keeps the metrics bounded whatever a client provokes. The codes a hostile or broken client meets
// first (session and channel checks, limits, decoding) and the ones Publish answers with.
inline constexpr std::array<ua::StatusCode, 24> kCountedFaults{
    ua::status::BadSessionIdInvalid,
    ua::status::BadSessionNotActivated,
    ua::status::BadSecureChannelIdInvalid,
    ua::status::BadSessionClosed,
    ua::status::BadIdentityTokenInvalid,
    ua::status::BadIdentityTokenRejected,
    ua::status::BadUserAccessDenied,
    ua::status::BadSecurityChecksFailed,
    ua::status::BadServiceUnsupported,
    ua::status::BadDecodingError,
    ua::status::BadEncodingLimitsExceeded,
    ua::status::BadRequestTooLarge,
    ua::status::BadResponseTooLarge,
    ua::status::BadTooManyOperations,
    ua::status::BadNothingToDo,
    ua::status::BadTooManySessions,
    ua::status::BadTooManySubscriptions,
    ua::status::BadTooManyPublishRequests,
    ua::status::BadNoSubscription,
    ua::status::BadTimeout,
    ua::status::BadRequestCancelledByClient,
    ua::status::BadServerTooBusy,
    ua::status::BadInternalError,
    ua::status::BadOutOfMemory,
};
inline constexpr size_t kFaultSlots = kCountedFaults.size() + 1;  // + other

// The slot a ServiceFault result is counted in.
constexpr size_t fault_slot(ua::StatusCode s) noexcept {
  for (size_t i = 0; i < kCountedFaults.size(); ++i) {
    if (kCountedFaults[i].is(s)) return i;
  }
  return kCountedFaults.size();
}

// Results that mean "refused for security reasons" (ServerDiagnosticsSummary's
// SecurityRejectedRequestsCount, Part 5 §12.9): no such session, not activated, another channel's
// session, identity or access refused.
constexpr bool is_security_fault(ua::StatusCode s) noexcept {
  return s.is(ua::status::BadSessionIdInvalid) || s.is(ua::status::BadSessionNotActivated) ||
         s.is(ua::status::BadSecureChannelIdInvalid) || s.is(ua::status::BadIdentityTokenInvalid) ||
         s.is(ua::status::BadIdentityTokenRejected) || s.is(ua::status::BadUserAccessDenied) ||
         s.is(ua::status::BadSecurityChecksFailed);
}

struct alignas(64) TransportStats {
  using Counter = std::atomic<uint64_t>;
  Counter connections_accepted{0};
  Counter connections_rejected{0};  // all refusals; by reason in `refused`
  std::array<Counter, static_cast<size_t>(RefuseReason::kCount)> refused{};
  Counter requests{0};
  Counter messages_sent{0};  // responses and other complete messages
  Counter chunks_sent{0};
  Counter write_calls{0};  // gathered writes issued (one writev / sendmsg each at most)
  Counter bytes_sent{0};
  Counter bytes_received{0};
  Counter errors_sent{0};  // ERR messages
  // Secure channels opened (OPN Issue) and closed, by policy; open = opened - closed.
  std::array<Counter, static_cast<size_t>(SecurityPolicyId::kCount)> channels_opened{};
  std::array<Counter, static_cast<size_t>(SecurityPolicyId::kCount)> channels_closed{};
  // ServiceFaults sent, by result (fault_slot), and those that were refused for security reasons.
  std::array<Counter, kFaultSlots> faults{};
  Counter service_faults{0};  // their sum
  Counter security_faults{0};
  // Client certificates refused (untrusted, revoked, invalid): the certificate checks add here.
  Counter certificate_rejections{0};

  static void add(Counter& c, uint64_t n = 1) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  static uint64_t get(const Counter& c) noexcept { return c.load(std::memory_order_relaxed); }
  void channel_opened(SecurityPolicyId p) noexcept { add(channels_opened[static_cast<size_t>(p)]); }
  void channel_closed(SecurityPolicyId p) noexcept { add(channels_closed[static_cast<size_t>(p)]); }
  void fault_sent(ua::StatusCode s) noexcept {
    add(faults[fault_slot(s)]);
    add(service_faults);
    if (is_security_fault(s)) add(security_faults);
  }
};

// Every shard's TransportStats summed (diagnostics and metrics read these).
struct TransportTotals {
  uint64_t accepted = 0, rejected = 0, requests = 0, messages_sent = 0, chunks_sent = 0, write_calls = 0;
  uint64_t bytes_sent = 0, bytes_received = 0, errors_sent = 0, service_faults = 0, security_faults = 0;
  uint64_t certificate_rejections = 0;
  std::array<uint64_t, static_cast<size_t>(RefuseReason::kCount)> refused{};
  std::array<uint64_t, static_cast<size_t>(SecurityPolicyId::kCount)> opened{}, closed{};
  std::array<uint64_t, kFaultSlots> faults{};

  void add(const TransportStats& s) noexcept {
    using S = TransportStats;
    accepted += S::get(s.connections_accepted);
    rejected += S::get(s.connections_rejected);
    requests += S::get(s.requests);
    messages_sent += S::get(s.messages_sent);
    chunks_sent += S::get(s.chunks_sent);
    write_calls += S::get(s.write_calls);
    bytes_sent += S::get(s.bytes_sent);
    bytes_received += S::get(s.bytes_received);
    errors_sent += S::get(s.errors_sent);
    service_faults += S::get(s.service_faults);
    security_faults += S::get(s.security_faults);
    certificate_rejections += S::get(s.certificate_rejections);
    for (size_t k = 0; k < refused.size(); ++k) refused[k] += S::get(s.refused[k]);
    for (size_t k = 0; k < opened.size(); ++k) {
      opened[k] += S::get(s.channels_opened[k]);
      closed[k] += S::get(s.channels_closed[k]);
    }
    for (size_t k = 0; k < faults.size(); ++k) faults[k] += S::get(s.faults[k]);
  }
};

}  // namespace opcuad::transport
