#include <catch2/catch.hpp>

#include "config/config.hpp"

using namespace opcuad::config;

namespace {
std::string one_error(const LoadResult& r) {
  for (const auto& e : r.errors) UNSCOPED_INFO(e.to_string());
  REQUIRE(r.errors.size() == 1);
  return r.errors[0].to_string();
}
}  // namespace

TEST_CASE("config: http is off unless given, loopback when given without an address", "[config][http]") {
  CHECK_FALSE(load_config_text("{}", "s.json", ".").config.http);
  const LoadResult empty = load_config_text(R"({"http": {}})", "s.json", ".");
  REQUIRE(empty.errors.empty());
  REQUIRE(empty.config.http);
  CHECK(empty.config.http->listen == "127.0.0.1:9464");
  CHECK(empty.config.http->max_connections == 4);
  CHECK(empty.config.http->max_request_bytes == 8192);
  CHECK(empty.config.http->request_timeout_ms == 5000);
  CHECK(empty.config.http->health_max_age_ms == 2000);

  const LoadResult all = load_config_text(
      R"({"http": {"listen": "[::]:9100", "max_connections": 2, "max_request_bytes": 1024,
                   "request_timeout_ms": 100, "health_max_age_ms": 500}})",
      "s.json", ".");
  REQUIRE(all.errors.empty());
  CHECK(all.config.http->listen == "[::]:9100");  // any address, when written so
  CHECK(all.config.http->max_connections == 2);
  CHECK(all.config.http->max_request_bytes == 1024);
  CHECK(all.config.http->request_timeout_ms == 100);
  CHECK(all.config.http->health_max_age_ms == 500);
}

TEST_CASE("config: http values are checked", "[config][http][validation]") {
  CHECK(one_error(load_config_text(R"({"http": {"listen": "9464"}})", "s.json", ".")) ==
        "s.json: /http/listen: expected host:port or [address]:port, got \"9464\"");
  CHECK(one_error(load_config_text(R"({"http": {"listen": "::1:9464"}})", "s.json", "."))
            .find("/http/listen") != std::string::npos);
  CHECK(one_error(load_config_text(R"({"http": {"listen": "127.0.0.1:70000"}})", "s.json", "."))
            .find("/http/listen") != std::string::npos);
  CHECK(one_error(load_config_text(R"({"http": {"max_connections": 0}})", "s.json", "."))
            .find("/http/max_connections") != std::string::npos);
  CHECK(one_error(load_config_text(R"({"http": {"request_timeout_ms": 0}})", "s.json", "."))
            .find("/http/request_timeout_ms") != std::string::npos);
  CHECK(one_error(load_config_text(R"({"http": {"port": 1}})", "s.json", ".")) ==
        "s.json: /http/port: unknown key \"port\"");
  CHECK(one_error(load_config_text(R"({"http": true})", "s.json", ".")) ==
        "s.json: /http: expected an object, got a boolean");
}

TEST_CASE("config: split_listen_address", "[config][http]") {
  std::string host;
  uint16_t port = 0;
  CHECK(split_listen_address("127.0.0.1:9464", host, port));
  CHECK(host == "127.0.0.1");
  CHECK(port == 9464);
  CHECK(split_listen_address("[::1]:0", host, port));
  CHECK(host == "::1");
  CHECK(port == 0);
  CHECK(split_listen_address("localhost:65535", host, port));
  CHECK_FALSE(split_listen_address("localhost:65536", host, port));
  CHECK_FALSE(split_listen_address("localhost:", host, port));
  CHECK_FALSE(split_listen_address(":80", host, port));
  CHECK_FALSE(split_listen_address("[]:80", host, port));
  CHECK_FALSE(split_listen_address("a:8x", host, port));
  CHECK_FALSE(split_listen_address("1:2:3", host, port));
  CHECK_FALSE(split_listen_address("host:99999999999", host, port));
}
