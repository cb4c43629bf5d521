// Roles (Part 3 §4.8): read_roles / write_roles of node files, the users' roles, security.anonymous_write;
// Read, Write, UserAccessLevel, UserWriteMask and CreateMonitoredItems each answer for the session's user.
#include <catch2/catch.hpp>

#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;

namespace {

constexpr const char* kGuarded = R"({
  "namespaces": ["urn:test"],
  "nodes": [
    {"kind": "folder", "name": "Guarded", "children": [
      {"kind": "variable", "name": "Setpoint", "data_type": "Double", "value": 1.0, "access": ["read", "write"],
       "read_roles": ["Observer", "Operator"], "write_roles": ["Operator"]},
      {"kind": "variable", "name": "Open", "data_type": "Double", "value": 2.0, "access": ["read", "write"]}
    ]}
  ]
})";

constexpr const char* kUsers = R"("users": [
    {"name": "alice", "password_hash": "HASH", "roles": ["Operator"]},
    {"name": "olga", "password_hash": "HASH", "roles": ["Observer"]},
    {"name": "nobody", "password_hash": "HASH"}])";

ua::NodeId guarded(const std::string& name) {
  return ua::NodeId(2, ua::String("Guarded." + name));
}

uint8_t user_access_level(ServiceHarness& h, const ua::NodeId& id) {
  const auto v = h.read(id, 18);
  REQUIRE(v.status.is_good());
  return *v.value.get_if<uint8_t>();
}

}  // namespace

TEST_CASE("roles: read_roles and write_roles per user", "[services][roles]") {
  {
    ServiceHarness h("", kGuarded, kUsers);
    REQUIRE(h.login(user("alice", "secret")).is_good());  // Operator: reads and writes
    CHECK(h.read(guarded("Setpoint")).status.is_good());
    CHECK(h.write(guarded("Setpoint"), 5.0).is_good());
    CHECK(user_access_level(h, guarded("Setpoint")) == 0x03);
    CHECK(h.read(guarded("Setpoint"), 17).value == ua::Variant(uint8_t{0x03}));  // AccessLevel unchanged
  }
  {
    ServiceHarness h("", kGuarded, kUsers);
    REQUIRE(h.login(user("olga", "secret")).is_good());  // Observer: reads only
    CHECK(h.read(guarded("Setpoint")).status.is_good());
    CHECK(h.write(guarded("Setpoint"), 5.0) == status::BadUserAccessDenied);
    CHECK(user_access_level(h, guarded("Setpoint")) == 0x01);  // CurrentWrite cleared
    CHECK(h.write(guarded("Open"), 5.0).is_good());            // a node without roles: everyone
  }
  {
    ServiceHarness h("", kGuarded, kUsers);
    REQUIRE(h.login(user("nobody", "secret")).is_good());  // AuthenticatedUser only
    CHECK(h.read(guarded("Setpoint")).status == status::BadUserAccessDenied);
    CHECK(h.write(guarded("Setpoint"), 5.0) == status::BadUserAccessDenied);
    CHECK(user_access_level(h, guarded("Setpoint")) == 0x00);
    CHECK(user_access_level(h, guarded("Open")) == 0x03);
    // A subscription cannot watch what the user may not read.
    const uint32_t sub = subscribe(h).subscription_id;
    CHECK(monitor(h, sub, ItemSpec{guarded("Setpoint")}).status_code == status::BadUserAccessDenied);
    CHECK(monitor(h, sub, ItemSpec{guarded("Open")}).status_code.is_good());
  }
  {
    ServiceHarness h("", kGuarded, kUsers);
    REQUIRE(h.login().is_good());  // Anonymous
    CHECK(h.read(guarded("Setpoint")).status == status::BadUserAccessDenied);
    CHECK(h.write(guarded("Open"), 5.0).is_good());  // the harness sets anonymous_write
  }
}

TEST_CASE("roles: security.anonymous_write false forbids Write to anonymous sessions", "[services][roles]") {
  const std::string members =
      std::string(kUsers) + R"(, "security": {"allow_plaintext_passwords": true, "anonymous_write": false})";
  {
    ServiceHarness h("", kGuarded, members);
    REQUIRE(h.login().is_good());
    CHECK(h.write(guarded("Open"), 5.0) == status::BadUserAccessDenied);
    CHECK(h.write(plant(".Speed"), 5.0) == status::BadUserAccessDenied);
    CHECK(user_access_level(h, guarded("Open")) == 0x01);
    CHECK(h.read(guarded("Open")).status.is_good());
  }
  {
    ServiceHarness h("", kGuarded, members);
    REQUIRE(h.login(user("nobody", "secret")).is_good());
    CHECK(h.write(guarded("Open"), 5.0).is_good());
  }
}

TEST_CASE("roles: anonymous can be switched off", "[services][roles]") {
  ServiceHarness h("", "", R"("security": {"allow_anonymous": false, "allow_plaintext_passwords": true})");
  CHECK(h.login() == status::BadIdentityTokenRejected);
  CHECK(h.login(ua::ExtensionObject::make(ua::AnonymousIdentityToken{ua::String("anonymous")})) ==
        status::BadIdentityTokenRejected);
  const auto eps = h.call<ua::GetEndpointsResponse>(ua::GetEndpointsRequest{}).endpoints;
  REQUIRE(eps.size() == 1);
  for (const auto& t : eps[0].user_identity_tokens) CHECK(t.token_type != ua::UserTokenType::Anonymous);
  CHECK(h.login(user("alice", "secret")).is_good());
}

TEST_CASE("roles: an activation as another user re-checks the session's monitored items",
          "[services][roles][session]") {
  ServiceHarness h("", kGuarded, kUsers);
  REQUIRE(h.login(user("alice", "secret")).is_good());  // Operator: may read Setpoint
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, ItemSpec{guarded("Setpoint")}).status_code.is_good());
  auto first = next_changes(h);
  REQUIRE(first.size() == 1);
  CHECK(first[0].value.status.is_good());
  CHECK(first[0].value.value == ua::Variant(1.0));
  // The same session, activated again on its channel as a user without the role: the item samples
  // BadUserAccessDenied once and no value any more.
  ua::ActivateSessionRequest again;
  again.user_identity_token = user("nobody", "secret");
  ua::StatusCode st;
  h.call<ua::ActivateSessionResponse>(again, &st);
  REQUIRE(st.is_good());
  auto denied = next_changes(h);
  REQUIRE(denied.size() == 1);
  CHECK(denied[0].value.status == status::BadUserAccessDenied);
  CHECK(denied[0].value.value.is_empty());
  // Back to a user with the role: the item resumes with the value.
  again.user_identity_token = user("alice", "secret");
  h.call<ua::ActivateSessionResponse>(again, &st);
  REQUIRE(st.is_good());
  auto resumed = next_changes(h);
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].value.status.is_good());
  CHECK(resumed[0].value.value == ua::Variant(1.0));
}
