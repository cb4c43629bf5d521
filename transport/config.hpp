#pragma once
// Transport settings. Defaults are what a production server offers; the config layer overrides them.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "transport/events.hpp"
#include "transport/security/identity.hpp"
#include "transport/security/policy.hpp"
#include "ua/decoder.hpp"
#include "ua/generated/types_enums.hpp"

namespace opcuad::transport {

class HandshakePool;

// One security policy and mode an endpoint offers (Part 4 §7.14 EndpointDescription).
struct SecurityOffer {
  const security::Policy* policy;
  ua::MessageSecurityMode mode;
};

struct TransportConfig {
  // UA TCP negotiation (Part 6 §7.1.2.3). Our side's limits; the client's HEL may lower them.
  uint32_t receive_buffer_size = 65535;   // largest chunk we accept
  uint32_t send_buffer_size = 65535;      // largest chunk we send
  uint32_t max_message_size = 16u << 20;  // largest request (all chunks' bodies)
  uint32_t max_chunk_count = 0;           // 0: derived from max_message_size
  // Connections. A connection refused by either cap gets ERR BadTcpNotEnoughResources.
  uint32_t max_connections = 10000;
  // Connections one client IP address may hold at once (IPv4-mapped IPv6 counts as the IPv4 address);
  // 0: no limit. Above the default session cap, with room for discovery channels, and far below
  // max_connections, so one host cannot take every connection.
  uint32_t max_connections_per_address = 256;
  // Before a session: a connection that sends no HEL, a channel that sends no OPN after its HEL, and an
  // open channel on which no session is activated within these times get ERR BadTimeout and close.
  std::chrono::milliseconds hello_timeout{10000};
  std::chrono::milliseconds open_timeout{10000};
  std::chrono::milliseconds session_activation_timeout{30000};
  // The largest request (all chunks' bodies) a channel may send before a session is activated on it:
  // GetEndpoints, FindServers, CreateSession and ActivateSession are a few kilobytes even with
  // certificates. A larger one is dropped chunk by chunk and answered ServiceFault BadRequestTooLarge.
  uint32_t max_message_size_before_session = 64u << 10;
  // Secure channel tokens (Part 4 §5.5.2): the requested lifetime is revised into these bounds.
  uint32_t min_token_lifetime_ms = 10000;
  uint32_t max_token_lifetime_ms = 3600000;
  // Back-pressure (docs/ARCHITECTURE.md, "How a request flows"): stop reading while more responses are owed
  // than this, resume at half; stop reading while more bytes are queued for sending than the high watermark,
  // resume below low.
  uint32_t max_owed_responses = 100;
  size_t write_high_watermark = 4u << 20;
  size_t write_low_watermark = 1u << 20;
  // A peer that accepts no bytes for this long while we have something to send is disconnected.
  std::chrono::milliseconds send_timeout{30000};
  // Housekeeping tick per channel: timeouts above are checked at this granularity.
  std::chrono::milliseconds tick{1000};
  // Security (Part 6 §6.7). The policy/mode pairs this endpoint accepts in OpenSecureChannel; empty means
  // None only. A secured pair needs the server's identity and a validator for client certificates.
  std::vector<SecurityOffer> security_offers;
  const security::ServerIdentity* identity = nullptr;
  security::CertificateValidator validate_certificate;
  // Where the RSA work of handshakes runs; null runs it on the channel's own thread (tests only).
  HandshakePool* handshakes = nullptr;
  // Limits for decoding request bodies.
  ua::DecodeLimits decode_limits{};
  // Where the transport reports conditions an operator should see (accept failures); may be empty.
  // Called on the listener's thread.
  std::function<void(std::string_view)> warn;
  // Where connections report operator events (transport/events.hpp): accepted, refused, closed; may be
  // empty. Called on the connection's shard thread (once per connection, never per request).
  EventSink events;
};

// The secure-channel lifetime we grant: clamped into [min, max], but never below 600,000 ms when the
// client asked for at least that much (some clients refuse shorter lifetimes).
constexpr uint32_t revise_token_lifetime(uint32_t requested, const TransportConfig& c) noexcept {
  uint32_t max = c.max_token_lifetime_ms < 600000 ? 600000 : c.max_token_lifetime_ms;
  if (requested < c.min_token_lifetime_ms) return c.min_token_lifetime_ms;
  if (requested > max) return max;
  return requested;
}

}  // namespace opcuad::transport
