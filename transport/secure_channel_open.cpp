// SecureChannel (secure_channel.hpp), the OpenSecureChannel half (Part 6 §6.7.2, §6.7.4): issue and
// renewal, a request in one chunk or several, SecurityPolicy None on the shard and the secured policies'
// RSA work on the handshake pool.
#include "transport/secure_channel.hpp"

#include <algorithm>
#include <cstring>

#include <asio/post.hpp>

#include "transport/handshake_pool.hpp"
#include "transport/secure_channel_internal.hpp"
#include "transport/security/asymmetric.hpp"
#include "transport/security/secret.hpp"

namespace opcuad::transport {

using namespace channel_internal;

namespace {

// The sequence header and the OpenSecureChannelRequest after an OPN's security header (in clear with None,
// decrypted otherwise); false when they do not decode.
bool decode_open_request(ua::Decoder& d, uint32_t& sequence, uint32_t& request_id,
                         ua::OpenSecureChannelRequest& request) {
  sequence = d.read_u32();
  request_id = d.read_u32();
  ua::NodeId type;
  ua::decode(d, type);
  ua::decode(d, request);
  return d.ok() && type.is_ns0(ua::OpenSecureChannelRequest::binary_encoding_id);
}

// Joins the plaintexts (SequenceHeader | body) of one message's chunks: the first chunk's sequence header,
// then every body. `later` gets the sequence numbers of the chunks after the first. False when a part is
// shorter than its sequence header or names another RequestId (Part 6 §6.7.2.4: every chunk of a message
// carries its RequestId).
bool join_chunks(std::span<const std::span<const uint8_t>> parts, std::vector<uint8_t>& out,
                 std::vector<uint32_t>& later) {
  out.clear();
  later.clear();
  uint32_t request_id = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto part = parts[i];
    if (part.size() < 8) return false;
    uint32_t sequence, id;
    std::memcpy(&sequence, part.data(), 4);
    std::memcpy(&id, part.data() + 4, 4);
    if (i == 0) {
      request_id = id;
      out.assign(part.begin(), part.end());
      continue;
    }
    if (id != request_id) return false;
    later.push_back(sequence);
    out.insert(out.end(), part.begin() + 8, part.end());
  }
  return true;
}

// Whether the chunks of one message, whose first chunk's plaintext is `first_part`, carry consecutive
// sequence numbers (Part 6 §6.7.2.4, the wrap rule included); checked before their body is decoded.
bool consecutive(std::span<const uint8_t> first_part, std::span<const uint32_t> later) noexcept {
  if (later.empty()) return true;
  if (first_part.size() < 4) return false;
  uint32_t previous;
  std::memcpy(&previous, first_part.data(), 4);
  for (const uint32_t next : later) {
    const bool step = next == previous + 1 && previous != UINT32_MAX;
    const bool wrapped = previous > kWrapThreshold && next < 1024;
    if (!step && !wrapped) return false;
    previous = next;
  }
  return true;
}

// The OpenSecureChannel response before sealing holds the server nonce the keys come from.
void release_wiped(BufferPool& pool, ua::ByteBuffer& buf) {
  security::wipe(std::span<uint8_t>(buf.data(), buf.size()));
  pool.release(std::move(buf));
}

}  // namespace

bool SecureChannel::offered(const security::Policy& p, ua::MessageSecurityMode mode) const noexcept {
  if (config_.security_offers.empty())
    return p.id == security::PolicyId::None && mode == ua::MessageSecurityMode::None;
  for (const SecurityOffer& o : config_.security_offers) {
    if (o.policy == &p && o.mode == mode) return true;
  }
  return false;
}

