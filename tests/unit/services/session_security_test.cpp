// Sessions on secured channels and encrypted user tokens (Part 4 §5.6.2, §5.6.3, §7.41): the server's
// signature, the client's proofs, the legacy encrypted password, X509 users, and every hostile variant
// answered with its status. The channel's security comes from SecureChannelTestAccess::set_security(): the
// handshake itself is the secure channel's (tests/unit/transport/).
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "services/user_token.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/test_certificates.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;
using security::PolicyId;

namespace {

const security::Policy& b256() {
  return security::policy(PolicyId::Basic256Sha256);
}
const security::Policy& pss() {
  return security::policy(PolicyId::Aes256_Sha256_RsaPss);
}

constexpr const char* kSecureEndpoints =
    R"("endpoints": [{"url": "opc.tcp://0.0.0.0:4840"},
                     {"url": "opc.tcp://0.0.0.0:4843", "security_policies": ["Basic256Sha256", "Aes256_Sha256_RsaPss"],
                      "security_modes": ["Sign", "SignAndEncrypt"], "allow_anonymous": false}])";
constexpr const char* kNoPlaintext = R"("security": {"allow_plaintext_passwords": false})";

// A harness whose server has a certificate (and, with `members`, the endpoints and users given).
struct SecureHarness {
  explicit SecureHarness(std::string members = std::string(kSecureEndpoints) + ", " + kNoPlaintext,
                         std::string_view extra_nodes = "", std::string_view extra_limits = "")
      : identity(test_identity()), h(extra_limits, extra_nodes, members) {
    h.server->set_identity(&identity);
  }
  // The daemon's wiring: RSA private-key work on a pool of `threads`, at most `queued` waiting.
  void use_pool(size_t threads = 1, size_t queued = 8) {
    pool = std::make_unique<transport::HandshakePool>(threads, queued);
    h.server->set_crypto_pool(pool.get());
  }
  ~SecureHarness() {
    if (pool) pool->stop();
  }
  // The channel as a secured OPN from the client with this ApplicationUri's certificate leaves it.
  void secure(const security::Policy& p = b256(),
              ua::MessageSecurityMode mode = ua::MessageSecurityMode::SignAndEncrypt,
              const std::string& client_uri = "urn:test:client") {
    const TestCertificate& c = test_certificate(client_uri);
    SecureChannelTestAccess::set_security(*h.channel, p, mode, c.der, c.key);
  }
  // CreateSession as a well-behaved client on that channel.
  ua::CreateSessionResponse create(ua::StatusCode* s, const std::string& cert_uri = "urn:test:client",
                                   const std::string& app_uri = "urn:test:client", size_t nonce_size = 32) {
    ua::CreateSessionRequest req;
    req.session_name = ua::String("secure");
    req.requested_session_timeout = 60000;
    req.endpoint_url = ua::String("opc.tcp://localhost:4843");
    req.client_description.application_uri = ua::String(app_uri);
    req.client_nonce = ua::ByteString(std::string(nonce_size, '\x5a'));
    req.client_certificate = ua::ByteString::from_bytes(test_certificate(cert_uri).der);
    auto resp = h.call<ua::CreateSessionResponse>(req, s);
    if (s->is_good()) {
      h.token = resp.authentication_token;
      nonce = resp.server_nonce;
      client_nonce = req.client_nonce;
    }
    return resp;
  }
  // The client signature ActivateSession carries on a secured channel.
  ua::SignatureData client_signature(const security::Policy& p = b256(),
                                     const std::string& client_uri = "urn:test:client") {
    const TestCertificate& c = test_certificate(client_uri);
    return ua::SignatureData{
        ua::String(std::string(p.asymmetric_signature_uri)),
        ua::ByteString::from_bytes(sign_with(p, c.key.get(), bytes_of(identity.certificate, nonce.bytes())))};
  }
  ua::ActivateSessionResponse activate(ua::ExtensionObject token, ua::StatusCode* s,
                                       ua::SignatureData signature = {}) {
    ua::ActivateSessionRequest req;
    req.client_signature = std::move(signature);
    req.user_identity_token = std::move(token);
    auto resp = h.call<ua::ActivateSessionResponse>(req, s);
    if (s->is_good()) nonce = resp.server_nonce;
    return resp;
  }
  // A UserNameIdentityToken with the password encrypted as Part 4 §7.41.2.2 says, over `over` (default:
  // the last nonce).
  ua::ExtensionObject password(const std::string& policy_id, const security::Policy& p, std::string_view pw,
                               const ua::ByteString* over = nullptr, int64_t length_delta = 0,
                               std::vector<uint8_t> padding = {}) {
    const auto secret = encrypt_secret(p, identity.public_key.get(), pw, (over ? *over : nonce).bytes(),
                                       length_delta, std::move(padding));
    return ua::ExtensionObject::make(ua::UserNameIdentityToken{
        ua::String(policy_id), ua::String("alice"), ua::ByteString::from_bytes(secret),
        ua::String(std::string(p.asymmetric_encryption_uri))});
  }

