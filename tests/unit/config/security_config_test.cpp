// Endpoint security, users and roles in the configuration (docs/CONFIGURATION.md, "endpoints",
// "security", "users"; node files' read_roles / write_roles): what is offered, and every refusal with its
// file, JSON pointer and reason.
#include <catch2/catch.hpp>

#include "config/address_space_loader.hpp"
#include "config/config.hpp"

using namespace opcuad;
using namespace opcuad::config;

namespace {

LoadResult load(const std::string& json) {
  return load_config_text(json, "s.json", ".");
}

std::string only_error(const LoadResult& r) {
  for (const auto& e : r.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(r.errors.size() == 1);
  return r.errors[0].to_string();
}

std::string endpoint(const std::string& policies, const std::string& modes, const std::string& more = "") {
  return R"({"endpoints": [{"url": "opc.tcp://0.0.0.0:4843", "security_policies": )" + policies +
         R"(, "security_modes": )" + modes + more + "}]";
}

}  // namespace

TEST_CASE("config: endpoints offer policy and mode pairs", "[config][security]") {
  const LoadResult r = load(endpoint(R"(["None", "Basic256Sha256", "Aes256_Sha256_RsaPss"])",
                                     R"(["None", "Sign", "SignAndEncrypt"])") +
                            "}");
  REQUIRE(r.ok());
  const auto& offers = r.config.endpoints[0].offers;
  // None pairs only with None; each secure policy with both secure modes.
  REQUIRE(offers.size() == 5);
  CHECK(offers[0] == SecurityOffer{security::PolicyId::None, SecurityMode::None});
  CHECK(offers[1] == SecurityOffer{security::PolicyId::Basic256Sha256, SecurityMode::Sign});
  CHECK(offers[2] == SecurityOffer{security::PolicyId::Basic256Sha256, SecurityMode::SignAndEncrypt});
  CHECK(offers[4] == SecurityOffer{security::PolicyId::Aes256_Sha256_RsaPss, SecurityMode::SignAndEncrypt});
  // Policy URIs are accepted as well as names; the default endpoint is None / None.
  const LoadResult uri =
      load(endpoint(R"(["http://opcfoundation.org/UA/SecurityPolicy#Aes128_Sha256_RsaOaep"])",
                    R"(["SignAndEncrypt"])") +
           "}");
  REQUIRE(uri.ok());
  CHECK(
      uri.config.endpoints[0].offers ==
      std::vector<SecurityOffer>{{security::PolicyId::Aes128_Sha256_RsaOaep, SecurityMode::SignAndEncrypt}});
  REQUIRE(load("{}").ok());
  CHECK(load("{}").config.endpoints[0].offers == std::vector<SecurityOffer>{{}});
}

TEST_CASE("config: a policy or mode opcuad cannot offer stops the start", "[config][security][validation]") {
  CHECK(only_error(load(endpoint(R"(["Basic999"])", R"(["Sign"])") + "}")) ==
        "s.json: /endpoints/0/security_policies: unknown security policy \"Basic999\" (None, Basic128Rsa15, "
        "Basic256, Basic256Sha256, Aes128_Sha256_RsaOaep, Aes256_Sha256_RsaPss)");
  CHECK(
      only_error(load(endpoint(R"(["Basic256Sha256"])", R"(["Encrypt"])") + "}")) ==
      "s.json: /endpoints/0/security_modes: unknown security mode \"Encrypt\" (None, Sign, SignAndEncrypt)");
  // Sign / SignAndEncrypt with only None, and None with only secure policies: nothing to pair with.
  CHECK(only_error(load(endpoint(R"(["None"])", R"(["None", "SignAndEncrypt"])") + "}")) ==
        "s.json: /endpoints/0/security_modes: security mode SignAndEncrypt needs a secure policy, which "
        "security_policies does not list (None cannot sign)");
  const LoadResult none_mode = load(endpoint(R"(["Basic256Sha256"])", R"(["None"])") + "}");
  REQUIRE(none_mode.errors.size() == 2);
  CHECK(none_mode.errors[0].to_string() ==
        "s.json: /endpoints/0/security_policies: SecurityPolicy Basic256Sha256 needs security mode Sign or "
        "SignAndEncrypt, which security_modes does not list");
  CHECK(none_mode.errors[1].to_string() ==
        "s.json: /endpoints/0/security_modes: security mode None needs SecurityPolicy None, which "
        "security_policies does not list");
  CHECK(only_error(load(endpoint(R"([])", R"(["None"])") + "}")) ==
        "s.json: /endpoints/0/security_policies: must name at least one policy");
  CHECK(only_error(load(endpoint(R"(["None", "None"])", R"(["None"])") + "}")) ==
        "s.json: /endpoints/0/security_policies: security policy \"None\" listed twice");
}

TEST_CASE("config: deprecated policies only with security.allow_deprecated_policies", "[config][security]") {
  CHECK(only_error(load(endpoint(R"(["Basic128Rsa15"])", R"(["SignAndEncrypt"])") + "}")) ==
        "s.json: /endpoints/0/security_policies: SecurityPolicy Basic128Rsa15 is deprecated (Part 7): set "
        "security.allow_deprecated_policies to offer it");
  CHECK(!load(endpoint(R"(["Basic256"])", R"(["Sign"])") + "}").ok());
  const LoadResult allowed = load(endpoint(R"(["Basic256"])", R"(["Sign"])") +
                                  R"(, "security": {"allow_deprecated_policies": true}})");
  REQUIRE(allowed.ok());
  const auto warnings = security_warnings(allowed.config);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "endpoint opc.tcp://0.0.0.0:4843 offers the deprecated SecurityPolicy Basic256 "
        "(security.allow_deprecated_policies)");
}

