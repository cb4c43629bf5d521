#pragma once
// Operator events about sessions beyond those of server.hpp (session_events.cpp).

#include <string_view>

#include "services/server.hpp"

namespace opcuad::services {

// CreateSession refused by a session limit (at warn, rate-limited by address): `limit` names it.
void report_session_refused(const Server& server, std::string_view peer, std::string_view limit);

}  // namespace opcuad::services
