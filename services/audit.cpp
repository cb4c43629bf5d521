#include "services/audit.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "config/roles.hpp"
#include "ua/buffer.hpp"
#include "ua/encoder.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/structure_type.hpp"

namespace opcuad::services::audit {

namespace field = addressspace::event_field;

namespace {

// A client's text or bytes as a record keeps it: within `limit` (counted as approximate_size() counts a
// String or ByteString Variant, without copying it first), else null and noted in `left_out`.
template <class T>
ua::Variant bounded_bytes(std::string_view s, size_t limit, bool& left_out) {
  if (s.size() > limit || sizeof(ua::Variant) + s.size() > limit) {
    left_out = true;
    return {};
  }
  return ua::Variant(T(s));
}

// An audit event of `type` from `source`, with the AuditEventType fields filled in; `left_out` notes a
// ClientAuditEntryId too large to keep.
EventBuilder begin(const Context& c, uint32_t type, addressspace::NodeIndex source, std::string_view user,
                   std::string_view source_name, bool ok, bool& left_out) {
  EventBuilder b(c.store, ua::NodeId(0, type), source);
  if (!b.valid()) return b;
  b.readers(config::role::kAdministrators);
  b.set(field::kActionTimeStamp, ua::Variant(ua::DateTime::now()));
  b.set(field::kStatus, ua::Variant(ok));
  b.set(field::kServerId, ua::Variant(ua::String(c.server_id)));
  b.set(field::kClientAuditEntryId, bounded_bytes<ua::String>(c.audit_entry_id, kMaxValueBytes, left_out));
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

// Adds up the memory of a value against a limit (approximate_size()). Every count is taken before the
// elements it covers are looked at, so once past the limit nothing more is visited.
class Meter {
 public:
  explicit Meter(size_t limit) noexcept : limit_(limit) {}

  size_t total() const noexcept { return used_; }
  bool over() const noexcept { return used_ > limit_; }

  bool variant(const ua::Variant& v) { return take(sizeof(ua::Variant)) && contents(v); }

 private:
  // False once the total passes the limit.
  bool take(size_t n) noexcept {
    used_ = n > limit_ - std::min(used_, limit_) ? limit_ + 1 : used_ + n;
    return !over();
  }

  template <class T>
  bool contents(const std::vector<T>& a) {
    // The elements' own size first (a vector<bool> counts a byte an element, its encoded size), then
    // what each holds beyond it.
    if (a.size() > limit_) return take(limit_ + 1);  // more elements than bytes allowed: over at once
    if (!take(a.size() * (std::is_same_v<T, bool> ? 1 : sizeof(T)))) return false;
    if constexpr (!std::is_trivially_copyable_v<T>) {
      for (const auto& x : a) {
        if (!contents(x)) return false;
      }
    }
    return true;
  }
  // A scalar's own size is counted by whatever holds it (the Variant, the vector); these count the rest.
  template <class T>
  requires(std::is_trivially_copyable_v<T>) bool contents(const T&) { return true; }
  bool contents(std::monostate) { return true; }
  bool contents(ua::NotAllowed) { return true; }
  template <class Tag>
  bool contents(const ua::NullableBytes<Tag>& b) {
    return take(b.size());
  }
  bool contents(const ua::NodeId& n) { return take(n.string().size()); }
  bool contents(const ua::ExpandedNodeId& n) { return contents(n.node_id) && contents(n.namespace_uri); }
  bool contents(const ua::QualifiedName& q) { return contents(q.name); }
  bool contents(const ua::LocalizedText& t) { return contents(t.locale) && contents(t.text); }
  bool contents(const ua::ExtensionObject& e) {
    if (!contents(e.type_id())) return false;
    const ua::StructureType* type = e.structure_type();
    if (!type) return contents(e.body());
    // A decoded structure is kept as its encoded body (bounded()): count that, encoding it once. One
    // whose C++ size alone passes what is left is refused before (no generated structure comes near).
    if (type->size > limit_ - std::min(used_, limit_)) return take(type->size);
    ua::ByteBuffer body;
    ua::Encoder enc(body);
    type->encode(enc, e.decoded_data());
    return take(body.size());
  }
  bool contents(const ua::Box<ua::DataValue>& d) { return take(sizeof(ua::DataValue)) && contents(*d); }
  bool contents(const ua::DataValue& d) { return contents(d.value); }
  // What a Variant holds beyond its own size (counted by its holder).
  bool contents(const ua::Variant& v) {
    if (!take(v.dimensions().size() * sizeof(int32_t))) return false;
    return std::visit([this](const auto& x) { return contents(x); }, v.storage());
  }
  bool contents(const ua::Box<ua::DiagnosticInfo>& d) {
    return take(sizeof(ua::DiagnosticInfo)) && contents(*d);
  }
  bool contents(const ua::DiagnosticInfo& d) {
    if (!contents(d.additional_info)) return false;
    return !d.inner_diagnostic_info || contents(*d.inner_diagnostic_info);
  }

  size_t limit_;
  size_t used_ = 0;
};

// A decoded structure as its encoded body (what Meter counted); anything else as it is.
ua::ExtensionObject encoded(const ua::ExtensionObject& e) {
  const ua::StructureType* type = e.structure_type();
  if (!type) return e;
  ua::ByteBuffer body;
  ua::Encoder enc(body);
  type->encode(enc, e.decoded_data());
  return ua::ExtensionObject::undecoded(ua::NodeId(0, type->binary_encoding_id),
                                        ua::ExtensionObject::Encoding::ByteString,
                                        ua::ByteString::from_bytes(body.span()));
}

ua::Variant with_structures_encoded(const ua::Variant& v);

ua::DataValue with_structures_encoded(const ua::DataValue& d) {
  ua::DataValue out = d;
  out.value = with_structures_encoded(d.value);
  return out;
}

ua::Variant with_structures_encoded(const ua::Variant& v) {
  ua::Variant out = std::visit(
      [&v](const auto& x) -> ua::Variant {
        using T = std::remove_cvref_t<decltype(x)>;
        if constexpr (std::is_same_v<T, ua::ExtensionObject>) {
          return encoded(x);
        } else if constexpr (std::is_same_v<T, ua::Box<ua::DataValue>>) {
          return with_structures_encoded(*x);
        } else if constexpr (std::is_same_v<T, std::vector<ua::ExtensionObject>> ||
                             std::is_same_v<T, std::vector<ua::DataValue>> ||
                             std::is_same_v<T, std::vector<ua::Variant>>) {
          T a;
          a.reserve(x.size());
          for (const auto& e : x) {
            if constexpr (std::is_same_v<T, std::vector<ua::ExtensionObject>>) {
              a.push_back(encoded(e));
            } else {
              a.push_back(with_structures_encoded(e));
            }
          }
          return ua::Variant(std::move(a));
        } else {
          return v;
        }
      },
      v.storage());
  out.set_dimensions(v.dimensions());
  return out;
}

// The record's Message: `text`, and a note when a value was left out for its size.
std::string message_with_note(std::string_view text, bool left_out) {
  std::string m(text);
  // The sizes are those of services/audit.hpp and docs/SECURITY.md.
  if (left_out) m += " (a value over the audit record's size bound is not recorded: null)";
  return m;
}

}  // namespace

size_t approximate_size(const ua::Variant& v, size_t limit) {
  Meter m(limit);
  m.variant(v);
  return m.total();
}

ua::Variant bounded(const ua::Variant& v, size_t limit, bool& left_out) {
  if (approximate_size(v, limit) > limit) {
    left_out = true;
    return {};
  }
  return with_structures_encoded(v);
}

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
  bool left_out = false;
  EventBuilder b = begin(c, ua::id::AuditCreateSessionEventType, server_object(c.store), {},
                         "Session/CreateSession", status.is_good(), left_out);
  if (!b.valid()) return nullptr;
  if (session) b.set("SessionId", ua::Variant(session->session_id));
  b.set("SecureChannelId", ua::Variant(ua::String(std::to_string(channel_id))));
  b.set("ClientCertificate",
        client_certificate.is_null()
            ? ua::Variant(client_certificate)
            : bounded_bytes<ua::ByteString>(client_certificate.view(), kMaxCertificateBytes, left_out));
  b.set("ClientCertificateThumbprint", ua::Variant(ua::String(thumbprint(client_certificate))));
  b.set("RevisedSessionTimeout", ua::Variant(revised_timeout_ms));
  b.set("StatusCodeId", ua::Variant(status));
  b.message(message_with_note(status.is_good() ? "Session created" : "CreateSession refused", left_out));
  return b.build();
}

std::shared_ptr<const EventRecord> certificate_rejected(const Context& c,
                                                        std::span<const uint8_t> certificate,
                                                        ua::StatusCode status, std::string_view action) {
  uint32_t type = ua::id::AuditCertificateInvalidEventType;
  switch (status.value() & 0xFFFF0000u) {
    case status::BadCertificateTimeInvalid.value():
    case status::BadCertificateIssuerTimeInvalid.value():
      type = ua::id::AuditCertificateExpiredEventType;
      break;
    case status::BadCertificateRevoked.value():
    case status::BadCertificateIssuerRevoked.value():
    case status::BadCertificateRevocationUnknown.value():
    case status::BadCertificateIssuerRevocationUnknown.value():
      type = ua::id::AuditCertificateRevokedEventType;
      break;
    case status::BadCertificateUseNotAllowed.value():
    case status::BadCertificateIssuerUseNotAllowed.value():
      type = ua::id::AuditCertificateMismatchEventType;
      break;
    case status::BadCertificateHostNameInvalid.value():
    case status::BadCertificateUriInvalid.value():
      type = ua::id::AuditCertificateDataMismatchEventType;
      break;
    case status::BadCertificateUntrusted.value():
    case status::BadSecurityChecksFailed.value():
      type = ua::id::AuditCertificateUntrustedEventType;
      break;
    default:
      break;
  }
  bool left_out = false;
  EventBuilder b = begin(c, type, server_object(c.store), {}, action, false, left_out);
  if (!b.valid()) return nullptr;
  const std::string_view der(reinterpret_cast<const char*>(certificate.data()), certificate.size());
  b.set("Certificate", bounded_bytes<ua::ByteString>(der, kMaxCertificateBytes, left_out));
  b.set("StatusCodeId", ua::Variant(status));
  b.message(message_with_note(std::string("Certificate refused: ") + std::string(status.name()), left_out));
  return b.build();
}

std::shared_ptr<const EventRecord> activate_session(const Context& c, const Session& session,
                                                    std::string_view user, const ua::ExtensionObject& token,
                                                    uint32_t channel_id, ua::StatusCode status) {
  bool left_out = false;
  EventBuilder b = begin(c, ua::id::AuditActivateSessionEventType, server_object(c.store), user,
                         "Session/ActivateSession", status.is_good(), left_out);
  if (!b.valid()) return nullptr;
  b.set("SessionId", ua::Variant(session.session_id));
  b.set("SecureChannelId", ua::Variant(ua::String(std::to_string(channel_id))));
  // Kept decoded (an identity token is a flat structure of a few strings: its memory is its encoded
  // size, which approximate_size() counts).
  ua::Variant shown(without_secret(token));
  if (approximate_size(shown, kMaxValueBytes) > kMaxValueBytes) {
    shown.clear();
    left_out = true;
  }
  b.set("UserIdentityToken", std::move(shown));
  b.set("ClientSoftwareCertificates", ua::Variant(std::vector<ua::ExtensionObject>{}));
  b.set("StatusCodeId", ua::Variant(status));
  b.message(message_with_note(status.is_good() ? "Session activated" : "ActivateSession refused", left_out));
  return b.build();
}

std::shared_ptr<const EventRecord> close_session(const Context& c, const Session& session, bool timed_out) {
  bool left_out = false;
  EventBuilder b = begin(c, ua::id::AuditSessionEventType, server_object(c.store), user_of(session),
                         timed_out ? "Session/Timeout" : "Session/CloseSession", true, left_out);
  if (!b.valid()) return nullptr;
  b.set("SessionId", ua::Variant(session.session_id));
  b.message(message_with_note(timed_out ? "Session timed out" : "Session closed", left_out));
  return b.build();
}

std::shared_ptr<const EventRecord> write(const Context& c, const Session& session,
                                         addressspace::NodeIndex node, uint32_t attribute_id,
                                         std::string_view index_range, const ua::Variant& old_value,
                                         const ua::Variant& new_value, ua::StatusCode status) {
  // A write to a node that does not exist is audited too, from the Server object.
  bool left_out = false;
  EventBuilder b = begin(c, ua::id::AuditWriteUpdateEventType,
                         node == addressspace::kNoNode ? server_object(c.store) : node, user_of(session),
                         "Attribute/Write", status.is_good(), left_out);
  if (!b.valid()) return nullptr;
  b.set("AttributeId", ua::Variant(attribute_id));
  b.set("IndexRange", bounded_bytes<ua::String>(index_range, kMaxValueBytes, left_out));
  b.set("OldValue", bounded(old_value, kMaxValueBytes, left_out));
  b.set("NewValue", bounded(new_value, kMaxValueBytes, left_out));
  b.set("StatusCodeId", ua::Variant(status));
  b.message(message_with_note(status.is_good() ? "Value written" : "Write refused", left_out));
  return b.build();
}

std::shared_ptr<const EventRecord> method_call(const Context& c, const Session& session,
                                               addressspace::NodeIndex object, const ua::NodeId& method,
                                               std::span<const ua::Variant> inputs, ua::StatusCode status) {
  bool left_out = false;
  // Part 9 §5.10: the condition methods have audit types of their own, subtypes of this one.
  uint32_t type = ua::id::AuditUpdateMethodEventType;
  if (method.namespace_index() == 0 && method.type() == ua::IdType::Numeric) {
    switch (method.numeric()) {
      case ua::id::ConditionType_Enable:
      case ua::id::ConditionType_Disable:
        type = ua::id::AuditConditionEnableEventType;
        break;
      case ua::id::ConditionType_AddComment:
        type = ua::id::AuditConditionCommentEventType;
        break;
      case ua::id::AcknowledgeableConditionType_Acknowledge:
        type = ua::id::AuditConditionAcknowledgeEventType;
        break;
      case ua::id::AcknowledgeableConditionType_Confirm:
        type = ua::id::AuditConditionConfirmEventType;
        break;
      default:
        break;
    }
  }
  EventBuilder b = begin(c, type, object == addressspace::kNoNode ? server_object(c.store) : object,
                         user_of(session), "Method/Call", status.is_good(), left_out);
  if (!b.valid()) return nullptr;
  b.set("MethodId", bounded(ua::Variant(method), kMaxValueBytes, left_out));
  if (inputs.size() > kMaxArguments) {
    left_out = true;
    b.set("InputArguments", ua::Variant());
  } else {
    std::vector<ua::Variant> kept;
    kept.reserve(inputs.size());
    size_t room = kMaxArgumentBytes;
    for (const auto& in : inputs) {
      kept.push_back(bounded(in, std::min(room, kMaxValueBytes), left_out));
      room -= std::min(room, approximate_size(kept.back(), room));
    }
    b.set("InputArguments", ua::Variant(std::move(kept)));
  }
  if (type != ua::id::AuditUpdateMethodEventType && type != ua::id::AuditConditionEnableEventType &&
      inputs.size() == 2) {
    // ConditionEventId and Comment (Part 9 §5.10.4-§5.10.6): the arguments of the call.
    b.set("ConditionEventId", bounded(inputs[0], kMaxValueBytes, left_out));
    b.set("Comment", bounded(inputs[1], kMaxValueBytes, left_out));
  }
  b.set("StatusCodeId", ua::Variant(status));
  b.message(message_with_note(status.is_good() ? "Method called" : "Method call refused", left_out));
  return b.build();
}

}  // namespace opcuad::services::audit
