// Pki::validate(): one test per verdict of Part 4 §6.1.3, with a test PKI built in the test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <thread>

#include "tests/unit/security/pki_test_support.hpp"

namespace opcuad::security {
namespace {

namespace fs = std::filesystem;
namespace st = ua::status;
using test::CertSpec;
using test::make_cert;

// root CA (trusted) -> intermediate CA (issuers/) -> leaf; every CA with a CRL.
struct Hierarchy {
  test::TempDir dir;
  Pki pki;
  std::vector<std::string> warnings;
  X509Ptr root, intermediate, leaf;

  explicit Hierarchy(bool open_now = true, bool tofu = false) {
    root = make_cert(
        {.cn = "Test Root CA", .uri = "", .key = test::shared_key(0), .ca = true, .not_after_days = 3650});
    intermediate = make_cert({.cn = "Test Intermediate CA",
                              .uri = "",
                              .key = test::shared_key(1),
                              .issuer = root.get(),
                              .issuer_key = test::shared_key(0),
                              .ca = true});
    leaf = signed_leaf({});
    if (open_now) open(tofu);
  }
  // A leaf signed by the intermediate; the spec's key, issuer and issuer_key are filled in.
  X509Ptr signed_leaf(CertSpec spec) {
    spec.key = spec.key ? spec.key : test::shared_key(2);
    spec.issuer = intermediate.get();
    spec.issuer_key = test::shared_key(1);
    return make_cert(spec);
  }
  void open(bool tofu = false, uint32_t max_rejected = 100) {
    PkiSettings s = test::test_settings(dir.path);
    s.trust_on_first_use = tofu;
    s.max_rejected_certificates = max_rejected;
    s.warn = [this](std::string_view w) { warnings.emplace_back(w); };
    const auto r = pki.open(s);
    REQUIRE(r.ok());
  }
  void install_ca(bool root_crl = true, bool intermediate_crl = true, std::vector<X509*> revoked_by_root = {},
                  std::vector<X509*> revoked_by_intermediate = {}) {
    const PkiPaths& p = pki.paths();
    test::write_der(p.trusted_certs / "root.der", root.get());
    test::write_der(p.issuers_certs / "intermediate.der", intermediate.get());
    if (root_crl)
      test::write_crl(p.trusted_crl / "root.crl",
                      test::make_crl(root.get(), test::shared_key(0), revoked_by_root).get());
    if (intermediate_crl) {
      test::write_crl(p.issuers_crl / "intermediate.crl",
                      test::make_crl(intermediate.get(), test::shared_key(1), revoked_by_intermediate).get());
    }
    pki.reload();
  }
  CertificateVerdict check(X509* cert, CertificateRequirements req = {}) {
    const auto der = to_der(cert);
    return pki.validate(der, req);
  }
  // check(), then what the secure channel does once the client's OpenSecureChannel signature verified
  // with the leaf's key: record the certificate (rejected/, or trusted/ on first use). `recorded` says
  // whether that was done.
  CertificateVerdict check_proven(X509* cert, CertificateRequirements req = {}) {
    auto v = check(cert, req);
    recorded = v.record_after_proof && v.record_after_proof();
    return v;
  }
  bool recorded = false;
};

X509Ptr self_signed(CertSpec spec = {}) {
  spec.key = spec.key ? spec.key : test::shared_key(3);
  return make_cert(spec);
}

TEST_CASE("a trusted self-signed certificate is accepted with its key and thumbprint", "[pki]") {
  Hierarchy h;
  auto client = self_signed();
  test::write_der(h.pki.paths().trusted_certs / "client.der", client.get());
  h.pki.reload();
  const auto v = h.check(client.get(), {.expected_application_uri = "urn:test:client"});
  INFO(v.reason);
  REQUIRE(v.status == st::Good);
  CHECK(v.thumbprint == thumbprint(client.get()));
  CHECK(v.thumbprint_hex == to_hex(v.thumbprint));
  CHECK(v.application_uri == "urn:test:client");
  REQUIRE(v.public_key);
  CHECK(EVP_PKEY_eq(v.public_key.get(), test::shared_key(3)) == 1);
}

TEST_CASE("an untrusted certificate is refused and saved to rejected/, bounded", "[pki]") {
  Hierarchy h(false);
  h.open(false, 3);
  auto first = self_signed({.cn = "first"});
  const auto v = h.check_proven(first.get());
  CHECK(v.status == st::BadCertificateUntrusted);
  CHECK(h.recorded);
  const fs::path saved = h.pki.paths().rejected_certs / (v.thumbprint_hex + ".der");
  REQUIRE(fs::exists(saved));
  auto back = read_certificate_file(saved);
  REQUIRE(back);
  CHECK(X509_cmp(back.get(), first.get()) == 0);
  CHECK((fs::status(saved).permissions() & (fs::perms::others_all | fs::perms::group_write)) ==
        fs::perms::none);
  // Four more distinct certificates: only the three newest are kept, the first is gone.
  for (int i = 0; i < 4; ++i) {
    auto c = self_signed({.cn = "other " + std::to_string(i)});
    // Distinct modification times even on coarse clocks.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(h.check_proven(c.get()).status == st::BadCertificateUntrusted);
  }
  size_t count = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(h.pki.paths().rejected_certs)) ++count;
  CHECK(count == 3);
  CHECK_FALSE(fs::exists(saved));
}

TEST_CASE("a chain through issuers/ to a trusted root is accepted", "[pki]") {
  Hierarchy h;
  h.install_ca();
  auto v = h.check(h.leaf.get());
  INFO(v.reason);
  CHECK(v.status == st::Good);
  // The intermediate sent with the leaf (Part 6 §6.2.3) instead of being in issuers/.
  fs::remove(h.pki.paths().issuers_certs / "intermediate.der");
  h.pki.reload();
  const auto chain = test::chain_der({h.leaf.get(), h.intermediate.get()});
  v = h.pki.validate(chain, {});
  INFO(v.reason);
  CHECK(v.status == st::Good);
  // A trusted intermediate (not the root) is enough too; the root is still needed to end the chain.
  test::write_der(h.pki.paths().trusted_certs / "intermediate.der", h.intermediate.get());
  fs::remove(h.pki.paths().trusted_certs / "root.der");
  test::write_der(h.pki.paths().issuers_certs / "root.der", h.root.get());
  h.pki.reload();
  CHECK(h.check(h.leaf.get()).status == st::Good);
}

TEST_CASE("a missing issuer is BadCertificateChainIncomplete", "[pki]") {
  Hierarchy h;
  h.install_ca();
  fs::remove(h.pki.paths().issuers_certs / "intermediate.der");
  h.pki.reload();
  const auto v = h.check(h.leaf.get());
  CHECK(v.status == st::BadCertificateChainIncomplete);
  CHECK(v.reason.find("Test Intermediate CA") != std::string::npos);
}

TEST_CASE("a chain without a trusted member is BadCertificateUntrusted", "[pki]") {
  Hierarchy h;
  h.install_ca();
  fs::rename(h.pki.paths().trusted_certs / "root.der", h.pki.paths().issuers_certs / "root.der");
  h.pki.reload();
  CHECK(h.check(h.leaf.get()).status == st::BadCertificateUntrusted);
}

TEST_CASE("a certificate whose signature does not verify is BadCertificateInvalid", "[pki]") {
  Hierarchy h;
  h.install_ca();
  // Claims the intermediate as issuer but is signed with another key.
  auto forged = make_cert(
      {.key = test::shared_key(2), .issuer = h.intermediate.get(), .issuer_key = test::shared_key(3)});
  CHECK(h.check(forged.get()).status == st::BadCertificateInvalid);
  // Self-signed by name, signed by someone else.
  auto fake_self = make_cert({.cn = "fake", .key = test::shared_key(2), .issuer_key = test::shared_key(3)});
  CHECK(h.check(fake_self.get()).status == st::BadCertificateInvalid);
}

TEST_CASE("bytes that are not a chain of DER certificates are BadCertificateInvalid", "[pki]") {
  Hierarchy h;
  auto client = self_signed();
  auto der = to_der(client.get());
  CHECK(h.pki.validate({}, {}).status == st::BadCertificateInvalid);
  std::vector<uint8_t> garbage(100, 0x30);
  CHECK(h.pki.validate(garbage, {}).status == st::BadCertificateInvalid);
  auto truncated = der;
  truncated.resize(der.size() - 1);
  CHECK(h.pki.validate(truncated, {}).status == st::BadCertificateInvalid);
  auto trailing = der;
  trailing.push_back(0);
  CHECK(h.pki.validate(trailing, {}).status == st::BadCertificateInvalid);
  // Nine certificates: over the chain bound, refused before any work on them.
  std::vector<uint8_t> long_chain;
  for (int i = 0; i < 9; ++i) long_chain.insert(long_chain.end(), der.begin(), der.end());
  CHECK(h.pki.validate(long_chain, {}).status == st::BadCertificateInvalid);
  std::vector<uint8_t> eight(long_chain.begin(), long_chain.begin() + static_cast<long>(8 * der.size()));
  CHECK(h.pki.validate(eight, {}).status == st::BadCertificateUntrusted);
}

TEST_CASE("an expired or not yet valid leaf is BadCertificateTimeInvalid", "[pki]") {
  Hierarchy h;
  h.install_ca();
  auto expired = h.signed_leaf({.not_before_days = -30, .not_after_days = -1});
  CHECK(h.check(expired.get()).status == st::BadCertificateTimeInvalid);
  auto early = h.signed_leaf({.not_before_days = 1, .not_after_days = 30});
  CHECK(h.check(early.get()).status == st::BadCertificateTimeInvalid);
  // Self-signed and trusted: the same rule.
  auto old_self = self_signed({.not_before_days = -30, .not_after_days = -1});
  test::write_der(h.pki.paths().trusted_certs / "old.der", old_self.get());
  h.pki.reload();
  CHECK(h.check(old_self.get()).status == st::BadCertificateTimeInvalid);
}

TEST_CASE("an expired CA is BadCertificateIssuerTimeInvalid", "[pki]") {
  Hierarchy h;
  h.intermediate = make_cert({.cn = "Test Intermediate CA",
                              .uri = "",
                              .key = test::shared_key(1),
                              .issuer = h.root.get(),
                              .issuer_key = test::shared_key(0),
                              .ca = true,
                              .not_before_days = -30,
                              .not_after_days = -1});
  h.leaf = h.signed_leaf({});
  h.install_ca();
  CHECK(h.check(h.leaf.get()).status == st::BadCertificateIssuerTimeInvalid);
}

TEST_CASE("a revoked leaf is BadCertificateRevoked, a revoked CA BadCertificateIssuerRevoked", "[pki]") {
  SECTION("leaf") {
    Hierarchy h;
    h.install_ca(true, true, {}, {h.leaf.get()});
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateRevoked);
    auto other = h.signed_leaf({});
    CHECK(h.check(other.get()).status == st::Good);
  }
  SECTION("intermediate") {
    Hierarchy h;
    h.install_ca(true, true, {h.intermediate.get()}, {});
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateIssuerRevoked);
  }
}

