#include "config/reload_settings.hpp"

#include <utility>

namespace opcuad::config {

std::vector<std::string> restart_only_changes(const ServerConfig& running, const ServerConfig& next) {
  std::vector<std::string> out;
  // NAME as the server file spells it; FIELD the member of ServerConfig.
#define OPCUAD_RESTART_ONLY(NAME, FIELD) \
  if (!(running.FIELD == next.FIELD)) out.emplace_back(NAME)
  OPCUAD_RESTART_ONLY("application_uri", application_uri);
  OPCUAD_RESTART_ONLY("product_uri", product_uri);
  OPCUAD_RESTART_ONLY("application_name", application_name);
  OPCUAD_RESTART_ONLY("endpoints", endpoints);
  OPCUAD_RESTART_ONLY("advertised_hostname", advertised_hostname);
  OPCUAD_RESTART_ONLY("threads", threads);
  OPCUAD_RESTART_ONLY("scheduling.pin_shards", scheduling.pin_shards);
  OPCUAD_RESTART_ONLY("scheduling.realtime_priority", scheduling.realtime_priority);
  OPCUAD_RESTART_ONLY("limits.max_sessions", limits.max_sessions);
  OPCUAD_RESTART_ONLY("limits.max_subscriptions", limits.max_subscriptions);
  OPCUAD_RESTART_ONLY("limits.max_monitored_items", limits.max_monitored_items);
  OPCUAD_RESTART_ONLY("limits.max_message_size", limits.max_message_size);
  OPCUAD_RESTART_ONLY("limits.max_chunk_count", limits.max_chunk_count);
  OPCUAD_RESTART_ONLY("limits.max_array_length", limits.max_array_length);
  OPCUAD_RESTART_ONLY("limits.max_string_length", limits.max_string_length);
  OPCUAD_RESTART_ONLY("limits.max_byte_string_length", limits.max_byte_string_length);
  OPCUAD_RESTART_ONLY("limits.max_browse_continuation_points", limits.max_browse_continuation_points);
  OPCUAD_RESTART_ONLY("limits.min_session_timeout_ms", limits.min_session_timeout_ms);
  OPCUAD_RESTART_ONLY("limits.max_session_timeout_ms", limits.max_session_timeout_ms);
  OPCUAD_RESTART_ONLY("limits.min_sampling_interval_ms", limits.min_sampling_interval_ms);
  OPCUAD_RESTART_ONLY("limits.max_subscriptions_per_session", limits.max_subscriptions_per_session);
  OPCUAD_RESTART_ONLY("limits.max_monitored_items_per_subscription",
                      limits.max_monitored_items_per_subscription);
  OPCUAD_RESTART_ONLY("limits.max_monitored_items_per_session", limits.max_monitored_items_per_session);
  OPCUAD_RESTART_ONLY("limits.max_monitored_item_queue_size", limits.max_monitored_item_queue_size);
  OPCUAD_RESTART_ONLY("limits.max_publish_requests_per_session", limits.max_publish_requests_per_session);
  OPCUAD_RESTART_ONLY("limits.max_subscriptions_per_call", limits.max_subscriptions_per_call);
  OPCUAD_RESTART_ONLY("limits.parked_session_lifetime_ms", limits.parked_session_lifetime_ms);
  OPCUAD_RESTART_ONLY("limits.max_parked_sessions", limits.max_parked_sessions);
  OPCUAD_RESTART_ONLY("limits.max_nodes_per_read", limits.operations.max_nodes_per_read);
  OPCUAD_RESTART_ONLY("limits.max_nodes_per_write", limits.operations.max_nodes_per_write);
  OPCUAD_RESTART_ONLY("limits.max_nodes_per_method_call", limits.operations.max_nodes_per_method_call);
  OPCUAD_RESTART_ONLY("limits.max_nodes_per_browse", limits.operations.max_nodes_per_browse);
  OPCUAD_RESTART_ONLY("limits.max_nodes_per_register_nodes", limits.operations.max_nodes_per_register_nodes);
  OPCUAD_RESTART_ONLY("limits.max_nodes_per_translate_browse_paths",
                      limits.operations.max_nodes_per_translate_browse_paths);
  OPCUAD_RESTART_ONLY("limits.max_monitored_items_per_call", limits.operations.max_monitored_items_per_call);
  OPCUAD_RESTART_ONLY("limits.max_references_per_node", limits.max_references_per_node);
  OPCUAD_RESTART_ONLY("limits.max_references_per_browse", limits.max_references_per_browse);
  OPCUAD_RESTART_ONLY("limits.max_translate_matches", limits.max_translate_matches);
  OPCUAD_RESTART_ONLY("limits.max_translate_references", limits.max_translate_references);
  OPCUAD_RESTART_ONLY("limits.max_decoded_request_bytes", limits.max_decoded_request_bytes);
  OPCUAD_RESTART_ONLY("limits.max_unactivated_sessions", limits.max_unactivated_sessions);
  OPCUAD_RESTART_ONLY("limits.max_unactivated_sessions_per_address",
                      limits.max_unactivated_sessions_per_address);
  OPCUAD_RESTART_ONLY("limits.unactivated_session_timeout_ms", limits.unactivated_session_timeout_ms);
  OPCUAD_RESTART_ONLY("limits.max_waiting_sessions", limits.max_waiting_sessions);
  OPCUAD_RESTART_ONLY("limits.max_waiting_sessions_per_address", limits.max_waiting_sessions_per_address);
  OPCUAD_RESTART_ONLY("limits.max_session_wait_ms", limits.max_session_wait_ms);
  OPCUAD_RESTART_ONLY("limits.max_queued_logins", limits.max_queued_logins);
  OPCUAD_RESTART_ONLY("limits.max_failed_logins_per_address", limits.max_failed_logins_per_address);
  OPCUAD_RESTART_ONLY("limits.failed_login_window_ms", limits.failed_login_window_ms);
  OPCUAD_RESTART_ONLY("connections.max_connections", connections.max_connections);
  OPCUAD_RESTART_ONLY("connections.max_connections_per_address", connections.max_connections_per_address);
  OPCUAD_RESTART_ONLY("connections.hello_timeout_ms", connections.hello_timeout_ms);
  OPCUAD_RESTART_ONLY("connections.open_timeout_ms", connections.open_timeout_ms);
  OPCUAD_RESTART_ONLY("connections.session_activation_timeout_ms", connections.session_activation_timeout_ms);
  OPCUAD_RESTART_ONLY("connections.max_message_size_before_session",
                      connections.max_message_size_before_session);
  OPCUAD_RESTART_ONLY("connections.handshake_threads", connections.handshake_threads);
  OPCUAD_RESTART_ONLY("connections.max_queued_handshakes", connections.max_queued_handshakes);
  OPCUAD_RESTART_ONLY("security.allow_anonymous", security.allow_anonymous);
  OPCUAD_RESTART_ONLY("security.allow_plaintext_passwords", security.allow_plaintext_passwords);
  OPCUAD_RESTART_ONLY("security.allow_deprecated_policies", security.allow_deprecated_policies);
  OPCUAD_RESTART_ONLY("security.anonymous_write", security.anonymous_write);
  OPCUAD_RESTART_ONLY("security.pki_directory", pki.directory);
  OPCUAD_RESTART_ONLY("security.certificate_key_bits", pki.key_bits);
  OPCUAD_RESTART_ONLY("security.certificate_lifetime_days", pki.lifetime_days);
  OPCUAD_RESTART_ONLY("security.trust_on_first_use", pki.trust_on_first_use);
  OPCUAD_RESTART_ONLY("security.max_rejected_certificates", pki.max_rejected_certificates);
  OPCUAD_RESTART_ONLY("security.certificate_dns_names", pki.dns_names);
  OPCUAD_RESTART_ONLY("security.certificate_ip_addresses", pki.ip_addresses);
  OPCUAD_RESTART_ONLY("users", users);
  OPCUAD_RESTART_ONLY("logging.file", logging.file);
  OPCUAD_RESTART_ONLY("logging.rate_limit_burst", logging.rate_limit_burst);
  OPCUAD_RESTART_ONLY("logging.rate_limit_window_s", logging.rate_limit_window_s);
  OPCUAD_RESTART_ONLY("shutdown.grace_period_s", shutdown.grace_period_s);
  OPCUAD_RESTART_ONLY("diagnostics.counters", diagnostics.counters);
  OPCUAD_RESTART_ONLY("diagnostics.enabled", diagnostics.enabled);
  OPCUAD_RESTART_ONLY("http", http);
#undef OPCUAD_RESTART_ONLY
  return out;
}

}  // namespace opcuad::config
