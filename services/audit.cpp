#include "services/audit.hpp"

#include <openssl/evp.h>

#include <string>
#include <vector>

#include "config/roles.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::services::audit {

namespace field = addressspace::event_field;

namespace {

// An audit event of `type` from `source`, with the AuditEventType fields filled in.
EventBuilder begin(const Context& c, uint32_t type, addressspace::NodeIndex source, std::string_view user,
                   std::string_view source_name, bool ok) {
  EventBuilder b(c.store, ua::NodeId(0, type), source);
  if (!b.valid()) return b;
  b.readers(config::role::kAdministrators);
  b.set(field::kActionTimeStamp, ua::Variant(ua::DateTime::now()));
  b.set(field::kStatus, ua::Variant(ok));
  b.set(field::kServerId, ua::Variant(ua::String(c.server_id)));
  b.set(field::kClientAuditEntryId, ua::Variant(ua::String(c.audit_entry_id)));
  b.set(field::kClientUserId, ua::Variant(ua::String(user)));
  b.set(field::kSourceName, ua::Variant(ua::String(source_name)));
  // Part 4 §6.5.3: failed actions are the ones an auditor looks for first.
  b.severity(ok ? 100 : 500);
  return b;
}

addressspace::NodeIndex server_object(const addressspace::NodeStore& store) {
  return store.find(ua::NodeId(0, ua::id::Server));
}

std::string_view user_of(const Session& s) {
  return s.activated ? std::string_view(s.user) : std::string_view();
}

// The SHA-1 thumbprint of a DER certificate in upper-case hex (Part 4 §7.10 ApplicationInstanceCertificate
// thumbprints), "" for none.
std::string thumbprint(const ua::ByteString& der) {
  if (der.is_null() || der.view().empty()) return {};
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  const std::string_view v = der.view();
  if (EVP_Digest(v.data(), v.size(), digest, &n, EVP_sha1(), nullptr) != 1) return {};
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(n * 2);
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0x0F]);
  }
  return out;
}

}  // namespace

ua::ExtensionObject without_secret(const ua::ExtensionObject& token) {
  if (const auto* t = token.get<ua::UserNameIdentityToken>()) {
    ua::UserNameIdentityToken copy;
    copy.policy_id = t->policy_id;
    copy.user_name = t->user_name;
    return ua::ExtensionObject::make(std::move(copy));
  }
  if (const auto* t = token.get<ua::IssuedIdentityToken>()) {
    ua::IssuedIdentityToken copy;
    copy.policy_id = t->policy_id;
    return ua::ExtensionObject::make(std::move(copy));
  }
  if (token.get<ua::AnonymousIdentityToken>() || token.get<ua::X509IdentityToken>()) return token;
  return {};  // an unknown or undecoded token: nothing of it is shown
}

std::shared_ptr<const EventRecord> create_session(const Context& c, const Session* session,
                                                  uint32_t channel_id,
                                                  const ua::ByteString& client_certificate,
                                                  double revised_timeout_ms, ua::StatusCode status) {
  EventBuilder b = begin(c, ua::id::AuditCreateSessionEventType, server_object(c.store), {},
                         "Session/CreateSession", status.is_good());
  if (!b.valid()) return nullptr;
  if (session) b.set("SessionId", ua::Variant(session->session_id));
  b.set("SecureChannelId", ua::Variant(ua::String(std::to_string(channel_id))));
  b.set("ClientCertificate", ua::Variant(client_certificate));
  b.set("ClientCertificateThumbprint", ua::Variant(ua::String(thumbprint(client_certificate))));
  b.set("RevisedSessionTimeout", ua::Variant(revised_timeout_ms));
  b.set("StatusCodeId", ua::Variant(status));
  b.message(status.is_good() ? "Session created" : "CreateSession refused");
  return b.build();
}

std::shared_ptr<const EventRecord> activate_session(const Context& c, const Session& session,
                                                    std::string_view user, const ua::ExtensionObject& token,
                                                    uint32_t channel_id, ua::StatusCode status) {
  EventBuilder b = begin(c, ua::id::AuditActivateSessionEventType, server_object(c.store), user,
                         "Session/ActivateSession", status.is_good());
  if (!b.valid()) return nullptr;
  b.set("SessionId", ua::Variant(session.session_id));
  b.set("SecureChannelId", ua::Variant(ua::String(std::to_string(channel_id))));
  b.set("UserIdentityToken", ua::Variant(without_secret(token)));
  b.set("ClientSoftwareCertificates", ua::Variant(std::vector<ua::ExtensionObject>{}));
  b.set("StatusCodeId", ua::Variant(status));
  b.message(status.is_good() ? "Session activated" : "ActivateSession refused");
  return b.build();
}

std::shared_ptr<const EventRecord> close_session(const Context& c, const Session& session, bool timed_out) {
  EventBuilder b = begin(c, ua::id::AuditSessionEventType, server_object(c.store), user_of(session),
                         timed_out ? "Session/Timeout" : "Session/CloseSession", true);
  if (!b.valid()) return nullptr;
  b.set("SessionId", ua::Variant(session.session_id));
  b.message(timed_out ? "Session timed out" : "Session closed");
  return b.build();
}

std::shared_ptr<const EventRecord> write(const Context& c, const Session& session,
                                         addressspace::NodeIndex node, uint32_t attribute_id,
                                         std::string_view index_range, const ua::Variant& old_value,
                                         const ua::Variant& new_value, ua::StatusCode status) {
  // A write to a node that does not exist is audited too, from the Server object.
  EventBuilder b = begin(c, ua::id::AuditWriteUpdateEventType,
                         node == addressspace::kNoNode ? server_object(c.store) : node, user_of(session),
                         "Attribute/Write", status.is_good());
  if (!b.valid()) return nullptr;
  b.set("AttributeId", ua::Variant(attribute_id));
  b.set("IndexRange", ua::Variant(ua::String(index_range)));
  b.set("OldValue", old_value);
  b.set("NewValue", new_value);
  b.set("StatusCodeId", ua::Variant(status));
  b.message(status.is_good() ? "Value written" : "Write refused");
  return b.build();
}

std::shared_ptr<const EventRecord> method_call(const Context& c, const Session& session,
                                               addressspace::NodeIndex object, const ua::NodeId& method,
                                               std::span<const ua::Variant> inputs, ua::StatusCode status) {
  EventBuilder b = begin(c, ua::id::AuditUpdateMethodEventType,
                         object == addressspace::kNoNode ? server_object(c.store) : object, user_of(session),
                         "Method/Call", status.is_good());
  if (!b.valid()) return nullptr;
  b.set("MethodId", ua::Variant(method));
  b.set("InputArguments", ua::Variant(std::vector<ua::Variant>(inputs.begin(), inputs.end())));
  b.set("StatusCodeId", ua::Variant(status));
  b.message(status.is_good() ? "Method called" : "Method call refused");
  return b.build();
}

}  // namespace opcuad::services::audit
