// libFuzzer target for the UA TCP / secure-conversation byte stream (Part 6 §6.7, §7.1): the bytes a
// client could send, fed to a SecureChannel in pieces whose size the first input byte chooses. Whatever
// arrives, the channel must not crash, leak or misbehave under the sanitizers, and what it writes back
// must be well-framed UA TCP.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_ids.hpp"
#include "tests/unit/transport/memory_channel.hpp"

namespace {

using namespace opcuad;
using namespace opcuad::transport;

// Every message the server wrote must have a known type and a size that adds up.
void check_framing(const std::string& out) {
  size_t pos = 0;
  while (pos < out.size()) {
    if (out.size() - pos < 8) std::abort();
    uint32_t size;
    std::memcpy(&size, out.data() + pos + 4, 4);
    std::string_view type(out.data() + pos, 3);
    if (type != "ACK" && type != "ERR" && type != "OPN" && type != "MSG") std::abort();
    if (size < 8 || size > out.size() - pos) std::abort();
    pos += size;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t step = 1 + data[0] % 64 * 37;  // 1, 38, 75, ... bytes per read
  TransportConfig config;
  config.max_message_size = 1u << 20;
  config.decode_limits.max_array_length = 1u << 14;
  // Fixed keys: every run gets the same channel and token ids, which the seed corpus carries.
  test::MemoryChannel m(config, kFuzzIdKeys);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t pos = 1;
  while (pos < size && !m.events.closed && m.channel->reading_allowed()) {
    const size_t n = m.deliver(input.substr(pos, step));
    if (n == 0) break;
    pos += n;
    m.turn();
  }
  m.turn();
  check_framing(m.sink.out);
  return 0;
}
