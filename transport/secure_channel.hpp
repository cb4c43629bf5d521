#pragma once
// SecureChannel: one UA TCP connection's protocol engine (Part 6 §6.7, §7.1), socket-free.
//
// Bytes arrive through receive_space()/on_received(); complete chunks are handled at once:
//   HEL -> ACK (limits negotiated)        OPN -> OpenSecureChannel issue / renew
//   MSG -> chunks reassembled, the request handed to the ServiceHandler
//   CLO -> the channel closes             anything malformed -> ERR, then close
// Responses go out through the channel's OutputWriter, which stamps token ids and sequence numbers at
// send time (the ChunkStamper below), where a secured channel also pads and signs each chunk in place;
// a SignAndEncrypt channel then encrypts the chunks of one write together (seal_batch).
//
// The channel coordinates four parts, each a class of its own that is tested without a socket:
//   ReceiveBuffer    (receive_buffer.hpp)    the bytes read so far, framing and the chunk size bound
//   ChunkReassembly  (chunk_reassembly.hpp)  a request's chunks joined, the chunk count and size bounds
//   TokenSet         (token_set.hpp)         the security tokens: issue, renewal, switch-over, expiry
//   ResponseChunker  (response_chunker.hpp)  a response split into chunks the client accepts
// What stays here is the state machine, sequence numbers, chunk security and back-pressure. It is
// implemented in two files: secure_channel.cpp (HEL, MSG/CLO and the send path) and secure_channel_open.cpp
// (OpenSecureChannel: issue and renewal, the secured handshake on the HandshakePool).
//
// shard-local: created, used and destroyed on one shard's thread (checked in debug builds).

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/buffer_pool.hpp"
#include "transport/channel_id.hpp"
#include "transport/chunk_reassembly.hpp"
#include "transport/config.hpp"
#include "transport/output_writer.hpp"
#include "transport/receive_buffer.hpp"
#include "transport/response_chunker.hpp"
#include "transport/security/crypto.hpp"
#include "transport/security/policy.hpp"
#include "transport/service_handler.hpp"
#include "transport/stats.hpp"
#include "transport/token_set.hpp"
#include "transport/uatcp.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::transport {

// What the channel needs from whoever owns the socket.
class ChannelEvents {
 public:
  virtual ~ChannelEvents() = default;
  virtual void resume_reading() = 0;   // back-pressure released: read again
  virtual void close_transport() = 0;  // the channel is done (flushed or abandoned): close the socket
};

// Defined by the unit tests (tests/unit/transport/channel_test_access.hpp): what they look at or set up
// inside a channel, kept out of this interface.
struct SecureChannelTestAccess;

class SecureChannel final : public ChunkStamper, public std::enable_shared_from_this<SecureChannel> {
 public:
  enum class State { AwaitHello, AwaitOpen, Open, Closing, Closed };

  SecureChannel(asio::io_context& ctx, Sink& sink, ChannelEvents& events, BufferPool& pool,
                TransportStats& stats, const TransportConfig& config, ServiceHandler& handler,
                ChannelIdSource& ids);
  ~SecureChannel() override;

  // Starts the housekeeping timer (hello, open and session activation timeouts, token expiry, send
  // timeout, shrinking the receive buffer of a quiet channel).
  void start();
  // Refuses the connection (too many connections, or too many from one address): ERR, then close.
  void reject(ua::StatusCode error, std::string_view reason) { close(error, reason); }

  // Receive path. The owner reads into receive_space() and reports how many bytes arrived.
  std::span<uint8_t> receive_space();
  void on_received(size_t n);
  // False while back-pressure holds reading (too many owed responses or queued bytes) or when closing.
  bool reading_allowed() const noexcept { return !paused_ && !handshake_pending_ && state_ < State::Closing; }

  // Responses. A handler encodes into a buffer from acquire_buffer() (headroom reserved for the chunk
  // headers), then hands it to send_response(). `stream` keys the fairness of the output writer:
  // 0 for the channel, otherwise one per session (or per subscription for Publish responses).
  ua::ByteBuffer acquire_buffer();
  void send_response(uint32_t request_id, ua::ByteBuffer encoded, uint64_t stream = 0);
  // As send_response(), for a response encoded in a buffer the caller keeps (kSymmetricPrefix bytes of
  // headroom, then the body; a NotificationMessage retained for Republish): the chunks are copies from
  // the pool, `encoded` is not touched.
  void send_response_copy(uint32_t request_id, const ua::ByteBuffer& encoded, uint64_t stream = 0);
  template <class T>
  void send(uint32_t request_id, const T& response, uint64_t stream = 0) {
    ua::ByteBuffer buf = acquire_buffer();
    ua::Encoder e(buf);
    ua::encode(e, ua::NodeId(0, T::binary_encoding_id));
    ua::encode(e, response);
    if (!e.status().is_good()) {
      pool_.release(std::move(buf));
      return send_fault(request_id, response.response_header.request_handle, e.status());
    }
    send_response(request_id, std::move(buf), stream);
  }
  void send_fault(uint32_t request_id, uint32_t request_handle, ua::StatusCode error, uint64_t stream = 0);

