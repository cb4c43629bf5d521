// The real thing over loopback: ShardPool + Listener on port 0, blocking clients on other threads.
#include <catch2/catch.hpp>

#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "tests/unit/transport/channel_harness.hpp"
#include "transport/listener.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
using asio::ip::tcp;

namespace {

// A thread-safe handler: the listener's shards call it concurrently.
class SharedReadHandler : public ServiceHandler {
 public:
  bool on_request(SecureChannel& channel, const RequestContext& ctx, ua::Decoder& body) override {
    if (ctx.type_id != ua::ReadRequest::binary_encoding_id) return false;
    ua::ReadRequest req;
    ua::decode(body, req);
    ua::ReadResponse resp;
    resp.response_header.request_handle = req.request_header.request_handle;
    resp.results.resize(req.nodes_to_read.size());
    for (size_t i = 0; i < resp.results.size(); ++i) resp.results[i].value = ua::Variant(double(i));
    channel.send(ctx.request_id, resp);
    requests.fetch_add(1);
    return true;
  }
  std::atomic<int> requests{0};
};

struct Server {
  explicit Server(TransportConfig c = {}, uint32_t threads = 2) : config(c), shards(threads) {
    listener = std::make_unique<Listener>(accept_ctx, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0),
                                          shards, config, handler, ids);
    shards.start();
    listener->start();
    accept_thread = std::thread([this] { accept_ctx.run(); });
  }
  ~Server() {
    asio::post(accept_ctx, [this] { listener->stop(); });
    shards.stop();
    accept_thread.join();
  }
  TransportConfig config;
  asio::io_context accept_ctx;
  ShardPool shards;
  SharedReadHandler handler;
  ChannelIdSource ids;
  std::unique_ptr<Listener> listener;
  std::thread accept_thread;
};

// A blocking client speaking just enough UA TCP. It runs on client threads, where Catch2's assertions
// must not be used (they are not thread-safe): failures throw, and the main thread checks.
void expect(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(what);
}

struct Client {
  // `from`: the local address to connect from (any 127.x.y.z is this host's loopback).
  explicit Client(uint16_t port, const char* from = nullptr) : socket(ctx) {
    if (from) {
      socket.open(tcp::v4());
      socket.bind(tcp::endpoint(asio::ip::make_address(from), 0));
    }
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  void send(const std::string& bytes) { asio::write(socket, asio::buffer(bytes)); }
  ServerMessage receive() {
    std::string header(8, '\0');
    asio::read(socket, asio::buffer(header.data(), 8));
    uint32_t size;
    std::memcpy(&size, header.data() + 4, 4);
    std::string rest(size - 8, '\0');
    asio::read(socket, asio::buffer(rest.data(), rest.size()));
    std::vector<ServerMessage> m;
    expect(parse_output(header + rest, m) && m.size() == 1, "malformed server message");
    return m[0];
  }
  void open() {
    send(hello());
    expect(receive().type == "ACK", "no ACK");
    send(open_request(1, 1));
    auto m = receive();
    ua::OpenSecureChannelResponse r;
    expect(m.type == "OPN" && decode_body(m, r), "no OpenSecureChannel response");
    channel_id = r.security_token.channel_id;
    token_id = r.security_token.token_id;
  }
  ua::ReadResponse read(uint32_t handle, size_t nodes) {
    send(symmetric_chunk("MSG", 'F', channel_id, token_id, sequence++, request++,
                         encode_request(read_request(handle, nodes))));
    auto m = receive();
    ua::ReadResponse r;
    expect(decode_body(m, r), "no ReadResponse");
    return r;
  }
  asio::io_context ctx;
  tcp::socket socket;
  uint32_t channel_id = 0, token_id = 0, sequence = 2, request = 2;
};

}  // namespace

