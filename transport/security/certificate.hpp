#pragma once
// X.509 helpers over OpenSSL 3: owning pointers, DER/PEM parsing, what a certificate says (subject,
// subjectAltName, validity, key size, SHA-1 thumbprint), and the generation of the self-signed
// Application Instance Certificate (Part 6 §6.2.2). Socket-free and thread-safe: nothing here keeps state.

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace opcuad::security {

struct X509Free {
  void operator()(X509* x) const noexcept { X509_free(x); }
};
struct X509CrlFree {
  void operator()(X509_CRL* c) const noexcept { X509_CRL_free(c); }
};
struct EvpPkeyFree {
  void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using X509CrlPtr = std::unique_ptr<X509_CRL, X509CrlFree>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

// A key shared between a Pki and the verdicts that hand it out: EVP_PKEY is reference-counted by
// OpenSSL, so a shared_ptr around one reference keeps it alive as long as anyone uses it. Concurrent use
// is safe with one EVP_PKEY_CTX per operation.
using SharedPkey = std::shared_ptr<EVP_PKEY>;
SharedPkey share_pkey(EVP_PKEY* key);  // takes one new reference (EVP_PKEY_up_ref)

using SystemTime = std::chrono::system_clock::time_point;

// Part 6 §6.2.3: a chain is sent as concatenated DER certificates, leaf first.
// Empty when the bytes are not exactly a sequence of at most max_count certificates.
std::vector<X509Ptr> parse_der_chain(std::span<const uint8_t> bytes, size_t max_count);
X509Ptr parse_der(std::span<const uint8_t> bytes);
// A certificate file: DER, or PEM (the first certificate in it).
X509Ptr read_certificate_file(const std::filesystem::path& file);
// A CRL file: DER or PEM.
X509CrlPtr read_crl_file(const std::filesystem::path& file);

std::vector<uint8_t> to_der(X509* cert);
std::array<uint8_t, 20> thumbprint(X509* cert);      // SHA-1 of the DER form (Part 6 §6.2.3)
std::string to_hex(std::span<const uint8_t> bytes);  // lower case
bool is_thumbprint_hex(std::string_view s);          // 40 hex digits

struct CertificateInfo {
  std::string subject;  // RFC 2253 form
  std::string issuer;
  std::string application_uri;  // the first URI of subjectAltName
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;  // text form
  SystemTime not_before{};
  SystemTime not_after{};
  int key_bits = 0;
  std::string thumbprint_hex;
};
CertificateInfo describe(X509* cert);
std::string name_text(const X509_NAME* name);
std::string san_uri(X509* cert);  // empty when absent
std::optional<SystemTime> asn1_time(const ASN1_TIME* t);
std::string iso_time(SystemTime t);  // 2026-12-01T22:10:00Z

// The own certificate is renewed by hand (docs/OPERATIONS.md, "Renew the server certificate"): the daemon
// warns this long before its end, at start and once a day, and after the end.
inline constexpr std::chrono::hours kExpiryWarningAhead{24 * 30};
// The warning for a certificate that ends at `not_after`, seen at `now`: empty when the end is further away
// than kExpiryWarningAhead, else how long is left (or that it expired) and what to do.
std::string expiry_warning(SystemTime not_after, SystemTime now);

// True when the certificate is its own issuer and its signature verifies with its own key.
bool is_self_signed(X509* cert);

struct OwnCertificateRequest {
  std::string application_uri;
  std::string common_name;
  std::string organization;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  int key_bits = 2048;
  uint32_t lifetime_days = 1825;
};
struct GeneratedCertificate {
  X509Ptr cert;
  EvpPkeyPtr key;
  std::string error;  // empty on success
};
// A new RSA key and a self-signed SHA-256 certificate for it, per Part 6 §6.2.2 (Table 43): V3, a random
// 20-byte positive serial, subject CN (+ O), subjectAltName URI = application_uri plus the DNS names and
// IP addresses, keyUsage digitalSignature, nonRepudiation, keyEncipherment, dataEncipherment and
// keyCertSign (self-signed), extendedKeyUsage serverAuth + clientAuth, basicConstraints CA:FALSE.
GeneratedCertificate make_application_certificate(const OwnCertificateRequest& request);

}  // namespace opcuad::security
