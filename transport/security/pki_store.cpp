// Loading the trust folders into one immutable TrustStore.
#include "transport/security/pki_store.hpp"

#include <time.h>

#include <algorithm>

namespace opcuad::security {

namespace fs = std::filesystem;

namespace {

// Bounds on what one folder may hold, so that a folder an attacker could fill (it should never be
// writable by one) cannot make every reload unbounded.
constexpr size_t kMaxFilesPerFolder = 10000;

std::vector<fs::path> folder_files(const fs::path& dir, std::vector<std::string>& problems) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // Temporaries of write_file_atomically() and hidden files are not part of the list.
    if (name.empty() || name[0] == '.' || name.find(".tmp-") != std::string::npos) continue;
    if (!entry.is_regular_file(ec)) continue;
    if (files.size() == kMaxFilesPerFolder) {
      problems.push_back(dir.string() + ": more than " + std::to_string(kMaxFilesPerFolder) +
                         " files; the rest ignored");
      break;
    }
    files.push_back(entry.path());
  }
  if (ec) problems.push_back("cannot read " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

void load_certs(const fs::path& dir, std::vector<X509Ptr>& into, std::vector<std::string>& problems) {
  for (const auto& f : folder_files(dir, problems)) {
    if (X509Ptr c = read_certificate_file(f)) {
      into.push_back(std::move(c));
    } else {
      problems.push_back(f.string() + ": not a DER or PEM certificate; ignored");
    }
  }
}

void load_crls(const fs::path& dir, std::vector<X509CrlPtr>& into, std::vector<std::string>& problems) {
  for (const auto& f : folder_files(dir, problems)) {
    if (X509CrlPtr c = read_crl_file(f)) {
      into.push_back(std::move(c));
    } else {
      problems.push_back(f.string() + ": not a DER or PEM CRL; ignored");
    }
  }
}

}  // namespace

FolderStamps folder_stamps(const PkiPaths& p) {
  FolderStamps s{};
  const fs::path* dirs[kTrustFolderCount] = {
      &p.trusted_certs,      &p.trusted_crl,      &p.issuers_certs,      &p.issuers_crl,
      &p.user_trusted_certs, &p.user_trusted_crl, &p.user_issuers_certs, &p.user_issuers_crl};
  for (size_t i = 0; i < kTrustFolderCount; ++i) {
    struct stat st {};
    if (::stat(dirs[i]->c_str(), &st) == 0) s[i] = st.st_mtim;
  }
  return s;
}

bool same_stamps(const FolderStamps& a, const FolderStamps& b) {
  for (size_t i = 0; i < kTrustFolderCount; ++i) {
    if (a[i].tv_sec != b[i].tv_sec || a[i].tv_nsec != b[i].tv_nsec) return false;
  }
  return true;
}

bool is_racy(const TrustStore& store) {
  // Two coarse ticks (the kernel's file timestamps advance by up to 10 ms) before the load.
  constexpr int64_t kMargin = 20'000'000;
  const int64_t loaded = int64_t{store.loaded_at.tv_sec} * 1'000'000'000 + store.loaded_at.tv_nsec;
  for (const auto& s : store.stamps) {
    if (int64_t{s.tv_sec} * 1'000'000'000 + s.tv_nsec >= loaded - kMargin) return true;
  }
  return false;
}

std::shared_ptr<const TrustStore> load_trust_store(const PkiPaths& p) {
  auto store = std::make_shared<TrustStore>();
  // The stamps first: a change made while the files are read shows at the next check.
  ::clock_gettime(CLOCK_REALTIME, &store->loaded_at);
  store->stamps = folder_stamps(p);
  auto& problems = store->problems;
  load_certs(p.trusted_certs, store->application.trusted, problems);
  load_certs(p.issuers_certs, store->application.issuers, problems);
  load_crls(p.trusted_crl, store->application.crls, problems);
  load_crls(p.issuers_crl, store->application.crls, problems);
  load_certs(p.user_trusted_certs, store->user.trusted, problems);
  load_certs(p.user_issuers_certs, store->user.issuers, problems);
  load_crls(p.user_trusted_crl, store->user.crls, problems);
  load_crls(p.user_issuers_crl, store->user.crls, problems);
  return store;
}

}  // namespace opcuad::security
