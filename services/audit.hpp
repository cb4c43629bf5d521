#pragma once
// Audit events (Part 4 §6.5; the types of Part 5 §6.4.3-§6.4.27), raised when `audit.enabled` is set:
// what a security officer reconstructs a session's actions from. Each builder returns the record for
// Server::raise_event; the caller raises it only when auditing is on, so a server without auditing pays a
// test per audited request and nothing else.
//
// Every audit event comes from the Server object's notifier list (its SourceNode is the Server object, or
// the written node for a write) and reaches only sessions with an administrative role
// (config::role::kAdministrators: SecurityAdmin, ConfigureAdmin; EventRecord::readers): audit records name
// users, certificates and values. Secrets never go in: an ActivateSession event carries the identity
// token with its password or token data removed.
//
// The AuditEventType fields (Part 5 §6.4.3): ActionTimeStamp (now), Status (did the action succeed),
// ServerId (the server's ApplicationUri), ClientAuditEntryId (the request header's auditEntryId) and
// ClientUserId (the session's user, "" for anonymous). SourceName follows Part 4 §6.5.4:
// "Session/CreateSession", "Session/ActivateSession", "Session/CloseSession", "Session/Timeout",
// "Attribute/Write", "Method/Call".
//
// Memory: a record waits in each shard's EventInbox (EventInbox::kCapacity records) before the per-event
// bound of the encoder (EventItemState::kMaxEventBytes) applies, so what a record copies from a request is
// bounded here, where it is built. Each value a client chooses (NewValue, OldValue, each input argument,
// ClientAuditEntryId, IndexRange, MethodId, the identity token) is kept only when it takes at most
// kMaxValueBytes, a ClientCertificate at most kMaxCertificateBytes; a larger one is replaced by a null
// Variant and the record's Message says so. The input arguments kept take at most kMaxArgumentBytes
// together, and none is kept when there are more than kMaxArguments. A record thus holds at most
// 16 KiB of client-chosen data (docs/SECURITY.md, "Bounds on subscriptions";
// docs/CONFIGURATION.md, "Audit events").
//
// Cost: a record per audited action (about five allocations); the request path without auditing is
// unchanged.

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "addressspace/node_store.hpp"
#include "services/event_record.hpp"
#include "services/session.hpp"
#include "ua/extension_object.hpp"
#include "ua/status_code.hpp"
#include "ua/variant.hpp"

namespace opcuad::services::audit {

// The largest value an audit record keeps, measured by approximate_size(): 4 KiB holds any scalar, a
// few hundred numbers or a short text, what an auditor reads; a larger value is left out (null).
inline constexpr size_t kMaxValueBytes = 4096;
// The largest ClientCertificate an AuditCreateSessionEventType record keeps: a leaf certificate with an
// issuer or two. ClientCertificateThumbprint is recorded whatever the size.
inline constexpr size_t kMaxCertificateBytes = 8192;
// The input arguments of a method call, together: each at most kMaxValueBytes, and once their total
// would pass this the later ones are left out (null), as are all of them when there are more than
// kMaxArguments (methods take a handful).
inline constexpr size_t kMaxArgumentBytes = 2 * kMaxValueBytes;
inline constexpr size_t kMaxArguments = 64;

// The memory `v` takes (its C++ objects and the bytes they hold; a structure decoded from the wire at
// its encoded size, the form an audit record keeps it in), or a number above `limit` as soon as it is
// known to be larger. Bounded work: every element visited has been counted first, so at most `limit`
// elements are looked at; a decoded structure is encoded once to be measured.
size_t approximate_size(const ua::Variant& v, size_t limit);

// `v` as an audit record keeps it: a copy when approximate_size(v, limit) <= limit (a decoded structure
// in it kept as its encoded body, which is what approximate_size() counted), else a null Variant.
// `left_out` is set when the value was dropped.
ua::Variant bounded(const ua::Variant& v, size_t limit, bool& left_out);

// What every audit event of one request carries.
struct Context {
  const addressspace::NodeStore& store;
  std::string_view server_id;       // ApplicationUri
  std::string_view audit_entry_id;  // RequestHeader.auditEntryId
};

// AuditCreateSessionEventType (Part 5 §6.4.8). `session` null when CreateSession failed before one existed.
std::shared_ptr<const EventRecord> create_session(const Context& c, const Session* session,
                                                  uint32_t channel_id,
                                                  const ua::ByteString& client_certificate,
                                                  double revised_timeout_ms, ua::StatusCode status);
// AuditActivateSessionEventType (Part 5 §6.4.10): `token` as the client sent it; its secret is removed.
std::shared_ptr<const EventRecord> activate_session(const Context& c, const Session& session,
                                                    std::string_view user, const ua::ExtensionObject& token,
                                                    uint32_t channel_id, ua::StatusCode status);
// AuditSessionEventType (Part 5 §6.4.7) for CloseSession, or for a session ended by its timeout
// (`timed_out`).
std::shared_ptr<const EventRecord> close_session(const Context& c, const Session& session, bool timed_out);
// AuditWriteUpdateEventType (Part 5 §6.4.25) of one WriteValue: SourceNode the written node.
std::shared_ptr<const EventRecord> write(const Context& c, const Session& session,
                                         addressspace::NodeIndex node, uint32_t attribute_id,
                                         std::string_view index_range, const ua::Variant& old_value,
                                         const ua::Variant& new_value, ua::StatusCode status);
// AuditUpdateMethodEventType (Part 5 §6.4.27) of one CallMethodRequest; for Part 9's condition methods its
// subtypes (Part 9 §5.10): AuditConditionEnableEventType (Enable, Disable), AuditConditionCommentEventType,
// AuditConditionAcknowledgeEventType and AuditConditionConfirmEventType with ConditionEventId and Comment.
std::shared_ptr<const EventRecord> method_call(const Context& c, const Session& session,
                                               addressspace::NodeIndex object, const ua::NodeId& method,
                                               std::span<const ua::Variant> inputs, ua::StatusCode status);

// A certificate the server refused (Part 4 §6.5.5, Part 5 §6.4.17-§6.4.23): an application instance
// certificate at OpenSecureChannel (`action` "SecureChannel/OpenSecureChannel") or a user's at
// ActivateSession ("Session/ActivateSession"). The type follows the validator's status: Expired (a time
// outside the validity period), Revoked (revoked or revocation unknown), Mismatch (a use the certificate
// does not allow), DataMismatch (its host name or ApplicationUri does not match), Untrusted (no trusted
// issuer, or not trusted itself), Invalid (any other status). Certificate is the DER of the leaf (null
// when over kMaxCertificateBytes), StatusCodeId the status. No session exists yet: ClientUserId is "".
std::shared_ptr<const EventRecord> certificate_rejected(const Context& c,
                                                        std::span<const uint8_t> certificate,
                                                        ua::StatusCode status, std::string_view action);

// The identity token with its secret removed (a UserName token's password, an Issued token's data): what an
// audit record may show.
ua::ExtensionObject without_secret(const ua::ExtensionObject& token);

}  // namespace opcuad::services::audit
