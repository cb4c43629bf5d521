#pragma once
// The trust lists as one immutable snapshot (inside the security library only; see pki.hpp).

#include <sys/stat.h>

#include <array>
#include <string>
#include <vector>

#include "transport/security/certificate.hpp"
#include "transport/security/pki.hpp"

namespace opcuad::security {

struct TrustList {
  std::vector<X509Ptr> trusted;  // trusted/certs: applications and CAs trusted themselves
  std::vector<X509Ptr> issuers;  // issuers/certs: CAs for building chains only
  std::vector<X509CrlPtr> crls;  // trusted/crl and issuers/crl
};

// The eight trust folders whose modification times say whether a snapshot is stale.
constexpr size_t kTrustFolderCount = 8;
using FolderStamps = std::array<struct timespec, kTrustFolderCount>;

struct TrustStore {
  TrustList application;
  TrustList user;
  FolderStamps stamps{};
  // When the folders were read. A folder modified within a clock tick of this may have changed again
  // without its mtime moving (timestamps are as coarse as the kernel's tick), so such a snapshot is
  // rebuilt at the next check even if the stamps agree.
  struct timespec loaded_at {};
  std::vector<std::string> problems;  // files that are not certificates or CRLs
};

FolderStamps folder_stamps(const PkiPaths& paths);
bool same_stamps(const FolderStamps& a, const FolderStamps& b);
bool is_racy(const TrustStore& store);
std::shared_ptr<const TrustStore> load_trust_store(const PkiPaths& paths);

}  // namespace opcuad::security
