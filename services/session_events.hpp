#pragma once
// Operator events about sessions (transport/events.hpp; session_events.cpp): one line each, never per
// request, into the sink the daemon set (Server::set_events). An empty sink reports nothing.

#include <string_view>

#include "services/session.hpp"
#include "transport/events.hpp"
#include "ua/status_code.hpp"

namespace opcuad::services {

// `kind` is session.created, session.activated, session.closed or session.expired; the session's id,
// name, user, client application and address go in the fields (quoted and bounded: the client chose them).
void report_session(const transport::EventSink& sink, std::string_view kind, const Session& session);
// A refused identity at ActivateSession (at warn, rate-limited by address): the user name it claimed
// ("" for anonymous; "certificate <thumbprint>" for an X509 token), never the password, and for a refused
// user certificate the validator's reason.
void report_login_failed(const transport::EventSink& sink, std::string_view peer, std::string_view user,
                         ua::StatusCode status, std::string_view reason = {});
// CreateSession refused by a session limit (at warn, rate-limited by address): `limit` names it.
void report_session_refused(const transport::EventSink& sink, std::string_view peer, std::string_view limit);

}  // namespace opcuad::services
