#include "bench/ua_framing.hpp"

namespace opcuad::bench {

bool read_error(std::span<const uint8_t> body, transport::ErrorMessage& err, std::string& what) {
  if (!transport::decode_error(body, err).is_good()) {
    what = "server sent a malformed ERR";
    return false;
  }
  what = "server sent ERR " + std::string(err.error.name()) + ": " + std::string(err.reason.view());
  return true;
}

}  // namespace opcuad::bench
