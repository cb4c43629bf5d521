#pragma once
// The PKI's settings from a validated server configuration (docs/CONFIGURATION.md, "security"): the one
// mapping the daemon and the `opcuad pki` subcommands share, so both look at the same folder and a
// regenerated certificate names the same hosts. The warning callback is the caller's.

#include <filesystem>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "transport/security/pki.hpp"

namespace opcuad::config {

// subjectAltName of a generated own certificate: the hosts of the endpoint URLs (a literal address as
// an IP address, gethostname() for a wildcard such as 0.0.0.0 or [::]), advertised_hostname, then the
// configured certificate_dns_names / certificate_ip_addresses; no duplicates.
security::PkiSettings pki_settings(const ServerConfig& c);

// security.pki_directory when it is not set: $STATE_DIRECTORY/pki (systemd StateDirectory=; the first
// of several), else pki beside the server file.
std::filesystem::path default_pki_directory(const std::filesystem::path& server_dir);
// The same for the built-in configuration: $STATE_DIRECTORY/pki, else $XDG_STATE_HOME/opcuad/pki, else
// ~/.local/state/opcuad/pki, else ./pki.
std::filesystem::path built_in_pki_directory();

// A file or directory `name` of the daemon's state, placed as the PKI directory is: $STATE_DIRECTORY/name,
// else beside the server file; for the built-in configuration the second form's fallbacks.
std::filesystem::path default_state_path(const std::filesystem::path& server_dir, const char* name);
std::filesystem::path built_in_state_path(const char* name);
inline constexpr const char* kConditionStateFile = "conditions.state";

bool is_dns_name(std::string_view name);    // letters, digits, '-', '.', a leading "*." wildcard
bool is_ip_address(std::string_view text);  // IPv4 or IPv6 literal (no brackets)

}  // namespace opcuad::config
