#pragma once
// What each listener's secure channels need from the configuration and the PKI (Part 6 §6.7): the policy
// and mode pairs the endpoint offers, the server's certificate and key, and the client certificate check.

#include <vector>

#include "config/config.hpp"
#include "transport/config.hpp"
#include "transport/security/identity.hpp"
#include "transport/security/pki.hpp"

namespace opcuad {

// The policy and mode pairs the endpoint offers, as the channel checks them.
std::vector<transport::SecurityOffer> security_offers(const config::Endpoint& endpoint);

// The server's identity as the channel and the session services use it (the PKI keeps ownership).
security::ServerIdentity server_identity(const security::Pki& pki);

// Validates a peer's certificate against the PKI's application or user trust list, with the policy's limits
// on key length and signature algorithm (Part 7).
security::CertificateValidator certificate_validator(security::Pki& pki, security::CertificateUse use);

}  // namespace opcuad
