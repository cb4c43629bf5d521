// BuildInfo (Part 5 §12.4): BuildDate is the build's date, fixed at configure time, not the start time.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "daemon/build_info.hpp"

using namespace opcuad;

TEST_CASE("build info: BuildDate is the build's date, the same at every call", "[daemon][build_info]") {
  const ua::BuildInfo first = build_info();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const ua::BuildInfo second = build_info();
  CHECK(first.build_date == second.build_date);  // a start-time or current-time date would move
  CHECK(first.build_date == ua::DateTime::from_unix_ms(build::kBuildDateUnixSeconds * 1000));
  CHECK(first.build_date.to_unix_ms() <= ua::DateTime::now().to_unix_ms());
  CHECK(first.build_date.to_unix_ms() > int64_t{1577836800} * 1000);  // after 2020-01-01
  CHECK(first.software_version == ua::String(build::kVersion));
  CHECK(first.product_name == ua::String("opcuad"));
}