  security::ServerIdentity identity;
  ServiceHarness h;
  std::unique_ptr<transport::HandshakePool> pool;  // after h: stopped and joined before the shard goes
  ua::ByteString nonce, client_nonce;
};

// Holds a pool thread until released, so a test sees what the shard does while its RSA work waits.
struct PoolBlocker {
  explicit PoolBlocker(transport::HandshakePool& pool) {
    REQUIRE(pool.submit([this] {
      std::unique_lock lock(mu);
      started = true;
      cv.notify_all();
      cv.wait(lock, [this] { return released; });
      finished = true;
      cv.notify_all();
    }));
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return started; });
  }
  // Waits until the job has left: the pool thread must be done with mu and cv before they go.
  ~PoolBlocker() {
    release();
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return finished; });
  }
  void release() {
    std::lock_guard lock(mu);
    released = true;
    cv.notify_all();
  }
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, released = false, finished = false;
};

const ua::UserTokenPolicy* find_token(const ua::EndpointDescription& e, ua::UserTokenType type) {
  for (const auto& t : e.user_identity_tokens) {
    if (t.token_type == type) return &t;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("session security: GetEndpoints offers each policy and mode pair with the certificate",
          "[services][security][discovery]") {
  SecureHarness s;
  ua::GetEndpointsRequest ge;
  ge.endpoint_url = ua::String("opc.tcp://gw:4843");
  const auto eps = s.h.call<ua::GetEndpointsResponse>(ge).endpoints;
  REQUIRE(eps.size() == 5);  // None on 4840; 2 policies x 2 modes on 4843
  for (const auto& e : eps) {
    CHECK(e.server_certificate.bytes().size() == s.identity.certificate.size());
    CHECK(std::equal(e.server_certificate.bytes().begin(), e.server_certificate.bytes().end(),
                     s.identity.certificate.begin()));
    CHECK(e.transport_profile_uri.view() ==
          "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary");
  }
  const auto& none = eps[0];
  CHECK(none.security_mode == ua::MessageSecurityMode::None);
  CHECK(none.security_level == 0);
  // On None the password is encrypted with the strongest policy the server offers; no plaintext option.
  REQUIRE(find_token(none, ua::UserTokenType::Anonymous));
  const ua::UserTokenPolicy* pw = find_token(none, ua::UserTokenType::UserName);
  REQUIRE(pw);
  CHECK(pw->security_policy_uri.view() == pss().uri);
  CHECK(pw->policy_id.view() == "username_Aes256_Sha256_RsaPss");
  CHECK(none.user_identity_tokens.size() == 2);
  // The secure endpoints: anonymous switched off there, the password under the channel's own policy, and
  // SignAndEncrypt ranks above Sign, a stronger policy above a weaker one.
  const auto& b_sign = eps[1];
  const auto& b_sae = eps[2];
  const auto& p_sae = eps[4];
  CHECK(b_sign.security_policy_uri.view() == b256().uri);
  CHECK(b_sign.security_mode == ua::MessageSecurityMode::Sign);
  CHECK(b_sae.security_mode == ua::MessageSecurityMode::SignAndEncrypt);
  CHECK(b_sign.security_level < b_sae.security_level);
  CHECK(b_sae.security_level < p_sae.security_level);
  CHECK(!find_token(b_sae, ua::UserTokenType::Anonymous));
  REQUIRE(find_token(b_sign, ua::UserTokenType::UserName));
  CHECK(find_token(b_sign, ua::UserTokenType::UserName)->security_policy_uri.view() == b256().uri);
  CHECK(find_token(b_sign, ua::UserTokenType::UserName)->policy_id.view() == "username_Basic256Sha256");
  // No users with certificates: no X509 token.
  CHECK(!find_token(b_sae, ua::UserTokenType::Certificate));

  // CreateSession's serverEndpoints are the same list (Part 4 §5.6.2).
  ua::CreateSessionRequest create;
  create.endpoint_url = ua::String("opc.tcp://gw:4843");
  const auto created = s.h.call<ua::CreateSessionResponse>(create);
  CHECK(created.server_endpoints == eps);
}

TEST_CASE("session security: a plaintext password policy only with allow_plaintext_passwords",
          "[services][security][discovery]") {
  SecureHarness plain(R"("security": {"allow_plaintext_passwords": true})");
  const auto eps = plain.h.call<ua::GetEndpointsResponse>(ua::GetEndpointsRequest{}).endpoints;
  REQUIRE(eps.size() == 1);
  std::vector<std::string> ids;
  for (const auto& t : eps[0].user_identity_tokens) ids.emplace_back(t.policy_id.view());
  // The encrypted one first, then the plaintext one the operator asked for.
  CHECK(ids == std::vector<std::string>{"anonymous", "username_Basic256Sha256", "username_None"});

  // Without a certificate the server cannot offer encrypted passwords, and says so.
  ServiceHarness bare("", "", kNoPlaintext);
  const auto problems = bare.server->security_problems();
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].starts_with("users with passwords need a server certificate"));
  ServiceHarness secure_bare("", "", std::string(kSecureEndpoints) + ", " + kNoPlaintext);
  CHECK(secure_bare.server->security_problems().size() == 5);  // 4 secure pairs and the passwords
}

