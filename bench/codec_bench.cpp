// codec_bench: encode and decode a ReadRequest of 100 nodes and its ReadResponse of 100 Double values,
// as the server does per Read-100 request. Prints ns per message (median of several rounds) and whether
// the warm loop allocated. A program, not a test: record results in docs/PERFORMANCE.md.
//
//   codec_bench [--rounds N] [--iterations N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad::ua;

namespace {

ReadRequest make_request(size_t n) {
  ReadRequest r;
  r.request_header.authentication_token = NodeId(0, *Guid::parse("72962b91-fa75-4ae6-8d28-b404dc7daf63"));
  r.request_header.timestamp = DateTime::now();
  r.request_header.request_handle = 42;
  r.request_header.timeout_hint = 10000;
  r.timestamps_to_return = TimestampsToReturn::Both;
  for (size_t i = 0; i < n; ++i) {
    r.nodes_to_read.push_back(ReadValueId{NodeId(2, String("Sensor" + std::to_string(i))), 13, String(), {}});
  }
  return r;
}

ReadResponse make_response(size_t n) {
  ReadResponse r;
  r.response_header.timestamp = DateTime::now();
  r.response_header.request_handle = 42;
  for (size_t i = 0; i < n; ++i) {
    DataValue v;
    v.value = Variant(static_cast<double>(i) * 0.5);
    v.source_timestamp = DateTime::now();
    v.server_timestamp = v.source_timestamp;
    r.results.push_back(std::move(v));
  }
  return r;
}

template <class F>
double ns_per_op(F&& f, int iterations) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) f();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7, iterations = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--iterations")) iterations = std::atoi(argv[i + 1]);
  }
  const ReadRequest request = make_request(100);
  const ReadResponse response = make_response(100);
  ByteBuffer req_bytes, resp_bytes, out;
  if (!encode_to(req_bytes, request).is_good() || !encode_to(resp_bytes, response).is_good()) return 1;

  ReadRequest decoded_req;
  ReadResponse decoded_resp;
  struct Case {
    const char* name;
    std::vector<double> samples;
  } cases[4] = {{"encode ReadRequest(100)", {}}, {"decode ReadRequest(100)", {}},
                {"encode ReadResponse(100)", {}}, {"decode ReadResponse(100)", {}}};
  bool ok = true;
  for (int r = 0; r < rounds; ++r) {
    cases[0].samples.push_back(ns_per_op([&] { out.clear(); ok &= encode_to(out, request).is_good(); }, iterations));
    cases[1].samples.push_back(
        ns_per_op([&] { ok &= decode_from(req_bytes.span(), decoded_req).is_good(); }, iterations));
    cases[2].samples.push_back(ns_per_op([&] { out.clear(); ok &= encode_to(out, response).is_good(); }, iterations));
    cases[3].samples.push_back(
        ns_per_op([&] { ok &= decode_from(resp_bytes.span(), decoded_resp).is_good(); }, iterations));
  }
  if (!ok || !(decoded_req == request) || !(decoded_resp == response)) {
    std::fprintf(stderr, "codec_bench: round trip failed\n");
    return 1;
  }
  std::printf("codec_bench: %d rounds x %d iterations, median ns per message\n", rounds, iterations);
  std::printf("  request %zu bytes, response %zu bytes\n", req_bytes.size(), resp_bytes.size());
  for (auto& c : cases) std::printf("  %-26s %9.0f ns\n", c.name, median(c.samples));
  return 0;
}
