// libFuzzer target for the services (Part 4 §5): a real services::Server over the default address space
// and two alarms (kAlarmNodes), with two shards run on this thread, driven through an in-memory
// SecureChannel on each, so every request takes the path a network request takes (MSG chunks, the
// dispatcher's session checks, the handler, the response encoder, the output writer), and sessions and
// subscriptions can move between shards.
//
// Each input is a sequence of requests (tests/fuzz/services_fuzz_input.hpp) sent in an anonymous session
// created and activated for that input, so an input means nearly the same thing whenever it runs (only
// values written by earlier inputs and real-time timers differ); at its end the input's subscriptions are
// taken back and deleted and its sessions closed, which keeps the server's state bounded. The world itself
// (address space, server, channels) is built once and rebuilt every kRebuildEvery inputs or when a
// channel closes.
//
// Beyond "no crash, no leak, no UB", what the server writes back is checked: every response decodes as
// its request's response type or a ServiceFault with nothing left over, echoes the request handle, answers
// a request that was sent and was not answered yet, and by the end of the input every request has exactly
// one answer (Part 4 §7.33 ResponseHeader; the transport's ServiceHandler contract). A failure aborts.
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "config/transport_settings.hpp"
#include "services/event_record.hpp"
#include "services/server.hpp"
#include "tests/fuzz/services_fuzz_input.hpp"
#include "transport/secure_channel.hpp"
#include "transport/uatcp.hpp"
#include "ua/codec.hpp"
#include "ua/generated/node_ids.hpp"
#include "ua/generated/types.hpp"

namespace {

using namespace opcuad;
using namespace opcuad::fuzz;

constexpr uint32_t kRebuildEvery = 4096;     // inputs per world
constexpr uint32_t kMaxWaitPerInputMs = 30;  // waiting is most of an input's time
constexpr size_t kMaxChunkBody = 60000;      // below the 65535-byte chunks both sides negotiate

[[noreturn]] void fail(const char* what, uint32_t request_id = 0) {
  std::fprintf(stderr, "services_fuzz: %s (request id %u)\n", what, request_id);
  std::abort();
}

class MemorySink : public transport::Sink {
 public:
  explicit MemorySink(asio::io_context& ctx) : ctx_(ctx) {}
  void async_write(std::span<asio::const_buffer> buffers, transport::WriteDone done) override {
    for (const auto& b : buffers) out.append(static_cast<const char*>(b.data()), b.size());
    asio::post(ctx_, [done = std::move(done)] { done({}); });
  }
  std::string out;

 private:
  asio::io_context& ctx_;
};

class Events : public transport::ChannelEvents {
 public:
  void resume_reading() override {}
  void close_transport() override { closed = true; }
  bool closed = false;
};

// SERVICES_FUZZ_TRACE=1 prints each answer's service result (and a Call's method results): to see what
// an input reaches.
bool trace() {
  static const bool on = std::getenv("SERVICES_FUZZ_TRACE") != nullptr;
  return on;
}

// Alarms (docs/CONFIGURATION.md, "Alarms") beside the default configuration's nodes: writes to
// ns=2;s=Alarms.Level cross the limits of the exclusive limit alarm Alarms.Level.Limits, writes to
// Alarms.Mode leave and reach the normal value of Alarms.Mode.NotAuto, which clients also confirm.
constexpr const char* kAlarmNodes = R"json({
  "namespaces": ["urn:opcuad:demo"],
  "nodes": [{"kind": "folder", "name": "Alarms", "event_notifier": true, "children": [
    {"kind": "variable", "name": "Level", "data_type": "Double", "value": 50.0, "access": ["read", "write"],
     "alarms": [{"name": "Limits", "type": "exclusive_limit",
                 "limits": {"high_high": 95, "high": 85, "low": 10, "low_low": 5}, "deadband": 1.0,
                 "message": "level {value} is {state} (limit {limit})"}]},
    {"kind": "variable", "name": "Mode", "data_type": "Int32", "value": 1, "access": ["read", "write"],
     "alarms": [{"name": "NotAuto", "type": "off_normal", "normal_value": 1, "severity": 300,
                 "message": "{name}: mode {value}", "confirm": true}]}]}]
})json";