TEST_CASE("session security: a user name token's password is wiped from the request once taken",
          "[services][security]") {
  // A password in clear (a None token policy) would otherwise stay in the decoded request while the
  // login is checked on the verifier's threads, and in the buffers a reused request keeps.
  ServiceHarness h("", "", R"("security": {"allow_plaintext_passwords": true})");
  services::ShardState& shard = h.server->shard_state(0);
  for (const char* password : {"secret", "a wrong password"}) {
    ua::ActivateSessionRequest request;
    request.user_identity_token = user("alice", password);
    std::optional<ua::StatusCode> result;
    services::resolve_identity(*h.server, shard, *h.channel, request, {},
                               [&](ua::StatusCode st, std::string) { result = st; });
    const auto* token = request.user_identity_token.get<ua::UserNameIdentityToken>();
    REQUIRE(token);
    CHECK(token->password.empty());
    for (int i = 0; i < 1000 && !result; ++i) h.run_for(std::chrono::milliseconds(5));
    REQUIRE(result);
    CHECK(result->is_good() == (std::string_view(password) == "secret"));
  }
}

TEST_CASE("session security: CreateSession signs the client's certificate and nonce",
          "[services][security][session]") {
  SecureHarness s;
  s.secure();
  ua::StatusCode st;
  const auto resp = s.create(&st);
  REQUIRE(st.is_good());
  CHECK(resp.server_nonce.size() == 32);
  CHECK(resp.server_certificate.bytes().size() == s.identity.certificate.size());
  CHECK(resp.server_signature.algorithm.view() == b256().asymmetric_signature_uri);
  const auto& client = test_certificate("urn:test:client");
  CHECK(security::asymmetric_verify(b256(), s.identity.public_key.get(),
                                    bytes_of(client.der, s.client_nonce.bytes()),
                                    resp.server_signature.signature.bytes()));
  // The same signature over anything else does not verify (the test can fail).
  CHECK(!security::asymmetric_verify(b256(), s.identity.public_key.get(), bytes_of(client.der),
                                     resp.server_signature.signature.bytes()));

  // On a None channel: no signature, the certificate still (clients encrypt passwords with it).
  SecureHarness none;
  ua::CreateSessionRequest plain;
  const auto r2 = none.h.call<ua::CreateSessionResponse>(plain);
  CHECK(r2.server_signature.signature.empty());
  CHECK(r2.server_signature.algorithm.empty());
  CHECK(r2.server_certificate.size() == none.identity.certificate.size());
}

TEST_CASE("session security: CreateSession refuses a short nonce, another certificate, another URI",
          "[services][security][session]") {
  SecureHarness s;
  s.secure();
  ua::StatusCode st;
  s.create(&st, "urn:test:client", "urn:test:client", 31);
  CHECK(st == status::BadNonceInvalid);
  s.create(&st, "urn:test:client", "urn:test:client", 129);
  CHECK(st == status::BadNonceInvalid);
  // A certificate that is not the channel's.
  s.create(&st, "urn:test:other", "urn:test:other");
  CHECK(st == status::BadSecurityChecksFailed);
  // The channel's certificate, but the ApplicationDescription names another application.
  s.create(&st, "urn:test:client", "urn:test:impostor");
  CHECK(st == status::BadCertificateUriInvalid);
  CHECK(s.h.server->session_count() == 0);
  s.create(&st);
  CHECK(st.is_good());
}

