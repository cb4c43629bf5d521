// Audit events (Part 4 §6.5, Part 5 §6.4.3-§6.4.27) with audit.enabled: a Write's AuditWriteUpdateEvent
// with the old and the new value, a session's own ActivateSession and CloseSession records, only for
// administrators; nothing without the setting; an identity token's secret never in a record; a value a
// client chose kept only within the record's size bound (services/audit.hpp, docs/SECURITY.md).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "services/audit.hpp"
#include "services/event_record.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/buffer.hpp"
#include "ua/codec.hpp"
#include "ua/encoder.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

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

// The field `name` of an audit record of `type`, or nullptr.
const ua::Variant* field_of(const addressspace::NodeStore& store, const EventRecord& r, uint32_t type,
                            const char* name) {
  const auto* types = store.event_types();
  const auto t = types->event_type(ua::NodeId(0, type));
  if (!t) return nullptr;
  const auto key = types->field(*t, std::vector<ua::QualifiedName>{ua::QualifiedName{0, ua::String(name)}});
  return key ? r.field(*key) : nullptr;
}

std::string encoded(const ua::Variant& v) {
  ua::ByteBuffer out;
  ua::Encoder e(out);
  ua::encode(e, v);
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

// The text of the record's Message.
std::string message_of(const EventRecord& r) {
  const auto* m = r.field(addressspace::event_field::kMessage);
  const auto* t = m ? m->get_if<ua::LocalizedText>() : nullptr;
  return t ? std::string(t->text.view()) : std::string();
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

// A server with auditing on and one session of "sam" on its shard.
struct AuditedSession {
  AuditedSession() {
    REQUIRE(h.login(user("sam", "secret")).is_good());
    for (const auto& [token, one] : h.server->shard_state(0).sessions) session = one.get();
    REQUIRE(session);
  }
  ServiceHarness h{"", "", std::string(kUsers) + R"(, "audit": {"enabled": true})"};
  const Session* session = nullptr;
};

TEST_CASE("audit: session records, and no secret in an identity token", "[services][audit]") {
  AuditedSession a;
  const addressspace::NodeStore& store = *a.h.space.current();
  const Session* s = a.session;
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

TEST_CASE("audit: a value over the bound is left out (null) and said so, a small one is kept whole",
          "[services][audit]") {
  AuditedSession a;
  const addressspace::NodeStore& store = *a.h.space.current();
  const Session* s = a.session;
  const audit::Context c{store, "urn:test:server", "entry-7"};
  const std::string mib(1u << 20, 'x');
  const auto write_of = [&](const ua::Variant& old_value, const ua::Variant& new_value) {
    auto r = audit::write(c, *s, addressspace::kNoNode, 13, "", old_value, new_value, ua::status::Good);
    REQUIRE(r);
    return r;
  };
  const auto new_of = [&](const EventRecord& r) {
    const auto* v = field_of(store, r, id::AuditWriteUpdateEventType, "NewValue");
    REQUIRE(v);
    return *v;
  };
  const auto old_of = [&](const EventRecord& r) {
    const auto* v = field_of(store, r, id::AuditWriteUpdateEventType, "OldValue");
    REQUIRE(v);
    return *v;
  };

  SECTION("hostile values: a 1 MiB ByteString, String, array, nested array, structure") {
    std::vector<ua::Variant> nested(200, ua::Variant(std::vector<double>(100, 1.0)));
    ua::ReadRequest many;
    many.nodes_to_read.resize(100000);
    for (const ua::Variant& big :
         {ua::Variant(ua::ByteString(mib)), ua::Variant(ua::String(mib)),
          ua::Variant(std::vector<double>(1u << 17)),
          ua::Variant(std::vector<ua::String>(2000, ua::String("abc"))), ua::Variant(std::move(nested)),
          ua::Variant(ua::ExtensionObject::make(std::move(many)))}) {
      CHECK(audit::approximate_size(big, audit::kMaxValueBytes) > audit::kMaxValueBytes);
      auto r = write_of(ua::Variant(10.0), big);
      CHECK(new_of(*r).is_empty());
      CHECK(old_of(*r) == ua::Variant(10.0));  // the small one is kept
      CHECK(message_of(*r).find("not recorded") != std::string::npos);
      // What the record holds of the values is small: the bound, not the write's size.
      CHECK(audit::approximate_size(new_of(*r), SIZE_MAX) + audit::approximate_size(old_of(*r), SIZE_MAX) <=
            2 * audit::kMaxValueBytes);
    }
    // The value replaced is bounded the same way.
    auto r = write_of(ua::Variant(ua::String(mib)), ua::Variant(1.0));
    CHECK(old_of(*r).is_empty());
    CHECK(new_of(*r) == ua::Variant(1.0));
  }

  SECTION("small values are kept whole, the Message says nothing was left out") {
    const ua::Variant text(ua::String(std::string(100, 't')));
    const ua::Variant numbers(std::vector<int32_t>{1, 2, 3});
    auto r = write_of(text, numbers);
    CHECK(old_of(*r) == text);
    CHECK(new_of(*r) == numbers);
    CHECK(message_of(*r) == "Value written");
    // A structure is kept as its encoded body: the same bytes on the wire.
    ua::Range range;
    range.low = 0;
    range.high = 100;
    const ua::Variant structure(ua::ExtensionObject::make(range));
    r = write_of(structure, structure);
    CHECK(encoded(new_of(*r)) == encoded(structure));
    CHECK(encoded(old_of(*r)) == encoded(structure));
  }

  SECTION("the bound is exact: a ByteString that just fits is kept, one byte more is not") {
    const size_t fits = audit::kMaxValueBytes - sizeof(ua::Variant);
    const ua::Variant at(ua::ByteString(std::string(fits, 'b')));
    const ua::Variant over(ua::ByteString(std::string(fits + 1, 'b')));
    CHECK(audit::approximate_size(at, SIZE_MAX) == audit::kMaxValueBytes);
    CHECK(new_of(*write_of(at, at)) == at);
    CHECK(new_of(*write_of(at, over)).is_empty());
  }

  SECTION("the request's own strings: IndexRange, ClientAuditEntryId") {
    auto r = audit::write(audit::Context{store, "urn:test:server", mib}, *s, addressspace::kNoNode, 13, mib,
                          ua::Variant(1.0), ua::Variant(2.0), ua::status::BadIndexRangeInvalid);
    REQUIRE(r);
    CHECK(r->field(addressspace::event_field::kClientAuditEntryId)->is_empty());
    CHECK(field_of(store, *r, id::AuditWriteUpdateEventType, "IndexRange")->is_empty());
    CHECK(new_of(*r) == ua::Variant(2.0));
  }
}

TEST_CASE("audit: a 32 KiB Write through the service: its record's NewValue is null, the OldValue kept",
          "[services][audit]") {
  ServiceHarness h("", "", std::string(kUsers) + R"(, "audit": {"enabled": true})");
  REQUIRE(h.login(user("sam", "secret")).is_good());
  watch_audit(h, subscribe(h).subscription_id);
  CHECK(h.write(plant(".Speed"), ua::Variant(ua::String(std::string(32u << 10, 'x')))) ==
        ua::status::BadTypeMismatch);
  std::vector<const ua::EventFieldList*> writes;
  const auto events = events_within(h, std::chrono::milliseconds(400));
  for (const auto& e : events) {
    if (e.event_fields.at(0) == ua::Variant(ua::NodeId(0, id::AuditWriteUpdateEventType)))
      writes.push_back(&e);
  }
  REQUIRE(writes.size() == 1);
  CHECK(writes[0]->event_fields.at(3) == ua::Variant(false));
  CHECK(writes[0]->event_fields.at(4) == ua::Variant(10.0));
  CHECK(writes[0]->event_fields.at(5).is_empty());
}

TEST_CASE("audit: method arguments over the bound are left out (null), small ones kept whole",
          "[services][audit]") {
  AuditedSession a;
  const addressspace::NodeStore& store = *a.h.space.current();
  const Session* s = a.session;
  const audit::Context c{store, "urn:test:server", "entry-7"};
  const auto arguments_of = [&](std::span<const ua::Variant> inputs) {
    auto r = audit::method_call(c, *s, addressspace::kNoNode, ua::NodeId(0, id::Server_GetMonitoredItems),
                                inputs, ua::status::Good);
    REQUIRE(r);
    const auto* v = field_of(store, *r, id::AuditUpdateMethodEventType, "InputArguments");
    REQUIRE(v);
    return std::make_pair(*v, message_of(*r));
  };

  SECTION("a large argument is null, the others are kept") {
    const std::vector<ua::Variant> inputs = {
        ua::Variant(ua::ByteString(std::string(1u << 20, 'x'))), ua::Variant(int32_t{7}),
        ua::Variant(std::vector<double>(1u << 17)), ua::Variant(ua::String("small"))};
    const auto [args, message] = arguments_of(inputs);
    const auto* a = args.get_if<std::vector<ua::Variant>>();
    REQUIRE(a);
    REQUIRE(a->size() == 4);
    CHECK((*a)[0].is_empty());
    CHECK((*a)[1] == inputs[1]);
    CHECK((*a)[2].is_empty());
    CHECK((*a)[3] == inputs[3]);
    CHECK(message.find("not recorded") != std::string::npos);
    CHECK(audit::approximate_size(args, SIZE_MAX) < 2 * audit::kMaxArgumentBytes);
  }

  SECTION("small arguments are kept whole") {
    const std::vector<ua::Variant> inputs = {ua::Variant(uint32_t{5}), ua::Variant(ua::String("abc"))};
    const auto [args, message] = arguments_of(inputs);
    CHECK(args == ua::Variant(inputs));
    CHECK(message == "Method called");
  }

  SECTION("many arguments each within the bound: together at most kMaxArgumentBytes") {
    const std::vector<ua::Variant> inputs(10, ua::Variant(ua::ByteString(std::string(3000, 'y'))));
    const auto [args, message] = arguments_of(inputs);
    const auto* a = args.get_if<std::vector<ua::Variant>>();
    REQUIRE(a);
    REQUIRE(a->size() == 10);
    size_t kept = 0, total = 0;
    for (const auto& v : *a) {
      if (!v.is_empty()) ++kept;
      total += audit::approximate_size(v, SIZE_MAX);
    }
    CHECK(kept == 2);  // 3,000 bytes and the Variant each: two within 8 KiB, not three
    CHECK(total <= audit::kMaxArgumentBytes);
    CHECK(message.find("not recorded") != std::string::npos);
  }

  SECTION("more than kMaxArguments arguments: none recorded") {
    const std::vector<ua::Variant> inputs(audit::kMaxArguments + 1, ua::Variant(int32_t{1}));
    const auto [args, message] = arguments_of(inputs);
    CHECK(args.is_empty());
    CHECK(message.find("not recorded") != std::string::npos);
  }
}

TEST_CASE("audit: the condition methods get Part 9's audit types with the EventId and the comment",
          "[services][audit][alarms]") {
  AuditedSession a;
  const addressspace::NodeStore& store = *a.h.space.current();
  const Session* s = a.session;
  const audit::Context c{store, "urn:test:server", ""};
  const ua::Variant event_id(ua::ByteString(std::string(16, 'e')));
  const ua::Variant comment(ua::LocalizedText{ua::String("en"), ua::String("checked")});
  const std::vector<ua::Variant> inputs = {event_id, comment};
  const struct {
    uint32_t method, type;
  } cases[] = {{id::AcknowledgeableConditionType_Acknowledge, id::AuditConditionAcknowledgeEventType},
               {id::AcknowledgeableConditionType_Confirm, id::AuditConditionConfirmEventType},
               {id::ConditionType_AddComment, id::AuditConditionCommentEventType}};
  for (const auto& k : cases) {
    auto r = audit::method_call(c, *s, store.find(ua::NodeId(0, id::Server)), ua::NodeId(0, k.method), inputs,
                                ua::status::BadEventIdUnknown);
    REQUIRE(r);
    const auto* type = field_of(store, *r, k.type, "EventType");
    REQUIRE(type);
    CHECK(*type == ua::Variant(ua::NodeId(0, k.type)));
    const auto* id_field = field_of(store, *r, k.type, "ConditionEventId");
    REQUIRE(id_field);
    CHECK(*id_field == event_id);
    const auto* comment_field = field_of(store, *r, k.type, "Comment");
    REQUIRE(comment_field);
    CHECK(*comment_field == comment);
    CHECK(*field_of(store, *r, k.type, "Status") == ua::Variant(false));
  }
  auto enable = audit::method_call(c, *s, store.find(ua::NodeId(0, id::Server)),
                                   ua::NodeId(0, id::ConditionType_Disable), {}, ua::status::Good);
  REQUIRE(enable);
  CHECK(*field_of(store, *enable, id::AuditConditionEnableEventType, "EventType") ==
        ua::Variant(ua::NodeId(0, id::AuditConditionEnableEventType)));
}

TEST_CASE("audit: a refused certificate gets the AuditCertificate type of its status, with the certificate",
          "[services][audit]") {
  AuditedSession a;
  const addressspace::NodeStore& store = *a.h.space.current();
  const audit::Context c{store, "urn:test:server", {}};
  const std::string der = "certificate bytes";
  const std::span<const uint8_t> cert(reinterpret_cast<const uint8_t*>(der.data()), der.size());
  const std::pair<ua::StatusCode, uint32_t> cases[] = {
      {ua::status::BadCertificateUntrusted, id::AuditCertificateUntrustedEventType},
      {ua::status::BadCertificateTimeInvalid, id::AuditCertificateExpiredEventType},
      {ua::status::BadCertificateIssuerTimeInvalid, id::AuditCertificateExpiredEventType},
      {ua::status::BadCertificateRevoked, id::AuditCertificateRevokedEventType},
      {ua::status::BadCertificateRevocationUnknown, id::AuditCertificateRevokedEventType},
      {ua::status::BadCertificateUseNotAllowed, id::AuditCertificateMismatchEventType},
      {ua::status::BadCertificateUriInvalid, id::AuditCertificateDataMismatchEventType},
      {ua::status::BadCertificateHostNameInvalid, id::AuditCertificateDataMismatchEventType},
      {ua::status::BadCertificateInvalid, id::AuditCertificateInvalidEventType},
      {ua::status::BadSecurityPolicyRejected, id::AuditCertificateInvalidEventType},
  };
  for (const auto& [status, type] : cases) {
    INFO(status.name());
    auto r = audit::certificate_rejected(c, cert, status, "SecureChannel/OpenSecureChannel");
    REQUIRE(r);
    CHECK(r->readers() == config::role::kAdministrators);
    CHECK(*r->field(addressspace::event_field::kEventType) == ua::Variant(ua::NodeId(0, type)));
    CHECK(*r->field(addressspace::event_field::kStatus) == ua::Variant(false));
    CHECK(*r->field(addressspace::event_field::kSourceName) ==
          ua::Variant(ua::String("SecureChannel/OpenSecureChannel")));
    const ua::Variant* certificate = field_of(store, *r, id::AuditCertificateEventType, "Certificate");
    REQUIRE(certificate);
    CHECK(*certificate == ua::Variant(ua::ByteString(der)));
    const ua::Variant* code = field_of(store, *r, id::AuditSecurityEventType, "StatusCodeId");
    REQUIRE(code);
    CHECK(*code == ua::Variant(status));
  }
  // A certificate over the bound: left out, and said so.
  const std::vector<uint8_t> big(audit::kMaxCertificateBytes + 1, 0x30);
  auto r =
      audit::certificate_rejected(c, big, ua::status::BadCertificateUntrusted, "Session/ActivateSession");
  REQUIRE(r);
  const ua::Variant* certificate = field_of(store, *r, id::AuditCertificateEventType, "Certificate");
  REQUIRE(certificate);
  CHECK(certificate->is_empty());
  CHECK(message_of(*r).find("not recorded") != std::string::npos);
}

TEST_CASE("audit: a certificate the channel refused reaches an administrator's event item",
          "[services][audit]") {
  AuditedSession a;
  ServiceHarness& h = a.h;
  const uint32_t sub = subscribe(h).subscription_id;
  std::vector<ua::SimpleAttributeOperand> select = {clause(id::BaseEventType, "EventType"),
                                                    clause(id::BaseEventType, "SourceName"),
                                                    clause(id::AuditCertificateEventType, "Certificate")};
  ItemSpec spec{
      ua::NodeId(0, id::Server), 9, 0, 100, true, ua::ExtensionObject::make(ua::EventFilter{select, {}})};
  spec.attribute = 12;
  REQUIRE(monitor(h, sub, spec).status_code.is_good());
  const std::string der = "untrusted leaf";
  h.server->audit_certificate(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(der.data()), der.size()),
      ua::status::BadCertificateUntrusted, "SecureChannel/OpenSecureChannel");
  const auto events = events_within(h, std::chrono::milliseconds(400));
  REQUIRE(events.size() == 1);
  CHECK(events[0].event_fields.at(0) == ua::Variant(ua::NodeId(0, id::AuditCertificateUntrustedEventType)));
  CHECK(events[0].event_fields.at(1) == ua::Variant(ua::String("SecureChannel/OpenSecureChannel")));
  CHECK(events[0].event_fields.at(2) == ua::Variant(ua::ByteString(der)));
}

}  // namespace opcuad::services::audit_test
