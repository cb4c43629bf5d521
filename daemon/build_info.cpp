#include "daemon/build_info.hpp"

namespace opcuad {

ua::BuildInfo build_info() {
  ua::BuildInfo b;
  b.product_uri = ua::String("https://github.com/opcuad/opcuad");
  b.manufacturer_name = ua::String("opcuad");
  b.product_name = ua::String("opcuad");
  b.software_version = ua::String(build::kVersion);
  b.build_number = ua::String(build::kBuildType);
  b.build_date = ua::DateTime::from_unix_ms(build::kBuildDateUnixSeconds * 1000);
  return b;
}

}  // namespace opcuad