TEST_CASE("config: security settings and anonymous access per endpoint", "[config][security]") {
  const LoadResult defaults = load("{}");
  REQUIRE(defaults.ok());
  CHECK(defaults.config.security.allow_anonymous);
  CHECK(!defaults.config.security.allow_plaintext_passwords);
  CHECK(!defaults.config.security.allow_deprecated_policies);
  CHECK(!defaults.config.security.anonymous_write);  // writes need a user unless the operator says so
  // The default endpoint, opc.tcp://0.0.0.0:4840 with SecurityPolicy None, is open to the network.
  const auto default_warnings = security_warnings(defaults.config);
  REQUIRE(default_warnings.size() == 1);
  CHECK(default_warnings[0].find("offers SecurityPolicy None beyond loopback") != std::string::npos);

  const LoadResult r = load(R"({"endpoints": [{"url": "opc.tcp://0.0.0.0:4840"},
      {"url": "opc.tcp://0.0.0.0:4841", "allow_anonymous": true}],
      "security": {"allow_anonymous": false, "anonymous_write": false, "allow_plaintext_passwords": true},
      "users": [{"name": "op", "password_hash": "pbkdf2-sha256$600000$c2FsdHNhbHRzYWx0c2FsdA==$qVlsnRRU7TXi8jRSxjJNuzfiXntfl2RrSjfGOecD1lk="}]})");
  for (const auto& e : r.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(r.ok());
  CHECK(!r.config.endpoints[0].allow_anonymous);  // the server-wide default
  CHECK(r.config.endpoints[1].allow_anonymous);   // its own
  CHECK(!r.config.security.anonymous_write);
  const auto warnings = security_warnings(r.config);
  REQUIRE(warnings.size() == 3);  // both endpoints' None beyond loopback, and plaintext passwords
  CHECK(warnings[0].find("4840 offers SecurityPolicy None beyond loopback") != std::string::npos);
  CHECK(warnings[1].find("4841 offers SecurityPolicy None beyond loopback") != std::string::npos);
  CHECK(warnings[2].starts_with("INSECURE: security.allow_plaintext_passwords"));
  CHECK(only_error(load(R"({"security": {"anonymous_write": "no"}})")) ==
        "s.json: /security/anonymous_write: expected a boolean, got a string");
}

