#pragma once
// Dispatcher: the dispatch table, keyed by the request's binary encoding id, that gives each service its
// handler and whether it needs an activated session, and serve(), the checks every request shares, done
// once before a handler runs: the RequestHeader decoded (once per request, request.hpp), the session
// found by its authentication token in the shard's own table, its activation and its channel binding
// checked (Part 4 §5.6.3), then the handler called and the request counted.
//
// Threads: the channel's shard thread, on that shard's ShardState only. The request path is
// allocation-free and takes no lock: the table is constant, the header is decoded into the shard's
// reused one, the counters are the shard's own (service_stats.hpp) and the session's.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "addressspace/address_space.hpp"
#include "services/handlers.hpp"
#include "services/request.hpp"
#include "services/shard.hpp"
#include "transport/secure_channel.hpp"
#include "transport/service_handler.hpp"

namespace opcuad::services {

class Server;

// How a service relates to sessions (Part 4 §5.6: every service but discovery and session creation needs
// an activated session on the same secure channel).
enum class Needs : uint8_t { Nothing, Session, ActivatedSession };

// A dispatch table row.
struct ServiceEntry {
  uint32_t type_id;
  Needs needs;
  void (*handler)(Server&, Call&, ua::Decoder&);
  std::string_view name;  // the service's name in metrics (Part 4 §5)
};

class Dispatcher {
 public:
  Dispatcher(Server& server, const addressspace::AddressSpace& space) noexcept
      : server_(server), space_(space) {}

  // The row for a request's binary encoding id, or nullptr: the services not listed (NodeManagement,
  // Query, History, ...) get ServiceFault(BadServiceUnsupported) from the transport.
  static const ServiceEntry* find(uint32_t type_id) noexcept;
  // The dispatch table's services, in the order of ServiceStats::requests.
  static size_t service_count() noexcept;
  static std::string_view service_name(size_t i) noexcept;

  // One request of `entry`'s service on `shard` (the channel's): the shard adapts to a new store first
  // (see_store), then serve(); counted per service on the shard's own block. A fault sent while the
  // handler ran shows as a step of the channel's fault counter; the handler's time is one clock read more
  // (the session check's read is the start). No allocation, no locked instruction.
  void dispatch(const ServiceEntry& entry, ShardState& shard, transport::SecureChannel& channel,
                const transport::RequestContext& ctx, ua::Decoder& body);

 private:
  // The shared checks, then the handler. `now` is the request's arrival (the session's last activity).
  // Returns the request's session when it is still alive after the handler (nullptr: none, or
  // CloseSession freed it).
  Session* serve(const ServiceEntry& entry, transport::SecureChannel& channel,
                 const transport::RequestContext& ctx, ShardState& shard, ua::Decoder& body,
                 std::chrono::steady_clock::time_point now);

  Server& server_;
  const addressspace::AddressSpace& space_;
};

}  // namespace opcuad::services
