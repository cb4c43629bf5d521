#include "addressspace/condition_specs.hpp"

#include <algorithm>
#include <limits>

#include "addressspace/node_store.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::addressspace {

namespace {

// The member variables of condition `c` that are fields of its event type, by a walk of its hierarchical
// references (Part 9 §5.5.2: a condition's variables are its event's fields, by browse path).
void collect_fields(const NodeStore& s, const EventTypes& events, EventTypeIdx type, NodeIndex n,
                    int hierarchical, std::vector<ua::QualifiedName>& path,
                    std::vector<std::pair<FieldKey, ValueCell*>>& out) {
  if (path.size() >= kMaxFieldDepth) return;
  for (const Reference& r : s.references(n)) {
    if (r.is_inverse || !s.is_reference_subtype(r.type, static_cast<uint16_t>(hierarchical))) continue;
    const NodeClass c = s.node_class(r.target);
    if (c != NodeClass::Variable && c != NodeClass::Object) continue;
    path.push_back(s.browse_name(r.target));
    if (c == NodeClass::Variable) {
      const VariableAttributes* v = s.variable(r.target);
      const auto key = events.field(type, path);
      if (v && v->cell && key) out.emplace_back(*key, v->cell);
    }
    collect_fields(s, events, type, r.target, hierarchical, path, out);
    path.pop_back();
  }
}

}  // namespace

ValueCell* ConditionSpec::field_cell(FieldKey key) const noexcept {
  auto it =
      std::lower_bound(fields.begin(), fields.end(), key,
                       [](const std::pair<FieldKey, ValueCell*>& f, FieldKey k) { return f.first < k; });
  return it != fields.end() && it->first == key ? it->second : nullptr;
}

ConditionSpecs::BuildResult ConditionSpecs::build(const NodeStore& s, const EventTypes* events,
                                                  std::vector<ConditionDecl> decls,
                                                  const NodeStore* previous) {
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
    c.steady_bands();
    c.on_delay_ms = d.on_delay_ms;
    c.off_delay_ms = d.off_delay_ms;
    c.name = std::move(d.name);
    c.message = std::move(d.message);
    if (previous && previous->condition_specs()) {
      const NodeIndex old = previous->find(d.condition);
      if (const ConditionSpec* o = old == kNoNode ? nullptr : previous->condition_specs()->find(old))
        c.state = o->state;
    }
    if (!c.state) c.state = std::make_shared<ConditionState>();
    const NodeIndex hierarchical = s.find(ua::NodeId(0, ua::id::HierarchicalReferences));
    const int h = hierarchical == kNoNode ? -1 : s.reference_type_index(hierarchical);
    if (h >= 0) {
      std::vector<ua::QualifiedName> path;
      collect_fields(s, *events, c.type, c.node, h, path, c.fields);
      std::sort(c.fields.begin(), c.fields.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      c.fields.erase(std::unique(c.fields.begin(), c.fields.end(),
                                 [](const auto& a, const auto& b) { return a.first == b.first; }),
                     c.fields.end());
    }
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
  if (!watch.empty()) {
    specs->watch_begin_.assign(s.size() + 1, 0);
    for (const auto& [node, spec] : watch) ++specs->watch_begin_[node + 1];
    for (size_t n = 1; n < specs->watch_begin_.size(); ++n)
      specs->watch_begin_[n] += specs->watch_begin_[n - 1];
    specs->watchers_.reserve(watch.size());
    for (const auto& [node, spec] : watch) specs->watchers_.push_back(spec);
  }
  out.specs = std::move(specs);
  return out;
}

void ConditionSpec::steady_bands() noexcept {
  // services/alarm_eval.cpp (high_level, low_level): High when x >= High, HighHigh when x >= HighHigh,
  // Low when x <= Low, LowLow when x <= LowLow, the high side first; a held state is kept while x is
  // back by less than the deadband. The intervals are open, so a value exactly on a bound is judged in
  // full.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  namespace l = alarm_limit;
  steady.fill({kInf, -kInf});
  if (kind != ConditionKind::ExclusiveLimit && kind != ConditionKind::Deviation) return;
  auto at = [this](size_t i, double none) { return has_limit(i) ? limits[i] : none; };
  const double hh = at(l::kHighHigh, kInf), h = at(l::kHigh, kInf);
  const double lo = at(l::kLow, -kInf), ll = at(l::kLowLow, -kInf);
  const double below_high = std::min(h, hh), above_low = std::max(lo, ll);
  const double db = deadband > 0 ? deadband : 0;
  steady[static_cast<size_t>(LimitState::None)] = {above_low, below_high};
  if (has_limit(l::kHigh)) steady[static_cast<size_t>(LimitState::High)] = {h - db, hh};
  if (has_limit(l::kHighHigh)) steady[static_cast<size_t>(LimitState::HighHigh)] = {hh - db, kInf};
  if (has_limit(l::kLow)) steady[static_cast<size_t>(LimitState::Low)] = {ll, std::min(lo + db, below_high)};
  if (has_limit(l::kLowLow))
    steady[static_cast<size_t>(LimitState::LowLow)] = {-kInf, std::min(ll + db, below_high)};
}

const ConditionSpec* ConditionSpecs::find(NodeIndex condition) const noexcept {
  auto it = std::lower_bound(specs_.begin(), specs_.end(), condition,
                             [](const ConditionSpec& c, NodeIndex n) { return c.node < n; });
  return it != specs_.end() && it->node == condition ? &*it : nullptr;
}

}  // namespace opcuad::addressspace
