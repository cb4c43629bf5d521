#pragma once
// An in-memory harness for the services: a Server over a small address space, one SecureChannel fed
// message by message through a MemorySink, and helpers to log in and call services; SecondShard adds a
// second io_context with its own channel to the same server. Shared by the services tests.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "config/address_space_loader.hpp"
#include "config/password.hpp"
#include "services/server.hpp"
#include "tests/unit/transport/channel_harness.hpp"

namespace opcuad::services::test {

using namespace opcuad::transport;
using namespace opcuad::transport::test;

inline const char* kServerJson = R"({
  "application_uri": "urn:test:server",
  "limits": {"max_sessions": 3, "max_nodes_per_read": 5, "max_browse_continuation_points": 2,
             "min_session_timeout_ms": 50},
  "namespaces": ["urn:test"]
})";
// The harness's users and security unless a test gives its own (`members`). Passwords in clear, so the
// tests of other services log in without a server certificate; tests/unit/services/session_security_test.cpp
// covers the encrypted ones.
inline const char* kDefaultEndpoints = R"("endpoints": [{"url": "opc.tcp://0.0.0.0:4840"}])";
inline const char* kDefaultUsers = R"("users": [{"name": "alice", "password_hash": "HASH"}])";
inline const char* kDefaultSecurity =
    R"("security": {"allow_plaintext_passwords": true, "anonymous_write": true})";

inline const char* kNodesJson = R"({
  "namespaces": ["urn:test"],
  "nodes": [
    {"kind": "folder", "name": "Plant", "children": [
      {"kind": "variable", "name": "Speed", "data_type": "Double", "value": 10.0, "access": ["read", "write"],
       "eu_range": {"low": 0, "high": 100}},
      {"kind": "variable", "name": "Count", "data_type": "Int32", "value": 1, "access": ["read", "write"]},
      {"kind": "variable", "name": "Period", "data_type": "Duration", "value": 5.0, "access": ["read", "write"]},
      {"kind": "variable", "name": "Fixed", "data_type": "Double", "value": 1.0},
      {"kind": "variable", "name": "Name", "data_type": "String", "value": "pump", "access": ["read", "write"]},
      {"kind": "variable", "name": "Table", "data_type": "Int32", "value_rank": 1, "value": [1, 2, 3, 4, 5],
       "access": ["read", "write"]},
      {"kind": "variable", "name": "Item{n}", "count": 5, "data_type": "Double", "value": 0.0}
    ]}
  ]
})";

inline ua::NodeId plant(const std::string& path) {
  return ua::NodeId(2, ua::String("Plant" + path));
}

// A Write of one value (of the Value attribute unless said otherwise).
inline ua::WriteRequest write_request(const ua::NodeId& id, ua::Variant v, std::string range = "",
                                      uint32_t attribute = 13) {
  ua::WriteRequest w;
  ua::DataValue dv;
  dv.value = std::move(v);
  w.nodes_to_write.push_back(
      ua::WriteValue{id, attribute, range.empty() ? ua::String() : ua::String(range), dv});
  return w;
}

// Decodes an answer expected to be a `Resp`. A ServiceFault's result goes to `fault`, which must then be
// given; so does a response's service result. With `handle`, the answer must carry that request handle.
template <class Resp>
Resp decode_response(const ServerMessage& m, ua::StatusCode* fault = nullptr,
                     std::optional<uint32_t> handle = std::nullopt) {
  Resp resp;
  ua::ServiceFault sf;
  if (decode_body(m, sf)) {
    if (handle) CHECK(sf.response_header.request_handle == *handle);
    REQUIRE(fault);
    *fault = sf.response_header.service_result;
    return resp;
  }
  REQUIRE(decode_body(m, resp));
  if (handle) CHECK(resp.response_header.request_handle == *handle);
  if (fault) *fault = resp.response_header.service_result;
  return resp;
}