TEST_CASE("overlapping CRLs of one CA: any of them revokes, the newest decides currency", "[pki][crl]") {
  SECTION("a revocation in the newer list counts whichever file name sorts first") {
    // The older list is current too (issued 10 days ago, due in 30); the newer one (issued yesterday) adds
    // the leaf.
    for (const auto& [older, newer] : {std::pair{"a.crl", "b.crl"}, std::pair{"b.crl", "a.crl"}}) {
      Hierarchy h;
      h.install_ca(true, false);
      const fs::path dir = h.pki.paths().issuers_crl;
      test::write_crl(dir / older,
                      test::make_crl(h.intermediate.get(), test::shared_key(1), {}, -10, 30).get());
      test::write_crl(
          dir / newer,
          test::make_crl(h.intermediate.get(), test::shared_key(1), {h.leaf.get()}, -1, 30).get());
      h.pki.reload();
      INFO("older list in " << older);
      CHECK(h.check(h.leaf.get()).status == st::BadCertificateRevoked);
      auto other = h.signed_leaf({});
      CHECK(h.check(other.get()).status == st::Good);
    }
  }
  SECTION("a current older list does not make up for an outdated newest one") {
    for (const auto& [older, newer] : {std::pair{"a.crl", "b.crl"}, std::pair{"b.crl", "a.crl"}}) {
      Hierarchy h;
      h.install_ca(true, false);
      const fs::path dir = h.pki.paths().issuers_crl;
      test::write_crl(dir / older,
                      test::make_crl(h.intermediate.get(), test::shared_key(1), {}, -20, 30).get());
      test::write_crl(dir / newer,
                      test::make_crl(h.intermediate.get(), test::shared_key(1), {}, -5, -1).get());
      h.pki.reload();
      INFO("older list in " << older);
      const auto v = h.check(h.leaf.get());
      CHECK(v.status == st::BadCertificateRevocationUnknown);
      CHECK_THAT(v.reason, Catch::Contains("newest CRL is not current"));
    }
  }
  SECTION("an outdated older list beside a current newest one: current") {
    Hierarchy h;
    h.install_ca(true, false);
    const fs::path dir = h.pki.paths().issuers_crl;
    test::write_crl(dir / "a.crl",
                    test::make_crl(h.intermediate.get(), test::shared_key(1), {}, -40, -10).get());
    test::write_crl(dir / "b.crl",
                    test::make_crl(h.intermediate.get(), test::shared_key(1), {}, -1, 30).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get()).status == st::Good);
  }
}

