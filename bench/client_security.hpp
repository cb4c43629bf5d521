#pragma once
// Signed and encrypted channels for the load harness's clients (`--security POLICY:MODE`): the client's
// Application Instance Certificate, the server certificate a channel is opened for, and the per-channel
// symmetric sealing of MSG and CLO chunks (Part 6 §6.7.2), on the primitives of transport/security.
//
// The symmetric work per chunk (HMAC-SHA256, AES-CBC in place, padding) reuses each direction's OpenSSL
// contexts for the channel's life, as the server does, so the client's cost per request stays small next
// to the server's; the RSA work happens once per channel (OPN, CreateSession, ActivateSession).

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transport/security/crypto.hpp"
#include "transport/security/policy.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::bench {

// The bench's ApplicationUri: CreateSession's ApplicationDescription and its certificate's SAN URI must
// agree (Part 4 §5.6.2).
inline constexpr std::string_view kBenchApplicationUri = "urn:opcuad:bench";
// The file name the bench's certificate gets in a server's trusted/certs.
inline constexpr std::string_view kBenchCertificateName = "opcuad-bench.der";

// What `--security` asked for: a policy and mode, and the client certificate made for the run.
struct SecuritySettings {
  const security::Policy* policy = nullptr;  // nullptr: SecurityPolicy None
  ua::MessageSecurityMode mode = ua::MessageSecurityMode::None;
  std::vector<uint8_t> certificate;  // DER
  security::Pkey private_key;
  std::filesystem::path directory;      // where the certificate (and key) were written
  std::string server_certificate_file;  // --server-certificate: for --url targets

  bool secured() const noexcept { return policy != nullptr; }
  bool encrypting() const noexcept { return mode == ua::MessageSecurityMode::SignAndEncrypt; }
  std::string name() const;  // "None", "Basic256Sha256:SignAndEncrypt"
};

// "None", "POLICY:MODE" (POLICY a name or URI of transport/security/policy.hpp, MODE Sign or
// SignAndEncrypt); nullopt with a reason otherwise.
std::optional<SecuritySettings> parse_security(std::string_view text, std::string& error);

// The client certificate of the run: loaded from `dir` when it holds opcuad-bench.der and
// opcuad-bench.pem (so that a server can trust it once), else created there: RSA 2048, SHA-256, SAN URI
// kBenchApplicationUri, the key usages of Part 6 §6.2.2; the key is written as PEM with mode 0600.
// False with a reason.
bool load_or_make_client_certificate(SecuritySettings& s, const std::filesystem::path& dir,
                                     std::string& error);

// The security variants of this run (`--security A,B,...`; set once by main before any thread starts,
// read-only afterwards). security_settings() is the first (None when none was given).
const std::vector<SecuritySettings>& security_variants();
const SecuritySettings& security_settings();
void set_security_variants(std::vector<SecuritySettings> variants);

// The JSON members of a generated server configuration that make it offer `s`'s policy and mode:
// `"endpoints": [...]` and, when secured, `"security": {"pki_directory": ...}` with `dir`/pki laid out and
// the bench's certificate in trusted/certs. Writes the PKI folders; empty string on failure.
std::string endpoint_config_json(const std::filesystem::path& dir,
                                 const SecuritySettings& s = security_settings());
// The certificate the server under test generated in `dir`/pki at its first start (DER), or empty.
std::vector<uint8_t> generated_server_certificate(const std::filesystem::path& dir);

// What a channel's OPN needs to know about the server, shared by every connection to it.
struct ServerSecurity {
  const SecuritySettings* settings = nullptr;
  std::vector<uint8_t> server_certificate;  // DER
  std::array<uint8_t, 20> server_thumbprint{};
  security::Pkey server_public_key;
};
// From the server's DER certificate; nullptr with a reason when it does not parse.
std::shared_ptr<const ServerSecurity> make_server_security(const SecuritySettings& s,
                                                           std::vector<uint8_t> server_certificate,
                                                           std::string& error);

// One channel's symmetric security: the client's keys (send) and the server's (receive).
class ChannelCrypto {
 public:
  ChannelCrypto(const security::Policy& p, bool encrypt) : policy_(p), encrypt_(encrypt) {}
  bool set_keys(std::span<const uint8_t> client_nonce, std::span<const uint8_t> server_nonce);

  // The most a chunk grows when sealed: padding (with its size byte) and the signature.
  size_t max_overhead() const noexcept {
    return policy_.signature_length + (encrypt_ ? policy_.block_size + 1 : 0);
  }
  // Seals the symmetric chunk at `chunk` (header, security and sequence headers, body: `size` bytes) in
  // place: padding, MessageSize, signature, encryption. REQUIRES: max_overhead() bytes of room behind it.
  // Returns the sealed size, 0 on failure.
  size_t seal(uint8_t* chunk, size_t size) noexcept;
  // seal() in the two steps of the server's output writer: sign() pads, sets the MessageSize and signs
  // (returns the sealed size, 0 on failure); encrypt_each() then encrypts the parts after the security header
  // of several sealed chunks, as independent CBC streams (SymmetricCipher::encrypt_each).
  size_t sign(uint8_t* chunk, size_t size) noexcept;
  bool encrypt_each(std::span<const std::span<uint8_t>> parts) noexcept { return send_.encrypt_each(parts); }
  // Decrypts and verifies a received symmetric chunk in place; `body` gets the bytes after the sequence
  // header, padding and signature removed. False when any check fails.
  bool unseal(std::span<uint8_t> chunk, std::span<const uint8_t>& body) noexcept;

 private:
  const security::Policy& policy_;
  bool encrypt_;
  security::SymmetricCipher send_, receive_;
};

}  // namespace opcuad::bench
