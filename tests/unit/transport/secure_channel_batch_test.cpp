// The chunks of one write are sealed together (docs/ARCHITECTURE.md, "How a request flows"): stamp() numbers,
// pads and signs each chunk in send order, and seal_batch() then encrypts the write's chunks as independent
// CBC streams, several at once (Part 6 §6.7.2.5: each chunk starts from the token's IV). The client side
// (secure_test_client.hpp) verifies and decrypts each chunk on its own with OpenSSL's EVP.
#include <catch2/catch.hpp>

#include <random>

#include "tests/unit/transport/secure_fixture.hpp"
#include "transport/security/crypto.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;

namespace {

// HEL and a secured OPN on the fixed keys; the output cleared.
void open_fixed(Harness& h, SecureTestClient& c) {
  h.feed(hello());
  h.sink.out.clear();
  h.feed(c.open_request(1, ua::SecurityTokenRequestType::Issue));
  h.run();
  const auto out = output_chunks(h.sink.out);
  REQUIRE(out.size() == 1);
  REQUIRE(c.accept_open(out[0]));
  h.sink.out.clear();
}

}  // namespace

TEST_CASE("secure channel: the responses of one write are sealed together and each decrypts on its own",
          "[transport][security][batch]") {
  for (auto id : {security::PolicyId::Basic256Sha256, security::PolicyId::Aes128_Sha256_RsaOaep}) {
    for (auto mode : {ua::MessageSecurityMode::SignAndEncrypt, ua::MessageSecurityMode::Sign}) {
      // 12 responses fill the eight lanes and refill four; 70 take two writes (64 chunks at most in one).
      for (size_t count : {1u, 3u, 12u, 70u}) {
        const auto& p = security::policy(id);
        INFO(p.name << " mode " << static_cast<int>(mode) << ", " << count << " responses");
        Harness h(fixed_secured_config(p, mode));
        SecureTestClient c = fixed_client(p, mode);
        open_fixed(h, c);
        h.handler.defer = true;  // the requests are answered below, all in one loop turn
        std::vector<size_t> nodes;
        std::string burst;
        for (size_t i = 0; i < count; ++i) {
          nodes.push_back(1 +
                          (i * 37) % 150);  // responses of different lengths: streams of different lengths
          burst += c.message(static_cast<uint32_t>(100 + i),
                             encode_request(read_request(static_cast<uint32_t>(i), nodes.back())));
        }
        h.feed(burst);
        REQUIRE(h.handler.deferred.size() == count);
        const size_t writes_before = h.sink.writes;
        for (auto& [request_id, response] : h.handler.deferred) h.channel->send(request_id, response);
        h.handler.deferred.clear();
        h.run();
        h.run();  // the second write of 70, after the first completed
        CHECK(h.sink.writes - writes_before ==
              (count + OutputWriter::kMaxChunksPerWrite - 1) / OutputWriter::kMaxChunksPerWrite);
        const auto out = output_chunks(h.sink.out);
        REQUIRE(out.size() == count);
        uint32_t sequence = 0;
        for (size_t i = 0; i < count; ++i) {
          INFO("response " << i);
          SecureTestClient::Unsealed u;
          REQUIRE(c.unseal(out[i], u));
          if (mode == ua::MessageSecurityMode::SignAndEncrypt) {
            CHECK((out[i].size() - kSymmetricHeaderSize) % p.block_size == 0);
          }
          CHECK(u.request_id == 100 + i);  // in send order
          if (i > 0) CHECK(u.sequence == sequence + 1);
          sequence = u.sequence;
          ua::Decoder d(u.body);
          ua::NodeId type;
          ua::decode(d, type);
          ua::ReadResponse resp;
          ua::decode(d, resp);
          REQUIRE(d.ok());
          CHECK(resp.response_header.request_handle == i);
          CHECK(resp.results.size() == nodes[i]);
        }
        CHECK_FALSE(h.events.closed);
      }
    }
  }
}