TEST_CASE("config: users with roles and certificates", "[config][security][roles]") {
  const LoadResult r = load(R"({"users": [
      {"name": "op", "password_hash": "pbkdf2-sha256$600000$c2FsdHNhbHRzYWx0c2FsdA==$qVlsnRRU7TXi8jRSxjJNuzfiXntfl2RrSjfGOecD1lk=", "roles": ["Operator", "Observer"]},
      {"name": "eng", "certificate_thumbprint": "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33"},
      {"name": "plain", "password_hash": "pbkdf2-sha256$600000$c2FsdHNhbHRzYWx0c2FsdA==$qVlsnRRU7TXi8jRSxjJNuzfiXntfl2RrSjfGOecD1lk="}]})");
  for (const auto& e : r.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(r.ok());
  CHECK(r.config.users[0].roles == (role::kAuthenticatedUser | role::kOperator | role::kObserver));
  CHECK(r.config.users[2].roles == role::kAuthenticatedUser);
  REQUIRE(r.config.users[1].certificate_thumbprint);
  CHECK((*r.config.users[1].certificate_thumbprint)[0] == 0x00);
  CHECK((*r.config.users[1].certificate_thumbprint)[10] == 0xAA);
  CHECK(r.config.users[1].password_hash.empty());

  CHECK(
      only_error(load(
          R"({"users": [{"name": "x", "password_hash": "pbkdf2-sha256$600000$c2FsdHNhbHRzYWx0c2FsdA==$qVlsnRRU7TXi8jRSxjJNuzfiXntfl2RrSjfGOecD1lk=",
      "roles": ["Root"]}]})")) ==
      "s.json: /users/0/roles: unknown role \"Root\" (Anonymous, AuthenticatedUser, Observer, Operator, "
      "Engineer, Supervisor, "
      "ConfigureAdmin, SecurityAdmin: the well-known roles of Part 3 §4.8.2)");
  CHECK(
      only_error(load(
          R"({"users": [{"name": "x", "password_hash": "pbkdf2-sha256$600000$c2FsdHNhbHRzYWx0c2FsdA==$qVlsnRRU7TXi8jRSxjJNuzfiXntfl2RrSjfGOecD1lk=",
      "roles": ["Anonymous"]}]})")) ==
      "s.json: /users/0/roles: the Anonymous role belongs to anonymous sessions, not to users");
  CHECK(only_error(load(R"({"users": [{"name": "x", "certificate_thumbprint": "0011"}]})")) ==
        "s.json: /users/0/certificate_thumbprint: not a SHA-1 thumbprint (40 hexadecimal digits, optionally "
        "separated by ':')");
  CHECK(only_error(load(R"({"users": [{"name": "x"}]})")) ==
        "s.json: /users/0: a user needs password_hash, certificate_thumbprint or both");
  CHECK(only_error(load(R"({"users": [
      {"name": "a", "certificate_thumbprint": "0011223344556677889900112233445566778899"},
      {"name": "b", "certificate_thumbprint": "0011223344556677889900112233445566778899"}]})")) ==
        "s.json: /users/1/certificate_thumbprint: the same certificate as user \"a\"");
}

TEST_CASE("config: node files give variables read_roles and write_roles", "[config][roles]") {
  LoadResult r = load(R"({"namespaces": ["urn:t"]})");
  load_node_file_text(R"({"namespaces": ["urn:t"], "nodes": [
      {"kind": "variable", "name": "Setpoint", "data_type": "Double", "value": 1.0, "access": ["read", "write"],
       "read_roles": ["Observer", "Operator"], "write_roles": ["Operator"]},
      {"kind": "variable", "name": "Open", "data_type": "Double", "value": 1.0}]})",
                      "nodes.json", r);
  check_references(r);
  REQUIRE(r.ok());
  const NodeDecl& d = r.config.nodes[0];
  CHECK(d.read_roles == (role::kObserver | role::kOperator));
  CHECK(d.write_roles == role::kOperator);
  CHECK(r.config.nodes[1].read_roles == role::kEveryone);
  // They reach the role table, and the node store marks the variable (and only it) as having roles.
  addressspace::AddressSpace space;
  auto* p = space.reclaimer().register_participant();
  RoleTable roles;
  REQUIRE(build_address_space(r.config, space, *p, {}, &roles).empty());
  REQUIRE(roles.size() == 1);
  REQUIRE(roles.count(d.node_id));
  CHECK(roles[d.node_id].read == (role::kObserver | role::kOperator));
  CHECK(roles[d.node_id].write == role::kOperator);
  const auto& store = *space.current();
  CHECK((store.variable(store.find(d.node_id))->user_access_level & kHasRolesBit) != 0);
  CHECK((store.variable(store.find(r.config.nodes[1].node_id))->user_access_level & kHasRolesBit) == 0);
  CHECK(store.variable(store.find(d.node_id))->access_level == 0x03);

  LoadResult bad = load(R"({"namespaces": ["urn:t"]})");
  load_node_file_text(R"({"namespaces": ["urn:t"], "nodes": [
      {"kind": "variable", "name": "A", "data_type": "Double", "write_roles": ["Janitor"]},
      {"kind": "variable", "name": "B", "data_type": "Double", "read_roles": []},
      {"kind": "folder", "name": "F", "read_roles": ["Operator"]}]})",
                      "nodes.json", bad);
  REQUIRE(bad.errors.size() == 3);
  CHECK(bad.errors[0].to_string() ==
        "nodes.json: /nodes/0/write_roles: unknown role \"Janitor\" (Anonymous, AuthenticatedUser, Observer, "
        "Operator, Engineer, Supervisor, "
        "ConfigureAdmin, SecurityAdmin: the well-known roles of Part 3 §4.8.2)");
  CHECK(bad.errors[1].to_string() ==
        "nodes.json: /nodes/1/read_roles: an empty list would lock everyone out: omit the key instead");
  CHECK(bad.errors[2].to_string() ==
        "nodes.json: /nodes/2/read_roles: only variables and properties have \"read_roles\"");
}
