#include "config/simulation.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace opcuad::config {

namespace {
uint64_t splitmix(uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <class T>
ua::Variant clamp_to(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return ua::Variant(static_cast<T>(v));
  } else {
    const double r = std::round(v);
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    return ua::Variant(static_cast<T>(r < lo ? lo : r > hi ? hi : r));
  }
}
}  // namespace

double simulate(const Simulation& s, int64_t t_ms, uint64_t seed) noexcept {
  const double t = static_cast<double>(t_ms < 0 ? 0 : t_ms);
  const double span = s.max - s.min;
  switch (s.kind) {
    case SimulationKind::Counter: {
      const double ticks = std::floor(t / s.interval_ms);
      if (s.step <= 0 || span <= 0) return s.min;
      const double steps = std::floor(span / s.step) + 1;  // values min, min+step, ..., <= max
      return s.min + std::fmod(ticks, steps) * s.step;
    }
    case SimulationKind::Ramp:
      return s.min + span * (std::fmod(t, s.period_ms) / s.period_ms);
    case SimulationKind::Sine:
      return (s.min + s.max) / 2 +
             span / 2 * std::sin(2 * std::numbers::pi * std::fmod(t, s.period_ms) / s.period_ms);
    case SimulationKind::Square:
      return std::fmod(t, s.period_ms) < s.period_ms / 2 ? s.max : s.min;
    case SimulationKind::Random: {
      const auto tick = static_cast<uint64_t>(t / s.interval_ms);
      const uint64_t r = splitmix(seed * 0x100000001B3ull ^ tick);
      return s.min + span * (static_cast<double>(r >> 11) / 9007199254740992.0);  // [0, 1)
    }
  }
  return s.min;
}

ua::Variant simulate_as(const Simulation& s, ua::BuiltinType type, int64_t t_ms, uint64_t seed) {
  const double v = simulate(s, t_ms, seed);
  using B = ua::BuiltinType;
  switch (type) {
    case B::SByte:
      return clamp_to<int8_t>(v);
    case B::Byte:
      return clamp_to<uint8_t>(v);
    case B::Int16:
      return clamp_to<int16_t>(v);
    case B::UInt16:
      return clamp_to<uint16_t>(v);
    case B::Int32:
      return clamp_to<int32_t>(v);
    case B::UInt32:
      return clamp_to<uint32_t>(v);
    case B::Int64:
      return clamp_to<int64_t>(v);
    case B::UInt64:
      return clamp_to<uint64_t>(v);
    case B::Float:
      return clamp_to<float>(v);
    default:
      return clamp_to<double>(v);
  }
}

}  // namespace opcuad::config
