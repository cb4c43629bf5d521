#pragma once
// Simulated values (counter, ramp, sine, square, random) as a pure function of time, so a shard timer
// only has to call it every interval_ms and write the result; tests check it without a clock.

#include <cstdint>

#include "config/config.hpp"
#include "ua/variant.hpp"

namespace opcuad::config {

// The value at t milliseconds after the simulation started. `seed` varies `random` between variables.
//   counter: min, min+step, ... one step per interval, wrapping to min after max
//   ramp:    min .. max linearly over period, then again
//   sine:    mid + amplitude * sin(2 pi t / period), mid = (min+max)/2, amplitude = (max-min)/2
//   square:  max for the first half of each period, min for the second
//   random:  uniform in [min, max], a new value per interval, deterministic in (seed, interval index)
double simulate(const Simulation& s, int64_t t_ms, uint64_t seed = 0) noexcept;

// simulate() converted to a numeric built-in type (rounded and clamped for integers).
ua::Variant simulate_as(const Simulation& s, ua::BuiltinType type, int64_t t_ms, uint64_t seed = 0);

}  // namespace opcuad::config
