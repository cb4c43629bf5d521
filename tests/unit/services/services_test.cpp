// The services over an in-memory secure channel: every status code its services return, produced on purpose.
#include <catch2/catch.hpp>

#include <thread>

#include "tests/unit/services/service_harness.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
namespace status = ua::status;
using namespace opcuad::services::test;

TEST_CASE("services: GetEndpoints and FindServers describe the server", "[services]") {
  ServiceHarness h;
  ua::GetEndpointsRequest ge;
  ge.endpoint_url = ua::String("opc.tcp://plant-gw:4840");
  auto eps = h.call<ua::GetEndpointsResponse>(ge);
  REQUIRE(eps.endpoints.size() == 1);
  const auto& e = eps.endpoints[0];
  CHECK(e.endpoint_url.view() == "opc.tcp://plant-gw:4840");  // the URL the client dialled
  CHECK(e.security_mode == ua::MessageSecurityMode::None);
  CHECK(e.security_policy_uri.view() == "http://opcfoundation.org/UA/SecurityPolicy#None");
  CHECK(e.server.application_uri.view() == "urn:test:server");
  REQUIRE(e.user_identity_tokens.size() == 2);
  CHECK(e.user_identity_tokens[0].policy_id.view() == "anonymous");
  CHECK(e.user_identity_tokens[1].policy_id.view() == "username_None");  // plaintext: the harness allows it
  ge.profile_uris = {ua::String("http://opcfoundation.org/UA-Profile/Transport/https-uabinary")};
  CHECK(h.call<ua::GetEndpointsResponse>(ge).endpoints.empty());

  ua::FindServersRequest fs;
  auto servers = h.call<ua::FindServersResponse>(fs);
  REQUIRE(servers.servers.size() == 1);
  CHECK(servers.servers[0].application_type == ua::ApplicationType::Server);
  fs.server_uris = {ua::String("urn:other")};
  CHECK(h.call<ua::FindServersResponse>(fs).servers.empty());
}

TEST_CASE("services: requests need a valid activated session", "[services]") {
  ServiceHarness h;
  ua::StatusCode s;
  h.call<ua::ReadResponse>(ua::ReadRequest{}, &s);
  CHECK(s == status::BadSessionIdInvalid);
  ua::CreateSessionRequest create;
  create.requested_session_timeout = 1;
  auto created = h.call<ua::CreateSessionResponse>(create);
  CHECK(created.revised_session_timeout == 50);  // revised into the configured bounds
  CHECK(created.server_nonce.size() == 32);
  CHECK(created.max_request_message_size == h.loaded.config.limits.max_message_size);
  REQUIRE(created.server_endpoints.size() == 1);
  h.token = created.authentication_token;
  h.call<ua::ReadResponse>(ua::ReadRequest{}, &s);
  CHECK(s == status::BadSessionNotActivated);
}

TEST_CASE("services: anonymous and username logins", "[services]") {
  {
    ServiceHarness h;
    CHECK(h.login().is_good());
    CHECK(h.read(ua::NodeId(0, 2255)).value.is_array());  // NamespaceArray
  }
  {
    ServiceHarness h;
    CHECK(h.login(user("alice", "secret")).is_good());
  }
  {
    ServiceHarness h;
    CHECK(h.login(user("alice", "wrong")) == status::BadUserAccessDenied);
  }
  {
    ServiceHarness h;
    CHECK(h.login(user("mallory", "secret")) == status::BadUserAccessDenied);
  }
  {
    ServiceHarness h;
    CHECK(h.login(ua::ExtensionObject::make(ua::X509IdentityToken{})) == status::BadIdentityTokenInvalid);
  }
}

TEST_CASE("services: the session limit gives BadTooManySessions", "[services]") {
  ServiceHarness h;
  ua::StatusCode s;
  for (int i = 0; i < 3; ++i) h.call<ua::CreateSessionResponse>(ua::CreateSessionRequest{}, &s);
  CHECK(s.is_good());
  h.call<ua::CreateSessionResponse>(ua::CreateSessionRequest{}, &s);
  CHECK(s == status::BadTooManySessions);
  CHECK(h.server->session_count() == 3);
}

