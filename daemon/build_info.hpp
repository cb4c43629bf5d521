#pragma once
// The daemon's BuildInfo (Part 5 §12.4), published in Server.ServerStatus.BuildInfo. The constants come
// from the generated daemon/build_info_constants.hpp (daemon/CMakeLists.txt).

#include "daemon/build_info_constants.hpp"
#include "ua/generated/types.hpp"

namespace opcuad {

// ProductUri, names, SoftwareVersion (the project version), BuildNumber (the build type) and BuildDate
// (the build's date, never the start time).
ua::BuildInfo build_info();

}  // namespace opcuad
