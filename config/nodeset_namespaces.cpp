// Server.Namespaces (Part 5 §6.3.13 NamespaceMetadataType, §6.3.14 NamespacesType): one NamespaceMetadata
// object per model the NodeSet2 files define, the file's own when it has one (docs/CONFIGURATION.md
// "NodeSet2 node files", "Namespace metadata").
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "config/config.hpp"
#include "config/nodeset_document.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

// The properties of NamespaceMetadataType a server provides for every namespace (Part 5 §6.3.13: the
// seven mandatory ones), with their DataType and ValueRank.
struct MetadataProperty {
  const char* name;
  uint32_t data_type;
  int32_t value_rank;
};
constexpr MetadataProperty kMetadataProperties[] = {
    {"NamespaceUri", ua::id::String, -1},
    {"NamespaceVersion", ua::id::String, -1},
    {"NamespacePublicationDate", ua::id::DateTime, -1},
    {"IsNamespaceSubset", ua::id::Boolean, -1},
    {"StaticNodeIdTypes", ua::id::IdType, 1},
    {"StaticNumericNodeIdRange", ua::id::NumericRange, 1},
    {"StaticStringNodeIdPattern", ua::id::String, -1},
};
// Which of them describe the model itself: the <Model> header (Part 6 Annex F) is what RequiredModels are
// checked against, so the served values follow it when a file's object says otherwise.
bool from_header(std::string_view name) {
  return name == "NamespaceUri" || name == "NamespaceVersion" || name == "NamespacePublicationDate";
}

// The NodeId a node created below `parent` gets: `<parent's identifier>.<name>` in the parent's namespace
// (the Default Binary encoding nodes are named alike, nodeset_definitions.cpp).
ua::NodeId metadata_child_id(const ua::NodeId& parent, std::string_view name) {
  const std::string text = parent.to_string();
  const auto semicolon = text.find(';');
  const std::string base = parent.type() == ua::IdType::String
                               ? std::string(parent.string())
                               : (semicolon == std::string::npos ? text : text.substr(semicolon + 1));
  return ua::NodeId(parent.namespace_index(), ua::String(base + "." + std::string(name)));
}

class MetadataBuilder {
 public:
  MetadataBuilder(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index)
      : result_(result), out_(result.config.imported), lookup_(lookup), index_(index) {
    const ua::NodeId has_type_definition(0, ua::id::HasTypeDefinition);
    for (const uint32_t i : index_.marked()) {
      const CreatedReference r{out_.id(out_.references[i].source), out_.id(out_.references[i].type),
                               out_.id(out_.references[i].target)};
      if (r.type == has_type_definition && r.target == ua::NodeId(0, ua::id::NamespaceMetadataType))
        metadata_objects_.insert(r.source);
      if (r.source == namespaces_ || r.target == namespaces_)
        linked_.insert(r.source == namespaces_ ? r.target : r.source);
    }
    // The IdTypes each file uses in each namespace, before anything is created (Part 5 §6.3.13: the
    // nodes the model defines are the same in every server, they are its static nodes).
    for (const ImportedNode& n : out_.nodes) {
      const std::pair<uint32_t, uint16_t> key{n.file, n.spec.node_id.namespace_index()};
      if (key != last_key_) {
        last_key_ = key;
        last_types_ = &id_types_[key];
      }
      last_types_->insert(static_cast<int32_t>(n.spec.node_id.type()));
    }
  }

  void run() {
    const auto& ns = result_.config.namespaces;
    for (const ImportedModel& m : out_.models) {
      const auto at = std::find(ns.begin(), ns.end(), m.uri);
      if (at == ns.end()) continue;  // a model of no namespace of its file: an error was reported
      const auto index = static_cast<uint16_t>(at - ns.begin());
      ua::NodeId object = find_object(m, index);
      if (object.is_null()) object = create_object(m, index);
      if (object.is_null()) continue;
      if (!linked_.count(object)) add_reference(namespaces_, ua::id::HasComponent, object, m);
      complete_properties(object, m, index);
    }
    for (ImportedNode& n : created_nodes_) index_.add_node(std::move(n));
    for (const CreatedReference& r : created_references_) index_.add_reference(r);
  }

 private:
  // The file's NamespaceMetadata object of model `m`: a NamespaceMetadataType object of the same file
  // whose BrowseName is the URI (Part 5 §6.3.13), in the model's namespace or, written without a prefix,
  // in namespace 0.
  ua::NodeId find_object(const ImportedModel& m, uint16_t index) const {
    for (const ua::NodeId& id : metadata_objects_) {
      const uint32_t i = index_.find(id);
      if (i == ImportedIndex::kNone) continue;
      const ImportedNode& n = out_.nodes[i];
      if (n.file == m.file && n.spec.browse_name.name.view() == m.uri &&
          (n.spec.browse_name.namespace_index == index || n.spec.browse_name.namespace_index == 0))
        return id;
    }
    return {};
  }

  bool taken(const ua::NodeId& id) const {
    return index_.find(id) != ImportedIndex::kNone ||
           lookup_.node_class(id) != addressspace::NodeClass::Unspecified;
  }

