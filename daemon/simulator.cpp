#include "daemon/simulator.hpp"

#include <asio/post.hpp>

#include <map>

#include "config/simulation.hpp"

namespace opcuad {

Simulator::Simulator(asio::io_context& shard, addressspace::AddressSpace& space,
                     const config::ServerConfig& config, services::Server& services)
    : ctx_(shard), space_(space), services_(services) {
  pending_ = plan(*space.current(), config);
}

Simulator::Plan Simulator::plan(const addressspace::NodeStore& store, const config::ServerConfig& config) {
  ua::NodeId::NamespaceResolver resolver = [&](std::string_view uri) -> std::optional<uint16_t> {
    for (size_t i = 0; i < config.namespaces.size(); ++i) {
      if (config.namespaces[i] == uri) return static_cast<uint16_t>(i);
    }
    return std::nullopt;
  };
  std::map<int64_t, std::vector<Variable>> by_interval;
  std::map<int64_t, std::vector<addressspace::NodeIndex>> alarms_by_interval;
  uint64_t seed = 1;
  auto add = [&](const ua::NodeId& id, const config::Simulation& sim) {
    const auto n = store.find(id);
    if (n == addressspace::kNoNode) return;
    const auto* var = store.variable(n);
    if (!var || !var->cell) return;
    const auto* dt = var->data_type == addressspace::kNoNode ? nullptr : store.data_type(var->data_type);
    const auto type = static_cast<ua::BuiltinType>(dt && dt->builtin ? dt->builtin : 11);
    const auto interval = static_cast<int64_t>(std::max(1.0, sim.interval_ms));
    by_interval[interval].push_back(Variable{var->cell, sim, type, seed++});
    if (store.has_flag(n, addressspace::flag::kHasAlarm)) alarms_by_interval[interval].push_back(n);
  };
  for (const auto& d : config.nodes) {
    if (!d.simulation) continue;
    if (d.count == 0) {
      add(d.node_id, *d.simulation);
    } else {
      for (uint32_t k = 0; k < d.count; ++k)
        add(config::bulk_node_id(d, d.start + k, resolver), *d.simulation);
    }
  }
  Plan out;
  size_t count = 0;
  for (auto& [ms, vars] : by_interval) {
    count += vars.size();
    auto g = std::make_shared<Group>();
    g->interval = std::chrono::milliseconds(ms);
    g->variables = std::move(vars);
    g->alarm_inputs = std::move(alarms_by_interval[ms]);
    g->generation = store.generation();
    out.push_back(std::move(g));
  }
  variable_count_.store(count, std::memory_order_relaxed);
  return out;
}

void Simulator::start() {
  asio::post(ctx_, [this] {
    if (stopped_) return;
    participant_ = space_.reclaimer().register_participant();
    // Offline between ticks (each tick is online for its own run), so a slow group does not hold every
    // other thread's retired values until its next tick.
    if (participant_) space_.reclaimer().go_offline(*participant_);
    origin_ = std::chrono::steady_clock::now();
    started_ = true;
    run(std::move(pending_));
  });
}

size_t Simulator::rewire(const config::ServerConfig& config) {
  Plan next = plan(*space_.current(), config);
  const size_t count = variable_count();
  asio::post(ctx_, [this, next = std::move(next)]() mutable {
    if (stopped_) return;
    if (!started_) {
      pending_ = std::move(next);  // start() is still queued: it runs the newest plan
      return;
    }
    run(std::move(next));
  });
  return count;
}

void Simulator::run(Plan next) {
  // The old groups go with their timers now; a completion of theirs already queued finds its group gone
  // (the handlers hold it weakly).
  groups_ = std::move(next);
  size_t widest = 0;
  for (auto& g : groups_) widest = std::max(widest, g->variables.size());
  written_.reserve(widest);
  const auto now = std::chrono::steady_clock::now();
  for (auto& g : groups_) {
    g->timer = std::make_unique<asio::steady_timer>(ctx_);
    // Half an interval off the sampling grid of the same interval (Sampler, "Phases"): a value changes
    // as far as it can from the samples that read it, and the writes do not delay those samples.
    g->next = services::Sampler::writer_phase(now, g->interval);
    tick(g);
  }
}

void Simulator::tick(const std::shared_ptr<Group>& g) {
  const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *participant_);
  const auto now = std::chrono::steady_clock::now();
  const int64_t t_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - origin_).count();
  ua::DataValue dv;
  dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
  written_.clear();
  // The cells are scattered over memory: fetching each a few variables ahead (for writing) overlaps
  // their cache misses, as the Sampler does for its items.
  const std::vector<Variable>& vars = g->variables;
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (i + kAhead < vars.size()) __builtin_prefetch(vars[i + kAhead].cell, 1);
    const Variable& v = vars[i];
    dv.value = config::simulate_as(v.simulation, v.type, t_ms, v.seed);
    space_.values().write(*v.cell, dv, *participant_);
    written_.push_back(v.cell);
  }
  services_.notify_written(nullptr, written_);  // wakes exception-based monitored items on any shard
  if (!g->alarm_inputs.empty()) {
    // The alarms on the simulated variables, judged here where the values changed.
    const addressspace::NodeStore* store = space_.current();
    if (store->generation() == g->generation)
      services_.evaluate_alarms(nullptr, *store, g->alarm_inputs, *participant_);
  }
  // Absolute deadlines: skip whole intervals that were missed rather than drifting.
  do {
    g->next += g->interval;
  } while (g->next <= now);
  g->timer->expires_at(g->next);
  g->timer->async_wait([this, w = std::weak_ptr<Group>(g)](std::error_code ec) {
    if (ec || stopped_) return;
    if (const std::shared_ptr<Group> group = w.lock()) tick(group);
  });
}

void Simulator::stop() {
  stopped_ = true;
  for (auto& g : groups_) {
    if (g->timer) g->timer->cancel();
  }
  if (participant_) space_.reclaimer().go_offline(*participant_);
}

}  // namespace opcuad
