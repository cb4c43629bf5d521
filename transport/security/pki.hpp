#pragma once
// Pki: the server's own Application Instance Certificate and the trust lists it checks peers against,
// kept in the folder layout of Part 12 §F.1 (docs/SECURITY.md, "Certificates and trust"):
//
//   <directory>/own/certs/<name>.der        our certificate (DER)
//               own/private/<name>.pem      its RSA key (PKCS#8 PEM, mode 0600)
//               trusted/certs, trusted/crl  trusted applications and CAs, and CRLs
//               issuers/certs, issuers/crl  CAs needed to build chains (not trusted by themselves)
//               rejected/certs              untrusted application certificates, <thumbprint>.der
//               user/trusted/..., user/issuers/...   the same for X509 user identity tokens
//
// Threads: open() runs once, before any other call, on one thread. After it every member may be called
// from any thread at once (the handshake worker pool validates concurrently). The own certificate and
// key never change after open(). The trust lists are an immutable snapshot (TrustStore) swapped under
// store_mutex_; validate() looks at the folders' mtimes at most once per trust_check_interval and
// rebuilds the snapshot when one changed, and reload() (SIGHUP) rebuilds it at once.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transport/security/certificate.hpp"
#include "ua/status_code.hpp"

namespace opcuad::security {

struct PkiSettings {
  std::filesystem::path directory;
  // What a newly generated own certificate says (Part 6 §6.2.2).
  std::string application_uri;
  std::string application_name;  // subject CN
  std::string organization;      // subject O (empty: none)
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  int key_bits = 2048;                      // 2048..4096
  uint32_t lifetime_days = 1825;            // 5 years
  std::string certificate_name = "opcuad";  // file name of own/certs/<name>.der and own/private/<name>.pem
  // Labs only: an untrusted self-signed application certificate that passes every other check is
  // copied to trusted/certs and accepted, with a warning each time.
  bool trust_on_first_use = false;
  // Files kept in rejected/certs; the oldest go first. 0: none are kept.
  uint32_t max_rejected_certificates = 100;
  // How often validate() looks for changes in the trust folders.
  std::chrono::milliseconds trust_check_interval{1000};
  // Where the Pki reports what an operator should see after open() (trust on first use, unreadable
  // files in the trust folders, a failed reload). Called on the validating thread; may be empty.
  std::function<void(std::string_view)> warn;
};

enum class CertificateUse : uint8_t {
  Application,  // a client's Application Instance Certificate: trusted/, issuers/, rejected/
  User,         // an X509 user identity token: user/trusted/, user/issuers/
};

// What the SecurityPolicy and the service expect of a peer certificate (Part 7 policy tables).
struct CertificateRequirements {
  int min_key_bits = 2048;
  int max_key_bits = 4096;
  bool allow_sha1 = false;  // only for the deprecated policies (Basic128Rsa15, Basic256)
  // Non-empty: the subjectAltName URI must equal it (Part 4 §6.1.3 step "URI").
  std::string_view expected_application_uri{};
  CertificateUse use = CertificateUse::Application;
};

struct CertificateVerdict {
  ua::StatusCode status{ua::status::BadCertificateInvalid};
  std::string reason;                    // for the log; never sent to the client
  std::array<uint8_t, 20> thumbprint{};  // of the leaf; zero when it did not parse
  std::string thumbprint_hex;
  std::string application_uri;  // the leaf's subjectAltName URI
  std::string subject;          // the leaf's subject name, one line (for the operator log)
  // The leaf's key when the status is Good, and when the leaf is only untrusted (so that its holder can
  // still prove it has the private key before anything is recorded: `record_after_proof`).
  SharedPkey public_key;
  uint32_t signature_checks = 0;  // signatures verified to build the chain (bounded, pki_validate.cpp)
  // Validation writes nothing. For an untrusted application certificate (a copy in rejected/certs) and
  // for one trusted on first use (a copy in trusted/certs) this records it; the secure channel calls it
  // only once the OpenSecureChannel request's signature has verified with the leaf's key, so a client
  // that merely sends someone's certificate leaves no trace. Returns false when nothing was recorded (the
  // write rate or the first-use cap was reached, or the write failed): a first use is then refused.
  // Empty when there is nothing to record. Thread-safe; the Pki must outlive it.
  std::function<bool()> record_after_proof;
  bool ok() const noexcept { return status.is_good(); }
};

struct PkiOpenResult {
  std::string error;                  // empty: opened
  std::vector<std::string> notices;   // info lines for the log (generated a certificate, ...)
  std::vector<std::string> warnings;  // warn lines (URI mismatch, trust on first use is on, ...)
  bool ok() const noexcept { return error.empty(); }
};

// The folders under a PKI directory.
struct PkiPaths {
  explicit PkiPaths(const std::filesystem::path& root, const std::string& certificate_name = "opcuad");
  std::filesystem::path root, own_certs, own_private, trusted_certs, trusted_crl, issuers_certs, issuers_crl,
      rejected_certs, user_trusted_certs, user_trusted_crl, user_issuers_certs, user_issuers_crl;
  std::filesystem::path own_certificate, own_key;
};

// Creates every folder of the layout (mode 0700); an error text, or empty.
std::string create_layout(const PkiPaths& paths);
// How write_file_atomically writes.
struct AtomicWrite {
  unsigned mode = 0600;
  // The temporary beside the file; empty: "<file>.tmp-<pid>". A leftover of it is removed first, never
  // reused (its mode and contents are unknown).
  std::filesystem::path temporary;
  // fsync the directory after the rename, so that the rename itself survives a crash (a file whose
  // contents must be durable once written, not only whole).
  bool sync_directory = false;
};
// Writes a file through a temporary opened with O_CREAT|O_EXCL and the given mode, fsync'ed, then renamed
// into place, so the file is never visible with wider permissions or half written. An error text, or empty.
std::string write_file_atomically(const std::filesystem::path& file, std::span<const uint8_t> bytes,
                                  const AtomicWrite& how);
std::string write_file_atomically(const std::filesystem::path& file, std::span<const uint8_t> bytes,
                                  unsigned mode);
// A new own certificate and key written to paths.own_certificate / own_key (which must not exist).
std::string generate_own_certificate(const PkiSettings& settings, const PkiPaths& paths);

struct TrustStore;

// Bounds on what unknown clients can make the Pki write (docs/SECURITY.md): certificate files saved to
// rejected/certs or trusted on first use, per minute together, and the first-use certificates trusted/certs
// may hold before first use stops trusting more.
inline constexpr uint32_t kMaxCertificateWritesPerMinute = 20;
inline constexpr uint32_t kMaxFirstUseTrusted = 1000;

class Pki {
 public:
  Pki();
  ~Pki();
  Pki(const Pki&) = delete;
  Pki& operator=(const Pki&) = delete;

