// NodeSet2 files together: their load order by RequiredModels, and the checks that span files (NodeIds
// defined twice, references to nothing, values against their DataType).
#include <algorithm>
#include <charconv>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "addressspace/namespace0.hpp"
#include "addressspace/type_check.hpp"
#include "config/config.hpp"
#include "config/json_value.hpp"
#include "config/nodeset_document.hpp"
#include "config/type_names.hpp"
#include "config/xml_value.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

// Namespace 0 as the generated code has it (Opc.Ua.NodeSet2.xml's Model, also the values of
// Server.Namespaces.OPCUANamespaceMetadata, addressspace/generated/ns0_values_00.cpp).
constexpr const char* kNs0Version = "1.05.03";
constexpr const char* kNs0PublicationDate = "2023-12-15T00:00:00Z";

// "1.04.2" < "1.05": numeric components compared as numbers, others as text.
int compare_versions(std::string_view a, std::string_view b) {
  while (!a.empty() || !b.empty()) {
    const auto da = a.find('.'), db = b.find('.');
    const std::string_view pa = a.substr(0, da), pb = b.substr(0, db);
    a = da == std::string_view::npos ? std::string_view() : a.substr(da + 1);
    b = db == std::string_view::npos ? std::string_view() : b.substr(db + 1);
    uint64_t na = 0, nb = 0;
    const bool numa =
        !pa.empty() && std::from_chars(pa.data(), pa.data() + pa.size(), na).ptr == pa.data() + pa.size();
    const bool numb =
        !pb.empty() && std::from_chars(pb.data(), pb.data() + pb.size(), nb).ptr == pb.data() + pb.size();
    if (numa && numb) {
      if (na != nb) return na < nb ? -1 : 1;
    } else if (pa != pb) {
      return pa < pb ? -1 : 1;
    }
  }
  return 0;
}

struct LoadedModel {
  NodeSetDocument* doc = nullptr;  // nullptr: namespace 0, built in
  std::string version;
  ua::DateTime publication_date;
};

std::string describe(const std::string& uri, const LoadedModel& m) {
  return uri + " " + (m.version.empty() ? "(no version)" : m.version) +
         (m.publication_date.is_null() ? "" : " of " + m.publication_date.to_string().substr(0, 10)) + " (" +
         (m.doc ? m.doc->file : "built in") + ")";
}

