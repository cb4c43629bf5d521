// Sessions before and during activation (Part 4 §5.6.2, §5.6.3; docs/SECURITY.md): the limits on sessions
// not yet activated, their short lifetime, the channel binding of the first activation and of CloseSession,
// and user-name logins checked off the shard thread with a bounded queue and a per-address lockout.
#include <atomic>

#include "services/login_verifier.hpp"
#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {

ua::CreateSessionRequest create_request() {
  ua::CreateSessionRequest create;
  create.session_name = ua::String("bounds");
  create.requested_session_timeout = 60000;
  return create;
}

}  // namespace

TEST_CASE("Sessions not yet activated are capped per address and expire quickly", "[services][session][hardening]") {
  ServiceHarness h("\"max_unactivated_sessions_per_address\": 2, \"unactivated_session_timeout_ms\": 100");
  ua::StatusCode s;
  auto a = h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  h.call<ua::CreateSessionResponse>(create_request(), &s);
  CHECK(s == ua::status::BadTooManySessions);  // a third, unactivated, from the same address
  CHECK(h.server->unactivated_session_count() == 2);

  // Activating one frees its place.
  h.token = a.authentication_token;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  REQUIRE(s.is_good());
  CHECK(h.server->unactivated_session_count() == 1);
  auto c = h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());

  // One left unactivated past unactivated_session_timeout_ms is gone, though its session timeout is 60 s.
  h.run_for(std::chrono::milliseconds(600));
  h.token = c.authentication_token;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s == ua::status::BadSessionIdInvalid);
  CHECK(h.server->unactivated_session_count() == 0);
  CHECK(h.server->session_count() == 1);  // the activated one stays
}

TEST_CASE("The first ActivateSession and CloseSession must come on the session's channel", "[services][session][hardening]") {
  ServiceHarness h;
  SecondShard other(h, h.ctx);  // a second channel on the same shard
  ua::StatusCode s;
  auto created = h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  other.token = created.authentication_token;
  other.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s == ua::status::BadSecureChannelIdInvalid);
  // The failed attempt disturbed nothing: the right channel activates it.
  h.token = created.authentication_token;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  REQUIRE(s.is_good());
  other.call<ua::CloseSessionResponse>(ua::CloseSessionRequest{}, &s);
  CHECK(s == ua::status::BadSecureChannelIdInvalid);
  CHECK(h.server->session_count() == 1);
  CHECK(h.read(ua::NodeId(0, 2258)).status.is_good());
}

TEST_CASE("A session never activated is dropped when its channel closes", "[services][session][hardening]") {
  ServiceHarness h;
  SecondShard other(h, h.ctx);  // a second channel on the same shard
  SecondShard third(h, h.ctx);
  ua::StatusCode s;
  // On `other`: one session left unactivated, one activated.
  auto unactivated = other.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  other.login();
  const ua::NodeId activated = other.token;
  // On `third`: one unactivated that must not go with `other`'s channel.
  auto bystander = third.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  REQUIRE(h.server->session_count() == 3);
  REQUIRE(h.server->unactivated_session_count() == 2);

  other.close_channel();
  // Its first ActivateSession could only have come on that channel (Part 4 §5.6.3): gone at once, not
  // after unactivated_session_timeout_ms (10 s here).
  CHECK(h.server->unactivated_session_count() == 1);
  CHECK(h.server->session_count() == 2);
  h.token = unactivated.authentication_token;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s == ua::status::BadSessionIdInvalid);
  // The activated one outlives its channel: re-activated on a new one.
  h.token = activated;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s.is_good());
  // The other channel's unactivated session is still there and can be activated on its channel.
  third.token = bystander.authentication_token;
  third.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s.is_good());
  CHECK(h.server->unactivated_session_count() == 0);
}

TEST_CASE("A first activation from another shard is refused and moves nothing", "[services][session][hardening]") {
  asio::io_context second_ctx;
  ServiceHarness h;
  SecondShard second(h, second_ctx);
  ua::StatusCode s;
  auto created = h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  second.token = created.authentication_token;
  second.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s == ua::status::BadSecureChannelIdInvalid);
  h.token = created.authentication_token;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s.is_good());
}

TEST_CASE("A re-activation with another user on another shard leaves the session in place", "[services][session][hardening]") {
  asio::io_context second_ctx;
  ServiceHarness h;
  SecondShard second(h, second_ctx);
  REQUIRE(h.login(user("alice", "secret")).is_good());
  second.token = h.token;
  ua::StatusCode s;
  second.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);  // anonymous, not alice
  CHECK(s == ua::status::BadUserAccessDenied);
  // Still on the first shard and channel, still alice's.
  CHECK(h.read(ua::NodeId(0, 2258)).status.is_good());
}

TEST_CASE("User-name logins: wrong password and unknown user look alike", "[services][session][login]") {
  ServiceHarness h;
  CHECK(h.login(user("alice", "wrong")) == ua::status::BadUserAccessDenied);
  CHECK(h.login(user("mallory", "secret")) == ua::status::BadUserAccessDenied);
  CHECK(h.login(user("alice", "secret")).is_good());
}

TEST_CASE("User-name logins: an address with too many failures is refused without a check", "[services][session][login]") {
  // The harness allows 3 sessions: two failed logins and one refused one.
  ServiceHarness h("\"max_failed_logins_per_address\": 2");
  for (int i = 0; i < 2; ++i) CHECK(h.login(user("alice", "wrong")) == ua::status::BadUserAccessDenied);
  const uint64_t checks = h.server->logins().checks_done();
  // Locked out: even the right password is refused, and no hash is computed for it.
  CHECK(h.login(user("alice", "secret")) == ua::status::BadUserAccessDenied);
  CHECK(h.server->logins().checks_done() == checks);
  CHECK(h.server->logins().refused() >= 1);
}

TEST_CASE("LoginVerifier: checks run off the caller's thread, the queue is bounded", "[services][login]") {
  std::vector<config::User> users{{"bob", config::hash_password_with_salt("pw", "0123456789abcdef", 200000)}};
  services::LoginVerifier::Limits limits;
  limits.max_queued = 2;
  limits.max_failures = 0;  // no lockout in this test
  services::LoginVerifier v(users, limits);
  asio::io_context ctx;
  std::atomic<int> good{0}, busy{0}, denied{0};
  auto done = [&](ua::StatusCode s, std::string) {
    if (s.is_good()) ++good;
    else if (s == ua::status::BadServerTooBusy) ++busy;
    else if (s == ua::status::BadUserAccessDenied) ++denied;
  };
  // Each check takes far longer than submitting ten.
  for (int i = 0; i < 10; ++i) v.submit("10.0.0.1", "bob", "pw", ctx, done);
  CHECK(v.checks_done() < 10);  // submit() returned before the checks were done
  CHECK(busy >= 7);              // one being checked, two queued, the rest refused at once
  CHECK(v.queued() <= 2);
  while (good + busy < 10) {
    ctx.restart();
    ctx.run_for(std::chrono::milliseconds(20));
  }
  CHECK(good + busy == 10);
  CHECK(good >= 1);
  CHECK(denied == 0);
}