TEST_CASE("transport: many concurrent connections spread over the shards", "[transport][live]") {
  Server server;
  const uint16_t port = server.listener->port();
  std::atomic<int> good{0}, failed{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      try {
        Client c(port);
        c.open();
        for (uint32_t i = 0; i < 50; ++i) {
          auto r = c.read(i, 1 + t);
          if (r.response_header.request_handle == i && r.results.size() == static_cast<size_t>(t) + 1)
            good.fetch_add(1);
        }
      } catch (const std::exception&) {
        failed.fetch_add(1);
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(failed.load() == 0);
  CHECK(good.load() == 8 * 50);
  CHECK(server.handler.requests.load() == 400);
  CHECK(server.shards.shard(0).stats().connections_accepted.load() > 0);
  CHECK(server.shards.shard(1).stats().connections_accepted.load() > 0);
}

TEST_CASE("transport: garbage on some connections never disturbs the others", "[transport][live]") {
  Server server;
  const uint16_t port = server.listener->port();
  Client good(port);
  good.open();
  std::mt19937 rng(1234);
  for (int round = 0; round < 40; ++round) {
    Client bad(port);
    std::string bytes;
    if (round % 2) bytes = hello();  // sometimes valid framing first, then noise
    const size_t n = 1 + rng() % 3000;
    for (size_t i = 0; i < n; ++i) bytes += static_cast<char>(rng());
    if (round % 5 == 0) {
      // Mutate a valid stream instead of pure noise.
      bytes = hello() + open_request(1, 1);
      bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
    }
    asio::error_code ec;
    asio::write(bad.socket, asio::buffer(bytes), ec);
    auto r = good.read(round, 2);
    CHECK(r.response_header.request_handle == uint32_t(round));
  }
}

TEST_CASE("transport: connections beyond the maximum get BadTcpNotEnoughResources", "[transport][live]") {
  TransportConfig c;
  c.max_connections = 2;
  Server server(c);
  const uint16_t port = server.listener->port();
  Client a(port), b(port);
  a.open();
  b.open();
  Client extra(port);
  auto m = extra.receive();
  REQUIRE(m.type == "ERR");
  CHECK(error_of(m) == ua::status::BadTcpNotEnoughResources);
  CHECK(a.read(1, 1).results.size() == 1);
}

TEST_CASE("transport: a client that never reads costs bounded memory and is served once it reads",
          "[transport][live]") {
  TransportConfig c;
  c.max_owed_responses = 16;
  Server server(c, 1);
  Client client(server.listener->port());
  client.open();
  // Send requests without reading, non-blocking, until the server stops taking them.
  client.socket.non_blocking(true);
  std::string request;
  size_t sent_requests = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int stalls = 0;
  while (stalls < 50 && std::chrono::steady_clock::now() < deadline && sent_requests < 200000) {
    if (request.empty()) {
      request = symmetric_chunk("MSG", 'F', client.channel_id, client.token_id, client.sequence++,
                                client.request++, encode_request(read_request(uint32_t(sent_requests), 100)));
      ++sent_requests;
    }
    asio::error_code ec;
    size_t n = client.socket.write_some(asio::buffer(request), ec);
    if (ec == asio::error::would_block) {
      ++stalls;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    INFO("write error: " << ec.message() << " after " << sent_requests << " requests");
    REQUIRE(!ec);
    stalls = 0;
    request.erase(0, n);
  }
  // The server stopped reading long before 200,000 requests: the kernel buffers filled instead.
  INFO("requests sent before the server stopped reading: " << sent_requests);
  CHECK(sent_requests < 200000);
  const int handled_while_stalled = server.handler.requests.load();
  CHECK(handled_while_stalled < int(sent_requests));
  // Now read everything: a reader thread takes responses while the rest of the last request goes out;
  // every request is answered, in order.
  client.socket.non_blocking(false);
  size_t answered = 0;
  bool in_order = true;
  std::thread reader([&] {
    try {
      for (; answered < sent_requests; ++answered) {
        auto m = client.receive();
        if (m.type != "MSG" || m.request_id != 2 + answered) {
          in_order = false;
          break;
        }
      }
    } catch (const std::exception&) {
      in_order = false;
    }
  });
  if (!request.empty()) asio::write(client.socket, asio::buffer(request));
  reader.join();
  CHECK(in_order);
  CHECK(answered == sent_requests);
  CHECK(server.handler.requests.load() == int(sent_requests));
}

TEST_CASE("transport: per-address slots count IPv4 and IPv4-mapped IPv6 as one and are released",
          "[transport][limits]") {
  AddressLimit limit;
  const auto v4 = asio::ip::make_address("192.0.2.7");
  const auto mapped = asio::ip::make_address("::ffff:192.0.2.7");
  const auto v6 = asio::ip::make_address("2001:db8::7");
  AddressLimit::Slot a, b, c, d;
  REQUIRE(limit.try_acquire(v4, 2, a));
  REQUIRE(limit.try_acquire(mapped, 2, b));
  CHECK(limit.count(v4) == 2);
  CHECK_FALSE(limit.try_acquire(v4, 2, c));  // the third from one address
  CHECK_FALSE(c);
  CHECK(limit.try_acquire(v6, 2, c));  // another address is not affected
  AddressLimit::Slot moved = std::move(a);
  CHECK(limit.count(v4) == 2);
  moved.reset();
  CHECK(limit.count(v4) == 1);
  CHECK(limit.try_acquire(v4, 2, d));
  CHECK(limit.try_acquire(v4, 0, a));  // 0: no limit, nothing counted
  CHECK_FALSE(a);
  b.reset();
  d.reset();
  c.reset();
  CHECK(limit.addresses() == 0);
}

TEST_CASE("transport: the connection beyond the per-address cap is refused, another address is accepted",
          "[transport][live][limits]") {
  TransportConfig c;
  c.max_connections_per_address = 2;
  Server server(c);
  const uint16_t port = server.listener->port();
  auto a = std::make_unique<Client>(port);
  Client b(port);
  a->open();
  b.open();
  Client extra(port);
  auto m = extra.receive();
  REQUIRE(m.type == "ERR");
  CHECK(error_of(m) == ua::status::BadTcpNotEnoughResources);
  // Another client address is served.
  Client other(port, "127.0.0.2");
  other.open();
  CHECK(other.read(1, 1).results.size() == 1);
  const auto local = asio::ip::make_address("127.0.0.1");
  CHECK(server.shards.addresses().count(local) == 2);
  // A connection that ends gives its slot back.
  a.reset();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server.shards.addresses().count(local) != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(server.shards.addresses().count(local) == 1);
  Client again(port);
  again.open();
  CHECK(again.read(2, 1).results.size() == 1);
}

namespace {

// Restores the process's descriptor limit when the test ends, however it ends.
struct DescriptorLimit {
  DescriptorLimit() { getrlimit(RLIMIT_NOFILE, &saved); }
  ~DescriptorLimit() { setrlimit(RLIMIT_NOFILE, &saved); }
  bool lower_to(rlim_t n) {
    rlimit low = saved;
    low.rlim_cur = n;
    return setrlimit(RLIMIT_NOFILE, &low) == 0;
  }
  rlimit saved{};
};

int highest_open_descriptor() {
  int highest = 2;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) highest = std::max(highest, std::atoi(e->d_name));
    closedir(d);
  }
  return highest;
}

}  // namespace

TEST_CASE("transport: out of descriptors the accept loop backs off, warns and recovers",
          "[transport][live][limits]") {
  std::mutex mu;
  std::vector<std::string> warnings;
  TransportConfig c;
  c.warn = [&](std::string_view w) {
    std::lock_guard lock(mu);
    warnings.emplace_back(w);
  };
  Server server(c, 1);
  const uint16_t port = server.listener->port();
  {
    // Warm-up. UBSan checks the dynamic type of a virtual call once per type and caches the verdict;
    // that first check opens a pipe, and without a descriptor it reports a false "invalid vptr". So
    // every loop turns once before the window: a connection through the accept thread and the shard,
    // served and closed, and a timer expiry (the back-off timer's queue type) on a loop of our own.
    Client warm(port);
    warm.open();
    expect(warm.read(1, 1).results.size() == 1, "warm-up read");
    warm.socket.close();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (server.shards.addresses().addresses() != 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    REQUIRE(server.shards.addresses().addresses() == 0);
    asio::io_context timers;
    asio::steady_timer tick(timers, std::chrono::milliseconds(1));
    tick.async_wait([](const asio::error_code&) {});
    timers.run();
  }
  std::vector<int> held;
  int client = -1;
  // While no descriptor is left nothing here uses Catch's assertions: the sanitizers' runtime checks
  // inside them may need a descriptor of their own. The facts are kept and checked once they are free.
  int open_errno = 0;
  bool connected = false;
  uint64_t attempts = 0;
  std::vector<std::string> seen;
  {
    DescriptorLimit limit;
    REQUIRE(limit.lower_to(static_cast<rlim_t>(highest_open_descriptor()) + 16));
    // Take every descriptor left, then give one back for the client's socket: the server has none.
    for (int fd; (fd = ::open("/dev/null", O_RDONLY)) >= 0;) held.push_back(fd);
    open_errno = errno;
    if (!held.empty()) {
      ::close(held.back());
      held.pop_back();
    }
    const uint64_t before = server.listener->accept_attempts();
    client = ::socket(AF_INET, SOCK_STREAM, 0);
    if (client >= 0) {
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(port);
      ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
      // The kernel completes the handshake; the connection waits in the backlog while accept() fails.
      connected = ::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0;
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
    }
    attempts = server.listener->accept_attempts() - before;
    {
      std::lock_guard lock(mu);
      seen = warnings;
    }
    for (int fd : held) ::close(fd);
    held.clear();
  }
  CHECK(open_errno == EMFILE);
  REQUIRE(client >= 0);
  REQUIRE(connected);
  INFO("accept attempts while out of descriptors: " << attempts);
  CHECK(attempts >= 2);       // it kept trying...
  CHECK(attempts <= 10);      // ...50, 100, 200, 400 ms apart, not in a loop
  REQUIRE(seen.size() == 1);  // once, not once per attempt
  CHECK(seen[0].find("accept failed") != std::string::npos);
  // Descriptors are free again: the waiting client is accepted (within the 1 s back-off) and served.
  timeval timeout{5, 0};
  ::setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const std::string hel = hello();
  REQUIRE(::send(client, hel.data(), hel.size(), 0) == static_cast<ssize_t>(hel.size()));
  char header[8] = {};
  REQUIRE(::recv(client, header, sizeof header, MSG_WAITALL) == 8);
  CHECK(std::string(header, 3) == "ACK");
  ::close(client);
  std::lock_guard lock(mu);
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[1].find("accepting connections again") != std::string::npos);
}