bool SecureChannel::handle_open(const FrameHeader& h, std::span<const uint8_t> chunk) {
  ua::Decoder d(chunk.subspan(kHeaderSize), config_.decode_limits);
  const uint32_t channel_id = d.read_u32();
  ua::String policy_uri;
  ua::ByteString certificate, thumbprint;
  ua::decode(d, policy_uri);
  ua::decode(d, certificate);
  ua::decode(d, thumbprint);
  if (!d.ok()) {
    close(status::BadDecodingError, "malformed asymmetric security header");
    return false;
  }
  const security::Policy* p = security::find_policy(policy_uri.view());
  bool any_mode = false;
  if (p != nullptr && p->uri == policy_uri.view()) {
    for (auto mode : {ua::MessageSecurityMode::None, ua::MessageSecurityMode::Sign,
                      ua::MessageSecurityMode::SignAndEncrypt})
      any_mode = any_mode || offered(*p, mode);
    // SecurityPolicy None is accepted on every endpoint, for discovery only (discovery_only()).
    any_mode = any_mode || p->id == security::PolicyId::None;
  }
  if (!any_mode) {
    close(status::BadSecurityPolicyRejected, "this endpoint does not offer the security policy");
    return false;
  }
  if (state_ == State::Open && p != policy_) {
    close(status::BadSecurityPolicyRejected, "a renewal must keep the channel's security policy");
    return false;
  }
  if (state_ == State::Open && channel_id != id_) {
    close(status::BadSecureChannelIdInvalid, "renewal for another secure channel");
    return false;
  }
  const size_t header_end = static_cast<size_t>(d.position() - chunk.data());
  // A request of several chunks: each carries the same security header (Part 6 §6.7.2.3) and, when
  // secured, is signed and encrypted on its own; all of them are kept until the final one.
  if (!open_chunks_.empty()) {
    const std::vector<uint8_t>& first = open_chunks_.front();
    if (first.size() < header_end ||
        !std::equal(chunk.begin() + 8, chunk.begin() + static_cast<ptrdiff_t>(header_end),
                    first.begin() + 8)) {
      close(status::BadSecurityChecksFailed,
            "the chunks of an OpenSecureChannel request differ in their security header");
      return false;
    }
  }
  if (h.chunk == ChunkType::Intermediate) {
    if (open_chunks_.size() + 1 >= kMaxOpenChunks ||
        open_bytes_ + chunk.size() > config_.max_message_size_before_session) {
      close(status::BadTcpMessageTooLarge, "OpenSecureChannel request of too many chunks");
      return false;
    }
    open_bytes_ += chunk.size();
    open_chunks_.emplace_back(chunk.begin(), chunk.end());
    return true;
  }
  std::vector<std::vector<uint8_t>> chunks = std::move(open_chunks_);
  open_chunks_.clear();
  open_bytes_ = 0;
  if (p->id == security::PolicyId::None) {
    uint32_t sequence = 0, request_id = 0;
    ua::OpenSecureChannelRequest request;
    if (chunks.empty()) {
      if (!decode_open_request(d, sequence, request_id, request)) {
        close(status::BadDecodingError, "malformed OpenSecureChannel request");
        return false;
      }
      return finish_open(*p, sequence, {}, request_id, request, {}, nullptr);
    }
    std::vector<std::span<const uint8_t>> parts;
    for (const auto& c : chunks) parts.push_back(std::span<const uint8_t>(c).subspan(header_end));
    parts.push_back(chunk.subspan(header_end));
    std::vector<uint8_t> joined;
    std::vector<uint32_t> later;
    if (!join_chunks(parts, joined, later)) {
      close(status::BadDecodingError, "the chunks of the OpenSecureChannel request do not belong together");
      return false;
    }
    if (!consecutive(joined, later)) {
      close(status::BadSequenceNumberInvalid, "sequence number out of order");
      return false;
    }
    ua::Decoder whole(joined, config_.decode_limits);
    if (!decode_open_request(whole, sequence, request_id, request)) {
      close(status::BadDecodingError, "malformed OpenSecureChannel request");
      return false;
    }
    return finish_open(*p, sequence, later, request_id, request, {}, nullptr);
  }

  // Secured: the rest is encrypted for our certificate and signed with the client's (Part 6 §6.7.2.3).
  const security::ServerIdentity* identity = config_.identity;
  if (identity == nullptr || !config_.validate_certificate) {
    close(status::BadSecurityPolicyRejected, "no server certificate is configured");
    return false;
  }
  if (thumbprint.size() != identity->thumbprint.size() ||
      std::memcmp(thumbprint.bytes().data(), identity->thumbprint.data(), thumbprint.size()) != 0) {
    close(status::BadCertificateInvalid, "the request is encrypted for another certificate");
    return false;
  }
  std::vector<uint8_t> chain(certificate.bytes().begin(), certificate.bytes().end());
  if (state_ == State::Open && chain != client_chain_) {
    close(status::BadSecurityChecksFailed, "a renewal must come from the same client certificate");
    return false;
  }
  const size_t encrypted_from = header_end;
  chunks.emplace_back(chunk.begin(), chunk.end());
  handshake_pending_ = true;
  run_handshake([self = shared_from_this(), p, chunks = std::move(chunks), chain = std::move(chain),
                 encrypted_from, identity]() mutable {
    security::CertificateVerdict verdict = self->config_.validate_certificate(chain, *p);
    ua::StatusCode st = verdict.status;
    std::string reason = verdict.reason;
    std::vector<uint8_t> plaintext;
    std::vector<uint32_t> later;
    // An untrusted certificate is still opened with: its holder proves it has the key before the PKI
    // keeps a copy in rejected/ (verdict.record_after_proof); the channel is refused all the same.
    const bool prove_only = !st.is_good() && verdict.record_after_proof && verdict.public_key;
    if (st.is_good() || prove_only) {
      // Every chunk is decrypted and verified on its own, then the bodies are joined.
      ua::StatusCode proof = status::Good;
      std::string proof_reason;
      std::vector<std::vector<uint8_t>> opened;
      for (const auto& c : chunks) {
        security::OpenedChunk o = security::open_asymmetric(*p, identity->private_key.get(),
                                                            verdict.public_key.get(), c, encrypted_from);
        if (!o.status.is_good()) {
          proof = o.status;
          proof_reason = std::move(o.reason);
          break;
        }
        opened.push_back(std::move(o.plaintext));
      }
      const bool recorded = proof.is_good() && verdict.record_after_proof && verdict.record_after_proof();
      if (prove_only) {
        if (!proof.is_good())
          reason += "; its OpenSecureChannel signature does not verify, so it is not kept";
      } else if (!proof.is_good()) {
        st = proof;
        reason = std::move(proof_reason);
      } else if (verdict.record_after_proof && !recorded) {
        // Trust on first use that could not be recorded (the write rate, the cap): not trusted.
        st = verdict.status = status::BadCertificateUntrusted;
        reason = verdict.reason = verdict.reason + ", but it could not be recorded in trusted/certs";
      } else {
        std::vector<std::span<const uint8_t>> parts(opened.begin(), opened.end());
        if (!join_chunks(parts, plaintext, later)) {
          st = status::BadSecurityChecksFailed;
          reason = "the chunks of the OpenSecureChannel request name different requests";
        }
      }
      for (auto& o : opened) security::wipe(o);  // the client nonce, which the keys come from
    }
    // As in seal_open_response: the reference moves to the completion, off this worker thread.
    asio::io_context& ctx = self->ctx_;
    asio::post(ctx,
               [self = std::move(self), p, st, reason = std::move(reason), plaintext = std::move(plaintext),
                later = std::move(later), verdict = std::move(verdict), chain = std::move(chain)]() mutable {
                 self->opened(*p, st, std::move(reason), std::move(plaintext), std::move(later),
                              std::move(verdict), std::move(chain));
               });
  });
  return false;  // nothing more is read until the handshake is done
}

