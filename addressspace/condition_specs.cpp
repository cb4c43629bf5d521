#include "addressspace/condition_specs.hpp"

#include <algorithm>

#include "addressspace/node_store.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::addressspace {

ConditionSpecs::BuildResult ConditionSpecs::build(const NodeStore& s, const EventTypes* events,
                                                  std::vector<ConditionDecl> decls) {
  BuildResult out;
  auto specs = std::make_shared<ConditionSpecs>();
  if (decls.empty()) {
    out.specs = std::move(specs);
    return out;
  }
  const auto alarm = events ? events->event_type(ua::NodeId(0, ua::id::AlarmConditionType)) : std::nullopt;
  auto variable = [&](const ua::NodeId& id, const char* what, const ConditionDecl& d, NodeIndex& n,
                      ValueCell*& cell) {
    n = s.find(id);
    const VariableAttributes* v = n == kNoNode ? nullptr : s.variable(n);
    if (!v || s.node_class(n) != NodeClass::Variable) {
      out.errors.push_back("condition " + d.condition.to_string() + ": its " + what + " " + id.to_string() +
                           " is not a Variable");
      n = kNoNode;
      return;
    }
    cell = v->cell;
  };
  specs->specs_.reserve(decls.size());
  for (ConditionDecl& d : decls) {
    ConditionSpec c;
    c.node = s.find(d.condition);
    if (c.node == kNoNode || s.node_class(c.node) != NodeClass::Object) {
      out.errors.push_back("condition " + d.condition.to_string() + " is not an Object");
      continue;
    }
    const auto type = events ? events->event_type(d.type) : std::nullopt;
    if (!type || !alarm || !events->is_subtype(*type, *alarm)) {
      out.errors.push_back("condition " + d.condition.to_string() + ": its type " + d.type.to_string() +
                           " is not an alarm type (AlarmConditionType or a subtype)");
      continue;
    }
    c.type = *type;
    variable(d.input, "input", d, c.input, c.input_cell);
    if (!d.reference.is_null())
      variable(d.reference, "setpoint or normal-value node", d, c.reference, c.reference_cell);
    c.kind = d.kind;
    c.limit_mask = d.limit_mask;
    c.ack_roles = d.ack_roles;
    c.enabled = d.enabled;
    c.confirm = d.confirm;
    c.severity = d.severity;
    c.limit_severity = d.limit_severity;
    c.limits = d.limits;
    c.deadband = d.deadband;
    c.on_delay_ms = d.on_delay_ms;
    c.off_delay_ms = d.off_delay_ms;
    c.name = std::move(d.name);
    c.message = std::move(d.message);
    specs->specs_.push_back(std::move(c));
  }
  auto& v = specs->specs_;
  std::sort(v.begin(), v.end(),
            [](const ConditionSpec& a, const ConditionSpec& b) { return a.node < b.node; });
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].node == v[i - 1].node)
      out.errors.push_back("condition " + s.node_id(v[i].node).to_string() + " is declared twice");
  }
  if (!out.errors.empty()) return out;
  std::vector<std::pair<NodeIndex, uint32_t>> watch;
  for (uint32_t i = 0; i < v.size(); ++i) {
    if (v[i].input != kNoNode) watch.emplace_back(v[i].input, i);
    if (v[i].reference != kNoNode && v[i].reference != v[i].input) watch.emplace_back(v[i].reference, i);
  }
  std::sort(watch.begin(), watch.end());
  for (const auto& [node, spec] : watch) {
    specs->watched_.push_back(node);
    specs->watchers_.push_back(spec);
  }
  out.specs = std::move(specs);
  return out;
}

const ConditionSpec* ConditionSpecs::find(NodeIndex condition) const noexcept {
  auto it = std::lower_bound(specs_.begin(), specs_.end(), condition,
                             [](const ConditionSpec& c, NodeIndex n) { return c.node < n; });
  return it != specs_.end() && it->node == condition ? &*it : nullptr;
}

std::span<const uint32_t> ConditionSpecs::watching(NodeIndex variable) const noexcept {
  const auto [lo, hi] = std::equal_range(watched_.begin(), watched_.end(), variable);
  return {watchers_.data() + (lo - watched_.begin()), static_cast<size_t>(hi - lo)};
}

}  // namespace opcuad::addressspace
