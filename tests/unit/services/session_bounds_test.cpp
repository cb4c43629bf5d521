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

TEST_CASE("Sessions not yet activated are capped per address and expire quickly",
          "[services][session][hardening]") {
  // No waiting here (max_session_wait_ms 0): the third is refused at once.
  ServiceHarness h(
      "\"max_unactivated_sessions_per_address\": 2, \"unactivated_session_timeout_ms\": 100, "
      "\"max_session_wait_ms\": 0");
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

TEST_CASE("A CreateSession past the unactivated limit waits for a slot, oldest first",
          "[services][session][hardening]") {
  ServiceHarness h("\"max_unactivated_sessions_per_address\": 2");
  ua::StatusCode s;
  auto a = h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  auto b = h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  const uint32_t third = h.send(create_request());
  const uint32_t fourth = h.send(create_request());
  ServerMessage m;
  CHECK_FALSE(h.wait_response(third, m, std::chrono::milliseconds(300)));  // waiting, not refused
  CHECK(h.server->waiting_session_count() == 2);
  CHECK(h.server->session_count() == 2);

  // Activating `a` frees a slot: the older waiter takes it, the younger still waits.
  h.token = a.authentication_token;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  REQUIRE(s.is_good());
  REQUIRE(h.wait_response(third, m));
  auto c = decode_response<ua::CreateSessionResponse>(m, &s, third);
  CHECK(s.is_good());
  CHECK_FALSE(h.take_response(fourth, m));
  CHECK(h.server->waiting_session_count() == 1);
  CHECK(h.server->unactivated_session_count() == 2);

  // Closing `b` (never activated) frees the next.
  h.token = b.authentication_token;
  h.call<ua::CloseSessionResponse>(ua::CloseSessionRequest{}, &s);
  REQUIRE(s.is_good());
  REQUIRE(h.wait_response(fourth, m));
  auto d = decode_response<ua::CreateSessionResponse>(m, &s, fourth);
  CHECK(s.is_good());
  CHECK(h.server->waiting_session_count() == 0);
  // Both waiters' sessions are real: each activates.
  for (const auto& created : {c, d}) {
    h.token = created.authentication_token;
    h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
    CHECK(s.is_good());
  }
  CHECK(h.server->unactivated_session_count() == 0);
  CHECK(h.server->session_count() == 3);
}

TEST_CASE("A waiting CreateSession is refused when max_session_wait_ms or its timeoutHint passes",
          "[services][session][hardening]") {
  ServiceHarness h("\"max_unactivated_sessions_per_address\": 1, \"max_session_wait_ms\": 300");
  ua::StatusCode s;
  h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  ServerMessage m;
  auto started = std::chrono::steady_clock::now();
  const uint32_t bounded = h.send(create_request());
  REQUIRE(h.wait_response(bounded, m, std::chrono::seconds(3)));
  decode_response<ua::CreateSessionResponse>(m, &s, bounded);
  CHECK(s == ua::status::BadTooManySessions);
  auto waited = std::chrono::steady_clock::now() - started;
  CHECK(waited >= std::chrono::milliseconds(300));
  CHECK(waited < std::chrono::milliseconds(300 + 250 + 500));  // the sweep's period, and slack

  // A shorter timeoutHint bounds the wait.
  ua::CreateSessionRequest hinted = create_request();
  hinted.request_header.timeout_hint = 50;
  started = std::chrono::steady_clock::now();
  const uint32_t short_wait = h.send(hinted);
  REQUIRE(h.wait_response(short_wait, m, std::chrono::seconds(3)));
  decode_response<ua::CreateSessionResponse>(m, &s, short_wait);
  CHECK(s == ua::status::BadTooManySessions);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(300));
  CHECK(h.server->waiting_session_count() == 0);
  CHECK(h.server->unactivated_session_count() == 1);
}

