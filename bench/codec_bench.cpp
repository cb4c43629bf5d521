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
#include <new>
#include <string>
#include <vector>

#include "bench/histogram.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

using namespace opcuad::ua;

// Counts every allocation in the process, to show whether the warm codec loops allocate.
static size_t g_allocations = 0;
void* operator new(size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}

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

// Time per call and allocations per call of f, measured after one warm-up call.
template <class F>
double ns_per_op(F&& f, int iterations, double& allocations_per_op) {
  f();
  const size_t before = g_allocations;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) f();
  auto t1 = std::chrono::steady_clock::now();
  allocations_per_op = static_cast<double>(g_allocations - before) / iterations;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations;
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
    double allocations = 0;
  } cases[4] = {{"encode ReadRequest(100)", {}},
                {"decode ReadRequest(100)", {}},
                {"encode ReadResponse(100)", {}},
                {"decode ReadResponse(100)", {}}};
  bool ok = true;
  for (int r = 0; r < rounds; ++r) {
    auto run = [&](Case& c, auto&& f) { c.samples.push_back(ns_per_op(f, iterations, c.allocations)); };
    run(cases[0], [&] {
      out.clear();
      ok &= encode_to(out, request).is_good();
    });
    run(cases[1], [&] { ok &= decode_from(req_bytes.span(), decoded_req).is_good(); });
    run(cases[2], [&] {
      out.clear();
      ok &= encode_to(out, response).is_good();
    });
    run(cases[3], [&] { ok &= decode_from(resp_bytes.span(), decoded_resp).is_good(); });
  }
  if (!ok || !(decoded_req == request) || !(decoded_resp == response)) {
    std::fprintf(stderr, "codec_bench: round trip failed\n");
    return 1;
  }
  std::printf("codec_bench: %d rounds x %d iterations, median ns per message\n", rounds, iterations);
  std::printf("  request %zu bytes, response %zu bytes\n", req_bytes.size(), resp_bytes.size());
  for (auto& c : cases) {
    std::printf("  %-26s %9.0f ns  %5.2f allocations\n", c.name, opcuad::bench::median(c.samples),
                c.allocations);
  }
  return 0;
}
