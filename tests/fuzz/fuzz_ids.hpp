#pragma once
// The id keys the stream fuzz target uses, shared with the seed generator so seeds carry valid ids.
#include <array>
#include <cstdint>

inline constexpr std::array<uint32_t, 4> kFuzzIdKeys{1, 2, 3, 4};