TEST_CASE("session security: ActivateSession verifies the client signature and renews the nonce",
          "[services][security][session]") {
  SecureHarness s;
  s.secure();
  ua::StatusCode st;
  s.create(&st);
  REQUIRE(st.is_good());
  const ua::ByteString first = s.nonce;
  // Missing, wrong algorithm, over the wrong bytes, by another key.
  s.activate(s.password("username_Basic256Sha256", b256(), "secret"), &st);
  CHECK(st == status::BadApplicationSignatureInvalid);
  ua::SignatureData wrong_alg = s.client_signature();
  wrong_alg.algorithm = ua::String(std::string(pss().asymmetric_signature_uri));
  s.activate({}, &st, wrong_alg);
  CHECK(st == status::BadApplicationSignatureInvalid);
  ua::SignatureData flipped = s.client_signature();
  std::string bytes(flipped.signature.view());
  bytes[7] ^= 1;
  flipped.signature = ua::ByteString(bytes);
  s.activate({}, &st, flipped);
  CHECK(st == status::BadApplicationSignatureInvalid);
  s.activate({}, &st, s.client_signature(b256(), "urn:test:other"));
  CHECK(st == status::BadApplicationSignatureInvalid);
  CHECK(s.nonce == first);  // failures issue no nonce

  // Anonymous is off on the secure endpoint: the right signature, the wrong identity.
  s.activate({}, &st, s.client_signature());
  CHECK(st == status::BadIdentityTokenRejected);
  // A user with an encrypted password over the channel's policy.
  const auto resp =
      s.activate(s.password("username_Basic256Sha256", b256(), "secret"), &st, s.client_signature());
  REQUIRE(st.is_good());
  CHECK(resp.server_nonce.size() == 32);
  CHECK(resp.server_nonce != first);
  // A second activation signs the new nonce; the old one no longer verifies.
  const ua::ByteString now = s.nonce;
  s.nonce = first;
  const ua::SignatureData stale = s.client_signature();
  s.nonce = now;
  s.activate(s.password("username_Basic256Sha256", b256(), "secret"), &st, stale);
  CHECK(st == status::BadApplicationSignatureInvalid);
  s.activate(s.password("username_Basic256Sha256", b256(), "secret"), &st, s.client_signature());
  CHECK(st.is_good());
}

TEST_CASE("session security: encrypted passwords over a None endpoint, and every hostile variant",
          "[services][security][session]") {
  // Every refused token below counts as a failed login of this address: the lockout is raised so that the
  // good password at the end is still checked (the lockout has tests of its own).
  SecureHarness s(std::string(kSecureEndpoints) + ", " + kNoPlaintext, "",
                  R"("max_failed_logins_per_address": 100)");
  ua::StatusCode st;
  s.create(&st);
  REQUIRE(st.is_good());
  const std::string id = "username_Aes256_Sha256_RsaPss";
  const ua::ByteString created = s.nonce;
  // Wrong length prefix (too long, too short), non-zero padding, the wrong algorithm, a policy id that is
  // not offered, a plaintext password where encryption is required.
  s.activate(s.password(id, pss(), "secret", nullptr, +1), &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  s.activate(s.password(id, pss(), "secret", nullptr, -40), &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  s.activate(s.password(id, pss(), "secret", nullptr, 0, {0, 0, 1}), &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  s.activate(s.password(id, b256(), "secret"), &st);  // RSA-OAEP (SHA-1) where OAEP-SHA256 is named
  CHECK(st == status::BadIdentityTokenInvalid);
  s.activate(s.password("username_Basic256Sha256", pss(), "secret"), &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  s.activate(ua::ExtensionObject::make(ua::UserNameIdentityToken{ua::String(id), ua::String("alice"),
                                                                 ua::ByteString("secret"), ua::String()}),
             &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  s.activate(user("alice", "secret"), &st);  // username_None: not offered without allow_plaintext_passwords
  CHECK(st == status::BadIdentityTokenInvalid);
  // Garbage ciphertext of the right size.
  s.activate(ua::ExtensionObject::make(ua::UserNameIdentityToken{
                 ua::String(id), ua::String("alice"), ua::ByteString(std::string(256, '\x11')),
                 ua::String(std::string(pss().asymmetric_encryption_uri))}),
             &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  // Zero padding is allowed (Part 4 §7.41.2.2), a wrong password is a wrong password.
  s.activate(s.password(id, pss(), "wrong"), &st);
  CHECK(st == status::BadUserAccessDenied);
  s.activate(s.password(id, pss(), "secret", nullptr, 0, {0, 0, 0}), &st);
  REQUIRE(st.is_good());
  CHECK(s.nonce != created);
  // Replayed: the same password encrypted over the nonce of CreateSession, which has been used.
  s.activate(s.password(id, pss(), "secret", &created), &st);
  CHECK(st == status::BadIdentityTokenRejected);
  s.activate(s.password(id, pss(), "secret"), &st);
  CHECK(st.is_good());
}

TEST_CASE("session security: the legacy encrypted secret's bounds", "[services][security]") {
  const auto id = test_identity();
  const ua::ByteString nonce(std::string(32, 'n'));
  const auto nb = nonce.bytes();
  security::Secret out;
  const auto good = encrypt_secret(b256(), id.public_key.get(), "pw", nb);
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(), good, nb, out).is_good());
  CHECK(out.view() == "pw");
  // Not whole blocks; empty; the length prefix beyond what was decrypted; shorter than the nonce.
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(), std::span(good).first(good.size() - 1),
                                        nb, out) == status::BadIdentityTokenInvalid);
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(), {}, nb, out) ==
        status::BadIdentityTokenInvalid);
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(),
                                        encrypt_secret(b256(), id.public_key.get(), "pw", nb, 1000), nb,
                                        out) == status::BadIdentityTokenInvalid);
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(),
                                        encrypt_secret(b256(), id.public_key.get(), "", {}, 0), nb,
                                        out) == status::BadIdentityTokenInvalid);
  // Another nonce: rejected, and nothing of the secret is handed out.
  const std::string other(32, 'm');
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(), good, ua::ByteString(other).bytes(),
                                        out) == status::BadIdentityTokenRejected);
  CHECK(out.empty());
  // A secret above kMaxSecretBytes.
  const std::string huge(services::kMaxSecretBytes + 1, 'x');
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(),
                                        encrypt_secret(b256(), id.public_key.get(), huge, nb), nb,
                                        out) == status::BadIdentityTokenInvalid);
}

