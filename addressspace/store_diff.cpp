#include "addressspace/store_diff.hpp"

#include <algorithm>

#include "ua/generated/node_ids.hpp"

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

// A reference as both stores can compare it: type, direction, other end, by NodeId.
struct RefKey {
  const ua::NodeId* type;
  const ua::NodeId* target;
  bool is_inverse;
};

bool ref_less(const RefKey& x, const RefKey& y) {
  if (x.is_inverse != y.is_inverse) return x.is_inverse < y.is_inverse;
  if (!(*x.type == *y.type)) return *x.type < *y.type;
  return *x.target < *y.target;
}

std::vector<RefKey> ref_keys(const NodeStore& s, NodeIndex n) {
  std::vector<RefKey> out;
  for (const Reference& r : s.references(n)) {
    out.push_back({&s.node_id(s.reference_type_node(r.type)), &s.node_id(r.target), r.is_inverse});
  }
  std::sort(out.begin(), out.end(), ref_less);
  return out;
}

// The ReferenceAdded / ReferenceDeleted bits of a node of both stores.
uint8_t reference_verbs(const NodeStore& a, NodeIndex m, const NodeStore& b, NodeIndex n) {
  const auto x = ref_keys(a, m);
  const auto y = ref_keys(b, n);
  uint8_t verb = 0;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    if (j == y.size() || (i < x.size() && ref_less(x[i], y[j]))) {
      verb |= model_verb::kReferenceDeleted;
      ++i;
    } else if (i == x.size() || ref_less(y[j], x[i])) {
      verb |= model_verb::kReferenceAdded;
      ++j;
    } else {
      ++i;
      ++j;
    }
  }
  return verb;
}

bool data_type_changed(const NodeStore& a, NodeIndex m, const NodeStore& b, NodeIndex n) {
  const VariableAttributes* x = a.variable(m);
  const VariableAttributes* y = b.variable(n);
  return x && y && !same_node_id(id_or_null(a, x->data_type), id_or_null(b, y->data_type));
}

// The affectedType of Part 5 §12.16: an Object's or Variable's TypeDefinition, else null.
ua::NodeId affected_type(const NodeStore& s, NodeIndex n) {
  const NodeClass c = s.node_class(n);
  if (c != NodeClass::Object && c != NodeClass::Variable) return {};
  const NodeIndex has_type_definition = s.find(ua::NodeId(0, ua::id::HasTypeDefinition));
  for (const Reference& r : s.references(n)) {
    if (!r.is_inverse && s.reference_type_node(r.type) == has_type_definition) return s.node_id(r.target);
  }
  return {};
}

}  // namespace

StoreDiff diff_stores(const NodeStore& before, const NodeStore& after, ModelChanges* changes,
                      size_t change_limit) {
  StoreDiff d;
  auto note = [&](const NodeStore& s, NodeIndex n, uint8_t verb) {
    if (!changes || verb == 0) return;
    if (changes->entries.size() >= change_limit) {
      changes->complete = false;
      return;
    }
    changes->entries.push_back({s.node_id(n), affected_type(s, n), verb});
  };
  for (NodeIndex m = 0; m < before.size(); ++m) {
    const NodeIndex n = after.find(before.node_id(m));
    if (n == kNoNode) {
      ++d.removed;
      note(before, m, model_verb::kNodeDeleted);
      continue;
    }
    const bool same_refs = same_references(before, m, after, n);
    if (!same_attributes(before, m, after, n) || !same_refs) ++d.changed;
    if (changes && changes->complete) {
      uint8_t verb = data_type_changed(before, m, after, n) ? model_verb::kDataTypeChanged : 0;
      // The counts above ignore references to added and removed nodes; the verbs do not.
      const auto rx = before.references(m);
      const auto ry = after.references(n);
      if (!same_refs || rx.size() != ry.size() ||
          !std::equal(
              rx.begin(), rx.end(), ry.begin(), ry.end(), [&](const Reference& x, const Reference& y) {
                return x.is_inverse == y.is_inverse && before.node_id(x.target) == after.node_id(y.target) &&
                       before.node_id(before.reference_type_node(x.type)) ==
                           after.node_id(after.reference_type_node(y.type));
              })) {
        verb |= reference_verbs(before, m, after, n);
      }
      note(after, n, verb);
    }
  }
  for (NodeIndex n = 0; n < after.size(); ++n) {
    if (before.find(after.node_id(n)) == kNoNode) {
      ++d.added;
      note(after, n, model_verb::kNodeAdded);
    }
  }
  return d;
}

}  // namespace opcuad::addressspace
