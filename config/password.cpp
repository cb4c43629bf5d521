#include "config/password.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <charconv>
#include <optional>
#include <vector>

#include "ua/base64.hpp"

namespace opcuad::config {

namespace {
constexpr std::string_view kPrefix = "pbkdf2-sha256$";
constexpr size_t kKeyBytes = 32;

struct Parts {
  unsigned iterations = 0;
  std::string salt, key;
};

std::optional<Parts> split(std::string_view s) {
  if (!s.starts_with(kPrefix)) return std::nullopt;
  s.remove_prefix(kPrefix.size());
  const auto a = s.find('$');
  if (a == std::string_view::npos) return std::nullopt;
  const auto b = s.find('$', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  Parts p;
  auto [end, ec] = std::from_chars(s.data(), s.data() + a, p.iterations);
  if (ec != std::errc() || end != s.data() + a || p.iterations == 0) return std::nullopt;
  auto salt = ua::base64_decode(s.substr(a + 1, b - a - 1));
  auto key = ua::base64_decode(s.substr(b + 1));
  if (!salt || !key || salt->empty() || key->size() != kKeyBytes) return std::nullopt;
  p.salt = std::move(*salt);
  p.key = std::move(*key);
  return p;
}

bool derive(std::string_view password, std::string_view salt, unsigned iterations, unsigned char* out) {
  return PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                           reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()),
                           static_cast<int>(iterations), EVP_sha256(), kKeyBytes, out) == 1;
}
}  // namespace

std::string hash_password_with_salt(std::string_view password, std::string_view salt, unsigned iterations) {
  unsigned char key[kKeyBytes];
  if (iterations == 0 || !derive(password, salt, iterations, key)) return {};
  std::string out(kPrefix);
  out += std::to_string(iterations);
  out += '$';
  out += ua::base64_encode(salt);
  out += '$';
  out += ua::base64_encode(std::string_view(reinterpret_cast<const char*>(key), kKeyBytes));
  OPENSSL_cleanse(key, sizeof key);
  return out;
}

std::string hash_password(std::string_view password, unsigned iterations) {
  unsigned char salt[16];
  if (RAND_bytes(salt, sizeof salt) != 1) return {};
  return hash_password_with_salt(password, std::string_view(reinterpret_cast<const char*>(salt), sizeof salt),
                                 iterations);
}

bool verify_password(std::string_view password, std::string_view encoded) {
  auto p = split(encoded);
  if (!p) return false;
  unsigned char key[kKeyBytes];
  if (!derive(password, p->salt, p->iterations, key)) return false;
  const bool same = CRYPTO_memcmp(key, p->key.data(), kKeyBytes) == 0;
  OPENSSL_cleanse(key, sizeof key);
  return same;
}

bool is_password_hash(std::string_view encoded) {
  return split(encoded).has_value();
}

}  // namespace opcuad::config
