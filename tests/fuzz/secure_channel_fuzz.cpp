// libFuzzer target for the secured receive path (Part 6 §6.7.2): a SecureChannel with the fixed test
// server key (fuzz_keys.hpp) offering Basic256Sha256, Aes128_Sha256_RsaOaep and Aes256_Sha256_RsaPss in
// Sign and SignAndEncrypt, its client certificates validated by a real Pki (trusting the fixed client
// certificate). One kind of input opens a channel properly and then feeds MSG/CLO chunks the target seals
// with the channel's keys: decryption, padding, signature, sequence number and token checks, renewals and
// the switch to a new token; the other feeds OPN chunks: the asymmetric security header, certificate
// parsing and validation, decryption and signature. Input format: secure_channel_fuzz_input.hpp.
//
// Beyond "no crash, no leak, no sanitizer report", the target checks what the channel must guarantee:
//   - every chunk it writes is well framed, and every MSG verifies and decrypts with the keys of the token
//     it names (every OPN response with the client key);
//   - once a sealed chunk was tampered with, no request reaches the service any more.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/fuzz/fuzz_ids.hpp"
#include "tests/fuzz/fuzz_key_material.hpp"
#include "tests/fuzz/secure_channel_fuzz_input.hpp"
#include "tests/unit/transport/memory_channel.hpp"
#include "tests/unit/transport/pki_validator.hpp"
#include "tests/unit/transport/secure_test_client.hpp"
#include "transport/security/pki.hpp"

namespace {

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::fuzz::secure;
using opcuad::transport::test::SecureTestClient;

const security::Policy& selected_policy(uint8_t index) {
  static constexpr security::PolicyId ids[kPolicies] = {security::PolicyId::Basic256Sha256,
                                                        security::PolicyId::Aes128_Sha256_RsaOaep,
                                                        security::PolicyId::Aes256_Sha256_RsaPss};
  return security::policy(ids[index % kPolicies]);
}

// The server side, made once per process: a Pki in a temporary folder holding the fixed server certificate
// and trusting the fixed client certificate, and the identity the channel signs with.
struct Server {
  std::filesystem::path dir;
  security::Pki pki;
  security::ServerIdentity identity;

  Server() {
    char tmpl[] = "/tmp/opcuad-secure-fuzz-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) std::abort();
    dir = tmpl;
    const auto& server = fuzz::fuzz_server();
    const auto& client = fuzz::fuzz_client();
    security::PkiPaths paths(dir);
    if (!security::create_layout(paths).empty()) std::abort();
    const std::string key_pem = fuzz::kServerKeyPem;
    if (!security::write_file_atomically(paths.own_certificate, server.certificate, 0600).empty() ||
        !security::write_file_atomically(
             paths.own_key, {reinterpret_cast<const uint8_t*>(key_pem.data()), key_pem.size()}, 0600)
             .empty() ||
        !security::write_file_atomically(paths.trusted_certs / "client.der", client.certificate, 0600)
             .empty()) {
      std::abort();
    }
    security::PkiSettings s;
    s.directory = dir;
    s.application_uri = "urn:opcuad:fuzz:server";
    s.application_name = "opcuad fuzz server";
    s.max_rejected_certificates = 0;  // an untrusted certificate is not written to disk on every input
    if (!pki.open(s).ok()) std::abort();
    identity.certificate = pki.certificate_der();
    identity.thumbprint = pki.thumbprint();
    identity.private_key = security::share_pkey(pki.private_key());
    identity.public_key = server.public_key;
  }
  ~Server() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

Server& server() {
  static Server s;
  return s;
}

test::SecureClientKeys client_keys() {
  const auto& c = fuzz::fuzz_client();
  return {c.private_key.get(), c.certificate, fuzz::fuzz_server().public_key.get(),
          fuzz::fuzz_server().thumbprint};
}

// The channel's configuration: every secured policy in both modes, the fixed server identity, client
// certificates validated by the real Pki.
TransportConfig fuzz_config() {
  TransportConfig config;
  config.max_message_size = 1u << 20;
  config.decode_limits.max_array_length = 1u << 14;
  for (uint8_t i = 0; i < kPolicies; ++i) {
    for (auto m : {ua::MessageSecurityMode::Sign, ua::MessageSecurityMode::SignAndEncrypt}) {
      config.security_offers.push_back({&selected_policy(i), m});
    }
  }
  config.identity = &server().identity;
  config.validate_certificate = test::pki_validator(server().pki);
  // config.handshakes stays null: the RSA work runs on this thread, so every run is deterministic.
  return config;
}

class Run {
 public:
  Run(const security::Policy& policy, ua::MessageSecurityMode mode)
      : m_(fuzz_config(), kFuzzIdKeys), client_(policy, mode, client_keys()) {}
  // Write completions still queued hold the channel: they run before it is detached (~MemoryChannel).
  ~Run() { m_.turn(); }

