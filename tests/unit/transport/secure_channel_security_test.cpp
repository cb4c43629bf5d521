// Signed and encrypted secure channels (Part 6 §6.7.2): the test client (secure_test_client.hpp), with
// certificates of a real PKI, opens a secured channel, exchanges a request, and every kind of damage to a
// chunk closes the channel with BadSecurityChecksFailed without the request reaching the service.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

#include "tests/unit/transport/pki_validator.hpp"
#include "tests/unit/transport/secure_fixture.hpp"
#include "transport/security/crypto.hpp"
#include "transport/security/pki.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
namespace status = ua::status;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("opcuad-secure-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

// A server PKI (trusting the client's certificate) and a client certificate, made once for all tests.
struct Keys {
  TempDir dir;
  security::Pki server, client;
  security::ServerIdentity identity;
  security::Pkey client_private, client_public, server_public;
  Keys() {
    security::PkiSettings s;
    s.directory = dir.path / "server";
    s.application_uri = "urn:test:server";
    s.application_name = "server";
    REQUIRE(server.open(s).ok());
    security::PkiSettings c = s;
    c.directory = dir.path / "client";
    c.application_uri = "urn:test:client";
    c.application_name = "client";
    REQUIRE(client.open(c).ok());
    fs::copy_file(client.paths().own_certificate, server.paths().trusted_certs / "client.der");
    server.reload();
    identity.certificate = server.certificate_der();
    identity.thumbprint = server.thumbprint();
    identity.private_key = security::share_pkey(server.private_key());
    server_public = security::certificate_public_key(server.certificate_der());
    client_private = security::share_pkey(client.private_key());
    client_public = security::certificate_public_key(client.certificate_der());
  }
};

Keys& keys() {
  static Keys k;
  return k;
}

TransportConfig secured_config(const security::Policy& p, ua::MessageSecurityMode mode) {
  TransportConfig c;
  c.security_offers = {{&p, mode}};
  c.identity = &keys().identity;
  c.validate_certificate = pki_validator(keys().server);
  return c;
}

// A client with the test PKI's client certificate, for the server's certificate (or another server's:
// `server_public`, `server_thumbprint`).
SecureTestClient client(const security::Policy& p, ua::MessageSecurityMode mode,
                        EVP_PKEY* server_public = keys().server_public.get(),
                        const std::array<uint8_t, 20>& server_thumbprint = keys().identity.thumbprint) {
  return SecureTestClient(
      p, mode,
      {keys().client_private.get(), keys().client.certificate_der(), server_public, server_thumbprint});
}

// The client's OPN Issue request in `pieces` chunks; see SecureTestClient::open_request_chunks.
std::vector<std::string> open_chunks(SecureTestClient& c, size_t pieces,
                                     std::vector<uint32_t> request_ids = {},
                                     std::span<const uint8_t> chain = {}) {
  auto chunks =
      c.open_request_chunks(1, ua::SecurityTokenRequestType::Issue, pieces, request_ids, 600000, chain);
  for (const auto& chunk : chunks) REQUIRE(!chunk.empty());
  return chunks;
}

std::string issue_request(SecureTestClient& c, std::span<const uint8_t> chain = {}) {
  return open_chunks(c, 1, {}, chain).front();
}

// Reads the server's OPN response and derives both directions' keys; its security header names the policy,
// carries the server certificate and the thumbprint of the client's.
void accept_open(SecureTestClient& c, const std::string& out) {
  SecureTestClient::OpenHeader header;
  REQUIRE(c.accept_open(out, nullptr, &header));
  REQUIRE(header.policy_uri == c.policy().uri);
  CHECK(header.sender_certificate == keys().identity.certificate);
  const auto client_thumb = security::sha1(keys().client.certificate_der());
  CHECK(header.receiver_thumbprint == std::vector<uint8_t>(client_thumb.begin(), client_thumb.end()));
}

std::string message(SecureTestClient& c, uint32_t request_id, std::string_view body) {
  std::string m = c.message(request_id, body);
  REQUIRE(!m.empty());
  return m;
}

// Verifies and decrypts one server MSG chunk; returns its body (after the sequence header).
std::vector<uint8_t> unseal(SecureTestClient& c, std::string_view chunk) {
  SecureTestClient::Unsealed u;
  REQUIRE(c.unseal(chunk, u));
  return u.body;
}

// HEL, secured OPN; returns with the channel open and the output cleared.
void open_secured(Harness& h, SecureTestClient& c) {
  h.feed(hello());
  h.sink.out.clear();
  h.feed(issue_request(c));
  h.run();
  auto out = output_chunks(h.sink.out);
  REQUIRE(out.size() == 1);
  accept_open(c, out[0]);
  h.sink.out.clear();
}

// Sends HEL and `open` to a fresh channel; the status of the ERR it answers with (Good when it answered
// something else, which the callers' checks then fail on).
ua::StatusCode refusal(const TransportConfig& config, const std::string& open) {
  Harness h(config);
  h.feed(hello());
  h.sink.out.clear();
  h.feed(open);
  h.run();
  auto out = output_chunks(h.sink.out);
  REQUIRE(out.size() == 1);
  if (out[0].substr(0, 3) != "ERR") return status::Good;
  CHECK(h.events.closed);
  return error_status(out[0]);
}

}  // namespace

