// Pki: the folder layout, the own certificate, the trust-list snapshot and the rejected folder.
// Validation itself is in pki_validate.cpp.
#include "transport/security/pki.hpp"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "transport/security/pki_store.hpp"

namespace opcuad::security {

namespace fs = std::filesystem;

PkiPaths::PkiPaths(const fs::path& r, const std::string& certificate_name)
    : root(r),
      own_certs(r / "own" / "certs"),
      own_private(r / "own" / "private"),
      trusted_certs(r / "trusted" / "certs"),
      trusted_crl(r / "trusted" / "crl"),
      issuers_certs(r / "issuers" / "certs"),
      issuers_crl(r / "issuers" / "crl"),
      rejected_certs(r / "rejected" / "certs"),
      user_trusted_certs(r / "user" / "trusted" / "certs"),
      user_trusted_crl(r / "user" / "trusted" / "crl"),
      user_issuers_certs(r / "user" / "issuers" / "certs"),
      user_issuers_crl(r / "user" / "issuers" / "crl"),
      own_certificate(own_certs / (certificate_name + ".der")),
      own_key(own_private / (certificate_name + ".pem")) {}

namespace {

std::string errno_text(const std::string& what, const fs::path& p) {
  return what + " " + p.string() + ": " + std::strerror(errno);
}

// mkdir -p with mode 0700 for every folder it creates; existing folders keep their mode.
std::string make_dirs(const fs::path& dir) {
  fs::path so_far;
  for (const auto& part : dir) {
    so_far /= part;
    if (so_far.empty() || so_far == so_far.root_path()) continue;
    if (::mkdir(so_far.c_str(), 0700) != 0 && errno != EEXIST) return errno_text("cannot create", so_far);
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return "not a directory: " + dir.string();
  return {};
}

// The PEM text of a private key. The BIO is a secure-memory one, whose buffer OpenSSL wipes when it is
// freed; the caller wipes the copy (OPENSSL_cleanse) once it is written.
std::vector<uint8_t> pem_private_key(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_secmem());
  if (!bio) return {};
  std::vector<uint8_t> out;
  if (PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1) {
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0) out.assign(data, data + n);
  }
  BIO_free(bio);
  return out;
}

EvpPkeyPtr read_private_key(const fs::path& file) {
  BIO* bio = BIO_new_file(file.c_str(), "rb");
  if (!bio) return {};
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return key;
}

}  // namespace

std::string create_layout(const PkiPaths& p) {
  for (const fs::path* dir : {&p.own_certs, &p.own_private, &p.trusted_certs, &p.trusted_crl,
                              &p.issuers_certs, &p.issuers_crl, &p.rejected_certs, &p.user_trusted_certs,
                              &p.user_trusted_crl, &p.user_issuers_certs, &p.user_issuers_crl}) {
    if (auto e = make_dirs(*dir); !e.empty()) return e;
  }
  return {};
}

std::string write_file_atomically(const fs::path& file, std::span<const uint8_t> bytes, unsigned mode) {
  return write_file_atomically(file, bytes, AtomicWrite{mode, {}, false});
}

std::string write_file_atomically(const fs::path& file, std::span<const uint8_t> bytes,
                                  const AtomicWrite& how) {
  const fs::path tmp =
      how.temporary.empty() ? fs::path(file.string() + ".tmp-" + std::to_string(::getpid())) : how.temporary;
  const unsigned mode = how.mode;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0 && errno == EEXIST) {
    // Left over by a process of ours that died while writing: never reuse it, its mode is unknown.
    ::unlink(tmp.c_str());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  }
  if (fd < 0) return errno_text("cannot create", tmp);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string e = errno_text("cannot write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return e;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return errno_text("cannot write", tmp);
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    std::string e = errno_text("cannot rename to", file);
    ::unlink(tmp.c_str());
    return e;
  }
  if (how.sync_directory) {
    // The rename is durable once the directory is (a crash before this may bring either file back, whole).
    const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return errno_text("cannot open", dir);
    const bool synced = ::fsync(dfd) == 0;
    ::close(dfd);
    if (!synced) return errno_text("cannot sync", dir);
  }
  return {};
}