  ua::NodeId create_object(const ImportedModel& m, uint16_t index) {
    const ua::NodeId id(index, ua::String("NamespaceMetadata"));
    if (taken(id)) {
      error(m, "its NamespaceMetadata object is missing, and " + id.to_string() + " is taken");
      return {};
    }
    ImportedNode n;
    n.file = m.file;
    n.line = m.line;
    n.spec.node_id = id;
    n.spec.node_class = addressspace::NodeClass::Object;
    n.spec.browse_name = ua::QualifiedName{index, ua::String(m.uri)};
    n.spec.display_name = ua::LocalizedText{ua::String(), ua::String(m.uri)};
    created_nodes_.push_back(std::move(n));
    add_reference(id, ua::id::HasTypeDefinition, ua::NodeId(0, ua::id::NamespaceMetadataType), m);
    return id;
  }

  // Gives `object` every mandatory property, and each property without a value (or with one the header
  // contradicts) the value the model implies.
  void complete_properties(const ua::NodeId& object, const ImportedModel& m, uint16_t index) {
    std::unordered_map<std::string, size_t> present;  // browse name -> index into out_.nodes
    for (const ua::NodeId& p : index_.properties(object)) {
      const uint32_t n = index_.find(p);
      if (n != ImportedIndex::kNone)
        present.emplace(std::string(out_.nodes[n].spec.browse_name.name.view()), n);
    }
    for (const MetadataProperty& p : kMetadataProperties) {
      ua::Variant value = value_of(p.name, m, index);
      if (const auto it = present.find(p.name); it != present.end()) {
        ImportedSpec& spec = out_.nodes[it->second].spec;
        if (!spec.value || (from_header(p.name) && !(spec.value->value == value)))
          set_value(spec, std::move(value));
        continue;
      }
      const ua::NodeId id = metadata_child_id(object, p.name);
      if (taken(id)) {
        error(m, "the NamespaceMetadata property " + std::string(p.name) + " is missing, and " +
                     id.to_string() + " is taken");
        continue;
      }
      ImportedNode n = created_variable(id, ua::QualifiedName{0, ua::String(p.name)}, p.data_type,
                                        p.value_rank, std::move(value), m.file, m.line);
      if (p.value_rank == 1) n.spec.array_dimensions = std::vector<uint32_t>{0};
      created_nodes_.push_back(std::move(n));
      add_reference(object, ua::id::HasProperty, id, m);
      add_reference(id, ua::id::HasTypeDefinition, ua::NodeId(0, ua::id::PropertyType), m);
    }
  }

  ua::Variant value_of(std::string_view name, const ImportedModel& m, uint16_t index) const {
    if (name == "NamespaceUri") return ua::Variant(ua::String(m.uri));
    if (name == "NamespaceVersion")
      return m.version.empty() ? ua::Variant(ua::String()) : ua::Variant(ua::String(m.version));
    if (name == "NamespacePublicationDate") return ua::Variant(m.publication_date);
    if (name == "IsNamespaceSubset") return ua::Variant(false);  // the file is the whole model
    if (name == "StaticNodeIdTypes") {
      std::vector<int32_t> types;
      if (const auto it = id_types_.find({m.file, index}); it != id_types_.end())
        types.assign(it->second.begin(), it->second.end());
      return ua::Variant(std::move(types));
    }
    // Every node of an IdType listed above is static: no range or pattern adds any (Part 5 §6.3.13).
    if (name == "StaticNumericNodeIdRange") return ua::Variant(std::vector<ua::String>{});
    return ua::Variant(ua::String(std::string_view()));  // an empty pattern, not a null String
  }

  static void set_value(ImportedSpec& spec, ua::Variant value) {
    ua::DataValue dv;
    dv.value = std::move(value);
    dv.source_timestamp = dv.server_timestamp = ua::DateTime::now();
    spec.value = std::move(dv);
  }

  void add_reference(const ua::NodeId& source, uint32_t type, const ua::NodeId& target,
                     const ImportedModel& m) {
    created_references_.push_back({source, ua::NodeId(0, type), target, m.file, m.line});
  }

  void error(const ImportedModel& m, std::string reason) {
    result_.errors.push_back(
        {out_.files[m.file], "line " + std::to_string(m.line), "model " + m.uri + ": " + std::move(reason)});
  }

  LoadResult& result_;
  ImportedModels& out_;
  const DataTypeLookup& lookup_;
  const ua::NodeId namespaces_{0, ua::id::Server_Namespaces};
  ImportedIndex& index_;
  std::unordered_set<ua::NodeId> metadata_objects_;
  std::unordered_set<ua::NodeId> linked_;  // nodes with a reference to or from Server.Namespaces
  std::map<std::pair<uint32_t, uint16_t>, std::set<int32_t>> id_types_;  // (file, namespace) -> IdTypes
  std::pair<uint32_t, uint16_t> last_key_{~uint32_t{0}, 0};              // of the last node, and its set
  std::set<int32_t>* last_types_ = nullptr;
  std::vector<ImportedNode> created_nodes_;
  std::vector<CreatedReference> created_references_;
};

}  // namespace

void add_namespace_metadata(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index) {
  MetadataBuilder(result, lookup, index).run();
}

}  // namespace opcuad::config
