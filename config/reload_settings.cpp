#include "config/reload_settings.hpp"

#include "config/settings_table.hpp"

namespace opcuad::config {

std::vector<std::string> restart_only_changes(const ServerConfig& running, const ServerConfig& next) {
  std::vector<std::string> out;
  // The keys that are not in a settings table (strings, lists, objects), by the name the file gives them.
  auto whole = [&out](const char* name, const auto& a, const auto& b) {
    if (!(a == b)) out.emplace_back(name);
  };
  whole("application_uri", running.application_uri, next.application_uri);
  whole("product_uri", running.product_uri, next.product_uri);
  whole("application_name", running.application_name, next.application_name);
  whole("endpoints", running.endpoints, next.endpoints);
  whole("advertised_hostname", running.advertised_hostname, next.advertised_hostname);
  changed_settings(top_level_settings(), running, next, out);
  changed_settings(scheduling_settings(), running.scheduling, next.scheduling, out);
  changed_settings(limit_settings(), running.limits, next.limits, out);
  changed_settings(operation_limit_settings(), running.limits.operations, next.limits.operations, out);
  changed_settings(connection_settings(), running.connections, next.connections, out);
  changed_settings(security_settings(), running.security, next.security, out);
  whole("security.pki_directory", running.pki.directory, next.pki.directory);
  changed_settings(pki_settings_table(), running.pki, next.pki, out);
  whole("security.certificate_dns_names", running.pki.dns_names, next.pki.dns_names);
  whole("security.certificate_ip_addresses", running.pki.ip_addresses, next.pki.ip_addresses);
  whole("users", running.users, next.users);
  whole("logging.file", running.logging.file, next.logging.file);
  changed_settings(logging_settings(), running.logging, next.logging, out);
  changed_settings(shutdown_settings(), running.shutdown, next.shutdown, out);
  changed_settings(diagnostics_settings(), running.diagnostics, next.diagnostics, out);
  changed_settings(audit_settings(), running.audit, next.audit, out);
  whole("http", running.http, next.http);  // the listener, its address and its bounds are one object
  return out;
}

}  // namespace opcuad::config
