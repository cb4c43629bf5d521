#pragma once
// Test PKI built with the OpenSSL API: keys, CA / intermediate / leaf certificates, CRLs, and a
// temporary PKI directory. Keys are generated once per test run and shared (RSA generation is slow).

#include <openssl/bn.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "transport/security/certificate.hpp"
#include "transport/security/pki.hpp"

namespace opcuad::security::test {

inline EVP_PKEY* shared_key(int index, int bits = 2048) {
  static EvpPkeyPtr keys[8];
  static EvpPkeyPtr small;
  if (bits == 1024) {
    if (!small) small.reset(EVP_RSA_gen(1024));
    return small.get();
  }
  if (!keys[index]) keys[index].reset(EVP_RSA_gen(static_cast<unsigned>(bits)));
  return keys[index].get();
}

struct CertSpec {
  std::string cn = "test";
  std::string uri = "urn:test:client";  // empty: no subjectAltName
  EVP_PKEY* key = nullptr;              // the subject's key
  X509* issuer = nullptr;               // null: self-signed
  EVP_PKEY* issuer_key = nullptr;
  bool ca = false;
  long not_before_days = -1;
  long not_after_days = 365;
  // Empty: no keyUsage extension at all.
  std::string key_usage = "critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment";
  std::string ext_key_usage = "serverAuth,clientAuth";  // empty: none
  const EVP_MD* md = EVP_sha256();
  bool pss = false;               // sign with RSA-PSS (salt as long as the digest) instead of PKCS#1 v1.5
  long serial = 0;                // 0: a fresh one
  std::string basic_constraints;  // empty: critical,CA:TRUE or critical,CA:FALSE as `ca` says
  std::string san;                // empty: URI:<uri> (when uri is set)
  // Further extensions, by name or OID, in openssl x509v3_config(5) syntax.
  std::vector<std::pair<std::string, std::string>> extensions;
};

inline X509Ptr make_cert(const CertSpec& s) {
  static std::atomic<long> next_serial{1000};
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), X509_VERSION_3);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), s.serial ? s.serial : next_serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), s.not_before_days * 86400L);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), s.not_after_days * 86400L);
  X509_set_pubkey(cert.get(), s.key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(s.cn.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), s.issuer ? X509_get_subject_name(s.issuer) : name);
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, s.issuer ? s.issuer : cert.get(), cert.get(), nullptr, nullptr, 0);
  auto add = [&](int nid, const std::string& value) {
    X509_EXTENSION* ext = X509V3_EXT_nconf_nid(nullptr, &ctx, nid, value.c_str());
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  };
  add(NID_basic_constraints, !s.basic_constraints.empty() ? s.basic_constraints
                             : s.ca                       ? "critical,CA:TRUE"
                                                          : "critical,CA:FALSE");
  if (s.ca) {
    add(NID_key_usage, "critical,keyCertSign,cRLSign");
  } else if (!s.key_usage.empty()) {
    add(NID_key_usage, s.key_usage);
  }
  if (!s.ca && !s.ext_key_usage.empty()) add(NID_ext_key_usage, s.ext_key_usage);
  add(NID_subject_key_identifier, "hash");
  if (!s.san.empty()) {
    add(NID_subject_alt_name, s.san);
  } else if (!s.uri.empty()) {
    add(NID_subject_alt_name, "URI:" + s.uri);
  }
  for (const auto& [name, value] : s.extensions) {
    X509_EXTENSION* ext = X509V3_EXT_nconf(nullptr, &ctx, name.c_str(), value.c_str());
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  EVP_PKEY* signer = s.issuer_key ? s.issuer_key : s.key;
  if (s.pss) {
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    EVP_PKEY_CTX* pctx = nullptr;
    EVP_DigestSignInit(md, &pctx, s.md, nullptr, signer);
    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
    X509_sign_ctx(cert.get(), md);
    EVP_MD_CTX_free(md);
  } else {
    X509_sign(cert.get(), signer, s.md);
  }
  return cert;
}

// A CRL of `ca` listing `revoked`, issued `this_update_days` from now and due `next_update_days` from now
// (a next_update_days of kNoNextUpdate: no nextUpdate field).
inline constexpr long kNoNextUpdate = LONG_MIN;
inline X509CrlPtr make_crl(X509* ca, EVP_PKEY* ca_key, const std::vector<X509*>& revoked,
                           long this_update_days = -1, long next_update_days = 30) {
  X509CrlPtr crl(X509_CRL_new());
  X509_CRL_set_version(crl.get(), X509_CRL_VERSION_2);
  X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(ca));
  ASN1_TIME* now = ASN1_TIME_adj(nullptr, time(nullptr), static_cast<int>(this_update_days), 0);
  ASN1_TIME* next = next_update_days == kNoNextUpdate
                        ? nullptr
                        : ASN1_TIME_adj(nullptr, time(nullptr), static_cast<int>(next_update_days), 0);
  X509_CRL_set1_lastUpdate(crl.get(), now);
  if (next) X509_CRL_set1_nextUpdate(crl.get(), next);
  for (X509* r : revoked) {
    X509_REVOKED* entry = X509_REVOKED_new();
    X509_REVOKED_set_serialNumber(entry, X509_get_serialNumber(r));
    X509_REVOKED_set_revocationDate(entry, now);
    X509_CRL_add0_revoked(crl.get(), entry);
  }
  ASN1_TIME_free(now);
  ASN1_TIME_free(next);
  X509_CRL_sort(crl.get());
  X509_CRL_sign(crl.get(), ca_key, EVP_sha256());
  return crl;
}

inline void write_der(const std::filesystem::path& file, X509* cert) {
  const auto der = to_der(cert);
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(der.data()), static_cast<std::streamsize>(der.size()));
}

inline void write_crl(const std::filesystem::path& file, X509_CRL* crl) {
  unsigned char* out = nullptr;
  const int n = i2d_X509_CRL(crl, &out);
  std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(out), n);
  OPENSSL_free(out);
}

inline std::vector<uint8_t> chain_der(std::initializer_list<X509*> certs) {
  std::vector<uint8_t> out;
  for (X509* c : certs) {
    const auto der = to_der(c);
    out.insert(out.end(), der.begin(), der.end());
  }
  return out;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("opcuad-pki-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline PkiSettings test_settings(const std::filesystem::path& dir) {
  PkiSettings s;
  s.directory = dir;
  s.application_uri = "urn:test:server";
  s.application_name = "opcuad test";
  s.organization = "opcuad tests";
  s.dns_names = {"localhost", "plant.example"};
  s.ip_addresses = {"127.0.0.1", "::1"};
  s.trust_check_interval = std::chrono::milliseconds(0);
  return s;
}

}  // namespace opcuad::security::test
