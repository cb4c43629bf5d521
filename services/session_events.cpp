// Operator events about sessions (transport/events.hpp): one line each, never per request.
#include "services/session_events.hpp"

namespace opcuad::services {

void report_session(const transport::EventSink& sink, std::string_view kind, const Session& s) {
  if (!sink) return;
  std::string f;
  transport::append_field(f, "session", s.session_id.to_string());
  transport::append_field(f, "name", s.name);
  transport::append_field(f, "user",
                          s.activated ? (s.user.empty() ? std::string_view("anonymous") : s.user) : "");
  transport::append_field(f, "application", s.client_application_name);
  transport::append_field(f, "application_uri", s.client_application_uri);
  transport::append_field(f, "peer", s.client_address);
  sink(transport::Event{transport::EventLevel::Info, kind, s.client_address, f});
}

void report_session_refused(const transport::EventSink& sink, std::string_view peer, std::string_view limit) {
  if (!sink) return;
  std::string f;
  transport::append_field(f, "peer", peer);
  transport::append_field(f, "limit", limit);
  transport::append_status(f, "status", ua::status::BadTooManySessions);
  sink(transport::Event{transport::EventLevel::Warn, "session.refused", peer, f});
}

void report_login_failed(const transport::EventSink& sink, std::string_view peer, std::string_view user,
                         ua::StatusCode status, std::string_view reason) {
  if (!sink) return;
  std::string f;
  transport::append_field(f, "user", user.empty() ? std::string_view("anonymous") : user);
  transport::append_field(f, "peer", peer);
  transport::append_status(f, "status", status);
  if (!reason.empty()) transport::append_field(f, "reason", reason);
  sink(transport::Event{transport::EventLevel::Warn, "login.failed", peer, f});
}

}  // namespace opcuad::services