TEST_CASE("a CA without a CRL is BadCertificateRevocationUnknown or ...IssuerRevocationUnknown", "[pki]") {
  SECTION("the leaf's issuer") {
    Hierarchy h;
    h.install_ca(true, false);
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateRevocationUnknown);
  }
  SECTION("the issuer's issuer") {
    Hierarchy h;
    h.install_ca(false, true);
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateIssuerRevocationUnknown);
  }
  SECTION("a CRL of the right name signed by another key does not count") {
    Hierarchy h;
    h.install_ca(true, false);
    test::write_crl(h.pki.paths().issuers_crl / "forged.crl",
                    test::make_crl(h.intermediate.get(), test::shared_key(3), {}).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateRevocationUnknown);
  }
}

TEST_CASE("a CRL past its nextUpdate leaves the revocation status unknown, what it lists stays revoked",
          "[pki][crl]") {
  // Lists made by OpenSSL here: issued 40 days ago, due 10 days ago.
  auto stale = [](X509* ca, EVP_PKEY* key, std::vector<X509*> revoked = {}) {
    return test::make_crl(ca, key, revoked, -40, -10);
  };
  SECTION("the leaf's issuer: BadCertificateRevocationUnknown, and the log says why") {
    Hierarchy h;
    h.install_ca(true, false);
    test::write_crl(h.pki.paths().issuers_crl / "intermediate.crl",
                    stale(h.intermediate.get(), test::shared_key(1)).get());
    h.pki.reload();
    const auto v = h.check(h.leaf.get());
    CHECK(v.status == st::BadCertificateRevocationUnknown);
    CHECK_THAT(v.reason, Catch::Contains("Test Intermediate CA") && Catch::Contains("not current") &&
                             Catch::Contains("nextUpdate 20"));
  }
  SECTION("the issuer's issuer: BadCertificateIssuerRevocationUnknown") {
    Hierarchy h;
    h.install_ca(false, true);
    test::write_crl(h.pki.paths().trusted_crl / "root.crl", stale(h.root.get(), test::shared_key(0)).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateIssuerRevocationUnknown);
  }
  SECTION("a certificate an outdated CRL lists is still BadCertificateRevoked") {
    Hierarchy h;
    h.install_ca(true, false);
    test::write_crl(h.pki.paths().issuers_crl / "intermediate.crl",
                    stale(h.intermediate.get(), test::shared_key(1), {h.leaf.get()}).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateRevoked);
  }
  SECTION("the CA's new CRL beside the outdated one is used") {
    Hierarchy h;
    h.install_ca(true, true);
    test::write_crl(h.pki.paths().issuers_crl / "intermediate-old.crl",
                    stale(h.intermediate.get(), test::shared_key(1)).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get()).status == st::Good);
  }
  SECTION("a CRL issued in the future does not speak for now either") {
    Hierarchy h;
    h.install_ca(true, false);
    test::write_crl(h.pki.paths().issuers_crl / "intermediate.crl",
                    test::make_crl(h.intermediate.get(), test::shared_key(1), {}, 2, 30).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get()).status == st::BadCertificateRevocationUnknown);
  }
  SECTION("a CRL without nextUpdate announces no replacement: it stays current") {
    Hierarchy h;
    h.install_ca(true, false);
    test::write_crl(
        h.pki.paths().issuers_crl / "intermediate.crl",
        test::make_crl(h.intermediate.get(), test::shared_key(1), {}, -1, test::kNoNextUpdate).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get()).status == st::Good);
  }
  SECTION("user certificates follow the same rule") {
    Hierarchy h;
    const PkiPaths& p = h.pki.paths();
    test::write_der(p.user_trusted_certs / "root.der", h.root.get());
    test::write_der(p.user_issuers_certs / "intermediate.der", h.intermediate.get());
    test::write_crl(p.user_trusted_crl / "root.crl",
                    test::make_crl(h.root.get(), test::shared_key(0), {}).get());
    test::write_crl(p.user_issuers_crl / "intermediate.crl",
                    stale(h.intermediate.get(), test::shared_key(1)).get());
    h.pki.reload();
    CHECK(h.check(h.leaf.get(), {.use = CertificateUse::User}).status == st::BadCertificateRevocationUnknown);
  }
}

