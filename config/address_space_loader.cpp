#include "config/address_space_loader.hpp"

#include <unordered_set>

#include "addressspace/namespace0.hpp"
#include "addressspace/node_store_builder.hpp"
#include "addressspace/server_object.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

addressspace::ServerInfo server_info(const ServerConfig& c, const ua::BuildInfo& build) {
  addressspace::ServerInfo info;
  info.namespace_uris = c.namespaces;
  info.server_uris = {c.application_uri};
  info.build_info = build;
  info.start_time = ua::DateTime::now();
  info.max_browse_continuation_points = c.limits.max_browse_continuation_points;
  info.max_array_length = c.limits.max_array_length;
  info.max_string_length = c.limits.max_string_length;
  info.max_byte_string_length = c.limits.max_byte_string_length;
  info.min_supported_sample_rate = c.limits.min_sampling_interval_ms;
  info.max_sessions = c.limits.max_sessions;
  info.max_subscriptions = c.limits.max_subscriptions;
  info.max_monitored_items = c.limits.max_monitored_items;
  info.operation_limits = c.limits.operations;
  return info;
}

std::vector<ConfigError> build_address_space(const ServerConfig& c, addressspace::AddressSpace& space,
                                             addressspace::EpochReclaimer::Participant& p, const ua::BuildInfo& build) {
  using namespace addressspace;
  std::vector<ConfigError> errors;
  NodeStoreBuilder b(space.values(), p, space.current());
  add_namespace0(b);
  if (c.diagnostics.counters) add_counter_nodes(b, kCounterRefreshMs);
  auto resolver = [&](std::string_view uri) -> std::optional<uint16_t> {
    for (size_t i = 0; i < c.namespaces.size(); ++i) {
      if (c.namespaces[i] == uri) return static_cast<uint16_t>(i);
    }
    return std::nullopt;
  };
  const ua::NodeId has_type_definition(0, ua::id::HasTypeDefinition);
  const ua::NodeId has_modelling_rule(0, ua::id::HasModellingRule);
  const ua::NodeId mandatory(0, ua::id::ModellingRule_Mandatory);
  std::unordered_set<ua::NodeId> type_members;  // nodes of declared object types: instance declarations

  NodeSpec spec;
  for (const NodeDecl& d : c.nodes) {
    spec = NodeSpec{};
    spec.node_class = d.is_type                                                 ? NodeClass::ObjectType
                      : d.kind == NodeKind::Variable || d.kind == NodeKind::Property ? NodeClass::Variable
                                                                                     : NodeClass::Object;
    spec.browse_name = d.browse_name;
    spec.display_name = d.display_name;
    spec.description = d.description;
    spec.is_abstract = d.is_abstract;
    spec.data_type = d.data_type.is_null() ? ua::NodeId(0, 24) : d.data_type;
    spec.value_rank = d.value_rank;
    spec.array_dimensions = d.array_dimensions;
    spec.access_level = d.access_level;
    spec.user_access_level = d.access_level;
    spec.minimum_sampling_interval = d.minimum_sampling_interval;
    spec.historizing = d.historizing;
    const bool in_type = d.is_type || type_members.count(d.parent) != 0;
    const uint32_t count = d.count ? d.count : 1;
    const std::string name_pattern(d.browse_name.name.view());
    const std::string display_pattern(d.display_name.text.view());
    for (uint32_t k = 0; k < count; ++k) {
      if (d.count) {
        const std::string n = std::to_string(d.start + k);
        auto subst = [&](std::string s) {
          const auto at = s.find("{n}");
          if (at != std::string::npos) s.replace(at, 3, n);
          return s;
        };
        spec.node_id = bulk_node_id(d, d.start + k, resolver);
        spec.browse_name.name = ua::String(subst(name_pattern));
        spec.display_name.text = ua::String(subst(display_pattern));
      } else {
        spec.node_id = d.node_id;
      }
      if (spec.node_class == NodeClass::Variable) {
        ua::DataValue dv;
        dv.value = d.value;
        dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
        spec.value = std::move(dv);
      }
      ua::NodeId parent = d.parent;
      if (d.count && d.kind == NodeKind::Property && !d.parent.is_null()) {
        // The property of a bulk variable: its parent is the k-th variable (same pattern, one level up).
        const std::string pid(d.node_id.string());
        const auto dot = pid.rfind('.');
        if (dot != std::string::npos) {
          NodeDecl owner;
          owner.node_id = ua::NodeId(d.node_id.namespace_index(), ua::String(pid.substr(0, dot)));
          parent = bulk_node_id(owner, d.start + k, resolver);
          spec.node_id = ua::NodeId(parent.namespace_index(),
                                    ua::String(std::string(parent.string()) + pid.substr(dot)));
          spec.browse_name.name = d.browse_name.name;
          spec.display_name.text = d.display_name.text;
        }
      }
      if (!b.add_node(spec)) {
        errors.push_back({d.file, d.path, "duplicate NodeId " + spec.node_id.to_string()});
        break;
      }
      if (d.is_type) {
        b.add_reference(d.parent, ua::NodeId(0, ua::id::HasSubtype), spec.node_id);
      } else {
        b.add_reference(parent, d.reference_type, spec.node_id);
        b.add_reference(spec.node_id, has_type_definition, d.type_definition);
      }
      if (in_type) {
        type_members.insert(spec.node_id);
        if (!d.is_type) b.add_reference(spec.node_id, has_modelling_rule, mandatory);
      }
    }
  }
  auto built = b.build();
  for (auto& e : built.errors) errors.push_back({"<address space>", "", std::move(e)});
  if (!errors.empty()) return errors;
  const NodeStore& store = *built.store;
  space.publish(std::move(built.store), p);
  install_server_object_values(store, space.values(), p, server_info(c, build));
  return errors;
}

}  // namespace opcuad::config
