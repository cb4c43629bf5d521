// Secrets in memory (transport/security/secret.hpp): wiping covers the whole allocation, short texts
// included, and a Secret moves its buffer instead of copying the bytes.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "transport/security/secret.hpp"

using namespace opcuad;

namespace {
bool all_zero(const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("secret: wipe overwrites every byte a string or vector holds, then empties it", "[security]") {
  // A short text sits in the string's own small buffer; a long one on the heap, with spare capacity.
  for (const std::string text : {std::string("pw"), std::string(100, 'x')}) {
    std::string s = text;
    s.reserve(text.size() + 50);
    const char* storage = s.data();
    const size_t capacity = s.capacity();
    security::wipe(s);
    CHECK(s.empty());
    CHECK(s.data() == storage);  // the allocation is kept (and was overwritten, not freed unwiped)
    CHECK(all_zero(storage, capacity));
  }
  std::vector<uint8_t> v(40, 0xab);
  v.resize(10);  // bytes beyond the size still hold the old values
  const auto* storage = reinterpret_cast<const char*>(v.data());
  const size_t capacity = v.capacity();
  security::wipe(v);
  CHECK(v.empty());
  CHECK(all_zero(storage, capacity));
}

TEST_CASE("secret: a Secret hands its buffer over on a move and wipes it when replaced or destroyed",
          "[security]") {
  security::Secret a("pw");  // short: still in a heap buffer of its own
  const char* buffer = a.view().data();
  security::Secret b(std::move(a));
  CHECK(b.view() == "pw");
  CHECK(b.view().data() == buffer);  // moved, not copied: no second copy of the bytes anywhere
  CHECK(a.empty());                  // NOLINT(bugprone-use-after-move): what a move leaves is the point
  std::string_view bytes(reinterpret_cast<const char*>(b.bytes().data()), b.bytes().size());
  CHECK(bytes == "pw");
  b.assign("another");
  CHECK(b.view() == "another");
  security::Secret c;
  c = std::move(b);
  CHECK(c.view() == "another");
}