TEST_CASE("secure channel: every policy and mode opens, answers a request and secures the response",
          "[transport][security]") {
  for (auto id : {security::PolicyId::Basic256Sha256, security::PolicyId::Aes128_Sha256_RsaOaep,
                  security::PolicyId::Aes256_Sha256_RsaPss}) {
    for (auto mode : {ua::MessageSecurityMode::Sign, ua::MessageSecurityMode::SignAndEncrypt}) {
      const auto& p = security::policy(id);
      INFO(p.name << " mode " << static_cast<int>(mode));
      Harness h(secured_config(p, mode));
      SecureTestClient c = client(p, mode);
      open_secured(h, c);
      CHECK(h.channel->security_policy().id == id);
      CHECK(h.channel->security_mode() == mode);
      // The per-policy counters (/metrics) see the channel under its own policy.
      CHECK(TransportStats::get(h.stats.channels_opened[static_cast<size_t>(id)]) == 1);
      CHECK(TransportStats::get(h.stats.channels_opened[0]) == 0);
      CHECK(std::vector<uint8_t>(h.channel->client_certificate().begin(),
                                 h.channel->client_certificate().end()) == keys().client.certificate_der());
      h.feed(message(c, 7, encode_request(read_request(5, 3))));
      h.run();
      CHECK(h.handler.requests == 1);
      auto out = output_chunks(h.sink.out);
      REQUIRE(out.size() == 1);
      REQUIRE(out[0].substr(0, 3) == "MSG");
      if (mode == ua::MessageSecurityMode::SignAndEncrypt) {
        CHECK((out[0].size() - kSymmetricHeaderSize) % 16 == 0);
      }
      auto body = unseal(c, out[0]);
      ua::Decoder d(body);
      ua::NodeId type;
      ua::decode(d, type);
      ua::ReadResponse resp;
      ua::decode(d, resp);
      REQUIRE(d.ok());
      CHECK(resp.response_header.request_handle == 5);
      CHECK(resp.results.size() == 3);
    }
  }
}

TEST_CASE("secure channel: a flipped bit anywhere in a secured chunk closes the channel and delivers nothing",
          "[transport][security]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  for (auto mode : {ua::MessageSecurityMode::Sign, ua::MessageSecurityMode::SignAndEncrypt}) {
    // Positions: the sequence header, the body, the padding or the last body byte, the signature.
    for (size_t where : {size_t{17}, size_t{21}, size_t{40}, size_t{SIZE_MAX - 40}, size_t{SIZE_MAX - 1}}) {
      INFO("mode " << static_cast<int>(mode) << " position " << where);
      Harness h(secured_config(p, mode));
      SecureTestClient c = client(p, mode);
      open_secured(h, c);
      std::string m = message(c, 7, encode_request(read_request(5, 3)));
      const size_t at = where > m.size() ? m.size() - (SIZE_MAX - where) : where;
      m[at] = static_cast<char>(m[at] ^ 0x04);
      h.feed(m);
      h.run();
      CHECK(h.handler.requests == 0);
      auto out = output_chunks(h.sink.out);
      REQUIRE(out.size() == 1);
      CHECK(out[0].substr(0, 3) == "ERR");
      CHECK(error_status(out[0]) == status::BadSecurityChecksFailed);
      CHECK(h.events.closed);
    }
  }
}

