#pragma once
// User passwords are configured only as salted hashes: PBKDF2-HMAC-SHA256 (RFC 8018 §5.2) in the form
//
//   pbkdf2-sha256$<iterations>$<salt, base64>$<derived key, base64>
//
// `opcuad --hash-password` (daemon) prints one; verify_password() checks a login against it in constant
// time. Neither function logs anything.

#include <string>
#include <string_view>

namespace opcuad::config {

// A new hash with a random 16-byte salt. Empty on an OpenSSL failure.
std::string hash_password(std::string_view password, unsigned iterations = 600000);
// Same, with a given salt (tests).
std::string hash_password_with_salt(std::string_view password, std::string_view salt, unsigned iterations);
bool verify_password(std::string_view password, std::string_view encoded);
// Well-formed, without checking any password.
bool is_password_hash(std::string_view encoded);

}  // namespace opcuad::config
