// ActivateSession's identity half (Part 4 §5.6.3): the channel's endpoint and its user token policies, the
// anonymous, user name (plaintext or encrypted password) and X509 tokens, the application's signature,
// and whether a session may be re-activated on another channel.
#include <array>
#include <string>
#include <vector>

#include "services/handlers.hpp"
#include "services/login_verifier.hpp"
#include "services/server.hpp"
#include "services/session_crypto.hpp"
#include "services/session_events.hpp"
#include "services/user_token.hpp"
#include "transport/security/certificate.hpp"
#include "transport/security/secret.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;

// What the endpoint(s) the channel came through allow: the configured offers with the channel's policy and
// mode. The transport does not tell which listener accepted the channel, so anonymous access holds only if
// every endpoint with this pair allows it (docs/CONFIGURATION.md, endpoints[].allow_anonymous).
struct ChannelEndpoint {
  bool found = false;
  bool allow_anonymous = true;
  config::SecurityOffer offer;
};

ChannelEndpoint channel_endpoint(const Server& server, const transport::SecureChannel& channel) {
  ChannelEndpoint out;
  out.offer = {channel.security_policy().id, static_cast<config::SecurityMode>(channel.security_mode())};
  for (const auto& e : server.config().endpoints) {
    for (const auto& offer : e.offers) {
      if (offer != out.offer) continue;
      out.found = true;
      out.allow_anonymous &= e.allow_anonymous;
    }
  }
  out.allow_anonymous &= out.found;
  return out;
}

// The user token policy of `type` with this id that the channel's endpoint offers, and the SecurityPolicy
// that protects its secret (Part 4 §7.41: the token policy's, or the channel's when it names none).
const security::Policy* token_policy(const Server& server, const ChannelEndpoint& ep,
                                     const transport::SecureChannel& channel, ua::UserTokenType type,
                                     std::string_view policy_id) {
  if (!ep.found) return nullptr;
  for (const auto& tp : server.user_token_policies(ep.offer, ep.allow_anonymous)) {
    if (tp.token_type != type || tp.policy_id.view() != policy_id) continue;
    if (tp.security_policy_uri.empty()) return &channel.security_policy();
    return security::find_policy(tp.security_policy_uri.view());
  }
  return nullptr;
}

// An X509 user token's certificate, validated and its proof of possession verified: the work of
// check_x509_user() that may run on the crypto pool (chain building and two RSA verifications, for a
// certificate chain the client chose). `leaf_thumbprint` is set when the status is Good.
struct X509Check {
  ua::StatusCode status = status::BadIdentityTokenInvalid;
  std::string reason;  // the validator's, for the log
  std::array<uint8_t, 20> leaf_thumbprint{};
  // The validator refused the certificate: its status and the chain, for the audit record
  // (Server::audit_certificate).
  ua::StatusCode refused = status::Good;
  std::vector<uint8_t> refused_chain;
};

X509Check verify_x509_user(const security::CertificateValidator& validate, const security::Policy& policy,
                           std::span<const uint8_t> server_certificate, std::span<const uint8_t> chain,
                           const ua::SignatureData& signature, std::span<const uint8_t> server_nonce) {
  X509Check out;
  const std::span<const uint8_t> leaf = security::leaf_certificate(chain);
  if (leaf.empty()) return out;
  // The validator's own status (untrusted, expired, revoked, ...) is for the log; the client learns only
  // that the token was refused (Part 4 §5.6.3).
  security::CertificateVerdict verdict = validate(chain, policy);
  if (!verdict.status.is_good()) {
    out.status = status::BadIdentityTokenRejected;
    out.reason = std::string(verdict.status.name()) + ": " + verdict.reason;
    out.refused = verdict.status;
    out.refused_chain.assign(chain.begin(), chain.end());
    return out;
  }
  // Part 4 §7.41.5: proof of possession, a signature over serverCertificate + serverNonce.
  security::Pkey key =
      verdict.public_key ? std::move(verdict.public_key) : security::certificate_public_key(leaf);
  if (!key || signature.algorithm.view() != policy.asymmetric_signature_uri ||
      !security::asymmetric_verify(policy, key.get(), concat(server_certificate, server_nonce),
                                   signature.signature.bytes())) {
    out.status = status::BadUserSignatureInvalid;
    return out;
  }
  out.status = status::Good;
  out.leaf_thumbprint = security::sha1(leaf);
  return out;
}