TEST_CASE("a subjectAltName URI other than the ApplicationUri is BadCertificateUriInvalid", "[pki]") {
  Hierarchy h;
  h.install_ca();
  CHECK(h.check(h.leaf.get(), {.expected_application_uri = "urn:someone:else"}).status ==
        st::BadCertificateUriInvalid);
  CHECK(h.check(h.leaf.get(), {.expected_application_uri = "urn:test:client"}).status == st::Good);
  auto no_san = h.signed_leaf({.uri = ""});
  CHECK(h.check(no_san.get(), {.expected_application_uri = "urn:test:client"}).status ==
        st::BadCertificateUriInvalid);
}

TEST_CASE("a certificate its usage does not allow is BadCertificateUseNotAllowed", "[pki]") {
  Hierarchy h;
  h.install_ca();
  auto no_ku = h.signed_leaf({.key_usage = ""});
  CHECK(h.check(no_ku.get()).status == st::BadCertificateUseNotAllowed);
  auto no_sign = h.signed_leaf({.key_usage = "critical,keyEncipherment,dataEncipherment"});
  CHECK(h.check(no_sign.get()).status == st::BadCertificateUseNotAllowed);
  auto no_encipher = h.signed_leaf({.key_usage = "critical,digitalSignature,nonRepudiation"});
  CHECK(h.check(no_encipher.get()).status == st::BadCertificateUseNotAllowed);
  // A user certificate only signs.
  CHECK(h.check(no_encipher.get(), {.use = CertificateUse::User}).status != st::BadCertificateUseNotAllowed);
  auto server_only = h.signed_leaf({.ext_key_usage = "serverAuth"});
  CHECK(h.check(server_only.get()).status == st::BadCertificateUseNotAllowed);
  auto no_eku = h.signed_leaf({.ext_key_usage = ""});
  CHECK(h.check(no_eku.get()).status == st::Good);
}

