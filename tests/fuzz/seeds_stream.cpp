// uatcp_stream_fuzz seeds.
#include "tests/fuzz/seed_corpus.hpp"

namespace opcuad::fuzz::seeds {

void write_stream_seeds(const std::filesystem::path& dir) {
  using namespace opcuad::transport;
  std::filesystem::create_directories(dir);
  std::string hello = encode_hello(HelloMessage{0, 65535, 65535, 0, 0, String("opc.tcp://localhost:4840")});
  ByteBuffer open;
  {
    Encoder e(open);
    e.write_raw("OPNF\0\0\0\0", 8);
    e.write_u32(0);
    encode(e, String(kSecurityPolicyNone));
    encode(e, ByteString());
    encode(e, ByteString());
    e.write_u32(1);
    e.write_u32(1);
    OpenSecureChannelRequest req;
    req.security_mode = MessageSecurityMode::None;
    req.requested_lifetime = 600000;
    encode(e, NodeId(0, OpenSecureChannelRequest::binary_encoding_id));
    encode(e, req);
    const auto size = static_cast<uint32_t>(open.size());
    std::memcpy(open.data() + 4, &size, 4);
  }
  ByteBuffer read;
  {
    Encoder e(read);
    ReadRequest r;
    r.request_header = header();
    r.nodes_to_read.push_back(ReadValueId{NodeId(2, 1), 13, String(), {}});
    encode(e, NodeId(0, ReadRequest::binary_encoding_id));
    encode(e, r);
  }
  ByteBuffer first_half, second_half;
  first_half.append(read.data(), read.size() / 2);
  second_half.append(read.data() + read.size() / 2, read.size() - read.size() / 2);
  const std::string opened = hello + std::string(reinterpret_cast<const char*>(open.data()), open.size());
  const std::string seeds[] = {
      hello,
      opened,
      opened + symmetric("MSG", 'F', 2, 2, read),
      opened + symmetric("MSG", 'C', 2, 2, first_half) + symmetric("MSG", 'F', 3, 2, second_half),
      opened + symmetric("MSG", 'C', 2, 2, first_half) + symmetric("MSG", 'A', 3, 2, second_half) +
          symmetric("CLO", 'F', 4, 3, ByteBuffer()),
  };
  int n = 0;
  for (const auto& seed : seeds) {
    for (uint8_t step : {uint8_t{0}, uint8_t{5}}) {
      std::ofstream f(dir / ("seed-" + std::to_string(n++)), std::ios::binary);
      f.put(static_cast<char>(step));
      f.write(seed.data(), static_cast<std::streamsize>(seed.size()));
    }
  }
  std::printf("wrote %d stream seeds\n", n);
}

}  // namespace opcuad::fuzz::seeds
