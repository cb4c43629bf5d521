// /metrics scraped over HTTP from its own thread while clients load real shards: the shards write their
// counter blocks and the HTTP thread sums them at the same time (ThreadSanitizer runs this as [live]),
// and the figures come out exact once the load is done.
#include <catch2/catch.hpp>

#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <atomic>
#include <cstring>
#include <thread>

#include "daemon/metrics.hpp"
#include "tests/unit/daemon/prometheus_parser.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "transport/listener.hpp"

using namespace opcuad;
using asio::ip::tcp;

namespace {

// A blocking UA TCP client on a client thread: failures throw (Catch2 is not thread-safe).
struct LoadClient {
  explicit LoadClient(uint16_t port) : socket(ctx) {
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  void send(const std::string& bytes) { asio::write(socket, asio::buffer(bytes)); }
  transport::test::ServerMessage receive() {
    std::string header(8, '\0');
    asio::read(socket, asio::buffer(header.data(), 8));
    uint32_t size;
    std::memcpy(&size, header.data() + 4, 4);
    std::string rest(size - 8, '\0');
    asio::read(socket, asio::buffer(rest.data(), rest.size()));
    std::vector<transport::test::ServerMessage> m;
    if (!transport::test::parse_output(header + rest, m) || m.size() != 1)
      throw std::runtime_error("malformed");
    return m[0];
  }
  void open() {
    send(transport::test::hello());
    if (receive().type != "ACK") throw std::runtime_error("no ACK");
    send(transport::test::open_request(1, 1));
    ua::OpenSecureChannelResponse r;
    if (!transport::test::decode_body(receive(), r)) throw std::runtime_error("no OPN");
    channel_id = r.security_token.channel_id;
    token_id = r.security_token.token_id;
  }
  void get_endpoints() {
    ua::GetEndpointsRequest req;
    req.endpoint_url = ua::String("opc.tcp://127.0.0.1:4840");
    req.request_header.request_handle = request;
    send(transport::test::symmetric_chunk("MSG", 'F', channel_id, token_id, sequence++, request++,
                                          transport::test::encode_request(req)));
    ua::GetEndpointsResponse r;
    if (!transport::test::decode_body(receive(), r)) throw std::runtime_error("no GetEndpointsResponse");
  }
  asio::io_context ctx;
  tcp::socket socket;
  uint32_t channel_id = 0, token_id = 0, sequence = 2, request = 2;
};

std::string scrape(uint16_t port) {
  asio::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  asio::write(s, asio::buffer(req));
  std::string out;
  asio::error_code ec;
  asio::read(s, asio::dynamic_buffer(out), ec);
  const size_t body = out.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : out.substr(body + 4);
}

}  // namespace

TEST_CASE("metrics: /metrics scraped while clients load two shards; exact figures after", "[metrics][live]") {
  services::test::ServiceHarness h;  // the address space and configuration
  transport::ShardPool pool(2);
  services::Server server(h.space, h.loaded.config);
  for (size_t i = 0; i < pool.size(); ++i) server.attach_shard(pool.shard(i).context());
  transport::TransportConfig tconfig;
  transport::ChannelIdSource ids;
  asio::io_context accept_ctx;
  transport::Listener listener(accept_ctx, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0), pool,
                               tconfig, server, ids);
  const uint16_t port = listener.port();  // read here: the accept thread owns the acceptor from now on
  pool.start();
  listener.start();
  std::thread accept_thread([&accept_ctx] { accept_ctx.run(); });

  metrics::DaemonCounters daemon;
  const metrics::Sources src{pool, server, daemon, std::chrono::system_clock::now(), "test", {}};
  HttpServer http({}, metrics::http_routes(src, std::chrono::seconds(5)));
  REQUIRE_FALSE(http.start("127.0.0.1", 0));

  constexpr int kClients = 4, kRequests = 100;
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      try {
        LoadClient client(port);
        client.open();
        for (int i = 0; i < kRequests; ++i) client.get_endpoints();
      } catch (const std::exception&) {
        failures.fetch_add(1);
      }
    });
  }
  int scrapes = 0;
  std::string error;
  bool all_parsed = true;
  for (int i = 0; i < 20; ++i) {  // while the load runs
    test::PromExposition e;
    all_parsed = all_parsed && test::parse_prometheus(scrape(http.port()), e, error);
    ++scrapes;
  }
  for (auto& t : clients) t.join();
  CHECK(failures.load() == 0);
  INFO(error);
  CHECK(all_parsed);

  test::PromExposition after;
  REQUIRE(test::parse_prometheus(scrape(http.port()), after, error));
  CHECK(after.value("opcuad_requests_total", {{"service", "GetEndpoints"}}) == kClients * kRequests);
  CHECK(after.value("opcuad_requests_received_total") == kClients * kRequests);
  CHECK(after.value("opcuad_connections_accepted_total") == kClients);
  CHECK(after.value("opcuad_secure_channels_opened_total", {{"policy", "None"}}) == kClients);
  CHECK(after.value("opcuad_request_duration_seconds_count") == kClients * kRequests);
  CHECK(after.value("opcuad_shard_requests_total", {{"shard", "0"}}) +
            after.value("opcuad_shard_requests_total", {{"shard", "1"}}) ==
        kClients * kRequests);
  CHECK(after.value("opcuad_received_bytes_total") > 0);
  CHECK(after.value("opcuad_sent_bytes_total") > 0);

  http.stop();
  asio::post(accept_ctx, [&listener] { listener.stop(); });
  server.detach_shards();
  pool.stop();
  accept_thread.join();
}
