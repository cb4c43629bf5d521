#include <catch2/catch.hpp>

#include "ua/status_code.hpp"

using namespace opcuad::ua;

TEST_CASE("status codes have names and severities", "[ua][status]") {
  CHECK(status::Good.name() == "Good");
  CHECK(status::BadNodeIdUnknown.value() == 0x80340000u);
  CHECK(status::BadNodeIdUnknown.name() == "BadNodeIdUnknown");
  CHECK(status::UncertainInitialValue.name() == "UncertainInitialValue");
  CHECK(StatusCode(0x80FF0000u).name() == "Unknown");
  // Info bits (here the overflow bit of Part 4 §7.39.2) do not change the name or the meaning.
  StatusCode with_info(status::Good.value() | 0x480u);
  CHECK(with_info.name() == "Good");
  CHECK(with_info.is(status::Good));
  CHECK(with_info != status::Good);
  CHECK(status::Good.is_good());
  CHECK(status::UncertainLastUsableValue.is_uncertain());
  CHECK(status::BadTimeout.is_bad());
  CHECK_FALSE(status::BadTimeout.is_good());
  CHECK(status::GoodMoreData.is_good());
}
