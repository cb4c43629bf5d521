// secure_channel_fuzz seeds.
#include "tests/fuzz/seed_corpus.hpp"

namespace opcuad::fuzz::seeds {

// secure_channel_fuzz inputs (tests/fuzz/secure_channel_fuzz_input.hpp), for every policy and mode: valid
// sealed requests (whole, in two chunks, around a renewal and the switch to the new token, then CLO), a
// tampered one, an unsealed one; and valid, renewing and unsealed OPN requests.
void write_secure_channel_seeds(const std::filesystem::path& dir) {
  namespace sf = opcuad::fuzz::secure;
  std::filesystem::create_directories(dir);
  // A symmetric chunk before sealing; the target writes the ids, the sequence number and the size.
  auto chunk = [](const char* type, char c, uint32_t request_id, const ByteBuffer& body) {
    ByteBuffer b;
    Encoder e(b);
    e.write_raw(type, 3);
    e.write_u8(static_cast<uint8_t>(c));
    for (int i = 0; i < 4; ++i) e.write_u32(0);  // size, channel id, token id, sequence number
    e.write_u32(request_id);
    b.append(body.data(), body.size());
    return std::vector<uint8_t>(b.data(), b.data() + b.size());
  };
  ByteBuffer read;
  {
    Encoder e(read);
    ReadRequest r;
    r.request_header = header();
    for (uint32_t i = 0; i < 3; ++i) r.nodes_to_read.push_back(ReadValueId{NodeId(2, i), 13, String(), {}});
    encode(e, NodeId(0, ReadRequest::binary_encoding_id));
    encode(e, r);
  }
  ByteBuffer first, second;
  first.append(read.data(), read.size() / 2);
  second.append(read.data() + read.size() / 2, read.size() - read.size() / 2);
  const auto whole = chunk("MSG", 'F', 2, read);
  const uint8_t sealed = sf::kSeal | sf::kFixHeader | sf::kPad | sf::kFixSeq;
  std::vector<uint8_t> tampered = {30, 0, 0x04};
  tampered.insert(tampered.end(), whole.begin(), whole.end());

  const auto& client = opcuad::fuzz::fuzz_client();
  const auto& server = opcuad::fuzz::fuzz_server();
  // An OPN chunk before sealing (the target pads, signs and encrypts it).
  auto open = [&](const opcuad::security::Policy& p, MessageSecurityMode mode,
                  SecurityTokenRequestType type) {
    ByteBuffer b;
    Encoder e(b);
    e.write_raw("OPNF\0\0\0\0", 8);
    e.write_u32(0);  // channel id: the target writes it (kFixHeader)
    encode(e, String(std::string(p.uri)));
    encode(e, ByteString::from_bytes(client.certificate));
    encode(e, ByteString::from_bytes(server.thumbprint));
    e.write_u32(type == SecurityTokenRequestType::Issue ? 1 : 2);
    e.write_u32(type == SecurityTokenRequestType::Issue ? 1 : 2);
    OpenSecureChannelRequest req;
    req.request_type = type;
    req.security_mode = mode;
    req.client_nonce = ByteString::from_bytes(std::vector<uint8_t>(p.nonce_length, 0x42));
    req.requested_lifetime = 600000;
    encode(e, NodeId(0, OpenSecureChannelRequest::binary_encoding_id));
    encode(e, req);
    return std::vector<uint8_t>(b.data(), b.data() + b.size());
  };

  int n = 0;
  auto put = [&](const std::string& input) {
    std::ofstream(dir / ("seed-" + std::to_string(n++)), std::ios::binary)
        .write(input.data(), static_cast<std::streamsize>(input.size()));
  };
  static constexpr opcuad::security::PolicyId kIds[sf::kPolicies] = {
      opcuad::security::PolicyId::Basic256Sha256, opcuad::security::PolicyId::Aes128_Sha256_RsaOaep,
      opcuad::security::PolicyId::Aes256_Sha256_RsaPss};
  for (uint8_t policy = 0; policy < sf::kPolicies; ++policy) {
    for (bool encrypt : {false, true}) {
      const std::string sym(1, static_cast<char>(sf::selector(policy, encrypt, sf::kSymmetric)));
      std::string in = sym;
      sf::append_record(in, sealed, whole);
      put(in);
      in = sym;
      sf::append_record(in, sealed, chunk("MSG", 'C', 3, first));
      sf::append_record(in, sealed | sf::kSplit, chunk("MSG", 'F', 3, second));
      put(in);
      in = sym;
      sf::append_record(in, sealed, whole);
      sf::append_record(in, sf::kRenew, {});
      sf::append_record(in, sealed, whole);  // still the old token: it stays valid until the switch
      sf::append_record(in, sealed | sf::kSwitch, whole);
      sf::append_record(in, sealed, chunk("CLO", 'F', 4, ByteBuffer()));
      put(in);
      in = sym;
      sf::append_record(in, sealed | sf::kTamper, tampered);
      put(in);
      in = sym;
      sf::append_record(in, sf::kFixHeader | sf::kFixSeq, whole);  // not sealed
      put(in);

      const auto& p = opcuad::security::policy(kIds[policy]);
      const auto mode = encrypt ? MessageSecurityMode::SignAndEncrypt : MessageSecurityMode::Sign;
      const std::string asym(1, static_cast<char>(sf::selector(policy, encrypt, sf::kAsymmetric)));
      in = asym;
      sf::append_record(in, sf::kSeal, open(p, mode, SecurityTokenRequestType::Issue));
      put(in);
      in = asym;
      sf::append_record(in, sf::kSeal, open(p, mode, SecurityTokenRequestType::Issue));
      sf::append_record(in, sf::kSeal | sf::kFixHeader, open(p, mode, SecurityTokenRequestType::Renew));
      put(in);
      in = asym;
      sf::append_record(in, sf::kFixHeader, open(p, mode, SecurityTokenRequestType::Issue));
      put(in);
    }
  }
  std::printf("wrote %d secure channel seeds\n", n);
}

}  // namespace opcuad::fuzz::seeds