std::string generate_own_certificate(const PkiSettings& s, const PkiPaths& paths) {
  OwnCertificateRequest req;
  req.application_uri = s.application_uri;
  req.common_name = s.application_name;
  req.organization = s.organization;
  req.dns_names = s.dns_names;
  req.ip_addresses = s.ip_addresses;
  req.key_bits = s.key_bits;
  req.lifetime_days = s.lifetime_days;
  GeneratedCertificate g = make_application_certificate(req);
  if (!g.error.empty()) return g.error;
  auto key_pem = pem_private_key(g.key.get());
  const auto der = to_der(g.cert.get());
  std::string error;
  if (key_pem.empty() || der.empty()) {
    error = "cannot encode the new certificate or key";
  } else {
    // The key first: a certificate without its key would be unusable at the next start.
    error = write_file_atomically(paths.own_key, key_pem, 0600);
    if (error.empty()) error = write_file_atomically(paths.own_certificate, der, 0644);
  }
  OPENSSL_cleanse(key_pem.data(), key_pem.size());
  return error;
}

Pki::Pki() = default;
Pki::~Pki() = default;

PkiOpenResult Pki::open(const PkiSettings& settings) {
  PkiOpenResult r;
  settings_ = settings;
  paths_ = std::make_unique<PkiPaths>(settings.directory, settings.certificate_name);
  if (settings.directory.empty()) {
    r.error = "no PKI directory";
    return r;
  }
  if (auto e = create_layout(*paths_); !e.empty()) {
    r.error = e;
    return r;
  }
  std::error_code ec;
  const bool have_cert = fs::exists(paths_->own_certificate, ec);
  const bool have_key = fs::exists(paths_->own_key, ec);
  if (!have_cert && !have_key) {
    if (auto e = generate_own_certificate(settings, *paths_); !e.empty()) {
      r.error = "cannot create the own certificate: " + e;
      return r;
    }
    r.notices.push_back("generated a new " + std::to_string(settings.key_bits) +
                        "-bit application instance certificate " + paths_->own_certificate.string());
  } else if (!have_cert || !have_key) {
    // Never generate over a lone key or certificate: the operator may have put it there on purpose.
    r.error = "found " + (have_cert ? paths_->own_certificate : paths_->own_key).string() + " but not " +
              (have_cert ? paths_->own_key : paths_->own_certificate).string() +
              ": restore it, or move the other aside (opcuad pki regenerate)";
    return r;
  }
  own_cert_ = read_certificate_file(paths_->own_certificate);
  own_key_ = read_private_key(paths_->own_key);
  if (!own_cert_) {
    r.error = "cannot read the own certificate " + paths_->own_certificate.string();
    return r;
  }
  if (!own_key_) {
    r.error = "cannot read the own private key " + paths_->own_key.string();
    return r;
  }
  if (X509_check_private_key(own_cert_.get(), own_key_.get()) != 1) {
    r.error = "the own private key " + paths_->own_key.string() + " does not belong to " +
              paths_->own_certificate.string();
    return r;
  }
  struct stat st {};
  if (::stat(paths_->own_key.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    r.warnings.push_back("the private key " + paths_->own_key.string() +
                         " is readable by group or others: chmod 600 it");
  }
  own_der_ = to_der(own_cert_.get());
  own_thumbprint_ = security::thumbprint(own_cert_.get());
  own_info_ = describe(own_cert_.get());
  if (own_info_.application_uri != settings.application_uri) {
    r.warnings.push_back("the own certificate's subjectAltName URI \"" + own_info_.application_uri +
                         "\" is not the configured application_uri \"" + settings.application_uri +
                         "\": clients will refuse it (Part 4 §6.1.3); run `opcuad pki regenerate`");
  }
  if (std::string w = expiry_warning(own_info_.not_after, std::chrono::system_clock::now()); !w.empty()) {
    r.warnings.push_back(std::move(w));
  }
  if (settings.trust_on_first_use) {
    r.warnings.push_back(
        "security.trust_on_first_use is on: any self-signed client certificate is trusted at "
        "its first connection; for labs only");
  }
  const auto store = rebuild();
  for (const auto& p : store->problems) r.warnings.push_back(p);
  return r;
}

std::shared_ptr<const TrustStore> Pki::current_store() {
  std::lock_guard lock(store_mutex_);
  return store_;
}

std::shared_ptr<const TrustStore> Pki::rebuild() {
  std::lock_guard rebuild_lock(reload_mutex_);
  auto store = load_trust_store(*paths_);
  std::lock_guard lock(store_mutex_);
  store_ = store;
  return store;
}

void Pki::maybe_reload() {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_check_ns_.load(std::memory_order_relaxed);
  const int64_t interval =
      std::chrono::duration_cast<std::chrono::nanoseconds>(settings_.trust_check_interval).count();
  if (last != 0 && now - last < interval) return;
  // One thread looks; the others go on with the current snapshot.
  if (!last_check_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed)) return;
  const auto store = current_store();
  if (store && !is_racy(*store) && same_stamps(store->stamps, folder_stamps(*paths_))) return;
  const auto fresh = rebuild();
  for (const auto& p : fresh->problems) warn(p);
}