// The configured user whose certificate this is (on the shard: the users list is the live configuration).
ua::StatusCode x509_user(const Server& server, const std::array<uint8_t, 20>& thumbprint, std::string& user,
                         std::string& reason) {
  for (const auto& u : server.config().users) {
    if (u.certificate_thumbprint == thumbprint) {
      user = u.name;
      return status::Good;
    }
  }
  reason = "trusted, but no configured user has this certificate";
  return status::BadIdentityTokenRejected;
}

}  // namespace

ChannelCredentials ChannelCredentials::of(const transport::SecureChannel& channel) {
  ChannelCredentials c;
  c.mode = channel.security_mode();
  const std::span<const uint8_t> certificate = channel.client_certificate();
  if (!certificate.empty()) c.certificate = security::sha1(certificate);
  return c;
}

ua::StatusCode session_rebind_refusal(const Session& session, const ChannelCredentials& credentials) {
  // MessageSecurityMode orders None < Sign < SignAndEncrypt (Part 4 §7.20).
  if (credentials.certificate != session.creator_certificate ||
      static_cast<int>(credentials.mode) < static_cast<int>(session.creator_mode)) {
    return status::BadSecurityChecksFailed;
  }
  return status::Good;
}

ua::StatusCode check_client_signature(const Server& server, const transport::SecureChannel& channel,
                                      const ua::SignatureData& signature,
                                      std::span<const uint8_t> server_nonce) {
  if (!secured(channel)) return status::Good;  // Part 4 §5.6.3: no signature on SecurityPolicy None
  const security::Policy& policy = channel.security_policy();
  const security::ServerIdentity* identity = server.identity();
  EVP_PKEY* key = channel.client_public_key();
  if (!identity || !key || signature.algorithm.view() != policy.asymmetric_signature_uri ||
      !security::asymmetric_verify(policy, key, concat(identity->certificate, server_nonce),
                                   signature.signature.bytes())) {
    return status::BadApplicationSignatureInvalid;
  }
  return status::Good;
}

