// SecureChannel (secure_channel.hpp), the framing half: the channel's lifetime, the receive buffer,
// Hello, MSG/CLO chunks (security, sequence numbers, tokens, reassembly) and the send path. The
// OpenSecureChannel handshake is in secure_channel_open.cpp.
#include "transport/secure_channel.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include <asio/post.hpp>

#include "transport/secure_channel_internal.hpp"
#include "transport/security/asymmetric.hpp"
#include "ua/endpoint_url.hpp"
#include "ua/generated/node_ids_object.hpp"

namespace opcuad::transport {

using namespace channel_internal;

namespace {

// A HEL is small (five numbers and a URL of at most 4096 bytes); nothing larger is read before it.
constexpr uint32_t kMaxHelloSize = kHeaderSize + 20 + 4 + kMaxEndpointUrlLength;
// The receive buffer of a new channel after Hello: a few typical requests (Read-100 is ~2.5 KB).
constexpr size_t kInitialReceiveCapacity = 16384;
// Room for reading a batch of small chunks behind a whole one, once a session is active.
constexpr size_t kReceiveBatchRoom = 65536;
// A reassembly buffer larger than this is freed once its request is dispatched, so one large request
// does not pin its peak for the channel's life; smaller ones are kept for the next multi-chunk request.
constexpr size_t kRetainedReassembly = 65536;

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
      send_buffer_size_(std::max(config.send_buffer_size, kMinBufferSize)),
      max_request_chunks_(0),
      next_token_id_(ids.random_token_start()) {
  rx_max_ = kMaxHelloSize * 2;
  resize_rx(rx_max_);
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
  } else if (state_ == State::Open && now > current_token().expires) {
    close(status::BadSecureChannelTokenUnknown, "the security token expired without renewal");
  } else if (state_ == State::Open && !session_active_ &&
             now - opened_at_ > config_.session_activation_timeout) {
    close(status::BadTimeout, "no session activated on the secure channel in time");
  } else if (state_ == State::Open) {
    expire_tokens(now);
  }
  rx_shrink_ = !rx_busy_ && rx_cap_ > kInitialReceiveCapacity;
  rx_busy_ = false;
  if (auto started = writer_.write_started(); started && now - *started > config_.send_timeout) {
    finish();  // the peer accepts no bytes: nothing more can be said to it
    return;
  }
  start();
}

void SecureChannel::resize_rx(size_t capacity) {
  // Not zero-filled: only bytes a read wrote are ever looked at, and untouched pages cost no memory.
  auto grown = std::make_unique_for_overwrite<uint8_t[]>(capacity);
  if (rx_end_ > rx_begin_) std::memcpy(grown.get(), rx_.get() + rx_begin_, rx_end_ - rx_begin_);
  rx_end_ -= rx_begin_;
  rx_begin_ = 0;
  rx_ = std::move(grown);
  rx_cap_ = capacity;
}

std::span<uint8_t> SecureChannel::receive_space() {
  if (rx_begin_ > 0 && rx_begin_ == rx_end_) rx_begin_ = rx_end_ = 0;
  if (rx_shrink_ && rx_end_ == 0) {
    rx_shrink_ = false;
    resize_rx(kInitialReceiveCapacity);
  }
  // Grow when the buffer is full while reading is allowed (a chunk bigger than it is arriving), or when a
  // read filled it (the client sends faster than one small read per turn drains). A full buffer while
  // paused is back-pressure and stays as it is.
  if ((rx_end_ == rx_cap_ || rx_filled_) && rx_cap_ < rx_max_ && reading_allowed()) {
    resize_rx(std::min(rx_max_, rx_cap_ * 4));
  }
  rx_filled_ = false;
  return {rx_.get() + rx_end_, rx_cap_ - rx_end_};
}

void SecureChannel::on_received(size_t n) {
  assert_owner();
  rx_filled_ = rx_end_ + n == rx_cap_;
  rx_end_ += n;
  if (rx_filled_ || rx_end_ > kInitialReceiveCapacity) {
    rx_busy_ = true;
    rx_shrink_ = false;
  }
  process();
}

void SecureChannel::process() {
  if (processing_) return;  // a handler's synchronous reply re-entered: the outer loop carries on
  processing_ = true;
  auto self = shared_from_this();  // a handler may close the channel and drop the owner's reference
  while (state_ < State::Closing && !paused_ && !handshake_pending_) {
    std::span<const uint8_t> avail(rx_.get() + rx_begin_, rx_end_ - rx_begin_);
    FrameHeader h{};
    StatusCode error;
    ParseResult r = parse_frame_header(avail, h, error);
    if (r == ParseResult::NeedMore) break;
    if (r == ParseResult::Bad) {
      close(error, "malformed message header");
      break;
    }
    const uint32_t limit = state_ == State::AwaitHello ? kMaxHelloSize : receive_buffer_size_;
    if (h.size > limit) {
      close(status::BadTcpMessageTooLarge, "chunk larger than the negotiated receive buffer");
      break;
    }
    if (avail.size() < h.size) break;
    std::span<uint8_t> chunk(rx_.get() + rx_begin_, h.size);  // secured chunks are decrypted in place
    rx_begin_ += h.size;
    if (!handle_chunk(h, chunk)) break;
  }
  // Keep the unprocessed tail at the front so the next read has room for a whole chunk.
  if (rx_begin_ > 0) {
    std::memmove(rx_.get(), rx_.get() + rx_begin_, rx_end_ - rx_begin_);
    rx_end_ -= rx_begin_;
    rx_begin_ = 0;
  }
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
  send_buffer_size_ = std::min(send_buffer_size_, hello.receive_buffer_size);
  receive_buffer_size_ = std::min(receive_buffer_size_, hello.send_buffer_size);
  peer_max_message_size_ = hello.max_message_size;
  peer_max_chunk_count_ = hello.max_chunk_count;
  const uint32_t body_per_chunk = receive_buffer_size_ - static_cast<uint32_t>(kSymmetricPrefix);
  max_request_chunks_ = config_.max_chunk_count
                            ? config_.max_chunk_count
                            : (config_.max_message_size + body_per_chunk - 1) / body_per_chunk;
  // At most room for one whole chunk (plus, once a session is active, a batch of small ones behind it);
  // it starts at what most requests need and grows on demand (receive_space()).
  rx_max_ = static_cast<size_t>(receive_buffer_size_) + (session_active_ ? kReceiveBatchRoom : 0);
  resize_rx(std::min(rx_max_, kInitialReceiveCapacity));
  hello_at_ = std::chrono::steady_clock::now();

  AcknowledgeMessage ack{0, receive_buffer_size_, send_buffer_size_, config_.max_message_size,
                         max_request_chunks_};
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

bool SecureChannel::accept_token(uint32_t token_id) noexcept {
  if (token_id == tokens_[0].token_id) return true;  // the token in use: every message but the switch
  for (uint32_t i = 1; i < token_count_; ++i) {
    if (tokens_[i].token_id == token_id) {
      // The client switched to a newer token: the older ones are no longer accepted (Part 6 §6.7.4), and
      // responses are secured with this one from now on.
      std::move(tokens_.begin() + i, tokens_.begin() + token_count_, tokens_.begin());
      token_count_ -= i;
      return true;
    }
  }
  return false;
}

void SecureChannel::expire_tokens(std::chrono::steady_clock::time_point now) noexcept {
  // Every token but the newest ends on its own lifetime (Part 4 §5.5.2), whether or not the client has
  // switched; the newest expiring closes the channel (tick()). Checked here rather than per message so
  // the request path reads no clock; a token therefore lives up to one tick past its expiry.
  uint32_t kept = 0;
  for (uint32_t i = 0; i < token_count_; ++i) {
    if (i + 1 == token_count_ || now <= tokens_[i].expires) tokens_[kept++] = tokens_[i];
  }
  token_count_ = kept;
}

const SecurityToken* SecureChannel::find_token(uint32_t token_id) const noexcept {
  for (uint32_t i = 0; i < token_count_; ++i) {
    if (tokens_[i].token_id == token_id) return &tokens_[i];
  }
  return nullptr;
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
  const SecurityToken* token = find_token(token_id);
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
  if (!accept_token(token_id)) {
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
  if (reassembling_ && request_id != reassembly_request_id_) {
    close(status::BadTcpMessageTypeInvalid, "chunks of two requests interleaved");
    return false;
  }
  // Before a session is activated the limit is the small pre-session budget, not the MaxMessageSize the
  // ACK announced: the client did not break the negotiated limits, so this is a request-level refusal.
  // Such a request is answered ServiceFault BadRequestTooLarge (Part 4 §7.34: the request exceeds a limit
  // set by the server) once its final chunk arrives, as a request beyond MaxMessageSize is, and the
  // channel stays usable; its chunks are dropped as they come, so nothing past the limit is buffered.
  const uint32_t limit = request_size_limit();
  switch (h.chunk) {
    case ChunkType::Abort:
      // Part 6 §6.7.3: the sender abandoned the message; nothing is answered.
      reassembling_ = false;
      release_reassembly();
      return true;
    case ChunkType::Intermediate:
      if (!reassembling_) {
        reassembling_ = true;
        reassembly_request_id_ = request_id;
        reassembly_chunks_ = 0;
        reassembly_too_large_ = false;
        reassembly_.clear();
      }
      ++reassembly_chunks_;
      if (reassembly_too_large_ || reassembly_chunks_ >= max_request_chunks_ ||
          !append_reassembly(body, limit)) {
        // Keep reading the chunks but not their bytes; answer when the final chunk comes.
        reassembly_too_large_ = true;
        reassembly_.clear();
        reassembly_.shrink_to_fit();
      }
      return true;
    case ChunkType::Final:
      if (!reassembling_) {
        if (body.size() > limit) {
          ++owed_;
          send_fault(request_id, 0, status::BadRequestTooLarge);
          return true;
        }
        dispatch(request_id, body);  // one chunk: decode in place, no copy
        return true;
      }
      reassembling_ = false;
      if (reassembly_too_large_ || !append_reassembly(body, limit)) {
        release_reassembly();
        ++owed_;
        send_fault(request_id, 0, status::BadRequestTooLarge);
        return true;
      }
      dispatch(request_id, reassembly_);
      release_reassembly();
      return true;
  }
  return true;
}

uint32_t SecureChannel::request_size_limit() const noexcept {
  if (session_active_ || config_.max_message_size_before_session == 0) return config_.max_message_size;
  return std::min(config_.max_message_size, config_.max_message_size_before_session);
}

bool SecureChannel::append_reassembly(std::span<const uint8_t> body, uint32_t limit) {
  const size_t needed = reassembly_.size() + body.size();
  if (needed > limit) return false;
  // Grow geometrically, but never past the limit: the capacity, not only the size, stays within it.
  if (needed > reassembly_.capacity())
    reassembly_.reserve(std::min<size_t>(limit, std::max(needed, reassembly_.capacity() * 2)));
  reassembly_.insert(reassembly_.end(), body.begin(), body.end());
  return true;
}

void SecureChannel::release_reassembly() noexcept {
  if (reassembly_.capacity() > kRetainedReassembly) {
    std::vector<uint8_t>().swap(reassembly_);
  } else {
    reassembly_.clear();
  }
}

void SecureChannel::set_session_active() noexcept {
  session_active_ = true;
  // From now on a batch of small chunks may be read behind a whole one (receive_space()).
  if (state_ >= State::AwaitOpen) rx_max_ = static_cast<size_t>(receive_buffer_size_) + kReceiveBatchRoom;
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
    close(status::BadSecurityPolicyRejected, "SecurityPolicy None is not offered here: discovery services only");
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

size_t SecureChannel::max_response_body() const noexcept {
  size_t limit = SIZE_MAX;
  if (peer_max_message_size_) limit = peer_max_message_size_;
  if (peer_max_chunk_count_) limit = std::min(limit, size_t{peer_max_chunk_count_} * chunk_body_capacity());
  return limit;
}

SecurityPolicyId SecureChannel::stats_policy() const noexcept {
  static_assert(static_cast<size_t>(SecurityPolicyId::kCount) == 6 &&
                    static_cast<int>(SecurityPolicyId::Aes256_Sha256_RsaPss) ==
                        static_cast<int>(security::PolicyId::Aes256_Sha256_RsaPss),
                "the per-policy counters follow security::PolicyId");
  return static_cast<SecurityPolicyId>(policy_->id);
}

size_t SecureChannel::chunk_body_capacity() const noexcept {
  // Part 6 §6.7.2: what is left of a chunk of the client's receive size for the body once the headers, the
  // signature and (encrypted) the padding-size byte fit, the encrypted part being whole cipher blocks.
  const size_t chunk = send_buffer_size_;
  switch (mode_) {
    case ua::MessageSecurityMode::Sign:
      return chunk - kSymmetricPrefix - policy_->signature_length;
    case ua::MessageSecurityMode::SignAndEncrypt: {
      const size_t block = policy_->block_size;
      const size_t encrypted = (chunk - kSymmetricHeaderSize) / block * block;
      return encrypted - kSequenceHeaderSize - policy_->signature_length - 1;
    }
    default:
      return chunk - kSymmetricPrefix;
  }
}

ua::ByteBuffer SecureChannel::acquire_buffer() {
  ua::ByteBuffer buf = pool_.acquire();
  buf.resize(kSymmetricPrefix);
  return buf;
}

void SecureChannel::write_symmetric_header(ua::ByteBuffer& buf, ChunkType chunk,
                                           uint32_t request_id) const noexcept {
  uint8_t* p = buf.data();
  put_u32(p, static_cast<uint32_t>(MessageType::Message) | static_cast<uint32_t>(chunk) << 24);
  put_u32(p + 4, static_cast<uint32_t>(buf.size()));
  put_u32(p + 8, id_);
  put_u32(p + 12, 0);  // token id, stamped at send time
  put_u32(p + 16, 0);  // sequence number, stamped at send time
  put_u32(p + 20, request_id);
}

void SecureChannel::send_response(uint32_t request_id, ua::ByteBuffer buf, uint64_t stream) {
  assert_owner();
  if (state_ >= State::Closing) {
    pool_.release(std::move(buf));
    return;
  }
  const size_t body = buf.size() - kSymmetricPrefix;
  const size_t max_body = chunk_body_capacity();
  if (body <= max_body && (peer_max_message_size_ == 0 || body <= peer_max_message_size_)) {
    write_symmetric_header(buf, ChunkType::Final, request_id);
    writer_.enqueue(OutboundChunk{std::move(buf), ChunkKind::Symmetric, 16, true, true}, stream);
    return;
  }
  const size_t chunks = (body + max_body - 1) / max_body;
  if ((peer_max_chunk_count_ && chunks > peer_max_chunk_count_) ||
      (peer_max_message_size_ && body > peer_max_message_size_)) {
    // Part 6 §6.7.2.2: the response does not fit the client's limits; say so in a ServiceFault. Every
    // response starts with its type NodeId and a ResponseHeader {Timestamp, RequestHandle, ...}.
    ua::Decoder d({buf.data() + kSymmetricPrefix, body});
    ua::NodeId type;
    ua::decode(d, type);
    d.read_u64();
    const uint32_t handle = d.read_u32();
    pool_.release(std::move(buf));
    // A client whose limits leave no room even for a ServiceFault cannot be answered at all: close.
    if (type.is_ns0(ua::ServiceFault::binary_encoding_id)) {
      close(status::BadResponseTooLarge, "not even a ServiceFault fits the client's MaxMessageSize");
      return;
    }
    return send_fault(request_id, handle, status::BadResponseTooLarge, stream);
  }
  for (size_t i = 0; i < chunks; ++i) {
    const size_t offset = i * max_body;
    const size_t n = std::min(max_body, body - offset);
    ua::ByteBuffer c = acquire_buffer();
    c.append(buf.data() + kSymmetricPrefix + offset, n);
    const bool last = i + 1 == chunks;
    write_symmetric_header(c, last ? ChunkType::Final : ChunkType::Intermediate, request_id);
    writer_.enqueue(OutboundChunk{std::move(c), ChunkKind::Symmetric, 16, last, last}, stream);
  }
  pool_.release(std::move(buf));
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
  if (chunk.kind == ChunkKind::Symmetric) put_u32(chunk.buffer.data() + 12, tokens_[0].token_id);
  const uint32_t seq = next_send_sequence_;
  next_send_sequence_ = seq > kWrapThreshold ? 1 : seq + 1;
  put_u32(chunk.buffer.data() + chunk.sequence_offset, seq);
  if (chunk.kind == ChunkKind::Symmetric && tokens_[0].keys) seal_symmetric(chunk.buffer);
}

void SecureChannel::seal_symmetric(ua::ByteBuffer& buf) {
  // Part 6 §6.7.2.5, in place in the chunk's own buffer: padding (encrypted), the signature over
  // everything before it, then AES-CBC over everything after the security header.
  TokenKeys& keys = *tokens_[0].keys;
  const size_t signature = keys.send.signature_length();
  if (mode_ == ua::MessageSecurityMode::SignAndEncrypt) {
    const security::Padding pad =
        security::compute_padding(buf.size() - kSymmetricHeaderSize, signature, policy_->block_size, false);
    security::write_padding(buf.extend(pad.total()), pad);
  }
  const size_t signed_size = buf.size();
  uint8_t* sig = buf.extend(signature);
  put_u32(buf.data() + 4, static_cast<uint32_t>(buf.size()));
  const bool ok = keys.send.sign({buf.data(), signed_size}, sig) &&
                  (mode_ != ua::MessageSecurityMode::SignAndEncrypt ||
                   keys.send.encrypt({buf.data() + kSymmetricHeaderSize, buf.size() - kSymmetricHeaderSize}));
  // The contexts were set up and the sizes are right by construction: a failure here is OpenSSL's, and the
  // channel cannot go on (the chunk is already on its way to the writer).
  if (!ok) {
    asio::post(ctx_, [weak = weak_from_this()] {
      if (auto self = weak.lock()) self->close(status::BadInternalError, "securing a chunk failed");
    });
  }
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
