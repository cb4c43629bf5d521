// The security section's PKI keys (docs/CONFIGURATION.md) and config::pki_settings().
#include <unistd.h>
#include <catch2/catch.hpp>

#include <climits>
#include <cstdlib>
#include <optional>

#include "config/config.hpp"
#include "config/pki_settings.hpp"

namespace opcuad::config {
namespace {

// Sets or clears an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvVar() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string first_error_path(const LoadResult& r) {
  return r.errors.empty() ? "" : r.errors[0].path;
}

TEST_CASE("config: pki_directory defaults to $STATE_DIRECTORY/pki, else pki beside the server file",
          "[pki][config]") {
  {
    EnvVar state("STATE_DIRECTORY", nullptr);
    const LoadResult r = load_config_text("{}", "s.json", "/etc/opcuad");
    REQUIRE(r.ok());
    CHECK(r.config.pki.directory == "/etc/opcuad/pki");
  }
  {
    EnvVar state("STATE_DIRECTORY", "/var/lib/opcuad:/var/lib/other");
    CHECK(load_config_text("{}", "s.json", "/etc/opcuad").config.pki.directory == "/var/lib/opcuad/pki");
    // An explicit setting wins, relative to the server file.
    CHECK(load_config_text(R"({"security": {"pki_directory": "certs"}})", "s.json", "/etc/opcuad")
              .config.pki.directory == "/etc/opcuad/certs");
    CHECK(load_config_text(R"({"security": {"pki_directory": "/srv/pki"}})", "s.json", "/etc/opcuad")
              .config.pki.directory == "/srv/pki");
  }
}

TEST_CASE("config: the built-in configuration keeps its PKI in the XDG state folder", "[pki][config]") {
  EnvVar state("STATE_DIRECTORY", nullptr);
  {
    EnvVar xdg("XDG_STATE_HOME", "/home/u/.state");
    CHECK(built_in_pki_directory() == "/home/u/.state/opcuad/pki");
    CHECK(default_config().pki.directory == "/home/u/.state/opcuad/pki");
  }
  EnvVar xdg("XDG_STATE_HOME", nullptr);
  EnvVar home("HOME", "/home/u");
  CHECK(built_in_pki_directory() == "/home/u/.local/state/opcuad/pki");
  EnvVar state2("STATE_DIRECTORY", "/var/lib/opcuad");
  CHECK(built_in_pki_directory() == "/var/lib/opcuad/pki");
}

TEST_CASE("config: the PKI keys are read and bounded", "[pki][config]") {
  const LoadResult r = load_config_text(R"({"security": {
      "certificate_key_bits": 4096, "certificate_lifetime_days": 365, "trust_on_first_use": true,
      "max_rejected_certificates": 7, "certificate_dns_names": ["plant.example", "*.plant.example"],
      "certificate_ip_addresses": ["10.0.0.5", "fd00::5"]}})",
                                        "s.json", ".");
  REQUIRE(r.ok());
  const PkiConfig& p = r.config.pki;
  CHECK(p.key_bits == 4096);
  CHECK(p.lifetime_days == 365);
  CHECK(p.trust_on_first_use);
  CHECK(p.max_rejected_certificates == 7);
  CHECK(p.dns_names == std::vector<std::string>{"plant.example", "*.plant.example"});
  CHECK(p.ip_addresses == std::vector<std::string>{"10.0.0.5", "fd00::5"});

  const PkiConfig defaults = load_config_text("{}", "s.json", ".").config.pki;
  CHECK(defaults.key_bits == 2048);
  CHECK(defaults.lifetime_days == 1825);
  CHECK_FALSE(defaults.trust_on_first_use);
  CHECK(defaults.max_rejected_certificates == 100);

  auto path_of = [](const char* security) {
    return first_error_path(
        load_config_text(std::string(R"({"security": )") + security + "}", "s.json", "."));
  };
  CHECK(path_of(R"({"certificate_key_bits": 1024})") == "/security/certificate_key_bits");
  CHECK(path_of(R"({"certificate_key_bits": 8192})") == "/security/certificate_key_bits");
  CHECK(path_of(R"({"certificate_key_bits": 3000})") == "/security/certificate_key_bits");
  CHECK(path_of(R"({"certificate_key_bits": 3072})").empty());
  CHECK(path_of(R"({"certificate_lifetime_days": 0})") == "/security/certificate_lifetime_days");
  CHECK(path_of(R"({"certificate_lifetime_days": 7301})") == "/security/certificate_lifetime_days");
  CHECK(path_of(R"({"max_rejected_certificates": -1})") == "/security/max_rejected_certificates");
  CHECK(path_of(R"({"max_rejected_certificates": 100001})") == "/security/max_rejected_certificates");
  CHECK(path_of(R"({"max_rejected_certificates": 0})").empty());
  CHECK(path_of(R"({"certificate_dns_names": ["bad name"]})") == "/security/certificate_dns_names");
  CHECK(path_of(R"({"certificate_dns_names": [""]})") == "/security/certificate_dns_names");
  CHECK(path_of(R"({"certificate_ip_addresses": ["10.0.0.256"]})") == "/security/certificate_ip_addresses");
  CHECK(path_of(R"({"certificate_ip_addresses": ["[::1]"]})") == "/security/certificate_ip_addresses");
  CHECK(path_of(R"({"pki_directory": ""})") == "/security/pki_directory");
  CHECK(path_of(R"({"trust_on_first_use": "yes"})") == "/security/trust_on_first_use");
}

TEST_CASE("config: pki_settings names the endpoints' hosts in the certificate", "[pki][config]") {
  LoadResult r = load_config_text(R"({
      "application_uri": "urn:plant:opcuad", "application_name": "Plant server",
      "endpoints": [{"url": "opc.tcp://0.0.0.0:4840"}, {"url": "opc.tcp://192.168.1.10:4841"},
                    {"url": "opc.tcp://[fd00::1]:4842"}, {"url": "opc.tcp://scada.plant.example:4843"}],
      "advertised_hostname": "opcua.plant.example",
      "security": {"certificate_dns_names": ["scada.plant.example", "extra.example"],
                   "certificate_ip_addresses": ["10.1.1.1"], "certificate_key_bits": 3072,
                   "trust_on_first_use": true, "max_rejected_certificates": 5}})",
                                  "s.json", "/etc/opcuad");
  REQUIRE(r.ok());
  const security::PkiSettings s = pki_settings(r.config);
  char host[HOST_NAME_MAX + 1] = {};
  REQUIRE(gethostname(host, sizeof host - 1) == 0);
  CHECK(s.directory == r.config.pki.directory);
  CHECK(s.application_uri == "urn:plant:opcuad");
  CHECK(s.application_name == "Plant server");
  CHECK(s.dns_names ==
        std::vector<std::string>{host, "scada.plant.example", "opcua.plant.example", "extra.example"});
  CHECK(s.ip_addresses == std::vector<std::string>{"192.168.1.10", "fd00::1", "10.1.1.1"});
  CHECK(s.key_bits == 3072);
  CHECK(s.trust_on_first_use);
  CHECK(s.max_rejected_certificates == 5);
}

}  // namespace
}  // namespace opcuad::config
