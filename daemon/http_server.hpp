#pragma once
// HttpServer: a minimal HTTP/1.1 server for /healthz and /metrics, on Asio (already the project's
// network layer, so no new dependency), with its own io_context and thread: a slow scraper or a stuck
// shard can stall neither the control loop nor a shard, and the health check still answers when a shard
// does not. It serves GET and HEAD, one request per connection (Connection: close), and is bounded like
// any network service (docs/CONFIGURATION.md, "http"):
//   - at most `max_connections` at once; one more gets 503 at once, written without waiting, and closed;
//   - the request line and headers at most `max_request_bytes` (431 beyond), any body is not read;
//   - `timeout` from accept to the answer's last byte, then the connection is closed.
// The handler runs on the HTTP thread and must not block for long.

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace opcuad {

class HttpServer {
 public:
  struct Limits {
    uint32_t max_connections = 4;
    uint32_t max_request_bytes = 8192;
    std::chrono::milliseconds timeout{5000};
  };
  struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
  };
  // `path` is the request target without its query string.
  using Handler = std::function<Response(std::string_view path)>;

  HttpServer(Limits limits, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port (a numeric address or a name that resolves) and starts the thread; the reason when
  // it cannot.
  std::optional<std::string> start(const std::string& host, uint16_t port);
  // The bound port (a configured 0 picks one).
  uint16_t port() const noexcept { return port_; }
  asio::ip::tcp::endpoint endpoint() const noexcept { return endpoint_; }
  // Closes the acceptor and every connection, joins the thread. Idempotent.
  void stop();

  // The answer to one request head (request line and headers, without the final empty line), for the
  // parser's tests: method and target checked, the handler asked. Runs on the caller's thread.
  static std::string answer(std::string_view head, const Handler& handler);
  static std::string status_only(int status);

 private:
  class Connection;
  void accept_next();

  Limits limits_;
  Handler handler_;
  // Declared before the io_context: connections still queued in it when it is destroyed count down here.
  uint32_t active_ = 0;  // HTTP thread only: connections being served
  asio::io_context ctx_{1};
  asio::ip::tcp::acceptor acceptor_{ctx_};
  asio::steady_timer retry_{ctx_};  // after a failed accept (EMFILE): try again later, never spin
  std::thread thread_;
  uint16_t port_ = 0;
  asio::ip::tcp::endpoint endpoint_;
  bool running_ = false;
};

}  // namespace opcuad
