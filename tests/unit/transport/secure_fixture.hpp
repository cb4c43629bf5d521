#pragma once
// A secured channel setup for transport tests: the fixed test keys of tests/fuzz/fuzz_keys.hpp (no RSA key
// generation per test), a TransportConfig offering one policy and mode whose validator trusts exactly the
// fixed client certificate, and a SecureTestClient for it.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include "tests/fuzz/fuzz_key_material.hpp"
#include "tests/unit/transport/channel_harness.hpp"
#include "tests/unit/transport/secure_test_client.hpp"

namespace opcuad::transport::test {

inline const security::ServerIdentity& fixed_server_identity() {
  static const security::ServerIdentity id = [] {
    const auto& s = fuzz::fuzz_server();
    security::ServerIdentity i;
    i.certificate = s.certificate;
    i.thumbprint = s.thumbprint;
    i.private_key = s.private_key;
    i.public_key = s.public_key;
    return i;
  }();
  return id;
}

// Trusts the fixed client certificate (sent alone) and nothing else.
inline security::CertificateVerdict trust_fixed_client(std::span<const uint8_t> chain,
                                                       const security::Policy&) {
  security::CertificateVerdict v;
  const auto& c = fuzz::fuzz_client();
  if (!std::equal(chain.begin(), chain.end(), c.certificate.begin(), c.certificate.end())) {
    v.status = ua::status::BadCertificateUntrusted;
    v.reason = "not the fixed test client";
    return v;
  }
  v.status = ua::status::Good;
  v.thumbprint = c.thumbprint;
  v.thumbprint_hex = security::to_hex(c.thumbprint);
  v.public_key = c.public_key;
  return v;
}

inline TransportConfig fixed_secured_config(const security::Policy& p, ua::MessageSecurityMode mode,
                                            HandshakePool* handshakes = nullptr) {
  TransportConfig c;
  c.security_offers = {{&p, mode}};
  c.identity = &fixed_server_identity();
  c.validate_certificate = trust_fixed_client;
  c.handshakes = handshakes;
  return c;
}

inline SecureTestClient fixed_client(const security::Policy& p, ua::MessageSecurityMode mode) {
  const auto& c = fuzz::fuzz_client();
  const auto& s = fuzz::fuzz_server();
  return SecureTestClient(p, mode, {c.private_key.get(), c.certificate, s.public_key.get(), s.thumbprint});
}

// Turns the harness's loop until `done` (handshake workers post their results from other threads), at most
// `limit`; false on timeout.
inline bool run_until(Harness& h, const std::function<bool()>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (h.ctx.restart(), h.ctx.poll() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The server's output split into chunks by their size fields.
inline std::vector<std::string> output_chunks(const std::string& out) {
  std::vector<std::string> r;
  size_t pos = 0;
  while (pos + 8 <= out.size()) {
    uint32_t n;
    std::memcpy(&n, out.data() + pos + 4, 4);
    if (n < 8 || n > out.size() - pos) break;
    r.push_back(out.substr(pos, n));
    pos += n;
  }
  return r;
}

inline ua::StatusCode error_status(const std::string& chunk) {
  uint32_t code = 0;
  if (chunk.size() >= 12) std::memcpy(&code, chunk.data() + 8, 4);
  return ua::StatusCode(code);
}

}  // namespace opcuad::transport::test
