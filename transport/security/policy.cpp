#include "transport/security/policy.hpp"

#include <array>

namespace opcuad::security {

namespace {

using AS = AsymmetricSignature;
using AE = AsymmetricEncryption;

constexpr std::string_view kRsaSha1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
constexpr std::string_view kRsaSha256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
constexpr std::string_view kRsaPssSha256 = "http://opcfoundation.org/UA/security/rsa-pss-sha2-256";
constexpr std::string_view kRsa15 = "http://www.w3.org/2001/04/xmlenc#rsa-1_5";
constexpr std::string_view kRsaOaep = "http://www.w3.org/2001/04/xmlenc#rsa-oaep";
constexpr std::string_view kRsaOaepSha256 = "http://opcfoundation.org/UA/security/rsa-oaep-sha2-256";

// Part 7: each policy's algorithm suite. Security levels order the policies by strength (None lowest).
constexpr std::array<Policy, 6> kPolicies{{
    {PolicyId::None,
     "http://opcfoundation.org/UA/SecurityPolicy#None",
     "None",
     false,
     AS::None,
     AE::None,
     {},
     {},
     Digest::None,
     Digest::None,
     0,
     0,
     0,
     0,
     0,
     0,
     0,
     true,
     0},
    {PolicyId::Basic128Rsa15, "http://opcfoundation.org/UA/SecurityPolicy#Basic128Rsa15", "Basic128Rsa15",
     true, AS::RsaPkcs15Sha1, AE::RsaPkcs15, kRsaSha1, kRsa15, Digest::Sha1, Digest::Sha1, 16, 20, 16, 16, 16,
     1024, 2048, true, 1},
    {PolicyId::Basic256, "http://opcfoundation.org/UA/SecurityPolicy#Basic256", "Basic256", true,
     AS::RsaPkcs15Sha1, AE::RsaOaepSha1, kRsaSha1, kRsaOaep, Digest::Sha1, Digest::Sha1, 24, 20, 32, 16, 32,
     1024, 2048, true, 2},
    {PolicyId::Basic256Sha256, "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256", "Basic256Sha256",
     false, AS::RsaPkcs15Sha256, AE::RsaOaepSha1, kRsaSha256, kRsaOaep, Digest::Sha256, Digest::Sha256, 32,
     32, 32, 16, 32, 2048, 4096, false, 3},
    {PolicyId::Aes128_Sha256_RsaOaep, "http://opcfoundation.org/UA/SecurityPolicy#Aes128_Sha256_RsaOaep",
     "Aes128_Sha256_RsaOaep", false, AS::RsaPkcs15Sha256, AE::RsaOaepSha1, kRsaSha256, kRsaOaep,
     Digest::Sha256, Digest::Sha256, 32, 32, 16, 16, 32, 2048, 4096, false, 4},
    {PolicyId::Aes256_Sha256_RsaPss, "http://opcfoundation.org/UA/SecurityPolicy#Aes256_Sha256_RsaPss",
     "Aes256_Sha256_RsaPss", false, AS::RsaPssSha256, AE::RsaOaepSha256, kRsaPssSha256, kRsaOaepSha256,
     Digest::Sha256, Digest::Sha256, 32, 32, 32, 16, 32, 2048, 4096, false, 5},
}};

}  // namespace

const Policy* find_policy(std::string_view uri_or_name) noexcept {
  for (const Policy& p : kPolicies) {
    if (p.uri == uri_or_name || p.name == uri_or_name) return &p;
  }
  return nullptr;
}

const Policy& policy(PolicyId id) noexcept {
  return kPolicies[static_cast<size_t>(id)];
}

std::span<const Policy> all_policies() noexcept {
  return kPolicies;
}

}  // namespace opcuad::security
