#pragma once
// What the two halves of SecureChannel (secure_channel.cpp: framing, secure_channel_open.cpp:
// OpenSecureChannel) share. Internal to those two files; nothing else includes it.

#include <cstdint>
#include <cstring>

#include "ua/status_code.hpp"

namespace opcuad::transport::channel_internal {

using ua::StatusCode;
namespace status = ua::status;

// Part 6 §6.7.2.4: a sequence number may wrap only once it is above UInt32.MaxValue - 1024, and the first
// number after the wrap is below 1024.
inline constexpr uint32_t kWrapThreshold = 4294966271u;

inline void put_u32(uint8_t* p, uint32_t v) noexcept {
  std::memcpy(p, &v, 4);
}

}  // namespace opcuad::transport::channel_internal
