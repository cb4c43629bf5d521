// SecureChannel (secure_channel.hpp), the framing half: the channel's lifetime, Hello, MSG/CLO chunks
// (security, sequence numbers; the tokens and the reassembly are TokenSet's and ChunkReassembly's) and
// the send path (the splitting is ResponseChunker's). The OpenSecureChannel handshake is in
// secure_channel_open.cpp.
#include "transport/secure_channel.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include <asio/post.hpp>

#include "transport/secure_channel_internal.hpp"
#include "transport/security/asymmetric.hpp"
#include "transport/security/secret.hpp"
#include "ua/endpoint_url.hpp"
#include "ua/generated/node_ids_object.hpp"

namespace opcuad::transport {

using namespace channel_internal;

namespace {

// A HEL is small (five numbers and a URL of at most 4096 bytes); nothing larger is read before it.
constexpr uint32_t kMaxHelloSize = kHeaderSize + 20 + 4 + kMaxEndpointUrlLength;
// Room for reading a batch of small chunks behind a whole one, once a session is active.
constexpr size_t kReceiveBatchRoom = 65536;

}  // namespace

SecureChannel::SecureChannel(asio::io_context& ctx, Sink& sink, ChannelEvents& events, BufferPool& pool,
                             TransportStats& stats, const TransportConfig& config, ServiceHandler& handler,
                             ChannelIdSource& ids)
    : ctx_(ctx),
      events_(&events),
      pool_(pool),
      stats_(stats),
      config_(config),
      handler_(handler),
      ids_(ids),
      writer_(ctx, sink, *this, pool, stats),
      timer_(ctx),
      owner_(std::this_thread::get_id()),
      created_(std::chrono::steady_clock::now()),
      receive_buffer_size_(std::max(config.receive_buffer_size, kMinBufferSize)),
      rx_(kMaxHelloSize * 2),
      tokens_(ids.random_token_start()),
      chunker_(std::max(config.send_buffer_size, kMinBufferSize)) {
  writer_.on_written([this](size_t responses) { written(responses); });
  writer_.on_error([this](std::error_code) { finish(); });
}

SecureChannel::~SecureChannel() = default;

void SecureChannel::assert_owner() const noexcept {
  assert(std::this_thread::get_id() == owner_ && "a channel is touched only by its own shard's thread");
}

void SecureChannel::start() {
  assert_owner();
  timer_.expires_after(config_.tick);
  timer_.async_wait([weak = weak_from_this()](std::error_code ec) {
    if (auto self = weak.lock(); self && !ec) self->tick();
  });
}

void SecureChannel::tick() {
  if (state_ >= State::Closed) return;
  const auto now = std::chrono::steady_clock::now();
  // Before a session exists the client has authenticated nothing: every stage has a deadline, and a
  // missed one is answered ERR BadTimeout (Part 6 §7.1.5: "it is up to the Server to determine when a
  // timeout occurs"), the same status as a missing Hello.
  if (state_ == State::AwaitHello && now - created_ > config_.hello_timeout) {
    close(status::BadTimeout, "no Hello received in time");
  } else if (state_ == State::AwaitOpen && now - hello_at_ > config_.open_timeout) {
    close(status::BadTimeout, "no OpenSecureChannel received in time");
  } else if (state_ == State::Open && tokens_.newest_expired(now)) {
    close(status::BadSecureChannelTokenUnknown, "the security token expired without renewal");
  } else if (state_ == State::Open && !session_active_ &&
             now - opened_at_ > config_.session_activation_timeout) {
    close(status::BadTimeout, "no session activated on the secure channel in time");
  } else if (state_ == State::Open) {
    tokens_.expire(now);
  }
  rx_.tick();
  if (auto started = writer_.write_started(); started && now - *started > config_.send_timeout) {
    finish();  // the peer accepts no bytes: nothing more can be said to it
    return;
  }
  start();
}

std::span<uint8_t> SecureChannel::receive_space() {
  return rx_.space(reading_allowed());
}

void SecureChannel::on_received(size_t n) {
  assert_owner();
  rx_.received(n);
  process();
}

void SecureChannel::process() {
  if (processing_) return;  // a handler's synchronous reply re-entered: the outer loop carries on
  processing_ = true;
  auto self = shared_from_this();  // a handler may close the channel and drop the owner's reference
  while (state_ < State::Closing && !paused_ && !handshake_pending_) {
    FrameHeader h{};
    std::span<uint8_t> chunk;  // secured chunks are decrypted in place
    StatusCode error;
    const uint32_t limit = state_ == State::AwaitHello ? kMaxHelloSize : receive_buffer_size_;
    const ReceiveBuffer::Frame frame = rx_.next(limit, h, chunk, error);
    if (frame == ReceiveBuffer::Frame::NeedMore) break;
    if (frame == ReceiveBuffer::Frame::Malformed) {
      close(error, "malformed message header");
      break;
    }
    if (frame == ReceiveBuffer::Frame::TooLarge) {
      close(error, "chunk larger than the negotiated receive buffer");
      break;
    }
    if (!handle_chunk(h, chunk)) break;
  }
  rx_.compact();
  processing_ = false;
}

bool SecureChannel::handle_chunk(const FrameHeader& h, std::span<uint8_t> chunk) {
  switch (h.type) {
    case MessageType::Hello:
      if (state_ != State::AwaitHello || h.chunk != ChunkType::Final) {
        close(status::BadTcpMessageTypeInvalid, "unexpected Hello");
        return false;
      }
      return handle_hello(chunk.subspan(kHeaderSize));
    case MessageType::Open:
      if (state_ == State::AwaitHello || h.chunk == ChunkType::Abort) {
        close(status::BadTcpMessageTypeInvalid, "OpenSecureChannel before Hello, or aborted");
        return false;
      }
      return handle_open(h, chunk);
    case MessageType::Message:
    case MessageType::Close:
      if (state_ != State::Open) {
        close(status::BadSecureChannelIdInvalid, "no secure channel is open");
        return false;
      }
      return handle_symmetric(h, chunk);
    default:
      close(status::BadTcpMessageTypeInvalid, "a server does not accept this message type");
      return false;
  }
}

bool SecureChannel::handle_hello(std::span<const uint8_t> body) {
  HelloMessage hello;
  StatusCode s = decode_hello(body, hello);
  if (!s.is_good()) {
    close(s == status::BadTcpEndpointUrlInvalid ? s : status::BadTcpMessageTypeInvalid, "malformed Hello");
    return false;
  }
  if (hello.receive_buffer_size < kMinBufferSize || hello.send_buffer_size < kMinBufferSize) {
    close(status::BadConnectionRejected, "buffer sizes below 8192 bytes");
    return false;
  }
  if (!ua::has_opc_tcp_scheme(hello.endpoint_url.view())) {
    close(status::BadTcpEndpointUrlInvalid, "the endpoint URL must start with opc.tcp://");
    return false;
  }
  endpoint_url_ = std::string(hello.endpoint_url.view());
  // Part 6 §7.1.2.4: each side's send size is at most the other side's receive size.
  const uint32_t send_buffer_size = std::min(chunker_.send_buffer_size(), hello.receive_buffer_size);
  chunker_.set_limits(send_buffer_size, hello.max_message_size, hello.max_chunk_count);
  receive_buffer_size_ = std::min(receive_buffer_size_, hello.send_buffer_size);
  const uint32_t body_per_chunk = receive_buffer_size_ - static_cast<uint32_t>(kSymmetricPrefix);
  const uint32_t max_request_chunks = config_.max_chunk_count
                                          ? config_.max_chunk_count
                                          : (config_.max_message_size + body_per_chunk - 1) / body_per_chunk;
  reassembly_.set_max_chunks(max_request_chunks);
  // At most room for one whole chunk (plus, once a session is active, a batch of small ones behind it);
  // it starts at what most requests need and grows on demand (receive_space()).
  const size_t rx_max = static_cast<size_t>(receive_buffer_size_) + (session_active_ ? kReceiveBatchRoom : 0);
  rx_.reset(rx_max, std::min(rx_max, ReceiveBuffer::kInitialCapacity));
  hello_at_ = std::chrono::steady_clock::now();

  AcknowledgeMessage ack{0, receive_buffer_size_, send_buffer_size, config_.max_message_size,
                         max_request_chunks};
  std::string bytes = encode_acknowledge(ack);
  ua::ByteBuffer buf = pool_.acquire();
  buf.append(bytes.data(), bytes.size());
  writer_.enqueue(OutboundChunk{std::move(buf), ChunkKind::Raw, 0, true, false});
  state_ = State::AwaitOpen;
  return true;
}

bool SecureChannel::accept_sequence_number(uint32_t seq) noexcept {
  if (!have_received_sequence_) {
    have_received_sequence_ = true;
    last_received_sequence_ = seq;
    return true;
  }
  const uint32_t last = last_received_sequence_;
  const bool next = seq == last + 1 && last != UINT32_MAX;
  const bool wrapped = last > kWrapThreshold && seq < 1024;
  if (!next && !wrapped) return false;
  last_received_sequence_ = seq;
  return true;
}

bool SecureChannel::unseal_symmetric(std::span<uint8_t> chunk, const SecurityToken& token, size_t& body_end) {
  // Part 6 §6.7.2.5: decrypt everything after the security header in place, verify the signature over
  // everything before it (constant-time comparison), then check the padding. Nothing of a chunk that fails
  // is looked at further.
  TokenKeys& keys = *token.keys;
  const size_t signature = keys.receive.signature_length();
  const bool encrypted = mode_ == ua::MessageSecurityMode::SignAndEncrypt;
  if (encrypted) {
    auto secured = chunk.subspan(kSymmetricHeaderSize);
    if (secured.size() % policy_->block_size != 0 || !keys.receive.decrypt(secured)) return false;
  }
  if (chunk.size() < kSymmetricPrefix + signature + (encrypted ? 1 : 0)) return false;
  const size_t signed_size = chunk.size() - signature;
  if (!keys.receive.verify(chunk.first(signed_size), chunk.subspan(signed_size))) return false;
  body_end = signed_size;
  if (encrypted) {
    const size_t padding =
        security::check_padding(chunk.subspan(kSymmetricPrefix, signed_size - kSymmetricPrefix), false);
    if (padding == SIZE_MAX) return false;
    body_end -= padding;
  }
  return true;
}

bool SecureChannel::handle_symmetric(const FrameHeader& h, std::span<uint8_t> chunk) {
  if (chunk.size() < kSymmetricPrefix) {
    close(status::BadTcpMessageTypeInvalid, "chunk too short for its headers");
    return false;
  }
  uint32_t channel_id, token_id, sequence, request_id;
  std::memcpy(&channel_id, chunk.data() + 8, 4);
  std::memcpy(&token_id, chunk.data() + 12, 4);
  if (channel_id != id_) {
    close(status::BadSecureChannelIdInvalid, "unknown secure channel id");
    return false;
  }
  const SecurityToken* token = tokens_.find(token_id);
  if (token == nullptr) {
    close(status::BadSecureChannelTokenUnknown, "unknown security token");
    return false;
  }
  size_t body_end = chunk.size();
  // A secured channel's tokens carry their keys (set up by the OPN); a None channel's carry none.
  if (token->keys && !unseal_symmetric(chunk, *token, body_end)) {
    close(status::BadSecurityChecksFailed, "the chunk's signature, encryption or padding is invalid");
    return false;
  }
  // Only a chunk that verified may switch the channel to a newer token.
  if (!tokens_.accept(token_id)) {
    close(status::BadSecureChannelTokenUnknown, "unknown security token");
    return false;
  }
  std::memcpy(&sequence, chunk.data() + 16, 4);
  std::memcpy(&request_id, chunk.data() + 20, 4);
  if (!accept_sequence_number(sequence)) {
    close(status::BadSequenceNumberInvalid, "sequence number out of order");
    return false;
  }
  std::span<const uint8_t> body = chunk.subspan(kSymmetricPrefix, body_end - kSymmetricPrefix);

  if (h.type == MessageType::Close) {
    // CloseSecureChannel has no response: flush what is queued, then close (Part 6 §6.7.6).
    state_ = State::Closing;
    if (writer_.idle()) finish();
    return false;
  }
  // Before a session is activated the limit is the small pre-session budget, not the MaxMessageSize the
  // ACK announced: the client did not break the negotiated limits, so this is a request-level refusal.
  // Such a request is answered ServiceFault BadRequestTooLarge (Part 4 §7.34: the request exceeds a limit
  // set by the server) once its final chunk arrives, as a request beyond MaxMessageSize is, and the
  // channel stays usable; its chunks are dropped as they come, so nothing past the limit is buffered.
  std::span<const uint8_t> message;
  switch (reassembly_.add(h.chunk, request_id, body, request_size_limit(), message)) {
    case ChunkReassembly::Outcome::Pending:
      return true;
    case ChunkReassembly::Outcome::Interleaved:
      close(status::BadTcpMessageTypeInvalid, "chunks of two requests interleaved");
      return false;
    case ChunkReassembly::Outcome::TooLarge:
      ++owed_;
      send_fault(request_id, 0, status::BadRequestTooLarge);
      return true;
    case ChunkReassembly::Outcome::Ready:
      dispatch(request_id, message);
      reassembly_.release();
      return true;
  }
  return true;
}

uint32_t SecureChannel::request_size_limit() const noexcept {
  if (session_active_ || config_.max_message_size_before_session == 0) return config_.max_message_size;
  return std::min(config_.max_message_size, config_.max_message_size_before_session);
}

void SecureChannel::set_session_active() noexcept {
  session_active_ = true;
  // From now on a batch of small chunks may be read behind a whole one (receive_space()).
  if (state_ >= State::AwaitOpen) rx_.set_max(static_cast<size_t>(receive_buffer_size_) + kReceiveBatchRoom);
}

bool SecureChannel::is_discovery_request(const ua::NodeId& type) noexcept {
  if (type.namespace_index() != 0 || type.type() != ua::IdType::Numeric) return false;
  const uint32_t id = type.numeric();
  return id == ua::id::GetEndpointsRequest_Encoding_DefaultBinary ||
         id == ua::id::FindServersRequest_Encoding_DefaultBinary ||
         id == ua::id::FindServersOnNetworkRequest_Encoding_DefaultBinary;
}

void SecureChannel::dispatch(uint32_t request_id, std::span<const uint8_t> body) {
  TransportStats::add(stats_.requests);
  ++owed_;
  update_pause();
  ua::Decoder d(body, config_.decode_limits);
  ua::NodeId type;
  ua::decode(d, type);
  if (!d.ok()) return send_fault(request_id, 0, status::BadDecodingError);
  const uint8_t* after_type = d.position();
  const size_t rest = d.remaining();
  if (discovery_only_ && !is_discovery_request(type)) {
    // Part 4 §5.5.4: discovery needs no message security, nothing else goes over such a channel.
    close(status::BadSecurityPolicyRejected,
          "SecurityPolicy None is not offered here: discovery services only");
    return;
  }
  if (type.namespace_index() == 0 && type.type() == ua::IdType::Numeric &&
      handler_.on_request(*this, RequestContext{request_id, type.numeric()}, d)) {
    return;
  }
  // Nobody serves this request type: read its RequestHeader for the handle and answer with a fault.
  ua::Decoder header_decoder({after_type, rest}, config_.decode_limits);
  ua::RequestHeader header;
  ua::decode(header_decoder, header);
  send_fault(request_id, header_decoder.ok() ? header.request_handle : 0, status::BadServiceUnsupported);
}

SecurityPolicyId SecureChannel::stats_policy() const noexcept {
  static_assert(static_cast<size_t>(SecurityPolicyId::kCount) == 6 &&
                    static_cast<int>(SecurityPolicyId::Aes256_Sha256_RsaPss) ==
                        static_cast<int>(security::PolicyId::Aes256_Sha256_RsaPss),
                "the per-policy counters follow security::PolicyId");
  return static_cast<SecurityPolicyId>(policy_->id);
}

void SecureChannel::set_security(const security::Policy& policy, ua::MessageSecurityMode mode) noexcept {
  policy_ = &policy;
  mode_ = mode;
  chunker_.set_security(policy, mode);
}

ua::ByteBuffer SecureChannel::acquire_buffer() {
  ua::ByteBuffer buf = pool_.acquire();
  buf.resize(kSymmetricPrefix);
  return buf;
}

void SecureChannel::send_response(uint32_t request_id, ua::ByteBuffer buf, uint64_t stream) {
  assert_owner();
  if (state_ >= State::Closing) {
    pool_.release(std::move(buf));
    return;
  }
  const ResponseChunker::Split split = chunker_.split(
      buf, id_, request_id, [this] { return acquire_buffer(); },
      [this, stream](ua::ByteBuffer&& chunk, bool last) {
        writer_.enqueue(OutboundChunk{std::move(chunk), ChunkKind::Symmetric, 16, last, last}, stream);
      });
  if (split == ResponseChunker::Split::Single) return;  // the buffer itself went out
  if (split == ResponseChunker::Split::TooLarge)
    refuse_response(request_id, {buf.data() + kSymmetricPrefix, buf.size() - kSymmetricPrefix}, stream);
  pool_.release(std::move(buf));
}

void SecureChannel::send_response_copy(uint32_t request_id, const ua::ByteBuffer& encoded, uint64_t stream) {
  assert_owner();
  if (state_ >= State::Closing) return;
  const ResponseChunker::Split split = chunker_.split_copy(
      encoded, id_, request_id, [this] { return acquire_buffer(); },
      [this, stream](ua::ByteBuffer&& chunk, bool last) {
        writer_.enqueue(OutboundChunk{std::move(chunk), ChunkKind::Symmetric, 16, last, last}, stream);
      });
  if (split == ResponseChunker::Split::TooLarge)
    refuse_response(request_id, {encoded.data() + kSymmetricPrefix, encoded.size() - kSymmetricPrefix},
                    stream);
}

void SecureChannel::refuse_response(uint32_t request_id, std::span<const uint8_t> body, uint64_t stream) {
  // Part 6 §6.7.2.2: the response does not fit the client's limits; say so in a ServiceFault.
  const ResponseChunker::Refused refused = ResponseChunker::refused(body);
  // A client whose limits leave no room even for a ServiceFault cannot be answered at all: close.
  if (refused.service_fault) {
    close(status::BadResponseTooLarge, "not even a ServiceFault fits the client's MaxMessageSize");
    return;
  }
  send_fault(request_id, refused.request_handle, status::BadResponseTooLarge, stream);
}

void SecureChannel::send_fault(uint32_t request_id, uint32_t request_handle, StatusCode error,
                               uint64_t stream) {
  stats_.fault_sent(error);
  ua::ServiceFault fault;
  fault.response_header.timestamp = ua::DateTime::now();
  fault.response_header.request_handle = request_handle;
  fault.response_header.service_result = error;
  ua::ByteBuffer buf = acquire_buffer();
  ua::Encoder e(buf);
  ua::encode(e, ua::NodeId(0, ua::ServiceFault::binary_encoding_id));
  ua::encode(e, fault);
  send_response(request_id, std::move(buf), stream);
}

void SecureChannel::stamp(OutboundChunk& chunk) {
  if (chunk.kind == ChunkKind::Raw) return;
  if (chunk.kind == ChunkKind::Symmetric) put_u32(chunk.buffer.data() + 12, tokens_.in_use().token_id);
  const uint32_t seq = next_send_sequence_;
  next_send_sequence_ = seq > kWrapThreshold ? 1 : seq + 1;
  put_u32(chunk.buffer.data() + chunk.sequence_offset, seq);
  if (chunk.kind == ChunkKind::Symmetric && tokens_.in_use().keys) sign_symmetric(chunk);
}

void SecureChannel::sign_symmetric(OutboundChunk& chunk) {
  // Part 6 §6.7.2.5, in place in the chunk's own buffer: padding (encrypted), the MessageSize, then the
  // signature over everything before it. AES-CBC over everything after the security header follows in
  // seal_batch(), for all chunks of the write together.
  ua::ByteBuffer& buf = chunk.buffer;
  TokenKeys& keys = *tokens_.in_use().keys;
  const size_t signature = keys.send.signature_length();
  const bool encrypt = mode_ == ua::MessageSecurityMode::SignAndEncrypt;
  if (encrypt) {
    const security::Padding pad =
        security::compute_padding(buf.size() - kSymmetricHeaderSize, signature, policy_->block_size, false);
    security::write_padding(buf.extend(pad.total()), pad);
  }
  const size_t signed_size = buf.size();
  uint8_t* sig = buf.extend(signature);
  put_u32(buf.data() + 4, static_cast<uint32_t>(buf.size()));
  // The keys were set up and the sizes are right by construction: a failure here is OpenSSL's, and the
  // channel cannot go on (the chunk is already on its way to the writer).
  if (!keys.send.sign({buf.data(), signed_size}, sig)) sealing_failed();
  // Encrypted even when signing failed: no plaintext leaves a SignAndEncrypt channel.
  if (encrypt) chunk.encrypt_with = &keys.send;
}

void SecureChannel::seal_batch(std::span<OutboundChunk> chunks) {
  // Each chunk's encrypted part is a CBC stream of its own from the token's IV (Part 6 §6.7.2.5), so the
  // chunks of one write are encrypted together, up to AesCbcEncryptor::kLanes at a time. Chunks are grouped
  // by the cipher stamp() recorded (one token's, unless the token in use changed between them).
  std::array<std::span<uint8_t>, OutputWriter::kMaxChunksPerWrite> streams;
  size_t n = 0;
  security::SymmetricCipher* cipher = nullptr;
  const auto encrypt = [&] {
    if (n == 0) return;
    if (!cipher->encrypt_each({streams.data(), n})) {
      // Never send what failed to encrypt: the chunks go out zeroed, and the channel closes.
      for (size_t i = 0; i < n; ++i) security::wipe(streams[i]);
      sealing_failed();
    }
    n = 0;
  };
  for (OutboundChunk& c : chunks) {
    if (c.encrypt_with == nullptr) continue;
    if (c.encrypt_with != cipher || n == streams.size()) {
      encrypt();
      cipher = c.encrypt_with;
    }
    streams[n++] = {c.buffer.data() + kSymmetricHeaderSize, c.buffer.size() - kSymmetricHeaderSize};
    c.encrypt_with = nullptr;
  }
  encrypt();
}

void SecureChannel::sealing_failed() {
  asio::post(ctx_, [weak = weak_from_this()] {
    if (auto self = weak.lock()) self->close(status::BadInternalError, "securing a chunk failed");
  });
}

void SecureChannel::written(size_t responses) {
  owed_ -= std::min<uint32_t>(owed_, static_cast<uint32_t>(responses));
  if (state_ == State::Closing) {
    if (writer_.idle()) finish();
    return;
  }
  const bool was_paused = paused_;
  update_pause();
  if (was_paused && !paused_) {
    process();  // requests already buffered go first
    if (!paused_ && events_ && state_ < State::Closing) events_->resume_reading();
  }
}

void SecureChannel::update_pause() noexcept {
  if (!paused_) {
    paused_ = owed_ > config_.max_owed_responses || writer_.queued_bytes() > config_.write_high_watermark;
  } else {
    paused_ =
        !(owed_ <= config_.max_owed_responses / 2 && writer_.queued_bytes() <= config_.write_low_watermark);
  }
}

void SecureChannel::close(StatusCode error, std::string_view reason) {
  if (state_ >= State::Closing) return;
  state_ = State::Closing;
  close_status_ = error;
  TransportStats::add(stats_.errors_sent);
  std::string bytes = encode_error(error, reason);
  ua::ByteBuffer buf = pool_.acquire();
  buf.append(bytes.data(), bytes.size());
  writer_.enqueue(OutboundChunk{std::move(buf), ChunkKind::Raw, 0, true, false});
  writer_.release();  // a handshake held the writer: the ERR goes out anyway
}

void SecureChannel::finish() {
  if (state_ == State::Closed) return;
  auto self = shared_from_this();
  const bool had_channel = id_ != 0;
  state_ = State::Closed;
  writer_.shut();
  timer_.cancel();
  if (had_channel) {
    stats_.channel_closed(stats_policy());
    handler_.on_channel_closed(*this);
  }
  if (events_) events_->close_transport();
}

void SecureChannel::detach() noexcept {
  events_ = nullptr;
  if (state_ == State::Closed) return;
  state_ = State::Closed;
  writer_.shut();
  timer_.cancel();
  if (id_ != 0) {
    stats_.channel_closed(stats_policy());
    handler_.on_channel_closed(*this);
  }
}

}  // namespace opcuad::transport
