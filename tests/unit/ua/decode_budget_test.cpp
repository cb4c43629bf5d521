// The decoded-memory budget (DecodeLimits::max_decoded_bytes, docs/SECURITY.md): a request whose decoded
// form would take far more memory than its bytes is refused with BadEncodingLimitsExceeded before the
// memory is allocated.
#include "tests/unit/ua/test_bytes.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad::ua;

namespace {

// A ReadRequest with `n` of the smallest ReadValueIds (two-byte NodeId, attribute, null range, empty
// data encoding): 13 bytes each on the wire, each a much larger object once decoded.
std::vector<uint8_t> small_reads(size_t n) {
  ReadRequest r;
  r.nodes_to_read.resize(n, ReadValueId{NodeId(0, 85), 13, String(), QualifiedName{}});
  ByteBuffer buf;
  REQUIRE(encode_to(buf, r).is_good());
  return std::vector<uint8_t>(buf.data(), buf.data() + buf.size());
}

}  // namespace

TEST_CASE("decoded memory budget: charged at the elements' C++ size, before allocating",
          "[ua][codec][hardening]") {
  const auto bytes = small_reads(20000);
  // 20,000 ReadValueIds in about 300 KB: far more than that once decoded.
  REQUIRE(20000 * sizeof(ReadValueId) > 4 * bytes.size());
  DecodeLimits tight;
  tight.max_decoded_bytes = 20000 * sizeof(ReadValueId) / 2;
  ReadRequest r;
  CHECK(decode_from(bytes, r, tight) == status::BadEncodingLimitsExceeded);
  CHECK(r.nodes_to_read.capacity() < 20000);  // refused before the array was sized

  DecodeLimits roomy;
  roomy.max_decoded_bytes = 20000 * sizeof(ReadValueId) * 2;
  ReadRequest ok;
  CHECK(decode_from(bytes, ok, roomy).is_good());
  CHECK(ok.nodes_to_read.size() == 20000);
}

TEST_CASE("decoded memory budget: scales with the input, so a small request cannot take the maximum",
          "[ua][codec][hardening]") {
  DecodeLimits limits;
  limits.max_decoded_bytes = size_t{1} << 30;  // not the bound here
  limits.decoded_bytes_base = 1024;
  limits.decoded_bytes_per_input_byte = 2;
  const auto bytes = small_reads(2000);
  ReadRequest r;
  // 2 x 26 KB + 1 KB of budget is far below 2,000 decoded ReadValueIds.
  CHECK(decode_from(bytes, r, limits) == status::BadEncodingLimitsExceeded);
  Decoder d(bytes, limits);
  CHECK(d.decoded_budget() == 1024 + 2 * bytes.size());
}

TEST_CASE("decoded memory budget: ExtensionObject bodies draw on their parent's budget",
          "[ua][codec][hardening]") {
  // A Variant array of 4,000 ExtensionObjects, each a decoded ReadValueId.
  std::vector<ExtensionObject> objects;
  for (int i = 0; i < 4000; ++i)
    objects.push_back(ExtensionObject::make(ReadValueId{NodeId(0, 85), 13, String(), {}}));
  Variant v(std::move(objects));
  ByteBuffer buf;
  REQUIRE(encode_to(buf, v).is_good());
  std::vector<uint8_t> bytes(buf.data(), buf.data() + buf.size());
  DecodeLimits limits;
  limits.max_decoded_bytes = 4000 * sizeof(ExtensionObject) + 1000 * sizeof(ReadValueId);
  Variant out;
  CHECK(decode_from(bytes, out, limits) == status::BadEncodingLimitsExceeded);
  limits.max_decoded_bytes = 4000 * (sizeof(ExtensionObject) + sizeof(ReadValueId)) + 4096;
  Variant fits;
  CHECK(decode_from(bytes, fits, limits).is_good());
}
