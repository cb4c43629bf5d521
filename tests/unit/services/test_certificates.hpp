#pragma once
// Keys and self-signed certificates made in the test (OpenSSL's API), for the session security tests: a
// server identity, client application certificates with a chosen ApplicationUri, user certificates.

#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <map>
#include <string>
#include <vector>

#include "transport/security/crypto.hpp"
#include "transport/security/identity.hpp"

namespace opcuad::services::test {

struct TestCertificate {
  std::vector<uint8_t> der;
  security::Pkey key;  // the private key (its public half signs nothing for us)
  std::array<uint8_t, 20> thumbprint{};
};

// A 2048-bit RSA key and a self-signed certificate whose subjectAltName URI is `uri`. Cached by URI: RSA
// key generation costs tens of milliseconds, more under sanitizers.
inline const TestCertificate& test_certificate(const std::string& uri) {
  static std::map<std::string, TestCertificate> cache;
  auto it = cache.find(uri);
  if (it != cache.end()) return it->second;
  TestCertificate c;
  c.key = security::adopt(EVP_RSA_gen(2048));
  REQUIRE(c.key);
  X509* x = X509_new();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600 * 24);
  X509_set_pubkey(x, c.key.get());
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("opcuad test"),
                             -1, -1, 0);
  X509_set_issuer_name(x, name);
  X509V3_CTX v3;
  X509V3_set_ctx_nodb(&v3);
  X509V3_set_ctx(&v3, x, x, nullptr, nullptr, 0);
  const std::string san = "URI:" + uri;
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, san.c_str());
  REQUIRE(ext);
  X509_add_ext(x, ext, -1);
  X509_EXTENSION_free(ext);
  REQUIRE(X509_sign(x, c.key.get(), EVP_sha256()) > 0);
  unsigned char* der = nullptr;
  const int n = i2d_X509(x, &der);
  REQUIRE(n > 0);
  c.der.assign(der, der + n);
  OPENSSL_free(der);
  X509_free(x);
  c.thumbprint = security::sha1(c.der);
  return cache.emplace(uri, std::move(c)).first->second;
}

inline security::ServerIdentity test_identity(const std::string& uri = "urn:test:server") {
  const TestCertificate& c = test_certificate(uri);
  security::ServerIdentity id;
  id.certificate = c.der;
  id.thumbprint = c.thumbprint;
  id.private_key = c.key;
  id.public_key = c.key;
  return id;
}

inline std::vector<uint8_t> bytes_of(std::span<const uint8_t> a, std::span<const uint8_t> b = {}) {
  std::vector<uint8_t> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

inline std::vector<uint8_t> sign_with(const security::Policy& p, EVP_PKEY* key,
                                      std::span<const uint8_t> data) {
  std::vector<uint8_t> sig(security::rsa_key_bytes(key));
  REQUIRE(security::asymmetric_sign(p, key, data, sig));
  return sig;
}

// The legacy encrypted secret (Part 4 §7.41.2.2) as a client builds it: UInt32 length, secret, nonce,
// encrypted with the server's key. `length_delta` corrupts the length prefix; `padding` appends bytes.
inline std::vector<uint8_t> encrypt_secret(const security::Policy& p, EVP_PKEY* server_key,
                                           std::string_view secret, std::span<const uint8_t> nonce,
                                           int64_t length_delta = 0, std::vector<uint8_t> padding = {}) {
  const uint32_t length =
      static_cast<uint32_t>(static_cast<int64_t>(secret.size() + nonce.size()) + length_delta);
  std::vector<uint8_t> plain{static_cast<uint8_t>(length), static_cast<uint8_t>(length >> 8),
                             static_cast<uint8_t>(length >> 16), static_cast<uint8_t>(length >> 24)};
  plain.insert(plain.end(), secret.begin(), secret.end());
  plain.insert(plain.end(), nonce.begin(), nonce.end());
  plain.insert(plain.end(), padding.begin(), padding.end());
  std::vector<uint8_t> out;
  REQUIRE(security::asymmetric_encrypt(p, server_key, plain, out));
  return out;
}

}  // namespace opcuad::services::test