TEST_CASE("a CA that may not sign certificates is BadCertificateIssuerUseNotAllowed", "[pki]") {
  Hierarchy h;
  // An end-entity certificate acting as the leaf's issuer.
  h.intermediate = make_cert({.cn = "Not a CA",
                              .uri = "",
                              .key = test::shared_key(1),
                              .issuer = h.root.get(),
                              .issuer_key = test::shared_key(0)});
  h.leaf = h.signed_leaf({});
  h.install_ca();
  CHECK(h.check(h.leaf.get()).status == st::BadCertificateIssuerUseNotAllowed);
}

TEST_CASE("a key shorter than the policy allows is BadCertificatePolicyCheckFailed", "[pki]") {
  Hierarchy h;
  auto small = self_signed({.key = test::shared_key(0, 1024)});
  test::write_der(h.pki.paths().trusted_certs / "small.der", small.get());
  h.pki.reload();
  const auto v = h.check(small.get(), {.min_key_bits = 2048, .max_key_bits = 4096});
  CHECK(v.status == st::BadCertificatePolicyCheckFailed);
  CHECK(v.reason.find("1024") != std::string::npos);
  // A deprecated policy's range (Basic128Rsa15: 1024..2048) accepts it.
  CHECK(h.check(small.get(), {.min_key_bits = 1024, .max_key_bits = 2048, .allow_sha1 = true}).status ==
        st::Good);
  // Above the maximum.
  auto client = self_signed();
  test::write_der(h.pki.paths().trusted_certs / "client.der", client.get());
  h.pki.reload();
  CHECK(h.check(client.get(), {.min_key_bits = 1024, .max_key_bits = 1024}).status ==
        st::BadCertificatePolicyCheckFailed);
}

TEST_CASE("a SHA-1 signature is refused unless the policy is a deprecated one", "[pki]") {
  Hierarchy h;
  auto sha1 = self_signed({.md = EVP_sha1()});
  test::write_der(h.pki.paths().trusted_certs / "sha1.der", sha1.get());
  h.pki.reload();
  CHECK(h.check(sha1.get()).status == st::BadCertificatePolicyCheckFailed);
  CHECK(h.check(sha1.get(), {.allow_sha1 = true}).status == st::Good);
  // Signed by a CA with SHA-1.
  h.install_ca();
  auto leaf = h.signed_leaf({.md = EVP_sha1()});
  CHECK(h.check(leaf.get()).status == st::BadCertificatePolicyCheckFailed);
}

TEST_CASE("an RSA-PSS signature is held to the same hashes as PKCS#1 v1.5", "[pki]") {
  Hierarchy h;
  auto pss256 = self_signed({.md = EVP_sha256(), .pss = true});
  auto pss1 = self_signed({.cn = "pss-sha1", .md = EVP_sha1(), .pss = true});
  test::write_der(h.pki.paths().trusted_certs / "pss256.der", pss256.get());
  test::write_der(h.pki.paths().trusted_certs / "pss1.der", pss1.get());
  h.pki.reload();
  CHECK(h.check(pss256.get()).status == st::Good);
  const auto v = h.check(pss1.get());
  CHECK(v.status == st::BadCertificatePolicyCheckFailed);
  CHECK(v.reason.find("SHA-1") != std::string::npos);
}

TEST_CASE("a CA's pathLenConstraint bounds the CAs below it", "[pki]") {
  for (const char* constraint : {"critical,CA:TRUE,pathlen:0", "critical,CA:TRUE,pathlen:1"}) {
    INFO(constraint);
    Hierarchy h;
    h.root = make_cert({.cn = "Test Root CA",
                        .uri = "",
                        .key = test::shared_key(0),
                        .ca = true,
                        .not_after_days = 3650,
                        .basic_constraints = constraint});
    h.intermediate = make_cert({.cn = "Test Intermediate CA",
                                .uri = "",
                                .key = test::shared_key(1),
                                .issuer = h.root.get(),
                                .issuer_key = test::shared_key(0),
                                .ca = true,
                                .basic_constraints = "critical,CA:TRUE,pathlen:0"});
    h.leaf = h.signed_leaf({});
    h.install_ca();
    const auto v = h.check(h.leaf.get());
    if (std::string(constraint).ends_with("pathlen:0")) {
      CHECK(v.status == st::BadCertificateIssuerUseNotAllowed);
      CHECK(v.reason.find("pathLenConstraint 0") != std::string::npos);
    } else {
      CHECK(v.status == st::Good);
    }
  }
}

TEST_CASE("names below a CA must lie within its nameConstraints", "[pki]") {
  Hierarchy h;
  h.intermediate = make_cert({.cn = "Test Intermediate CA",
                              .uri = "",
                              .key = test::shared_key(1),
                              .issuer = h.root.get(),
                              .issuer_key = test::shared_key(0),
                              .ca = true,
                              .extensions = {{"nameConstraints", "critical,permitted;DNS:plant.example"}}});
  h.install_ca();
  auto inside = h.signed_leaf({.san = "URI:urn:test:client,DNS:host.plant.example"});
  auto outside = h.signed_leaf({.san = "URI:urn:test:client,DNS:host.other.example"});
  CHECK(h.check(inside.get()).status == st::Good);
  const auto v = h.check(outside.get());
  CHECK(v.status == st::BadCertificateIssuerUseNotAllowed);
  CHECK(v.reason.find("nameConstraints") != std::string::npos);
}

