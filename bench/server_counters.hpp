#pragma once
// The server's own counters, read over OPC UA before and after a measured window: opcuad publishes them
// when its configuration says "diagnostics": {"counters": true} (docs/CONFIGURATION.md: heap
// allocations and bytes, requests received, messages / chunks / gathered writes / bytes sent, all in
// namespace 1 and refreshed together every 100 ms). Other servers (the canned server, node-opcua) do not
// have them: the probe then reports them unavailable and the report prints n/a.
//
// The per-request figures divide two differences taken from the same two snapshots (allocations by the
// server's own request count), so they stay exact although a snapshot may be up to 100 ms old.

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "bench/ua_client.hpp"

namespace opcuad::bench {

// In the order of the server's ns=1;s=Diagnostics.* variables.
enum class ServerCounter : uint8_t {
  HeapAllocations,
  HeapBytesAllocated,
  RequestsReceived,
  MessagesSent,
  ChunksSent,
  WriteCalls,
  BytesSent,
  SampledItems,      // item samples taken by the server's sampling timers
  SampledLate250us,  // of those, taken more than 250 µs after their deadline
  SampledLate1ms,
  SampledLate5ms,
};
inline constexpr size_t kServerCounterCount = 11;
using ServerCounterValues = std::array<uint64_t, kServerCounterCount>;

// Differences over a measured window (summed over rounds); `available` only when every round had both
// snapshots.
struct ServerCounterDelta {
  bool available = false;
  ServerCounterValues delta{};

  uint64_t operator[](ServerCounter c) const { return delta[static_cast<size_t>(c)]; }
  // Ratios; negative when not available or the denominator is 0.
  double per_request(ServerCounter c) const;
  double per_message(ServerCounter c) const;
  void merge(const ServerCounterDelta& o, bool first);
};

// One session of its own on the server under test, used only for the two snapshots.
class CounterProbe {
 public:
  CounterProbe() : socket_(ctx_) {}
  // Connects and opens a session; false when that fails (the counters are then unavailable).
  bool open(const Endpoint& endpoint);
  // A snapshot; nullopt when the server does not have the counters or the call failed.
  std::optional<ServerCounterValues> read();
  void close();

 private:
  asio::io_context ctx_;
  asio::ip::tcp::socket socket_;
  SessionInfo info_;
  uint32_t next_request_ = 1;
  bool open_ = false;
};

// before / after -> delta (available only with both).
ServerCounterDelta counter_delta(const std::optional<ServerCounterValues>& before,
                                 const std::optional<ServerCounterValues>& after);

}  // namespace opcuad::bench