struct ServiceHarness {
  // `extra_limits`: more members of the server file's "limits" object ("\"key\": 1, ..."); `extra_nodes`: a
  // second node file.
  // `members`: more top-level members of the server file; "endpoints", "users" and "security" there
  // replace the harness's (HASH in them becomes the hash of "secret"). `nodesets`: NodeSet2 files (name,
  // text) loaded after the node files.
  explicit ServiceHarness(std::string_view extra_limits = "", std::string_view extra_nodes = "",
                          std::string_view members = "",
                          const std::vector<std::pair<std::string, std::string>>& nodesets = {}) {
    std::string server_json = kServerJson;
    std::string more(members);
    if (more.find("\"users\"") == std::string::npos)
      more += std::string(more.empty() ? "" : ", ") + kDefaultUsers;
    if (more.find("\"security\"") == std::string::npos) more += std::string(", ") + kDefaultSecurity;
    if (more.find("\"endpoints\"") == std::string::npos) more += std::string(", ") + kDefaultEndpoints;
    server_json.insert(server_json.find("\"namespaces\""), more + ",\n  ");
    for (size_t at; (at = server_json.find("HASH")) != std::string::npos;) {
      server_json.replace(at, 4, config::hash_password_with_salt("secret", "0123456789abcdef", 1000));
    }
    if (!extra_limits.empty()) {
      // After the harness's own limits: for a key given twice the last one counts.
      const std::string_view last = "\"min_session_timeout_ms\": 50";
      server_json.insert(server_json.find(last) + last.size(), ", " + std::string(extra_limits));
    }
    loaded = config::load_config_text(server_json, "test.json", ".");
    config::load_node_file_text(kNodesJson, "nodes.json", loaded);
    if (!extra_nodes.empty()) config::load_node_file_text(std::string(extra_nodes), "extra.json", loaded);
    for (const auto& [name, text] : nodesets) config::load_nodeset_file_text(text, name, loaded);
    if (!nodesets.empty()) config::resolve_nodesets(loaded);
    config::check_references(loaded);
    for (const auto& e : loaded.errors) UNSCOPED_INFO(e.to_string());
    REQUIRE(loaded.errors.empty());
    participant = space.reclaimer().register_participant();
    config::RoleTable roles;
    REQUIRE(config::build_address_space(loaded.config, space, *participant, {}, &roles).empty());
    space.reclaimer().go_offline(*participant);
    server = std::make_unique<services::Server>(space, loaded.config);
    server->set_role_table(std::move(roles));
    server->attach_shard(ctx);
    channel = std::make_shared<SecureChannel>(ctx, sink, events, pool, stats, tconfig, *server, ids);
    channel->start();
    feed(hello());
    feed(open_request(1, 1));
    std::vector<ServerMessage> m;
    REQUIRE(parse_output(sink.out, m));
    ua::OpenSecureChannelResponse o;
    REQUIRE(decode_body(m.back(), o));
    channel_id = o.security_token.channel_id;
    token_id = o.security_token.token_id;
    sink.out.clear();
  }
  ~ServiceHarness() {
    channel->detach();
    server->detach_shards();
    ctx.restart();
    ctx.poll();
  }

