#pragma once
// opc.tcp endpoint URLs (Part 6 §7.1.2.3: "opc.tcp://<host>:<port>/<path>"), the one parser of the
// project: configuration validation, the daemon's listeners, Hello checks and the discovery services
// all go through it.
//
//   opc.tcp://plant-gw:4840/ua      host "plant-gw", port 4840, path "/ua"
//   opc.tcp://[fe80::1%eth0]:4843   host "fe80::1%eth0" (an IPv6 literal: brackets, RFC 3986 §3.2.2)
//   opc.tcp://10.0.0.5              no port: 4840, the port IANA registered for OPC UA (Part 6 §7.2)
//
// The scheme is case-insensitive (RFC 3986 §3.1). Rejected: another scheme, an empty host, user
// information ("user@"), an IPv6 literal without brackets, a port that is empty, not decimal, or above
// 65535. Port 0 is accepted (a listener then picks a free port). The URL may come from the network
// (Hello, CreateSession, GetEndpoints): parsing is one pass, allocates nothing and never throws.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace opcuad::ua {

inline constexpr uint16_t kDefaultOpcTcpPort = 4840;

struct EndpointUrl {
  std::string_view host;  // an IPv6 literal without its brackets; views into the parsed text
  uint16_t port = kDefaultOpcTcpPort;
  bool has_port = false;  // false: the URL named none and `port` is the default
  bool ipv6 = false;      // the host was a bracketed literal
  std::string_view path;  // from the '/' after the authority on ("" when none)

  // 0.0.0.0 or the IPv6 unspecified address (::, 0:0:0:0:0:0:0:0, ...): "every interface" to a listener,
  // not an address a client can dial.
  bool is_wildcard() const noexcept;
};

// The URL's parts, or nullopt with a static reason in `*reason` (when given).
std::optional<EndpointUrl> parse_endpoint_url(std::string_view url, const char** reason = nullptr) noexcept;

// Whether `url` starts with opc.tcp:// (any case); nothing else is checked.
bool has_opc_tcp_scheme(std::string_view url) noexcept;

// "opc.tcp://" + host (bracketed when it is an IPv6 literal; a host already in brackets is kept as it is)
// + ":port" when `port` is given + path.
std::string format_endpoint_url(std::string_view host, std::optional<uint16_t> port, std::string_view path);

// `url` with its host replaced by `host`, port and path kept. REQUIRES: `url` parses.
std::string with_host(const EndpointUrl& url, std::string_view host);

}  // namespace opcuad::ua
