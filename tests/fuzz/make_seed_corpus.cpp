// Writes the seed corpus of every fuzz target into <dir>/<target>/: well-formed encodings of the values
// a server receives, so that mutation starts from the interesting structures.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <string>

#include "tests/fuzz/fuzz_ids.hpp"
#include "transport/channel_id.hpp"
#include "transport/uatcp.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace {

using namespace opcuad::ua;

class Seeds {
 public:
  Seeds(std::filesystem::path dir) : dir_(std::move(dir)) { std::filesystem::create_directories(dir_); }
  template <class T>
  void add(uint8_t selector, const T& value) {
    ByteBuffer buf;
    buf.append(&selector, 1);
    if (!encode_to(buf, value).is_good()) {
      std::fprintf(stderr, "seed %d does not encode\n", count_);
      std::exit(1);
    }
    std::ofstream(dir_ / ("seed-" + std::to_string(count_++)), std::ios::binary)
        .write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
  }
  int count() const { return count_; }

 private:
  std::filesystem::path dir_;
  int count_ = 0;
};

RequestHeader header() {
  RequestHeader h;
  h.authentication_token = NodeId(0, String("token"));
  h.timestamp = DateTime{133000000000000000};
  h.request_handle = 7;
  h.timeout_hint = 10000;
  return h;
}

// A client's byte stream: HEL, OPN, then MSG chunks (one request whole, one split, one aborted) and CLO.
// The ids the fuzz target's channel will use: its first draw is the token, the second the channel.
struct FuzzIds {
  uint32_t token, channel;
};
FuzzIds fuzz_ids() {
  opcuad::transport::ChannelIdSource ids(kFuzzIdKeys, 1);
  uint32_t token = ids.next();
  return {token, ids.next()};
}

std::string symmetric(const char* type, char chunk, uint32_t seq, uint32_t rid, const ByteBuffer& body) {
  ByteBuffer b;
  Encoder e(b);
  e.write_raw(type, 3);
  e.write_u8(static_cast<uint8_t>(chunk));
  e.write_u32(static_cast<uint32_t>(24 + body.size()));
  e.write_u32(fuzz_ids().channel);
  e.write_u32(fuzz_ids().token);
  e.write_u32(seq);
  e.write_u32(rid);
  b.append(body.data(), body.size());
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seed_corpus DIR\n");
    return 2;
  }
  Seeds s(std::filesystem::path(argv[1]) / "ua_decoder_fuzz");
  s.add(0, Variant(3.25));
  s.add(0, Variant(String("text")));
  s.add(0, Variant::matrix(std::vector<int32_t>{1, 2, 3, 4}, {2, 2}));
  s.add(0, Variant(std::vector<Variant>{Variant(1.0), Variant(LocalizedText{String("en"), String("x")})}));
  DataValue dv{Variant(int64_t{5}), status::UncertainInitialValue, DateTime{1}, DateTime{2}, 3, 4};
  s.add(1, dv);
  s.add(0, Variant(dv));

  ReadRequest read;
  read.request_header = header();
  read.timestamps_to_return = TimestampsToReturn::Both;
  for (uint32_t i = 0; i < 3; ++i) read.nodes_to_read.push_back(ReadValueId{NodeId(2, i), 13, String("1:2"), {}});
  s.add(2, ExtensionObject::make(read));
  WriteRequest write;
  write.request_header = header();
  write.nodes_to_write.push_back(WriteValue{NodeId(2, String("w")), 13, String(), dv});
  s.add(2, ExtensionObject::make(write));
  BrowseRequest browse;
  browse.request_header = header();
  browse.nodes_to_browse.push_back(BrowseDescription{NodeId(0, 85), BrowseDirection::Both, NodeId(0, 33), true, 0, 63});
  s.add(2, ExtensionObject::make(browse));
  CreateSessionRequest create;
  create.request_header = header();
  create.client_description.application_uri = String("urn:client");
  create.endpoint_url = String("opc.tcp://localhost:4840");
  s.add(2, ExtensionObject::make(create));
  ActivateSessionRequest activate;
  activate.request_header = header();
  activate.user_identity_token = ExtensionObject::make(UserNameIdentityToken{String("p"), String("u"), ByteString("pw"), String()});
  s.add(2, ExtensionObject::make(activate));
  CreateMonitoredItemsRequest monitor;
  monitor.request_header = header();
  MonitoredItemCreateRequest item;
  item.item_to_monitor = ReadValueId{NodeId(2, 1), 13, String(), {}};
  item.requested_parameters.filter = ExtensionObject::make(DataChangeFilter{DataChangeTrigger::StatusValue, 1, 0.5});
  monitor.items_to_create.push_back(item);
  s.add(2, ExtensionObject::make(monitor));
  s.add(7, std::vector<ExtensionObject>{ExtensionObject::make(Range{0, 100}), ExtensionObject::make(EUInformation{})});

  DiagnosticInfo d;
  d.symbolic_id = 1;
  d.additional_info = String("info");
  d.inner_diagnostic_info = Box<DiagnosticInfo>(DiagnosticInfo{});
  s.add(3, d);
  s.add(4, ExpandedNodeId{NodeId(1, String("x")), String("urn:ns"), 2});
  s.add(5, std::vector<Variant>{Variant(true), Variant(std::vector<float>{1, 2})});
  s.add(6, LocalizedText{String("de"), String("Temperatur")});
  std::printf("wrote %d decoder seeds\n", s.count());
  write_stream_seeds(std::filesystem::path(argv[1]) / "uatcp_stream_fuzz");
  return 0;
}
