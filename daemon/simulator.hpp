#pragma once
// Simulator: drives the variables whose configuration names a simulation source (counter, ramp, sine,
// square, random), each on its own interval, from timers on one shard. Timers use absolute deadlines
// (start + k * interval), so a late tick does not shift the ones after it.
//
// The set of variables is a plan built on the control thread from a store and the configuration that
// built it; a reload (docs/OPERATIONS.md, "Reload") builds a new plan and rewire() hands it to the shard,
// which retires the old timers and starts the new ones on the same time origin, so a waveform that did
// not change goes on where it was.
//
// shard-local: created on the control thread before the shards run, then used only by its shard, except
// rewire() and variable_count(), which the control thread calls.

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "addressspace/address_space.hpp"
#include "config/config.hpp"
#include "services/server.hpp"

namespace opcuad {

class Simulator {
 public:
  // `services` is told of every write, so exception-based monitored items see simulated changes.
  Simulator(asio::io_context& shard, addressspace::AddressSpace& space, const config::ServerConfig& config,
            services::Server& services);
  // Variables of the newest plan.
  size_t variable_count() const noexcept { return variable_count_.load(std::memory_order_relaxed); }
  void start();  // posts the first ticks to the shard
  void stop();   // cancels the timers (call on the shard, e.g. through post)
  // Control thread, after a reload published the store that `config` built: the simulated variables
  // are looked up in that store again; the shard switches to them at its next turn. Returns how many.
  size_t rewire(const config::ServerConfig& config);

 private:
  struct Variable {
    addressspace::ValueCell* cell;
    config::Simulation simulation;
    ua::BuiltinType type;
    uint64_t seed;
  };
  struct Group {  // variables sharing one interval share one timer
    std::chrono::milliseconds interval;
    std::vector<Variable> variables;
    // The variables that carry alarms (flag::kHasAlarm), judged after each tick, as NodeIndexes of the
    // store of `generation` (a tick in a newer store skips them until the rewire's plan arrives).
    std::vector<addressspace::NodeIndex> alarm_inputs;
    uint64_t generation = 0;
    std::unique_ptr<asio::steady_timer> timer;
    std::chrono::steady_clock::time_point next;
  };
  // Shared so that a timer's handler can hold its group weakly: a newer plan drops the old groups, and a
  // completion of theirs that was already queued then finds nothing to tick.
  using Plan = std::vector<std::shared_ptr<Group>>;
  Plan plan(const addressspace::NodeStore& store, const config::ServerConfig& config);  // sets the count
  void run(Plan next);                                                                  // on the shard
  void tick(const std::shared_ptr<Group>& g);

  asio::io_context& ctx_;
  addressspace::AddressSpace& space_;
  services::Server& services_;
  std::atomic<size_t> variable_count_{0};
  std::vector<const addressspace::ValueCell*> written_;  // reused per tick
  addressspace::EpochReclaimer::Participant* participant_ = nullptr;
  // Set by stop(). cancel() cannot recall a completion already queued (a tick that ran late re-arms a
  // timer that is due at once), so the handler checks this before it ticks again.
  bool stopped_ = false;
  bool started_ = false;
  Plan pending_;  // the first plan, until start() runs on the shard
  Plan groups_;
  std::chrono::steady_clock::time_point origin_;
};

}  // namespace opcuad
