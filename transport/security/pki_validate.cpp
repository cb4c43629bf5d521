// Pki::validate(): the certificate validation of Part 4 §6.1.3 (Table 106), in its order:
//   1 structure            BadCertificateInvalid
//   2 build the chain      BadCertificateChainIncomplete (an issuer is in none of: the peer's chain,
//                          trusted/certs, issuers/certs)
//   3 signatures           BadCertificateInvalid
//   4 security policy      BadCertificatePolicyCheckFailed (key type and size, signature hash)
//   5 trust list           BadCertificateUntrusted (neither the leaf nor a CA of its chain is trusted)
//   6 validity period      BadCertificateTimeInvalid / BadCertificateIssuerTimeInvalid
//   7 host name            not checked: a server validates clients, which have no host name to match
//   8 URI                  BadCertificateUriInvalid
//   9 certificate usage    BadCertificateUseNotAllowed / BadCertificateIssuerUseNotAllowed
//  10 find revocation list BadCertificateRevocationUnknown / BadCertificateIssuerRevocationUnknown
//  11 revocation check     BadCertificateRevoked / BadCertificateIssuerRevoked
// Processing stops at the first failure. A self-signed leaf has no issuer and so needs no CRL. A CRL past its
// nextUpdate (or before its thisUpdate) counts for step 11 (what it lists stays revoked) but not for step 10:
// a certificate it does not list has an unknown revocation status.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/objects.h>
#include <openssl/x509v3.h>

#include "transport/security/pki.hpp"
#include "transport/security/pki_store.hpp"