  // Hands `bytes` to the channel as reads of at most the space it offers.
  void feed(const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      auto space_ = channel->receive_space();
      REQUIRE(!space_.empty());
      const size_t n = std::min(space_.size(), bytes.size() - done);
      std::memcpy(space_.data(), bytes.data() + done, n);
      channel->on_received(n);
      done += n;
    }
    ctx.restart();
    ctx.poll();
  }

  // Sends a request with the session's token; returns the response, or fills `fault`.
  template <class Resp, class Req>
  Resp call(Req req, ua::StatusCode* fault = nullptr) {
    req.request_header.authentication_token = token;
    req.request_header.request_handle = ++handle;
    feed(symmetric_chunk("MSG", 'F', channel_id, token_id, sequence++, handle, encode_request(req)));
    ServerMessage m;
    REQUIRE(wait_response(handle, m));  // at once, except for answers that wait for other threads (logins)
    return decode_response<Resp>(m, fault, handle);
  }

  // Sends a request with the session's token without waiting for its answer; returns its request id
  // (the request handle too).
  template <class Req>
  uint32_t send(Req req) {
    req.request_header.authentication_token = token;
    req.request_header.request_handle = ++handle;
    feed(symmetric_chunk("MSG", 'F', channel_id, token_id, sequence++, handle, encode_request(req)));
    return handle;
  }

  // Moves what the server wrote into `stash`; answers that arrive later than their request (Publish)
  // wait there until asked for. A message sent in several chunks (Part 6 §6.7.2: 'C' chunks, then the
  // final one) is stashed once whole: its body is the chunks' bodies in order, `chunks` their number.
  void collect() {
    std::vector<ServerMessage> m;
    REQUIRE(parse_output(sink.out, m));
    sink.out.clear();
    for (auto& x : m) {
      if (x.type == "MSG" && x.chunk == 'C') {
        auto& [body, count] = partial[x.request_id];
        body.insert(body.end(), x.body.begin(), x.body.end());
        ++count;
        continue;
      }
      if (auto it = partial.find(x.request_id); x.type == "MSG" && it != partial.end()) {
        auto& [body, count] = it->second;
        REQUIRE(x.chunk == 'F');  // an abort ('A') is not expected from the server here
        body.insert(body.end(), x.body.begin(), x.body.end());
        x.body = std::move(body);
        x.chunks = count + 1;
        partial.erase(it);
      }
      stash.push_back(std::move(x));
    }
  }

  // The response to `request_id` if it has arrived (taken out of the stash).
  bool take_response(uint32_t request_id, ServerMessage& out) {
    collect();
    for (auto it = stash.begin(); it != stash.end(); ++it) {
      if (it->request_id == request_id) {
        out = std::move(*it);
        stash.erase(it);
        return true;
      }
    }
    return false;
  }

  // Runs the shard (timers included) until the response to `request_id` arrives or `limit` passes.
  bool wait_response(uint32_t request_id, ServerMessage& out,
                     std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!take_response(request_id, out)) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      run_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  void run_for(std::chrono::milliseconds d) {
    ctx.restart();
    ctx.run_for(d);
  }

  // CreateSession + ActivateSession with the given identity (anonymous when empty).
  ua::StatusCode login(ua::ExtensionObject identity = {}, double timeout = 60000,
                       uint32_t max_response_size = 0) {
    ua::CreateSessionRequest create;
    create.session_name = ua::String("test");
    create.requested_session_timeout = timeout;
    create.max_response_message_size = max_response_size;
    create.endpoint_url = ua::String("opc.tcp://localhost:4840");
    ua::StatusCode s;
    auto created = call<ua::CreateSessionResponse>(create, &s);
    if (!s.is_good()) return s;
    token = created.authentication_token;
    revised_timeout = created.revised_session_timeout;
    ua::ActivateSessionRequest activate;
    activate.user_identity_token = std::move(identity);
    call<ua::ActivateSessionResponse>(activate, &s);
    return s;
  }

  ua::DataValue read(const ua::NodeId& id, uint32_t attribute = 13, std::string range = "") {
    ua::ReadRequest r;
    r.timestamps_to_return = ua::TimestampsToReturn::Both;
    r.nodes_to_read.push_back(
        ua::ReadValueId{id, attribute, range.empty() ? ua::String() : ua::String(range), {}});
    auto resp = call<ua::ReadResponse>(r);
    REQUIRE(resp.results.size() == 1);
    return resp.results[0];
  }

  ua::StatusCode write(const ua::NodeId& id, ua::Variant v, std::string range = "", uint32_t attribute = 13) {
    auto resp = call<ua::WriteResponse>(write_request(id, std::move(v), std::move(range), attribute));
    REQUIRE(resp.results.size() == 1);
    return resp.results[0];
  }

  // Declaration order is destruction order reversed: the io_context outlives the server, whose
  // per-shard timers live on it.
  asio::io_context ctx;
  config::LoadResult loaded;
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* participant = nullptr;
  std::unique_ptr<services::Server> server;
  TransportConfig tconfig;
  MemorySink sink{ctx};
  MemoryEvents events;
  BufferPool pool;
  TransportStats stats;
  ChannelIdSource ids;
  std::shared_ptr<SecureChannel> channel;
  uint32_t channel_id = 0, token_id = 0, sequence = 2, handle = 0;
  ua::NodeId token;
  double revised_timeout = 0;
  std::vector<ServerMessage> stash;  // responses not asked for yet
  // Multi-chunk messages whose final chunk has not arrived: request id -> bodies so far, chunk count.
  std::map<uint32_t, std::pair<std::vector<uint8_t>, uint32_t>> partial;
};

inline ua::ExtensionObject user(const char* name, const char* password) {
  return ua::ExtensionObject::make(ua::UserNameIdentityToken{ua::String("username_None"), ua::String(name),
                                                             ua::ByteString(password), ua::String()});
}

