#pragma once
// Operator events: what the transport and the services tell whoever runs them (the daemon writes one
// `event=<kind> key=value ...` line per event, with rate limiting; docs/ARCHITECTURE.md, "Operator
// log"). Events are per connection, channel or session, never per request, so a sink may format, take
// a lock and allocate.
//
// Values that come from the network (user names, application names and URIs) are hostile: every value
// goes through append_field(), which quotes it when needed, escapes quotes, backslashes and control
// characters (so a client cannot start a forged line) and truncates it. Secrets (passwords, tokens,
// nonces, private keys) are never passed here.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "ua/status_code.hpp"

namespace opcuad::transport {

enum class EventLevel : uint8_t { Info, Warn };

struct Event {
  EventLevel level = EventLevel::Info;
  std::string_view kind;  // the stable event= field, e.g. "connection.accepted"
  std::string_view
      key;  // what repeats are counted by for rate limiting (a peer address, a user); may be empty
  std::string_view fields;  // " name=value ..." from append_field(), after event=<kind>
};
using EventSink = std::function<void(const Event&)>;

// At most this many bytes of one value are written (then "..."): a client's strings may be long.
inline constexpr size_t kMaxFieldValue = 256;

// Appends " name=value". A value that is empty or holds a space, '"', '=', '\\' or a control
// character is written in double quotes, with '"' and '\\' escaped and control characters as \xNN.
void append_field(std::string& out, std::string_view name, std::string_view value);
void append_field(std::string& out, std::string_view name, uint64_t value);
// The status as its name (BadTimeout), or 0x... when it has none.
void append_status(std::string& out, std::string_view name, ua::StatusCode status);

// The address part of "ip:port" or "[ipv6]:port" (what per-address rate limits count by); `peer` itself
// when it has no port.
std::string_view peer_key(std::string_view peer) noexcept;

// Hooks for the secure channel (the security policies and the PKI call these; docs/ARCHITECTURE.md).
// A channel opened (Part 4 §5.5.2): its policy URI, mode (None, Sign, SignAndEncrypt) and the client
// certificate's SHA-1 thumbprint in hex, empty for none.
void report_channel_opened(const EventSink& sink, std::string_view peer, uint32_t channel_id,
                           std::string_view policy_uri, std::string_view mode, std::string_view thumbprint);
// A client certificate refused (at warn, rate-limited by peer address): why, as the status the client got.
void report_certificate_refused(const EventSink& sink, std::string_view peer, std::string_view thumbprint,
                                std::string_view subject, ua::StatusCode status);

}  // namespace opcuad::transport
