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
#include "ua/status_code.hpp"

namespace opcuad::security {

struct ServerIdentity {
  std::vector<uint8_t> certificate;     // DER
  std::array<uint8_t, 20> thumbprint{};  // SHA-1 of the DER (Part 6 §6.7.2.3)
  Pkey private_key;
  Pkey public_key;
};

// The result of validating a peer's certificate chain.
struct CertificateVerdict {
  ua::StatusCode status;         // Good, or the Part 4 §6.1.3 status of the first failed check
  std::string reason;            // for the log
  std::array<uint8_t, 20> thumbprint{};  // of the leaf
  std::string application_uri;   // the leaf's subjectAltName URI
  Pkey public_key;               // the leaf's key (only when Good)
};

// Validates a DER chain (leaf first, certificates concatenated: Part 6 §6.2.3) for use with a policy.
// Called on handshake workers, so implementations are thread-safe.
using CertificateValidator = std::function<CertificateVerdict(std::span<const uint8_t> chain, const Policy& policy)>;

}  // namespace opcuad::security