// A second shard with its own channel to the harness's server; given the harness's own `h.ctx`, a second
// channel on the harness's shard. REQUIRES: `ctx` outlives the server (it keeps timers there), so declare
// it before the ServiceHarness.
struct SecondShard {
  SecondShard(ServiceHarness& harness, asio::io_context& context) : h(harness), ctx(context) {
    if (&ctx != &h.ctx) h.server->attach_shard(ctx);
    ch = std::make_shared<SecureChannel>(ctx, sink, events, pool, stats, h.tconfig, *h.server, h.ids);
    ch->start();
    feed(hello());
    feed(open_request(1, 1));
    std::vector<ServerMessage> m;
    REQUIRE(parse_output(sink.out, m));
    sink.out.clear();
    ua::OpenSecureChannelResponse opened;
    REQUIRE(decode_body(m.back(), opened));
    channel_id = opened.security_token.channel_id;
    token_id = opened.security_token.token_id;
  }
  ~SecondShard() { ch->detach(); }

  // Runs both shards for about `d`.
  void run_for(std::chrono::milliseconds d) {
    const auto deadline = std::chrono::steady_clock::now() + d;
    do {
      h.ctx.restart();
      h.ctx.run_for(std::chrono::milliseconds(1));
      ctx.restart();
      ctx.run_for(std::chrono::milliseconds(1));
    } while (std::chrono::steady_clock::now() < deadline);
  }

  // Hands `bytes` to the channel, then runs both shards a little unless `run` is false (the request is
  // then handled, but what it posted waits for the next run).
  void feed(const std::string& bytes, bool run = true) {
    auto space = ch->receive_space();
    REQUIRE(space.size() >= bytes.size());
    std::memcpy(space.data(), bytes.data(), bytes.size());
    ch->on_received(bytes.size());
    if (run) run_for(std::chrono::milliseconds(2));
  }

  template <class Req>
  uint32_t send(Req req, bool run = true) {
    req.request_header.authentication_token = token;
    req.request_header.request_handle = ++handle;
    feed(symmetric_chunk("MSG", 'F', channel_id, token_id, sequence++, handle, encode_request(req)), run);
    return handle;
  }

  // Runs both shards until the answer to `request_id` arrives (at most 5 s).
  bool wait_response(uint32_t request_id, ServerMessage& out) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (;;) {
      std::vector<ServerMessage> m;
      REQUIRE(parse_output(sink.out, m));
      sink.out.clear();
      for (auto& x : m) stash.push_back(std::move(x));
      for (auto it = stash.begin(); it != stash.end(); ++it) {
        if (it->request_id == request_id) {
          out = std::move(*it);
          stash.erase(it);
          return true;
        }
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
      run_for(std::chrono::milliseconds(2));
    }
  }

  template <class Resp, class Req>
  Resp call(Req req, ua::StatusCode* fault = nullptr) {
    ServerMessage m;
    const uint32_t id = send(std::move(req));  // outside REQUIRE, which names its expression twice
    REQUIRE(wait_response(id, m));
    return decode_response<Resp>(m, fault);
  }

  // The client closes its channel (CloseSecureChannel, Part 4 §5.5.3).
  void close_channel() {
    feed(symmetric_chunk("CLO", 'F', channel_id, token_id, sequence++, ++handle,
                         encode_request(ua::CloseSecureChannelRequest{})));
  }

  // An anonymous session created and activated on this shard's channel.
  void login() {
    ua::CreateSessionRequest create;
    create.session_name = ua::String("second");
    create.requested_session_timeout = 60000;
    auto created = call<ua::CreateSessionResponse>(create);
    token = created.authentication_token;
    auto activated = call<ua::ActivateSessionResponse>(ua::ActivateSessionRequest{});
    REQUIRE(activated.response_header.service_result.is_good());
  }

  ServiceHarness& h;
  asio::io_context& ctx;
  MemorySink sink{ctx};
  MemoryEvents events;
  BufferPool pool;
  TransportStats stats;
  std::shared_ptr<SecureChannel> ch;
  uint32_t channel_id = 0, token_id = 0, sequence = 2, handle = 100;
  ua::NodeId token;
  std::vector<ServerMessage> stash;
};

}  // namespace opcuad::services::test