namespace opcuad::security {

namespace {

namespace st = ua::status;

// More certificates than any real chain has (leaf, one or two intermediates, root); a longer one is
// refused before any signature is checked.
constexpr size_t kMaxChainLength = 8;

std::string label(X509* cert) {
  return "\"" + name_text(X509_get_subject_name(cert)) + "\"";
}

bool same_certificate(X509* a, X509* b) {
  return X509_cmp(a, b) == 0;
}

bool contains(const std::vector<X509Ptr>& list, X509* cert) {
  for (const auto& c : list) {
    if (same_certificate(c.get(), cert)) return true;
  }
  return false;
}

// What building one chain may cost, bounded before any signature is checked: the chain comes from a peer
// not yet authenticated, with up to kMaxChainLength - 1 certificates of its choosing. A candidate issuer's
// key must be RSA of the policy's minimum size up to kMaxCaKeyBits, with a public exponent of at most
// kMaxPublicExponentBits (a larger exponent makes a verification cost what a private-key operation
// does); and at most kMaxSignatureChecks signatures are verified (look-alike issuers, same name and
// another key, cost one each). docs/SECURITY.md gives the worst chain's cost.
constexpr int kMaxCaKeyBits = 8192;
constexpr int kMaxPublicExponentBits = 32;
constexpr uint32_t kMaxSignatureChecks = 16;

// Why a CA's key may not be used to verify a signature, or nullptr.
std::string issuer_key_problem(EVP_PKEY* key, int min_bits) {
  if (!key) return "no readable key";
  const int base = EVP_PKEY_get_base_id(key);
  if (base != EVP_PKEY_RSA && base != EVP_PKEY_RSA_PSS) return "a key that is not an RSA key";
  const int bits = EVP_PKEY_get_bits(key);
  if (bits < min_bits || bits > kMaxCaKeyBits) {
    return "a " + std::to_string(bits) + "-bit key (" + std::to_string(min_bits) + ".." +
           std::to_string(kMaxCaKeyBits) + " bits to verify a certificate's signature)";
  }
  BIGNUM* e = nullptr;
  if (EVP_PKEY_get_bn_param(key, OSSL_PKEY_PARAM_RSA_E, &e) != 1 || e == nullptr)
    return "no readable exponent";
  const int e_bits = BN_num_bits(e);
  BN_free(e);
  if (e_bits > kMaxPublicExponentBits) return "a " + std::to_string(e_bits) + "-bit public exponent";
  return {};
}

// One signature check within the budget: false without verifying once the budget is spent.
enum class Verified { Yes, No, OverBudget };
Verified verify_within(X509* cert, EVP_PKEY* key, uint32_t& checks) {
  if (checks == kMaxSignatureChecks) return Verified::OverBudget;
  ++checks;
  return X509_verify(cert, key) == 1 ? Verified::Yes : Verified::No;
}

// The issuer of `cert` among the candidates: same name, an acceptable key, and that key verifies cert's
// signature. On nullptr, `miss` says why: no candidate of that name, only wrong signatures, a refused key
// (`why` names it) or the budget of signature checks spent.
enum class Miss { NoName, BadSignature, RefusedKey, OverBudget };
X509* find_issuer(X509* cert, const std::vector<X509*>& candidates, int min_key_bits, uint32_t& checks,
                  Miss& miss, std::string& why) {
  const X509_NAME* issuer = X509_get_issuer_name(cert);
  miss = Miss::NoName;
  for (X509* c : candidates) {
    if (c == cert || X509_NAME_cmp(X509_get_subject_name(c), issuer) != 0) continue;
    EVP_PKEY* key = X509_get0_pubkey(c);
    if (std::string problem = issuer_key_problem(key, min_key_bits); !problem.empty()) {
      if (miss == Miss::NoName) {
        miss = Miss::RefusedKey;
        why = label(c) + " has " + problem;
      }
      continue;
    }
    switch (verify_within(cert, key, checks)) {
      case Verified::Yes:
        return c;
      case Verified::OverBudget:
        miss = Miss::OverBudget;
        return nullptr;
      case Verified::No:
        miss = Miss::BadSignature;
        break;
    }
  }
  return nullptr;
}

// Part 7: the policies sign certificates with SHA-256 (or stronger); SHA-1 only for the deprecated
// policies; never MD5 or weaker. An RSA-PSS signature names its hash in its parameters, which
// X509_get_signature_info reads.
const char* signature_problem(X509* cert, bool allow_sha1) {
  int md = NID_undef, pk = NID_undef;
  if (OBJ_find_sigid_algs(X509_get_signature_nid(cert), &md, &pk) != 1)
    return "an unknown signature algorithm";
  if (pk != NID_rsaEncryption && pk != NID_rsassaPss) return "a signature algorithm that is not RSA";
  if (pk == NID_rsassaPss && X509_get_signature_info(cert, &md, nullptr, nullptr, nullptr) != 1)
    return "RSA-PSS parameters that do not parse";
  switch (md) {
    case NID_sha256:
    case NID_sha384:
    case NID_sha512:
      return nullptr;
    case NID_sha1:
      return allow_sha1 ? nullptr : "a SHA-1 signature (allowed only with the deprecated policies)";
    default:
      return "a signature hash weaker than SHA-256";
  }
}

// Whether a CRL speaks for now (RFC 5280 §5.1.2.4, §5.1.2.5): issued already (thisUpdate passed) and not
// yet due to be replaced (nextUpdate, when it has one, still to come). After nextUpdate the CA may have
// revoked certificates the list does not show. A time that does not parse counts as not current.
bool crl_current(X509_CRL* crl) {
  const ASN1_TIME* this_update = X509_CRL_get0_lastUpdate(crl);
  const ASN1_TIME* next_update = X509_CRL_get0_nextUpdate(crl);
  if (this_update == nullptr || X509_cmp_current_time(this_update) >= 0) return false;
  return next_update == nullptr || X509_cmp_current_time(next_update) > 0;
}

std::string crl_time_text(const ASN1_TIME* t) {
  const auto time = t ? asn1_time(t) : std::nullopt;
  return time ? iso_time(*time) : std::string("an unreadable time");
}

// The CRLs of `ca`: issued under its name and signed by its key. A CA's lists overlap (an operator may
// leave the old list beside the new, a CA may publish a new one before the old one expires), so none is
// chosen over the others by where it lies: a certificate any of them lists is revoked (a CA does not take
// a revocation back), and what none lists is known not to be revoked only while the newest one (the
// latest thisUpdate that has passed) is current.
struct CaCrls {
  std::vector<X509_CRL*> lists;
  X509_CRL* newest = nullptr;  // nullptr: the CA has no CRL
  bool current = false;        // newest is current (crl_current)
};
CaCrls find_crls(X509* ca, const std::vector<X509CrlPtr>& crls) {
  const X509_NAME* name = X509_get_subject_name(ca);
  EVP_PKEY* key = X509_get0_pubkey(ca);
  CaCrls found;
  bool newest_issued = false;
  for (const auto& crl : crls) {
    if (X509_NAME_cmp(X509_CRL_get_issuer(crl.get()), name) != 0) continue;
    if (!key || X509_CRL_verify(crl.get(), key) != 1) continue;
    found.lists.push_back(crl.get());
    // A list not issued yet (thisUpdate to come, or unreadable) is newest only when no issued one exists.
    const ASN1_TIME* this_update = X509_CRL_get0_lastUpdate(crl.get());
    const bool issued = this_update != nullptr && X509_cmp_current_time(this_update) < 0;
    if (!found.newest || (issued && !newest_issued) ||
        (issued == newest_issued && issued &&
         ASN1_TIME_compare(this_update, X509_CRL_get0_lastUpdate(found.newest)) > 0)) {
      found.newest = crl.get();
      newest_issued = issued;
    }
  }
  found.current = found.newest != nullptr && crl_current(found.newest);
  return found;
}

bool is_revoked(X509_CRL* crl, X509* cert) {
  X509_REVOKED* entry = nullptr;
  return X509_CRL_get0_by_cert(crl, &entry, cert) == 1;
}

}  // namespace

CertificateVerdict Pki::validate(std::span<const uint8_t> der_chain, const CertificateRequirements& req) {
  CertificateVerdict v;
  auto fail = [&v](ua::StatusCode status, std::string reason) {
    v.status = status;
    v.reason = std::move(reason);
    return v;
  };

  // 1: structure.
  const auto parsed = parse_der_chain(der_chain, kMaxChainLength);
  if (parsed.empty()) {
    return fail(st::BadCertificateInvalid,
                der_chain.empty()
                    ? "no certificate"
                    : "not a sequence of at most " + std::to_string(kMaxChainLength) + " DER certificates");
  }
  X509* leaf = parsed.front().get();
  v.thumbprint = security::thumbprint(leaf);
  v.thumbprint_hex = to_hex(v.thumbprint);
  v.application_uri = san_uri(leaf);
  v.subject = name_text(X509_get_subject_name(leaf));
  const std::string who = label(leaf) + " (" + v.thumbprint_hex + ")";

  maybe_reload();
  const auto store = current_store();
  if (!store) return fail(st::BadInternalError, "the PKI is not open");
  const TrustList& lists = req.use == CertificateUse::User ? store->user : store->application;

  // 2 and 3: the chain up to a self-signed root, each link's signature checked.
  std::vector<X509*> candidates;
  for (size_t i = 1; i < parsed.size(); ++i) candidates.push_back(parsed[i].get());
  for (const auto& c : lists.trusted) candidates.push_back(c.get());
  for (const auto& c : lists.issuers) candidates.push_back(c.get());
  std::vector<X509*> chain{leaf};
  while (true) {
    X509* cert = chain.back();
    const bool own_name = X509_NAME_cmp(X509_get_subject_name(cert), X509_get_issuer_name(cert)) == 0;
    if (own_name) {
      // A self-signed certificate ends the chain (a root, or a self-signed application certificate). Its
      // own key is checked like an issuer's before it verifies anything.
      EVP_PKEY* own_key = X509_get0_pubkey(cert);
      if (std::string problem = issuer_key_problem(own_key, req.min_key_bits); !problem.empty()) {
        return fail(st::BadCertificatePolicyCheckFailed, label(cert) + ": self-issued with " + problem);
      }
      const Verified self = verify_within(cert, own_key, v.signature_checks);
      if (self == Verified::OverBudget) {
        return fail(st::BadCertificateInvalid, who + ": more than " + std::to_string(kMaxSignatureChecks) +
                                                   " signature checks to build the chain");
      }
      if (self == Verified::Yes) break;
      // Its own name as issuer but not its own signature: a forged or corrupted self-signed certificate
      // unless a CA of the same name signed it (rare; looked for below).
    }
    if (chain.size() == kMaxChainLength) {
      return fail(st::BadCertificateChainIncomplete,
                  who + ": chain longer than " + std::to_string(kMaxChainLength));
    }
    Miss miss = Miss::NoName;
    std::string why;
    X509* issuer = find_issuer(cert, candidates, req.min_key_bits, v.signature_checks, miss, why);
    if (!issuer) {
      if (miss == Miss::OverBudget) {
        return fail(st::BadCertificateInvalid, who + ": more than " + std::to_string(kMaxSignatureChecks) +
                                                   " signature checks to build the chain");
      }
      if (miss == Miss::RefusedKey) {
        return fail(st::BadCertificatePolicyCheckFailed, label(cert) + ": its issuer " + why);
      }
      if (miss == Miss::BadSignature || own_name) {
        return fail(st::BadCertificateInvalid,
                    label(cert) + ": its signature does not verify with its issuer's key");
      }
      return fail(st::BadCertificateChainIncomplete,
                  label(cert) + ": issuer \"" + name_text(X509_get_issuer_name(cert)) +
                      "\" is in neither the chain sent, trusted/certs nor issuers/certs");
    }
    for (X509* seen : chain) {
      if (seen == issuer) return fail(st::BadCertificateChainIncomplete, who + ": the chain loops");
    }
    chain.push_back(issuer);
  }
  const size_t n = chain.size();  // chain[n-1] is the self-signed root

  // 4: what the SecurityPolicy allows: an RSA key of the policy's size, SHA-256 signatures.
  EVP_PKEY* leaf_key = X509_get0_pubkey(leaf);
  const int base = leaf_key ? EVP_PKEY_get_base_id(leaf_key) : EVP_PKEY_NONE;
  if (base != EVP_PKEY_RSA && base != EVP_PKEY_RSA_PSS) {
    return fail(st::BadCertificatePolicyCheckFailed, who + ": the key is not an RSA key");
  }
  const int bits = EVP_PKEY_get_bits(leaf_key);
  if (bits < req.min_key_bits || bits > req.max_key_bits) {
    return fail(st::BadCertificatePolicyCheckFailed,
                who + ": a " + std::to_string(bits) + "-bit key, the policy needs " +
                    std::to_string(req.min_key_bits) + ".." + std::to_string(req.max_key_bits));
  }
  for (size_t i = 0; i < n; ++i) {
    // A root's signature over itself proves nothing anyone relies on; the leaf's always counts.
    if (i == n - 1 && i != 0) break;
    if (const char* problem = signature_problem(chain[i], req.allow_sha1)) {
      return fail(st::BadCertificatePolicyCheckFailed, label(chain[i]) + ": " + problem);
    }
  }

  // 5: trust. The leaf itself or one CA of its chain must be in trusted/certs.
  bool trusted = false;
  for (X509* c : chain) trusted = trusted || contains(lists.trusted, c);
  const bool first_use =
      !trusted && settings_.trust_on_first_use && req.use == CertificateUse::Application && n == 1;
  if (!trusted && !first_use) {
    if (req.use == CertificateUse::Application) {
      // Kept for the operator (`opcuad pki trust`) once the client proves it holds the key.
      v.public_key = share_pkey(leaf_key);
      v.record_after_proof = [this, der = to_der(leaf), thumb = v.thumbprint_hex] {
        return save_rejected(der, thumb);
      };
    }
    return fail(st::BadCertificateUntrusted,
                who + ": neither it nor a CA of its chain is in " +
                    std::string(req.use == CertificateUse::User ? "user/trusted/certs" : "trusted/certs"));
  }

  // 6: validity period of every certificate.
  for (size_t i = 0; i < n; ++i) {
    const bool early = X509_cmp_current_time(X509_get0_notBefore(chain[i])) >= 0;
    const bool late = X509_cmp_current_time(X509_get0_notAfter(chain[i])) <= 0;
    if (early || late) {
      return fail(i == 0 ? st::BadCertificateTimeInvalid : st::BadCertificateIssuerTimeInvalid,
                  label(chain[i]) + (early ? ": not valid yet" : ": expired"));
    }
  }

  // 8: the ApplicationUri the peer claims must be the one its certificate names.
  if (!req.expected_application_uri.empty() && v.application_uri != req.expected_application_uri) {
    return fail(st::BadCertificateUriInvalid, who + ": subjectAltName URI \"" + v.application_uri +
                                                  "\" is not the ApplicationUri \"" +
                                                  std::string(req.expected_application_uri) + "\"");
  }

  // 9: usage. Part 6 §6.2.2: an application certificate is used to sign (digitalSignature) and to
  // receive keys (keyEncipherment or dataEncipherment); a client's, if it restricts its extended key
  // usage, must allow clientAuth. A user certificate signs. Each CA must be a CA allowed to sign
  // certificates.
  const uint32_t ku = X509_get_key_usage(leaf);
  const bool has_ku = (X509_get_extension_flags(leaf) & EXFLAG_KUSAGE) != 0;
  if (!has_ku) return fail(st::BadCertificateUseNotAllowed, who + ": no keyUsage extension");
  if ((ku & KU_DIGITAL_SIGNATURE) == 0)
    return fail(st::BadCertificateUseNotAllowed, who + ": keyUsage lacks digitalSignature");
  if (req.use == CertificateUse::Application) {
    if ((ku & (KU_KEY_ENCIPHERMENT | KU_DATA_ENCIPHERMENT)) == 0) {
      return fail(st::BadCertificateUseNotAllowed,
                  who + ": keyUsage lacks keyEncipherment and dataEncipherment");
    }
    if ((X509_get_extension_flags(leaf) & EXFLAG_XKUSAGE) != 0 &&
        (X509_get_extended_key_usage(leaf) & XKU_SSL_CLIENT) == 0) {
      return fail(st::BadCertificateUseNotAllowed, who + ": extendedKeyUsage lacks clientAuth");
    }
  }
  for (size_t i = 1; i < n; ++i) {
    X509* ca = chain[i];
    const bool ca_ku = (X509_get_extension_flags(ca) & EXFLAG_KUSAGE) != 0;
    if (X509_check_ca(ca) < 1 || (ca_ku && (X509_get_key_usage(ca) & KU_KEY_CERT_SIGN) == 0)) {
      return fail(st::BadCertificateIssuerUseNotAllowed,
                  label(ca) + ": not a CA allowed to sign certificates");
    }
    // RFC 5280 §4.2.1.9: pathLenConstraint counts the CA certificates that may follow this one below
    // it (self-issued ones excepted, none of which a chain built here has between leaf and root).
    const long path_len = X509_get_pathlen(ca);
    if (path_len >= 0 && static_cast<long>(i) - 1 > path_len) {
      return fail(
          st::BadCertificateIssuerUseNotAllowed,
          label(ca) + ": its pathLenConstraint " + std::to_string(path_len) + " allows fewer CAs below it");
    }
    // RFC 5280 §4.2.1.10: the names of every certificate below a CA lie within its nameConstraints.
    if (auto* nc =
            static_cast<NAME_CONSTRAINTS*>(X509_get_ext_d2i(ca, NID_name_constraints, nullptr, nullptr))) {
      int violation = X509_V_OK;
      for (size_t j = 0; j < i && violation == X509_V_OK; ++j)
        violation = NAME_CONSTRAINTS_check(chain[j], nc);
      NAME_CONSTRAINTS_free(nc);
      if (violation != X509_V_OK) {
        return fail(st::BadCertificateIssuerUseNotAllowed,
                    label(ca) + ": a certificate below it has a name outside its nameConstraints (" +
                        X509_verify_cert_error_string(violation) + ")");
      }
    }
  }
  // RFC 5280 §4.2: a certificate with a critical extension that is not understood is refused.
  for (size_t i = 0; i < n; ++i) {
    if ((X509_get_extension_flags(chain[i]) & EXFLAG_CRITICAL) != 0) {
      return fail(i == 0 ? st::BadCertificateInvalid : st::BadCertificateIssuerUseNotAllowed,
                  label(chain[i]) + ": a critical extension opcuad does not know");
    }
  }

  // 10 and 11: each CA's CRLs (trusted/crl or issuers/crl), then whether one of them lists the certificate
  // it issued.
  std::vector<CaCrls> crls(n);
  for (size_t i = 0; i + 1 < n; ++i) {
    crls[i] = find_crls(chain[i + 1], lists.crls);
    if (!crls[i].newest) {
      return fail(i == 0 ? st::BadCertificateRevocationUnknown : st::BadCertificateIssuerRevocationUnknown,
                  label(chain[i + 1]) + ": no CRL of this CA in trusted/crl or issuers/crl");
    }
  }
  // An outdated CRL still proves a revocation, so every list is consulted first.
  for (size_t i = 0; i + 1 < n; ++i) {
    for (X509_CRL* crl : crls[i].lists) {
      if (is_revoked(crl, chain[i])) {
        return fail(i == 0 ? st::BadCertificateRevoked : st::BadCertificateIssuerRevoked,
                    label(chain[i]) + ": revoked by " + label(chain[i + 1]));
      }
    }
  }
  // What an outdated CRL does not list may have been revoked since: the revocation status is unknown
  // (Part 4 §6.1.3, "Find Revocation List"), as with no CRL at all, until the CA's new list is in place.
  for (size_t i = 0; i + 1 < n; ++i) {
    if (!crls[i].current) {
      X509_CRL* crl = crls[i].newest;
      return fail(i == 0 ? st::BadCertificateRevocationUnknown : st::BadCertificateIssuerRevocationUnknown,
                  label(chain[i + 1]) + ": its newest CRL is not current (thisUpdate " +
                      crl_time_text(X509_CRL_get0_lastUpdate(crl)) + ", nextUpdate " +
                      crl_time_text(X509_CRL_get0_nextUpdate(crl)) + "): put the CA's newer CRL in place");
    }
  }

  v.public_key = share_pkey(leaf_key);
  if (!v.public_key) return fail(st::BadInternalError, who + ": cannot reference the public key");
  if (first_use) {
    v.record_after_proof = [this, der = to_der(leaf), thumb = v.thumbprint_hex, subject = v.subject] {
      return trust_first_use(der, thumb, subject);
    };
  }
  v.status = st::Good;
  v.reason = first_use ? who + ": trusted on first use" : who + ": trusted";
  return v;
}

}  // namespace opcuad::security