TEST_CASE("services: an expired session is freed", "[services]") {
  ServiceHarness h;
  REQUIRE(h.login({}, 50).is_good());
  CHECK(h.server->session_count() == 1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (h.server->session_count() > 0 && std::chrono::steady_clock::now() < deadline) {
    h.ctx.restart();
    h.ctx.run_for(std::chrono::milliseconds(50));
  }
  CHECK(h.server->session_count() == 0);
  ua::StatusCode s;
  h.call<ua::ReadResponse>(ua::ReadRequest{}, &s);
  CHECK(s == status::BadSessionIdInvalid);
}

TEST_CASE("services: CloseSession ends the session", "[services]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::CloseSessionRequest close;
  close.delete_subscriptions = true;
  h.call<ua::CloseSessionResponse>(close);
  CHECK(h.server->session_count() == 0);
  ua::StatusCode s;
  h.call<ua::ReadResponse>(ua::ReadRequest{}, &s);
  CHECK(s == status::BadSessionIdInvalid);
}

TEST_CASE("services: Read serves every attribute and its errors", "[services][read]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto v = h.read(plant(".Speed"));
  CHECK(v.status.is_good());
  CHECK(v.value == ua::Variant(10.0));
  CHECK(!v.server_timestamp.is_null());
  CHECK(h.read(plant(".Speed"), 14).value == ua::Variant(ua::NodeId(0, 11)));  // DataType Double
  CHECK(h.read(plant(".Speed"), 2).value == ua::Variant(int32_t{2}));          // NodeClass Variable
  CHECK(h.read(plant(".Speed"), 3).value == ua::Variant(ua::QualifiedName{2, ua::String("Speed")}));
  CHECK(h.read(ua::NodeId(0, 84), 12).value == ua::Variant(uint8_t{0}));         // Root's EventNotifier
  CHECK(h.read(ua::NodeId(0, 45), 9).value == ua::Variant(false));               // HasSubtype not symmetric
  CHECK(h.read(ua::NodeId(0, 2258)).value.type() == ua::BuiltinType::DateTime);  // CurrentTime
  CHECK(h.read(ua::NodeId(0, 884), 23).status.is_good());                        // Range's DataTypeDefinition

  CHECK(h.read(ua::NodeId(2, 999999)).status == status::BadNodeIdUnknown);
  CHECK(h.read(plant(""), 13).status == status::BadAttributeIdInvalid);  // a folder has no Value
  CHECK(h.read(plant(".Speed"), 99).status == status::BadAttributeIdInvalid);
  CHECK(h.read(plant(".Table"), 13, "1:3").value == ua::Variant(std::vector<int32_t>{2, 3, 4}));
  CHECK(h.read(plant(".Table"), 13, "3:9").value == ua::Variant(std::vector<int32_t>{4, 5}));
  CHECK(h.read(plant(".Name"), 13, "1:2").value == ua::Variant(ua::String("um")));
  CHECK(h.read(plant(".Table"), 13, "2:1").status == status::BadIndexRangeInvalid);
  CHECK(h.read(plant(".Table"), 13, "x").status == status::BadIndexRangeInvalid);
  CHECK(h.read(plant(".Table"), 13, "7").status == status::BadIndexRangeNoData);
  CHECK(h.read(plant(".Speed"), 13, "0").status == status::BadIndexRangeNoData);

  ua::ReadRequest r;
  ua::StatusCode s;
  h.call<ua::ReadResponse>(r, &s);
  CHECK(s == status::BadNothingToDo);
  r.nodes_to_read.assign(6, ua::ReadValueId{plant(".Speed"), 13, {}, {}});
  h.call<ua::ReadResponse>(r, &s);
  CHECK(s == status::BadTooManyOperations);
  r.nodes_to_read.resize(1);
  r.max_age = -1;
  h.call<ua::ReadResponse>(r, &s);
  CHECK(s == status::BadMaxAgeInvalid);
  r.max_age = 0;
  r.timestamps_to_return = static_cast<ua::TimestampsToReturn>(7);
  h.call<ua::ReadResponse>(r, &s);
  CHECK(s == status::BadTimestampsToReturnInvalid);
}

TEST_CASE("services: Read honours TimestampsToReturn and DataEncoding", "[services][read]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::ReadRequest r;
  r.nodes_to_read.push_back(ua::ReadValueId{plant(".Speed"), 13, {}, {}});
  r.timestamps_to_return = ua::TimestampsToReturn::Source;
  auto v = h.call<ua::ReadResponse>(r).results[0];
  CHECK(!v.source_timestamp.is_null());
  CHECK(v.server_timestamp.is_null());
  r.timestamps_to_return = ua::TimestampsToReturn::Server;
  v = h.call<ua::ReadResponse>(r).results[0];
  CHECK(v.source_timestamp.is_null());
  CHECK(!v.server_timestamp.is_null());
  r.timestamps_to_return = ua::TimestampsToReturn::Neither;
  v = h.call<ua::ReadResponse>(r).results[0];
  CHECK(v.source_timestamp.is_null());
  CHECK(v.server_timestamp.is_null());
  r.nodes_to_read[0].data_encoding = ua::QualifiedName{0, ua::String("Default Binary")};
  CHECK(h.call<ua::ReadResponse>(r).results[0].status == status::BadDataEncodingInvalid);  // not a structure
  r.nodes_to_read[0].attribute_id = 3;
  CHECK(h.call<ua::ReadResponse>(r).results[0].status == status::BadDataEncodingInvalid);
}

TEST_CASE("services: Write checks access, types and ranges", "[services][write]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  CHECK(h.write(plant(".Speed"), 42.5).is_good());
  CHECK(h.read(plant(".Speed")).value == ua::Variant(42.5));
  CHECK(h.write(plant(".Speed"), 420.0) == status::BadOutOfRange);  // EURange 0..100
  CHECK(h.write(plant(".Count"), 1.5) == status::BadTypeMismatch);  // an Int32 rejects a Double
  CHECK(h.write(plant(".Count"), int32_t{7}).is_good());
  CHECK(h.write(plant(".Period"), 12.0).is_good());  // a Duration is a Double
  CHECK(h.write(plant(".Count"), std::vector<int32_t>{1}) == status::BadTypeMismatch);  // scalar only
  CHECK(h.write(plant(".Fixed"), 2.0) == status::BadNotWritable);
  CHECK(h.write(plant(".Speed"), 2.0, "", 4) == status::BadNotWritable);  // DisplayName: WriteMask 0
  CHECK(h.write(plant(".Speed"), 2.0, "", 99) == status::BadAttributeIdInvalid);
  CHECK(h.write(ua::NodeId(2, 424242), 2.0) == status::BadNodeIdUnknown);
  CHECK(h.write(plant(".Table"), std::vector<int32_t>{8, 9}, "1:2").is_good());
  CHECK(h.read(plant(".Table")).value == ua::Variant(std::vector<int32_t>{1, 8, 9, 4, 5}));
  CHECK(h.write(plant(".Table"), std::vector<int32_t>{8}, "1:2") == status::BadIndexRangeInvalid);
  CHECK(h.write(plant(".Table"), std::vector<int32_t>{8}, "9") == status::BadIndexRangeNoData);
  ua::WriteRequest w;
  ua::StatusCode s;
  h.call<ua::WriteResponse>(w, &s);
  CHECK(s == status::BadNothingToDo);
  // A source timestamp needs the TimestampWrite access bit.
  ua::DataValue dv;
  dv.value = ua::Variant(3.0);
  dv.source_timestamp = ua::DateTime{1};
  w.nodes_to_write.push_back(ua::WriteValue{plant(".Speed"), 13, {}, dv});
  CHECK(h.call<ua::WriteResponse>(w).results[0] == status::BadWriteNotSupported);
}

TEST_CASE("services: Browse with continuation points, BrowseNext and release", "[services][browse]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::BrowseRequest b;
  b.nodes_to_browse.push_back(
      ua::BrowseDescription{plant(""), ua::BrowseDirection::Forward, ua::NodeId(0, 33), true, 0, 63});
  auto all = h.call<ua::BrowseResponse>(b);
  REQUIRE(all.results.size() == 1);
  CHECK(all.results[0].references.size() == 11);  // 6 variables + 5 bulk items
  CHECK(all.results[0].continuation_point.empty());
  const auto& first = all.results[0].references[0];
  CHECK(first.is_forward);
  CHECK(first.node_class == ua::NodeClass::Variable);
  CHECK(first.type_definition.node_id == ua::NodeId(0, 2368));  // Speed has an EURange: AnalogItemType
  CHECK(all.results[0].references[1].type_definition.node_id == ua::NodeId(0, 63));  // BaseDataVariableType

  b.requested_max_references_per_node = 4;
  auto page = h.call<ua::BrowseResponse>(b);
  CHECK(page.results[0].references.size() == 4);
  REQUIRE(!page.results[0].continuation_point.empty());
  ua::BrowseNextRequest next;
  next.continuation_points.push_back(page.results[0].continuation_point);
  size_t total = 4;
  for (int guard = 0; guard < 10 && !next.continuation_points[0].empty(); ++guard) {
    auto more = h.call<ua::BrowseNextResponse>(next);
    REQUIRE(more.results.size() == 1);
    total += more.results[0].references.size();
    next.continuation_points[0] = more.results[0].continuation_point;
  }
  CHECK(total == 11);
  // Used continuation points are gone.
  next.continuation_points[0] = page.results[0].continuation_point;
  CHECK(h.call<ua::BrowseNextResponse>(next).results[0].status_code == status::BadContinuationPointInvalid);

  // Two continuation points per session at most (configured).
  auto a1 = h.call<ua::BrowseResponse>(b);
  auto a2 = h.call<ua::BrowseResponse>(b);
  auto a3 = h.call<ua::BrowseResponse>(b);
  CHECK(a1.results[0].status_code.is_good());
  CHECK(a2.results[0].status_code.is_good());
  CHECK(a3.results[0].status_code == status::BadNoContinuationPoints);
  next.release_continuation_points = true;
  next.continuation_points = {a1.results[0].continuation_point, a2.results[0].continuation_point};
  auto released = h.call<ua::BrowseNextResponse>(next);
  CHECK(released.results[0].status_code.is_good());
  CHECK(released.results[0].references.empty());
  CHECK(h.call<ua::BrowseResponse>(b).results[0].status_code.is_good());

  b.nodes_to_browse[0].node_id = ua::NodeId(2, 4242);
  CHECK(h.call<ua::BrowseResponse>(b).results[0].status_code == status::BadNodeIdUnknown);
  b.nodes_to_browse[0].node_id = ua::NodeId(0, 85);
  b.nodes_to_browse[0].reference_type_id = ua::NodeId(0, 85);  // a folder, not a reference type
  CHECK(h.call<ua::BrowseResponse>(b).results[0].status_code == status::BadReferenceTypeIdInvalid);
  b.nodes_to_browse[0].reference_type_id = ua::NodeId(0, 33);
  b.nodes_to_browse[0].browse_direction = static_cast<ua::BrowseDirection>(5);
  CHECK(h.call<ua::BrowseResponse>(b).results[0].status_code == status::BadBrowseDirectionInvalid);
  b.view.view_id = ua::NodeId(2, 1);
  ua::StatusCode s;
  h.call<ua::BrowseResponse>(b, &s);
  CHECK(s == status::BadViewIdUnknown);
}

TEST_CASE("services: TranslateBrowsePathsToNodeIds follows multi-element paths", "[services][browse]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  auto element = [](uint16_t ns, const char* name) {
    return ua::RelativePathElement{ua::NodeId(0, 33), false, true, ua::QualifiedName{ns, ua::String(name)}};
  };
  ua::TranslateBrowsePathsToNodeIdsRequest t;
  t.browse_paths.push_back(ua::BrowsePath{
      ua::NodeId(0, 85),
      ua::RelativePath{{element(0, "Server"), element(0, "ServerStatus"), element(0, "CurrentTime")}}});
  t.browse_paths.push_back(ua::BrowsePath{ua::NodeId(0, 85), ua::RelativePath{{element(0, "Nope")}}});
  t.browse_paths.push_back(ua::BrowsePath{ua::NodeId(0, 85), ua::RelativePath{{element(0, "")}}});
  t.browse_paths.push_back(ua::BrowsePath{ua::NodeId(7, 7), ua::RelativePath{{element(0, "Server")}}});
  t.browse_paths.push_back(
      ua::BrowsePath{ua::NodeId(0, 85), ua::RelativePath{{element(2, "Plant"), element(2, "Speed")}}});
  auto r = h.call<ua::TranslateBrowsePathsToNodeIdsResponse>(t);
  REQUIRE(r.results.size() == 5);
  REQUIRE(r.results[0].targets.size() == 1);
  CHECK(r.results[0].targets[0].target_id.node_id == ua::NodeId(0, 2258));
  CHECK(r.results[0].targets[0].remaining_path_index == UINT32_MAX);
  CHECK(r.results[1].status_code == status::BadNoMatch);
  CHECK(r.results[2].status_code == status::BadBrowseNameInvalid);
  CHECK(r.results[3].status_code == status::BadNodeIdUnknown);
  REQUIRE(r.results[4].targets.size() == 1);
  CHECK(r.results[4].targets[0].target_id.node_id == plant(".Speed"));
}

