#include "services/login_verifier.hpp"

#include <openssl/crypto.h>

#include <algorithm>

#include <asio/post.hpp>

#include "config/password.hpp"

namespace opcuad::services {

namespace {

void wipe(std::string& s) noexcept {
  if (!s.empty()) OPENSSL_cleanse(s.data(), s.size());
  s.clear();
}

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
    for (auto& job : queue_) wipe(job.password);
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

size_t LoginVerifier::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

bool LoginVerifier::locked_out(const std::string& address, std::chrono::steady_clock::time_point now) {
  auto it = failures_.find(address);
  if (it == failures_.end()) return false;
  if (now - it->second.first > limits_.failure_window) {
    failures_.erase(it);
    return false;
  }
  return it->second.count >= limits_.max_failures;
}

void LoginVerifier::submit(std::string address, std::string user, std::string password, asio::io_context& reply_to,
                           Done done) {
  ua::StatusCode refused = ua::status::Good;
  {
    std::lock_guard lock(mutex_);
    if (limits_.max_failures && locked_out(address, std::chrono::steady_clock::now())) {
      refused = ua::status::BadUserAccessDenied;
    } else if (queue_.size() >= limits_.max_queued || stopping_) {
      refused = ua::status::BadServerTooBusy;
    } else {
      queue_.push_back(Job{std::move(address), std::move(user), std::move(password), &reply_to, std::move(done)});
    }
  }
  if (refused.is_good()) {
    wake_.notify_one();
    return;
  }
  wipe(password);
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
  const bool ok = config::verify_password(job.password, found ? found->password_hash : dummy_hash_);
  return ok && found;
}

void LoginVerifier::record(const std::string& address, bool ok) {
  std::lock_guard lock(mutex_);
  if (ok) {
    failures_.erase(address);
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  auto it = failures_.find(address);
  if (it == failures_.end() || now - it->second.first > limits_.failure_window) {
    if (it == failures_.end() && failures_.size() >= limits_.max_tracked_addresses) {
      // Forget the oldest entry: the table stays bounded however many addresses fail.
      auto oldest = failures_.begin();
      for (auto i = failures_.begin(); i != failures_.end(); ++i) {
        if (i->second.first < oldest->second.first) oldest = i;
      }
      failures_.erase(oldest);
    }
    failures_[address] = Failures{1, now};
    return;
  }
  ++it->second.count;
}

void LoginVerifier::run() {
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
    wipe(job.password);
    record(job.address, ok);
    checks_done_.fetch_add(1, std::memory_order_relaxed);
    asio::post(*job.reply_to, [done = std::move(job.done), ok, user = std::move(job.user)]() mutable {
      done(ok ? ua::StatusCode(ua::status::Good) : ua::StatusCode(ua::status::BadUserAccessDenied),
           ok ? std::move(user) : std::string());
    });
  }
}

}  // namespace opcuad::services
