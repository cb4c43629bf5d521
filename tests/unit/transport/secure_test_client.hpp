#pragma once
// The client side of a signed or encrypted secure channel (Part 6 §6.7), written against the security
// primitives, for tests and fuzz targets that talk to a SecureChannel byte by byte. It builds secured OPN
// requests (Issue and Renew, in one chunk or several), reads the OPN responses (in one chunk or several)
// and keeps every token's keys, seals MSG/CLO chunks with the token it is told to use, and verifies and
// decrypts what the server sends with the token the chunk names. No test framework: every failure is a
// return value the caller checks.

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transport/security/asymmetric.hpp"
#include "transport/security/crypto.hpp"
#include "transport/security/policy.hpp"
#include "transport/uatcp.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::transport::test {

// What a client needs to open a secured channel: its key and certificate, the server's public key and
// certificate thumbprint.
struct SecureClientKeys {
  EVP_PKEY* client_private = nullptr;
  std::vector<uint8_t> client_certificate;  // DER (the OPN may carry a longer chain: open_request's `chain`)
  EVP_PKEY* server_public = nullptr;
  std::array<uint8_t, 20> server_thumbprint{};
};

class SecureTestClient {
 public:
  struct Token {
    security::SymmetricCipher send;     // what the client secures its chunks with
    security::SymmetricCipher receive;  // what the server secured its chunks with
  };
  // A chunk the server sent, verified and decrypted (unseal(), open_response_chunk()): its headers' fields
  // and its body after the sequence header.
  struct Unsealed {
    uint32_t token_id = 0;
    uint32_t sequence = 0;
    uint32_t request_id = 0;
    char chunk = 'F';
    std::vector<uint8_t> body;
  };
  // The asymmetric security header an OPN chunk carries (Part 6 §6.7.2.3).
  struct OpenHeader {
    std::string policy_uri;
    std::vector<uint8_t> sender_certificate;   // the server's (chain)
    std::vector<uint8_t> receiver_thumbprint;  // of the certificate the chunk is encrypted for
  };

  SecureTestClient(const security::Policy& policy, ua::MessageSecurityMode mode, SecureClientKeys keys)
      : policy_(policy), mode_(mode), keys_(std::move(keys)) {}

  const security::Policy& policy() const noexcept { return policy_; }
  bool encrypts() const noexcept { return mode_ == ua::MessageSecurityMode::SignAndEncrypt; }
  uint32_t channel_id() const noexcept { return channel_id_; }
  uint32_t token_id() const noexcept { return token_id_; }    // the token chunks are sealed with
  uint32_t newest_token() const noexcept { return newest_; }  // the last one the server issued
  void use_token(uint32_t id) noexcept { token_id_ = id; }
  bool has_token(uint32_t id) const { return tokens_.count(id) != 0; }
  // The sequence number of the next chunk this client sends (OPN and MSG share one sequence, Part 6
  // §6.7.2.4).
  uint32_t next_sequence() const noexcept { return sequence_; }
  void set_next_sequence(uint32_t s) noexcept { sequence_ = s; }

  // A secured OPN chunk (Issue or Renew) with a fresh client nonce; `chain` replaces the certificate sent
  // (empty: the client's own). Empty when it cannot be sealed.
  std::string open_request(uint32_t request_id, ua::SecurityTokenRequestType type,
                           uint32_t lifetime_ms = 600000, std::span<const uint8_t> chain = {}) {
    return open_request_chunks(request_id, type, 1, {}, lifetime_ms, chain).front();
  }

