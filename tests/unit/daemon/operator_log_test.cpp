// The operator log: key=value fields made safe (transport/events.hpp), rate limiting per kind and key
// (daemon/rate_limiter.hpp) with its "suppressed" line (daemon/event_log.hpp), the journal's priority
// prefixes (daemon/log.hpp), and the session events and failed logins the services report, in which a
// password never appears.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../services/service_harness.hpp"
#include "daemon/event_log.hpp"
#include "daemon/log.hpp"
#include "daemon/rate_limiter.hpp"
#include "tests/unit/daemon/text_file.hpp"
#include "transport/events.hpp"

using namespace opcuad;
using opcuad::text_file::count;
using opcuad::text_file::slurp;
using namespace opcuad::services::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Logging into a fresh file for one test; back to standard error at info afterwards.
struct LogFile {
  fs::path path = fs::temp_directory_path() / ("opcuad-operator-log-" + std::to_string(::getpid()) + ".log");
  LogFile() {
    fs::remove(path);
    REQUIRE_FALSE(log::open_file(path.string()));
  }
  ~LogFile() {
    log::use_stderr();
    log::set_level(log::Level::Info);
    fs::remove(path);
  }
  std::string text() const { return slurp(path); }
};

// Standard error redirected into a file for one test (the journal format applies to standard error only).
struct CapturedStderr {
  fs::path path = fs::temp_directory_path() / ("opcuad-stderr-" + std::to_string(::getpid()));
  int saved = ::dup(STDERR_FILENO);
  CapturedStderr() {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    ::dup2(fd, STDERR_FILENO);
    ::close(fd);
  }
  ~CapturedStderr() {
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    log::set_stderr_format(log::StderrFormat::Plain);
    fs::remove(path);
  }
  std::string text() const { return slurp(path); }
};

}  // namespace

TEST_CASE("operator log: field values are quoted, escaped and bounded", "[log][events]") {
  std::string f;
  transport::append_field(f, "peer", "10.0.0.5:51234");
  transport::append_field(f, "shard", uint64_t{1});
  CHECK(f == " peer=10.0.0.5:51234 shard=1");
  f.clear();
  transport::append_field(f, "name", "");
  transport::append_field(f, "app", "My Client");
  CHECK(f == R"( name="" app="My Client")");
  // A hostile client's name cannot start a line of its own or forge a field.
  f.clear();
  transport::append_field(f, "user", "eve\n2026-01-01T00:00:00.000Z info  event=login.ok user=\"admin\"");
  CHECK(f.find('\n') == std::string::npos);
  CHECK(f == R"( user="eve\x0a2026-01-01T00:00:00.000Z info  event=login.ok user=\"admin\"")");
  f.clear();
  transport::append_field(f, "user", std::string("a\0b\x7f\\", 5));
  CHECK(f == R"( user="a\x00b\x7f\\")");
  f.clear();
  transport::append_field(f, "uri", std::string(1000, 'u'));
  CHECK(f == " uri=" + std::string(transport::kMaxFieldValue, 'u') + "...");
  f.clear();
  transport::append_status(f, "status", ua::status::BadUserAccessDenied);
  CHECK(f == " status=BadUserAccessDenied");
  CHECK(transport::peer_key("10.0.0.5:51234") == "10.0.0.5");
  CHECK(transport::peer_key("[::1]:4840") == "[::1]");
  CHECK(transport::peer_key("10.0.0.5") == "10.0.0.5");
  CHECK(transport::peer_key("::1") == "::1");
}

TEST_CASE("operator log: at most burst lines per kind and key and window, then the count", "[log][events]") {
  RateLimiter limiter({3, 10s, 100});
  const auto t0 = RateLimiter::Clock::now();
  int written = 0;
  for (int i = 0; i < 10; ++i) written += limiter.admit("login.failed", "10.0.0.5", t0 + i * 100ms).write;
  CHECK(written == 3);
  // Another key and another kind have windows of their own.
  CHECK(limiter.admit("login.failed", "10.0.0.6", t0).write);
  CHECK(limiter.admit("connection.refused", "10.0.0.5", t0).write);
  // The next occurrence after the window reports what was dropped, and is written.
  const auto d = limiter.admit("login.failed", "10.0.0.5", t0 + 10s);
  CHECK(d.write);
  CHECK(d.suppressed == 7);
  // Windows that ended are reported and forgotten by flush(), when no later occurrence came.
  for (int i = 0; i < 5; ++i) (void)limiter.admit("connection.refused", "10.0.0.5", t0 + 1s);
  std::vector<std::string> reports;
  limiter.flush(t0 + 12s, [&](std::string_view kind, std::string_view key, uint64_t n) {
    reports.push_back(std::string(kind) + " " + std::string(key) + " " + std::to_string(n));
  });
  CHECK(reports == std::vector<std::string>{"connection.refused 10.0.0.5 3"});
  CHECK(limiter.keys() == 1);  // only the window opened at t0 + 10 s is left
}

