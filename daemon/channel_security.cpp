#include "daemon/channel_security.hpp"

#include "transport/security/asymmetric.hpp"

namespace opcuad {

std::vector<transport::SecurityOffer> security_offers(const config::Endpoint& endpoint) {
  std::vector<transport::SecurityOffer> offers;
  for (const auto& name : endpoint.security_policies) {
    const security::Policy* p = security::find_policy(name);
    if (p == nullptr) continue;
    for (const auto& mode : endpoint.security_modes) {
      if (p->id == security::PolicyId::None && mode == "None") {
        offers.push_back({p, ua::MessageSecurityMode::None});
      } else if (p->id != security::PolicyId::None && mode == "Sign") {
        offers.push_back({p, ua::MessageSecurityMode::Sign});
      } else if (p->id != security::PolicyId::None && mode == "SignAndEncrypt") {
        offers.push_back({p, ua::MessageSecurityMode::SignAndEncrypt});
      }
    }
  }
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

security::CertificateValidator application_certificate_validator(security::Pki& pki) {
  return [&pki](std::span<const uint8_t> chain, const security::Policy& policy) {
    security::CertificateRequirements req;
    req.min_key_bits = static_cast<int>(policy.min_key_bits);
    req.max_key_bits = static_cast<int>(policy.max_key_bits);
    req.allow_sha1 = policy.sha1_certificates;
    req.use = security::CertificateUse::Application;
    return pki.validate(chain, req);
  };
}

}  // namespace opcuad