TEST_CASE("services: RegisterNodes, Call, and unsupported services", "[services]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::RegisterNodesRequest reg;
  reg.nodes_to_register = {plant(".Speed"), plant(".Count")};
  auto registered = h.call<ua::RegisterNodesResponse>(reg);
  REQUIRE(registered.registered_node_ids.size() == 2);
  CHECK(h.read(registered.registered_node_ids[0]).value == ua::Variant(10.0));
  ua::UnregisterNodesRequest unreg;
  unreg.nodes_to_unregister = registered.registered_node_ids;
  h.call<ua::UnregisterNodesResponse>(unreg);

  ua::CallRequest c;
  c.methods_to_call.push_back(
      ua::CallMethodRequest{ua::NodeId(0, 2253), ua::NodeId(0, 11492), {}});  // GetMonitoredItems, no id
  c.methods_to_call.push_back(
      ua::CallMethodRequest{ua::NodeId(0, 2253), ua::NodeId(0, 2255), {}});  // not a method
  c.methods_to_call.push_back(
      ua::CallMethodRequest{ua::NodeId(2, 1), ua::NodeId(0, 11492), {}});  // no object
  auto called = h.call<ua::CallResponse>(c);
  REQUIRE(called.results.size() == 3);
  CHECK(called.results[0].status_code == status::BadArgumentsMissing);  // method_service_test.cpp has more
  CHECK(called.results[1].status_code == status::BadMethodInvalid);
  CHECK(called.results[2].status_code == status::BadNodeIdUnknown);

  ua::StatusCode s;
  h.call<ua::AddNodesResponse>(ua::AddNodesRequest{}, &s);
  CHECK(s == status::BadServiceUnsupported);
  h.call<ua::HistoryReadResponse>(ua::HistoryReadRequest{}, &s);
  CHECK(s == status::BadServiceUnsupported);
}

