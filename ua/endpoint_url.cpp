#include "ua/endpoint_url.hpp"

namespace opcuad::ua {

namespace {
constexpr std::string_view kScheme = "opc.tcp://";

bool is_host_char(char c) noexcept {
  // RFC 3986 reg-name / IPv4 characters that host names use in practice; percent-encoding and the
  // sub-delimiters have no place in an OPC UA endpoint host.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_';
}

bool is_ipv6_char(char c) noexcept {
  return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') || c == ':' || c == '.';
}

bool fail(const char** reason, const char* why) noexcept {
  if (reason) *reason = why;
  return false;
}

// RFC 6874 zone ids ("%eth0") follow the address inside the brackets.
bool valid_ipv6(std::string_view h) noexcept {
  const size_t zone = h.find('%');
  const std::string_view addr = h.substr(0, zone);
  if (addr.find(':') == std::string_view::npos) return false;
  for (char c : addr) {
    if (!is_ipv6_char(c)) return false;
  }
  if (zone != std::string_view::npos) {
    const std::string_view id = h.substr(zone + 1);
    if (id.empty()) return false;
    for (char c : id) {
      if (!is_host_char(c)) return false;
    }
  }
  return true;
}

bool parse_port(std::string_view text, uint16_t& out, const char** reason) noexcept {
  if (text.empty()) return fail(reason, "the port after ':' is empty");
  if (text.size() > 5) return fail(reason, "the port is above 65535");
  uint32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return fail(reason, "the port is not a decimal number");
    v = v * 10 + static_cast<uint32_t>(c - '0');
  }
  if (v > 65535) return fail(reason, "the port is above 65535");
  out = static_cast<uint16_t>(v);
  return true;
}
}  // namespace

bool has_opc_tcp_scheme(std::string_view url) noexcept {
  if (url.size() < kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = url[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return false;
  }
  return true;
}

bool EndpointUrl::is_wildcard() const noexcept {
  if (!ipv6) return host == "0.0.0.0";
  // Every group zero: "::", "::0", "0:0:0:0:0:0:0:0" (a zone id does not change that).
  const std::string_view addr = host.substr(0, host.find('%'));
  for (char c : addr) {
    if (c != '0' && c != ':') return false;
  }
  return true;
}

std::optional<EndpointUrl> parse_endpoint_url(std::string_view url, const char** reason) noexcept {
  if (!has_opc_tcp_scheme(url)) {
    fail(reason, "the URL must start with opc.tcp://");
    return std::nullopt;
  }
  std::string_view rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  EndpointUrl out;
  out.path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    fail(reason, "user information (user@host) is not allowed in an endpoint URL");
    return std::nullopt;
  }
  std::string_view port_text;
  bool has_colon = false;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      fail(reason, "an IPv6 address has no closing ']'");
      return std::nullopt;
    }
    out.host = authority.substr(1, close - 1);
    out.ipv6 = true;
    if (!valid_ipv6(out.host)) {
      fail(reason, "the text in brackets is not an IPv6 address");
      return std::nullopt;
    }
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        fail(reason, "only ':port' may follow an IPv6 address");
        return std::nullopt;
      }
      has_colon = true;
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.find(':');
    if (colon != std::string_view::npos && authority.find(':', colon + 1) != std::string_view::npos) {
      fail(reason, "an IPv6 address must be written in brackets, e.g. opc.tcp://[::1]:4840");
      return std::nullopt;
    }
    out.host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      has_colon = true;
      port_text = authority.substr(colon + 1);
    }
    for (char c : out.host) {
      if (!is_host_char(c)) {
        fail(reason, "the host name has a character that is not a letter, digit, '-', '.' or '_'");
        return std::nullopt;
      }
    }
  }
  if (out.host.empty()) {
    fail(reason, "the URL has no host (use 0.0.0.0 or [::] for every interface)");
    return std::nullopt;
  }
  if (has_colon) {
    if (!parse_port(port_text, out.port, reason)) return std::nullopt;
    out.has_port = true;
  }
  return out;
}

std::string format_endpoint_url(std::string_view host, std::optional<uint16_t> port, std::string_view path) {
  std::string out(kScheme);
  const bool bracket =
      host.find(':') != std::string_view::npos && !(host.starts_with('[') && host.ends_with(']'));
  if (bracket) out += '[';
  out += host;
  if (bracket) out += ']';
  if (port) {
    out += ':';
    out += std::to_string(*port);
  }
  out += path;
  return out;
}

std::string with_host(const EndpointUrl& url, std::string_view host) {
  return format_endpoint_url(host, url.has_port ? std::optional<uint16_t>(url.port) : std::nullopt, url.path);
}

}  // namespace opcuad::ua
