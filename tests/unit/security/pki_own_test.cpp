// Pki::open(): the folder layout and the own Application Instance Certificate (Part 6 §6.2.2).
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include "tests/unit/security/pki_test_support.hpp"

namespace opcuad::security {
namespace {

namespace fs = std::filesystem;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

TEST_CASE("open() creates the Part 12 layout, 0700, and an own certificate per Part 6 §6.2.2", "[pki]") {
  test::TempDir dir;
  Pki pki;
  const auto r = pki.open(test::test_settings(dir.path));
  REQUIRE(r.ok());
  REQUIRE(r.notices.size() == 1);
  CHECK(r.notices[0].find("generated") != std::string::npos);
  CHECK(r.warnings.empty());
  const PkiPaths& p = pki.paths();
  for (const fs::path* d : {&p.own_certs, &p.own_private, &p.trusted_certs, &p.trusted_crl, &p.issuers_certs,
                            &p.issuers_crl, &p.rejected_certs, &p.user_trusted_certs, &p.user_trusted_crl,
                            &p.user_issuers_certs, &p.user_issuers_crl}) {
    INFO(d->string());
    CHECK(fs::is_directory(*d));
    CHECK(mode_of(*d) == 0700);
  }
  CHECK(p.own_certificate == dir.path / "own/certs/opcuad.der");
  CHECK(p.own_key == dir.path / "own/private/opcuad.pem");
  CHECK(mode_of(p.own_key) == 0600);
  // No temporary left behind.
  for (const auto& e : fs::directory_iterator(p.own_private)) CHECK(e.path() == p.own_key);

  X509* cert = pki.certificate();
  REQUIRE(cert);
  CHECK(X509_get_version(cert) == X509_VERSION_3);
  CHECK(is_self_signed(cert));
  CHECK(X509_get_signature_nid(cert) == NID_sha256WithRSAEncryption);
  CHECK(EVP_PKEY_get_bits(X509_get0_pubkey(cert)) == 2048);
  CHECK(X509_check_private_key(cert, pki.private_key()) == 1);
  const ASN1_INTEGER* serial = X509_get0_serialNumber(cert);
  CHECK(ASN1_STRING_length(serial) == 20);
  const CertificateInfo& info = pki.info();
  CHECK(info.subject == "O=opcuad tests,CN=opcuad test");
  CHECK(info.application_uri == "urn:test:server");
  CHECK(info.dns_names == std::vector<std::string>{"localhost", "plant.example"});
  CHECK(info.ip_addresses == std::vector<std::string>{"127.0.0.1", "::1"});
  const auto lifetime =
      std::chrono::duration_cast<std::chrono::hours>(info.not_after - info.not_before).count();
  CHECK(lifetime / 24 == 1825);
  CHECK(info.not_before <= std::chrono::system_clock::now());
  const uint32_t ku = X509_get_key_usage(cert);
  CHECK((ku & KU_DIGITAL_SIGNATURE) != 0);
  CHECK((ku & KU_NON_REPUDIATION) != 0);
  CHECK((ku & KU_KEY_ENCIPHERMENT) != 0);
  CHECK((ku & KU_DATA_ENCIPHERMENT) != 0);
  CHECK((ku & KU_KEY_CERT_SIGN) != 0);
  const uint32_t xku = X509_get_extended_key_usage(cert);
  CHECK((xku & XKU_SSL_SERVER) != 0);
  CHECK((xku & XKU_SSL_CLIENT) != 0);
  CHECK(X509_check_ca(cert) == 0);  // basicConstraints CA:FALSE
  CHECK(pki.thumbprint() == thumbprint(cert));
  CHECK(pki.thumbprint_hex().size() == 40);
  CHECK(pki.certificate_der() == to_der(cert));
}

TEST_CASE("a second open() keeps the certificate; a changed application_uri is reported, not replaced",
          "[pki]") {
  test::TempDir dir;
  std::string first;
  {
    Pki pki;
    REQUIRE(pki.open(test::test_settings(dir.path)).ok());
    first = pki.thumbprint_hex();
  }
  {
    Pki pki;
    const auto r = pki.open(test::test_settings(dir.path));
    REQUIRE(r.ok());
    CHECK(r.notices.empty());
    CHECK(pki.thumbprint_hex() == first);
  }
  PkiSettings renamed = test::test_settings(dir.path);
  renamed.application_uri = "urn:test:renamed";
  Pki pki;
  const auto r = pki.open(renamed);
  REQUIRE(r.ok());
  CHECK(pki.thumbprint_hex() == first);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("urn:test:renamed") != std::string::npos);
  CHECK(r.warnings[0].find("pki regenerate") != std::string::npos);
}

TEST_CASE("open() refuses a lone key or certificate, a foreign key, and bad key sizes", "[pki]") {
  SECTION("key without certificate") {
    test::TempDir dir;
    {
      Pki pki;
      REQUIRE(pki.open(test::test_settings(dir.path)).ok());
    }
    fs::remove(dir.path / "own/certs/opcuad.der");
    Pki pki;
    const auto r = pki.open(test::test_settings(dir.path));
    CHECK_FALSE(r.ok());
    CHECK(r.error.find("opcuad.der") != std::string::npos);
    CHECK(fs::exists(dir.path / "own/private/opcuad.pem"));  // never overwritten
  }
  SECTION("a key that is not the certificate's") {
    test::TempDir dir;
    {
      Pki pki;
      REQUIRE(pki.open(test::test_settings(dir.path)).ok());
    }
    auto other = test::make_cert({.key = test::shared_key(0)});
    test::write_der(dir.path / "own/certs/opcuad.der", other.get());
    Pki pki;
    CHECK(pki.open(test::test_settings(dir.path)).error.find("does not belong") != std::string::npos);
  }
  SECTION("key sizes") {
    test::TempDir dir;
    PkiSettings s = test::test_settings(dir.path);
    s.key_bits = 1024;
    Pki pki;
    CHECK(pki.open(s).error.find("2048..4096") != std::string::npos);
  }
  SECTION("a world-readable key is warned about") {
    test::TempDir dir;
    {
      Pki pki;
      REQUIRE(pki.open(test::test_settings(dir.path)).ok());
    }
    fs::permissions(dir.path / "own/private/opcuad.pem", fs::perms::others_read, fs::perm_options::add);
    Pki pki;
    const auto r = pki.open(test::test_settings(dir.path));
    REQUIRE(r.ok());
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].find("chmod 600") != std::string::npos);
  }
}