TEST_CASE("a critical extension opcuad does not know refuses the certificate", "[pki]") {
  Hierarchy h;
  auto critical =
      self_signed({.cn = "critical",
                   .extensions = {{"1.3.6.1.4.1.55555.1", "critical,ASN1:UTF8String:must understand"}}});
  auto optional =
      self_signed({.cn = "optional", .extensions = {{"1.3.6.1.4.1.55555.1", "ASN1:UTF8String:may skip"}}});
  test::write_der(h.pki.paths().trusted_certs / "critical.der", critical.get());
  test::write_der(h.pki.paths().trusted_certs / "optional.der", optional.get());
  h.pki.reload();
  const auto v = h.check(critical.get());
  CHECK(v.status == st::BadCertificateInvalid);
  CHECK(v.reason.find("critical extension") != std::string::npos);
  CHECK(h.check(optional.get()).status == st::Good);
  // On a CA of the chain.
  h.intermediate =
      make_cert({.cn = "Test Intermediate CA",
                 .uri = "",
                 .key = test::shared_key(1),
                 .issuer = h.root.get(),
                 .issuer_key = test::shared_key(0),
                 .ca = true,
                 .extensions = {{"1.3.6.1.4.1.55555.1", "critical,ASN1:UTF8String:must understand"}}});
  h.leaf = h.signed_leaf({});
  h.install_ca();
  CHECK(h.check(h.leaf.get()).status == st::BadCertificateIssuerUseNotAllowed);
}

TEST_CASE("trust changes are picked up without a restart", "[pki]") {
  Hierarchy h;
  auto client = self_signed();
  CHECK(h.check_proven(client.get()).status == st::BadCertificateUntrusted);
  const auto thumb = to_hex(thumbprint(client.get()));
  // The operator moves the rejected file to trusted/ (the interval is 0 in tests: the next check looks).
  fs::rename(h.pki.paths().rejected_certs / (thumb + ".der"), h.pki.paths().trusted_certs / (thumb + ".der"));
  CHECK(h.check(client.get()).status == st::Good);
  fs::remove(h.pki.paths().trusted_certs / (thumb + ".der"));
  CHECK(h.check(client.get()).status == st::BadCertificateUntrusted);
}

TEST_CASE("with a long check interval, reload() applies a trust change at once", "[pki]") {
  test::TempDir dir;
  PkiSettings s = test::test_settings(dir.path);
  s.trust_check_interval = std::chrono::hours(1);
  Pki pki;
  REQUIRE(pki.open(s).ok());
  auto client = self_signed();
  const auto der = to_der(client.get());
  CHECK(pki.validate(der, {}).status == st::BadCertificateUntrusted);
  test::write_der(pki.paths().trusted_certs / "client.der", client.get());
  CHECK(pki.validate(der, {}).status == st::BadCertificateUntrusted);  // not looked at yet
  const auto line = pki.reload();
  CHECK(line.find("1 trusted") != std::string::npos);
  CHECK(pki.validate(der, {}).status == st::Good);
}

TEST_CASE("trust on first use trusts an otherwise valid self-signed certificate, with a warning", "[pki]") {
  Hierarchy h(true, true);
  auto client = self_signed();
  auto v = h.check_proven(client.get());
  INFO(v.reason);
  CHECK(v.status == st::Good);
  CHECK(h.recorded);
  CHECK(fs::exists(h.pki.paths().trusted_certs / (v.thumbprint_hex + ".der")));
  REQUIRE(h.warnings.size() == 1);
  CHECK(h.warnings[0].find("trust on first use") != std::string::npos);
  v = h.check(client.get());
  CHECK(v.status == st::Good);
  CHECK_FALSE(v.record_after_proof);  // now trusted: no second first use
  CHECK(h.warnings.size() == 1);
  // Only self-signed certificates, and only if they pass the other checks.
  h.install_ca();
  fs::rename(h.pki.paths().trusted_certs / "root.der", h.pki.paths().issuers_certs / "root.der");
  h.pki.reload();
  CHECK(h.check(h.leaf.get()).status == st::BadCertificateUntrusted);
  auto expired = self_signed({.cn = "expired", .not_before_days = -10, .not_after_days = -1});
  CHECK(h.check_proven(expired.get()).status == st::BadCertificateTimeInvalid);
  CHECK_FALSE(h.recorded);
  CHECK_FALSE(fs::exists(h.pki.paths().trusted_certs / (to_hex(thumbprint(expired.get())) + ".der")));
  // A user certificate is never trusted on first use.
  auto user = self_signed({.cn = "user"});
  CHECK(h.check_proven(user.get(), {.use = CertificateUse::User}).status == st::BadCertificateUntrusted);
  CHECK_FALSE(h.recorded);
}

