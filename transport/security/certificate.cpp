#include "transport/security/certificate.hpp"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <fstream>
#include <iterator>

namespace opcuad::security {

namespace {

struct BioFree {
  void operator()(BIO* b) const noexcept { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

std::vector<uint8_t> read_file(const std::filesystem::path& file, size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::vector<uint8_t> bytes;
  char buf[4096];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    bytes.insert(bytes.end(), buf, buf + in.gcount());
    if (bytes.size() > max_bytes) return {};
  }
  return bytes;
}

// Certificates and CRLs kept in the trust folders: anything beyond this is not one (a CRL of a large CA
// may be a few MiB).
constexpr size_t kMaxFileBytes = 16u << 20;

std::string ia5_text(const ASN1_IA5STRING* s) {
  if (!s) return {};
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

struct GeneralNamesFree {
  void operator()(GENERAL_NAMES* n) const noexcept { GENERAL_NAMES_free(n); }
};
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, GeneralNamesFree>;

bool add_extension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  X509_EXTENSION* ext = X509V3_EXT_nconf_nid(nullptr, ctx, nid, value);
  if (!ext) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

bool add_general_name(GENERAL_NAMES* names, int type, const std::string& value) {
  GENERAL_NAME* gn = GENERAL_NAME_new();
  if (!gn) return false;
  if (type == GEN_IPADD) {
    ASN1_OCTET_STRING* ip = a2i_IPADDRESS(value.c_str());
    if (!ip) {
      GENERAL_NAME_free(gn);
      return false;
    }
    GENERAL_NAME_set0_value(gn, GEN_IPADD, ip);
  } else {
    ASN1_IA5STRING* s = ASN1_IA5STRING_new();
    if (!s || ASN1_STRING_set(s, value.data(), static_cast<int>(value.size())) != 1) {
      ASN1_IA5STRING_free(s);
      GENERAL_NAME_free(gn);
      return false;
    }
    GENERAL_NAME_set0_value(gn, type, s);
  }
  if (sk_GENERAL_NAME_push(names, gn) <= 0) {
    GENERAL_NAME_free(gn);
    return false;
  }
  return true;
}

}  // namespace

SharedPkey share_pkey(EVP_PKEY* key) {
  if (!key || EVP_PKEY_up_ref(key) != 1) return {};
  return SharedPkey(key, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
}

std::vector<X509Ptr> parse_der_chain(std::span<const uint8_t> bytes, size_t max_count) {
  std::vector<X509Ptr> chain;
  const unsigned char* p = bytes.data();
  const unsigned char* end = bytes.data() + bytes.size();
  while (p < end) {
    if (chain.size() == max_count) return {};
    const unsigned char* start = p;
    X509Ptr cert(d2i_X509(nullptr, &p, static_cast<long>(end - p)));
    if (!cert || p <= start || p > end) return {};
    chain.push_back(std::move(cert));
  }
  return chain;
}

X509Ptr parse_der(std::span<const uint8_t> bytes) {
  const unsigned char* p = bytes.data();
  X509Ptr cert(d2i_X509(nullptr, &p, static_cast<long>(bytes.size())));
  if (!cert || p != bytes.data() + bytes.size()) return {};
  return cert;
}

X509Ptr read_certificate_file(const std::filesystem::path& file) {
  const auto bytes = read_file(file, kMaxFileBytes);
  if (bytes.empty()) return {};
  if (X509Ptr der = parse_der(bytes)) return der;
  BioPtr bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  if (!bio) return {};
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

X509CrlPtr read_crl_file(const std::filesystem::path& file) {
  const auto bytes = read_file(file, kMaxFileBytes);
  if (bytes.empty()) return {};
  const unsigned char* p = bytes.data();
  X509CrlPtr der(d2i_X509_CRL(nullptr, &p, static_cast<long>(bytes.size())));
  if (der && p == bytes.data() + bytes.size()) return der;
  BioPtr bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
  if (!bio) return {};
  return X509CrlPtr(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
}

std::vector<uint8_t> to_der(X509* cert) {
  unsigned char* out = nullptr;
  const int n = i2d_X509(cert, &out);
  if (n <= 0) return {};
  std::vector<uint8_t> der(out, out + n);
  OPENSSL_free(out);
  return der;
}

std::array<uint8_t, 20> thumbprint(X509* cert) {
  std::array<uint8_t, 20> digest{};
  unsigned int n = 0;
  if (X509_digest(cert, EVP_sha1(), digest.data(), &n) != 1 || n != digest.size()) digest.fill(0);
  return digest;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

bool is_thumbprint_hex(std::string_view s) {
  if (s.size() != 40) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

std::string name_text(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || !name) return {};
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return n > 0 ? std::string(data, static_cast<size_t>(n)) : std::string();
}

std::optional<SystemTime> asn1_time(const ASN1_TIME* t) {
  std::tm tm{};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string iso_time(SystemTime t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string expiry_warning(SystemTime not_after, SystemTime now) {
  if (not_after <= now) {
    return "the own certificate expired at " + iso_time(not_after) +
           "; clients refuse it: run `opcuad pki regenerate` and restart";
  }
  if (not_after - now > kExpiryWarningAhead) return {};
  const auto left = std::chrono::duration_cast<std::chrono::hours>(not_after - now);
  const auto days = left.count() / 24;
  return "the own certificate expires in " +
         (days > 0 ? std::to_string(days) + (days == 1 ? " day" : " days")
                   : std::to_string(left.count()) + (left.count() == 1 ? " hour" : " hours")) +
         ", at " + iso_time(not_after) +
         ": renew it with `opcuad pki regenerate` (docs/OPERATIONS.md, \"Renew the server certificate\")";
}

std::string san_uri(X509* cert) {
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return {};
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
    if (gn->type == GEN_URI) return ia5_text(gn->d.uniformResourceIdentifier);
  }
  return {};
}

CertificateInfo describe(X509* cert) {
  CertificateInfo info;
  info.subject = name_text(X509_get_subject_name(cert));
  info.issuer = name_text(X509_get_issuer_name(cert));
  if (GeneralNamesPtr names{
          static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr))}) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(names.get(), i);
      if (gn->type == GEN_URI && info.application_uri.empty()) {
        info.application_uri = ia5_text(gn->d.uniformResourceIdentifier);
      } else if (gn->type == GEN_DNS) {
        info.dns_names.push_back(ia5_text(gn->d.dNSName));
      } else if (gn->type == GEN_IPADD) {
        const ASN1_OCTET_STRING* ip = gn->d.iPAddress;
        char text[INET6_ADDRSTRLEN] = {};
        const int len = ASN1_STRING_length(ip);
        if ((len == 4 || len == 16) &&
            inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(ip), text, sizeof text)) {
          info.ip_addresses.emplace_back(text);
        }
      }
    }
  }
  info.not_before = asn1_time(X509_get0_notBefore(cert)).value_or(SystemTime{});
  info.not_after = asn1_time(X509_get0_notAfter(cert)).value_or(SystemTime{});
  if (EVP_PKEY* key = X509_get0_pubkey(cert)) info.key_bits = EVP_PKEY_get_bits(key);
  const auto tp = thumbprint(cert);
  info.thumbprint_hex = to_hex(tp);
  return info;
}

bool is_self_signed(X509* cert) {
  // X509_check_issued() would also demand keyCertSign, which many self-signed application
  // certificates lack: compare the names and check the signature instead.
  if (X509_NAME_cmp(X509_get_subject_name(cert), X509_get_issuer_name(cert)) != 0) return false;
  EVP_PKEY* key = X509_get0_pubkey(cert);
  return key && X509_verify(cert, key) == 1;
}

GeneratedCertificate make_application_certificate(const OwnCertificateRequest& r) {
  GeneratedCertificate out;
  if (r.key_bits < 2048 || r.key_bits > 4096) {
    out.error = "key size " + std::to_string(r.key_bits) + " bits is outside 2048..4096";
    return out;
  }
  EvpPkeyPtr key(EVP_RSA_gen(static_cast<unsigned int>(r.key_bits)));
  X509Ptr cert(X509_new());
  if (!key || !cert) {
    out.error = "cannot generate an RSA key";
    return out;
  }
  // A positive 20-byte serial (RFC 5280 §4.1.2.2 allows at most 20 octets) with its top bits fixed so
  // it keeps all 20 bytes.
  uint8_t serial[20];
  if (RAND_bytes(serial, sizeof serial) != 1) {
    out.error = "RAND_bytes failed";
    return out;
  }
  serial[0] = static_cast<uint8_t>((serial[0] & 0x7f) | 0x40);
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  const bool serial_ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) != nullptr;
  BN_free(bn);
  X509_NAME* name = X509_get_subject_name(cert.get());
  auto add_name = [name](const char* field, const std::string& value) {
    return value.empty() ||
           X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1, 0) == 1;
  };
  // A few minutes back, so that a peer whose clock is slightly behind does not see a certificate from
  // the future (BadCertificateTimeInvalid) right after the first start.
  const long lifetime_seconds = static_cast<long>(r.lifetime_days) * 86400L;
  bool ok = serial_ok && X509_set_version(cert.get(), X509_VERSION_3) == 1 &&
            X509_gmtime_adj(X509_getm_notBefore(cert.get()), -600) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(cert.get()), lifetime_seconds) != nullptr &&
            X509_set_pubkey(cert.get(), key.get()) == 1 && add_name("CN", r.common_name) &&
            add_name("O", r.organization) && X509_set_issuer_name(cert.get(), name) == 1;
  if (!ok) {
    out.error = "cannot fill in the certificate";
    return out;
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  ok = add_extension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE") &&
       add_extension(
           cert.get(), &ctx, NID_key_usage,
           "critical,digitalSignature,nonRepudiation,keyEncipherment,dataEncipherment,keyCertSign") &&
       add_extension(cert.get(), &ctx, NID_ext_key_usage, "serverAuth,clientAuth") &&
       add_extension(cert.get(), &ctx, NID_subject_key_identifier, "hash") &&
       add_extension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always");
  if (!ok) {
    out.error = "cannot add the certificate's extensions";
    return out;
  }
  // subjectAltName built as GeneralNames rather than a config string, so a URI with a comma stays one.
  GeneralNamesPtr names(sk_GENERAL_NAME_new_null());
  ok = names && add_general_name(names.get(), GEN_URI, r.application_uri);
  for (const auto& dns : r.dns_names) ok = ok && add_general_name(names.get(), GEN_DNS, dns);
  for (const auto& ip : r.ip_addresses) {
    if (ok && !add_general_name(names.get(), GEN_IPADD, ip)) {
      out.error = "not an IP address: " + ip;
      return out;
    }
  }
  if (!ok || X509_add1_ext_i2d(cert.get(), NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    out.error = "cannot add subjectAltName";
    return out;
  }
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) {
    out.error = "cannot sign the certificate";
    return out;
  }
  out.cert = std::move(cert);
  out.key = std::move(key);
  return out;
}

}  // namespace opcuad::security