  bool alive() const { return !m_.events.closed && m_.channel->state() < SecureChannel::State::Closing; }

  // Feeds bytes as the socket would (in pieces of `step`), turning the loop after each read. False when
  // the channel stopped reading for good.
  bool feed(std::string_view bytes, size_t step = SIZE_MAX) {
    size_t pos = 0;
    int idle = 0;
    while (pos < bytes.size() && alive()) {
      if (!m_.channel->reading_allowed()) {
        if (m_.turn() == 0 && ++idle > 3) return false;
        continue;
      }
      const size_t n = m_.deliver(bytes.substr(pos, step));
      if (n == 0) return false;
      pos += n;
      m_.turn();
    }
    m_.turn();
    check_output();
    return alive();
  }

  // HEL, a valid OPN Issue and its response: the channel is open and the client holds the token's keys.
  void open() {
    feed(encode_hello(HelloMessage{0, 65535, 65535, 0, 0, ua::String("opc.tcp://localhost:4840")}));
    expect_open_ = true;
    feed(client_.open_request(1, ua::SecurityTokenRequestType::Issue));
    if (client_.channel_id() == 0 || !alive()) {
      std::fprintf(stderr, "a valid OPN did not open the channel\n");
      std::abort();
    }
  }

  void symmetric_record(uint8_t flags, std::span<const uint8_t> data) {
    if (flags & kRenew) {
      expect_open_ = true;
      feed(client_.open_request(next_request_id_++, ua::SecurityTokenRequestType::Renew));
      return;
    }
    if ((flags & kSwitch) && client_.has_token(client_.newest_token()))
      client_.use_token(client_.newest_token());
    size_t tamper_at = 0;
    uint8_t tamper_mask = 0;
    if (flags & kTamper) {
      if (data.size() < 3) return;
      tamper_at = data[0] | size_t{data[1]} << 8;
      tamper_mask = data[2] ? data[2] : 1;
      data = data.subspan(3);
    }
    std::vector<uint8_t> c(data.begin(), data.end());
    const bool fix = (flags & (kFixHeader | kFixSeq)) != 0;
    if (fix && c.size() < kSymmetricPrefix) c.resize(kSymmetricPrefix);
    if (flags & kFixHeader) {
      SecureTestClient::put32(c.data() + 8, client_.channel_id());
      SecureTestClient::put32(c.data() + 12, client_.token_id());
    }
    if (flags & kFixSeq) SecureTestClient::put32(c.data() + 16, client_.next_sequence());
    if (c.size() >= kSymmetricPrefix) client_.set_next_sequence(SecureTestClient::get32(c.data() + 16) + 1);
    std::string bytes;
    if (flags & kSeal) bytes = client_.seal(c, (flags & kPad) != 0, (flags & kFixHeader) != 0);
    if (bytes.empty()) {
      if ((flags & kFixHeader) && c.size() >= kHeaderSize)
        SecureTestClient::put32(c.data() + 4, uint32_t(c.size()));
      bytes.assign(c.begin(), c.end());
    }
    if (bytes.empty()) return;
    if (flags & kTamper) {
      bytes[tamper_at % bytes.size()] = static_cast<char>(bytes[tamper_at % bytes.size()] ^ tamper_mask);
      if (!tampered_) requests_when_tampered_ = m_.handler.requests;
      tampered_ = true;
    }
    feed(bytes, (flags & kSplit) ? 7 : SIZE_MAX);
  }