  // The same request in `pieces` chunks ('C' ... 'F'; some stacks split a large OPN), each sealed on its
  // own with its own sequence number; `request_ids` overrides the RequestId of the first chunks (hostile
  // variants). An empty string stands for a chunk that cannot be sealed.
  std::vector<std::string> open_request_chunks(uint32_t request_id, ua::SecurityTokenRequestType type,
                                               size_t pieces, std::span<const uint32_t> request_ids = {},
                                               uint32_t lifetime_ms = 600000,
                                               std::span<const uint8_t> chain = {}) {
    std::vector<std::string> out;
    for (auto& c : open_plaintext_chunks(request_id, type, lifetime_ms, chain, pieces, request_ids)) {
      const size_t from = asymmetric_payload_offset(c);
      const bool sealed =
          from != 0 && security::seal_asymmetric(policy_, keys_.client_private, keys_.server_public, c, from);
      out.push_back(sealed ? std::string(c.begin(), c.end()) : std::string());
    }
    return out;
  }

  // The OPN chunk before sealing: MessageHeader, asymmetric security header, SequenceHeader and body.
  std::vector<uint8_t> open_plaintext(uint32_t request_id, ua::SecurityTokenRequestType type,
                                      uint32_t lifetime_ms, std::span<const uint8_t> chain = {}) {
    return std::move(open_plaintext_chunks(request_id, type, lifetime_ms, chain, 1, {}).front());
  }

  // The request's body (type NodeId and OpenSecureChannelRequest) split into `pieces` (at least one)
  // chunks, each MessageHeader | asymmetric security header | SequenceHeader | its part of the body.
  std::vector<std::vector<uint8_t>> open_plaintext_chunks(uint32_t request_id,
                                                          ua::SecurityTokenRequestType type,
                                                          uint32_t lifetime_ms,
                                                          std::span<const uint8_t> chain, size_t pieces,
                                                          std::span<const uint32_t> request_ids) {
    pending_nonce_.assign(policy_.nonce_length, 0);
    for (size_t i = 0; i < pending_nonce_.size(); ++i)
      pending_nonce_[i] = static_cast<uint8_t>(0x5a + i + 7 * opens_);
    ++opens_;
    ua::ByteBuffer header;
    ua::Encoder h(header);
    h.write_raw("OPNF\0\0\0\0", 8);
    h.write_u32(channel_id_);
    ua::encode(h, ua::String(std::string(policy_.uri)));
    ua::encode(h, ua::ByteString::from_bytes(
                      chain.empty() ? std::span<const uint8_t>(keys_.client_certificate) : chain));
    ua::encode(h, ua::ByteString::from_bytes(keys_.server_thumbprint));
    ua::ByteBuffer body;
    ua::Encoder b(body);
    ua::OpenSecureChannelRequest req;
    req.request_type = type;
    req.security_mode = mode_;
    req.client_nonce = ua::ByteString::from_bytes(pending_nonce_);
    req.requested_lifetime = lifetime_ms;
    ua::encode(b, ua::NodeId(0, ua::OpenSecureChannelRequest::binary_encoding_id));
    ua::encode(b, req);
    pieces = std::max<size_t>(pieces, 1);
    const size_t step = (body.size() + pieces - 1) / pieces;
    std::vector<std::vector<uint8_t>> out(pieces);
    for (size_t i = 0; i < pieces; ++i) {
      std::vector<uint8_t>& c = out[i];
      c.assign(header.data(), header.data() + header.size());
      c[3] = i + 1 == pieces ? 'F' : 'C';
      c.resize(c.size() + 8);
      put32(c.data() + c.size() - 8, sequence_++);
      put32(c.data() + c.size() - 4, i < request_ids.size() ? request_ids[i] : request_id);
      const size_t from = std::min(body.size(), i * step);
      const size_t to = std::min(body.size(), from + step);
      c.insert(c.end(), body.data() + from, body.data() + to);
    }
    return out;
  }