TEST_CASE("Waiters are bounded per address and in total; other addresses do not queue behind them",
          "[services][session][hardening]") {
  ServiceHarness h(
      "\"max_unactivated_sessions\": 4, \"max_unactivated_sessions_per_address\": 1, "
      "\"max_waiting_sessions_per_address\": 2, \"max_waiting_sessions\": 3");
  h.channel->set_peer_address("192.0.2.1");
  ua::StatusCode s;
  h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  h.send(create_request());
  h.send(create_request());
  // A third waiter of this address: refused at once.
  h.call<ua::CreateSessionResponse>(create_request(), &s);
  CHECK(s == ua::status::BadTooManySessions);
  CHECK(h.server->waiting_session_count() == 2);

  // Another address has its own slot: no wait behind the first address's queue.
  SecondShard other(h, h.ctx);
  other.ch->set_peer_address("192.0.2.2");
  other.call<ua::CreateSessionResponse>(create_request(), &s);
  CHECK(s.is_good());
  // Its second waits (the total's last waiting place), a third address's second finds none left.
  other.send(create_request());
  CHECK(h.server->waiting_session_count() == 3);
  SecondShard third(h, h.ctx);
  third.ch->set_peer_address("192.0.2.3");
  third.call<ua::CreateSessionResponse>(create_request(), &s);
  CHECK(s.is_good());
  third.call<ua::CreateSessionResponse>(create_request(), &s);
  CHECK(s == ua::status::BadTooManySessions);
}

TEST_CASE(
    "A waiting CreateSession leaves the queue with its channel, and the slot it would have had passes on",
    "[services][session][hardening]") {
  ServiceHarness h("\"max_unactivated_sessions_per_address\": 1");
  ua::StatusCode s;
  auto first = h.call<ua::CreateSessionResponse>(create_request(), &s);
  REQUIRE(s.is_good());
  SecondShard leaving(h, h.ctx);
  leaving.send(create_request());
  SecondShard staying(h, h.ctx);
  const uint32_t waiting = staying.send(create_request());
  REQUIRE(h.server->waiting_session_count() == 2);
  leaving.close_channel();
  CHECK(h.server->waiting_session_count() == 1);
  // The next free slot goes to `staying`, not to the closed channel's request.
  h.token = first.authentication_token;
  h.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  REQUIRE(s.is_good());
  ServerMessage m;
  REQUIRE(staying.wait_response(waiting, m));
  auto created = decode_response<ua::CreateSessionResponse>(m, &s, waiting);
  CHECK(s.is_good());
  staying.token = created.authentication_token;
  staying.call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{}, &s);
  CHECK(s.is_good());
  CHECK(h.server->waiting_session_count() == 0);
  CHECK(h.server->unactivated_session_count() == 0);
}

TEST_CASE("The first ActivateSession and CloseSession must come on the session's channel",
          "[services][session][hardening]") {
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

TEST_CASE("A first activation from another shard is refused and moves nothing",
          "[services][session][hardening]") {
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

TEST_CASE("A re-activation with another user on another shard leaves the session in place",
          "[services][session][hardening]") {
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

TEST_CASE("User-name logins: an address with too many failures is refused without a check",
          "[services][session][login]") {
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
    if (s.is_good())
      ++good;
    else if (s == ua::status::BadServerTooBusy)
      ++busy;
    else if (s == ua::status::BadUserAccessDenied)
      ++denied;
  };
  // Each check takes far longer than submitting ten.
  for (int i = 0; i < 10; ++i) v.submit("10.0.0.1", "bob", security::Secret("pw"), ctx, done);
  CHECK(v.checks_done() < 10);  // submit() returned before the checks were done
  CHECK(busy >= 7);             // one being checked, two queued, the rest refused at once
  CHECK(v.queued() <= 2);
  while (good + busy < 10) {
    ctx.restart();
    ctx.run_for(std::chrono::milliseconds(20));
  }
  CHECK(good + busy == 10);
  CHECK(good >= 1);
  CHECK(denied == 0);
}