void resolve_identity(Server& server, ShardState& shard, transport::SecureChannel& channel,
                      ua::ActivateSessionRequest& request, std::span<const uint8_t> server_nonce,
                      IdentityDone done) {
  ua::ExtensionObject& token = request.user_identity_token;
  const ChannelEndpoint ep = channel_endpoint(server, channel);
  // Every refusal is an operator event with the claimed identity and the address (never the password):
  // the user name, or the user certificate's thumbprint and why it was refused.
  std::string claimed_name;
  if (const auto* login = token.get<ua::UserNameIdentityToken>()) {
    claimed_name = std::string(login->user_name.view().substr(0, transport::kMaxFieldValue));
  } else if (const auto* x509 = token.get<ua::X509IdentityToken>()) {
    const auto leaf = security::leaf_certificate(x509->certificate_data.bytes());
    claimed_name =
        leaf.empty() ? "certificate (not DER)" : "certificate " + security::to_hex(security::sha1(leaf));
  }
  auto reason = std::make_shared<std::string>();
  IdentityDone then = [&server, peer = channel.peer_address(), user = std::move(claimed_name), reason,
                       done = std::move(done)](ua::StatusCode result, std::string who) {
    if (!result.is_good()) report_login_failed(server.events(), peer, user, result, *reason);
    done(result, std::move(who));
  };
  if (token.is_empty()) {
    // Part 4 §5.6.3: a null token means anonymous.
    if (!ep.allow_anonymous) return then(status::BadIdentityTokenRejected, {});
    return then(status::Good, {});
  }
  if (const auto* anon = token.get<ua::AnonymousIdentityToken>()) {
    if (!ep.allow_anonymous) return then(status::BadIdentityTokenRejected, {});
    if (!anon->policy_id.empty() && anon->policy_id.view() != "anonymous")
      return then(status::BadIdentityTokenInvalid, {});
    return then(status::Good, {});
  }
  if (auto* login = token.get_mut<ua::UserNameIdentityToken>()) {
    // The secret (a password in clear on a None token policy) is taken out of the request, which the
    // request's buffers would otherwise keep.
    security::Secret secret(login->password.view());
    security::wipe(login->password.str_mut());
    const security::Policy* policy =
        token_policy(server, ep, channel, ua::UserTokenType::UserName, login->policy_id.view());
    if (!policy) return then(status::BadIdentityTokenInvalid, {});
    // The password check runs on the verifier's threads; `then` comes back to this shard, which counts
    // a refused login (a full queue, BadServerTooBusy, is no verdict on the password).
    auto verify = [&server, &shard, peer = channel.peer_address(),
                   user = std::string(login->user_name.view()), then](security::Secret password) mutable {
      server.logins().submit(std::move(peer), std::move(user), std::move(password), *shard.context,
                             [&shard, then = std::move(then)](ua::StatusCode result, std::string who) {
                               if (!result.is_good() && !result.is(status::BadServerTooBusy)) {
                                 stat_add(shard.stats.failed_logins);
                               }
                               then(result, std::move(who));
                             });
    };
    if (policy->id == security::PolicyId::None) {
      // Offered only with security.allow_plaintext_passwords on a None endpoint (discovery_service.cpp).
      if (!login->encryption_algorithm.empty()) return then(status::BadIdentityTokenInvalid, {});
      return verify(std::move(secret));
    }
    // Part 4 §7.41: the secret is encrypted with the token policy's algorithm; a plaintext password (no
    // encryptionAlgorithm) or another algorithm is refused before anything is decrypted. The RSA
    // decryption is private-key work: off this shard.
    const security::ServerIdentity* identity = server.identity();
    if (!identity || login->encryption_algorithm.view() != policy->asymmetric_encryption_uri) {
      return then(status::BadIdentityTokenInvalid, {});
    }
    struct Decrypted {
      ua::StatusCode status;
      security::Secret password;
    };
    // The decryption counts against the client address like a password check (LoginVerifier): a locked-out
    // address costs no RSA work, and a token that does not decrypt or parse is a failed login.
    if (!server.logins().begin_attempt(channel.peer_address())) return then(status::BadUserAccessDenied, {});
    auto decrypt = [policy, key = identity->private_key,
                    secret = std::make_shared<security::Secret>(std::move(secret)),
                    nonce = std::vector<uint8_t>(server_nonce.begin(), server_nonce.end())] {
      Decrypted d;
      d.status = decrypt_legacy_secret(*policy, key.get(), secret->bytes(), nonce, d.password);
      return d;
    };
    auto decrypted = [&server, &shard, peer = channel.peer_address(), then,
                      verify = std::move(verify)](Decrypted d) mutable {
      if (!d.status.is_good()) {
        server.logins().end_attempt(peer, LoginVerifier::Outcome::Failed);
        stat_add(shard.stats.failed_logins);
        return then(d.status, {});
      }
      server.logins().end_attempt(peer, LoginVerifier::Outcome::Passed);
      verify(std::move(d.password));
    };
    if (!offload(server, shard, std::move(decrypt), std::move(decrypted))) {
      server.logins().end_attempt(channel.peer_address(),
                                  LoginVerifier::Outcome::Passed);  // nothing was tried
      then(status::BadServerTooBusy, {});
    }
    return;
  }
  if (const auto* x509 = token.get<ua::X509IdentityToken>()) {
    const security::Policy* policy =
        token_policy(server, ep, channel, ua::UserTokenType::Certificate, x509->policy_id.view());
    if (!policy || policy->id == security::PolicyId::None) return then(status::BadIdentityTokenInvalid, {});
    const security::ServerIdentity* identity = server.identity();
    if (!server.user_certificate_validator() || !identity) return then(status::BadIdentityTokenInvalid, {});
    // Chain building and the proof's verification are public-key work on a chain the client chose: off
    // this shard, like the password's decryption.
    auto check = [validate = server.user_certificate_validator(), policy,
                  server_certificate = identity->certificate,
                  chain = std::vector<uint8_t>(x509->certificate_data.bytes().begin(),
                                               x509->certificate_data.bytes().end()),
                  signature = request.user_token_signature,
                  nonce = std::vector<uint8_t>(server_nonce.begin(), server_nonce.end())] {
      return verify_x509_user(validate, *policy, server_certificate, chain, signature, nonce);
    };
    auto checked = [&server, then, reason](X509Check c) {
      if (!c.refused.is_good())
        server.audit_certificate(c.refused_chain, c.refused, "Session/ActivateSession");
      if (!c.status.is_good()) {
        *reason = std::move(c.reason);
        return then(c.status, {});
      }
      std::string user;
      const ua::StatusCode s = x509_user(server, c.leaf_thumbprint, user, *reason);
      then(s, s.is_good() ? std::move(user) : std::string());
    };
    if (!offload(server, shard, std::move(check), std::move(checked))) then(status::BadServerTooBusy, {});
    return;
  }
  then(status::BadIdentityTokenInvalid, {});
}

}  // namespace opcuad::services
