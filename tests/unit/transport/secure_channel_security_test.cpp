// Signed and encrypted secure channels (Part 6 §6.7.2): a client written here against the primitives opens a
// secured channel, exchanges a request, and every kind of damage to a chunk closes the channel with
// BadSecurityChecksFailed without the request reaching the service.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

#include "tests/unit/transport/channel_harness.hpp"
#include "transport/security/asymmetric.hpp"
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
  c.validate_certificate = [](std::span<const uint8_t> chain, const security::Policy& policy) {
    security::CertificateRequirements req;
    req.min_key_bits = static_cast<int>(policy.min_key_bits);
    req.max_key_bits = static_cast<int>(policy.max_key_bits);
    req.allow_sha1 = policy.sha1_certificates;
    return keys().server.validate(chain, req);
  };
  return c;
}

// The client side of a secured channel.
struct SecureClient {
  const security::Policy& policy;
  ua::MessageSecurityMode mode;
  std::vector<uint8_t> client_nonce = std::vector<uint8_t>(32, 0x5a);
  uint32_t channel_id = 0, token_id = 0, sequence = 1;
  security::SymmetricCipher send, receive;

  std::string open_request(uint32_t request_id, std::span<const uint8_t> certificate) {
    return open_request_chunks(request_id, certificate, 1).front();
  }

  // The OPN request in `pieces` chunks ('C' ... 'F'), each sealed on its own; `request_ids` overrides the
  // RequestId per chunk (hostile variants).
  std::vector<std::string> open_request_chunks(uint32_t request_id, std::span<const uint8_t> certificate,
                                               size_t pieces, std::vector<uint32_t> request_ids = {}) {
    ua::ByteBuffer header;
    ua::Encoder h(header);
    h.write_raw("OPNC\0\0\0\0", 8);
    h.write_u32(0);
    ua::encode(h, ua::String(std::string(policy.uri)));
    ua::encode(h, ua::ByteString::from_bytes(certificate));
    ua::encode(h, ua::ByteString::from_bytes(keys().identity.thumbprint));
    ua::ByteBuffer body;
    ua::Encoder b(body);
    ua::OpenSecureChannelRequest req;
    req.request_type = ua::SecurityTokenRequestType::Issue;
    req.security_mode = mode;
    req.client_nonce = ua::ByteString::from_bytes(client_nonce);
    req.requested_lifetime = 600000;
    ua::encode(b, ua::NodeId(0, ua::OpenSecureChannelRequest::binary_encoding_id));
    ua::encode(b, req);
    std::vector<std::string> out;
    const size_t step = (body.size() + pieces - 1) / pieces;
    for (size_t i = 0; i < pieces; ++i) {
      std::vector<uint8_t> chunk(header.data(), header.data() + header.size());
      chunk[3] = i + 1 == pieces ? 'F' : 'C';
      const size_t encrypted_from = chunk.size();
      const uint32_t id = i < request_ids.size() ? request_ids[i] : request_id;
      const uint32_t seq = sequence++;
      chunk.insert(chunk.end(), reinterpret_cast<const uint8_t*>(&seq), reinterpret_cast<const uint8_t*>(&seq) + 4);
      chunk.insert(chunk.end(), reinterpret_cast<const uint8_t*>(&id), reinterpret_cast<const uint8_t*>(&id) + 4);
      const size_t from = std::min(body.size(), i * step);
      const size_t to = std::min(body.size(), from + step);
      chunk.insert(chunk.end(), body.data() + from, body.data() + to);
      REQUIRE(security::seal_asymmetric(policy, keys().client_private.get(), keys().server_public.get(), chunk,
                                        encrypted_from));
      out.emplace_back(chunk.begin(), chunk.end());
    }
    return out;
  }

