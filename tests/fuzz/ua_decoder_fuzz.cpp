// libFuzzer target for the binary decoder (Part 6 §5.2).
//
// Input: one selector byte choosing the type, then the encoded value. A structure arrives inside an
// ExtensionObject, so the fuzzer reaches every generated structure through its encoding id.
// Beyond "no crash, no leak, no UB", it checks that whatever decodes re-encodes to bytes that decode again
// and encode identically (the codec is idempotent after one canonicalising pass).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace {

using namespace opcuad::ua;

const DecodeLimits& fuzz_limits() {
  static const DecodeLimits limits{.max_string_length = 1u << 16,
                                   .max_byte_string_length = 1u << 16,
                                   .max_array_length = 1u << 14,
                                   .max_depth = 100};
  return limits;
}

template <class T>
void check(std::span<const uint8_t> in) {
  T value{};
  if (!decode_from(in, value, fuzz_limits()).is_good()) return;
  ByteBuffer first;
  if (!encode_to(first, value).is_good()) return;
  T again{};
  if (!decode_from(first.span(), again, fuzz_limits()).is_good()) std::abort();
  ByteBuffer second;
  if (!encode_to(second, again).is_good()) std::abort();
  if (first.size() != second.size() || std::memcmp(first.data(), second.data(), first.size()) != 0)
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 8) {
    case 0:
      check<Variant>(in);
      break;
    case 1:
      check<DataValue>(in);
      break;
    case 2:
      check<ExtensionObject>(in);
      break;
    case 3:
      check<DiagnosticInfo>(in);
      break;
    case 4:
      check<ExpandedNodeId>(in);
      break;
    case 5:
      check<std::vector<Variant>>(in);
      break;
    case 6:
      check<LocalizedText>(in);
      break;
    case 7:
      check<std::vector<ExtensionObject>>(in);
      break;
  }
  return 0;
}
