#include <catch2/catch.hpp>

#include <asio/connect.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <chrono>
#include <thread>

#include "daemon/http_server.hpp"

using namespace opcuad;

namespace {

HttpServer::Handler echo_routes() {
  return [](std::string_view path) -> HttpServer::Response {
    if (path == "/hello") return {200, "text/plain", "hi\n"};
    return {404, "text/plain", "Not Found\n"};
  };
}

asio::ip::tcp::socket connect_to(asio::io_context& io, uint16_t port) {
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), port});
  return s;
}

// Writes `request`, reads until the server closes; what it answered.
std::string http_exchange(uint16_t port, const std::string& request) {
  asio::io_context io;
  auto s = connect_to(io, port);
  asio::write(s, asio::buffer(request));
  std::string out;
  asio::error_code ec;
  asio::read(s, asio::dynamic_buffer(out), ec);
  return out;
}

int status_of(const std::string& response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0 || response.size() < 12) return -1;
  return std::stoi(response.substr(9, 3));
}

}  // namespace

TEST_CASE("HttpServer answers GET and HEAD, 404, 405, 400", "[http][live]") {
  HttpServer server({}, echo_routes());
  REQUIRE_FALSE(server.start("127.0.0.1", 0));
  const uint16_t port = server.port();
  REQUIRE(port != 0);

  const std::string ok = http_exchange(port, "GET /hello?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
  CHECK(status_of(ok) == 200);
  CHECK(ok.find("Content-Length: 3\r\n") != std::string::npos);
  CHECK(ok.find("Connection: close\r\n") != std::string::npos);
  CHECK(ok.substr(ok.size() - 3) == "hi\n");
  const std::string head = http_exchange(port, "HEAD /hello HTTP/1.0\r\n\r\n");
  CHECK(status_of(head) == 200);
  CHECK(head.substr(head.size() - 4) == "\r\n\r\n");  // headers only
  CHECK(status_of(http_exchange(port, "GET /nope HTTP/1.1\r\n\r\n")) == 404);
  const std::string post = http_exchange(port, "POST /hello HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
  CHECK(status_of(post) == 405);
  CHECK(post.find("Allow: GET, HEAD\r\n") != std::string::npos);
  CHECK(status_of(http_exchange(port, "GET /hello\r\n\r\n")) == 400);          // no version
  CHECK(status_of(http_exchange(port, "GET hello HTTP/1.1\r\n\r\n")) == 400);  // not a path
  CHECK(status_of(http_exchange(port, "GET /a b HTTP/1.1\r\n\r\n")) == 400);
  CHECK(status_of(http_exchange(port, "GET /hello SPDY/3\r\n\r\n")) == 400);
  server.stop();
}

TEST_CASE("HttpServer bounds: request size (431), connections (503), time (closed)", "[http][live]") {
  HttpServer::Limits limits;
  limits.max_connections = 2;
  limits.max_request_bytes = 256;
  limits.timeout = std::chrono::milliseconds(300);
  HttpServer server(limits, echo_routes());
  REQUIRE_FALSE(server.start("127.0.0.1", 0));
  const uint16_t port = server.port();

  // A head that never ends within the limit is refused once it fills the buffer.
  CHECK(status_of(http_exchange(
            port, "GET /hello HTTP/1.1\r\nX-Filler: " + std::string(300, 'a') + "\r\n\r\n")) == 431);
  // Just inside the limit it is served.
  const std::string fits = "GET /hello HTTP/1.1\r\nX: " + std::string(256 - 28, 'a') + "\r\n\r\n";
  REQUIRE(fits.size() == 256);
  CHECK(status_of(http_exchange(port, fits)) == 200);

  // Two idle connections take every slot: a third is refused at once with 503 (read without sending:
  // a request the server never reads may turn its close into a reset).
  asio::io_context io;
  auto idle1 = connect_to(io, port);
  auto idle2 = connect_to(io, port);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both accepted
  {
    auto third = connect_to(io, port);
    std::string busy;
    asio::error_code ec;
    asio::read(third, asio::dynamic_buffer(busy), ec);
    CHECK(status_of(busy) == 503);
  }

  // The idle ones are closed by the server when their time is up; the slots come back.
  const auto start = std::chrono::steady_clock::now();
  std::string rest;
  asio::error_code ec;
  asio::read(idle1, asio::dynamic_buffer(rest), ec);
  CHECK(ec == asio::error::eof);
  CHECK(rest.empty());
  const auto waited = std::chrono::steady_clock::now() - start;
  CHECK(waited < std::chrono::milliseconds(1500));
  asio::read(idle2, asio::dynamic_buffer(rest), ec);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(status_of(http_exchange(port, "GET /hello HTTP/1.1\r\n\r\n")) == 200);
  server.stop();
}

TEST_CASE("HttpServer: a handler that throws is a 500, and stop() is idempotent", "[http][live]") {
  HttpServer server({}, [](std::string_view) -> HttpServer::Response { throw std::runtime_error("boom"); });
  REQUIRE_FALSE(server.start("127.0.0.1", 0));
  CHECK(status_of(http_exchange(server.port(), "GET / HTTP/1.1\r\n\r\n")) == 500);
  server.stop();
  server.stop();
  HttpServer taken({}, echo_routes());
  CHECK(taken.start("256.0.0.1", 0).has_value());  // not an address
}