  // Reads the server's OPN response and derives both directions' keys.
  void accept_open(const std::string& out) {
    REQUIRE(out.substr(0, 3) == "OPN");
    std::span<const uint8_t> chunk(reinterpret_cast<const uint8_t*>(out.data()), out.size());
    ua::Decoder d(chunk.subspan(8));
    d.read_u32();
    ua::String uri;
    ua::ByteString cert, thumb;
    ua::decode(d, uri);
    ua::decode(d, cert);
    ua::decode(d, thumb);
    REQUIRE(uri.view() == policy.uri);
    CHECK(std::vector<uint8_t>(cert.bytes().begin(), cert.bytes().end()) == keys().identity.certificate);
    const auto client_thumb = security::sha1(keys().client.certificate_der());
    CHECK(std::vector<uint8_t>(thumb.bytes().begin(), thumb.bytes().end()) ==
          std::vector<uint8_t>(client_thumb.begin(), client_thumb.end()));
    const size_t from = static_cast<size_t>(d.position() - chunk.data());
    auto opened = security::open_asymmetric(policy, keys().client_private.get(), keys().server_public.get(), chunk, from);
    REQUIRE(opened.status.is_good());
    ua::Decoder body(opened.plaintext);
    body.read_u32();
    body.read_u32();
    ua::NodeId type;
    ua::decode(body, type);
    ua::OpenSecureChannelResponse resp;
    ua::decode(body, resp);
    REQUIRE(body.ok());
    channel_id = resp.security_token.channel_id;
    token_id = resp.security_token.token_id;
    REQUIRE(resp.server_nonce.size() == policy.nonce_length);
    const auto server_nonce = resp.server_nonce.bytes();
    REQUIRE(send.set_keys(policy, security::derive_keys(policy, server_nonce, client_nonce)));
    REQUIRE(receive.set_keys(policy, security::derive_keys(policy, client_nonce, server_nonce)));
  }

  std::string message(uint32_t request_id, std::string_view body, char chunk_type = 'F') {
    std::string s = symmetric_chunk("MSG", chunk_type, channel_id, token_id, sequence++, request_id, body);
    std::vector<uint8_t> c(s.begin(), s.end());
    const size_t sig = policy.signature_length;
    const bool encrypt = mode == ua::MessageSecurityMode::SignAndEncrypt;
    if (encrypt) {
      auto pad = security::compute_padding(c.size() - kSymmetricHeaderSize, sig, policy.block_size, false);
      const size_t at = c.size();
      c.resize(at + pad.total());
      security::write_padding(c.data() + at, pad);
    }
    const size_t signed_size = c.size();
    c.resize(signed_size + sig);
    const auto n = static_cast<uint32_t>(c.size());
    std::memcpy(c.data() + 4, &n, 4);
    REQUIRE(send.sign({c.data(), signed_size}, c.data() + signed_size));
    if (encrypt) REQUIRE(send.encrypt({c.data() + kSymmetricHeaderSize, c.size() - kSymmetricHeaderSize}));
    return std::string(c.begin(), c.end());
  }

  // Verifies and decrypts one server MSG chunk; returns its body (after the sequence header).
  std::vector<uint8_t> unseal(std::string_view chunk) {
    std::vector<uint8_t> c(chunk.begin(), chunk.end());
    const bool encrypt = mode == ua::MessageSecurityMode::SignAndEncrypt;
    if (encrypt) REQUIRE(receive.decrypt({c.data() + kSymmetricHeaderSize, c.size() - kSymmetricHeaderSize}));
    const size_t sig = policy.signature_length;
    REQUIRE(receive.verify({c.data(), c.size() - sig}, {c.data() + c.size() - sig, sig}));
    size_t end = c.size() - sig;
    if (encrypt) {
      const size_t pad = security::check_padding({c.data() + kSymmetricPrefix, end - kSymmetricPrefix}, false);
      REQUIRE(pad != SIZE_MAX);
      end -= pad;
    }
    return std::vector<uint8_t>(c.begin() + kSymmetricPrefix, c.begin() + static_cast<ptrdiff_t>(end));
  }
};

// Splits raw output into chunks by their size fields.
std::vector<std::string> chunks_of(const std::string& out) {
  std::vector<std::string> r;
  size_t pos = 0;
  while (pos + 8 <= out.size()) {
    uint32_t n;
    std::memcpy(&n, out.data() + pos + 4, 4);
    r.push_back(out.substr(pos, n));
    pos += n;
  }
  return r;
}

ua::StatusCode error_of(const std::string& chunk) {
  uint32_t code = 0;
  std::memcpy(&code, chunk.data() + 8, 4);
  return ua::StatusCode(code);
}