  void asymmetric_record(uint8_t flags, std::span<const uint8_t> data, const security::Policy& selected) {
    asymmetric_ = true;
    std::vector<uint8_t> c(data.begin(), data.end());
    if ((flags & kFixHeader) && c.size() >= kHeaderSize + 4 && m_.channel->id() != 0) {
      SecureTestClient::put32(c.data() + 8, m_.channel->id());
    }
    bool sealed = false;
    if (flags & kSeal) {
      const size_t from = SecureTestClient::asymmetric_payload_offset(c);
      if (from != 0 && from <= c.size()) {
        const security::Policy* p = named_policy(c);
        sealed = security::seal_asymmetric(p ? *p : selected, client_keys().client_private,
                                           client_keys().server_public, c, from);
      }
    }
    if (!sealed && (flags & kFixHeader) && c.size() >= kHeaderSize) {
      SecureTestClient::put32(c.data() + 4, static_cast<uint32_t>(c.size()));
    }
    expect_open_ = true;
    feed(std::string_view(reinterpret_cast<const char*>(c.data()), c.size()),
         (flags & kSplit) ? 7 : SIZE_MAX);
  }

 private:
  // The secured policy an OPN chunk's header names, or null.
  static const security::Policy* named_policy(std::span<const uint8_t> chunk) {
    if (chunk.size() < kHeaderSize + 4) return nullptr;
    ua::Decoder d(chunk.subspan(kHeaderSize + 4));
    ua::String uri;
    ua::decode(d, uri);
    const security::Policy* p = d.ok() ? security::find_policy(uri.view()) : nullptr;
    return p && p->uri == uri.view() && p->id != security::PolicyId::None ? p : nullptr;
  }

  // Everything the server wrote since the last look: framing, and the security of each chunk.
  void check_output() {
    const std::string& out = m_.sink.out;
    while (out.size() - checked_ >= kHeaderSize) {
      uint32_t size;
      std::memcpy(&size, out.data() + checked_ + 4, 4);
      if (size < kHeaderSize || size > out.size() - checked_) std::abort();  // writes are whole chunks
      const std::string_view chunk(out.data() + checked_, size);
      checked_ += size;
      const std::string_view type = chunk.substr(0, 3);
      if (type == "ACK" || type == "ERR") continue;
      if (type == "OPN") {
        // Secured with the policy it names, for the client certificate (the only one trusted).
        if (!expect_open_) std::abort();
        expect_open_ = false;
        const auto* p = named_policy({reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size()});
        if (p == nullptr) std::abort();
        if (!asymmetric_) {
          if (!client_.accept_open(chunk)) std::abort();
        } else {
          SecureTestClient other(*p, ua::MessageSecurityMode::Sign, client_keys());
          other.open_plaintext(0, ua::SecurityTokenRequestType::Issue, 0);
          if (!other.accept_open(chunk)) std::abort();
        }
        continue;
      }
      if (type != "MSG") std::abort();
      SecureTestClient::Unsealed u;
      if (!client_.unseal(chunk, u)) {
        std::fprintf(stderr, "a response does not verify with the keys of token %u\n", u.token_id);
        std::abort();
      }
    }
    if (tampered_ && m_.handler.requests > requests_when_tampered_) {
      std::fprintf(stderr, "a request reached the service after a tampered chunk\n");
      std::abort();
    }
  }

  test::MemoryChannel m_;
  SecureTestClient client_;
  size_t checked_ = 0;
  bool expect_open_ = false;
  bool asymmetric_ = false;  // the OPN responses answer the fuzzer's requests, not client_'s
  bool tampered_ = false;
  int requests_when_tampered_ = 0;
  uint32_t next_request_id_ = 100;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t sel = data[0];
  const security::Policy& policy = selected_policy(sel % kPolicies);
  const bool encrypt = sel / kPolicies % 2 == 1;
  const uint8_t kind = sel / (2 * kPolicies) % 2;
  Run run(policy, encrypt ? ua::MessageSecurityMode::SignAndEncrypt : ua::MessageSecurityMode::Sign);
  if (kind == kSymmetric) {
    run.open();
  } else {
    run.feed(encode_hello(HelloMessage{0, 65535, 65535, 0, 0, ua::String("opc.tcp://localhost:4840")}));
  }
  size_t pos = 1;
  // Each record costs RSA work at most once or twice; a bound keeps one input's time in check.
  for (int records = 0; pos + 3 <= size && records < 16 && run.alive(); ++records) {
    const uint8_t flags = data[pos];
    const size_t len = std::min<size_t>(data[pos + 1] | size_t{data[pos + 2]} << 8, size - pos - 3);
    const std::span<const uint8_t> bytes(data + pos + 3, len);
    pos += 3 + len;
    if (kind == kSymmetric) {
      run.symmetric_record(flags, bytes);
    } else {
      run.asymmetric_record(flags, bytes, policy);
    }
  }
  return 0;
}