void SecureChannel::run_handshake(std::function<void()> job) {
  if (config_.handshakes == nullptr) return job();
  if (!config_.handshakes->submit(std::move(job))) {
    handshake_pending_ = false;
    close(status::BadTcpNotEnoughResources, "too many secure channel handshakes waiting");
  }
}

void SecureChannel::opened(const security::Policy& p, StatusCode st, std::string reason,
                           std::vector<uint8_t> plaintext, std::vector<uint32_t> sequences,
                           security::CertificateVerdict verdict, std::vector<uint8_t> chain) {
  if (state_ >= State::Closing) return;
  if (!st.is_good()) {
    handshake_pending_ = false;
    if (!verdict.status.is_good()) {
      TransportStats::add(stats_.certificate_rejections);
      report_certificate_refused(config_.events, peer_address_, verdict.thumbprint_hex, verdict.subject,
                                 verdict.status);
      handler_.on_certificate_refused(*this, chain, verdict.status);
    }
    // The client learns only that the checks failed; the log gets the certificate status and why
    // (Part 4 §6.1.3 leaves the detail to the Server; telling an unknown client more helps it probe).
    if (config_.warn) {
      config_.warn(std::string("secure channel refused: ") + std::string(st.name()) + ": " + reason);
    }
    close(status::BadSecurityChecksFailed, "security checks failed");
    return;
  }
  if (!consecutive(plaintext, sequences)) {
    handshake_pending_ = false;
    close(status::BadSequenceNumberInvalid, "sequence number out of order");
    return;
  }
  ua::Decoder d(plaintext, config_.decode_limits);
  uint32_t sequence = 0, request_id = 0;
  ua::OpenSecureChannelRequest request;
  const bool decoded = decode_open_request(d, sequence, request_id, request);
  security::wipe(plaintext);
  if (!decoded) {
    handshake_pending_ = false;
    close(status::BadDecodingError, "malformed OpenSecureChannel request");
    return;
  }
  if (!finish_open(p, sequence, sequences, request_id, request, std::move(chain), &verdict)) {
    handshake_pending_ = false;
  }
  security::wipe(request.client_nonce.str_mut());
}

