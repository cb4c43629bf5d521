// The `opcuad pki` subcommand functions: their lines, files and exit codes.
#include <catch2/catch.hpp>

#include <openssl/pem.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "daemon/pki_command.hpp"
#include "tests/unit/security/pki_test_support.hpp"

namespace opcuad {
namespace {

namespace fs = std::filesystem;
using namespace security;

struct Run {
  int code = -1;
  std::string out, err;
};

template <typename F>
Run run(F&& f) {
  std::ostringstream out, err;
  Run r;
  r.code = f(out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST_CASE("pki show prints the own certificate as one key=value line", "[pki]") {
  test::TempDir dir;
  const PkiSettings s = test::test_settings(dir.path);
  auto none = run([&](auto& o, auto& e) { return pki_show(s, o, e); });
  CHECK(none.code == kPkiExitFailure);
  CHECK(none.err.starts_with("opcuad pki: no own certificate"));
  Pki pki;
  REQUIRE(pki.open(s).ok());
  auto r = run([&](auto& o, auto& e) { return pki_show(s, o, e); });
  INFO(r.out);
  CHECK(r.code == kPkiExitOk);
  CHECK(r.err.empty());
  CHECK(lines(r.out) == 1);
  CHECK(r.out.starts_with("store=own thumbprint=" + pki.thumbprint_hex() + " "));
  CHECK(r.out.find(" subject=\"O=opcuad tests,CN=opcuad test\" ") != std::string::npos);
  CHECK(r.out.find(" application_uri=urn:test:server ") != std::string::npos);
  CHECK(r.out.find(" dns_names=localhost,plant.example ") != std::string::npos);
  CHECK(r.out.find(" ip_addresses=127.0.0.1,::1 ") != std::string::npos);
  CHECK(r.out.find(" key_bits=2048 ") != std::string::npos);
  CHECK(r.out.find(" not_after=" + iso_time(pki.info().not_after) + " ") != std::string::npos);
}

TEST_CASE("pki trust and pki reject move certificates between rejected/ and trusted/", "[pki]") {
  test::TempDir dir;
  const PkiSettings s = test::test_settings(dir.path);
  Pki pki;
  REQUIRE(pki.open(s).ok());
  auto client = test::make_cert({.cn = "client one", .key = test::shared_key(3)});
  const auto der = to_der(client.get());
  const auto v = pki.validate(der, {});
  REQUIRE(v.status == ua::status::BadCertificateUntrusted);
  REQUIRE(v.record_after_proof);
  REQUIRE(v.record_after_proof());  // as the secure channel does once the client's signature verified
  const std::string thumb = v.thumbprint_hex;

  auto listed = run([&](auto& o, auto& e) { return pki_list(s, o, e); });
  CHECK(listed.code == kPkiExitOk);
  CHECK(lines(listed.out) == 1);
  CHECK(listed.out.starts_with("store=rejected thumbprint=" + thumb + " subject=\"CN=client one\""));

  // Upper case is accepted too.
  std::string upper = thumb;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto trusted = run([&](auto& o, auto& e) { return pki_trust(s, upper, o, e); });
  INFO(trusted.err);
  CHECK(trusted.code == kPkiExitOk);
  CHECK(trusted.out.starts_with("action=trusted thumbprint=" + thumb));
  CHECK(fs::exists(pki.paths().trusted_certs / (thumb + ".der")));
  CHECK(fs::is_empty(pki.paths().rejected_certs));
  CHECK(pki.validate(der, {}).status == ua::status::Good);  // the running Pki sees it
  CHECK(run([&](auto& o, auto& e) { return pki_trust(s, thumb, o, e); }).code == kPkiExitOk);  // already

  auto rejected = run([&](auto& o, auto& e) { return pki_reject(s, thumb, o, e); });
  CHECK(rejected.code == kPkiExitOk);
  CHECK(rejected.out.starts_with("action=rejected thumbprint=" + thumb));
  CHECK(fs::exists(pki.paths().rejected_certs / (thumb + ".der")));
  CHECK(pki.validate(der, {}).status == ua::status::BadCertificateUntrusted);

  const std::string unknown(40, 'a');
  auto missing = run([&](auto& o, auto& e) { return pki_trust(s, unknown, o, e); });
  CHECK(missing.code == kPkiExitFailure);
  CHECK(missing.err.find("no certificate with thumbprint") != std::string::npos);
  CHECK(run([&](auto& o, auto& e) { return pki_reject(s, unknown, o, e); }).code == kPkiExitFailure);
  CHECK(run([&](auto& o, auto& e) { return pki_reject(s, "not-a-thumbprint", o, e); }).code == kPkiExitUsage);
  CHECK(run([&](auto& o, auto& e) { return pki_trust(s, "", o, e); }).code == kPkiExitUsage);
}

TEST_CASE("pki trust copies a certificate file, DER or PEM, into trusted/ as DER", "[pki]") {
  test::TempDir dir;
  const PkiSettings s = test::test_settings(dir.path);
  Pki pki;
  REQUIRE(pki.open(s).ok());
  auto client = test::make_cert({.cn = "pem client", .key = test::shared_key(3)});
  const fs::path pem = dir.path / "client.pem";
  {
    FILE* f = std::fopen(pem.c_str(), "w");
    REQUIRE(f);
    PEM_write_X509(f, client.get());
    std::fclose(f);
  }
  auto r = run([&](auto& o, auto& e) { return pki_trust(s, pem.string(), o, e); });
  INFO(r.err);
  CHECK(r.code == kPkiExitOk);
  const std::string thumb = to_hex(thumbprint(client.get()));
  const fs::path target = pki.paths().trusted_certs / (thumb + ".der");
  REQUIRE(fs::exists(target));
  CHECK(parse_der([&] {
    std::ifstream in(target, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  }()));
  CHECK(fs::exists(pem));  // copied, not moved
  auto bad = run([&](auto& o, auto& e) { return pki_trust(s, (dir.path / "nothing.der").string(), o, e); });
  CHECK(bad.code == kPkiExitFailure);

  auto listed = run([&](auto& o, auto& e) { return pki_list(s, o, e); });
  CHECK(listed.out.find("store=trusted thumbprint=" + thumb) != std::string::npos);
}

TEST_CASE("pki list shows every store and CRL, and flags files that are not certificates", "[pki]") {
  test::TempDir dir;
  const PkiSettings s = test::test_settings(dir.path);
  CHECK(run([&](auto& o, auto& e) { return pki_list(s, o, e); }).code == kPkiExitFailure);  // no directory
  Pki pki;
  REQUIRE(pki.open(s).ok());
  auto root = test::make_cert({.cn = "Root", .uri = "", .key = test::shared_key(0), .ca = true});
  test::write_der(pki.paths().trusted_certs / "root.der", root.get());
  test::write_der(pki.paths().issuers_certs / "root-copy.der", root.get());
  test::write_der(pki.paths().user_trusted_certs / "root.der", root.get());
  test::write_crl(pki.paths().trusted_crl / "root.crl",
                  test::make_crl(root.get(), test::shared_key(0), {root.get()}).get());
  std::ofstream(pki.paths().trusted_certs / "junk.der") << "junk";
  auto r = run([&](auto& o, auto& e) { return pki_list(s, o, e); });
  CHECK(r.code == kPkiExitOk);
  CHECK(lines(r.out) == 5);
  CHECK(r.out.find("store=trusted error=\"not a certificate\" file=") != std::string::npos);
  CHECK(r.out.find("store=issuers thumbprint=") != std::string::npos);
  CHECK(r.out.find("store=user_trusted thumbprint=") != std::string::npos);
  CHECK(r.out.find("store=trusted_crl issuer=\"CN=Root\" next_update=") != std::string::npos);
  CHECK(r.out.find(" revoked=1 ") != std::string::npos);
}

TEST_CASE("pki regenerate makes a new certificate and keeps the old one aside", "[pki]") {
  test::TempDir dir;
  const PkiSettings s = test::test_settings(dir.path);
  std::string old_thumb;
  {
    Pki pki;
    REQUIRE(pki.open(s).ok());
    old_thumb = pki.thumbprint_hex();
  }
  auto r = run([&](auto& o, auto& e) { return pki_regenerate(s, o, e); });
  INFO(r.err);
  CHECK(r.code == kPkiExitOk);
  CHECK(r.out.starts_with("action=regenerated thumbprint="));
  CHECK(r.out.find(old_thumb) == std::string::npos);
  size_t old_certs = 0, old_keys = 0;
  for (const auto& e : fs::directory_iterator(dir.path / "own/certs/old")) {
    ++old_certs;
    auto c = read_certificate_file(e.path());
    REQUIRE(c);
    CHECK(to_hex(thumbprint(c.get())) == old_thumb);
  }
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path / "own/private/old")) ++old_keys;
  CHECK(old_certs == 1);
  CHECK(old_keys == 1);
  Pki pki;
  const auto opened = pki.open(s);
  REQUIRE(opened.ok());
  CHECK(opened.notices.empty());  // loaded, not generated again
  CHECK(pki.thumbprint_hex() != old_thumb);
  CHECK(r.out.find("thumbprint=" + pki.thumbprint_hex()) != std::string::npos);
}

}  // namespace
}  // namespace opcuad