TEST_CASE("secure channel: a replayed chunk is refused", "[transport][security]") {
  const auto& p = security::policy(security::PolicyId::Aes256_Sha256_RsaPss);
  Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
  SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
  open_secured(h, c);
  const std::string m = message(c, 7, encode_request(read_request(5, 1)));
  h.feed(m);
  h.run();
  CHECK(h.handler.requests == 1);
  h.sink.out.clear();
  h.feed(m);  // the same bytes again: a valid signature, an old sequence number
  h.run();
  CHECK(h.handler.requests == 1);
  auto out = output_chunks(h.sink.out);
  REQUIRE(out.size() == 1);
  CHECK(error_status(out[0]) == status::BadSequenceNumberInvalid);
}

TEST_CASE(
    "secure channel: OPN for another certificate, an untrusted client, a damaged OPN, a policy not offered",
    "[transport][security]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  SECTION("untrusted client certificate: BadSecurityChecksFailed, nothing opened") {
    TempDir d;
    security::Pki stranger;
    security::PkiSettings s;
    s.directory = d.path;
    s.application_uri = "urn:test:stranger";
    s.application_name = "stranger";
    REQUIRE(stranger.open(s).ok());
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    TransportConfig config = secured_config(p, ua::MessageSecurityMode::SignAndEncrypt);
    std::vector<std::string> events;
    config.events = [&events](const Event& e) {
      events.push_back(std::string(e.kind) + " key=" + std::string(e.key) + std::string(e.fields));
    };
    Harness h(config);
    h.feed(hello());
    h.sink.out.clear();
    h.feed(issue_request(c, stranger.certificate_der()));
    h.run();
    auto out = output_chunks(h.sink.out);
    REQUIRE(out.size() == 1);
    CHECK(error_status(out[0]) == status::BadSecurityChecksFailed);
    CHECK(TransportStats::get(h.stats.certificate_rejections) == 1);  // opcuad_certificate_rejections_total
    // The operator log's certificate.refused event: who, which certificate, and the certificate's status
    // (the client got only BadSecurityChecksFailed).
    REQUIRE(events.size() == 1);
    CHECK(events[0].starts_with("certificate.refused key="));
    CHECK(events[0].find(" thumbprint=" + stranger.thumbprint_hex()) != std::string::npos);
    CHECK(events[0].find("subject=\"") != std::string::npos);
    CHECK(events[0].find("stranger") != std::string::npos);
    CHECK(events[0].find(" status=BadCertificateUntrusted") != std::string::npos);
    // The services hear of it with the certificate, for the audit record (Server::audit_certificate).
    REQUIRE(h.handler.refused.size() == 1);
    CHECK(h.handler.refused[0].first == stranger.certificate_der());
    CHECK(h.handler.refused[0].second == status::BadCertificateUntrusted);
  }
  SECTION("encrypted for another certificate: BadCertificateInvalid") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    const auto& cert = keys().client.certificate_der();
    std::string m = issue_request(c);
    // The first byte of ReceiverCertificateThumbprint, after the header, the policy URI and the certificate.
    m[12 + 4 + p.uri.size() + 4 + cert.size() + 4] ^= 1;
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt), m) ==
          status::BadCertificateInvalid);
  }
  SECTION("damaged OPN") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::Sign);
    std::string m = issue_request(c);
    m[m.size() - 300] ^= 1;
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::Sign), m) == status::BadSecurityChecksFailed);
  }
  SECTION("a policy the endpoint does not offer") {
    SecureTestClient c =
        client(security::policy(security::PolicyId::Aes256_Sha256_RsaPss), ua::MessageSecurityMode::Sign);
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::Sign), issue_request(c)) ==
          status::BadSecurityPolicyRejected);
  }
  SECTION("a mode the endpoint does not offer with the policy") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::Sign);
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt), issue_request(c)) ==
          status::BadSecurityModeRejected);
  }
}

