#include "bench/client_security.hpp"

#include <openssl/pem.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "transport/security/asymmetric.hpp"
#include "transport/security/certificate.hpp"
#include "transport/uatcp.hpp"

namespace opcuad::bench {

namespace {

namespace fs = std::filesystem;

std::vector<SecuritySettings>& variants_storage() {
  static std::vector<SecuritySettings> v;
  return v;
}

std::string json_quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

bool write_bytes(const fs::path& file, std::span<const uint8_t> bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

std::string SecuritySettings::name() const {
  if (!secured()) return "None";
  return std::string(policy->name) + (encrypting() ? ":SignAndEncrypt" : ":Sign");
}

std::optional<SecuritySettings> parse_security(std::string_view text, std::string& error) {
  SecuritySettings s;
  if (text == "None" || text == "None:None") return s;
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    error = "--security wants None or POLICY:MODE (e.g. Basic256Sha256:SignAndEncrypt)";
    return std::nullopt;
  }
  const std::string_view policy = text.substr(0, colon), mode = text.substr(colon + 1);
  s.policy = security::find_policy(policy);
  if (s.policy == nullptr || s.policy->id == security::PolicyId::None) {
    error = "--security: unknown or unsecured policy \"" + std::string(policy) + "\"";
    return std::nullopt;
  }
  if (mode == "Sign") {
    s.mode = ua::MessageSecurityMode::Sign;
  } else if (mode == "SignAndEncrypt") {
    s.mode = ua::MessageSecurityMode::SignAndEncrypt;
  } else {
    error = "--security: the mode must be Sign or SignAndEncrypt, not \"" + std::string(mode) + "\"";
    return std::nullopt;
  }
  return s;
}

bool load_or_make_client_certificate(SecuritySettings& s, const fs::path& dir, std::string& error) {
  const fs::path cert_file = dir / kBenchCertificateName, key_file = dir / "opcuad-bench.pem";
  std::error_code ec;
  if (fs::exists(cert_file, ec) && fs::exists(key_file, ec)) {
    security::X509Ptr cert = security::read_certificate_file(cert_file);
    FILE* f = std::fopen(key_file.c_str(), "r");
    EVP_PKEY* key = f ? PEM_read_PrivateKey(f, nullptr, nullptr, nullptr) : nullptr;
    if (f) std::fclose(f);
    if (!cert || key == nullptr) {
      if (key) EVP_PKEY_free(key);
      error = "cannot read the client certificate and key in " + dir.string();
      return false;
    }
    s.certificate = security::to_der(cert.get());
    s.private_key = security::adopt(key);
    s.directory = dir;
    return true;
  }
  security::OwnCertificateRequest req;
  req.application_uri = std::string(kBenchApplicationUri);
  req.common_name = "opcuad-bench";
  req.organization = "opcuad";
  req.dns_names = {"localhost"};
  req.key_bits = 2048;
  req.lifetime_days = 30;
  security::GeneratedCertificate g = security::make_application_certificate(req);
  if (!g.error.empty()) {
    error = "client certificate: " + g.error;
    return false;
  }
  s.certificate = security::to_der(g.cert.get());
  s.private_key = security::share_pkey(g.key.get());
  s.directory = dir;
  fs::create_directories(dir, ec);
  if (ec || !write_bytes(cert_file, s.certificate)) {
    error = "cannot write the client certificate in " + dir.string();
    return false;
  }
  // The key beside it (PEM, 0600), so that a run against an external server can be repeated by hand.
  FILE* f = std::fopen(key_file.c_str(), "w");
  if (f == nullptr) {
    error = "cannot write " + key_file.string();
    return false;
  }
  ::chmod(key_file.c_str(), 0600);
  const bool ok = PEM_write_PrivateKey(f, g.key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  if (!ok) error = "cannot write " + key_file.string();
  return ok;
}

const std::vector<SecuritySettings>& security_variants() {
  return variants_storage();
}

const SecuritySettings& security_settings() {
  static const SecuritySettings none;
  return variants_storage().empty() ? none : variants_storage().front();
}

void set_security_variants(std::vector<SecuritySettings> variants) {
  variants_storage() = std::move(variants);
}

std::string endpoint_config_json(const fs::path& dir, const SecuritySettings& s) {
  // The bench writes as an anonymous user.
  if (!s.secured())
    return R"("endpoints": [{"url": "opc.tcp://127.0.0.1:0"}], "security": {"anonymous_write": true})";
  // Part 12 §F.1 layout; the server creates the rest. The bench's certificate is trusted from the start.
  const fs::path pki = dir / "pki";
  const fs::path trusted = pki / "trusted" / "certs";
  std::error_code ec;
  fs::create_directories(trusted, ec);
  if (ec) return {};
  for (const fs::path& p : {pki, pki / "trusted", trusted}) fs::permissions(p, fs::perms::owner_all, ec);
  if (!write_bytes(trusted / kBenchCertificateName, s.certificate)) return {};
  return R"("endpoints": [{"url": "opc.tcp://127.0.0.1:0", "security_policies": [)" +
         json_quoted(s.policy->name) + R"(], "security_modes": [)" +
         json_quoted(s.encrypting() ? "SignAndEncrypt" : "Sign") + R"(]}],
 "security": {"anonymous_write": true, "pki_directory": )" +
         json_quoted(pki.string()) + "}";
}

std::vector<uint8_t> generated_server_certificate(const fs::path& dir) {
  std::ifstream in(dir / "pki" / "own" / "certs" / "opcuad.der", std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::shared_ptr<const ServerSecurity> make_server_security(const SecuritySettings& s,
                                                           std::vector<uint8_t> server_certificate,
                                                           std::string& error) {
  auto out = std::make_shared<ServerSecurity>();
  out->settings = &s;
  out->server_public_key = security::certificate_public_key(server_certificate);
  if (!out->server_public_key) {
    error = "the server certificate does not parse";
    return nullptr;
  }
  out->server_thumbprint = security::sha1(server_certificate);
  out->server_certificate = std::move(server_certificate);
  return out;
}

bool ChannelCrypto::set_keys(std::span<const uint8_t> client_nonce, std::span<const uint8_t> server_nonce) {
  // Part 6 §6.7.5: the client secures with keys from (server nonce, client nonce), the server with the
  // reverse.
  return send_.set_keys(policy_, security::derive_keys(policy_, server_nonce, client_nonce)) &&
         receive_.set_keys(policy_, security::derive_keys(policy_, client_nonce, server_nonce));
}

size_t ChannelCrypto::seal(uint8_t* chunk, size_t size) noexcept {
  using transport::kSymmetricHeaderSize;
  const size_t sealed = sign(chunk, size);
  if (sealed == 0) return 0;
  if (encrypt_ && !send_.encrypt({chunk + kSymmetricHeaderSize, sealed - kSymmetricHeaderSize})) return 0;
  return sealed;
}

size_t ChannelCrypto::sign(uint8_t* chunk, size_t size) noexcept {
  using transport::kSymmetricHeaderSize;
  size_t end = size;
  if (encrypt_) {
    // Part 6 §6.7.2.5: everything after the security header, with the padding and the signature, fills
    // whole cipher blocks. Symmetric keys are at most 256 bits, so there is never an ExtraPaddingSize.
    const auto pad = security::compute_padding(size - kSymmetricHeaderSize, policy_.signature_length,
                                               policy_.block_size, false);
    security::write_padding(chunk + end, pad);
    end += pad.total();
  }
  const size_t sealed = end + policy_.signature_length;
  const auto n = static_cast<uint32_t>(sealed);
  std::memcpy(chunk + 4, &n, 4);
  if (!send_.sign({chunk, end}, chunk + end)) return 0;
  return sealed;
}

bool ChannelCrypto::unseal(std::span<uint8_t> chunk, std::span<const uint8_t>& body) noexcept {
  using transport::kSymmetricHeaderSize;
  using transport::kSymmetricPrefix;
  const size_t sig = policy_.signature_length;
  if (chunk.size() < kSymmetricPrefix + sig) return false;
  if (encrypt_) {
    const size_t encrypted = chunk.size() - kSymmetricHeaderSize;
    if (encrypted % policy_.block_size != 0 || !receive_.decrypt(chunk.subspan(kSymmetricHeaderSize)))
      return false;
  }
  size_t end = chunk.size() - sig;
  if (!receive_.verify(chunk.first(end), chunk.subspan(end))) return false;
  if (encrypt_) {
    const size_t pad =
        security::check_padding(chunk.subspan(kSymmetricPrefix, end - kSymmetricPrefix), false);
    if (pad == SIZE_MAX) return false;
    end -= pad;
  }
  body = chunk.subspan(kSymmetricPrefix, end - kSymmetricPrefix);
  return true;
}

}  // namespace opcuad::bench
