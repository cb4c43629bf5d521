// Attribute service set (Part 4 §5.10): Read and Write.
#include "addressspace/attributes.hpp"
#include "addressspace/eu_range.hpp"
#include "addressspace/type_check.hpp"
#include "services/attribute_read.hpp"
#include "services/audit.hpp"
#include "services/diagnostics.hpp"
#include "services/handlers.hpp"
#include "services/index_range.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;
using addressspace::NodeClass;
using addressspace::NodeIndex;
using addressspace::NodeStore;

using namespace addressspace::attr;

// A failed operation's result: the status alone (Part 4 §5.10.2.2), whatever the reused `out` held.
void fail(ua::DataValue& out, ua::StatusCode s) noexcept {
  out.value.clear();
  out.status = s;
  out.source_timestamp = out.server_timestamp = {};
  out.source_picoseconds = out.server_picoseconds = 0;
}

// `now` is the request's server timestamp: one clock read per Read, shared by all its values, a
// computed value's (CurrentTime) included. `out` is a reused result: every path sets all its fields.
void read_one(const NodeStore& store, const ua::ReadValueId& item, ua::TimestampsToReturn timestamps,
              ua::DateTime now, const Session& session, ua::DataValue& out) {
  const UserAccess& user = session.access;
  const NodeIndex n = store.find(item.node_id);
  if (n == addressspace::kNoNode) return fail(out, status::BadNodeIdUnknown);
  const NodeClass cls = store.node_class(n);
  // The Value of a Variable, what nearly every operation reads, needs no look at the attribute table.
  const bool variable_value = item.attribute_id == kValue && cls == NodeClass::Variable;
  if (!variable_value && !has_attribute(cls, item.attribute_id))
    return fail(out, status::BadAttributeIdInvalid);
  bool range_ok = true;
  std::optional<IndexRange> range;
  if (!item.index_range.empty()) range = IndexRange::parse(item.index_range.view(), range_ok);
  if (!range_ok) return fail(out, status::BadIndexRangeInvalid);
  const bool wants_encoding = !item.data_encoding.name.empty() || item.data_encoding.namespace_index != 0;
  if (item.attribute_id != kValue) {
    // Part 4 §5.10.2: DataEncoding is only for Value; other attributes have no source timestamp.
    if (wants_encoding) return fail(out, status::BadDataEncodingInvalid);
    fail(out, status::Good);
    out.status = read_plain_attribute(store, n, item.attribute_id, out.value, user);
    if (out.status.is_good() && range) out.status = read_range(ua::Variant(out.value), *range, out.value);
    if (!out.status.is_good()) out.value.clear();
    if (timestamps == ua::TimestampsToReturn::Server || timestamps == ua::TimestampsToReturn::Both) {
      out.server_timestamp = now;
    }
    return;
  }
  const auto* var = store.variable(n);
  if (cls == NodeClass::Variable) {
    if (!(var->access_level & addressspace::access::kCurrentRead)) return fail(out, status::BadNotReadable);
    if (!access_control::may_read_value(store, n, *var, user)) return fail(out, status::BadUserAccessDenied);
  }
  if (var && var->cell) {
    addressspace::ValueStore::read(*var->cell, out, now);
  } else {
    fail(out, status::Good);
  }
  // The diagnostics arrays show each session its own entries (Part 5 §8.2.10, diagnostics.hpp); the
  // record's flags are in the cache line node_class() loaded.
  if (store.has_flag(n, addressspace::flag::kSessionScoped)) [[unlikely]]
    scope_to_reader(&session, out.value);
  if (wants_encoding) {
    if (out.value.type() != ua::BuiltinType::ExtensionObject)
      return fail(out, status::BadDataEncodingInvalid);
    if (item.data_encoding.namespace_index != 0 || item.data_encoding.name.view() != "Default Binary") {
      return fail(out, status::BadDataEncodingUnsupported);
    }
  }
  if (range) {
    ua::Variant whole = std::move(out.value);
    ua::StatusCode s = read_range(whole, *range, out.value);
    if (!s.is_good()) return fail(out, s);
  }
  switch (timestamps) {
    case ua::TimestampsToReturn::Source:
      out.server_timestamp = {};
      out.server_picoseconds = 0;
      break;
    case ua::TimestampsToReturn::Server:
      out.source_timestamp = {};
      out.source_picoseconds = 0;
      out.server_timestamp = now;
      break;
    case ua::TimestampsToReturn::Neither:
      out.source_timestamp = out.server_timestamp = {};
      out.source_picoseconds = out.server_picoseconds = 0;
      break;
    default:
      out.server_timestamp = now;
      break;
  }
}

