#pragma once
// What the seed writers of make_seed_corpus share: a directory of numbered seeds of one fuzz target, the
// RequestHeader the requests carry and the framing of a MSG chunk on the fuzz targets' channel. Each
// target's seeds are written by a file of their own (seeds_*.cpp); make_seed_corpus.cpp calls them.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_ids.hpp"
#include "tests/fuzz/fuzz_key_material.hpp"
#include "tests/fuzz/secure_channel_fuzz_input.hpp"
#include "tests/fuzz/services_fuzz_input.hpp"
#include "transport/channel_id.hpp"
#include "transport/uatcp.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::fuzz::seeds {

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

inline RequestHeader header() {
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
inline FuzzIds fuzz_ids() {
  opcuad::transport::ChannelIdSource ids(kFuzzIdKeys, 1);
  uint32_t token = ids.next();
  return {token, ids.next()};
}

inline std::string symmetric(const char* type, char chunk, uint32_t seq, uint32_t rid,
                             const ByteBuffer& body) {
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

// Each writes its target's seeds into `dir` (created) and prints how many.
void write_stream_seeds(const std::filesystem::path& dir);          // uatcp_stream_fuzz
void write_service_seeds(const std::filesystem::path& dir);         // services_fuzz
void write_large_service_input(const std::filesystem::path& dir);   // services_fuzz-large (replayed)
void write_secure_channel_seeds(const std::filesystem::path& dir);  // secure_channel_fuzz
void write_structure_seeds(const std::filesystem::path& dir);       // structure_fuzz

}  // namespace opcuad::fuzz::seeds
