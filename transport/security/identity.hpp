#pragma once
// The server's application instance certificate and private key (Part 4 §6.1), as the secure channel and
// the session services use them. The PKI (pki.hpp) loads or creates them at start; they do not change while
// the daemon runs (a regenerated certificate takes effect at the next start).

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "transport/security/crypto.hpp"
#include "transport/security/pki.hpp"
#include "ua/status_code.hpp"

namespace opcuad::security {

struct ServerIdentity {
  std::vector<uint8_t> certificate;      // DER
  std::array<uint8_t, 20> thumbprint{};  // SHA-1 of the DER (Part 6 §6.7.2.3)
  Pkey private_key;
  Pkey public_key;
};

// Validates a DER chain (leaf first, certificates concatenated: Part 6 §6.2.3) for use with a policy.
// Called on handshake workers, so implementations are thread-safe.
using CertificateValidator =
    std::function<CertificateVerdict(std::span<const uint8_t> chain, const Policy& policy)>;

}  // namespace opcuad::security
