// Discovery service set (Part 4 §5.4): GetEndpoints and FindServers.
#include "services/request.hpp"
#include "ua/endpoint_url.hpp"

namespace opcuad::services {

namespace {

constexpr std::string_view kTcpBinaryProfile =
    "http://opcfoundation.org/UA-Profile/Transport/uatcp-uasc-uabinary";
constexpr std::string_view kPolicyUriPrefix = "http://opcfoundation.org/UA/SecurityPolicy#";

// The URLs to publish for a configured endpoint URL (Part 4 §5.4.4): a wildcard host (0.0.0.0, [::])
// becomes the configured advertised host name, and the host the client dialled is listed as well, so the
// client always finds the address it used. `dialled` comes from the client and may be anything.
std::vector<std::string> advertised_urls(const std::string& configured, std::string_view dialled,
                                         std::string_view advertised_host) {
  const auto url = ua::parse_endpoint_url(configured);
  if (!url || !url->is_wildcard()) return {configured};
  const auto client = ua::parse_endpoint_url(dialled);
  // A client that dialled a wildcard itself (or nothing usable) names no host worth publishing.
  const std::string_view client_host = client && !client->is_wildcard() ? client->host : std::string_view{};
  if (advertised_host.size() > 2 && advertised_host.front() == '[' && advertised_host.back() == ']') {
    advertised_host = advertised_host.substr(1, advertised_host.size() - 2);
  }
  std::vector<std::string> urls;
  if (!advertised_host.empty()) urls.push_back(ua::with_host(*url, advertised_host));
  if (!client_host.empty() && client_host != advertised_host)
    urls.push_back(ua::with_host(*url, client_host));
  if (urls.empty()) urls.push_back(ua::with_host(*url, "localhost"));
  return urls;
}

}  // namespace

// Part 4 §7.2 (ApplicationDescription.discoveryUrls): the addresses a client can reach the server's
// discovery endpoints at, so a wildcard listening host is replaced exactly as in GetEndpoints.
ua::ApplicationDescription Server::application_description(std::string_view dialled) const {
  ua::ApplicationDescription d;
  d.application_uri = ua::String(config_.application_uri);
  d.product_uri = ua::String(config_.product_uri);
  d.application_name = ua::LocalizedText{ua::String("en"), ua::String(config_.application_name)};
  d.application_type = ua::ApplicationType::Server;
  for (const auto& e : config_.endpoints) {
    for (auto& url : advertised_urls(e.url, dialled, config_.advertised_hostname)) {
      ua::String u(url);
      bool seen = false;
      for (const auto& have : d.discovery_urls) seen |= have == u;
      if (!seen) d.discovery_urls.push_back(std::move(u));
    }
  }
  return d;
}

std::vector<ua::EndpointDescription> Server::endpoints(std::string_view dialled) const {
  std::vector<ua::EndpointDescription> out;
  const ua::ApplicationDescription app = application_description(dialled);
  for (const auto& e : config_.endpoints) {
    for (const auto& url : advertised_urls(e.url, dialled, config_.advertised_hostname)) {
      for (const auto& policy : e.security_policies) {
        for (const auto& mode : e.security_modes) {
          // Until signing and encryption exist, only None/None is served (the configuration refuses the
          // rest).
          if (policy != "None" || mode != "None") continue;
          ua::EndpointDescription d;
          d.endpoint_url = ua::String(url);
          d.server = app;
          d.server.discovery_urls = {d.endpoint_url};
          d.server_certificate = ua::ByteString();
          d.security_mode = ua::MessageSecurityMode::None;
          d.security_policy_uri = ua::String(std::string(kPolicyUriPrefix) + policy);
          // Stable policy ids: clients cache endpoints, so the ids never depend on order.
          if (config_.allow_anonymous) {
            d.user_identity_tokens.push_back(
                ua::UserTokenPolicy{ua::String("anonymous"), ua::UserTokenType::Anonymous, {}, {}, {}});
          }
          if (!config_.users.empty()) {
            d.user_identity_tokens.push_back(
                ua::UserTokenPolicy{ua::String("username"),
                                    ua::UserTokenType::UserName,
                                    {},
                                    {},
                                    ua::String(std::string(kPolicyUriPrefix) + "None")});
          }
          d.transport_profile_uri = ua::String(kTcpBinaryProfile);
          d.security_level = 0;  // None is the weakest; signed and encrypted endpoints will rank higher
          out.push_back(std::move(d));
        }
      }
    }
  }
  return out;
}

void handle_get_endpoints(Server& server, Call& call, ua::Decoder& body) {
  ua::GetEndpointsRequest req;
  if (!decode_request(call, body, req)) return;
  ua::GetEndpointsResponse resp;
  set_response_header(resp.response_header, req.request_header);
  bool profile_ok = req.profile_uris.empty();
  for (const auto& p : req.profile_uris) profile_ok |= p.view() == kTcpBinaryProfile;
  if (profile_ok) {
    std::string_view dialled =
        req.endpoint_url.is_null() ? std::string_view(call.channel.endpoint_url()) : req.endpoint_url.view();
    resp.endpoints = server.endpoints(dialled);
  }
  call.channel.send(call.request_id, resp);
}

void handle_find_servers(Server& server, Call& call, ua::Decoder& body) {
  ua::FindServersRequest req;
  if (!decode_request(call, body, req)) return;
  ua::FindServersResponse resp;
  set_response_header(resp.response_header, req.request_header);
  bool wanted = req.server_uris.empty();
  for (const auto& uri : req.server_uris) wanted |= uri.view() == server.config().application_uri;
  // Part 4 §5.4.2: endpointUrl is "the network address that the Client used to access the
  // DiscoveryEndpoint"; without it, the URL of the channel's Hello.
  const std::string_view dialled =
      req.endpoint_url.is_null() ? std::string_view(call.channel.endpoint_url()) : req.endpoint_url.view();
  if (wanted) resp.servers.push_back(server.application_description(dialled));
  call.channel.send(call.request_id, resp);
}

}  // namespace opcuad::services
