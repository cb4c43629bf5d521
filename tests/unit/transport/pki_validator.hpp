#pragma once
// A secure channel's certificate validator over a real Pki, for tests and fuzz targets: the policy's key
// sizes and SHA-1 allowance (Part 7 policy tables), an application certificate, as the daemon validates
// (daemon/channel_security.cpp, which tests and fuzz targets do not link).

#include <cstdint>
#include <span>

#include "transport/security/identity.hpp"
#include "transport/security/pki.hpp"

namespace opcuad::transport::test {

// REQUIRES: `pki` outlives the validator.
inline security::CertificateValidator pki_validator(security::Pki& pki) {
  return [&pki](std::span<const uint8_t> chain, const security::Policy& policy) {
    security::CertificateRequirements req;
    req.min_key_bits = static_cast<int>(policy.min_key_bits);
    req.max_key_bits = static_cast<int>(policy.max_key_bits);
    req.allow_sha1 = policy.sha1_certificates;
    return pki.validate(chain, req);
  };
}

}  // namespace opcuad::transport::test