  // Where the encrypted part of an OPN chunk starts (after its asymmetric security header, which goes to
  // `header` when given); 0 when the header does not parse.
  static size_t asymmetric_payload_offset(std::span<const uint8_t> chunk, OpenHeader* header = nullptr) {
    if (chunk.size() < kHeaderSize + 4) return 0;
    ua::Decoder d(chunk.subspan(kHeaderSize + 4));
    ua::String uri;
    ua::ByteString certificate, thumbprint;
    ua::decode(d, uri);
    ua::decode(d, certificate);
    ua::decode(d, thumbprint);
    if (!d.ok()) return 0;
    if (header) {
      header->policy_uri = std::string(uri.view());
      header->sender_certificate.assign(certificate.bytes().begin(), certificate.bytes().end());
      header->receiver_thumbprint.assign(thumbprint.bytes().begin(), thumbprint.bytes().end());
    }
    return static_cast<size_t>(d.position() - chunk.data());
  }

  // Verifies and decrypts one OPN chunk the server sent with this client's key (a response too large for
  // one chunk comes in several): `u` gets its chunk type, SequenceHeader and the body after it, `header`
  // (when given) its security header. False when the chunk is not an OPN or does not verify.
  bool open_response_chunk(std::string_view out, Unsealed& u, OpenHeader* header = nullptr) {
    if (out.substr(0, 3) != "OPN") return false;
    std::span<const uint8_t> chunk(reinterpret_cast<const uint8_t*>(out.data()), out.size());
    const size_t from = asymmetric_payload_offset(chunk, header);
    if (from == 0) return false;
    auto opened = security::open_asymmetric(policy_, keys_.client_private, keys_.server_public, chunk, from);
    if (!opened.status.is_good() || opened.plaintext.size() < 8) return false;
    u.token_id = 0;
    u.chunk = out[3];
    u.sequence = get32(opened.plaintext.data());
    u.request_id = get32(opened.plaintext.data() + 4);
    u.body.assign(opened.plaintext.begin() + 8, opened.plaintext.end());
    return true;
  }

  // Reads the server's OPN response to the last open_request(): the token's keys from both nonces (Part 6
  // §6.7.5). The first one also gives the channel id and becomes the token in use; a renewal's token
  // waits for use_token(). False when the chunk is not a good one-chunk OPN response.
  bool accept_open(std::string_view out, ua::OpenSecureChannelResponse* response = nullptr,
                   OpenHeader* header = nullptr) {
    Unsealed u;
    return open_response_chunk(out, u, header) && accept_open_body(u.body, response);
  }

  // The same for a response that came in several chunks, given as their bodies joined (after each
  // chunk's SequenceHeader).
  bool accept_open_body(std::span<const uint8_t> joined, ua::OpenSecureChannelResponse* response = nullptr) {
    ua::Decoder body(joined);
    ua::NodeId type;
    ua::decode(body, type);
    ua::OpenSecureChannelResponse resp;
    ua::decode(body, resp);
    if (!body.ok() || resp.server_nonce.size() != policy_.nonce_length) return false;
    const auto server_nonce = resp.server_nonce.bytes();
    auto token = std::make_unique<Token>();
    if (!token->send.set_keys(policy_, security::derive_keys(policy_, server_nonce, pending_nonce_)) ||
        !token->receive.set_keys(policy_, security::derive_keys(policy_, pending_nonce_, server_nonce))) {
      return false;
    }
    const uint32_t id = resp.security_token.token_id;
    tokens_[id] = std::move(token);
    newest_ = id;
    if (channel_id_ == 0) {
      channel_id_ = resp.security_token.channel_id;
      token_id_ = id;
    }
    if (response) *response = std::move(resp);
    return true;
  }

  // A sealed MSG (or CLO) chunk with the next sequence number.
  std::string message(uint32_t request_id, std::string_view body, char chunk_type = 'F',
                      const char* type = "MSG") {
    std::vector<uint8_t> c(kSymmetricPrefix);
    std::memcpy(c.data(), type, 3);
    c[3] = static_cast<uint8_t>(chunk_type);
    put32(c.data() + 8, channel_id_);
    put32(c.data() + 12, token_id_);
    put32(c.data() + 16, sequence_++);
    put32(c.data() + 20, request_id);
    c.insert(c.end(), body.begin(), body.end());
    return seal(std::move(c), true, true);
  }

