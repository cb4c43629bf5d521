#pragma once
// Simulator: drives the variables whose configuration names a simulation source (counter, ramp, sine,
// square, random), each on its own interval, from timers on one shard. Timers use absolute deadlines
// (start + k * interval), so a late tick does not shift the ones after it.
//
// shard-local: created on the control thread before the shards run, then used only by its shard.

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

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
  size_t variable_count() const noexcept { return variables_.size(); }
  void start();  // posts the first ticks to the shard
  void stop();   // cancels the timers (call on the shard, e.g. through post)

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
    std::unique_ptr<asio::steady_timer> timer;
    std::chrono::steady_clock::time_point next;
  };
  void tick(Group& g);

  asio::io_context& ctx_;
  addressspace::AddressSpace& space_;
  services::Server& services_;
  std::vector<const addressspace::ValueCell*> written_;  // reused per tick
  addressspace::EpochReclaimer::Participant* participant_ = nullptr;
  // Set by stop(). cancel() cannot recall a completion already queued (a tick that ran late re-arms a
  // timer that is due at once), so the handler checks this before it ticks again.
  bool stopped_ = false;
  std::vector<Variable> variables_;
  std::vector<Group> groups_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace opcuad