  // ERR with the status, then close once it is flushed. Later calls do nothing.
  void close(ua::StatusCode error, std::string_view reason);
  // The status of the ERR close() sent; Good when the channel ended otherwise (CLO, the peer went away).
  ua::StatusCode close_status() const noexcept { return close_status_; }
  // The owner is going away: stop everything now, tell nobody.
  void detach() noexcept;

  // ChunkStamper: the writer calls stamp() in send order (token id, sequence number, padding, signature),
  // then seal_batch() once per write (the encryption of the SignAndEncrypt chunks, several at once).
  void stamp(OutboundChunk& chunk) override;
  void seal_batch(std::span<OutboundChunk> chunks) override;

  State state() const noexcept { return state_; }
  uint32_t id() const noexcept { return id_; }
  const std::string& endpoint_url() const noexcept { return endpoint_url_; }
  uint32_t send_buffer_size() const noexcept { return chunker_.send_buffer_size(); }
  uint32_t receive_buffer_size() const noexcept { return receive_buffer_size_; }
  uint32_t owed_responses() const noexcept { return owed_; }
  // The largest response body the client accepts (Part 6 §7.1.2.3: its MaxMessageSize, and its
  // MaxChunkCount times the body room of one chunk); SIZE_MAX when it set neither.
  size_t max_response_body() const noexcept { return chunker_.max_response_body(); }
  // The client's IP address in text form (no port), set by the socket's owner before start(); empty for
  // channels without a socket (tests). Per-address limits key on it.
  const std::string& peer_address() const noexcept { return peer_address_; }
  void set_peer_address(std::string address) { peer_address_ = std::move(address); }
  // The service layer reports that a session was activated on this channel (Part 4 §5.6.3): from then
  // on the channel is an authenticated client's, and the limits for channels without one no longer apply
  // (the reassembly budget, the session activation timeout, the receive buffer bound).
  void set_session_active() noexcept;
  bool session_active() const noexcept { return session_active_; }
  // The channel's security (Part 6 §6.7.2): its policy (None until an OPN says otherwise), its mode, and
  // for a secured channel the client's application instance certificate (the leaf of the chain its OPN
  // carried, DER) and that certificate's public key. The session services sign and verify with these.
  const security::Policy& security_policy() const noexcept { return *policy_; }
  ua::MessageSecurityMode security_mode() const noexcept { return mode_; }
  // A channel over SecurityPolicy None on an endpoint that does not offer None: opened so that a client
  // can discover the endpoint before it knows the server's certificate (Part 4 §5.5.4, GetEndpoints "shall
  // not require message security"). It carries GetEndpoints, FindServers and FindServersOnNetwork only;
  // any other request closes it with BadSecurityPolicyRejected. It is bounded like every channel before a
  // session (open and activation timeouts, the request size before a session, the per-address cap).
  bool discovery_only() const noexcept { return discovery_only_; }
  static bool is_discovery_request(const ua::NodeId& type) noexcept;
  std::span<const uint8_t> client_certificate() const noexcept { return client_certificate_; }
  EVP_PKEY* client_public_key() const noexcept { return client_key_.get(); }
  const OutputWriter& writer() const noexcept { return writer_; }
  // The counters of this channel's shard (the service layer adds its faults' results there).
  TransportStats& stats() noexcept { return stats_; }
  asio::io_context& context() noexcept { return ctx_; }

 private:
  friend struct SecureChannelTestAccess;

