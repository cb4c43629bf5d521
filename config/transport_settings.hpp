#pragma once
// The transport's settings from a validated server configuration: the one mapping the daemon and the
// services fuzz target share, so the fuzzer runs the transport with exactly the daemon's limits. The
// warning callback is the caller's (the daemon logs through it).

#include <chrono>

#include "config/config.hpp"
#include "transport/config.hpp"

namespace opcuad::config {

inline transport::TransportConfig transport_settings(const ServerConfig& c) {
  transport::TransportConfig t;
  t.max_message_size = c.limits.max_message_size;
  t.max_chunk_count = c.limits.max_chunk_count;
  t.decode_limits.max_array_length = c.limits.max_array_length;
  t.decode_limits.max_string_length = c.limits.max_string_length;
  t.decode_limits.max_byte_string_length = c.limits.max_byte_string_length;
  t.decode_limits.max_decoded_bytes = c.limits.max_decoded_request_bytes;
  t.max_connections = c.connections.max_connections;
  t.max_connections_per_address = c.connections.max_connections_per_address;
  t.hello_timeout = std::chrono::milliseconds(c.connections.hello_timeout_ms);
  t.open_timeout = std::chrono::milliseconds(c.connections.open_timeout_ms);
  t.session_activation_timeout = std::chrono::milliseconds(c.connections.session_activation_timeout_ms);
  t.max_message_size_before_session = c.connections.max_message_size_before_session;
  return t;
}

}  // namespace opcuad::config