TEST_CASE(
    "secure channel: an untrusted certificate is kept in rejected/, or trusted on first use, only once "
    "the OpenSecureChannel signature verifies with its key",
    "[transport][security][hostile]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  const auto mode = ua::MessageSecurityMode::SignAndEncrypt;
  // A certificate and key nobody trusts yet, and a validating PKI of the test's own (its rejected/ and
  // trusted/ start empty; the channel's server identity stays keys().identity).
  TempDir d;
  security::Pki stranger;
  security::PkiSettings ss;
  ss.directory = d.path / "stranger";
  ss.application_uri = "urn:test:stranger";
  ss.application_name = "stranger";
  REQUIRE(stranger.open(ss).ok());
  const security::Pkey stranger_key = security::share_pkey(stranger.private_key());
  for (const bool tofu : {false, true}) {
    INFO((tofu ? "trust on first use" : "rejected/"));
    security::Pki validating;
    security::PkiSettings vs;
    vs.directory = d.path / (tofu ? "tofu" : "plain");
    vs.application_uri = "urn:test:server";
    vs.application_name = "server";
    vs.trust_on_first_use = tofu;
    REQUIRE(validating.open(vs).ok());
    TransportConfig config = secured_config(p, mode);
    config.validate_certificate = pki_validator(validating);
    const fs::path kept = (tofu ? validating.paths().trusted_certs : validating.paths().rejected_certs) /
                          (stranger.thumbprint_hex() + ".der");
    // The stranger's certificate, signed with another key (anybody can send a certificate they saw).
    SecureTestClient forged(p, mode,
                            {keys().client_private.get(), stranger.certificate_der(),
                             keys().server_public.get(), keys().identity.thumbprint});
    CHECK(refusal(config, issue_request(forged)) == status::BadSecurityChecksFailed);
    CHECK_FALSE(fs::exists(kept));
    // Signed with its own key: kept for the operator (still refused), or trusted on first use (opened).
    SecureTestClient genuine(p, mode,
                             {stranger_key.get(), stranger.certificate_der(), keys().server_public.get(),
                              keys().identity.thumbprint});
    Harness h(config);
    h.feed(hello());
    h.sink.out.clear();
    h.feed(issue_request(genuine));
    h.run();
    auto out = output_chunks(h.sink.out);
    REQUIRE(out.size() == 1);
    if (tofu) {
      CHECK(out[0].substr(0, 3) == "OPN");
    } else {
      CHECK(error_status(out[0]) == status::BadSecurityChecksFailed);
    }
    CHECK(fs::exists(kept));
  }
}

TEST_CASE("secure channel: SecurityPolicy None on a secured-only endpoint carries discovery only",
          "[transport][security][hostile]") {
  // Part 4 §5.5.4: a client asks for the endpoints before it knows the server's certificate.
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  const auto discovery = [] {
    ua::GetEndpointsRequest r;
    r.endpoint_url = ua::String("opc.tcp://localhost:4843");
    return r;
  };
  SECTION("GetEndpoints, FindServers and FindServersOnNetwork go through, then a Read closes the channel") {
    Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
    h.open();
    CHECK(h.channel->discovery_only());
    for (const std::string& body : {encode_request(discovery()), encode_request(ua::FindServersRequest{}),
                                    encode_request(ua::FindServersOnNetworkRequest{})}) {
      h.feed(h.msg(body));
      auto m = h.messages();
      REQUIRE(m.size() == 1);
      CHECK(m[0].type == "MSG");  // answered by the handler (here a fault: the test handler serves Read only)
      h.sink.out.clear();
    }
    CHECK_FALSE(h.events.closed);
    h.feed(h.msg(encode_request(read_request(1, 1))));
    auto m = h.messages();
    REQUIRE(m.size() == 1);
    REQUIRE(m[0].type == "ERR");
    CHECK(error_of(m[0]) == status::BadSecurityPolicyRejected);
    CHECK(h.events.closed);
  }
  SECTION("a CreateSession is refused the same way") {
    Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
    h.open();
    h.feed(h.msg(encode_request(ua::CreateSessionRequest{})));
    auto m = h.messages();
    REQUIRE(m.size() == 1);
    REQUIRE(m[0].type == "ERR");
    CHECK(error_of(m[0]) == status::BadSecurityPolicyRejected);
  }
  SECTION("where None is offered, the channel is an ordinary one") {
    Harness h;
    h.open();
    CHECK_FALSE(h.channel->discovery_only());
    h.feed(h.msg(encode_request(read_request(1, 1))));
    auto m = h.messages();
    REQUIRE(m.size() == 1);
    CHECK(m[0].type == "MSG");
  }
  SECTION("None with a mode other than None is still refused") {
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt),
                  opcuad::transport::test::open_request(1, 1, ua::SecurityTokenRequestType::Issue, 0, 600000,
                                                        opcuad::transport::kSecurityPolicyNone,
                                                        ua::MessageSecurityMode::Sign)) ==
          status::BadSecurityModeRejected);
  }
}