// HEL, secured OPN; returns with the channel open and the output cleared.
void open_secured(Harness& h, SecureClient& c) {
  h.feed(hello());
  h.sink.out.clear();
  h.feed(c.open_request(1, keys().client.certificate_der()));
  h.run();
  auto out = chunks_of(h.sink.out);
  REQUIRE(out.size() == 1);
  c.accept_open(out[0]);
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
  auto out = chunks_of(h.sink.out);
  REQUIRE(out.size() == 1);
  if (out[0].substr(0, 3) != "ERR") return status::Good;
  CHECK(h.events.closed);
  return error_of(out[0]);
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
      SecureClient c{p, mode};
      open_secured(h, c);
      CHECK(h.channel->security_policy().id == id);
      CHECK(h.channel->security_mode() == mode);
      // The per-policy counters (/metrics) see the channel under its own policy.
      CHECK(TransportStats::get(h.stats.channels_opened[static_cast<size_t>(id)]) == 1);
      CHECK(TransportStats::get(h.stats.channels_opened[0]) == 0);
      CHECK(std::vector<uint8_t>(h.channel->client_certificate().begin(), h.channel->client_certificate().end()) ==
            keys().client.certificate_der());
      h.feed(c.message(7, encode_request(read_request(5, 3))));
      h.run();
      CHECK(h.handler.requests == 1);
      auto out = chunks_of(h.sink.out);
      REQUIRE(out.size() == 1);
      REQUIRE(out[0].substr(0, 3) == "MSG");
      if (mode == ua::MessageSecurityMode::SignAndEncrypt) {
        CHECK((out[0].size() - kSymmetricHeaderSize) % 16 == 0);
      }
      auto body = c.unseal(out[0]);
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
    SecureClient probe{p, mode};
    // Positions: the sequence header, the body, the padding or the last body byte, the signature.
    for (size_t where : {size_t{17}, size_t{21}, size_t{40}, size_t{SIZE_MAX - 40}, size_t{SIZE_MAX - 1}}) {
      INFO("mode " << static_cast<int>(mode) << " position " << where);
      Harness h(secured_config(p, mode));
      SecureClient c{p, mode};
      open_secured(h, c);
      std::string m = c.message(7, encode_request(read_request(5, 3)));
      const size_t at = where > m.size() ? m.size() - (SIZE_MAX - where) : where;
      m[at] = static_cast<char>(m[at] ^ 0x04);
      h.feed(m);
      h.run();
      CHECK(h.handler.requests == 0);
      auto out = chunks_of(h.sink.out);
      REQUIRE(out.size() == 1);
      CHECK(out[0].substr(0, 3) == "ERR");
      CHECK(error_of(out[0]) == status::BadSecurityChecksFailed);
      CHECK(h.events.closed);
    }
  }
}

TEST_CASE("secure channel: a replayed chunk is refused", "[transport][security]") {
  const auto& p = security::policy(security::PolicyId::Aes256_Sha256_RsaPss);
  Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
  SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
  open_secured(h, c);
  const std::string m = c.message(7, encode_request(read_request(5, 1)));
  h.feed(m);
  h.run();
  CHECK(h.handler.requests == 1);
  h.sink.out.clear();
  h.feed(m);  // the same bytes again: a valid signature, an old sequence number
  h.run();
  CHECK(h.handler.requests == 1);
  auto out = chunks_of(h.sink.out);
  REQUIRE(out.size() == 1);
  CHECK(error_of(out[0]) == status::BadSequenceNumberInvalid);
}

