// Writes the seed corpus of every fuzz target into <dir>/<target>/: well-formed encodings of the values
// a server receives, so that mutation starts from the interesting structures. The targets' seeds are in
// seeds_*.cpp; the decoder's few are here.
#include "tests/fuzz/seed_corpus.hpp"

using namespace opcuad::fuzz::seeds;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seed_corpus DIR\n");
    return 2;
  }
  Seeds s(std::filesystem::path(argv[1]) / "ua_decoder_fuzz");
  s.add(0, Variant(3.25));
  s.add(0, Variant(String("text")));
  s.add(0, Variant::matrix(std::vector<int32_t>{1, 2, 3, 4}, {2, 2}));
  s.add(0, Variant(std::vector<Variant>{Variant(1.0), Variant(LocalizedText{String("en"), String("x")})}));
  DataValue dv{Variant(int64_t{5}), status::UncertainInitialValue, DateTime{1}, DateTime{2}, 3, 4};
  s.add(1, dv);
  s.add(0, Variant(dv));

  ReadRequest read;
  read.request_header = header();
  read.timestamps_to_return = TimestampsToReturn::Both;
  for (uint32_t i = 0; i < 3; ++i)
    read.nodes_to_read.push_back(ReadValueId{NodeId(2, i), 13, String("1:2"), {}});
  s.add(2, ExtensionObject::make(read));
  WriteRequest write;
  write.request_header = header();
  write.nodes_to_write.push_back(WriteValue{NodeId(2, String("w")), 13, String(), dv});
  s.add(2, ExtensionObject::make(write));
  BrowseRequest browse;
  browse.request_header = header();
  browse.nodes_to_browse.push_back(
      BrowseDescription{NodeId(0, 85), BrowseDirection::Both, NodeId(0, 33), true, 0, 63});
  s.add(2, ExtensionObject::make(browse));
  CreateSessionRequest create;
  create.request_header = header();
  create.client_description.application_uri = String("urn:client");
  create.endpoint_url = String("opc.tcp://localhost:4840");
  s.add(2, ExtensionObject::make(create));
  ActivateSessionRequest activate;
  activate.request_header = header();
  activate.user_identity_token =
      ExtensionObject::make(UserNameIdentityToken{String("p"), String("u"), ByteString("pw"), String()});
  s.add(2, ExtensionObject::make(activate));
  CreateMonitoredItemsRequest monitor;
  monitor.request_header = header();
  MonitoredItemCreateRequest item;
  item.item_to_monitor = ReadValueId{NodeId(2, 1), 13, String(), {}};
  item.requested_parameters.filter =
      ExtensionObject::make(DataChangeFilter{DataChangeTrigger::StatusValue, 1, 0.5});
  monitor.items_to_create.push_back(item);
  s.add(2, ExtensionObject::make(monitor));
  s.add(7, std::vector<ExtensionObject>{ExtensionObject::make(Range{0, 100}),
                                        ExtensionObject::make(EUInformation{})});

  DiagnosticInfo d;
  d.symbolic_id = 1;
  d.additional_info = String("info");
  d.inner_diagnostic_info = Box<DiagnosticInfo>(DiagnosticInfo{});
  s.add(3, d);
  s.add(4, ExpandedNodeId{NodeId(1, String("x")), String("urn:ns"), 2});
  s.add(5, std::vector<Variant>{Variant(true), Variant(std::vector<float>{1, 2})});
  s.add(6, LocalizedText{String("de"), String("Temperatur")});
  std::printf("wrote %d decoder seeds\n", s.count());
  write_stream_seeds(std::filesystem::path(argv[1]) / "uatcp_stream_fuzz");
  write_service_seeds(std::filesystem::path(argv[1]) / "services_fuzz");
  write_large_service_input(std::filesystem::path(argv[1]) / "services_fuzz-large");
  write_secure_channel_seeds(std::filesystem::path(argv[1]) / "secure_channel_fuzz");
  write_structure_seeds(std::filesystem::path(argv[1]) / "structure_fuzz");
  return 0;
}