bool SecureChannel::finish_open(const security::Policy& p, uint32_t sequence,
                                std::span<const uint32_t> later_sequences, uint32_t request_id,
                                const ua::OpenSecureChannelRequest& request, std::vector<uint8_t> chain,
                                security::CertificateVerdict* verdict) {
  const bool secured = p.id != security::PolicyId::None;
  bool in_order = accept_sequence_number(sequence);
  for (const uint32_t later : later_sequences) in_order = in_order && accept_sequence_number(later);
  if (!in_order) {
    close(status::BadSequenceNumberInvalid, "sequence number out of order");
    return false;
  }
  const bool for_discovery = p.id == security::PolicyId::None &&
                             request.security_mode == ua::MessageSecurityMode::None &&
                             !offered(p, request.security_mode);
  if (!offered(p, request.security_mode) && !for_discovery) {
    close(status::BadSecurityModeRejected, "this endpoint does not offer the security mode with this policy");
    return false;
  }
  if (state_ == State::Open && request.security_mode != mode_) {
    close(status::BadSecurityModeRejected, "a renewal must keep the channel's security mode");
    return false;
  }
  // Part 6 §6.7.5: each side's nonce has the policy's length (the keys are derived from both).
  if (secured && request.client_nonce.size() != p.nonce_length) {
    close(status::BadNonceInvalid, "the client nonce does not have the policy's length");
    return false;
  }
  std::vector<uint8_t> server_nonce(secured ? p.nonce_length : 0);
  if (!security::random_bytes(server_nonce)) {
    close(status::BadInternalError, "no random numbers");
    return false;
  }
  SecurityToken* issued = nullptr;
  if (request.request_type == ua::SecurityTokenRequestType::Issue) {
    if (state_ != State::AwaitOpen) {
      close(status::BadRequestTypeInvalid, "the secure channel is already open: renew it instead");
      return false;
    }
    id_ = ids_.next();
    opened_at_ = std::chrono::steady_clock::now();
    issued = &tokens_.issue(revise_token_lifetime(request.requested_lifetime, config_), opened_at_);
    set_security(p, request.security_mode);
    discovery_only_ = for_discovery;
    stats_.channel_opened(stats_policy());
    if (secured) {
      client_chain_ = std::move(chain);
      const auto leaf = security::leaf_certificate(client_chain_);
      client_certificate_.assign(leaf.begin(), leaf.end());
      client_key_ = verdict->public_key;
    }
    // SecurityPolicy None has no client certificate; the secured policies pass its thumbprint.
    report_channel_opened(config_.events, peer_address_, id_, p.uri,
                          mode_ == ua::MessageSecurityMode::SignAndEncrypt ? "SignAndEncrypt"
                          : mode_ == ua::MessageSecurityMode::Sign         ? "Sign"
                                                                           : "None",
                          secured ? std::string_view(verdict->thumbprint_hex) : std::string_view());
  } else if (request.request_type == ua::SecurityTokenRequestType::Renew) {
    if (state_ != State::Open) {
      close(status::BadRequestTypeInvalid, "nothing to renew: no secure channel is open");
      return false;
    }
    // The tokens issued before stay valid until they expire or the client uses a newer one (Part 4
    // §5.5.2; TokenSet::renew()).
    issued = &tokens_.renew(revise_token_lifetime(request.requested_lifetime, config_),
                            std::chrono::steady_clock::now());
  } else {
    close(status::BadRequestTypeInvalid, "unknown security token request type");
    return false;
  }
  if (secured) {
    // Part 6 §6.7.5: the client's keys from (server nonce, client nonce), ours from (client nonce, server
    // nonce).
    const std::span<const uint8_t> client_nonce = request.client_nonce.bytes();
    auto keys = std::make_shared<TokenKeys>();
    if (!keys->receive.set_keys(p, security::derive_keys(p, server_nonce, client_nonce)) ||
        !keys->send.set_keys(p, security::derive_keys(p, client_nonce, server_nonce))) {
      close(status::BadInternalError, "the symmetric keys could not be set up");
      return false;
    }
    issued->keys = std::move(keys);
  }
  state_ = State::Open;

  ua::OpenSecureChannelResponse response;
  response.response_header.timestamp = ua::DateTime::now();
  response.response_header.request_handle = request.request_header.request_handle;
  response.server_protocol_version = 0;
  response.security_token =
      ua::ChannelSecurityToken{id_, issued->token_id, issued->created_at, issued->lifetime_ms};
  response.server_nonce = secured ? ua::ByteString::from_bytes(server_nonce) : ua::ByteString("");

  ua::ByteBuffer buf = pool_.acquire();
  ua::Encoder e(buf);
  e.write_u32(static_cast<uint32_t>(MessageType::Open) | uint32_t{'F'} << 24);
  e.write_u32(0);  // size
  e.write_u32(id_);
  ua::encode(e, ua::String(std::string(p.uri)));
  if (secured) {
    const auto thumbprint = security::sha1(client_certificate_);
    ua::encode(e, ua::ByteString::from_bytes(config_.identity->certificate));
    ua::encode(e, ua::ByteString::from_bytes(thumbprint));
  } else {
    ua::encode(e, ua::ByteString());  // no certificate with None
    ua::encode(e, ua::ByteString());  // no thumbprint
  }
  const auto sequence_offset = static_cast<uint32_t>(buf.size());
  if (!secured) {
    // One chunk: without a certificate the response is ~100 bytes, and every receive buffer is >= 8192.
    e.write_u32(0);  // sequence number, stamped at send time
    e.write_u32(request_id);
    ua::encode(e, ua::NodeId(0, ua::OpenSecureChannelResponse::binary_encoding_id));
    ua::encode(e, response);
    put_u32(buf.data() + 4, static_cast<uint32_t>(buf.size()));
    writer_.enqueue(OutboundChunk{std::move(buf), ChunkKind::Asymmetric, sequence_offset, true, false});
    return true;
  }
  e.write_u32(0);  // sequence numbers: seal_open_response() numbers the chunks
  e.write_u32(request_id);
  ua::encode(e, ua::NodeId(0, ua::OpenSecureChannelResponse::binary_encoding_id));
  ua::encode(e, response);
  security::wipe(server_nonce);
  security::wipe(response.server_nonce.str_mut());
  return seal_open_response(p, buf, sequence_offset, request_id);
}