TEST_CASE("services: re-activation on a channel of another shard moves the session", "[services]") {
  asio::io_context ctx2;  // the second shard; outlives the server, which keeps a timer on it
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  h.server->attach_shard(ctx2);
  MemorySink sink2{ctx2};
  MemoryEvents events2;
  BufferPool pool2;
  TransportStats stats2;
  auto ch2 =
      std::make_shared<SecureChannel>(ctx2, sink2, events2, pool2, stats2, h.tconfig, *h.server, h.ids);
  ch2->start();
  auto run_both = [&] {
    for (int i = 0; i < 5; ++i) {
      h.ctx.restart();
      h.ctx.poll();
      ctx2.restart();
      ctx2.poll();
    }
  };
  auto feed2 = [&](const std::string& bytes) {
    auto space = ch2->receive_space();
    REQUIRE(space.size() >= bytes.size());
    std::memcpy(space.data(), bytes.data(), bytes.size());
    ch2->on_received(bytes.size());
    run_both();
  };
  auto last_message = [&] {
    std::vector<ServerMessage> m;
    REQUIRE(parse_output(sink2.out, m));
    REQUIRE(!m.empty());
    sink2.out.clear();
    return m.back();
  };
  feed2(hello());
  feed2(open_request(1, 1));
  ua::OpenSecureChannelResponse opened;
  REQUIRE(decode_body(last_message(), opened));
  const uint32_t id2 = opened.security_token.channel_id, token2 = opened.security_token.token_id;

  ua::ActivateSessionRequest activate;
  activate.request_header.authentication_token = h.token;
  activate.request_header.request_handle = 77;
  feed2(symmetric_chunk("MSG", 'F', id2, token2, 2, 2, encode_request(activate)));
  ua::ActivateSessionResponse activated;
  REQUIRE(decode_body(last_message(), activated));
  CHECK(activated.response_header.request_handle == 77);
  CHECK(activated.response_header.service_result.is_good());
  CHECK(h.server->session_count() == 1);

  // The session now answers on the new channel, and is gone from the old one.
  ua::ReadRequest read;
  read.request_header.authentication_token = h.token;
  read.nodes_to_read.push_back(ua::ReadValueId{plant(".Speed"), 13, {}, {}});
  feed2(symmetric_chunk("MSG", 'F', id2, token2, 3, 3, encode_request(read)));
  ua::ReadResponse r;
  REQUIRE(decode_body(last_message(), r));
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].value == ua::Variant(10.0));
  ua::StatusCode s;
  h.call<ua::ReadResponse>(read, &s);
  CHECK(s == status::BadSessionIdInvalid);

  // An unknown token is refused on any shard.
  activate.request_header.authentication_token = ua::NodeId(0, 12345);
  feed2(symmetric_chunk("MSG", 'F', id2, token2, 4, 4, encode_request(activate)));
  ua::ServiceFault fault;
  REQUIRE(decode_body(last_message(), fault));
  CHECK(fault.response_header.service_result == status::BadSessionIdInvalid);
  ch2->detach();
}

