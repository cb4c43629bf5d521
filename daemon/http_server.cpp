#include "daemon/http_server.hpp"

#include <pthread.h>

#include <asio/write.hpp>

#include <memory>

namespace opcuad {

namespace {

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

std::string response_text(const HttpServer::Response& r, bool with_body) {
  std::string out =
      "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(reason_phrase(r.status)) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  if (r.status == 405) out += "Allow: GET, HEAD\r\n";
  out += "Connection: close\r\n\r\n";
  if (with_body) out += r.body;
  return out;
}

}  // namespace

std::string HttpServer::status_only(int status) {
  return response_text(
      Response{status, "text/plain; charset=utf-8", std::string(reason_phrase(status)) + "\n"}, true);
}

std::string HttpServer::answer(std::string_view head, const Handler& handler) {
  // RFC 9112 §3: request-line = method SP request-target SP HTTP-version
  const std::string_view line = head.substr(0, head.find("\r\n"));
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return status_only(400);
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (version.substr(0, 7) != "HTTP/1." || target.empty() || target.front() != '/') return status_only(400);
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) return status_only(405);
  target = target.substr(0, target.find('?'));
  Response r;
  try {
    r = handler(target);
  } catch (const std::exception&) {
    r = Response{500, "text/plain; charset=utf-8", "Internal Server Error\n"};
  }
  return response_text(r, !head_only);
}

class HttpServer::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(HttpServer& server, asio::ip::tcp::socket socket)
      : server_(server), socket_(std::move(socket)), timer_(server.ctx_) {
    ++server_.active_;
  }
  ~Connection() { --server_.active_; }

  void start() {
    buffer_.resize(server_.limits_.max_request_bytes);
    timer_.expires_after(server_.limits_.timeout);
    timer_.async_wait([weak = weak_from_this()](std::error_code ec) {
      if (ec) return;
      if (auto self = weak.lock()) self->close();  // too slow: the pending read or write fails
    });
    read();
  }

 private:
  void read() {
    socket_.async_read_some(asio::buffer(buffer_.data() + filled_, buffer_.size() - filled_),
                            [self = shared_from_this()](std::error_code ec, size_t n) {
                              if (ec) return self->close();
                              self->filled_ += n;
                              const std::string_view got(self->buffer_.data(), self->filled_);
                              const size_t end = got.find("\r\n\r\n");
                              if (end != std::string_view::npos) {
                                return self->respond(answer(got.substr(0, end), self->server_.handler_));
                              }
                              if (self->filled_ == self->buffer_.size())
                                return self->respond(status_only(431));
                              self->read();
                            });
  }

  void respond(std::string text) {
    response_ = std::move(text);
    asio::async_write(socket_, asio::buffer(response_),
                      [self = shared_from_this()](std::error_code ec, size_t) {
                        if (ec) return self->close();
                        // Closing with unread request bytes would reset the connection and could destroy the
                        // answer before the client read it (RFC 9112 §9.6): send FIN, read and drop what
                        // comes until the client closes or the connection's time is up.
                        asio::error_code ignored;
                        self->socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
                        self->drain();
                      });
  }

  void drain() {
    socket_.async_read_some(asio::buffer(buffer_), [self = shared_from_this()](std::error_code ec, size_t) {
      if (ec) return self->close();
      self->drain();
    });
  }

  void close() {
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    timer_.cancel();
  }

  HttpServer& server_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  std::string buffer_;
  size_t filled_ = 0;
  std::string response_;
};

HttpServer::HttpServer(Limits limits, Handler handler) : limits_(limits), handler_(std::move(handler)) {}

HttpServer::~HttpServer() {
  stop();
}

std::optional<std::string> HttpServer::start(const std::string& host, uint16_t port) {
  try {
    asio::ip::tcp::resolver resolver(ctx_);
    const auto results =
        resolver.resolve(host, std::to_string(port),
                         asio::ip::tcp::resolver::passive | asio::ip::tcp::resolver::numeric_service);
    const asio::ip::tcp::endpoint ep = *results.begin();
    acceptor_.open(ep.protocol());
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen();
    endpoint_ = acceptor_.local_endpoint();
    port_ = endpoint_.port();
  } catch (const std::system_error& e) {
    asio::error_code ignored;
    acceptor_.close(ignored);
    return std::string(e.what());
  }
  running_ = true;
  accept_next();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "opcuad-http");  // what `top -H` and /proc/PID/task/TID/comm show
    ctx_.run();
  });
  return std::nullopt;
}

void HttpServer::accept_next() {
  acceptor_.async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors (EMFILE) and the like: the pending connection stays in the backlog, so an
      // immediate retry fails again; wait instead of spinning.
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([this](std::error_code wait_error) {
        if (!wait_error) accept_next();
      });
      return;
    }
    if (active_ >= limits_.max_connections) {
      // Refused without holding anything: one non-blocking write of a short answer, then close. What the
      // client sent already is read first, so the close is a FIN rather than a reset.
      asio::error_code ignored;
      socket.non_blocking(true, ignored);
      char discard[512];
      socket.read_some(asio::buffer(discard), ignored);
      const std::string busy = status_only(503);
      socket.write_some(asio::buffer(busy), ignored);
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
      socket.close(ignored);
    } else {
      std::make_shared<Connection>(*this, std::move(socket))->start();
    }
    accept_next();
  });
}

void HttpServer::stop() {
  if (!running_) return;
  running_ = false;
  ctx_.stop();
  if (thread_.joinable()) thread_.join();
  // The thread is gone: nothing else touches the acceptor. Connections still open close with the
  // io_context (their handlers are destroyed with it).
  asio::error_code ignored;
  acceptor_.close(ignored);
}

}  // namespace opcuad