bool SecureChannel::seal_open_response(const security::Policy& p, ua::ByteBuffer& buf, size_t sequence_offset,
                                       uint32_t request_id) {
  // Each chunk is SequenceHeader | body | padding | signature, encrypted in blocks of the client's key,
  // behind our security header; it must fit the client's receive buffer (Part 6 §6.7.2.3). With a
  // certificate chain too large for that buffer no chunk can be sent: the channel closes.
  const std::span<const uint8_t> header(buf.data(), sequence_offset);
  const std::span<const uint8_t> body(buf.data() + sequence_offset + 8, buf.size() - sequence_offset - 8);
  const size_t receiver_bytes = security::rsa_key_bytes(client_key_.get());
  const size_t own_bytes = security::rsa_key_bytes(config_.identity->private_key.get());
  const size_t block = security::rsa_plaintext_block(p.asymmetric_encryption, receiver_bytes);
  const size_t padding_size_bytes = block > 256 ? 2 : 1;
  const size_t send_size = chunker_.send_buffer_size();
  const size_t blocks =
      receiver_bytes ? (send_size - std::min<size_t>(send_size, header.size())) / receiver_bytes : 0;
  const size_t overhead = 8 + own_bytes + padding_size_bytes;
  if (blocks * block <= overhead) {
    release_wiped(pool_, buf);
    close(status::BadTcpMessageTooLarge, "the server certificate does not fit the client's receive buffer");
    return false;
  }
  const size_t capacity = blocks * block - overhead;
  const size_t count = std::max<size_t>(1, (body.size() + capacity - 1) / capacity);
  if (chunker_.peer_max_chunk_count() != 0 && count > chunker_.peer_max_chunk_count()) {
    release_wiped(pool_, buf);
    close(status::BadTcpMessageTooLarge,
          "the OpenSecureChannel response needs more chunks than the client takes");
    return false;
  }
  // The sequence numbers are inside the signed, encrypted part: number the chunks now and hold everything
  // queued behind them until they are sealed (OutputWriter::hold).
  std::vector<std::vector<uint8_t>> plain(count);
  for (size_t i = 0; i < count; ++i) {
    const auto piece = body.subspan(i * capacity, std::min(capacity, body.size() - i * capacity));
    std::vector<uint8_t>& c = plain[i];
    c.reserve(header.size() + 8 + piece.size());
    c.assign(header.begin(), header.end());
    c[3] = i + 1 == count ? 'F' : 'C';
    const uint32_t seq = next_send_sequence_;
    next_send_sequence_ = seq > kWrapThreshold ? 1 : seq + 1;
    uint8_t sequence_header[8];
    put_u32(sequence_header, seq);
    put_u32(sequence_header + 4, request_id);
    c.insert(c.end(), sequence_header, sequence_header + 8);
    c.insert(c.end(), piece.begin(), piece.end());
  }
  release_wiped(pool_, buf);
  writer_.hold();
  run_handshake([self = shared_from_this(), p = &p, plain = std::move(plain),
                 encrypted_from = sequence_offset, identity = config_.identity, key = client_key_]() mutable {
    bool ok = true;
    std::vector<uint8_t> wire;
    for (auto& c : plain) {
      ok = ok && security::seal_asymmetric(*p, identity->private_key.get(), key.get(), c, encrypted_from);
      if (ok) wire.insert(wire.end(), c.begin(), c.end());
      if (!ok) security::wipe(c);  // not sealed: still the plaintext with the server nonce
    }
    // The job gives its reference up to the completion: the channel is never destroyed on this worker
    // thread (its timers belong to its io_context, which may be gone by the time the worker drops the job).
    asio::io_context& ctx = self->ctx_;
    asio::post(ctx, [self = std::move(self), ok, wire = std::move(wire)]() mutable {
      self->sealed(ok, std::move(wire));
    });
  });
  return state_ < State::Closing;
}

void SecureChannel::sealed(bool ok, std::vector<uint8_t> chunk) {
  if (state_ >= State::Closing) return;
  if (!ok) {
    handshake_pending_ = false;
    close(status::BadSecurityChecksFailed, "the OpenSecureChannel response could not be secured");
    return;
  }
  ua::ByteBuffer buf = pool_.acquire();
  buf.append(chunk.data(), chunk.size());
  writer_.send_first(OutboundChunk{std::move(buf), ChunkKind::Raw, 0, true, false});
  handshake_pending_ = false;
  process();  // chunks that arrived meanwhile
  if (events_ && reading_allowed()) events_->resume_reading();
}

}  // namespace opcuad::transport
