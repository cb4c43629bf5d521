#pragma once
// LoginVerifier: checks user-name logins (Part 4 §5.6.3, UserNameIdentityToken) off the shard threads.
//
// A PBKDF2 check at the configured cost (600,000 iterations by default) takes a few hundred
// milliseconds; run on a shard it would stall every other client of that shard. Here a small pool of
// threads does the checks, and the result is posted back to the shard that asked. Bounds (docs/SECURITY.md):
//   - at most `max_queued` checks wait; one more is refused at once with BadServerTooBusy;
//   - a client address with `max_failures` failed logins within `failure_window` is refused at once with
//     BadUserAccessDenied until the window has passed (no hash is computed for it). A check still queued
//     or running counts as a failure until it succeeds, so a burst of guesses is cut at the bound, not
//     after the queue's worth. An IPv6 address counts by its /64 prefix (one host's addresses);
//   - the decryption of an encrypted password counts the same way (begin_attempt, end_attempt): a token
//     that does not decrypt or parse is a failed login of its address;
//   - an unknown user name costs the same PBKDF2 work as a wrong password, so timing does not tell
//     which user names exist.
// Passwords are wiped from memory once checked and never logged.
//
// Threads: submit() from any shard; the workers touch only the queue and the failure table, both under
// `mutex_`, which no request path other than ActivateSession with a user name ever takes.

#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "transport/security/secret.hpp"
#include "ua/status_code.hpp"

namespace opcuad::services {

class LoginVerifier {
 public:
  struct Limits {
    unsigned threads = 1;
    size_t max_queued = 32;
    uint32_t max_failures = 5;  // per client address within failure_window
    std::chrono::milliseconds failure_window{60000};
    size_t max_tracked_addresses = 10000;  // the failure table forgets the oldest beyond this
  };
  // `done(status, user)`: Good and the user name, or the status to answer (BadUserAccessDenied,
  // BadServerTooBusy).
  using Done = std::function<void(ua::StatusCode, std::string user)>;

  LoginVerifier(const std::vector<config::User>& users, Limits limits);
  ~LoginVerifier();  // finishes the check under way, drops the queued ones (their done never runs)
  LoginVerifier(const LoginVerifier&) = delete;
  LoginVerifier& operator=(const LoginVerifier&) = delete;

  // Queues a check; `done` is posted to `reply_to` with the result. A check refused before any work
  // (queue full: BadServerTooBusy; address locked out: BadUserAccessDenied) calls `done` at once, on the
  // caller's thread, which must be `reply_to`'s.
  void submit(std::string address, std::string user, security::Secret password, asio::io_context& reply_to,
              Done done);

  // An attempt that is not a password check yet (an encrypted password being decrypted): false when the
  // address is locked out (nothing may be done for it); else it counts as a failure until end_attempt()
  // says how it ended. Each true begin_attempt() needs one end_attempt().
  enum class Outcome { Failed, Passed };
  bool begin_attempt(const std::string& address);
  void end_attempt(const std::string& address, Outcome outcome);

  // The key of the failure table for a client address: the address, an IPv6 one cut to its /64.
  static std::string failure_key(std::string_view address);

  size_t queued() const;
  uint64_t checks_done() const noexcept { return checks_done_.load(std::memory_order_relaxed); }
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  struct Job {
    std::string address, user;  // address: its failure_key()
    security::Secret password;
    asio::io_context* reply_to;
    Done done;
  };
  struct Failures {
    uint32_t count = 0;
    uint32_t in_flight = 0;  // attempts begun and not ended: each counts as a failure meanwhile
    std::chrono::steady_clock::time_point first;
  };
  void run();
  bool check(const Job& job);
  // REQUIRES: mutex_ (both). `key` is a failure_key().
  bool locked_out(const std::string& key, std::chrono::steady_clock::time_point now);
  Failures& entry(const std::string& key, std::chrono::steady_clock::time_point now);
  void finish(const std::string& key, bool ok);  // ends an attempt begun under `key`

  const std::vector<config::User>& users_;
  const Limits limits_;
  std::once_flag dummy_once_;
  std::string
      dummy_hash_;  // verified against for unknown users, at the users' cost (set once, then read-only)
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;                               // GUARDED_BY(mutex_)
  std::unordered_map<std::string, Failures> failures_;  // GUARDED_BY(mutex_)
  bool stopping_ = false;                               // GUARDED_BY(mutex_)
  std::atomic<uint64_t> checks_done_{0};
  std::atomic<uint64_t> refused_{0};
  std::vector<std::thread> threads_;
};

}  // namespace opcuad::services