TEST_CASE(
    "validation writes nothing: a certificate is kept in rejected/ or trusted on first use only after proof",
    "[pki][hostile]") {
  // A client may send anybody's certificate; only one that signs its OpenSecureChannel request with the
  // certificate's key is recorded (the channel calls record_after_proof then).
  for (const bool tofu : {false, true}) {
    Hierarchy h(true, tofu);
    auto client = self_signed({.cn = tofu ? "first use" : "stranger"});
    const auto v = h.check(client.get());
    CHECK(v.status == (tofu ? st::Good : st::BadCertificateUntrusted));
    REQUIRE(v.record_after_proof);
    REQUIRE(v.public_key);  // to verify the signature with, also when untrusted
    const fs::path file =
        (tofu ? h.pki.paths().trusted_certs : h.pki.paths().rejected_certs) / (v.thumbprint_hex + ".der");
    CHECK_FALSE(fs::exists(file));
    CHECK(v.record_after_proof());
    CHECK(fs::exists(file));
  }
}

TEST_CASE("certificate files are written at most kMaxCertificateWritesPerMinute a minute", "[pki][hostile]") {
  Hierarchy h(false);
  h.open(false, 1000);
  size_t recorded = 0;
  std::vector<X509Ptr> flood;
  for (uint32_t i = 0; i < kMaxCertificateWritesPerMinute + 5; ++i) {
    flood.push_back(self_signed({.cn = "flood " + std::to_string(i)}));
    CHECK(h.check_proven(flood.back().get()).status == st::BadCertificateUntrusted);
    recorded += h.recorded ? 1 : 0;
  }
  CHECK(recorded == kMaxCertificateWritesPerMinute);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(h.pki.paths().rejected_certs)) ++files;
  CHECK(files == kMaxCertificateWritesPerMinute);
  // One warning for the whole minute, not one per certificate left out.
  size_t warned = 0;
  for (const auto& w : h.warnings) warned += w.find("per minute") != std::string::npos ? 1 : 0;
  CHECK(warned == 1);
  // A certificate already kept is seen again without a write.
  h.check_proven(flood.front().get());
  CHECK(h.recorded);
}

TEST_CASE("trust on first use stops at kMaxFirstUseTrusted files in trusted/certs", "[pki][hostile]") {
  Hierarchy h(true, true);
  for (uint32_t i = 0; i < kMaxFirstUseTrusted; ++i) {
    std::ofstream(h.pki.paths().trusted_certs / ("placeholder-" + std::to_string(i) + ".txt")) << "x";
  }
  auto client = self_signed({.cn = "one too many"});
  const auto v = h.check_proven(client.get());
  CHECK(v.status == st::Good);  // what validation says; the channel refuses since nothing was recorded
  CHECK_FALSE(h.recorded);
  CHECK_FALSE(fs::exists(h.pki.paths().trusted_certs / (v.thumbprint_hex + ".der")));
  const std::string cap = "at most " + std::to_string(kMaxFirstUseTrusted) + " for first use";
  CHECK(std::any_of(h.warnings.begin(), h.warnings.end(),
                    [&](const std::string& w) { return w.find(cap) != std::string::npos; }));
}

TEST_CASE("user certificates are checked against the user trust list only", "[pki]") {
  Hierarchy h;
  auto user = self_signed({.cn = "operator", .uri = ""});
  test::write_der(h.pki.paths().trusted_certs / "user.der", user.get());
  h.pki.reload();
  CHECK(h.check(user.get(), {.use = CertificateUse::User}).status == st::BadCertificateUntrusted);
  test::write_der(h.pki.paths().user_trusted_certs / "user.der", user.get());
  h.pki.reload();
  CHECK(h.check(user.get(), {.use = CertificateUse::User}).status == st::Good);
  // An untrusted user certificate is not saved to rejected/ (that folder is for applications).
  auto stranger = self_signed({.cn = "stranger", .uri = ""});
  CHECK(h.check(stranger.get(), {.use = CertificateUse::User}).status == st::BadCertificateUntrusted);
  CHECK(fs::is_empty(h.pki.paths().rejected_certs));
}

TEST_CASE("validation runs on several threads at once", "[pki]") {
  Hierarchy h;
  h.install_ca();
  auto client = self_signed();
  test::write_der(h.pki.paths().trusted_certs / "client.der", client.get());
  h.pki.reload();
  const auto leaf_der = to_der(h.leaf.get());
  const auto client_der = to_der(client.get());
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (h.pki.validate(i % 2 ? leaf_der : client_der, {}).ok()) ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(good == 80);
}