TEST_CASE(
    "session security: a session is activated on another channel only with its creator's certificate, in a "
    "mode no weaker",
    "[services][security][session][hostile]") {
  // Anonymous is allowed on the secure endpoint here: whoever saw the authenticationToken (in clear on
  // None and Sign channels) could otherwise take the session over from a channel of its own.
  const std::string endpoints =
      R"("endpoints": [{"url": "opc.tcp://0.0.0.0:4840"},
                       {"url": "opc.tcp://0.0.0.0:4843", "security_policies": ["Basic256Sha256"],
                        "security_modes": ["Sign", "SignAndEncrypt"]}])";
  asio::io_context other_ctx;  // outlives the server
  const bool other_shard = GENERATE(false, true);
  INFO((other_shard ? "the new channel on another shard" : "the new channel on the session's shard"));
  SecureHarness s(endpoints + ", " + kNoPlaintext);
  s.secure();  // Basic256Sha256, SignAndEncrypt, urn:test:client's certificate
  ua::StatusCode st;
  s.create(&st);
  REQUIRE(st.is_good());
  s.activate({}, &st, s.client_signature());
  REQUIRE(st.is_good());
  SecondShard second(s.h, other_shard ? other_ctx : s.h.ctx);
  second.token = s.h.token;
  auto activate_on_second = [&](ua::SignatureData signature) {
    ua::ActivateSessionRequest req;
    req.client_signature = std::move(signature);
    ua::StatusCode result;
    second.call<ua::ActivateSessionResponse>(req, &result);
    return result;
  };
  const TestCertificate& own = test_certificate("urn:test:client");
  const TestCertificate& other = test_certificate("urn:test:other");
  // SecurityPolicy None: no certificate at all.
  CHECK(activate_on_second({}) == status::BadSecurityChecksFailed);
  // The same certificate, but Sign where the session was made with SignAndEncrypt.
  SecureChannelTestAccess::set_security(*second.ch, b256(), ua::MessageSecurityMode::Sign, own.der, own.key);
  CHECK(activate_on_second(s.client_signature()) == status::BadSecurityChecksFailed);
  // Another certificate, with a signature of its own that verifies.
  SecureChannelTestAccess::set_security(*second.ch, b256(), ua::MessageSecurityMode::SignAndEncrypt,
                                        other.der, other.key);
  CHECK(activate_on_second(s.client_signature(b256(), "urn:test:other")) == status::BadSecurityChecksFailed);
  // Untouched: still on its channel, its nonce unchanged.
  const ua::ByteString nonce = s.nonce;
  CHECK(s.h.read(ua::NodeId(0, 2258)).status.is_good());
  CHECK(s.nonce == nonce);
  // The creator's certificate in the same mode: the session moves.
  SecureChannelTestAccess::set_security(*second.ch, b256(), ua::MessageSecurityMode::SignAndEncrypt, own.der,
                                        own.key);
  CHECK(activate_on_second(s.client_signature()).is_good());
  ua::StatusCode old_channel;
  s.h.call<ua::ReadResponse>(ua::ReadRequest{}, &old_channel);
  CHECK(old_channel == (other_shard ? status::BadSessionIdInvalid : status::BadSecureChannelIdInvalid));
}