// BadOutOfRange when a numeric value lies outside the EURange property of its variable (Part 8 §5.3.2).
ua::StatusCode check_eu_range(const NodeStore& store, NodeIndex n, const ua::Variant& value) {
  const std::optional<ua::Range> range = addressspace::eu_range(store, n);
  if (!range) return status::Good;
  bool inside = true;
  auto check = [&](double x) { inside &= x >= range->low && x <= range->high; };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
          check(static_cast<double>(x));
        } else if constexpr (requires { typename T::value_type; }) {
          if constexpr (std::is_arithmetic_v<typename T::value_type> &&
                        !std::is_same_v<typename T::value_type, bool>) {
            for (auto v : x) check(static_cast<double>(v));
          }
        }
      },
      value.storage());
  return inside ? status::Good : status::BadOutOfRange;
}

// On success, `written` is the cell that changed (for exception-based monitored items).
ua::StatusCode write_one(Call& call, addressspace::AddressSpace& space, const NodeStore& store,
                         const ua::WriteValue& item, ua::DateTime now, const ua::DecodeLimits& limits,
                         const addressspace::ValueCell*& written) {
  const NodeIndex n = store.find(item.node_id);
  if (n == addressspace::kNoNode) return status::BadNodeIdUnknown;
  const NodeClass cls = store.node_class(n);
  // The structure is immutable and no node's WriteMask allows attribute writes: only Value is writable.
  if (item.attribute_id != kValue || cls != NodeClass::Variable) {
    return has_attribute(cls, item.attribute_id) ? status::BadNotWritable : status::BadAttributeIdInvalid;
  }
  const auto* var = store.variable_of(n);
  if (!(var->access_level & addressspace::access::kCurrentWrite)) return status::BadNotWritable;
  // Roles and security.anonymous_write (Part 3 §4.8): BadUserAccessDenied, as for UserAccessLevel.
  if (!access_control::may_write_value(store, n, *var, call.session->access)) {
    return status::BadUserAccessDenied;
  }
  const ua::DataValue& in = item.value;
  // Part 4 §5.10.4: status and timestamps are written only where the node allows it.
  if (in.status.value() != 0 && !(var->access_level & addressspace::access::kStatusWrite)) {
    return status::BadWriteNotSupported;
  }
  // The SourceTimestamp (and its picoseconds) only with TimestampWrite (Part 3 §8.57); the ServerTimestamp
  // is the server's own and is never written: a client that sends one asks for a combination this server
  // does not support (Part 4 §5.10.4.4, Bad_WriteNotSupported), and nothing is written.
  if ((!in.source_timestamp.is_null() || in.source_picoseconds != 0) &&
      !(var->access_level & addressspace::access::kTimestampWrite)) {
    return status::BadWriteNotSupported;
  }
  if (!in.server_timestamp.is_null() || in.server_picoseconds != 0) return status::BadWriteNotSupported;
  bool range_ok = true;
  std::optional<IndexRange> range;
  if (!item.index_range.empty()) range = IndexRange::parse(item.index_range.view(), range_ok);
  if (!range_ok) return status::BadIndexRangeInvalid;

  // Without an IndexRange the written value is the request's own: checked and stored from there, with no
  // copy; with one, the cell's current value with the range replaced.
  std::optional<ua::DataValue> ranged;
  if (range) {
    addressspace::ValueStore::read(*var->cell, ranged.emplace(), now);
    ua::StatusCode s = write_range(ranged->value, *range, in.value);
    if (!s.is_good()) return s;
  }
  const ua::Variant& value = ranged ? ranged->value : in.value;
  ua::StatusCode typed = addressspace::check_value(store, *var, value);
  if (!typed.is_good()) return typed;
  if (value.type() == ua::BuiltinType::ExtensionObject) {
    // A structure's body, by its StructureDefinition, with the request's decoding limits (Part 6 §5.2.7).
    ua::ByteBuffer& scratch = call.shard.scratch.structure_body;
    typed = addressspace::check_structures(store, *var, value, limits, scratch);
    if (scratch.capacity() > kScratchKeepBytes) scratch = ua::ByteBuffer();
    if (!typed.is_good()) return typed;
  }
  ua::StatusCode bounded = check_eu_range(store, n, value);
  if (!bounded.is_good()) return bounded;
  const bool own_source = !in.source_timestamp.is_null();
  space.values().write(*var->cell, value,
                       {.status = in.status,
                        .source_timestamp = own_source ? in.source_timestamp : now,
                        .server_timestamp = now,
                        .source_picoseconds = own_source ? in.source_picoseconds : uint16_t{0},
                        .server_picoseconds = 0},
                       *call.shard.participant);
  written = var->cell;
  // An input, setpoint or normal value of an alarm: judged after the response (Server::evaluate_alarms).
  if (store.has_flag(n, addressspace::flag::kHasAlarm)) [[unlikely]]
    call.shard.alarm_inputs.push_back(n);
  return status::Good;
}

}  // namespace

