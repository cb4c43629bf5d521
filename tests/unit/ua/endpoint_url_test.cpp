// The one opc.tcp URL parser (ua/endpoint_url.hpp): hosts, IPv6 literals, ports, paths and every
// rejection with its reason.
#include <catch2/catch.hpp>

#include <cstring>

#include "ua/endpoint_url.hpp"

using namespace opcuad;
using namespace opcuad::ua;

TEST_CASE("endpoint url: host, port and path", "[ua][endpoint_url]") {
  auto u = parse_endpoint_url("opc.tcp://plant-gw:4843/ua/server");
  REQUIRE(u);
  CHECK(u->host == "plant-gw");
  CHECK(u->port == 4843);
  CHECK(u->has_port);
  CHECK_FALSE(u->ipv6);
  CHECK(u->path == "/ua/server");
  CHECK_FALSE(u->is_wildcard());

  u = parse_endpoint_url("OPC.TCP://10.0.0.5");  // the scheme in any case; no port: 4840
  REQUIRE(u);
  CHECK(u->host == "10.0.0.5");
  CHECK(u->port == 4840);
  CHECK_FALSE(u->has_port);
  CHECK(u->path.empty());

  u = parse_endpoint_url("opc.tcp://localhost:0");  // port 0: a listener picks one
  REQUIRE(u);
  CHECK(u->port == 0);
  CHECK(u->has_port);

  u = parse_endpoint_url("opc.tcp://host:65535/");
  REQUIRE(u);
  CHECK(u->port == 65535);
  CHECK(u->path == "/");
}

TEST_CASE("endpoint url: IPv6 literals and wildcards", "[ua][endpoint_url]") {
  auto u = parse_endpoint_url("opc.tcp://[fe80::1%eth0]:4840/x");
  REQUIRE(u);
  CHECK(u->host == "fe80::1%eth0");
  CHECK(u->ipv6);
  CHECK(u->port == 4840);
  CHECK(u->path == "/x");
  CHECK_FALSE(u->is_wildcard());

  u = parse_endpoint_url("opc.tcp://[::1]");
  REQUIRE(u);
  CHECK(u->host == "::1");
  CHECK_FALSE(u->has_port);
  CHECK_FALSE(u->is_wildcard());

  u = parse_endpoint_url("opc.tcp://[::ffff:10.0.0.1]:48400");
  REQUIRE(u);
  CHECK(u->host == "::ffff:10.0.0.1");

  for (const char* wildcard : {"opc.tcp://0.0.0.0:4840", "opc.tcp://[::]:4840", "opc.tcp://[::0]",
                               "opc.tcp://[0:0:0:0:0:0:0:0]:1"}) {
    INFO(wildcard);
    u = parse_endpoint_url(wildcard);
    REQUIRE(u);
    CHECK(u->is_wildcard());
  }
  u = parse_endpoint_url("opc.tcp://0.0.0.1:4840");
  REQUIRE(u);
  CHECK_FALSE(u->is_wildcard());
}

TEST_CASE("endpoint url: rejections name their reason", "[ua][endpoint_url]") {
  struct Bad {
    const char* url;
    const char* reason_part;
  };
  for (const Bad& b : {Bad{"http://host:4840", "opc.tcp://"},
                       Bad{"opc.tcp:/host", "opc.tcp://"},
                       Bad{"", "opc.tcp://"},
                       Bad{"opc.tcp://", "no host"},
                       Bad{"opc.tcp://:4840", "no host"},
                       Bad{"opc.tcp:///path", "no host"},
                       Bad{"opc.tcp://[]:4840", "IPv6"},
                       Bad{"opc.tcp://host:", "empty"},
                       Bad{"opc.tcp://host:65536", "above 65535"},
                       Bad{"opc.tcp://host:123456", "above 65535"},
                       Bad{"opc.tcp://host:-1", "decimal"},
                       Bad{"opc.tcp://host:48a0", "decimal"},
                       Bad{"opc.tcp://host: 4840", "decimal"},
                       Bad{"opc.tcp://::1:4840", "brackets"},
                       Bad{"opc.tcp://[::1", "closing"},
                       Bad{"opc.tcp://[::1]4840", "':port'"},
                       Bad{"opc.tcp://[host]:4840", "IPv6"},
                       Bad{"opc.tcp://[::1%]:4840", "IPv6"},
                       Bad{"opc.tcp://user@host:4840", "user"},
                       Bad{"opc.tcp://ho st:4840", "character"}}) {
    INFO(b.url);
    const char* reason = nullptr;
    CHECK_FALSE(parse_endpoint_url(b.url, &reason));
    REQUIRE(reason);
    CHECK(std::strstr(reason, b.reason_part) != nullptr);
  }
  CHECK_FALSE(parse_endpoint_url("opc.tcp://host:99999"));  // a reason is optional
}

TEST_CASE("endpoint url: scheme check and formatting", "[ua][endpoint_url]") {
  CHECK(has_opc_tcp_scheme("opc.tcp://x"));
  CHECK(has_opc_tcp_scheme("Opc.Tcp://"));
  CHECK_FALSE(has_opc_tcp_scheme("opc.tcp:/"));
  CHECK_FALSE(has_opc_tcp_scheme("opc.udp://x"));

  CHECK(format_endpoint_url("gw", 4840, "/p") == "opc.tcp://gw:4840/p");
  CHECK(format_endpoint_url("fd00::1", std::nullopt, "") == "opc.tcp://[fd00::1]");
  CHECK(format_endpoint_url("[fd00::1]", 1, "") == "opc.tcp://[fd00::1]:1");  // brackets given: kept
  const auto u = parse_endpoint_url("opc.tcp://[::]:4843/ua");
  REQUIRE(u);
  CHECK(with_host(*u, "plant-gw") == "opc.tcp://plant-gw:4843/ua");
  CHECK(with_host(*u, "fe80::2") == "opc.tcp://[fe80::2]:4843/ua");
  const auto no_port = parse_endpoint_url("opc.tcp://0.0.0.0");
  REQUIRE(no_port);
  CHECK(with_host(*no_port, "10.1.2.3") == "opc.tcp://10.1.2.3");
}