TEST_CASE("operator log: the table of keys is bounded; new keys then share one window", "[log][events]") {
  RateLimiter limiter({2, 10s, 4});
  const auto t0 = RateLimiter::Clock::now();
  for (int i = 0; i < 4; ++i)
    CHECK(limiter.admit("connection.accepted", "10.0.0." + std::to_string(i), t0).write);
  // Hostile keys (a client with many addresses) beyond max_keys: one overflow window for the kind.
  int written = 0;
  for (int i = 4; i < 1000; ++i)
    written += limiter.admit("connection.accepted", "10.0.0." + std::to_string(i), t0).write;
  CHECK(written == 2);
  CHECK(limiter.keys() == 5);
  CHECK(RateLimiter({0, 10s, 4}).admit("x", "y", t0).write);  // burst 0: no limit
}

TEST_CASE("operator log: events are lines of key=value fields at their level, suppressed ones counted",
          "[log][events]") {
  LogFile file;
  EventLog events({2, 1s, 100});
  std::string f;
  transport::append_field(f, "peer", "10.0.0.5:51234");
  for (int i = 0; i < 5; ++i)
    events.write({transport::EventLevel::Warn, "connection.refused", "10.0.0.5", f});
  events.write({transport::EventLevel::Info, "connection.accepted", "10.0.0.6", f});
  std::string text = file.text();
  CHECK(count(text, "warn  event=connection.refused peer=10.0.0.5:51234\n") == 2);
  CHECK(count(text, "info  event=connection.accepted peer=10.0.0.5:51234\n") == 1);
  CHECK(count(text, "suppressed") == 0);
  events.flush(RateLimiter::Clock::now() + 2s);
  text = file.text();
  CHECK(count(text,
              "warn  event=log.suppressed kind=connection.refused key=10.0.0.5 suppressed=3 window_s=1\n") ==
        1);
  // Below the threshold nothing is written, and nothing is counted either.
  log::set_level(log::Level::Warn);
  events.write({transport::EventLevel::Info, "session.created", "10.0.0.6", f});
  CHECK(count(file.text(), "session.created") == 0);
}

TEST_CASE("operator log: under the journal, <N> priority prefixes and no timestamp", "[log][journal]") {
  CHECK(log::priority(log::Level::Error) == 3);
  CHECK(log::priority(log::Level::Warn) == 4);
  CHECK(log::priority(log::Level::Info) == 6);
  CHECK(log::priority(log::Level::Debug) == 7);
  CHECK(log::priority(log::Level::Trace) == 7);
  CapturedStderr err;
  log::set_level(log::Level::Trace);
  log::set_stderr_format(log::StderrFormat::Journal);
  log::error("e");
  log::warn("w");
  log::info("i");
  log::debug("d");
  log::set_stderr_format(log::StderrFormat::Plain);
  log::info("plain");
  log::set_level(log::Level::Info);
  const std::string text = err.text();
  CHECK(text.rfind("<3>e\n<4>w\n<6>i\n<7>d\n", 0) == 0);
  CHECK(text.find("Z info  plain\n") != std::string::npos);
}

TEST_CASE("operator log: standard error is the journal only when JOURNAL_STREAM names it", "[log][journal]") {
  const fs::path p = fs::temp_directory_path() / ("opcuad-journal-" + std::to_string(::getpid()));
  const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  const std::string mine = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  CHECK(log::stderr_is_journal(mine.c_str(), fd));
  CHECK_FALSE(
      log::stderr_is_journal((std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1)).c_str(), fd));
  CHECK_FALSE(log::stderr_is_journal(nullptr, fd));
  CHECK_FALSE(log::stderr_is_journal("", fd));
  CHECK_FALSE(log::stderr_is_journal("garbage", fd));
  CHECK_FALSE(log::stderr_is_journal((mine + "x").c_str(), fd));
  ::close(fd);
  fs::remove(p);
}

