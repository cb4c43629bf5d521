#pragma once
// The Server's diagnostics arrays (Part 5 §8.2.10, §6.3.3 ServerDiagnosticsType):
// SessionsDiagnosticsSummary.SessionDiagnosticsArray (SessionDiagnosticsDataType, §12.11),
// SessionsDiagnosticsSummary.SessionSecurityDiagnosticsArray (SessionSecurityDiagnosticsDataType, §12.12)
// and SubscriptionDiagnosticsArray (SubscriptionDiagnosticsDataType, §12.15).
//
// Off the request path: the daemon's control loop asks for a snapshot (Server::collect_diagnostics) once
// a second while ServerDiagnostics.EnabledFlag is TRUE; each shard copies its sessions' and
// subscriptions' counters (session_diagnostics.hpp) on its own thread and posts its part back; the
// control loop writes the three cells once every part is in (addressspace/server_object.hpp). The cells
// hold every entry. Who reads them sees a part (Part 5 §8.2.10: "not all users may see all entries"):
// the variables carry addressspace::flag::kSessionScoped, and Read and monitored items pass their value
// through scope_to_reader() for the reading session; any other node costs them one test of a flag byte
// already loaded. SessionSecurityDiagnosticsArray is readable by administrators only (its read roles,
// config/address_space_loader.cpp: others get BadUserAccessDenied).

#include <functional>
#include <vector>

#include "addressspace/address_space.hpp"
#include "config/roles.hpp"
#include "services/access_control.hpp"
#include "services/session.hpp"
#include "ua/generated/types.hpp"
#include "ua/variant.hpp"

namespace asio {
class io_context;
}

namespace opcuad::services {

struct ShardState;
class Server;

// Keeps in `value` (an array of SessionDiagnosticsDataType or SubscriptionDiagnosticsDataType
// ExtensionObjects) the entries of `reader`'s own session; an administrator keeps all, no reader (a
// monitored item of a detached subscription) none. Anything else is left as it is.
void scope_to_reader(const Session* reader, ua::Variant& value);

struct DiagnosticsArrays {
  std::vector<ua::ExtensionObject> sessions;       // SessionDiagnosticsDataType
  std::vector<ua::ExtensionObject> security;       // SessionSecurityDiagnosticsDataType
  std::vector<ua::ExtensionObject> subscriptions;  // SubscriptionDiagnosticsDataType
};

// The entries of one session and one subscription. `wall` and `steady` are one instant on both clocks
// (ClientLastContactTime is derived from the session's steady last activity).
ua::SessionDiagnosticsDataType session_diagnostics(const Session& s, ua::DateTime wall,
                                                   std::chrono::steady_clock::time_point steady);
ua::SessionSecurityDiagnosticsDataType session_security_diagnostics(const Session& s);
ua::SubscriptionDiagnosticsDataType subscription_diagnostics(const Session& owner, const Subscription& sub);
// On the shard's thread: appends the entries of its sessions (not parked ones: closed, Part 4 §5.6.4) and
// of every subscription it holds (a parked session's too, under that session's id).
void collect_diagnostics(const ShardState& shard, DiagnosticsArrays& out);

// The refresh the daemon's control loop runs once a second (Daemon::tick_server_status). While
// ServerDiagnostics.EnabledFlag reads TRUE (Part 5 §6.3.3: it switches the collection; it starts as
// config diagnostics.enabled, and an administrator may write it), each tick() asks the shards for their
// entries (Server::collect_diagnostics) and writes the three cells when all are in; while it reads FALSE,
// nothing is asked and the arrays are emptied once. One collection is out at a time: a shard that has
// not answered the last one is not asked again.
// Threads: the control loop only (tick(), stop(), and the completions it posts to `control`).
class DiagnosticsRefresher {
 public:
  DiagnosticsRefresher(Server& server, addressspace::AddressSpace& space, asio::io_context& control)
      : server_(server), space_(space), control_(control) {}
  // `p`: the control thread's participant, online until stop().
  void tick(addressspace::EpochReclaimer::Participant& p);
  // No more writes: a collection still out is dropped when it comes back.
  void stop() noexcept { stopped_ = true; }
  uint64_t refreshes() const noexcept { return refreshes_; }  // arrays written with entries (tests)
  bool collecting() const noexcept { return collecting_; }

 private:
  Server& server_;
  addressspace::AddressSpace& space_;
  asio::io_context& control_;
  addressspace::EpochReclaimer::Participant* participant_ = nullptr;
  bool collecting_ = false;
  bool filled_ = false;  // the arrays hold entries
  bool stopped_ = false;
  uint64_t refreshes_ = 0;
};

}  // namespace opcuad::services
