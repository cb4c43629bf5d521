#pragma once
// Daemon: wires the layers for one run of opcuad. Loads nothing itself: it is given a validated
// configuration, builds the address space from it, starts the shards, the services and one listener per
// endpoint, and runs until SIGINT or SIGTERM. SIGHUP reopens the log file, reloads the trust lists and
// reloads the server file's node files (reload_configuration(), docs/OPERATIONS.md "Reload").
//
// Shutdown (docs/ARCHITECTURE.md, "Threads"), in phases:
//   Running -> Draining: the first SIGINT/SIGTERM. Listeners stop accepting; ServerStatus.State becomes
//     Shutdown with ShutdownReason, and SecondsTillShutdown counts down once a second over
//     shutdown.grace_period_s (Part 5 §12.10), while sessions and subscriptions keep working so that
//     clients see it and can leave in order. With no connection (at the signal or at any tick of the
//     countdown) there is nobody to wait for: the countdown ends there.
//   Draining -> Closing: the countdown reached 0, or a second signal. Queued Publish requests are answered
//     BadShutdown and the sessions closed (services), then every connection gets ERR BadServerHalted and
//     closes once flushed (Part 6 §7.1.5: a server ends a connection with ERR; CLO is the client's).
//   Closing -> Stopped: every connection is gone (at most kCloseTimeout): the shards are joined and run()
//     returns 0.
// Under systemd (Type=notify, $NOTIFY_SOCKET) the daemon reports READY=1 once every listener listens,
// STOPPING=1 when the shutdown starts, RELOADING=1 / READY=1 around a SIGHUP, STATUS= lines every few
// seconds, and WATCHDOG=1 (when $WATCHDOG_USEC asks for it) only while every shard's loop turns.

#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "addressspace/address_space.hpp"
#include "addressspace/server_object.hpp"
#include "config/config.hpp"
#include "daemon/event_log.hpp"
#include "daemon/http_server.hpp"
#include "daemon/metrics.hpp"
#include "daemon/notify.hpp"
#include "daemon/simulator.hpp"
#include "services/diagnostics.hpp"
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

  // Where SIGHUP re-reads the configuration from: the server file the daemon was started with (empty for
  // the built-in configuration: then only the log file and the trust lists are reloaded), and whether a
  // --log-level on the command line wins over the file's logging.level. Set before start().
  struct ReloadSource {
    std::filesystem::path server_file;
    bool log_level_from_command_line = false;
  };
  void set_reload_source(ReloadSource source) { reload_source_ = std::move(source); }
  // The SIGHUP reload of the configuration, on the control thread (public for tests): the server file and
  // its node files are loaded and validated as at start; with any error, each is logged, the reload counts
  // as failed and nothing changes. Otherwise the new address space is published (sessions, subscriptions
  // and values of unchanged nodes stay), logging.level is applied, and every other changed setting is
  // logged as needing a restart. True when the reload took effect.
  bool reload_configuration();

  // How long the Closing phase waits for connections to flush their last bytes before closing the rest.
  static constexpr std::chrono::seconds kCloseTimeout{2};
  // How long SecondsTillShutdown shows 0 before the sessions close (a grace period of 0 does not wait).
  static constexpr std::chrono::milliseconds kLastPublish{500};

 private:
  bool open_pki();
  bool start_http(const config::Http& http);
  enum class Phase { Running, Draining, Closing, Stopped };

  bool listen(const config::Endpoint& endpoint);
  void await_signal();
  void begin_shutdown(int signal);
  // A SystemStatusChangeEventType event (Part 5 §6.4.30) from the Server object: SystemState `state`,
  // to every event item on the Server object (services::Server::raise_event).
  void raise_system_status(ua::ServerState state, uint16_t severity, const std::string& message);
  void count_down();
  void close_clients();
  void await_closed(std::chrono::steady_clock::time_point deadline);
  void stop_now();
  void tick_server_status();
  // The alarm condition state file (condition_state_file.hpp): read and applied at start, written when a
  // condition changed: checked once a second (`spaced`: no sooner than write_spacing() after the last
  // write), after a reload and at shutdown.
  void restore_conditions();
  void save_conditions(bool spaced);
  void tick_counters();
  void watch_certificate_expiry();
  void await_hangup();
  // Service manager supervision (notify.hpp; the shards' heartbeats, transport/shard_heartbeat.hpp).
  void start_supervision();
  void tick_watchdog();
  void tick_notify_status();
  std::string status_line() const;

  const config::ServerConfig& config_;
  ReloadSource reload_source_;
  // The configuration the running address space was built from: config_, then the last reload's.
  std::unique_ptr<config::ServerConfig> reloaded_;
  const config::ServerConfig* nodes_config_ = &config_;
  std::string file_log_level_ = config_.logging.level;  // the logging.level last read from the file
  EventLog events_;  // operator events of the transport and the services (before their users)
  transport::TransportConfig transport_config_;
  security::Pki pki_;  // opened before the services and listeners, which use identity_
  security::ServerIdentity identity_;
  std::unique_ptr<transport::HandshakePool> handshakes_;
  std::vector<std::unique_ptr<transport::TransportConfig>> endpoint_configs_;  // one per listener
  addressspace::AddressSpace space_;
  // The shards (their io_contexts) outlive the services, which keep timers on them.
  std::unique_ptr<transport::ShardPool> shards_;
  std::unique_ptr<services::Server> services_;
  transport::ChannelIdSource ids_;
  asio::io_context control_;  // acceptors, signals, the Server status clock
  asio::signal_set signals_{control_};
  asio::signal_set hangup_{control_};  // SIGHUP: reopen the log file, reload trust lists and node files
  std::vector<std::unique_ptr<transport::Listener>> listeners_;
  std::unique_ptr<Simulator> simulator_;
  asio::steady_timer status_timer_{control_};
  asio::steady_timer counters_timer_{control_};     // config diagnostics.counters only
  asio::steady_timer certificate_timer_{control_};  // once a day: the own certificate's end (certificate.hpp)
  addressspace::CounterPublisher counters_;
  addressspace::EpochReclaimer::Participant* control_participant_ = nullptr;
  ua::ServerDiagnosticsSummaryDataType last_summary_;  // what the Server object last showed
  uint64_t condition_changes_saved_ = 0;  // Server::condition_changes() when the state file was last written
  std::chrono::steady_clock::time_point next_condition_save_{};  // the earliest spaced write
  // The session and subscription diagnostics arrays, refreshed by tick_server_status() while
  // EnabledFlag is TRUE (services/diagnostics.hpp). Made with services_.
  std::unique_ptr<services::DiagnosticsRefresher> diagnostic_arrays_;
  metrics::DaemonCounters daemon_counters_;
  std::chrono::system_clock::time_point started_at_ = std::chrono::system_clock::now();
  std::string version_;               // opcuad_build_info's label (the Sources refer to it)
  std::unique_ptr<HttpServer> http_;  // config "http" only; its own thread
  Phase phase_ = Phase::Running;
  asio::steady_timer shutdown_timer_{control_};  // the countdown, then the wait for connections to close
  uint32_t seconds_left_ = 0;
  std::string shutdown_reason_;
  Notifier notifier_;
  std::optional<std::chrono::microseconds> watchdog_;  // $WATCHDOG_USEC
  bool watchdog_stalled_ = false;                      // a stale shard has stopped the pings
  asio::steady_timer watchdog_timer_{control_};
  asio::steady_timer notify_status_timer_{control_};
};

}  // namespace opcuad