TEST_CASE("secure channel: a large response is split into secured chunks inside the client's buffer size",
          "[transport][security]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
  SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
  h.feed(hello(8192, 65535));  // the client receives chunks of at most 8192 bytes
  h.sink.out.clear();
  h.feed(issue_request(c));
  h.run();
  accept_open(c, output_chunks(h.sink.out).at(0));
  h.sink.out.clear();
  h.feed(message(c, 9, encode_request(read_request(1, 2000))));
  h.run();
  auto out = output_chunks(h.sink.out);
  REQUIRE(out.size() > 2);
  std::vector<uint8_t> body;
  for (const auto& chunk : out) {
    CHECK(chunk.size() <= 8192);
    CHECK((chunk.size() - kSymmetricHeaderSize) % 16 == 0);
    auto part = unseal(c, chunk);
    body.insert(body.end(), part.begin(), part.end());
  }
  ua::Decoder d(body);
  ua::NodeId type;
  ua::decode(d, type);
  ua::ReadResponse resp;
  ua::decode(d, resp);
  REQUIRE(d.ok());
  CHECK(resp.results.size() == 2000);
}

TEST_CASE(
    "secure channel: an OpenSecureChannel request in several chunks is joined, each chunk verified on its "
    "own",
    "[transport][security]") {
  for (auto id : {security::PolicyId::Basic256Sha256, security::PolicyId::Aes256_Sha256_RsaPss}) {
    const auto& p = security::policy(id);
    INFO(p.name);
    Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    h.feed(hello());
    h.sink.out.clear();
    const auto parts = open_chunks(c, 3);
    for (const auto& part : parts) h.feed(part);
    h.run();
    auto out = output_chunks(h.sink.out);
    REQUIRE(out.size() == 1);
    accept_open(c, out[0]);
    h.sink.out.clear();
    h.feed(message(c, 7, encode_request(read_request(5, 3))));
    h.run();
    CHECK(h.handler.requests == 1);
    out = output_chunks(h.sink.out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].substr(0, 3) == "MSG");
  }
}

TEST_CASE("secure channel: hostile OpenSecureChannel chunk sequences are refused",
          "[transport][security][limits]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  const auto config = secured_config(p, ua::MessageSecurityMode::SignAndEncrypt);
  const auto& cert = keys().client.certificate_der();
  auto refuse = [&](const std::vector<std::string>& parts) {
    Harness h(config);
    h.feed(hello());
    h.sink.out.clear();
    for (const auto& part : parts) h.feed(part);
    h.run();
    auto out = output_chunks(h.sink.out);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].substr(0, 3) == "ERR");
    CHECK(h.events.closed);
    CHECK(h.channel->id() == 0);  // nothing opened
    return error_status(out[0]);
  };
  SECTION("chunks naming different requests") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    CHECK(refuse(open_chunks(c, 2, {1, 2})) == status::BadSecurityChecksFailed);
  }
  SECTION("a later chunk with another security header (certificate chain)") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    auto first = open_chunks(c, 2);
    std::vector<uint8_t> longer(cert.begin(), cert.end());
    longer.insert(longer.end(), cert.begin(), cert.end());  // the same leaf, a chain behind it
    SecureTestClient d = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    d.set_next_sequence(2);
    auto second = open_chunks(d, 2, {}, longer);
    CHECK(refuse({first[0], second[1]}) == status::BadSecurityChecksFailed);
  }
  SECTION("a damaged later chunk") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    auto parts = open_chunks(c, 2);
    parts[1][parts[1].size() - 100] ^= 1;
    CHECK(refuse(parts) == status::BadSecurityChecksFailed);
  }
  SECTION("chunks out of sequence") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    auto parts = open_chunks(c, 3);
    CHECK(refuse({parts[0], parts[2]}) == status::BadSequenceNumberInvalid);
  }
  SECTION("more chunks than an OpenSecureChannel request may have") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    CHECK(refuse(open_chunks(c, 12)) == status::BadTcpMessageTooLarge);
  }
  SECTION("an aborted OpenSecureChannel request") {
    SecureTestClient c = client(p, ua::MessageSecurityMode::SignAndEncrypt);
    auto parts = open_chunks(c, 2);
    parts[1][3] = 'A';
    CHECK(refuse(parts) == status::BadTcpMessageTypeInvalid);
  }
}