TEST_CASE("services: an advertised host name replaces a wildcard host, beside the dialled one",
          "[services]") {
  ServiceHarness h;
  h.loaded.config.advertised_hostname = "gw.example";  // the server reads its configuration live
  ua::GetEndpointsRequest ge;
  ge.endpoint_url = ua::String("opc.tcp://10.1.2.3:4840/path");
  auto eps = h.call<ua::GetEndpointsResponse>(ge);
  REQUIRE(eps.endpoints.size() == 2);
  CHECK(eps.endpoints[0].endpoint_url.view() == "opc.tcp://gw.example:4840");
  CHECK(eps.endpoints[1].endpoint_url.view() == "opc.tcp://10.1.2.3:4840");
  ge.endpoint_url = ua::String("opc.tcp://gw.example:4840");
  eps = h.call<ua::GetEndpointsResponse>(ge);
  REQUIRE(eps.endpoints.size() == 1);
  CHECK(eps.endpoints[0].endpoint_url.view() == "opc.tcp://gw.example:4840");
}

TEST_CASE("services: a reused response header is rewritten in place and cleared", "[services][header]") {
  ua::RequestHeader request;
  request.request_handle = 41;
  ua::ResponseHeader h;
  h.request_handle = 7;
  h.service_result = status::BadInternalError;
  h.service_diagnostics.additional_info = ua::String("left over");
  h.service_diagnostics.inner_status_code = status::BadTimeout;
  h.string_table.push_back(ua::String("x"));
  h.additional_header = ua::ExtensionObject::make(ua::ReadValueId{});
  services::set_response_header(h, request, status::BadTooManyOperations);
  CHECK(h.request_handle == 41);
  CHECK(h.service_result == status::BadTooManyOperations);
  CHECK(h.timestamp.ticks > 0);
  CHECK(h.service_diagnostics == ua::DiagnosticInfo{});
  CHECK(h.string_table.empty());
  CHECK(h.additional_header.is_empty());
  CHECK(h.additional_header.type_id().is_null());
  // The same as a fresh header, apart from the clock.
  ua::ResponseHeader fresh = services::response_header(request, status::BadTooManyOperations);
  fresh.timestamp = h.timestamp;
  CHECK(fresh == h);
  // An empty additional header that names a type is cleared too.
  h.additional_header =
      ua::ExtensionObject::undecoded(ua::NodeId(2, 1), ua::ExtensionObject::Encoding::None, {});
  services::set_response_header(h, request);
  CHECK(h.additional_header.type_id().is_null());
}