// Part 3 §5: which attributes each node class has.
bool has_attribute(NodeClass c, uint32_t a) noexcept {
  if (a >= kNodeId && a <= kUserWriteMask) return true;
  switch (c) {
    case NodeClass::Object:
      return a == kEventNotifier;
    case NodeClass::Variable:
      return (a >= kValue && a <= kHistorizing) || a == kAccessLevelEx;
    case NodeClass::Method:
      return a == kExecutable || a == kUserExecutable;
    case NodeClass::ObjectType:
      return a == kIsAbstract;
    case NodeClass::VariableType:
      return (a >= kValue && a <= kArrayDimensions) || a == kIsAbstract;
    case NodeClass::ReferenceType:
      return a == kIsAbstract || a == kSymmetric || a == kInverseName;
    case NodeClass::DataType:
      return a == kIsAbstract || a == kDataTypeDefinition;
    case NodeClass::View:
      return a == kContainsNoLoops || a == kEventNotifier;
    default:
      return false;
  }
}

ua::StatusCode read_plain_attribute(const NodeStore& store, NodeIndex n, uint32_t a, ua::Variant& out,
                                    const UserAccess& user) {
  const auto& rec = store.record(n);
  const auto* var = store.variable(n);
  switch (a) {
    case kNodeId:
      out = store.node_id(n);
      return status::Good;
    case kNodeClass:
      out = static_cast<int32_t>(rec.node_class);
      return status::Good;
    case kBrowseName:
      out = store.browse_name(n);
      return status::Good;
    case kDisplayName:
      out = store.display_name(n);
      return status::Good;
    case kDescription:
      out = store.description(n);
      return status::Good;
    case kWriteMask:
      out = rec.write_mask;
      return status::Good;
    // No attribute but Value is writable here; a user who may not write gets none of the WriteMask.
    case kUserWriteMask:
      out = access_control::user_write_mask(store, n, user);
      return status::Good;
    case kIsAbstract:
      out = store.has_flag(n, addressspace::flag::kIsAbstract);
      return status::Good;
    case kSymmetric:
      out = store.has_flag(n, addressspace::flag::kSymmetric);
      return status::Good;
    case kInverseName: {
      const auto* rt = store.reference_type(n);
      out = rt ? store.text(rt->inverse_name) : ua::LocalizedText{};
      return status::Good;
    }
    case kContainsNoLoops:
      out = store.has_flag(n, addressspace::flag::kContainsNoLoops);
      return status::Good;
    case kEventNotifier:
      out = rec.event_notifier;
      return status::Good;
    case kDataType:
      out = var && var->data_type != addressspace::kNoNode ? store.node_id(var->data_type)
                                                           : ua::NodeId(0, ua::id::BaseDataType);
      return status::Good;
    case kValueRank:
      out = var ? var->value_rank : -2;
      return status::Good;
    case kArrayDimensions: {
      std::vector<uint32_t> dims;
      if (var) {
        auto d = store.array_dimensions(*var);
        dims.assign(d.begin(), d.end());
      }
      out = std::move(dims);
      return status::Good;
    }
    case kAccessLevel:
      out = var ? var->access_level : uint8_t{0};
      return status::Good;
    case kUserAccessLevel:
      out = var ? access_control::user_access_level(store, n, *var, user) : uint8_t{0};
      return status::Good;
    case kMinimumSamplingInterval:
      out = var ? var->minimum_sampling_interval : 0.0;
      return status::Good;
    case kHistorizing:
      out = store.has_flag(n, addressspace::flag::kHistorizing);
      return status::Good;
    case kExecutable:
      out = store.has_flag(n, addressspace::flag::kExecutable);
      return status::Good;
    case kUserExecutable:
      out = access_control::user_executable(store, n, user);
      return status::Good;
    case kAccessLevelEx:
      out = var ? var->access_level_ex | var->access_level : uint32_t{0};
      return status::Good;
    case kDataTypeDefinition: {
      const ua::ExtensionObject* def = store.data_type_definition(n);
      if (!def) return status::BadAttributeIdInvalid;  // not a structure or enumeration
      out = *def;
      return status::Good;
    }
  }
  return status::BadAttributeIdInvalid;
}