// What an unauthenticated peer's chain may cost (docs/SECURITY.md, "Certificate validation"): keys are
// checked before they verify anything, and chain building verifies at most 16 signatures.
EVP_PKEY* ec_key() {
  static EvpPkeyPtr key(EVP_EC_gen("P-256"));
  return key.get();
}
EVP_PKEY* large_exponent_key() {
  static EvpPkeyPtr key = [] {
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nullptr);
    BIGNUM* e = BN_new();
    BN_set_word(e, (uint64_t{1} << 40) + 1);  // 41 bits
    EVP_PKEY* k = nullptr;
    const bool made = ctx && e && EVP_PKEY_keygen_init(ctx) == 1 &&
                      EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) == 1 &&
                      EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx, e) == 1 && EVP_PKEY_keygen(ctx, &k) == 1;
    BN_free(e);
    EVP_PKEY_CTX_free(ctx);
    return EvpPkeyPtr(made ? k : nullptr);
  }();
  return key.get();
}

std::vector<uint8_t> chain_der(const std::vector<X509*>& certs) {
  std::vector<uint8_t> out;
  for (X509* c : certs) {
    const auto der = to_der(c);
    out.insert(out.end(), der.begin(), der.end());
  }
  return out;
}

TEST_CASE("a look-alike issuer chain costs at most 16 signature checks", "[pki][hostile]") {
  // Seven certificates of one name, each signed by the next one's key, sent in the order that makes every
  // link try all the others first; the leaf is signed by the last. Unbounded, building this chain takes
  // 7 + 7 + 6 + ... signature checks.
  Hierarchy h;
  constexpr int kLookAlikes = 7;
  std::vector<X509Ptr> fakes(kLookAlikes);
  for (int i = 0; i < kLookAlikes; ++i) {
    fakes[i] = make_cert({.cn = "Look-alike CA",
                          .uri = "",
                          .key = test::shared_key(i),
                          .issuer_key = test::shared_key(i == 0 ? 0 : i - 1),
                          .ca = true});
  }
  X509Ptr leaf = make_cert({.key = test::shared_key(7),
                            .issuer = fakes.back().get(),
                            .issuer_key = test::shared_key(kLookAlikes - 1)});
  std::vector<X509*> sent{leaf.get()};
  for (auto& f : fakes) sent.push_back(f.get());
  const auto v = h.pki.validate(chain_der(sent), {});
  CHECK(v.status == st::BadCertificateInvalid);
  CHECK_THAT(v.reason, Catch::Contains("more than 16 signature checks"));
  CHECK(v.signature_checks == 16);
}

TEST_CASE("an issuer's key is refused before it verifies a signature", "[pki][hostile]") {
  Hierarchy h;
  SECTION("not RSA") {
    X509Ptr ca = make_cert({.cn = "EC CA", .uri = "", .key = ec_key(), .ca = true});
    X509Ptr leaf = make_cert({.key = test::shared_key(2), .issuer = ca.get(), .issuer_key = ec_key()});
    const auto v = h.pki.validate(chain_der({leaf.get(), ca.get()}), {});
    CHECK(v.status == st::BadCertificatePolicyCheckFailed);
    CHECK_THAT(v.reason, Catch::Contains("EC CA") && Catch::Contains("not an RSA key"));
    CHECK(v.signature_checks == 0);
  }
  SECTION("an RSA key with a public exponent over 32 bits") {
    REQUIRE(large_exponent_key() != nullptr);
    X509Ptr ca = make_cert({.cn = "Slow CA", .uri = "", .key = large_exponent_key(), .ca = true});
    X509Ptr leaf =
        make_cert({.key = test::shared_key(2), .issuer = ca.get(), .issuer_key = large_exponent_key()});
    const auto v = h.pki.validate(chain_der({leaf.get(), ca.get()}), {});
    CHECK(v.status == st::BadCertificatePolicyCheckFailed);
    CHECK_THAT(v.reason, Catch::Contains("41-bit public exponent"));
    CHECK(v.signature_checks == 0);
  }
  SECTION("a key below the policy's minimum") {
    X509Ptr ca = make_cert({.cn = "Small CA", .uri = "", .key = test::shared_key(0, 1024), .ca = true});
    X509Ptr leaf =
        make_cert({.key = test::shared_key(2), .issuer = ca.get(), .issuer_key = test::shared_key(0, 1024)});
    const auto v = h.pki.validate(chain_der({leaf.get(), ca.get()}), {});
    CHECK(v.status == st::BadCertificatePolicyCheckFailed);
    CHECK_THAT(v.reason, Catch::Contains("1024-bit key"));
    CHECK(v.signature_checks == 0);
  }
  SECTION("a self-issued certificate's own key") {
    X509Ptr self = make_cert({.key = ec_key()});
    const auto v = h.pki.validate(chain_der({self.get()}), {});
    CHECK(v.status == st::BadCertificatePolicyCheckFailed);
    CHECK(v.signature_checks == 0);
  }
  SECTION("a good chain counts its links") {
    h.install_ca();
    const auto v = h.check(h.leaf.get());
    CHECK(v.status == st::Good);
    CHECK(v.signature_checks == 3);  // leaf by intermediate, intermediate by root, root by itself
  }
}

}  // namespace
}  // namespace opcuad::security
