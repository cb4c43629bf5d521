// What the Server tells about itself for discovery (Part 4 §5.4, §7.2, §7.41): its ApplicationDescription,
// its endpoints with their user token policies, and the configuration problems that stop it from offering
// them. The GetEndpoints and FindServers handlers are discovery_service.cpp.
#include "services/server.hpp"
#include "ua/endpoint_url.hpp"

namespace opcuad::services {

namespace {

// The URLs to publish for a configured endpoint URL (Part 4 §5.4.4): a wildcard host (0.0.0.0, [::])
// becomes the configured advertised host name, and the host the client dialled is listed as well, so the
// client always finds the address it used. `dialled` comes from the client and may be anything.
std::vector<std::string> advertised_urls(const std::string& configured, std::string_view dialled,
                                         std::string_view advertised_host) {
  const auto url = ua::parse_endpoint_url(configured);
  if (!url || !url->is_wildcard()) return {configured};
  const auto client = ua::parse_endpoint_url(dialled);
  // A client that dialled a wildcard itself (or nothing usable) names no host worth publishing.
  const std::string_view client_host = client && !client->is_wildcard() ? client->host : std::string_view{};
  if (advertised_host.size() > 2 && advertised_host.front() == '[' && advertised_host.back() == ']') {
    advertised_host = advertised_host.substr(1, advertised_host.size() - 2);
  }
  std::vector<std::string> urls;
  if (!advertised_host.empty()) urls.push_back(ua::with_host(*url, advertised_host));
  if (!client_host.empty() && client_host != advertised_host)
    urls.push_back(ua::with_host(*url, client_host));
  if (urls.empty()) urls.push_back(ua::with_host(*url, "localhost"));
  return urls;
}

}  // namespace

// Part 4 §7.2 (ApplicationDescription.discoveryUrls): the addresses a client can reach the server's
// discovery endpoints at, so a wildcard listening host is replaced exactly as in GetEndpoints.
ua::ApplicationDescription Server::application_description(std::string_view dialled) const {
  ua::ApplicationDescription d;
  d.application_uri = ua::String(config_.application_uri);
  d.product_uri = ua::String(config_.product_uri);
  d.application_name = ua::LocalizedText{ua::String("en"), ua::String(config_.application_name)};
  d.application_type = ua::ApplicationType::Server;
  for (const auto& e : config_.endpoints) {
    for (auto& url : advertised_urls(e.url, dialled, config_.advertised_hostname)) {
      ua::String u(url);
      bool seen = false;
      for (const auto& have : d.discovery_urls) seen |= have == u;
      if (!seen) d.discovery_urls.push_back(std::move(u));
    }
  }
  return d;
}

const security::Policy& Server::user_token_policy() const noexcept {
  const security::Policy* best = nullptr;
  for (const auto& e : config_.endpoints) {
    for (const auto& offer : e.offers) {
      const security::Policy& p = security::policy(offer.policy);
      if (p.id == security::PolicyId::None || p.deprecated) continue;
      if (!best || p.security_level > best->security_level) best = &p;
    }
  }
  return best ? *best : security::policy(security::PolicyId::Basic256Sha256);
}

// Part 4 §7.42 (UserTokenPolicy) and §7.41: a token carrying a secret names the SecurityPolicy that
// encrypts it. On an endpoint that encrypts nothing of its own (None) or only signs (Sign) that is a secure
// policy, so the client encrypts the password with the server certificate's key (the legacy encrypted
// secret, §7.41.2.2); on a SignAndEncrypt endpoint it is the channel's policy, named explicitly. The
// policy ids are "<token type>_<policy name>": stable (clients cache endpoints) and distinct per token type
// and policy, and what ActivateSession decodes (session_service.cpp).
std::vector<ua::UserTokenPolicy> Server::user_token_policies(const config::SecurityOffer& offer,
                                                             bool allow_anonymous) const {
  std::vector<ua::UserTokenPolicy> out;
  if (allow_anonymous) {
    out.push_back(ua::UserTokenPolicy{ua::String("anonymous"), ua::UserTokenType::Anonymous, {}, {}, {}});
  }
  const security::Policy& secret_policy =
      offer.mode == config::SecurityMode::SignAndEncrypt || offer.mode == config::SecurityMode::Sign
          ? security::policy(offer.policy)
          : user_token_policy();
  bool passwords = false, certificates = false;
  for (const auto& u : config_.users) {
    passwords |= !u.password_hash.empty();
    certificates |= u.certificate_thumbprint.has_value();
  }
  if (passwords && identity_) {
    out.push_back(ua::UserTokenPolicy{ua::String("username_" + std::string(secret_policy.name)),
                                      ua::UserTokenType::UserName,
                                      {},
                                      {},
                                      ua::String(std::string(secret_policy.uri))});
  }
  // A password in clear only where the operator asked for it, and only where the channel is None.
  if (passwords && offer.mode == config::SecurityMode::None && config_.security.allow_plaintext_passwords) {
    const security::Policy& none = security::policy(security::PolicyId::None);
    out.push_back(ua::UserTokenPolicy{
        ua::String("username_None"), ua::UserTokenType::UserName, {}, {}, ua::String(std::string(none.uri))});
  }
  if (certificates && identity_ && user_validator_) {
    out.push_back(ua::UserTokenPolicy{ua::String("x509_" + std::string(secret_policy.name)),
                                      ua::UserTokenType::Certificate,
                                      {},
                                      {},
                                      ua::String(std::string(secret_policy.uri))});
  }
  return out;
}

std::vector<std::string> Server::security_problems() const {
  std::vector<std::string> problems;
  if (identity_) return problems;
  for (const auto& e : config_.endpoints) {
    for (const auto& offer : e.offers) {
      if (offer.policy != security::PolicyId::None) {
        problems.push_back("endpoint " + e.url + " offers SecurityPolicy " +
                           std::string(security::policy(offer.policy).name) +
                           " but the server has no certificate");
      }
    }
  }
  bool passwords = false;
  for (const auto& u : config_.users) passwords |= !u.password_hash.empty();
  if (passwords && !config_.security.allow_plaintext_passwords) {
    problems.push_back(
        "users with passwords need a server certificate to encrypt them (or "
        "security.allow_plaintext_passwords)");
  }
  return problems;
}

// Part 4 §5.4.4 and §5.6.2: one EndpointDescription per URL and policy / mode pair; CreateSession returns
// the same list as serverEndpoints.
std::vector<ua::EndpointDescription> Server::endpoints(std::string_view dialled) const {
  std::vector<ua::EndpointDescription> out;
  const ua::ApplicationDescription app = application_description(dialled);
  const ua::ByteString certificate =
      identity_ ? ua::ByteString::from_bytes(identity_->certificate) : ua::ByteString();
  for (const auto& e : config_.endpoints) {
    for (const auto& url : advertised_urls(e.url, dialled, config_.advertised_hostname)) {
      for (const auto& offer : e.offers) {
        const security::Policy& policy = security::policy(offer.policy);
        ua::EndpointDescription d;
        d.endpoint_url = ua::String(url);
        d.server = app;
        d.server.discovery_urls = {d.endpoint_url};
        d.server_certificate = certificate;
        d.security_mode = static_cast<ua::MessageSecurityMode>(offer.mode);
        d.security_policy_uri = ua::String(std::string(policy.uri));
        d.user_identity_tokens = user_token_policies(offer, e.allow_anonymous);
        d.transport_profile_uri = ua::String(kTcpBinaryProfile);
        // Part 4 §7.14: higher is more secure. The policy's rank, and within a policy SignAndEncrypt
        // above Sign; None is 0.
        d.security_level = static_cast<uint8_t>(policy.security_level * 2 +
                                                (offer.mode == config::SecurityMode::SignAndEncrypt ? 1 : 0));
        out.push_back(std::move(d));
      }
    }
  }
  return out;
}

}  // namespace opcuad::services