const config::ServerConfig& server_config() {
  // Audit on: writes, calls and sessions raise events too.
  static const config::ServerConfig c = [] {
    config::LoadResult r;
    r.config = config::default_config();
    r.config.audit.enabled = true;
    config::load_node_file_text(kAlarmNodes, "fuzz-alarms.json", r);
    config::check_references(r);
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
    if (!r.ok()) fail("the alarm nodes do not load");
    return std::move(r.config);
  }();
  return c;
}

template <class T>
std::string encode_string(const T& v) {
  ua::ByteBuffer b;
  ua::Encoder e(b);
  ua::encode(e, v);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

void put_u32(std::string& s, uint32_t v) {
  s.append(reinterpret_cast<const char*>(&v), 4);
}
void patch_size(std::string& s) {
  const auto n = static_cast<uint32_t>(s.size());
  std::memcpy(s.data() + 4, &n, 4);
}

// A session of the input: its token and the link (shard) it lives on.
struct SessionRef {
  ua::NodeId token;
  uint8_t link = 0;
};

// What the harness learns from a response it checked.
struct Observed {
  std::vector<uint32_t>* subscriptions;    // created, in order
  std::vector<SessionRef>* sessions;       // created, in order
  std::vector<ua::ByteString>* event_ids;  // seen in event notifications, the newest last
  uint8_t link;                            // the channel the response came on
  template <class T>
  void operator()(const T&) {}
  void operator()(const ua::CallResponse& r) {
    if (!trace()) return;
    for (const auto& m : r.results) std::fprintf(stderr, "  method: 0x%08x\n", m.status_code.value());
  }
  // Every ByteString field of an event: EventIds where the fuzzer's select clauses ask for them.
  void operator()(const ua::PublishResponse& r) {
    for (const auto& data : r.notification_message.notification_data) {
      const auto* list = data.get<ua::EventNotificationList>();
      if (!list) continue;
      for (const auto& event : list->events) {
        for (const auto& field : event.event_fields) {
          const auto* id = field.get_if<ua::ByteString>();
          if (!id || id->empty()) continue;
          if (event_ids->size() == kMappedIds) event_ids->erase(event_ids->begin());
          event_ids->push_back(*id);
        }
      }
    }
  }
  void operator()(const ua::CreateSubscriptionResponse& r) {
    if (r.response_header.service_result.is_good()) subscriptions->push_back(r.subscription_id);
  }
  void operator()(const ua::CreateSessionResponse& r) {
    if (r.response_header.service_result.is_good())
      sessions->push_back(SessionRef{r.authentication_token, link});
  }
};

// Subscription ids 1..kMappedIds of a request stand for the input's subscriptions (see the input format).
struct IdMap {
  const std::vector<uint32_t>& subscriptions;
  const std::vector<ua::ByteString>& event_ids;
  uint32_t map(uint32_t id) const {
    if (subscriptions.empty() || id == 0 || id > kMappedIds) return id;
    return subscriptions[(id - 1) % subscriptions.size()];
  }
  void map_all(std::vector<uint32_t>& ids) const {
    for (auto& id : ids) id = map(id);
  }
  template <class T>
  void operator()(T&) const {}
  void operator()(ua::ModifySubscriptionRequest& r) const { r.subscription_id = map(r.subscription_id); }
  void operator()(ua::SetPublishingModeRequest& r) const { map_all(r.subscription_ids); }
  void operator()(ua::PublishRequest& r) const {
    for (auto& a : r.subscription_acknowledgements) a.subscription_id = map(a.subscription_id);
  }
  void operator()(ua::RepublishRequest& r) const { r.subscription_id = map(r.subscription_id); }
  void operator()(ua::DeleteSubscriptionsRequest& r) const { map_all(r.subscription_ids); }
  void operator()(ua::TransferSubscriptionsRequest& r) const { map_all(r.subscription_ids); }
  void operator()(ua::CreateMonitoredItemsRequest& r) const { r.subscription_id = map(r.subscription_id); }
  void operator()(ua::ModifyMonitoredItemsRequest& r) const { r.subscription_id = map(r.subscription_id); }
  void operator()(ua::DeleteMonitoredItemsRequest& r) const { r.subscription_id = map(r.subscription_id); }
  void operator()(ua::SetMonitoringModeRequest& r) const { r.subscription_id = map(r.subscription_id); }
  void operator()(ua::SetTriggeringRequest& r) const { r.subscription_id = map(r.subscription_id); }
  // Part 9's condition methods: ConditionRefresh(2)'s SubscriptionId, and an EventId argument of one
  // byte n of Acknowledge, Confirm or AddComment stands for the n-th newest EventId the input's Publish
  // responses carried (0: the newest; modulo their number), so that seeds can answer the events the
  // server raised.
  void operator()(ua::CallRequest& r) const {
    for (auto& m : r.methods_to_call) {
      if (m.method_id.namespace_index() != 0 || m.method_id.type() != ua::IdType::Numeric ||
          m.input_arguments.empty())
        continue;
      auto& first = m.input_arguments[0];
      switch (m.method_id.numeric()) {
        case ua::id::ConditionType_ConditionRefresh:
        case ua::id::ConditionType_ConditionRefresh2:
          if (auto* id = first.get_if<uint32_t>()) *id = map(*id);
          break;
        case ua::id::AcknowledgeableConditionType_Acknowledge:
        case ua::id::AcknowledgeableConditionType_Confirm:
        case ua::id::ConditionType_AddComment:
          if (const auto* id = first.get_if<ua::ByteString>(); id && id->size() == 1 && !event_ids.empty())
            first = ua::Variant(event_ids[event_ids.size() - 1 - id->bytes()[0] % event_ids.size()]);
          break;
        default:
          break;
      }
    }
  }
};

// One shard of the server and the client's channel to it, with the client's bookkeeping of that channel.
struct Link {
  Link(asio::io_context& c) : ctx(c), sink(c) {}
  asio::io_context& ctx;
  MemorySink sink;
  Events events;
  transport::BufferPool pool;
  transport::TransportStats stats;
  std::shared_ptr<transport::SecureChannel> channel;
  uint32_t channel_id = 0, token_id = 0, sequence = 2, last_sequence = 0;
  bool opened = false;
  std::map<uint32_t, std::vector<uint8_t>> partial;  // request id -> the chunks of a response so far
  std::map<uint32_t, uint32_t> chunks;               // request id -> how many chunks so far
};

// The server with two shards and a channel on each (the second is the channel a client reconnects on,
// which may land on another shard, Part 4 §5.6.3), run on this thread. Declaration order is destruction
// order reversed: the io_contexts outlive the server, whose per-shard timers live on them, and the
// address space outlives the server.
class World {
 public:
  World() {
    participant_ = space_.reclaimer().register_participant();
    if (!participant_ || !config::build_address_space(server_config(), space_, *participant_).empty()) {
      fail("the default address space does not build");
    }
    space_.reclaimer().go_offline(*participant_);
    server_ = std::make_unique<services::Server>(space_, server_config());
    for (size_t i = 0; i < links_.size(); ++i) {
      server_->attach_shard(contexts_[i]);
      links_[i] = std::make_unique<Link>(contexts_[i]);
      Link& l = *links_[i];
      l.channel = std::make_shared<transport::SecureChannel>(l.ctx, l.sink, l.events, l.pool, l.stats,
                                                             tconfig_, *server_, ids_);
      l.channel->start();
      open(l);
    }
  }
  ~World() {
    for (auto& l : links_) l->channel->detach();
    server_->detach_shards();
    for (auto& c : contexts_) {
      c.restart();
      c.poll();
    }
  }

  bool broken() const { return broken_; }
  bool ran() const { return ran_; }  // the last input got its session and ran

  // One input: a fresh session, the ops, then the input's state taken down again.
  void run(std::span<const uint8_t> in) {
    subscriptions_.clear();
    event_ids_.clear();
    created_sessions_.clear();
    pending_.clear();
    waited_ms_ = 0;
    ran_ = false;
    if (!open_session()) {
      // Sessions left over by earlier inputs (a state this harness failed to take down): start afresh.
      std::fprintf(stderr, "services_fuzz: no session (%u left), rebuilding the server\n",
                   server_->session_count());
      broken_ = true;
      return;
    }
    size_t pos = 0;
    while (pos + 3 <= in.size() && !broken_) {
      const uint8_t selector = in[pos];
      const size_t length = std::min<size_t>(in[pos + 1] | (in[pos + 2] << 8), in.size() - pos - 3);
      run_op(selector, in.subspan(pos + 3, length));
      pos += 3 + length;
    }
    ran_ = true;
    finish_input();
  }

 private:
  struct Pending {
    uint8_t service;
    uint8_t link;
    std::optional<uint32_t> handle;  // the request handle its answer must echo, when known
    bool main_token;                 // sent with the main session's token
    bool answered = false;
    ua::StatusCode result = ua::status::Good;
  };

  void run_op(uint8_t selector, std::span<const uint8_t> body) {
    const uint8_t op = op_of(selector);
    if (op == kWaitOp) {
      const uint32_t ms =
          std::min<uint32_t>({body.empty() ? 0u : body[0], kMaxWaitMs, kMaxWaitPerInputMs - waited_ms_});
      waited_ms_ += ms;
      // An event from the Server object for the input's event items: their filters, queues and the
      // EventNotificationList of Publish run on what the fuzzer built (body[1], when present, is its
      // severity).
      server_->raise_event(services::system_status_event(
          *space_.current(), ua::ServerState::Running,
          body.size() > 1 ? static_cast<uint16_t>(body[1] * 4 + 1) : 1, "fuzz"));
      run_for(std::chrono::milliseconds(ms));
      return;
    }
    const uint8_t link = (selector & kSecondChannel) ? 1 : 0;
    const bool keep_token = selector & kKeepToken;
    uint32_t request_id = 0;
    visit_service(op, [&]<class S>() {
      using Req = typename S::Request;
      Req req;
      if (!(selector & kRawBody) && ua::decode_from(body, req, tconfig_.decode_limits).is_good()) {
        if (!keep_token) req.request_header.authentication_token = main_.token;
        IdMap{subscriptions_, event_ids_}(req);
        request_id = send(link, req, req.request_header.request_handle);
      } else {
        request_id = send_raw(link, op, body, !keep_token);
      }
    });
    const Pending* p = find(request_id);
    if (!p || !p->answered || !p->result.is_good() || !p->main_token) return;
    if (op == service_index<ua::ActivateSessionRequest>()) main_.link = link;  // the session moved here
    // A closed main session is replaced, so that the ops after it still reach the services (and may
    // take its subscriptions over with TransferSubscriptions).
    if (op == service_index<ua::CloseSessionRequest>() && !open_session())
      fail("the fuzz session cannot be reopened");
  }

  const Pending* find(uint32_t request_id) const {
    auto it = pending_.find(request_id);
    return it == pending_.end() ? nullptr : &it->second;
  }
  bool answered_good(uint32_t request_id) const {
    const Pending* p = find(request_id);
    return p && p->answered && p->result.is_good();
  }

  // CreateSession + ActivateSession (anonymous, Part 4 §5.6.3) on the first channel.
  bool open_session() {
    ua::CreateSessionRequest create;
    create.session_name = ua::String("fuzz");
    create.requested_session_timeout = 600000;
    create.endpoint_url = ua::String("opc.tcp://localhost:4840");
    const size_t before = created_sessions_.size();
    const uint32_t id = send(0, create, create.request_header.request_handle);
    if (!answered_good(id) || created_sessions_.size() != before + 1) return false;
    main_ = created_sessions_.back();
    created_sessions_.pop_back();
    ua::ActivateSessionRequest activate;
    activate.request_header.authentication_token = main_.token;
    return answered_good(send(0, activate, 0));
  }

  // Takes the input's state down: the sessions it created are closed; its subscriptions, wherever they
  // are (a session closed without deleting them parks them), are transferred to the main session and
  // deleted with it. Then every request must have had its one answer.
  void finish_input() {
    for (const SessionRef& s : created_sessions_) {
      ua::CloseSessionRequest close;
      close.request_header.authentication_token = s.token;
      close.delete_subscriptions = true;
      send(s.link, close, 0);
    }
    // The main session is where its last good ActivateSession put it, or on the other shard: a failed
    // ActivateSession on the other channel may have moved it anyway. Try its link first, then the other.
    for (uint8_t link : {main_.link, uint8_t(1 - main_.link)}) {
      if (!subscriptions_.empty()) {
        ua::TransferSubscriptionsRequest transfer;
        transfer.request_header.authentication_token = main_.token;
        transfer.subscription_ids = subscriptions_;
        send(link, transfer, 0);
        ua::DeleteSubscriptionsRequest del;
        del.request_header.authentication_token = main_.token;
        del.subscription_ids = subscriptions_;
        send(link, del, 0);
      }
      ua::CloseSessionRequest close;
      close.request_header.authentication_token = main_.token;
      close.delete_subscriptions = true;
      if (answered_good(send(link, close, 0))) break;
    }
    pump();
    if (broken_) return;
    for (const auto& [id, p] : pending_) {
      if (!p.answered) fail("a request was never answered", id);
    }
  }

  template <class Req>
  uint32_t send(uint8_t link, const Req& req, uint32_t handle) {
    return send_body(link, service_index<Req>(), encode_string(req), handle,
                     req.request_header.authentication_token == main_.token);
  }

  // The body as the fuzzer wrote it, its leading NodeId (the token) replaced unless `replace_token` is
  // false or it does not decode.
  uint32_t send_raw(uint8_t link, uint8_t service, std::span<const uint8_t> body, bool replace_token) {
    std::string bytes(reinterpret_cast<const char*>(body.data()), body.size());
    ua::Decoder d(body, tconfig_.decode_limits);
    ua::NodeId token;
    ua::decode(d, token);
    if (d.ok() && replace_token) {
      bytes = encode_string(main_.token) + bytes.substr(body.size() - d.remaining());
      token = main_.token;
    }
    return send_body(link, service, std::move(bytes), std::nullopt, d.ok() && token == main_.token);
  }

  // Sends one request as MSG chunks (Part 6 §6.7.2) and runs the shards' ready work.
  uint32_t send_body(uint8_t link, uint8_t service, std::string body, std::optional<uint32_t> handle,
                     bool main_token) {
    const uint32_t request_id = next_request_id_++;
    if (broken_) return request_id;
    pending_.emplace(request_id, Pending{service, link, handle, main_token});
    visit_service(service, [&]<class S>() {
      body = encode_string(ua::NodeId(0, S::Request::binary_encoding_id)) + body;
    });
    Link& l = *links_[link];
    size_t pos = 0;
    do {
      const size_t n = std::min(kMaxChunkBody, body.size() - pos);
      const bool last = pos + n == body.size();
      std::string chunk(last ? "MSGF" : "MSGC", 4);
      chunk.append(4, '\0');
      put_u32(chunk, l.channel_id);
      put_u32(chunk, l.token_id);
      put_u32(chunk, l.sequence++);
      put_u32(chunk, request_id);
      chunk.append(body, pos, n);
      patch_size(chunk);
      feed(l, chunk);
      pos += n;
    } while (pos < body.size() && !broken_);
    return request_id;
  }

  void feed(Link& l, std::string_view bytes) {
    size_t pos = 0;
    while (pos < bytes.size() && !broken_) {
      if (!l.channel->reading_allowed()) pump();
      auto space = l.channel->receive_space();
      if (!l.channel->reading_allowed() || space.empty()) {
        broken_ = true;  // back-pressure that no answer releases, or the channel closed
        return;
      }
      const size_t n = std::min(space.size(), bytes.size() - pos);
      std::memcpy(space.data(), bytes.data() + pos, n);
      l.channel->on_received(n);
      pos += n;
      pump();
    }
  }

  // Runs both shards until neither has ready work (a request may hop between them, as a transfer or a
  // session move does), then checks what they wrote.
  void pump() {
    for (int round = 0; round < 100; ++round) {
      size_t ran = 0;
      for (auto& c : contexts_) {
        c.restart();
        ran += c.poll();
      }
      if (ran == 0) break;
    }
    process_output();
  }

  // Runs both shards' clocks for about `d`, in turns of a millisecond.
  void run_for(std::chrono::milliseconds d) {
    const auto deadline = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < deadline) {
      for (auto& c : contexts_) {
        c.restart();
        c.run_for(std::chrono::microseconds(500));
      }
    }
    pump();
  }

  // HEL / ACK and OPN / OPN (Part 6 §7.1.2, §6.7.4) with SecurityPolicy None.
  void open(Link& l) {
    feed(l, transport::encode_hello(
                transport::HelloMessage{0, 65535, 65535, 0, 0, ua::String("opc.tcp://localhost:4840")}));
    std::string msg("OPNF\0\0\0\0", 8);
    put_u32(msg, 0);
    msg += encode_string(ua::String(transport::kSecurityPolicyNone));
    msg += encode_string(ua::ByteString());
    msg += encode_string(ua::ByteString());
    put_u32(msg, 1);  // sequence number
    put_u32(msg, 1);  // request id
    ua::OpenSecureChannelRequest req;
    req.security_mode = ua::MessageSecurityMode::None;
    req.requested_lifetime = 3600000;
    msg += encode_string(ua::NodeId(0, ua::OpenSecureChannelRequest::binary_encoding_id));
    msg += encode_string(req);
    patch_size(msg);
    feed(l, msg);
    if (!l.opened) fail("the secure channel does not open");
  }

  // Splits what the servers wrote into messages and checks each.
  void process_output() {
    for (uint8_t i = 0; i < links_.size() && links_[i]; ++i) {  // (links are made in order)
      Link& l = *links_[i];
      const std::string& out = l.sink.out;
      size_t pos = 0;
      while (out.size() - pos >= 8) {
        uint32_t size;
        std::memcpy(&size, out.data() + pos + 4, 4);
        if (size < 8 || size > out.size() - pos) fail("a message the server wrote is not framed");
        on_message(l, i, std::span(reinterpret_cast<const uint8_t*>(out.data()) + pos, size));
        pos += size;
      }
      if (pos != out.size()) fail("the server wrote a partial message");
      l.sink.out.clear();
      if (l.events.closed) broken_ = true;
    }
  }

  void on_message(Link& l, uint8_t link, std::span<const uint8_t> m) {
    const std::string_view type(reinterpret_cast<const char*>(m.data()), 3);
    const char chunk = static_cast<char>(m[3]);
    ua::Decoder d(m.subspan(8));
    if (type == "ACK") return;
    if (type == "ERR") {
      broken_ = true;  // the channel closes: the world is rebuilt before the next input
      return;
    }
    if (type == "OPN") {
      d.read_u32();  // channel id
      ua::String policy;
      ua::ByteString cert, thumbprint;
      ua::decode(d, policy);
      ua::decode(d, cert);
      ua::decode(d, thumbprint);
      l.last_sequence = d.read_u32();
      d.read_u32();  // request id
      ua::NodeId type_id;
      ua::OpenSecureChannelResponse resp;
      ua::decode(d, type_id);
      ua::decode(d, resp);
      if (!d.ok() || !type_id.is_ns0(ua::OpenSecureChannelResponse::binary_encoding_id))
        fail("bad OPN response");
      l.channel_id = resp.security_token.channel_id;
      l.token_id = resp.security_token.token_id;
      l.opened = true;
      return;
    }
    if (type != "MSG") fail("the server wrote an unknown message type");
    const uint32_t channel_id = d.read_u32();
    d.read_u32();  // token id
    const uint32_t sequence = d.read_u32();
    const uint32_t request_id = d.read_u32();
    if (!d.ok() || channel_id != l.channel_id) fail("a MSG chunk of another channel", request_id);
    // Part 6 §6.7.2.4: sequence numbers go up by one per chunk sent (no wrap this early).
    if (sequence != l.last_sequence + 1) fail("a sequence number out of order", request_id);
    l.last_sequence = sequence;
    std::vector<uint8_t>& body = l.partial[request_id];
    body.insert(body.end(), d.position(), d.position() + d.remaining());
    ++l.chunks[request_id];
    if (chunk == 'C') return;
    if (trace())
      std::fprintf(stderr, "request %u: %zu bytes in %u chunks\n", request_id, body.size(),
                   l.chunks[request_id]);
    l.chunks.erase(request_id);
    std::vector<uint8_t> whole = std::move(body);
    l.partial.erase(request_id);
    const Pending* p = find(request_id);
    if (!p) fail("an answer to a request never sent", request_id);
    if (p->link != link) fail("an answer on another channel than its request's", request_id);
    if (chunk == 'A') {
      // Part 6 §6.7.2.3: an aborted message carries an Error and a Reason instead of its rest.
      ua::Decoder a(std::span<const uint8_t>(whole).subspan(whole.size() - d.remaining()));
      a.read_u32();
      ua::String reason;
      ua::decode(a, reason);
      if (!a.ok()) fail("an abort chunk that does not decode", request_id);
      answer(request_id, ua::StatusCode(ua::status::BadResponseTooLarge), std::nullopt);
      return;
    }
    if (chunk != 'F') fail("an unknown chunk type", request_id);
    check_response(request_id, whole);
  }

  void check_response(uint32_t request_id, std::span<const uint8_t> body) {
    const Pending& p = pending_.at(request_id);
    ua::Decoder d(body);
    ua::NodeId type_id;
    ua::decode(d, type_id);
    if (!d.ok() || type_id.type() != ua::IdType::Numeric || type_id.namespace_index() != 0) {
      fail("a response type id that does not decode", request_id);
    }
    ua::ResponseHeader header;
    {
      ua::Decoder h = d;
      ua::decode(h, header);
      if (!h.ok()) fail("a response header that does not decode", request_id);
    }
    if (type_id.is_ns0(ua::ServiceFault::binary_encoding_id)) {
      ua::ServiceFault fault;
      ua::decode(d, fault);
      if (!d.ok() || d.remaining() != 0) fail("a ServiceFault that does not decode", request_id);
    } else {
      visit_service(p.service, [&]<class S>() {
        if (!type_id.is_ns0(S::Response::binary_encoding_id))
          fail("a response of the wrong type", request_id);
        typename S::Response resp;
        ua::decode(d, resp);
        if (!d.ok() || d.remaining() != 0) fail("a response that does not decode", request_id);
        Observed{&subscriptions_, &created_sessions_, &event_ids_, p.link}(resp);
      });
    }
    answer(request_id, header.service_result, header.request_handle);
  }

  void answer(uint32_t request_id, ua::StatusCode result, std::optional<uint32_t> handle) {
    Pending& p = pending_.at(request_id);
    if (trace()) {
      std::fprintf(stderr, "request %u (service %u, channel %u): 0x%08x\n", request_id, p.service, p.link,
                   result.value());
    }
    if (p.answered) fail("a request answered twice", request_id);
    if (p.handle && handle && *p.handle != *handle)
      fail("a response with another request's handle", request_id);
    p.answered = true;
    p.result = result;
  }

  std::array<asio::io_context, 2> contexts_;
  addressspace::AddressSpace space_;
  addressspace::EpochReclaimer::Participant* participant_ = nullptr;
  std::unique_ptr<services::Server> server_;
  transport::TransportConfig tconfig_ = config::transport_settings(server_config());
  transport::ChannelIdSource ids_;
  std::array<std::unique_ptr<Link>, 2> links_;

  uint32_t next_request_id_ = 2;
  bool broken_ = false, ran_ = false;
  SessionRef main_;  // the input's main session
  uint32_t waited_ms_ = 0;
  std::vector<uint32_t> subscriptions_;
  std::vector<ua::ByteString> event_ids_;     // EventIds the input's Publish responses carried
  std::vector<SessionRef> created_sessions_;  // by the input's CreateSession requests, not yet closed
  std::map<uint32_t, Pending> pending_;       // request id -> what its answer must be
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<World> world;
  static uint32_t inputs = 0;
  if (!world || world->broken() || inputs++ % kRebuildEvery == 0) {
    world.reset();
    world = std::make_unique<World>();
  }
  world->run(std::span(data, size));
  if (world->broken() && !world->ran()) {
    world = std::make_unique<World>();  // the input never ran: run it on a fresh world
    world->run(std::span(data, size));
    if (!world->ran()) fail("a fresh server opens no session");
  }
  return 0;
}
