#include "addressspace/store_diff.hpp"

#include <algorithm>

namespace opcuad::addressspace {

namespace {

bool same_text(const NodeStore& a, LocalizedTextRef x, const NodeStore& b, LocalizedTextRef y) {
  const LocalizedTextView u = a.text_view(x);
  const LocalizedTextView v = b.text_view(y);
  return u.locale.null == v.locale.null && u.locale.text == v.locale.text && u.text.null == v.text.null &&
         u.text.text == v.text.text;
}

const ua::NodeId* id_or_null(const NodeStore& s, NodeIndex n) {
  return n == kNoNode ? nullptr : &s.node_id(n);
}

bool same_node_id(const ua::NodeId* x, const ua::NodeId* y) {
  return x == y || (x && y && *x == *y);
}

bool same_variable(const NodeStore& a, const VariableAttributes& x, const NodeStore& b,
                   const VariableAttributes& y) {
  const auto dx = a.array_dimensions(x);
  const auto dy = b.array_dimensions(y);
  return same_node_id(id_or_null(a, x.data_type), id_or_null(b, y.data_type)) &&
         x.value_rank == y.value_rank && std::equal(dx.begin(), dx.end(), dy.begin(), dy.end()) &&
         x.access_level == y.access_level && x.user_access_level == y.user_access_level &&
         x.access_level_ex == y.access_level_ex &&
         x.minimum_sampling_interval == y.minimum_sampling_interval && x.read_roles == y.read_roles &&
         x.write_roles == y.write_roles;
}

bool same_attributes(const NodeStore& a, NodeIndex m, const NodeStore& b, NodeIndex n) {
  const NodeRecord& x = a.record(m);
  const NodeRecord& y = b.record(n);
  if (x.node_class != y.node_class || x.browse_ns != y.browse_ns || x.write_mask != y.write_mask ||
      x.event_notifier != y.event_notifier || x.flags != y.flags ||
      a.string(x.browse_name) != b.string(y.browse_name) ||
      !same_text(a, x.display_name, b, y.display_name) || !same_text(a, x.description, b, y.description)) {
    return false;
  }
  if (const VariableAttributes* vx = a.variable(m)) {
    if (!same_variable(a, *vx, b, *b.variable(n))) return false;
  }
  if (const ReferenceTypeAttributes* rx = a.reference_type(m)) {
    if (!same_text(a, rx->inverse_name, b, b.reference_type(n)->inverse_name)) return false;
  }
  const ua::ExtensionObject* dx = a.data_type_definition(m);
  const ua::ExtensionObject* dy = b.data_type_definition(n);
  return (!dx && !dy) || (dx && dy && *dx == *dy);
}

// The references of m in `a` and n in `b` whose other ends are in both stores, in order.
bool same_references(const NodeStore& a, NodeIndex m, const NodeStore& b, NodeIndex n) {
  auto shared = [](const NodeStore& self, const NodeStore& other, NodeIndex node) {
    std::vector<const Reference*> out;
    for (const Reference& r : self.references(node)) {
      if (other.find(self.node_id(r.target)) != kNoNode) out.push_back(&r);
    }
    return out;
  };
  const auto rx = shared(a, b, m);
  const auto ry = shared(b, a, n);
  if (rx.size() != ry.size()) return false;
  for (size_t i = 0; i < rx.size(); ++i) {
    if (rx[i]->is_inverse != ry[i]->is_inverse || a.node_id(rx[i]->target) != b.node_id(ry[i]->target) ||
        a.node_id(a.reference_type_node(rx[i]->type)) != b.node_id(b.reference_type_node(ry[i]->type))) {
      return false;
    }
  }
  return true;
}

}  // namespace

StoreDiff diff_stores(const NodeStore& before, const NodeStore& after) {
  StoreDiff d;
  for (NodeIndex m = 0; m < before.size(); ++m) {
    const NodeIndex n = after.find(before.node_id(m));
    if (n == kNoNode) {
      ++d.removed;
    } else if (!same_attributes(before, m, after, n) || !same_references(before, m, after, n)) {
      ++d.changed;
    }
  }
  for (NodeIndex n = 0; n < after.size(); ++n) {
    if (before.find(after.node_id(n)) == kNoNode) ++d.added;
  }
  return d;
}

}  // namespace opcuad::addressspace