  // Creates the layout, loads or (first start) generates the own certificate, loads the trust lists.
  PkiOpenResult open(const PkiSettings& settings);

  const std::vector<uint8_t>& certificate_der() const noexcept { return own_der_; }
  X509* certificate() const noexcept { return own_cert_.get(); }
  // Owned by the Pki; usable concurrently with one EVP_PKEY_CTX per operation.
  EVP_PKEY* private_key() const noexcept { return own_key_.get(); }
  const std::array<uint8_t, 20>& thumbprint() const noexcept { return own_thumbprint_; }
  const std::string& thumbprint_hex() const noexcept { return own_info_.thumbprint_hex; }
  const CertificateInfo& info() const noexcept { return own_info_; }  // subject, validity, SAN
  const PkiPaths& paths() const noexcept { return *paths_; }

  // Part 4 §6.1.3: validates a peer's chain (concatenated DER, leaf first) against the trust lists.
  CertificateVerdict validate(std::span<const uint8_t> der_chain, const CertificateRequirements& req);

  // Rebuilds the trust lists now (SIGHUP). Returns a line for the log.
  std::string reload();

 private:
  std::shared_ptr<const TrustStore> current_store();
  void maybe_reload();
  std::shared_ptr<const TrustStore> rebuild();
  bool save_rejected(std::span<const uint8_t> der, const std::string& thumbprint_hex);
  bool trust_first_use(std::span<const uint8_t> der, const std::string& thumbprint_hex,
                       const std::string& subject);
  // One more certificate file written (rejected/ or first use) within the write rate; rejected_mutex_ held.
  bool take_write_slot(std::string_view what);
  void warn(std::string_view message) const;

  PkiSettings settings_;
  std::unique_ptr<PkiPaths> paths_;
  X509Ptr own_cert_;
  EvpPkeyPtr own_key_;
  std::vector<uint8_t> own_der_;
  std::array<uint8_t, 20> own_thumbprint_{};
  CertificateInfo own_info_;

  std::mutex store_mutex_;
  std::shared_ptr<const TrustStore> store_;  // GUARDED_BY(store_mutex_)
  std::mutex reload_mutex_;                  // one rebuild at a time
  std::atomic<int64_t> last_check_ns_{0};    // steady_clock; 0 forces a check
  std::mutex rejected_mutex_;                // rejected/certs and first-use writes, trimming, the rate below
  std::chrono::steady_clock::time_point write_window_{};  // GUARDED_BY(rejected_mutex_)
  uint32_t writes_in_window_ = 0;                         // GUARDED_BY(rejected_mutex_)
  uint32_t refused_in_window_ = 0;                        // GUARDED_BY(rejected_mutex_)
};

}  // namespace opcuad::security
