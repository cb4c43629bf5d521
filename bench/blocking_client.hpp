#pragma once
// Blocking request/response on a connected socket, for setup phases (session open and close,
// subscriptions, monitored items, the server counters): a request of any size is split into chunks that
// fit the server's receive buffer, and a response of any number of chunks is reassembled. Not for the
// load path (see ua_client.hpp).

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bench/ua_client.hpp"
#include "bench/ua_framing.hpp"
#include "ua/codec.hpp"
#include "ua/generated/types.hpp"

namespace opcuad::bench {

// HEL/ACK, OpenSecureChannel (None, or the run's policy and mode when endpoint.security is set),
// CreateSession, ActivateSession (anonymous, with endpoint.anonymous_policy_id; signed by the client on a
// secured channel), on a connected socket. On failure returns false with a message.
bool open_session(asio::ip::tcp::socket& socket, const Endpoint& endpoint, const std::string& session_name,
                  SessionInfo& out, std::string& error, double session_timeout_ms = 60000);
// What GetEndpoints (Part 4 §5.4.4) tells about the endpoint a run uses.
struct DiscoveredEndpoint {
  std::string anonymous_policy_id;          // the policyId of its Anonymous UserTokenPolicy (Part 4 §7.41)
  std::vector<uint8_t> server_certificate;  // DER, the leaf of the chain; empty on None endpoints
};
// Asks the server at endpoint.port for its endpoints, on a SecurityPolicy None channel and without a
// session (a discovery service, Part 4 §5.4.1), and picks the one that offers `s`'s policy and mode with an
// anonymous user token policy. Servers name that policy as they like ("anonymous",
// "open62541-anonymous-policy", ...) and refuse ActivateSession with BadIdentityTokenInvalid when the
// token names another. False with a reason that lists what the server offers.
bool discover_endpoint(const Endpoint& endpoint, const SecuritySettings& s, DiscoveredEndpoint& out,
                       std::string& error);
// Connects to the endpoint's port on the loopback address, then open_session(); on failure false with
// "connect: ..." or open_session()'s message.
bool connect_session(asio::ip::tcp::socket& s, const Endpoint& endpoint, const std::string& session_name,
                     SessionInfo& out, std::string& error, double session_timeout_ms = 60000);
// One turn of the connect and storm scenarios' closed loops: a new connection, a session opened, closed
// (CloseSession, CLO), the socket closed.
bool session_cycle(asio::io_context& ctx, const Endpoint& endpoint, const std::string& session_name,
                   std::string& error);
// Sends type id + request body as one message of as many chunks as needed.
bool send_message(asio::ip::tcp::socket& s, SessionInfo& info, uint32_t request_id,
                  std::span<const uint8_t> body, std::string& error);
// Reads chunks until a final one; `body` gets the reassembled message body (after the sequence header).
// Secured chunks are checked and decrypted with info's keys.
bool read_response(asio::ip::tcp::socket& s, const SessionInfo& info, uint32_t& request_id,
                   std::vector<uint8_t>& body, std::string& error);
// CloseSessionRequest then CLO; the socket is left for the caller to close.
bool close_session(asio::ip::tcp::socket& s, SessionInfo& info, uint32_t request_id, std::string& error);

// One blocking call; the request header is filled in here (handle = request id). `Response` is the
// expected response type; a ServiceFault or a Bad service result fails.
template <class Request, class Response>
bool blocking_call(asio::ip::tcp::socket& s, SessionInfo& info, uint32_t request_id, Request& request,
                   Response& response, std::string& error, uint32_t timeout_hint = 60000) {
  set_request_header(request.request_header, info.authentication_token, request_id, timeout_hint);
  ua::ByteBuffer body;
  encode_message(body, request);
  if (!send_message(s, info, request_id, body.span(), error)) return false;
  std::vector<uint8_t> in;
  uint32_t got_id = 0;
  if (!read_response(s, info, got_id, in, error)) return false;
  ua::Decoder d(in);
  ua::NodeId type_id;
  ua::decode(d, type_id);
  if (type_id.is_ns0(ua::ServiceFault::binary_encoding_id)) {
    ua::ServiceFault fault;
    ua::decode(d, fault);
    error = "ServiceFault " + std::string(fault.response_header.service_result.name());
    return false;
  }
  ua::decode(d, response);
  if (!d.ok() || !type_id.is_ns0(Response::binary_encoding_id) || got_id != request_id) {
    error = "malformed response";
    return false;
  }
  if (!response.response_header.service_result.is_good()) {
    error = std::string(response.response_header.service_result.name());
    return false;
  }
  return true;
}

}  // namespace opcuad::bench