TEST_CASE("session security: a hostile encrypted secret costs one RSA decryption",
          "[services][security][hostile]") {
  const auto id = test_identity();
  const ua::ByteString nonce(std::string(32, 'n'));
  const auto nb = nonce.bytes();
  security::Secret out;
  size_t blocks = 0;
  const size_t block = security::rsa_key_bytes(id.private_key.get());
  // A length prefix past kMaxSecretBytes in the first block, then as many blocks as the size bound
  // lets through: only the first is decrypted.
  auto huge_length = encrypt_secret(b256(), id.public_key.get(), "pw", nb, 100000);
  const size_t max_blocks = (services::kMaxSecretBytes + 4 + 128) / (block / 2) + 1;
  while (huge_length.size() / block < max_blocks) huge_length.insert(huge_length.end(), block, 0x11);
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(), huge_length, nb, out, &blocks) ==
        status::BadIdentityTokenInvalid);
  CHECK(blocks == 1);
  // A good secret with a block after it that its length does not need: refused, the extra block never
  // decrypted.
  auto trailing = encrypt_secret(b256(), id.public_key.get(), "pw", nb);
  trailing.insert(trailing.end(), block, 0x22);
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(), trailing, nb, out, &blocks) ==
        status::BadIdentityTokenInvalid);
  CHECK(blocks == 1);
  // A good secret over several blocks costs the blocks it needs.
  const std::string long_pw(600, 'p');
  const auto several = encrypt_secret(b256(), id.public_key.get(), long_pw, nb);
  REQUIRE(several.size() / block > 1);
  CHECK(services::decrypt_legacy_secret(b256(), id.private_key.get(), several, nb, out, &blocks).is_good());
  CHECK(out.view() == long_pw);
  CHECK(blocks == several.size() / block);
}

