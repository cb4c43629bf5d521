// Discovery service set (Part 4 §5.4): GetEndpoints and FindServers.
#include "services/handlers.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "ua/endpoint_url.hpp"

namespace opcuad::services {

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