  void process();
  // A response (its body) the client's limits refuse: a ServiceFault BadResponseTooLarge in its place
  // (Part 6 §6.7.2.2), or ERR and close when not even that fits.
  void refuse_response(uint32_t request_id, std::span<const uint8_t> body, uint64_t stream);
  bool handle_chunk(const FrameHeader& h, std::span<uint8_t> chunk);
  bool handle_hello(std::span<const uint8_t> body);
  bool handle_open(const FrameHeader& h, std::span<const uint8_t> chunk);
  bool handle_symmetric(const FrameHeader& h, std::span<uint8_t> chunk);
  // Secured OpenSecureChannel (Part 6 §6.7.2): the RSA work runs on the handshake pool; the channel reads
  // nothing more until the response is queued.
  bool offered(const security::Policy& p, ua::MessageSecurityMode mode) const noexcept;
  void run_handshake(std::function<void()> job);
  // `plaintext`: the request's SequenceHeader and body, its chunks joined; `sequences`: the sequence
  // number of each chunk after the first.
  void opened(const security::Policy& p, ua::StatusCode status, std::string reason,
              std::vector<uint8_t> plaintext, std::vector<uint32_t> sequences,
              security::CertificateVerdict verdict, std::vector<uint8_t> chain);
  bool finish_open(const security::Policy& p, uint32_t sequence, std::span<const uint32_t> later_sequences,
                   uint32_t request_id, const ua::OpenSecureChannelRequest& request,
                   std::vector<uint8_t> chain, security::CertificateVerdict* verdict);
  // Secures the response (one chunk, or several when it does not fit the client's receive buffer) on the
  // pool; sealed() then sends it ahead of everything queued.
  bool seal_open_response(const security::Policy& p, ua::ByteBuffer& plain, size_t sequence_offset,
                          uint32_t request_id);
  void sealed(bool ok, std::vector<uint8_t> chunks);
  // MSG/CLO security (Part 6 §6.7.2.5): verify and decrypt in place; secure a chunk at send time.
  bool unseal_symmetric(std::span<uint8_t> chunk, const SecurityToken& token, size_t& body_end);
  // Pads and signs with the token in use; a SignAndEncrypt chunk records the cipher for seal_batch().
  void sign_symmetric(OutboundChunk& chunk);
  // OpenSSL failed to sign or encrypt: close with BadInternalError (posted, the writer is mid-drain).
  void sealing_failed();
  // The channel's security, for the chunk security and the chunker's body room.
  void set_security(const security::Policy& policy, ua::MessageSecurityMode mode) noexcept;
  SecurityPolicyId stats_policy() const noexcept;  // the per-policy counters' index of policy_
  void dispatch(uint32_t request_id, std::span<const uint8_t> body);
  bool accept_sequence_number(uint32_t seq) noexcept;
  uint32_t request_size_limit() const noexcept;
  void written(size_t responses);
  void update_pause() noexcept;
  void finish();
  void tick();
  void assert_owner() const noexcept;

  asio::io_context& ctx_;
  ChannelEvents* events_;
  BufferPool& pool_;
  TransportStats& stats_;
  const TransportConfig& config_;
  ServiceHandler& handler_;
  ChannelIdSource& ids_;
  OutputWriter writer_;
  asio::steady_timer timer_;
  std::thread::id owner_;

  State state_ = State::AwaitHello;
  std::chrono::steady_clock::time_point created_;
  std::chrono::steady_clock::time_point hello_at_;  // HEL accepted: the open timeout runs from here
  std::chrono::steady_clock::time_point
      opened_at_;  // OPN issued: the session activation timeout runs from here
  std::string endpoint_url_;
  std::string peer_address_;
  ua::StatusCode close_status_ = ua::status::Good;
  bool session_active_ = false;
  uint32_t id_ = 0;
  const security::Policy* policy_ = &security::policy(security::PolicyId::None);
  ua::MessageSecurityMode mode_ = ua::MessageSecurityMode::None;
  std::vector<uint8_t> client_certificate_;  // the leaf
  bool discovery_only_ = false;
  std::vector<uint8_t> client_chain_;  // as the OPN carried it (a renewal must repeat it)
  security::Pkey client_key_;
  bool handshake_pending_ = false;
  // The chunks so far of an OpenSecureChannel request sent in several (Part 6 §6.7.2.2 has OPN in one
  // chunk, but some stacks split a large one): kept whole until its final chunk, at most kMaxOpenChunks
  // and max_message_size_before_session bytes.
  static constexpr size_t kMaxOpenChunks = 8;
  std::vector<std::vector<uint8_t>> open_chunks_;
  size_t open_bytes_ = 0;
  // Negotiated in HEL/ACK (the send size and the client's limits live in chunker_, the chunk count bound
  // in reassembly_).
  uint32_t receive_buffer_size_;
  // Sequence numbers.
  bool have_received_sequence_ = false;
  uint32_t last_received_sequence_ = 0;
  uint32_t next_send_sequence_ = 1;
  ReceiveBuffer rx_;
  ChunkReassembly reassembly_;
  TokenSet tokens_;
  ResponseChunker chunker_;
  // Back-pressure.
  uint32_t owed_ = 0;
  bool paused_ = false;
  bool processing_ = false;
};

}  // namespace opcuad::transport
