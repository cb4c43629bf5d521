#include "config/pki_settings.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "ua/endpoint_url.hpp"

namespace opcuad::config {

namespace fs = std::filesystem;

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::optional<fs::path> state_directory(const char* name) {
  const char* v = env("STATE_DIRECTORY");
  if (!v) return std::nullopt;
  std::string first(v);
  first = first.substr(0, first.find(':'));  // systemd joins several with ':'
  if (first.empty()) return std::nullopt;
  return fs::path(first) / name;
}

void add_unique(std::vector<std::string>& list, const std::string& value) {
  if (!value.empty() && std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
}

}  // namespace

bool is_ip_address(std::string_view text) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return false;
  const std::string s(text);
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

bool is_dns_name(std::string_view name) {
  if (name.starts_with("*.")) name.remove_prefix(2);
  if (name.empty() || name.size() > 253 || name.front() == '.' || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

fs::path default_state_path(const fs::path& server_dir, const char* name) {
  if (auto s = state_directory(name)) return *s;
  return server_dir / name;
}

fs::path built_in_state_path(const char* name) {
  if (auto s = state_directory(name)) return *s;
  if (const char* xdg = env("XDG_STATE_HOME")) return fs::path(xdg) / "opcuad" / name;
  if (const char* home = env("HOME")) return fs::path(home) / ".local" / "state" / "opcuad" / name;
  return name;
}

fs::path default_pki_directory(const fs::path& server_dir) {
  return default_state_path(server_dir, "pki");
}

fs::path built_in_pki_directory() {
  return built_in_state_path("pki");
}

security::PkiSettings pki_settings(const ServerConfig& c) {
  security::PkiSettings s;
  s.directory = c.pki.directory;
  s.application_uri = c.application_uri;
  s.application_name = c.application_name;
  s.organization = c.application_name;
  s.key_bits = static_cast<int>(c.pki.key_bits);
  s.lifetime_days = c.pki.lifetime_days;
  s.trust_on_first_use = c.pki.trust_on_first_use;
  s.max_rejected_certificates = c.pki.max_rejected_certificates;
  auto add_host = [&s](const std::string& host) {
    std::string h = host;
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (h.empty() || h == "0.0.0.0" || h == "::") {
      char name[HOST_NAME_MAX + 1] = {};
      if (gethostname(name, sizeof name - 1) == 0) add_unique(s.dns_names, name);
    } else if (is_ip_address(h)) {
      add_unique(s.ip_addresses, h);
    } else {
      add_unique(s.dns_names, h);
    }
  };
  for (const auto& e : c.endpoints) {
    if (const auto url = ua::parse_endpoint_url(e.url, nullptr)) add_host(std::string(url->host));
  }
  if (!c.advertised_hostname.empty()) add_host(c.advertised_hostname);
  for (const auto& d : c.pki.dns_names) add_unique(s.dns_names, d);
  for (const auto& ip : c.pki.ip_addresses) add_unique(s.ip_addresses, ip);
  return s;
}

}  // namespace opcuad::config
