// Discovery (Part 4 §5.4): FindServers' discoveryUrls and GetEndpoints' endpointUrls never publish a
// wildcard listening host (0.0.0.0 or [::]); they name the host the client dialled and the configured
// advertised host name, IPv6 literals in brackets. The dialled URL comes from the client and may be junk.
#include <catch2/catch.hpp>

#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::services::test;

namespace {
std::vector<std::string> discovery_urls(ServiceHarness& h, const char* dialled) {
  ua::FindServersRequest fs;
  if (dialled) fs.endpoint_url = ua::String(dialled);
  auto r = h.call<ua::FindServersResponse>(fs);
  REQUIRE(r.servers.size() == 1);
  std::vector<std::string> out;
  for (const auto& u : r.servers[0].discovery_urls) out.emplace_back(u.view());
  return out;
}

std::vector<std::string> endpoint_urls(ServiceHarness& h, const char* dialled) {
  ua::GetEndpointsRequest ge;
  if (dialled) ge.endpoint_url = ua::String(dialled);
  auto r = h.call<ua::GetEndpointsResponse>(ge);
  std::vector<std::string> out;
  for (const auto& e : r.endpoints) {
    out.emplace_back(e.endpoint_url.view());
    // Each endpoint's ApplicationDescription names its own URL as the discovery URL.
    REQUIRE(e.server.discovery_urls.size() == 1);
    CHECK(e.server.discovery_urls[0] == e.endpoint_url);
  }
  return out;
}

using Urls = std::vector<std::string>;
}  // namespace

TEST_CASE("discovery: FindServers replaces the IPv4 wildcard with the dialled host",
          "[services][discovery]") {
  ServiceHarness h;  // listens on opc.tcp://0.0.0.0:4840
  CHECK(discovery_urls(h, "opc.tcp://plant-gw:4840") == Urls{"opc.tcp://plant-gw:4840"});
  CHECK(discovery_urls(h, "opc.tcp://10.1.2.3:4840/ua") == Urls{"opc.tcp://10.1.2.3:4840"});
  // Without endpointUrl: the URL of the channel's Hello (opc.tcp://localhost:4840 in the harness).
  CHECK(discovery_urls(h, nullptr) == Urls{"opc.tcp://localhost:4840"});
  CHECK(endpoint_urls(h, nullptr) == Urls{"opc.tcp://localhost:4840"});

  h.loaded.config.advertised_hostname = "gw.example";  // the server reads its configuration live
  CHECK(discovery_urls(h, "opc.tcp://10.1.2.3:4840") ==
        Urls{"opc.tcp://gw.example:4840", "opc.tcp://10.1.2.3:4840"});
  CHECK(discovery_urls(h, "opc.tcp://gw.example:4840") == Urls{"opc.tcp://gw.example:4840"});
  CHECK(endpoint_urls(h, "opc.tcp://10.1.2.3:4840") ==
        Urls{"opc.tcp://gw.example:4840", "opc.tcp://10.1.2.3:4840"});
}

TEST_CASE("discovery: the IPv6 wildcard [::] is recognised and IPv6 hosts keep their brackets",
          "[services][discovery]") {
  ServiceHarness h;
  h.loaded.config.endpoints[0].url = "opc.tcp://[::]:4841";
  CHECK(discovery_urls(h, "opc.tcp://[fe80::5%eth0]:4841") == Urls{"opc.tcp://[fe80::5%eth0]:4841"});
  CHECK(endpoint_urls(h, "opc.tcp://[fd00::7]:4841") == Urls{"opc.tcp://[fd00::7]:4841"});
  CHECK(endpoint_urls(h, "opc.tcp://plant-gw:4841") == Urls{"opc.tcp://plant-gw:4841"});
  h.loaded.config.advertised_hostname = "fd00::1";
  CHECK(discovery_urls(h, "opc.tcp://plant-gw:4841") ==
        Urls{"opc.tcp://[fd00::1]:4841", "opc.tcp://plant-gw:4841"});
  h.loaded.config.advertised_hostname = "[fd00::1]";
  CHECK(endpoint_urls(h, "opc.tcp://[fd00::1]:4841") == Urls{"opc.tcp://[fd00::1]:4841"});

  // A specific listening address is published as configured.
  h.loaded.config.endpoints[0].url = "opc.tcp://[fd00::9]:4842";
  CHECK(discovery_urls(h, "opc.tcp://elsewhere:1") == Urls{"opc.tcp://[fd00::9]:4842"});
  CHECK(endpoint_urls(h, "opc.tcp://elsewhere:1") == Urls{"opc.tcp://[fd00::9]:4842"});
}

TEST_CASE("discovery: a junk or wildcard dialled URL never reaches the published URLs",
          "[services][discovery]") {
  ServiceHarness h;
  h.loaded.config.endpoints.push_back(config::Endpoint{"opc.tcp://[::]:4841", {"None"}, {"None"}});
  for (const char* junk : {"", "http://x", "opc.tcp://", "opc.tcp://[::1", "opc.tcp://a:99999",
                           "opc.tcp://0.0.0.0:4840", "opc.tcp://[::]:4840", "opc.tcp://us@er:1"}) {
    INFO(junk);
    CHECK(discovery_urls(h, junk) == Urls{"opc.tcp://localhost:4840", "opc.tcp://localhost:4841"});
    CHECK(endpoint_urls(h, junk) == Urls{"opc.tcp://localhost:4840", "opc.tcp://localhost:4841"});
  }
  const std::string long_host = "opc.tcp://" + std::string(4000, 'h') + ":4840";
  const Urls urls = discovery_urls(h, long_host.c_str());
  REQUIRE(urls.size() == 2);
  CHECK(urls[0].size() == long_host.size());
}