TEST_CASE("secure channel: an OpenSecureChannel response too large for one client chunk is sent in several",
          "[transport][security]") {
  // A 4096-bit server key signs (512 bytes) while the client's 2048-bit key encrypts (190 plaintext bytes per
  // block with OAEP-SHA256): with room for three blocks behind a large certificate chain, a chunk carries
  // 49 body bytes, so the response takes two.
  TempDir dir;
  security::Pki big;
  security::PkiSettings s;
  s.directory = dir.path;
  s.application_uri = "urn:test:server";
  s.application_name = "server";
  s.key_bits = 4096;
  REQUIRE(big.open(s).ok());
  security::ServerIdentity identity;
  identity.certificate = big.certificate_der();
  identity.thumbprint = big.thumbprint();
  identity.private_key = security::share_pkey(big.private_key());
  const security::Pkey server_public = security::certificate_public_key(big.certificate_der());
  const auto& p = security::policy(security::PolicyId::Aes256_Sha256_RsaPss);
  // Filler after the leaf stands for the issuers of a long chain (the server sends its chain as configured).
  const size_t header_without_chain = 12 + 4 + p.uri.size() + 4 + 4 + 20;
  identity.certificate.resize(8192 - header_without_chain - 3 * 256 - 100, 0x30);
  TransportConfig config = secured_config(p, ua::MessageSecurityMode::SignAndEncrypt);
  config.identity = &identity;
  Harness h(config);

  // The request, encrypted for the 4096-bit certificate.
  SecureTestClient c =
      client(p, ua::MessageSecurityMode::SignAndEncrypt, server_public.get(), identity.thumbprint);
  const std::string open = issue_request(c);
  h.feed(hello(8192, 65535));  // the client takes chunks of at most 8192 bytes
  h.sink.out.clear();
  h.feed(open);
  h.run();
  auto out = output_chunks(h.sink.out);
  REQUIRE(out.size() == 2);
  std::vector<uint8_t> body;
  uint32_t first_sequence = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("chunk " << i);
    CHECK(out[i].size() <= 8192);
    CHECK(out[i][3] == (i + 1 == out.size() ? 'F' : 'C'));
    SecureTestClient::Unsealed u;
    REQUIRE(c.open_response_chunk(out[i], u));
    CHECK(u.request_id == 1);
    if (i == 0) first_sequence = u.sequence;
    CHECK(u.sequence == first_sequence + i);
    body.insert(body.end(), u.body.begin(), u.body.end());
  }
  ua::Decoder d(body);
  ua::NodeId type;
  ua::decode(d, type);
  ua::OpenSecureChannelResponse resp;
  ua::decode(d, resp);
  REQUIRE(d.ok());
  CHECK(resp.server_nonce.size() == 32);
  CHECK(h.channel->state() == SecureChannel::State::Open);

  SECTION("a chain that leaves no room for a chunk closes the channel") {
    identity.certificate.resize(8192 - header_without_chain - 200, 0x30);
    Harness small(config);
    small.feed(hello(8192, 65535));
    small.sink.out.clear();
    // The same request (encrypted for the 4096-bit certificate, whose thumbprint it names).
    small.feed(open);
    small.run();
    auto err = output_chunks(small.sink.out);
    REQUIRE(err.size() == 1);
    CHECK(err[0].substr(0, 3) == "ERR");
    CHECK(error_status(err[0]) == status::BadTcpMessageTooLarge);
  }
}