std::string Pki::reload() {
  const auto store = rebuild();
  last_check_ns_.store(0, std::memory_order_relaxed);
  for (const auto& p : store->problems) warn(p);
  return "trust lists reloaded: " + std::to_string(store->application.trusted.size()) + " trusted, " +
         std::to_string(store->application.issuers.size()) + " issuer(s), " +
         std::to_string(store->application.crls.size()) +
         " CRL(s); user: " + std::to_string(store->user.trusted.size()) + " trusted, " +
         std::to_string(store->user.issuers.size()) + " issuer(s), " +
         std::to_string(store->user.crls.size()) + " CRL(s)";
}

void Pki::warn(std::string_view message) const {
  if (settings_.warn) settings_.warn(message);
}

bool Pki::take_write_slot(std::string_view what) {
  const auto now = std::chrono::steady_clock::now();
  if (now - write_window_ >= std::chrono::minutes(1)) {
    if (refused_in_window_ > 0) {
      warn(std::to_string(refused_in_window_) +
           " certificate file(s) not written in the last minute: more than " +
           std::to_string(kMaxCertificateWritesPerMinute) + " per minute");
    }
    write_window_ = now;
    writes_in_window_ = 0;
    refused_in_window_ = 0;
  }
  if (writes_in_window_ < kMaxCertificateWritesPerMinute) {
    ++writes_in_window_;
    return true;
  }
  // Said once per minute; the count follows when the next minute begins.
  if (refused_in_window_++ == 0) {
    warn(std::string(what) + ": not written, more than " + std::to_string(kMaxCertificateWritesPerMinute) +
         " certificate files per minute (the count of those left out follows)");
  }
  return false;
}

bool Pki::save_rejected(std::span<const uint8_t> der, const std::string& thumbprint_hex) {
  if (settings_.max_rejected_certificates == 0) return false;
  std::lock_guard lock(rejected_mutex_);
  const fs::path file = paths_->rejected_certs / (thumbprint_hex + ".der");
  std::error_code ec;
  if (fs::exists(file, ec)) {
    // Seen again: it becomes the newest, so trimming keeps the certificates clients still present.
    fs::last_write_time(file, fs::file_time_type::clock::now(), ec);
    return true;
  }
  if (!take_write_slot("a rejected certificate")) return false;
  if (auto e = write_file_atomically(file, der, 0640); !e.empty()) {
    warn("cannot save a rejected certificate: " + e);
    return false;
  }
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  for (const auto& entry : fs::directory_iterator(paths_->rejected_certs, ec)) {
    if (entry.is_regular_file(ec)) files.emplace_back(entry.last_write_time(ec), entry.path());
  }
  if (files.size() <= settings_.max_rejected_certificates) return true;
  std::sort(files.begin(), files.end());
  const size_t excess = files.size() - settings_.max_rejected_certificates;
  for (size_t i = 0; i < excess; ++i) fs::remove(files[i].second, ec);
  return true;
}

bool Pki::trust_first_use(std::span<const uint8_t> der, const std::string& thumbprint_hex,
                          const std::string& subject) {
  std::lock_guard lock(rejected_mutex_);
  const fs::path file = paths_->trusted_certs / (thumbprint_hex + ".der");
  std::error_code ec;
  if (fs::exists(file, ec)) return true;  // two first uses at once: the other one wrote it
  size_t present = 0;
  for (const auto& entry : fs::directory_iterator(paths_->trusted_certs, ec)) {
    const std::string name = entry.path().filename().string();
    // As the trust list counts them (pki_store.cpp): no hidden files or temporaries.
    if (!name.empty() && name[0] != '.' && name.find(".tmp-") == std::string::npos &&
        entry.is_regular_file(ec)) {
      ++present;
    }
  }
  if (present >= kMaxFirstUseTrusted) {
    warn("trust on first use: not trusting " + thumbprint_hex + " (" + subject + "), trusted/certs holds " +
         std::to_string(present) + " files, at most " + std::to_string(kMaxFirstUseTrusted) +
         " for first use to add one");
    return false;
  }
  if (!take_write_slot("trust on first use of " + thumbprint_hex)) return false;
  if (auto e = write_file_atomically(file, der, 0640); !e.empty()) {
    warn("trust on first use: cannot save the certificate: " + e);
    return false;
  }
  warn("trust on first use: trusted the self-signed certificate " + thumbprint_hex + " (" + subject +
       ") as " + file.string());
  last_check_ns_.store(0, std::memory_order_relaxed);  // the next validation sees it in trusted/
  return true;
}

}  // namespace opcuad::security