TEST_CASE("operator log: session events and failed logins, never the password", "[log][events][login]") {
  ServiceHarness h;
  std::vector<std::string> lines;
  std::vector<transport::EventLevel> levels;
  h.server->set_events([&](const transport::Event& e) {
    lines.push_back("event=" + std::string(e.kind) + std::string(e.fields) + " key=" + std::string(e.key));
    levels.push_back(e.level);
  });
  const char* kPassword = "hunter2-do-not-log";
  CHECK(h.login(user("alice", kPassword)) == ua::status::BadUserAccessDenied);
  CHECK(h.login(user("mallory\nevent=session.activated", "secret")) == ua::status::BadUserAccessDenied);
  REQUIRE(h.login(user("alice", "secret")).is_good());
  ua::CloseSessionRequest close;
  close.delete_subscriptions = true;
  ua::StatusCode s;
  h.call<ua::CloseSessionResponse>(close, &s);
  CHECK(s.is_good());

  std::string all;
  for (const auto& l : lines) all += l + "\n";
  INFO(all);
  CHECK(all.find(kPassword) == std::string::npos);
  CHECK(all.find("secret") == std::string::npos);
  CHECK(count(all, "event=login.failed user=alice peer=\"\" status=BadUserAccessDenied") == 1);
  CHECK(count(all, R"(event=login.failed user="mallory\x0aevent=session.activated")") == 1);
  CHECK(count(all, "event=session.created ") == 3);
  CHECK(count(all, "event=session.activated ") == 1);
  CHECK(count(all, "event=session.closed ") == 1);
  CHECK(count(all, " user=alice ") == 3);  // the failed login, the activation, the close
  CHECK(count(all, "name=test") == 5);
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool failed = lines[i].rfind("event=login.failed", 0) == 0;
    CHECK((levels[i] == (failed ? transport::EventLevel::Warn : transport::EventLevel::Info)));
  }
}

TEST_CASE("operator log: the client's application name and URI, bounded", "[log][events]") {
  ServiceHarness h;
  std::vector<std::string> lines;
  h.server->set_events([&](const transport::Event& e) { lines.push_back(std::string(e.fields)); });
  ua::CreateSessionRequest create;
  create.session_name = ua::String("s");
  create.requested_session_timeout = 60000;
  create.endpoint_url = ua::String("opc.tcp://localhost:4840");
  create.client_description.application_uri = ua::String("urn:client:" + std::string(5000, 'x'));
  create.client_description.application_name = ua::LocalizedText{"en", "Plant \"HMI\" 7"};
  ua::StatusCode s;
  h.call<ua::CreateSessionResponse>(create, &s);
  REQUIRE(s.is_good());
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(R"( application="Plant \"HMI\" 7")") != std::string::npos);
  CHECK(lines[0].find(" application_uri=urn:client:" + std::string(transport::kMaxFieldValue - 11, 'x') +
                      "...") != std::string::npos);
  CHECK(lines[0].find(" user=\"\"") != std::string::npos);  // not activated yet
}

TEST_CASE("operator log: a session refused by a limit is a warning naming the limit", "[log][events]") {
  ServiceHarness h("\"max_unactivated_sessions_per_address\": 1, \"max_session_wait_ms\": 0");
  std::vector<std::string> lines;
  std::vector<transport::EventLevel> levels;
  h.server->set_events([&](const transport::Event& e) {
    lines.push_back("event=" + std::string(e.kind) + std::string(e.fields));
    levels.push_back(e.level);
  });
  ua::CreateSessionRequest create;
  create.session_name = ua::String("s");
  create.requested_session_timeout = 60000;
  ua::StatusCode s;
  h.call<ua::CreateSessionResponse>(create, &s);
  REQUIRE(s.is_good());
  h.call<ua::CreateSessionResponse>(create, &s);
  CHECK(s == ua::status::BadTooManySessions);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1] ==
        R"(event=session.refused peer="" limit=max_unactivated_sessions status=BadTooManySessions)");
  CHECK(levels[1] == transport::EventLevel::Warn);
}
