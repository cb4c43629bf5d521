#include "daemon/channel_security.hpp"

#include "transport/security/asymmetric.hpp"

namespace opcuad {

std::vector<transport::SecurityOffer> security_offers(const config::Endpoint& endpoint) {
  std::vector<transport::SecurityOffer> offers;
  for (const config::SecurityOffer& o : endpoint.offers)
    offers.push_back({&security::policy(o.policy), static_cast<ua::MessageSecurityMode>(o.mode)});
  return offers;
}

security::ServerIdentity server_identity(const security::Pki& pki) {
  security::ServerIdentity id;
  id.certificate = pki.certificate_der();
  id.thumbprint = pki.thumbprint();
  id.private_key = security::share_pkey(pki.private_key());
  id.public_key = security::certificate_public_key(id.certificate);
  return id;
}

security::CertificateValidator certificate_validator(security::Pki& pki, security::CertificateUse use) {
  return [&pki, use](std::span<const uint8_t> chain, const security::Policy& policy) {
    security::CertificateRequirements req;
    req.min_key_bits = static_cast<int>(policy.min_key_bits);
    req.max_key_bits = static_cast<int>(policy.max_key_bits);
    req.allow_sha1 = policy.sha1_certificates;
    req.use = use;
    return pki.validate(chain, req);
  };
}

}  // namespace opcuad
