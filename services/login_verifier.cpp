#include "services/login_verifier.hpp"

#include <pthread.h>

#include <algorithm>

#include <asio/ip/address_v6.hpp>
#include <asio/post.hpp>

#include "config/password.hpp"

namespace opcuad::services {

namespace {

// The iteration count of a configured hash ("pbkdf2-sha256$<iterations>$..."), 0 when unreadable.
unsigned iterations_of(std::string_view hash) {
  const auto a = hash.find('$');
  if (a == std::string_view::npos) return 0;
  unsigned n = 0;
  for (size_t i = a + 1; i < hash.size() && hash[i] != '$'; ++i) {
    if (hash[i] < '0' || hash[i] > '9' || n > 100000000) return 0;
    n = n * 10 + static_cast<unsigned>(hash[i] - '0');
  }
  return n;
}

}  // namespace

LoginVerifier::LoginVerifier(const std::vector<config::User>& users, Limits limits)
    : users_(users), limits_(limits) {
  const unsigned n = std::max(1u, limits_.threads);
  for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
}

LoginVerifier::~LoginVerifier() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();  // each job's password is wiped as it goes
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

size_t LoginVerifier::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

std::string LoginVerifier::failure_key(std::string_view address) {
  if (address.find(':') == std::string_view::npos) return std::string(address);
  asio::error_code ec;
  auto a = asio::ip::make_address_v6(std::string(address), ec);
  if (ec) return std::string(address);
  // One host, or one customer's network, usually has a whole /64: its interface identifiers are free to
  // change, so counting by address would let it guess from 2^64 of them.
  auto bytes = a.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return asio::ip::address_v6(bytes).to_string() + "/64";
}

bool LoginVerifier::locked_out(const std::string& key, std::chrono::steady_clock::time_point now) {
  auto it = failures_.find(key);
  if (it == failures_.end()) return false;
  if (it->second.in_flight == 0 && now - it->second.first > limits_.failure_window) {
    failures_.erase(it);
    return false;
  }
  return limits_.max_failures && it->second.count + it->second.in_flight >= limits_.max_failures;
}

LoginVerifier::Failures& LoginVerifier::entry(const std::string& key,
                                              std::chrono::steady_clock::time_point now) {
  auto it = failures_.find(key);
  if (it != failures_.end()) {
    if (it->second.in_flight == 0 && now - it->second.first > limits_.failure_window)
      it->second = Failures{0, 0, now};
    return it->second;
  }
  if (failures_.size() >= limits_.max_tracked_addresses) {
    // Forget the oldest entry: the table stays bounded however many addresses fail. An attempt of the
    // forgotten address still in flight then ends without an entry, which finish() allows.
    auto oldest = failures_.begin();
    for (auto i = failures_.begin(); i != failures_.end(); ++i) {
      if (i->second.first < oldest->second.first) oldest = i;
    }
    failures_.erase(oldest);
  }
  return failures_[key] = Failures{0, 0, now};
}

bool LoginVerifier::begin_attempt(const std::string& address) {
  const std::string key = failure_key(address);
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  if (locked_out(key, now)) return false;
  if (limits_.max_failures) ++entry(key, now).in_flight;
  return true;
}

void LoginVerifier::end_attempt(const std::string& address, Outcome outcome) {
  const std::string key = failure_key(address);
  std::lock_guard lock(mutex_);
  auto it = failures_.find(key);
  if (it == failures_.end()) {
    if (outcome == Outcome::Failed && limits_.max_failures)
      ++entry(key, std::chrono::steady_clock::now()).count;
    return;
  }
  if (it->second.in_flight) --it->second.in_flight;
  // A decryption that worked is no verdict on the password: the check that follows counts on its own.
  if (outcome == Outcome::Failed) ++it->second.count;
}

void LoginVerifier::submit(std::string address, std::string user, security::Secret password,
                           asio::io_context& reply_to, Done done) {
  ua::StatusCode refused = ua::status::Good;
  std::string key = failure_key(address);
  {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (locked_out(key, now)) {
      refused = ua::status::BadUserAccessDenied;
    } else if (queue_.size() >= limits_.max_queued || stopping_) {
      refused = ua::status::BadServerTooBusy;
    } else {
      if (limits_.max_failures) ++entry(key, now).in_flight;
      queue_.push_back(Job{std::move(key), std::move(user), std::move(password), &reply_to, std::move(done)});
      wake_.notify_one();
      return;
    }
  }
  refused_.fetch_add(1, std::memory_order_relaxed);
  done(refused, {});
}

bool LoginVerifier::check(const Job& job) {
  // An unknown user is checked against a hash of the most expensive configured cost, made on first need
  // (on a worker thread, not at start-up).
  std::call_once(dummy_once_, [this] {
    unsigned iterations = 1000;
    for (const auto& u : users_) iterations = std::max(iterations, iterations_of(u.password_hash));
    dummy_hash_ = config::hash_password("opcuad: no such user", iterations);
  });
  const config::User* found = nullptr;
  for (const auto& u : users_) {
    // A user without a password (one who logs in with a certificate) is no user here.
    if (u.name == job.user && !u.password_hash.empty()) found = &u;
  }
  // Same work whether or not the user exists.
  const bool ok = config::verify_password(job.password.view(), found ? found->password_hash : dummy_hash_);
  return ok && found;
}

void LoginVerifier::finish(const std::string& key, bool ok) {
  std::lock_guard lock(mutex_);
  auto it = failures_.find(key);
  if (it == failures_.end()) {
    if (!ok && limits_.max_failures) ++entry(key, std::chrono::steady_clock::now()).count;
    return;
  }
  if (it->second.in_flight) --it->second.in_flight;
  if (ok) {
    // A good password clears the address's record (its other attempts in flight still count).
    it->second.count = 0;
    if (it->second.in_flight == 0) failures_.erase(it);
    return;
  }
  ++it->second.count;
}

void LoginVerifier::run() {
  pthread_setname_np(pthread_self(), "opcuad-login");  // what `top -H` and /proc/PID/task/TID/comm show
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    const bool ok = check(job);
    job.password = security::Secret();  // wiped now, not when the job is reused
    finish(job.address, ok);
    checks_done_.fetch_add(1, std::memory_order_relaxed);
    asio::post(*job.reply_to, [done = std::move(job.done), ok, user = std::move(job.user)]() mutable {
      done(ok ? ua::StatusCode(ua::status::Good) : ua::StatusCode(ua::status::BadUserAccessDenied),
           ok ? std::move(user) : std::string());
    });
  }
}

}  // namespace opcuad::services