TEST_CASE("secure channel: OPN for another certificate, an untrusted client, a damaged OPN, a policy not offered",
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
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
    h.feed(hello());
    h.sink.out.clear();
    h.feed(c.open_request(1, stranger.certificate_der()));
    h.run();
    auto out = chunks_of(h.sink.out);
    REQUIRE(out.size() == 1);
    CHECK(error_of(out[0]) == status::BadSecurityChecksFailed);
    CHECK(TransportStats::get(h.stats.certificate_rejections) == 1);  // opcuad_certificate_rejections_total
  }
  SECTION("encrypted for another certificate: BadCertificateInvalid") {
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    const auto& cert = keys().client.certificate_der();
    std::string m = c.open_request(1, cert);
    // The first byte of ReceiverCertificateThumbprint, after the header, the policy URI and the certificate.
    m[12 + 4 + p.uri.size() + 4 + cert.size() + 4] ^= 1;
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt), m) == status::BadCertificateInvalid);
  }
  SECTION("damaged OPN") {
    SecureClient c{p, ua::MessageSecurityMode::Sign};
    std::string m = c.open_request(1, keys().client.certificate_der());
    m[m.size() - 300] ^= 1;
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::Sign), m) == status::BadSecurityChecksFailed);
  }
  SECTION("a policy the endpoint does not offer") {
    SecureClient c{security::policy(security::PolicyId::Aes256_Sha256_RsaPss), ua::MessageSecurityMode::Sign};
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::Sign), c.open_request(1, keys().client.certificate_der())) ==
          status::BadSecurityPolicyRejected);
  }
  SECTION("a mode the endpoint does not offer with the policy") {
    SecureClient c{p, ua::MessageSecurityMode::Sign};
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt),
                  c.open_request(1, keys().client.certificate_der())) == status::BadSecurityModeRejected);
  }
  SECTION("SecurityPolicy None on a secured-only endpoint") {
    CHECK(refusal(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt),
                  opcuad::transport::test::open_request(1, 1)) == status::BadSecurityPolicyRejected);
  }
}

