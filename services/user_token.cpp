#include "services/user_token.hpp"

#include <openssl/crypto.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <vector>

namespace opcuad::services {

namespace status = ua::status;

ua::StatusCode decrypt_legacy_secret(const security::Policy& policy, EVP_PKEY* private_key,
                                     std::span<const uint8_t> ciphertext,
                                     std::span<const uint8_t> server_nonce, security::Secret& password,
                                     size_t* rsa_blocks) {
  password = security::Secret();
  size_t blocks_done = 0;
  if (rsa_blocks == nullptr) rsa_blocks = &blocks_done;
  *rsa_blocks = 0;
  const size_t block = security::rsa_key_bytes(private_key);
  // Whole RSA blocks only, and no more than a secret of the largest size would need.
  if (block == 0 || ciphertext.empty() || ciphertext.size() % block != 0 ||
      ciphertext.size() / block > (kMaxSecretBytes + 4 + 128) / (block / 2) + 1) {
    return status::BadIdentityTokenInvalid;
  }
  // The first block holds the length prefix: it says how much plaintext follows, so only the blocks that
  // hold it are decrypted, and a token whose length is out of bounds or that brings more blocks than its
  // length needs costs one RSA decryption.
  std::vector<uint8_t> plain;
  plain.reserve(ciphertext.size());
  auto wiped = [&plain](ua::StatusCode s) {
    OPENSSL_cleanse(plain.data(), plain.size());
    return s;
  };
  ++*rsa_blocks;
  if (!security::asymmetric_decrypt(policy, private_key, ciphertext.first(block), plain) ||
      plain.size() < 4) {
    return wiped(status::BadIdentityTokenInvalid);
  }
  const uint32_t length =
      uint32_t{plain[0]} | uint32_t{plain[1]} << 8 | uint32_t{plain[2]} << 16 | uint32_t{plain[3]} << 24;
  if (length < server_nonce.size() || length - server_nonce.size() > kMaxSecretBytes) {
    return wiped(status::BadIdentityTokenInvalid);
  }
  size_t used = block;
  while (plain.size() < size_t{4} + length && used < ciphertext.size()) {
    ++*rsa_blocks;
    if (!security::asymmetric_decrypt(policy, private_key, ciphertext.subspan(used, block), plain)) {
      return wiped(status::BadIdentityTokenInvalid);
    }
    used += block;
  }
  ua::StatusCode result = status::Good;
  {
    // The length covers the password and the nonce, must fit what was decrypted, and no block may follow
    // the one that completes it.
    if (length > plain.size() - 4 || used != ciphertext.size()) {
      result = status::BadIdentityTokenInvalid;
    } else {
      const size_t secret = length - server_nonce.size();
      // Part 4 §7.41.2.2: padding after the secret, if any, is all zeros.
      for (size_t i = 4 + length; i < plain.size(); ++i) {
        if (plain[i] != 0) result = status::BadIdentityTokenInvalid;
      }
      if (result.is_good() &&
          (server_nonce.empty() ||
           CRYPTO_memcmp(plain.data() + 4 + secret, server_nonce.data(), server_nonce.size()) != 0)) {
        result = status::BadIdentityTokenRejected;
      }
      if (result.is_good())
        password.assign(std::string_view(reinterpret_cast<const char*>(plain.data() + 4), secret));
    }
  }
  OPENSSL_cleanse(plain.data(), plain.size());
  return result;
}

namespace {
struct X509Free {
  void operator()(X509* x) const noexcept { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

X509Ptr parse(std::span<const uint8_t> der) {
  const unsigned char* p = der.data();
  return X509Ptr(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
}
}  // namespace

std::optional<std::string> certificate_application_uri(std::span<const uint8_t> der) {
  X509Ptr x = parse(der);
  if (!x) return std::nullopt;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(x.get(), NID_subject_alt_name, nullptr, nullptr));
  if (!names) return std::nullopt;
  std::optional<std::string> uri;
  for (int i = 0; i < sk_GENERAL_NAME_num(names) && !uri; ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != GEN_URI) continue;
    const ASN1_IA5STRING* s = name->d.uniformResourceIdentifier;
    uri = std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                      static_cast<size_t>(ASN1_STRING_length(s)));
  }
  GENERAL_NAMES_free(names);
  return uri;
}

}  // namespace opcuad::services