// The files in an order where every file comes after the files of the models it requires (Part 6 Annex F);
// errors for a required model that is missing, older than required, or required in a cycle.
// `missing` gets the URIs of required models no file provides.
std::vector<NodeSetDocument*> load_order(LoadResult& result, std::unordered_set<std::string>& missing) {
  std::unordered_map<std::string, LoadedModel> models;
  ua::DateTime ns0_date;
  (void)parse_date_time(kNs0PublicationDate, ns0_date);
  models[addressspace::kNamespace0Uri] = {nullptr, kNs0Version, ns0_date};
  for (const auto& d : result.nodesets) {
    for (const auto& m : d->models) {
      auto [it, inserted] = models.emplace(m.uri, LoadedModel{d.get(), m.version, m.publication_date});
      if (!inserted) {
        result.errors.push_back({d->file, "line " + std::to_string(m.line),
                                 "model " + m.uri + " is already defined by " +
                                     (it->second.doc ? it->second.doc->file : std::string("namespace 0"))});
      }
    }
  }
  auto loaded_list = [&] {
    std::vector<std::string> names;
    for (const auto& [uri, m] : models) names.push_back(describe(uri, m));
    std::sort(names.begin(), names.end());
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  // Dependencies between files, and the checks of each RequiredModel.
  std::unordered_map<const NodeSetDocument*, std::vector<NodeSetDocument*>> needs;
  for (const auto& d : result.nodesets) {
    for (const auto& m : d->models) {
      for (const auto& r : m.required) {
        const std::string at = "line " + std::to_string(r.line);
        const auto it = models.find(r.uri);
        if (it == models.end()) {
          missing.insert(r.uri);
          result.errors.push_back({d->file, at,
                                   "model " + m.uri + " requires model " + r.uri +
                                       (r.version.empty() ? "" : " " + r.version) +
                                       ", which no node file provides; loaded: " + loaded_list()});
          continue;
        }
        const LoadedModel& have = it->second;
        if (!r.version.empty() && compare_versions(have.version, r.version) < 0) {
          result.errors.push_back({d->file, at,
                                   "model " + m.uri + " requires " + r.uri + " version " + r.version +
                                       " or later; loaded: " + describe(r.uri, have)});
        } else if (!r.publication_date.is_null() && have.publication_date < r.publication_date) {
          result.errors.push_back({d->file, at,
                                   "model " + m.uri + " requires " + r.uri + " published " +
                                       r.publication_date.to_string().substr(0, 10) +
                                       " or later; loaded: " + describe(r.uri, have)});
        }
        if (have.doc && have.doc != d.get()) needs[d.get()].push_back(have.doc);
      }
    }
  }
  // Depth first, in the order of the files in the configuration; a file still on the path is a cycle.
  std::vector<NodeSetDocument*> order;
  std::unordered_map<const NodeSetDocument*, int> state;  // 1: on the path, 2: placed
  std::function<void(NodeSetDocument*)> visit = [&](NodeSetDocument* d) {
    int& s = state[d];
    if (s == 2) return;
    if (s == 1) {
      result.errors.push_back({d->file, "line " + std::to_string(d->models.front().line),
                               "its models and the models they require form a cycle"});
      return;
    }
    s = 1;
    for (NodeSetDocument* dep : needs[d]) visit(dep);
    state[d] = 2;
    order.push_back(d);
  };
  for (const auto& d : result.nodesets) visit(d.get());
  return order;
}

// Where each DataType of the loaded files sits (its HasSubtype supertype), and which DataType an
// encoding node belongs to (HasEncoding), for the check of values against their DataType.
class ImportedTypes {
 public:
  explicit ImportedTypes(const ImportedIndex& index) : index_(index) {}
  // The nearest namespace-0 DataType at or above `type`, or kNoNode.
  addressspace::NodeIndex ns0_ancestor(ua::NodeId type) const {
    for (int depth = 0; depth < kMaxSupertypeDepth; ++depth) {
      const addressspace::NodeIndex n = ns0_store().find(type);
      if (n != addressspace::kNoNode) return n;
      const ua::NodeId* up = index_.supertype(type);
      if (!up) return addressspace::kNoNode;
      type = *up;
    }
    return addressspace::kNoNode;
  }
  // Is `type` `base` or a subtype of it, across the loaded files and namespace 0?
  bool is_subtype(ua::NodeId type, const ua::NodeId& base) const {
    for (int depth = 0; depth < kMaxSupertypeDepth; ++depth) {
      if (type == base) return true;
      const addressspace::NodeIndex n = ns0_store().find(type);
      if (n != addressspace::kNoNode) {
        const addressspace::NodeIndex b = ns0_store().find(base);
        return b != addressspace::kNoNode && ns0_store().is_data_type_subtype(n, b);
      }
      const ua::NodeId* up = index_.supertype(type);
      if (!up) return false;
      type = *up;
    }
    return false;
  }
  const ua::NodeId* data_type_of_encoding(const ua::NodeId& encoding) const {
    return index_.data_type_of_encoding(encoding);
  }

 private:
  const ImportedIndex& index_;
};

// What value_mismatch() needs to know of a DataType, the same for every Variable of that DataType.
struct DataTypePlace {
  addressspace::NodeIndex ancestor = addressspace::kNoNode;  // the nearest namespace-0 DataType at or above
  bool own_type = false;                                     // not one of namespace 0
};
DataTypePlace place_of(const ua::NodeId& data_type, const ImportedTypes& types) {
  return {types.ns0_ancestor(data_type), ns0_store().find(data_type) == addressspace::kNoNode};
}

// Why `value` does not fit the DataType (at `place`), ValueRank and ArrayDimensions of `spec`, or "" when
// it does.
std::string value_mismatch(const ImportedSpec& spec, const ua::Variant& value, const ImportedTypes& types,
                           const DataTypePlace& place) {
  const auto& s = ns0_store();
  const addressspace::NodeIndex ancestor = place.ancestor;
  if (ancestor == addressspace::kNoNode)
    return "its DataType " + spec.data_type.to_string() + " has no supertype chain to a namespace-0 DataType";
  if (!addressspace::value_rank_accepts(spec.value_rank, spec.dimensions(), value)) {
    return std::string(value.is_array() ? "an array" : "a scalar") + " does not fit ValueRank " +
           std::to_string(spec.value_rank) + (spec.dimensions().empty() ? "" : " and its ArrayDimensions");
  }
  const bool own_type = place.own_type;
  if (value.type() == ua::BuiltinType::ExtensionObject) {
    auto check = [&](const ua::ExtensionObject& eo) -> std::string {
      if (eo.is_empty()) return "";
      ua::NodeId type;
      if (eo.is_decoded()) {
        type = ua::NodeId(0, eo.structure_type()->data_type_id);
      } else if (const ua::NodeId* t = types.data_type_of_encoding(eo.type_id())) {
        type = *t;
      } else {
        return "ExtensionObject TypeId " + eo.type_id().to_string() + " is no encoding of a known DataType";
      }
      if (!types.is_subtype(type, spec.data_type))
        return "a structure of DataType " + type.to_string() + " is not a " + spec.data_type.to_string();
      return "";
    };
    if (const auto* eo = value.get_if<ua::ExtensionObject>()) return check(*eo);
    if (const auto* list = value.get_if<std::vector<ua::ExtensionObject>>()) {
      for (const auto& eo : *list) {
        if (auto why = check(eo); !why.empty()) return why;
      }
    }
    return "";
  }
  // Named only for a mismatch: the check runs for every Variable of every file.
  auto name = [&] {
    return std::string(value.is_array() ? "an array of " : "a ") +
           std::string(ua::builtin_type_name(value.type()));
  };
  if (own_type && s.node_id(ancestor).is_ns0(ua::id::Enumeration)) {
    // An enumeration a loaded file defines: its values are Int32 (Part 3 §8.14).
    return value.type() == ua::BuiltinType::Int32 ? "" : name() + " for an enumeration (Int32)";
  }
  if (!addressspace::data_type_accepts(s, ancestor, value))
    return name() + " does not fit DataType " + spec.data_type.to_string();
  return "";
}

}  // namespace

