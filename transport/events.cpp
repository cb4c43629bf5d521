#include "transport/events.hpp"

namespace opcuad::transport {

namespace {

bool needs_quotes(std::string_view v) noexcept {
  if (v.empty()) return true;
  for (unsigned char c : v) {
    if (c <= 0x20 || c == 0x7f || c == '"' || c == '=' || c == '\\') return true;
  }
  return false;
}

}  // namespace

std::string_view peer_key(std::string_view peer) noexcept {
  if (!peer.empty() && peer.front() == '[') {
    const size_t close = peer.find("]:");
    return close == std::string_view::npos ? peer : peer.substr(0, close + 1);
  }
  const size_t colon = peer.find(':');
  if (colon == std::string_view::npos || peer.find(':', colon + 1) != std::string_view::npos) return peer;
  return peer.substr(0, colon);  // "ip:port"; a bare IPv6 address (several colons) stays whole
}

void append_field(std::string& out, std::string_view name, std::string_view value) {
  out += ' ';
  out += name;
  out += '=';
  const bool cut = value.size() > kMaxFieldValue;
  if (cut) value = value.substr(0, kMaxFieldValue);
  if (!needs_quotes(value)) {
    out += value;
    if (cut) out += "...";
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (cut) out += "...";
  out += '"';
}

void append_field(std::string& out, std::string_view name, uint64_t value) {
  out += ' ';
  out += name;
  out += '=';
  out += std::to_string(value);
}

void append_status(std::string& out, std::string_view name, ua::StatusCode status) {
  const std::string_view n = status.name();
  if (!n.empty()) return append_field(out, name, n);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string hex = "0x";
  for (int shift = 28; shift >= 0; shift -= 4) hex += kHex[(status.value() >> shift) & 0xf];
  append_field(out, name, hex);
}

void report_channel_opened(const EventSink& sink, std::string_view peer, uint32_t channel_id,
                           std::string_view policy_uri, std::string_view mode, std::string_view thumbprint) {
  if (!sink) return;
  std::string f;
  append_field(f, "peer", peer);
  append_field(f, "channel", channel_id);
  append_field(f, "policy", policy_uri);
  append_field(f, "mode", mode);
  if (!thumbprint.empty()) append_field(f, "thumbprint", thumbprint);
  sink(Event{EventLevel::Info, "channel.opened", peer_key(peer), f});
}

void report_certificate_refused(const EventSink& sink, std::string_view peer, std::string_view thumbprint,
                                std::string_view subject, ua::StatusCode status) {
  if (!sink) return;
  std::string f;
  append_field(f, "peer", peer);
  append_field(f, "thumbprint", thumbprint);
  append_field(f, "subject", subject);
  append_status(f, "status", status);
  sink(Event{EventLevel::Warn, "certificate.refused", peer_key(peer), f});
}

}  // namespace opcuad::transport
