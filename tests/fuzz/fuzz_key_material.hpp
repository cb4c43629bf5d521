#pragma once
// The fixed test keys of fuzz_keys.hpp as the secure channel uses them: DER certificates, thumbprints and
// OpenSSL keys. Loaded once per process; a key that does not load is a broken build, so it aborts.

#include <openssl/bio.h>
#include <openssl/pem.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/fuzz/fuzz_keys.hpp"
#include "transport/security/certificate.hpp"
#include "transport/security/crypto.hpp"

namespace opcuad::fuzz {

struct FuzzParty {
  std::vector<uint8_t> certificate;  // DER
  std::array<uint8_t, 20> thumbprint{};
  security::Pkey private_key;
  security::Pkey public_key;
};

inline FuzzParty load_party(const char* certificate_pem, const char* key_pem) {
  FuzzParty p;
  BIO* cb = BIO_new_mem_buf(certificate_pem, static_cast<int>(std::strlen(certificate_pem)));
  X509* cert = cb ? PEM_read_bio_X509(cb, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(cb);
  BIO* kb = BIO_new_mem_buf(key_pem, static_cast<int>(std::strlen(key_pem)));
  EVP_PKEY* key = kb ? PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(kb);
  if (!cert || !key) {
    std::fprintf(stderr, "the fixed fuzz keys do not load\n");
    std::abort();
  }
  p.certificate = security::to_der(cert);
  p.thumbprint = security::thumbprint(cert);
  EVP_PKEY* pub = X509_get_pubkey(cert);  // one new reference, owned by public_key
  p.public_key = security::adopt(pub);
  p.private_key = security::adopt(key);
  X509_free(cert);
  return p;
}

inline const FuzzParty& fuzz_server() {
  static const FuzzParty p = load_party(kServerCertificatePem, kServerKeyPem);
  return p;
}

inline const FuzzParty& fuzz_client() {
  static const FuzzParty p = load_party(kClientCertificatePem, kClientKeyPem);
  return p;
}

}  // namespace opcuad::fuzz