  // Seals a symmetric chunk given as MessageHeader | channel id | token id | SequenceHeader | body, with
  // the token in use: padding (SignAndEncrypt; written when `pad`, otherwise the bytes are only extended
  // with zeros to whole blocks), the MessageSize (when `fix_size`), the HMAC, then the encryption.
  // Empty when the token has no keys or the chunk is too short.
  std::string seal(std::vector<uint8_t> c, bool pad, bool fix_size) {
    auto it = tokens_.find(token_id_);
    if (it == tokens_.end() || c.size() < kSymmetricHeaderSize) return {};
    Token& t = *it->second;
    const size_t sig = policy_.signature_length;
    if (encrypts()) {
      if (pad) {
        const auto padding =
            security::compute_padding(c.size() - kSymmetricHeaderSize, sig, policy_.block_size, false);
        const size_t at = c.size();
        c.resize(at + padding.total());
        security::write_padding(c.data() + at, padding);
      } else {
        while ((c.size() - kSymmetricHeaderSize + sig) % policy_.block_size != 0) c.push_back(0);
      }
    }
    const size_t signed_size = c.size();
    c.resize(signed_size + sig);
    if (fix_size) put32(c.data() + 4, static_cast<uint32_t>(c.size()));
    if (!t.send.sign({c.data(), signed_size}, c.data() + signed_size)) return {};
    if (encrypts() && !t.send.encrypt({c.data() + kSymmetricHeaderSize, c.size() - kSymmetricHeaderSize}))
      return {};
    return std::string(c.begin(), c.end());
  }

  // Verifies and decrypts one server MSG chunk with the keys of the token it names; its body (after the
  // sequence header), its token and sequence number. False when it does not verify.
  bool unseal(std::string_view chunk, Unsealed& u) {
    const size_t sig = policy_.signature_length;
    if (chunk.size() < kSymmetricPrefix + sig) return false;
    std::vector<uint8_t> c(chunk.begin(), chunk.end());
    u.token_id = get32(c.data() + 12);
    u.chunk = static_cast<char>(c[3]);
    auto it = tokens_.find(u.token_id);
    if (it == tokens_.end()) return false;
    Token& t = *it->second;
    if (encrypts()) {
      if ((c.size() - kSymmetricHeaderSize) % policy_.block_size != 0) return false;
      if (!t.receive.decrypt({c.data() + kSymmetricHeaderSize, c.size() - kSymmetricHeaderSize}))
        return false;
    }
    if (!t.receive.verify({c.data(), c.size() - sig}, {c.data() + c.size() - sig, sig})) return false;
    size_t end = c.size() - sig;
    if (encrypts()) {
      const size_t pad =
          security::check_padding({c.data() + kSymmetricPrefix, end - kSymmetricPrefix}, false);
      if (pad == SIZE_MAX) return false;
      end -= pad;
    }
    u.sequence = get32(c.data() + 16);
    u.request_id = get32(c.data() + 20);
    u.body.assign(c.begin() + kSymmetricPrefix, c.begin() + static_cast<ptrdiff_t>(end));
    return true;
  }

  static void put32(uint8_t* p, uint32_t v) noexcept { std::memcpy(p, &v, 4); }
  static uint32_t get32(const uint8_t* p) noexcept {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

 private:
  const security::Policy& policy_;
  ua::MessageSecurityMode mode_;
  SecureClientKeys keys_;
  uint32_t channel_id_ = 0;
  uint32_t token_id_ = 0;
  uint32_t newest_ = 0;
  uint32_t sequence_ = 1;
  uint32_t opens_ = 0;
  std::vector<uint8_t> pending_nonce_;
  std::map<uint32_t, std::unique_ptr<Token>> tokens_;
};

}  // namespace opcuad::transport::test