TEST_CASE("session security: encrypted-password tokens that do not decrypt count as failed logins",
          "[services][security][login][hostile]") {
  SecureHarness s(std::string(kSecureEndpoints) + ", " + kNoPlaintext, "",
                  "\"max_failed_logins_per_address\": 2");
  ua::StatusCode st;
  s.create(&st);
  REQUIRE(st.is_good());
  const std::string id = "username_Aes256_Sha256_RsaPss";
  auto garbage = ua::ExtensionObject::make(
      ua::UserNameIdentityToken{ua::String(id), ua::String("alice"), ua::ByteString(std::string(256, '\x11')),
                                ua::String(std::string(pss().asymmetric_encryption_uri))});
  s.activate(garbage, &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  s.activate(s.password(id, pss(), "secret", nullptr, +1), &st);  // decrypts, the length does not fit
  CHECK(st == status::BadIdentityTokenInvalid);
  // Two failures: the address is locked out, the right password is refused and never checked.
  s.activate(s.password(id, pss(), "secret"), &st);
  CHECK(st == status::BadUserAccessDenied);
  CHECK(s.h.server->logins().checks_done() == 0);
}

TEST_CASE("LoginVerifier: checks in flight count against the lockout", "[services][login][hostile]") {
  std::vector<config::User> users{{"bob", config::hash_password_with_salt("pw", "0123456789abcdef", 100000)}};
  services::LoginVerifier::Limits limits;
  limits.max_queued = 32;
  limits.max_failures = 3;
  services::LoginVerifier v(users, limits);
  asio::io_context ctx;
  int answered = 0, denied = 0;
  auto done = [&](ua::StatusCode st, std::string) {
    ++answered;
    if (st == status::BadUserAccessDenied) ++denied;
  };
  // A burst of 20 guesses at once: 3 are checked, the other 17 refused before any hash.
  for (int i = 0; i < 20; ++i) v.submit("10.0.0.1", "bob", security::Secret("guess"), ctx, done);
  CHECK(v.queued() + v.checks_done() <= 3);
  while (answered < 20) {
    ctx.restart();
    ctx.run_for(std::chrono::milliseconds(20));
  }
  CHECK(denied == 20);
  CHECK(v.checks_done() == 3);
  // Another address is not affected.
  bool good = false;
  v.submit("10.0.0.2", "bob", security::Secret("pw"), ctx,
           [&](ua::StatusCode st, std::string) { good = st.is_good(); });
  while (v.checks_done() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ctx.restart();
  ctx.run_for(std::chrono::milliseconds(50));
  CHECK(good);
}

TEST_CASE("LoginVerifier: an IPv6 client counts by its /64", "[services][login]") {
  using services::LoginVerifier;
  CHECK(LoginVerifier::failure_key("2001:db8:1:2:aaaa::1") ==
        LoginVerifier::failure_key("2001:db8:1:2:bbbb:1:2:3"));
  CHECK(LoginVerifier::failure_key("2001:db8:1:2::1") == "2001:db8:1:2::/64");
  CHECK(LoginVerifier::failure_key("2001:db8:1:3::1") != LoginVerifier::failure_key("2001:db8:1:2::1"));
  CHECK(LoginVerifier::failure_key("192.0.2.7") == "192.0.2.7");
  CHECK(LoginVerifier::failure_key("not an address") == "not an address");
}

TEST_CASE("session security: certificate helpers", "[services][security]") {
  const auto& c = test_certificate("urn:test:client");
  CHECK(services::certificate_application_uri(c.der) == "urn:test:client");
  const auto chain = bytes_of(c.der, test_certificate("urn:test:other").der);
  CHECK(security::leaf_certificate(chain).size() == c.der.size());
  CHECK(security::leaf_certificate(std::span(c.der).first(c.der.size() - 1)).empty());
  CHECK(!services::certificate_application_uri(std::span(c.der).first(10)));
  CHECK(security::certificate_public_key(c.der));
}

TEST_CASE("session security: X509 user tokens", "[services][security][session]") {
  const TestCertificate& alice_cert = test_certificate("urn:test:user:alice");
  const TestCertificate& stranger = test_certificate("urn:test:user:stranger");
  const TestCertificate& untrusted = test_certificate("urn:test:user:untrusted");
  std::string hex;
  for (uint8_t b : alice_cert.thumbprint) {
    static const char* d = "0123456789abcdef";
    hex += d[b >> 4];
    hex += d[b & 15];
  }
  SecureHarness s(std::string(R"("users": [{"name": "alice", "password_hash": "HASH"},
                                           {"name": "eve", "certificate_thumbprint": ")") +
                  hex + R"(", "roles": ["Engineer"]}], )" + kNoPlaintext);
  // Before a validator is wired, no X509 token is offered.
  auto eps = s.h.call<ua::GetEndpointsResponse>(ua::GetEndpointsRequest{}).endpoints;
  CHECK(!find_token(eps[0], ua::UserTokenType::Certificate));
  int validations = 0;
  s.h.server->set_user_certificate_validator([&](std::span<const uint8_t> chain, const security::Policy&) {
    ++validations;
    security::CertificateVerdict v;
    const auto leaf = security::leaf_certificate(chain);
    const bool is_untrusted =
        std::equal(leaf.begin(), leaf.end(), untrusted.der.begin(), untrusted.der.end());
    v.status = is_untrusted ? status::BadCertificateUntrusted : status::Good;
    return v;
  });
  eps = s.h.call<ua::GetEndpointsResponse>(ua::GetEndpointsRequest{}).endpoints;
  const ua::UserTokenPolicy* x509 = find_token(eps[0], ua::UserTokenType::Certificate);
  REQUIRE(x509);
  CHECK(x509->policy_id.view() == "x509_Basic256Sha256");
  CHECK(x509->security_policy_uri.view() == b256().uri);

  ua::StatusCode st;
  s.create(&st);
  REQUIRE(st.is_good());
  const auto token = [&](const TestCertificate& c) {
    return ua::ExtensionObject::make(
        ua::X509IdentityToken{ua::String("x509_Basic256Sha256"), ua::ByteString::from_bytes(c.der)});
  };
  const auto user_signature = [&](const TestCertificate& c, const security::Policy& p = b256()) {
    return ua::SignatureData{ua::String(std::string(p.asymmetric_signature_uri)),
                             ua::ByteString::from_bytes(sign_with(
                                 p, c.key.get(), bytes_of(s.identity.certificate, s.nonce.bytes())))};
  };
  const auto activate_x509 = [&](const TestCertificate& c, ua::SignatureData sig) {
    ua::ActivateSessionRequest req;
    req.user_identity_token = token(c);
    req.user_token_signature = std::move(sig);
    auto resp = s.h.call<ua::ActivateSessionResponse>(req, &st);
    if (st.is_good()) s.nonce = resp.server_nonce;
    return st;
  };
  // No signature, a signature by another key, the wrong algorithm: BadUserSignatureInvalid.
  CHECK(activate_x509(alice_cert, {}) == status::BadUserSignatureInvalid);
  CHECK(activate_x509(alice_cert, user_signature(stranger)) == status::BadUserSignatureInvalid);
  CHECK(activate_x509(alice_cert, user_signature(alice_cert, pss())) == status::BadUserSignatureInvalid);
  // Untrusted by the user trust list; trusted but nobody's.
  CHECK(activate_x509(untrusted, user_signature(untrusted)) == status::BadIdentityTokenRejected);
  CHECK(activate_x509(stranger, user_signature(stranger)) == status::BadIdentityTokenRejected);
  CHECK(validations == 5);
  // Another token policy id is not this token's.
  ua::ActivateSessionRequest wrong_id;
  wrong_id.user_identity_token = ua::ExtensionObject::make(
      ua::X509IdentityToken{ua::String("x509_None"), ua::ByteString::from_bytes(alice_cert.der)});
  wrong_id.user_token_signature = user_signature(alice_cert);
  s.h.call<ua::ActivateSessionResponse>(wrong_id, &st);
  CHECK(st == status::BadIdentityTokenInvalid);
  // The configured user's certificate with its proof: logged in as eve, an Engineer.
  REQUIRE(activate_x509(alice_cert, user_signature(alice_cert)).is_good());
  CHECK(s.h.read(plant(".Speed")).status.is_good());
  // The old nonce's proof no longer works.
  const ua::ByteString old = s.nonce;
  CHECK(activate_x509(alice_cert, user_signature(alice_cert)).is_good());
  const ua::ByteString now = s.nonce;
  s.nonce = old;
  const auto replay = user_signature(alice_cert);
  s.nonce = now;
  CHECK(activate_x509(alice_cert, replay) == status::BadUserSignatureInvalid);
}

TEST_CASE("session security: CreateSession's signature and encrypted passwords are computed off the shard",
          "[services][security][session]") {
  SecureHarness s;
  s.use_pool();
  s.secure();
  ua::StatusCode st;
  uint32_t create_id = 0;
  {
    PoolBlocker busy(*s.pool);
    // The signature waits for the pool; the shard answers another request on the channel meanwhile.
    ua::CreateSessionRequest req;
    req.session_name = ua::String("secure");
    req.requested_session_timeout = 60000;
    req.client_description.application_uri = ua::String("urn:test:client");
    req.client_nonce = ua::ByteString(std::string(32, '\x5a'));
    req.client_certificate = ua::ByteString::from_bytes(test_certificate("urn:test:client").der);
    create_id = s.h.send(req);
    ServerMessage m;
    CHECK(!s.h.wait_response(create_id, m, std::chrono::milliseconds(50)));
    const auto endpoints = s.h.call<ua::GetEndpointsResponse>(ua::GetEndpointsRequest{});
    CHECK(!endpoints.endpoints.empty());
    CHECK(s.h.server->session_count() == 1);  // reserved while it waits
  }
  ServerMessage m;
  REQUIRE(s.h.wait_response(create_id, m));
  const auto created = decode_response<ua::CreateSessionResponse>(m, &st, create_id);
  REQUIRE(st.is_good());
  CHECK(security::asymmetric_verify(
      b256(), s.identity.public_key.get(),
      bytes_of(test_certificate("urn:test:client").der, ua::ByteString(std::string(32, '\x5a')).bytes()),
      created.server_signature.signature.bytes()));
  s.h.token = created.authentication_token;
  s.nonce = created.server_nonce;
  // The encrypted password is decrypted on the pool too; then checked, and the session is activated.
  s.activate(s.password("username_Basic256Sha256", b256(), "secret"), &st, s.client_signature());
  CHECK(st.is_good());
  s.activate(s.password("username_Basic256Sha256", b256(), "wrong"), &st, s.client_signature());
  CHECK(st == status::BadUserAccessDenied);
}

TEST_CASE(
    "session security: a full crypto queue refuses CreateSession and ActivateSession with BadServerTooBusy",
    "[services][security][session][limits]") {
  SecureHarness s;
  s.use_pool(1, 1);
  s.secure();
  ua::StatusCode st;
  s.create(&st);  // the pool is free: this one is signed
  REQUIRE(st.is_good());
  {
    PoolBlocker busy(*s.pool);
    REQUIRE(s.pool->submit([] {}));  // the queue's one place taken
    s.create(&st);                   // (h.token stays the first session's: create() keeps it on a failure)
    CHECK(st == status::BadServerTooBusy);
    CHECK(s.h.server->session_count() == 1);  // the refused one released its reservation
    s.activate(s.password("username_Basic256Sha256", b256(), "secret"), &st, s.client_signature());
    CHECK(st == status::BadServerTooBusy);
  }
  // Released: the pool runs the queued job, and then has room again.
  for (int i = 0; i < 2000 && s.pool->queued() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(s.pool->queued() == 0);
  s.activate(s.password("username_Basic256Sha256", b256(), "secret"), &st, s.client_signature());
  CHECK(st.is_good());
}

TEST_CASE("session security: a channel closed while its CreateSession is signed leaves no session behind",
          "[services][security][session]") {
  SecureHarness s;
  s.use_pool();
  s.secure();
  {
    PoolBlocker busy(*s.pool);
    ua::CreateSessionRequest req;
    req.session_name = ua::String("secure");
    req.client_description.application_uri = ua::String("urn:test:client");
    req.client_nonce = ua::ByteString(std::string(32, '\x5a'));
    req.client_certificate = ua::ByteString::from_bytes(test_certificate("urn:test:client").der);
    s.h.send(req);
    CHECK(s.h.server->session_count() == 1);
    s.h.channel->detach();  // the connection is gone
    CHECK(s.h.server->session_count() == 0);
  }
  // The signature completes and finds no channel: nothing is sent, nothing is added.
  s.pool->stop();
  s.h.run_for(std::chrono::milliseconds(20));
  CHECK(s.h.server->session_count() == 0);
  CHECK(s.h.sink.out.empty());
}
