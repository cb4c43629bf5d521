// Audit events (Part 4 §6.5, Part 5 §6.4.3-§6.4.27) with audit.enabled: a Write's AuditWriteUpdateEvent
// with the old and the new value, a session's own ActivateSession and CloseSession records, only for
// administrators; nothing without the setting; an identity token's secret never in a record.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "services/audit.hpp"
#include "services/event_record.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::services::audit_test {
namespace {

using namespace opcuad::services::test;
namespace id = ua::id;

constexpr const char* kUsers = R"("users": [
    {"name": "sam", "password_hash": "HASH", "roles": ["SecurityAdmin"]},
    {"name": "otto", "password_hash": "HASH", "roles": ["Operator"]}])";

ua::SimpleAttributeOperand clause(uint32_t type, const std::string& name) {
  ua::SimpleAttributeOperand c;
  c.type_definition_id = ua::NodeId(0, type);
  c.browse_path.push_back(ua::QualifiedName{0, ua::String(name)});
  c.attribute_id = 13;
  return c;
}

// An event item on the Server object selecting EventType, SourceName, ClientUserId, Status, OldValue,
// NewValue, ClientAuditEntryId.
void watch_audit(ServiceHarness& h, uint32_t sub) {
  std::vector<ua::SimpleAttributeOperand> select = {
      clause(id::BaseEventType, "EventType"),
      clause(id::BaseEventType, "SourceName"),
      clause(id::AuditEventType, "ClientUserId"),
      clause(id::AuditEventType, "Status"),
      clause(id::AuditWriteUpdateEventType, "OldValue"),
      clause(id::AuditWriteUpdateEventType, "NewValue"),
      clause(id::AuditEventType, "ClientAuditEntryId"),
  };
  ItemSpec spec{
      ua::NodeId(0, id::Server), 9, 0, 100, true, ua::ExtensionObject::make(ua::EventFilter{select, {}})};
  spec.attribute = 12;
  REQUIRE(monitor(h, sub, spec).status_code.is_good());
}

// The events of the publishes within `d`.
std::vector<ua::EventFieldList> events_within(ServiceHarness& h, std::chrono::milliseconds d) {
  std::vector<ua::EventFieldList> out;
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& eo : publish(h).notification_message.notification_data) {
      if (const auto* en = eo.get<ua::EventNotificationList>()) {
        out.insert(out.end(), en->events.begin(), en->events.end());
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("audit: a Write is audited with the old and new value, for administrators only",
          "[services][audit]") {
  const std::string members = std::string(kUsers) + R"(, "audit": {"enabled": true})";
  {
    ServiceHarness h("", "", members);
    REQUIRE(h.login(user("sam", "secret")).is_good());
    watch_audit(h, subscribe(h).subscription_id);
    REQUIRE(h.write(plant(".Speed"), 42.0).is_good());
    CHECK(h.write(plant(".Fixed"), 2.0) == ua::status::BadNotWritable);
    const auto events = events_within(h, std::chrono::milliseconds(400));
    std::vector<const ua::EventFieldList*> writes;
    for (const auto& e : events) {
      if (e.event_fields.at(0) == ua::Variant(ua::NodeId(0, id::AuditWriteUpdateEventType)))
        writes.push_back(&e);
    }
    REQUIRE(writes.size() == 2);
    const auto& ok = writes[0]->event_fields;
    CHECK(ok.at(1) == ua::Variant(ua::String("Attribute/Write")));
    CHECK(ok.at(2) == ua::Variant(ua::String("sam")));
    CHECK(ok.at(3) == ua::Variant(true));
    CHECK(ok.at(4) == ua::Variant(10.0));  // the value it replaced
    CHECK(ok.at(5) == ua::Variant(42.0));
    const auto& refused = writes[1]->event_fields;
    CHECK(refused.at(3) == ua::Variant(false));
    CHECK(refused.at(5) == ua::Variant(2.0));
  }
  {
    ServiceHarness h("", "", members);
    REQUIRE(h.login(user("otto", "secret")).is_good());  // Operator: no audit events
    watch_audit(h, subscribe(h).subscription_id);
    REQUIRE(h.write(plant(".Speed"), 43.0).is_good());
    CHECK(events_within(h, std::chrono::milliseconds(300)).empty());
  }
}

TEST_CASE("audit: off by default: nothing is raised", "[services][audit]") {
  ServiceHarness h("", "", kUsers);
  REQUIRE(h.login(user("sam", "secret")).is_good());
  watch_audit(h, subscribe(h).subscription_id);
  REQUIRE(h.write(plant(".Speed"), 42.0).is_good());
  CHECK(events_within(h, std::chrono::milliseconds(300)).empty());
}

TEST_CASE("audit: session records, and no secret in an identity token", "[services][audit]") {
  ServiceHarness h("", "", std::string(kUsers) + R"(, "audit": {"enabled": true})");
  REQUIRE(h.login(user("sam", "secret")).is_good());
  const addressspace::NodeStore& store = *h.space.current();
  const Session* s = nullptr;
  for (const auto& [token, session] : h.server->shard_state(0).sessions) s = session.get();
  REQUIRE(s);
  const audit::Context c{store, "urn:test:server", "entry-7"};
  auto token = user("sam", "secret");
  auto activated = audit::activate_session(c, *s, "sam", token, s->channel_id, ua::status::Good);
  REQUIRE(activated);
  CHECK(activated->readers() == config::role::kAdministrators);
  const auto* t = activated->field(*store.event_types()->field(
      *store.event_types()->event_type(ua::NodeId(0, id::AuditActivateSessionEventType)),
      std::vector<ua::QualifiedName>{ua::QualifiedName{0, ua::String("UserIdentityToken")}}));
  REQUIRE(t);
  const auto* eo = t->get_if<ua::ExtensionObject>();
  REQUIRE(eo);
  const auto* shown = eo->get<ua::UserNameIdentityToken>();
  REQUIRE(shown);
  CHECK(shown->user_name == ua::String("sam"));
  CHECK(shown->password.is_null());
  CHECK(*activated->field(addressspace::event_field::kClientAuditEntryId) ==
        ua::Variant(ua::String("entry-7")));
  CHECK(*activated->field(addressspace::event_field::kServerId) ==
        ua::Variant(ua::String("urn:test:server")));
  auto closed = audit::close_session(c, *s, true);
  REQUIRE(closed);
  CHECK(*closed->field(addressspace::event_field::kSourceName) == ua::Variant(ua::String("Session/Timeout")));
  // A token the server could not decode shows nothing of itself.
  CHECK(audit::without_secret(ua::ExtensionObject::undecoded(ua::NodeId(1, 77),
                                                             ua::ExtensionObject::Encoding::ByteString,
                                                             ua::ByteString("opaque")))
            .is_empty());
}

}  // namespace opcuad::services::audit_test
