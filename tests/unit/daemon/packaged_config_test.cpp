// The packaged server file (packaging/opcuad.json, printed by `opcuad print-default-config`) lists every
// limit "with its default": this holds it to the values the code really defaults to, so a default changed
// in config/config.hpp without the file fails here instead of silently differing.
#include <catch2/catch.hpp>

#include "config/config.hpp"
#include "daemon/install_paths.hpp"

using namespace opcuad;

namespace {
config::LoadResult load_packaged() {
  // A base directory without nodes.d: the glob matches nothing, which is valid.
  return config::load_config_text(std::string(install::kPackagedServerFile), "packaging/opcuad.json",
                                  "/nonexistent-opcuad-test-dir");
}
}  // namespace

TEST_CASE("packaged config: loads, and its node file too", "[daemon][packaged_config]") {
  config::LoadResult r = load_packaged();
  for (const auto& e : r.errors) INFO(e.to_string());
  REQUIRE(r.ok());
  config::load_node_file_text(std::string(install::kPackagedNodeFile), "nodes.d/demo.json", r);
  config::check_references(r);
  for (const auto& e : r.errors) INFO(e.to_string());
  REQUIRE(r.ok());
  CHECK(r.config.nodes.size() >= 5);
  for (const auto& n : r.config.nodes) {
    INFO(n.path);
    CHECK((n.access_level & 0x02) == 0);  // CurrentWrite: no demo node is writable
  }
}

TEST_CASE("packaged config: every limit is the code's default", "[daemon][packaged_config]") {
  const config::LoadResult r = load_packaged();
  REQUIRE(r.ok());
  const config::Limits& l = r.config.limits;
  const config::Limits d;
  CHECK(l.max_sessions == d.max_sessions);
  CHECK(l.max_subscriptions == d.max_subscriptions);
  CHECK(l.max_monitored_items == d.max_monitored_items);
  CHECK(l.max_message_size == d.max_message_size);
  CHECK(l.max_chunk_count == d.max_chunk_count);
  CHECK(l.max_array_length == d.max_array_length);
  CHECK(l.max_string_length == d.max_string_length);
  CHECK(l.max_byte_string_length == d.max_byte_string_length);
  CHECK(l.max_browse_continuation_points == d.max_browse_continuation_points);
  CHECK(l.min_session_timeout_ms == d.min_session_timeout_ms);
  CHECK(l.max_session_timeout_ms == d.max_session_timeout_ms);
  CHECK(l.min_sampling_interval_ms == d.min_sampling_interval_ms);
  CHECK(l.max_subscriptions_per_session == d.max_subscriptions_per_session);
  CHECK(l.max_monitored_items_per_subscription == d.max_monitored_items_per_subscription);
  CHECK(l.max_monitored_items_per_session == d.max_monitored_items_per_session);
  CHECK(l.max_monitored_item_queue_size == d.max_monitored_item_queue_size);
  CHECK(l.max_event_queue_size == d.max_event_queue_size);
  CHECK(l.default_event_queue_size == d.default_event_queue_size);
  CHECK(l.max_publish_requests_per_session == d.max_publish_requests_per_session);
  CHECK(l.max_subscriptions_per_call == d.max_subscriptions_per_call);
  CHECK(l.max_publish_response_size == d.max_publish_response_size);
  CHECK(l.parked_session_lifetime_ms == d.parked_session_lifetime_ms);
  CHECK(l.max_parked_sessions == d.max_parked_sessions);
  CHECK(l.operations.max_nodes_per_read == d.operations.max_nodes_per_read);
  CHECK(l.operations.max_nodes_per_write == d.operations.max_nodes_per_write);
  CHECK(l.operations.max_nodes_per_browse == d.operations.max_nodes_per_browse);
  CHECK(l.operations.max_nodes_per_method_call == d.operations.max_nodes_per_method_call);
  CHECK(l.operations.max_nodes_per_register_nodes == d.operations.max_nodes_per_register_nodes);
  CHECK(l.operations.max_nodes_per_translate_browse_paths ==
        d.operations.max_nodes_per_translate_browse_paths);
  CHECK(l.operations.max_monitored_items_per_call == d.operations.max_monitored_items_per_call);
  CHECK(l.max_references_per_node == d.max_references_per_node);
  CHECK(l.max_references_per_browse == d.max_references_per_browse);
  CHECK(l.max_translate_matches == d.max_translate_matches);
  CHECK(l.max_translate_references == d.max_translate_references);
  CHECK(l.max_decoded_request_bytes == d.max_decoded_request_bytes);
  CHECK(l.max_unactivated_sessions == d.max_unactivated_sessions);
  CHECK(l.max_unactivated_sessions_per_address == d.max_unactivated_sessions_per_address);
  CHECK(l.unactivated_session_timeout_ms == d.unactivated_session_timeout_ms);
  CHECK(l.max_queued_logins == d.max_queued_logins);
  CHECK(l.max_failed_logins_per_address == d.max_failed_logins_per_address);
  CHECK(l.failed_login_window_ms == d.failed_login_window_ms);

  const config::Connections& c = r.config.connections;
  const config::Connections dc;
  CHECK(c.max_connections == dc.max_connections);
  CHECK(c.max_connections_per_address == dc.max_connections_per_address);
  CHECK(c.hello_timeout_ms == dc.hello_timeout_ms);
  CHECK(c.open_timeout_ms == dc.open_timeout_ms);
  CHECK(c.session_activation_timeout_ms == dc.session_activation_timeout_ms);
  CHECK(c.max_message_size_before_session == dc.max_message_size_before_session);
  CHECK(c.handshake_threads == dc.handshake_threads);
  CHECK(c.max_queued_handshakes == dc.max_queued_handshakes);

  const config::ServerConfig ds;
  CHECK(r.config.threads == ds.threads);
  CHECK(r.config.scheduling.pin_shards == ds.scheduling.pin_shards);
  CHECK(r.config.scheduling.realtime_priority == ds.scheduling.realtime_priority);
  CHECK(r.config.logging.level == ds.logging.level);
  CHECK(r.config.logging.file == ds.logging.file);
  CHECK(r.config.diagnostics.counters == ds.diagnostics.counters);
  CHECK(r.config.diagnostics.enabled == ds.diagnostics.enabled);
  CHECK(r.config.application_uri == ds.application_uri);
  CHECK(r.config.product_uri == ds.product_uri);
  CHECK(r.config.application_name == ds.application_name);
}

TEST_CASE(
    "packaged config: None and anonymous on loopback only, a secured endpoint for the network, no users",
    "[daemon][packaged_config]") {
  const config::LoadResult r = load_packaged();
  REQUIRE(r.ok());
  REQUIRE(r.config.endpoints.size() == 2);
  CHECK(r.config.endpoints[0].url == "opc.tcp://127.0.0.1:4840");
  // The endpoint on every interface is signed and encrypted only, without anonymous sessions.
  CHECK(r.config.endpoints[1].url == "opc.tcp://0.0.0.0:4843");
  CHECK(r.config.endpoints[1].offers.size() == 6);
  for (const auto& o : r.config.endpoints[1].offers) CHECK(o.mode != config::SecurityMode::None);
  CHECK_FALSE(r.config.endpoints[1].allow_anonymous);
  CHECK(r.config.users.empty());
  CHECK(r.config.security.allow_anonymous);
  CHECK(r.config.node_file_patterns == std::vector<std::string>{"nodes.d/*.json"});
}