TEST_CASE("secure channel: a large response is split into secured chunks inside the client's buffer size",
          "[transport][security]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
  SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
  h.feed(hello(8192, 65535));  // the client receives chunks of at most 8192 bytes
  h.sink.out.clear();
  h.feed(c.open_request(1, keys().client.certificate_der()));
  h.run();
  c.accept_open(chunks_of(h.sink.out).at(0));
  h.sink.out.clear();
  h.feed(c.message(9, encode_request(read_request(1, 2000))));
  h.run();
  auto out = chunks_of(h.sink.out);
  REQUIRE(out.size() > 2);
  std::vector<uint8_t> body;
  for (const auto& chunk : out) {
    CHECK(chunk.size() <= 8192);
    CHECK((chunk.size() - kSymmetricHeaderSize) % 16 == 0);
    auto part = c.unseal(chunk);
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

TEST_CASE("secure channel: an OpenSecureChannel request in several chunks is joined, each chunk verified on its own",
          "[transport][security]") {
  for (auto id : {security::PolicyId::Basic256Sha256, security::PolicyId::Aes256_Sha256_RsaPss}) {
    const auto& p = security::policy(id);
    INFO(p.name);
    Harness h(secured_config(p, ua::MessageSecurityMode::SignAndEncrypt));
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    h.feed(hello());
    h.sink.out.clear();
    const auto parts = c.open_request_chunks(1, keys().client.certificate_der(), 3);
    for (const auto& part : parts) h.feed(part);
    h.run();
    auto out = chunks_of(h.sink.out);
    REQUIRE(out.size() == 1);
    c.accept_open(out[0]);
    h.sink.out.clear();
    h.feed(c.message(7, encode_request(read_request(5, 3))));
    h.run();
    CHECK(h.handler.requests == 1);
    out = chunks_of(h.sink.out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].substr(0, 3) == "MSG");
  }
}

TEST_CASE("secure channel: hostile OpenSecureChannel chunk sequences are refused", "[transport][security][limits]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  const auto config = secured_config(p, ua::MessageSecurityMode::SignAndEncrypt);
  const auto& cert = keys().client.certificate_der();
  auto refuse = [&](const std::vector<std::string>& parts) {
    Harness h(config);
    h.feed(hello());
    h.sink.out.clear();
    for (const auto& part : parts) h.feed(part);
    h.run();
    auto out = chunks_of(h.sink.out);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].substr(0, 3) == "ERR");
    CHECK(h.events.closed);
    CHECK(h.channel->id() == 0);  // nothing opened
    return error_of(out[0]);
  };
  SECTION("chunks naming different requests") {
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    CHECK(refuse(c.open_request_chunks(1, cert, 2, {1, 2})) == status::BadSecurityChecksFailed);
  }
  SECTION("a later chunk with another security header (certificate chain)") {
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    auto first = c.open_request_chunks(1, cert, 2);
    std::vector<uint8_t> longer(cert.begin(), cert.end());
    longer.insert(longer.end(), cert.begin(), cert.end());  // the same leaf, a chain behind it
    SecureClient d{p, ua::MessageSecurityMode::SignAndEncrypt};
    d.sequence = 2;
    auto second = d.open_request_chunks(1, longer, 2);
    CHECK(refuse({first[0], second[1]}) == status::BadSecurityChecksFailed);
  }
  SECTION("a damaged later chunk") {
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    auto parts = c.open_request_chunks(1, cert, 2);
    parts[1][parts[1].size() - 100] ^= 1;
    CHECK(refuse(parts) == status::BadSecurityChecksFailed);
  }
  SECTION("chunks out of sequence") {
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    auto parts = c.open_request_chunks(1, cert, 3);
    CHECK(refuse({parts[0], parts[2]}) == status::BadSequenceNumberInvalid);
  }
  SECTION("more chunks than an OpenSecureChannel request may have") {
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    CHECK(refuse(c.open_request_chunks(1, cert, 12)) == status::BadTcpMessageTooLarge);
  }
  SECTION("an aborted OpenSecureChannel request") {
    SecureClient c{p, ua::MessageSecurityMode::SignAndEncrypt};
    auto parts = c.open_request_chunks(1, cert, 2);
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
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  e.write_raw("OPNF\0\0\0\0", 8);
  e.write_u32(0);
  ua::encode(e, ua::String(std::string(p.uri)));
  ua::encode(e, ua::ByteString::from_bytes(keys().client.certificate_der()));
  ua::encode(e, ua::ByteString::from_bytes(identity.thumbprint));
  const size_t encrypted_from = buf.size();
  e.write_u32(1);
  e.write_u32(1);
  ua::OpenSecureChannelRequest req;
  req.request_type = ua::SecurityTokenRequestType::Issue;
  req.security_mode = ua::MessageSecurityMode::SignAndEncrypt;
  req.client_nonce = ua::ByteString(std::string(32, '\x5a'));
  req.requested_lifetime = 600000;
  ua::encode(e, ua::NodeId(0, ua::OpenSecureChannelRequest::binary_encoding_id));
  ua::encode(e, req);
  std::vector<uint8_t> open(buf.data(), buf.data() + buf.size());
  REQUIRE(security::seal_asymmetric(p, keys().client_private.get(), server_public.get(), open, encrypted_from));
  h.feed(hello(8192, 65535));  // the client takes chunks of at most 8192 bytes
  h.sink.out.clear();
  h.feed(std::string(open.begin(), open.end()));
  h.run();
  auto out = chunks_of(h.sink.out);
  REQUIRE(out.size() == 2);
  std::vector<uint8_t> body;
  uint32_t first_sequence = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    INFO("chunk " << i);
    CHECK(out[i].size() <= 8192);
    CHECK(out[i][3] == (i + 1 == out.size() ? 'F' : 'C'));
    std::span<const uint8_t> chunk(reinterpret_cast<const uint8_t*>(out[i].data()), out[i].size());
    auto opened = security::open_asymmetric(p, keys().client_private.get(), server_public.get(), chunk,
                                            12 + 4 + p.uri.size() + 4 + identity.certificate.size() + 4 + 20);
    REQUIRE(opened.status.is_good());
    uint32_t seq, request_id;
    std::memcpy(&seq, opened.plaintext.data(), 4);
    std::memcpy(&request_id, opened.plaintext.data() + 4, 4);
    CHECK(request_id == 1);
    if (i == 0) first_sequence = seq;
    CHECK(seq == first_sequence + i);
    body.insert(body.end(), opened.plaintext.begin() + 8, opened.plaintext.end());
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
    small.feed(std::string(open.begin(), open.end()));
    small.run();
    auto err = chunks_of(small.sink.out);
    REQUIRE(err.size() == 1);
    CHECK(err[0].substr(0, 3) == "ERR");
    CHECK(error_of(err[0]) == status::BadTcpMessageTooLarge);
  }
}
