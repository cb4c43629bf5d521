#pragma once
// Daemon: wires the layers for one run of opcuad. Loads nothing itself: it is given a validated
// configuration, builds the address space from it, starts the shards, the services and one listener per
// endpoint, and runs until SIGINT or SIGTERM, then shuts everything down in order (stop accepting, close
// the channels, join the shards). SIGHUP reopens the log file and reloads the trust lists.

#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>

#include <memory>
#include <vector>

#include "addressspace/address_space.hpp"
#include "addressspace/server_object.hpp"
#include "config/config.hpp"
#include "daemon/http_server.hpp"
#include "daemon/metrics.hpp"
#include "daemon/simulator.hpp"
#include "services/server.hpp"
#include "transport/handshake_pool.hpp"
#include "transport/listener.hpp"
#include "transport/security/pki.hpp"
#include "transport/shard_pool.hpp"

namespace opcuad {

class Daemon {
 public:
  explicit Daemon(const config::ServerConfig& config);
  ~Daemon();

  // Builds and starts everything; false (after logging why) when the server cannot start.
  bool start();
  // Runs the control loop (accepting, signals) until a shutdown signal; returns the exit code.
  int run();
  // What the daemon counts itself (reloads), for /metrics.
  metrics::DaemonCounters& counters() noexcept { return daemon_counters_; }

 private:
  bool open_pki();
  bool start_http(const config::Http& http);
  bool listen(const config::Endpoint& endpoint);
  void shutdown();
  void tick_server_status();
  void tick_counters();
  void await_hangup();

  const config::ServerConfig& config_;
  transport::TransportConfig transport_config_;
  security::Pki pki_;  // opened before the services and listeners, which use identity_
  security::ServerIdentity identity_;
  // At most this many handshakes wait for the pool; a channel beyond gets ERR BadTcpNotEnoughResources.
  static constexpr size_t kMaxQueuedHandshakes = 256;
  std::unique_ptr<transport::HandshakePool> handshakes_;
  std::vector<std::unique_ptr<transport::TransportConfig>> endpoint_configs_;  // one per listener
  addressspace::AddressSpace space_;
  // The shards (their io_contexts) outlive the services, which keep timers on them.
  std::unique_ptr<transport::ShardPool> shards_;
  std::unique_ptr<services::Server> services_;
  transport::ChannelIdSource ids_;
  asio::io_context control_;  // acceptors, signals, the Server status clock
  asio::signal_set signals_{control_};
  asio::signal_set hangup_{control_};  // SIGHUP: reopen the log file (after a rotation)
  std::vector<std::unique_ptr<transport::Listener>> listeners_;
  std::unique_ptr<Simulator> simulator_;
  asio::steady_timer status_timer_{control_};
  asio::steady_timer counters_timer_{control_};  // config diagnostics.counters only
  addressspace::CounterPublisher counters_;
  addressspace::EpochReclaimer::Participant* control_participant_ = nullptr;
  ua::ServerDiagnosticsSummaryDataType last_summary_;  // what the Server object last showed
  metrics::DaemonCounters daemon_counters_;
  std::chrono::system_clock::time_point started_at_ = std::chrono::system_clock::now();
  std::string version_;               // opcuad_build_info's label (the Sources refer to it)
  std::unique_ptr<HttpServer> http_;  // config "http" only; its own thread
  bool stopped_ = false;
};

}  // namespace opcuad