void resolve_nodesets(LoadResult& result) {
  if (result.nodesets.empty()) return;
  ImportedModels& out = result.config.imported;
  std::unordered_set<std::string> missing_models;
  const std::vector<NodeSetDocument*> order = load_order(result, missing_models);
  std::vector<ConvertedNodeSet::Parent> parents;
  std::vector<PendingValue> pending;
  // The files' nodes, references and definitions are in the order of the configuration, each with its
  // place there as its file: put in load order, unless that is the same order.
  bool in_order = true;
  for (size_t k = 0; k < order.size(); ++k) in_order = in_order && order[k]->config_index == k;
  if (!in_order) {
    auto reorder = [&](auto& all, size_t NodeSetDocument::*begin, size_t NodeSetDocument::*end) {
      std::remove_reference_t<decltype(all)> sorted;
      sorted.reserve(all.capacity());
      for (size_t k = 0; k < order.size(); ++k) {
        for (size_t i = order[k]->*begin; i < order[k]->*end; ++i) {
          sorted.push_back(std::move(all[i]));
          sorted.back().file = static_cast<uint32_t>(k);
        }
      }
      all.swap(sorted);
    };
    // A pending value's node moves with its file.
    size_t base = 0;
    for (NodeSetDocument* d : order) {
      for (PendingValue& p : d->converted.pending) p.node = p.node - d->nodes_begin + base;
      base += d->nodes_end - d->nodes_begin;
    }
    reorder(out.nodes, &NodeSetDocument::nodes_begin, &NodeSetDocument::nodes_end);
    reorder(out.references, &NodeSetDocument::references_begin, &NodeSetDocument::references_end);
    reorder(out.definitions, &NodeSetDocument::definitions_begin, &NodeSetDocument::definitions_end);
  }
  // Room for the nodes and references add_namespace_metadata(), resolve_definitions() and
  // add_type_dictionaries() create (the loader reserved it for the files it read): an ImportedNode is some
  // 500 bytes, and a vector that outgrows its room moves every one of them into twice the memory. The room is
  // generous: a NamespaceMetadata object with its properties per model, an encoding and a DataTypeDescription
  // per DataType.
  size_t data_types = 0, models = 0;
  for (const NodeSetDocument* d : order) {
    models += d->models.size();
    data_types += d->converted.data_types;
  }
  out.nodes.reserve(out.nodes.size() + 32 * models + 4 * data_types);
  out.references.reserve(out.references.size() + 64 * models + 8 * data_types);
  for (size_t k = 0; k < order.size(); ++k) {
    const auto file = static_cast<uint32_t>(k);
    NodeSetDocument* d = order[k];
    out.files.push_back(d->file);
    for (const auto& m : d->models)
      out.models.push_back({m.uri, m.version, m.publication_date, file, m.line});
    ConvertedNodeSet& c = d->converted;
    for (const auto& p : c.parents) parents.push_back({p.id, NodeLocation{file, p.where.line}});
    for (PendingValue& p : c.pending) {
      p.file = file;
      pending.push_back(std::move(p));
    }
    result.errors.insert(result.errors.end(), std::make_move_iterator(c.errors.begin()),
                         std::make_move_iterator(c.errors.end()));
    c = ConvertedNodeSet();
  }

  // Every NodeId once, across the files, namespace 0 and the JSON node files; with the NodeClass of its
  // first definition (the index keeps the first node of a NodeId).
  ImportedIndex index(out);
  const size_t file_nodes = out.nodes.size();  // the checks below know the files' nodes, not those created
  // The index found the second definitions as it was made (duplicates(), in node order).
  auto duplicate = index.duplicates().begin();
  const auto duplicates_end = index.duplicates().end();
  for (size_t i = 0; i < file_nodes; ++i) {
    const ImportedNode& n = out.nodes[i];
    const ua::NodeId& id = n.spec.node_id;
    while (duplicate != duplicates_end && duplicate->first < i) ++duplicate;
    if (ns0_store().find(id) != addressspace::kNoNode) {
      result.errors.push_back({out.files[n.file], "line " + std::to_string(n.line),
                               "NodeId " + id.to_string() + " is already defined by namespace 0"});
      continue;
    }
    if (duplicate != duplicates_end && duplicate->first == i) {
      const ImportedNode& f = out.nodes[duplicate->second];
      result.errors.push_back(
          {out.files[n.file], "line " + std::to_string(n.line),
           "NodeId " + id.to_string() + " is defined twice: here and at " + out.where(f.file, f.line)});
    }
  }
  // A file's node (not one of namespace 0, not one created by the steps below), or kNone.
  auto defined = [&](const ua::NodeId& id) {
    const uint32_t i = index.find(id);
    return i < file_nodes && ns0_store().find(id) == addressspace::kNoNode ? i : ImportedIndex::kNone;
  };
  std::unordered_set<ua::NodeId> declared;  // by JSON node files
  for (const NodeDecl& d : result.config.nodes) {
    if (!d.count) declared.insert(d.node_id);
  }
  // A node of a model that is missing, or of a file that did not parse, is not reported as missing too:
  // the error about the model or the file says why it is not there.
  std::unordered_set<uint16_t> absent_namespaces;
  for (size_t i = 0; i < result.config.namespaces.size(); ++i) {
    if (missing_models.count(result.config.namespaces[i])) absent_namespaces.insert(static_cast<uint16_t>(i));
  }
  auto known = [&](const ua::NodeId& id) {
    // Not namespace 0's: a file's node when the index has it among the files' (defined(), one lookup less).
    return ns0_store().find(id) != addressspace::kNoNode || index.find(id) < file_nodes || declared.count(id);
  };
  auto excused = [&](const ua::NodeId& id) {
    return !known(id) && (result.unparsed_files || absent_namespaces.count(id.namespace_index()));
  };
  auto exists = [&](const ua::NodeId& id) { return known(id) || excused(id); };
  auto class_of = [&](const ua::NodeId& id) {
    const addressspace::NodeIndex i = ns0_store().find(id);
    if (i != addressspace::kNoNode) return ns0_store().node_class(i);
    const uint32_t d = defined(id);
    return d == ImportedIndex::kNone ? addressspace::NodeClass::Unspecified : out.nodes[d].spec.node_class;
  };
  // The checks depend on the NodeId alone: each of the references' and parents' NodeIds (out.ids) is
  // looked up once, however many references name it, and the verdict kept here; a failed check is still
  // reported for every reference and parent.
  enum : uint8_t { kChecked = 1, kExists = 2, kTypeChecked = 4, kFitType = 8 };
  std::vector<uint8_t> verdict(out.ids.size(), 0);
  auto id_exists = [&](uint32_t i) {
    uint8_t& v = verdict[i];
    if (!(v & kChecked)) v |= kChecked | (exists(out.id(i)) ? kExists : 0);
    return (v & kExists) != 0;
  };
  for (const ImportedReference& r : out.references) {
    auto at = [&] { return "line " + std::to_string(r.line); };
    for (const uint32_t i : {r.source, r.target}) {
      if (!id_exists(i)) {
        result.errors.push_back(
            {out.files[r.file], at(), "reference to " + out.id(i).to_string() + ", which exists nowhere"});
      }
    }
    uint8_t& v = verdict[r.type];
    if (v & kFitType) continue;
    const ua::NodeId& type = out.id(r.type);
    if (!id_exists(r.type)) {
      result.errors.push_back(
          {out.files[r.file], at(), "reference type " + type.to_string() + " exists nowhere"});
      continue;
    }
    if (!(v & kTypeChecked)) {
      v |= kTypeChecked;
      if (class_of(type) == addressspace::NodeClass::ReferenceType || declared.count(type) || excused(type))
        v |= kFitType;
    }
    if (!(v & kFitType))
      result.errors.push_back({out.files[r.file], at(), type.to_string() + " is not a ReferenceType"});
  }
  // The ParentNodeIds are in out.ids too.
  for (const auto& p : parents) {
    if (!id_exists(p.id)) {
      result.errors.push_back({out.files[p.where.file], "line " + std::to_string(p.where.line),
                               "ParentNodeId " + out.id(p.id).to_string() + " exists nowhere"});
    }
  }
  verdict = {};
  parents = {};
  const DataTypeLookup lookup{class_of, excused};
  add_namespace_metadata(result, lookup, index);
  resolve_definitions(result, lookup, index);
  encode_structure_values(result, pending, index);
  pending.clear();
  add_type_dictionaries(result, lookup, index);
  result.nodesets.clear();  // the XML text and trees are not needed any more
  // DataTypes and values. The verdict on a DataType (and where it sits) is the same for every Variable of
  // it: found once per DataType, of which a model has few.
  const ImportedTypes types(index);
  enum class DataTypeVerdict : uint8_t { Missing, Excused, NotDataType, Fit };
  struct DataTypeCheck {
    DataTypeVerdict verdict;
    DataTypePlace place;
  };
  std::unordered_map<ua::NodeId, DataTypeCheck> checked_types;
  auto check_data_type = [&](const ua::NodeId& dt) -> const DataTypeCheck& {
    auto it = checked_types.find(dt);
    if (it != checked_types.end()) return it->second;
    DataTypeCheck c{DataTypeVerdict::Fit, {}};
    if (!exists(dt)) {
      c.verdict = DataTypeVerdict::Missing;
    } else if (excused(dt)) {
      c.verdict = DataTypeVerdict::Excused;
    } else if (class_of(dt) != addressspace::NodeClass::DataType) {
      c.verdict = DataTypeVerdict::NotDataType;
    } else {
      c.place = place_of(dt, types);
    }
    return checked_types.emplace(dt, c).first->second;
  };
  for (const ImportedNode& n : out.nodes) {
    const auto& spec = n.spec;
    if (spec.node_class != addressspace::NodeClass::Variable &&
        spec.node_class != addressspace::NodeClass::VariableType)
      continue;
    auto at = [&] { return "line " + std::to_string(n.line); };
    const DataTypeCheck& check = check_data_type(spec.data_type);
    if (check.verdict == DataTypeVerdict::Missing) {
      result.errors.push_back(
          {out.files[n.file], at(), "DataType " + spec.data_type.to_string() + " exists nowhere"});
      continue;
    }
    if (check.verdict == DataTypeVerdict::Excused) continue;
    if (check.verdict == DataTypeVerdict::NotDataType) {
      result.errors.push_back({out.files[n.file], at(), spec.data_type.to_string() + " is not a DataType"});
      continue;
    }
    if (!spec.value) continue;
    if (auto why = value_mismatch(spec, spec.value->value, types, check.place); !why.empty()) {
      result.errors.push_back({out.files[n.file], at(), "Value does not match its DataType: " + why});
    }
  }
}

}  // namespace opcuad::config
