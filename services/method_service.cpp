// Method service set (Part 4 §5.11): Call. No method has an implementation yet, so each call is
// answered per operation: BadNodeIdUnknown for an unknown object, BadMethodInvalid for something that is
// not a method, BadNotImplemented for a real method.
#include "services/request.hpp"

namespace opcuad::services {

void handle_call(Server& server, Call& call, ua::Decoder& body) {
  const uint32_t limit = server.config().limits.operations.max_nodes_per_method_call;
  if (!precheck_operation_count(call, body, {}, limit)) return;
  ua::CallRequest req;
  if (!decode_request(call, body, req)) return;
  if (!check_operation_count(call, req.request_header, req.methods_to_call.size(), limit)) return;
  const auto& store = *server.space().current();
  ua::CallResponse resp;
  set_response_header(resp.response_header, req.request_header);
  for (const auto& m : req.methods_to_call) {
    ua::CallMethodResult r;
    const auto object = store.find(m.object_id);
    const auto method = store.find(m.method_id);
    if (object == addressspace::kNoNode) {
      r.status_code = ua::status::BadNodeIdUnknown;
    } else if (method == addressspace::kNoNode || store.node_class(method) != addressspace::NodeClass::Method) {
      r.status_code = ua::status::BadMethodInvalid;
    } else {
      r.status_code = ua::status::BadNotImplemented;
    }
    resp.results.push_back(std::move(r));
  }
  call.channel.send(call.request_id, resp);
}

}  // namespace opcuad::services