void handle_read(Server& server, Call& call, ua::Decoder& body) {
  // Shard scratch: decoding into a warm request and filling a warm response allocates nothing in steady
  // state (docs/ARCHITECTURE.md).
  const auto& limits = server.config().limits.operations;
  if (!precheck_operation_count(call, body, {.fixed_bytes = 12}, limits.max_nodes_per_read)) return;
  auto req = call.shard.scratch.read_request.lease();
  auto resp = call.shard.scratch.read_response.lease();
  if (!decode_request(call, body, *req)) return;
  if (!check_operation_count(call, req->nodes_to_read.size(), limits.max_nodes_per_read)) return;
  if (req->max_age < 0 || req->max_age != req->max_age) {
    return call.fault(status::BadMaxAgeInvalid);
  }
  if (static_cast<uint32_t>(req->timestamps_to_return) > 3) {
    return call.fault(status::BadTimestampsToReturnInvalid);
  }
  const NodeStore& store = *server.space().current();
  set_response_header(resp->response_header, req->request_header);
  resp->results.resize(req->nodes_to_read.size());
  // maxAge: every value is served from the current cell, which is always the freshest value there is.
  const ua::DateTime now = resp->response_header.timestamp;
  for (size_t i = 0; i < req->nodes_to_read.size(); ++i) {
    read_one(store, req->nodes_to_read[i], req->timestamps_to_return, now, *call.session, resp->results[i]);
  }
  call.send(*resp);
}

void handle_write(Server& server, Call& call, ua::Decoder& body) {
  const auto& limits = server.config().limits.operations;
  if (!precheck_operation_count(call, body, {}, limits.max_nodes_per_write)) return;
  auto req = call.shard.scratch.write_request.lease();  // shard scratch, as in handle_read
  auto resp = call.shard.scratch.write_response.lease();
  auto written = call.shard.scratch.written_cells.lease();
  if (!decode_request(call, body, *req)) return;
  if (!check_operation_count(call, req->nodes_to_write.size(), limits.max_nodes_per_write)) return;
  const NodeStore& store = *server.space().current();
  set_response_header(resp->response_header, req->request_header);
  resp->results.clear();
  const ua::DateTime now = resp->response_header.timestamp;  // one clock read per request
  written->clear();
  call.shard.alarm_inputs.clear();
  const bool audit = server.auditing();
  for (const auto& item : req->nodes_to_write) {
    const addressspace::ValueCell* cell = nullptr;
    if (audit) [[unlikely]] {
      // AuditWriteUpdateEventType (Part 5 §6.4.25) needs the value the write replaces: read as this
      // session would read it, before the write.
      ua::DataValue old;
      read_one(store, ua::ReadValueId{item.node_id, item.attribute_id, item.index_range, {}},
               ua::TimestampsToReturn::Neither, now, *call.session, old);
      resp->results.push_back(write_one(call, server.space(), store, item, now, body.limits(), cell));
      server.raise_event(
          audit::write({store, server.config().application_uri, req->request_header.audit_entry_id.view()},
                       *call.session, store.find(item.node_id), item.attribute_id, item.index_range.view(),
                       old.value, item.value.value, resp->results.back()));
    } else {
      resp->results.push_back(write_one(call, server.space(), store, item, now, body.limits(), cell));
    }
    if (cell) written->push_back(cell);
  }
  call.send(*resp);
  // Exception-based monitored items watching these cells sample now, on whichever shard they live
  // (one post per interested shard for the whole request; nothing when nobody watches).
  if (!written->empty()) server.notify_written(&call.shard, *written);
  // The alarms on the written variables, judged here on the writer's shard (docs/ARCHITECTURE.md, "Alarms").
  if (!call.shard.alarm_inputs.empty()) [[unlikely]]
    server.evaluate_alarms(&call.shard, store, call.shard.alarm_inputs, *call.shard.participant);
}

}  // namespace opcuad::services