TEST_CASE("secure channel: a large response's chunks, fed back byte by byte, after one batched write",
          "[transport][security][batch]") {
  const auto& p = security::policy(security::PolicyId::Aes256_Sha256_RsaPss);
  const auto mode = ua::MessageSecurityMode::SignAndEncrypt;
  Harness h(fixed_secured_config(p, mode));
  SecureTestClient c = fixed_client(p, mode);
  h.feed(hello(8192, 65535), 1);  // the client receives chunks of at most 8192 bytes
  h.sink.out.clear();
  h.feed(c.open_request(1, ua::SecurityTokenRequestType::Issue), 1);
  REQUIRE(c.accept_open(output_chunks(h.sink.out).at(0)));
  h.sink.out.clear();
  // One response of ~40 KB: several chunks enqueued together, sealed in one drain.
  h.feed(c.message(9, encode_request(read_request(1, 2000))), 1);
  const auto out = output_chunks(h.sink.out);
  REQUIRE(out.size() > 2);
  std::vector<uint8_t> body;
  for (const auto& chunk : out) {
    CHECK(chunk.size() <= 8192);
    SecureTestClient::Unsealed u;
    REQUIRE(c.unseal(chunk, u));
    body.insert(body.end(), u.body.begin(), u.body.end());
  }
  ua::Decoder d(body);
  ua::NodeId type;
  ua::decode(d, type);
  ua::ReadResponse resp;
  ua::decode(d, resp);
  REQUIRE(d.ok());
  CHECK(resp.results.size() == 2000);
  // The channel goes on: another request, fed byte by byte, is answered.
  h.sink.out.clear();
  h.feed(c.message(10, encode_request(read_request(2, 3))), 1);
  const auto next = output_chunks(h.sink.out);
  REQUIRE(next.size() == 1);
  SecureTestClient::Unsealed u;
  REQUIRE(c.unseal(next[0], u));
  CHECK(u.request_id == 10);
}

TEST_CASE("secure channel: seal_batch encrypts each chunk with the cipher its stamp recorded",
          "[transport][security][batch]") {
  // Two tokens' ciphers in one write (the token in use changed between chunks), and chunks that wait for
  // no encryption (ERR, Sign): each is encrypted with its own cipher, from its IV, or left alone.
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  std::mt19937 rng(5);
  security::SymmetricKeys ka, kb;
  for (auto& b : ka.encrypting) b = static_cast<uint8_t>(rng());
  for (auto& b : kb.encrypting) b = static_cast<uint8_t>(rng());
  for (auto& b : ka.iv) b = static_cast<uint8_t>(rng());
  for (auto& b : kb.iv) b = static_cast<uint8_t>(rng());
  security::SymmetricCipher a, b;
  REQUIRE(a.set_keys(p, ka));
  REQUIRE(b.set_keys(p, kb));
  MemoryChannel m;
  // a a b a - b b b b b b b b b a (more than one group of lanes for b) and a raw chunk.
  const std::string pattern = "aab a-bbbbbbbbba";
  std::vector<OutboundChunk> chunks;
  std::vector<std::vector<uint8_t>> plain;
  for (size_t i = 0; i < pattern.size(); ++i) {
    ua::ByteBuffer buf = m.pool.acquire();
    const size_t blocks = 1 + rng() % 40;
    std::vector<uint8_t> bytes(kSymmetricHeaderSize + 16 * blocks);
    for (auto& x : bytes) x = static_cast<uint8_t>(rng());
    buf.append(bytes.data(), bytes.size());
    plain.push_back(bytes);
    OutboundChunk c{std::move(buf), ChunkKind::Symmetric, 16, true, true};
    if (pattern[i] == 'a') c.encrypt_with = &a;
    if (pattern[i] == 'b') c.encrypt_with = &b;
    if (pattern[i] == '-') c.kind = ChunkKind::Raw;
    chunks.push_back(std::move(c));
  }
  m.channel->seal_batch(chunks);
  for (size_t i = 0; i < chunks.size(); ++i) {
    INFO("chunk " << i << " '" << pattern[i] << "'");
    CHECK(chunks[i].encrypt_with == nullptr);
    std::vector<uint8_t> got(chunks[i].buffer.data(), chunks[i].buffer.data() + chunks[i].buffer.size());
    // The security header is never encrypted.
    CHECK(std::equal(got.begin(), got.begin() + kSymmetricHeaderSize, plain[i].begin()));
    if (pattern[i] == 'a' || pattern[i] == 'b') {
      CHECK(got != plain[i]);
      std::span<uint8_t> encrypted(got.data() + kSymmetricHeaderSize, got.size() - kSymmetricHeaderSize);
      REQUIRE((pattern[i] == 'a' ? a : b).decrypt(encrypted));
    }
    CHECK(got == plain[i]);
  }
  for (auto& c : chunks) m.pool.release(std::move(c.buffer));
  m.turn();
  CHECK_FALSE(m.events.closed);
}