TEST_CASE("open() warns at every start while trust on first use is on", "[pki]") {
  test::TempDir dir;
  PkiSettings s = test::test_settings(dir.path);
  s.trust_on_first_use = true;
  for (int i = 0; i < 2; ++i) {
    Pki pki;
    const auto r = pki.open(s);
    REQUIRE(r.ok());
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0].find("trust_on_first_use") != std::string::npos);
  }
}

TEST_CASE("the own certificate's end is announced 30 days ahead, at start and by expiry_warning", "[pki]") {
  using std::chrono::hours;
  const SystemTime end = std::chrono::system_clock::now() + hours(24 * 400);
  CHECK(expiry_warning(end, end - hours(24 * 31)).empty());
  CHECK(expiry_warning(end, end - kExpiryWarningAhead - hours(1)).empty());
  const std::string month = expiry_warning(end, end - kExpiryWarningAhead);
  CHECK(month.find("expires in 30 days, at " + iso_time(end)) != std::string::npos);
  CHECK(month.find("opcuad pki regenerate") != std::string::npos);
  CHECK(expiry_warning(end, end - hours(36)).find("expires in 1 day,") != std::string::npos);
  CHECK(expiry_warning(end, end - hours(5)).find("expires in 5 hours,") != std::string::npos);
  CHECK(expiry_warning(end, end).find("expired at " + iso_time(end)) != std::string::npos);
  CHECK(expiry_warning(end, end + hours(1)).find("expired at") != std::string::npos);

  // A certificate generated for 20 days warns at every start; one for the default five years does not.
  test::TempDir dir;
  PkiSettings s = test::test_settings(dir.path);
  s.lifetime_days = 20;
  Pki pki;
  const auto r = pki.open(s);
  REQUIRE(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("the own certificate expires in 19 days") != std::string::npos);
  test::TempDir five_years;
  Pki fresh;
  const auto quiet = fresh.open(test::test_settings(five_years.path));
  REQUIRE(quiet.ok());
  CHECK(quiet.warnings.empty());
}

TEST_CASE("the own key signs with a per-call context and the own certificate verifies it", "[pki]") {
  test::TempDir dir;
  Pki pki;
  REQUIRE(pki.open(test::test_settings(dir.path)).ok());
  const uint8_t message[] = {1, 2, 3};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  REQUIRE(EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pki.private_key()) == 1);
  size_t len = 0;
  REQUIRE(EVP_DigestSign(ctx, nullptr, &len, message, sizeof message) == 1);
  std::vector<uint8_t> sig(len);
  REQUIRE(EVP_DigestSign(ctx, sig.data(), &len, message, sizeof message) == 1);
  EVP_MD_CTX_free(ctx);
  EVP_MD_CTX* vctx = EVP_MD_CTX_new();
  REQUIRE(EVP_DigestVerifyInit(vctx, nullptr, EVP_sha256(), nullptr, X509_get0_pubkey(pki.certificate())) ==
          1);
  CHECK(EVP_DigestVerify(vctx, sig.data(), len, message, sizeof message) == 1);
  EVP_MD_CTX_free(vctx);
}

TEST_CASE("write_file_atomically never leaves a wider mode and replaces stale temporaries", "[pki]") {
  test::TempDir dir;
  fs::create_directories(dir.path);
  const fs::path file = dir.path / "key.pem";
  const fs::path stale = file.string() + ".tmp-" + std::to_string(::getpid());
  std::ofstream(stale) << "stale";
  fs::permissions(stale, fs::perms::all);
  const std::vector<uint8_t> bytes{'s', 'e', 'c', 'r', 'e', 't'};
  REQUIRE(write_file_atomically(file, bytes, 0600).empty());
  CHECK(mode_of(file) == 0600);
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::file_size(file) == bytes.size());
}

}  // namespace
}  // namespace opcuad::security
