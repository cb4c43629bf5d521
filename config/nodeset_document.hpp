#pragma once
// A NodeSet2 file between load_nodeset_file_text() and resolve_nodesets() (config.hpp), and the per-file
// conversion resolve_nodesets() runs once the load order is known. Internal to config/.

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pugixml.hpp>

#include "config/config.hpp"
#include "config/xml_value.hpp"

namespace opcuad::config {

struct NodeSetDocument;

// Which file and line define a node, for the messages that name both places.
struct NodeLocation {
  uint32_t file = 0;
  uint32_t line = 0;
};

// A Value that holds ExtensionObjects of structures a loaded model defines: read again, by the resolved
// definitions, before the documents are freed (encode_structure_values()).
struct PendingValue {
  size_t node = 0;  // index into result.config.imported.nodes (into ConvertedNodeSet::nodes until spliced)
  const NodeSetDocument* doc = nullptr;
  pugi::xml_node element;  // the Value's typed element
  NamespaceMap map;        // the file's namespace indexes -> the server's
  uint32_t file = 0;
};

// What convert_nodeset() makes of one file beside its nodes, references and definitions (which go
// straight into result.config.imported, NodeSetDocument::nodes_begin ...).
struct ConvertedNodeSet {
  // ParentNodeIds, checked once all are in: the parent's index in ImportedModels::ids (12 bytes where a
  // NodeId would take 56, for nearly every node of a model) and where the node is.
  struct Parent {
    uint32_t id = 0;
    NodeLocation where;
  };
  std::vector<Parent> parents;
  std::vector<PendingValue> pending;  // values to encode once every definition is resolved
  std::vector<ConfigError> errors;    // reported in load order, as if converted then
  size_t data_types = 0;              // DataType nodes among the file's nodes
};

// One NodeSet2 file between load_nodeset_file_text() and resolve_nodesets(): what the header says and
// where its converted nodes are. A file is converted as soon as it is read, so that one file's XML tree is
// held at a time: the text pugixml parsed in place (its strings point into it), the tree and the line
// offsets are freed then, unless a value of a structure the files define waits in them for the resolved
// definitions (PendingValue); resolve_nodesets() frees those. Its nodes, references and definitions are
// appended to result.config.imported in the order of the configuration, with `file` its place there
// (config_index); resolve_nodesets() reorders them when the load order (RequiredModels first) differs.
struct NodeSetDocument {
  struct Required {
    std::string uri, version;
    ua::DateTime publication_date;
    uint32_t line = 0;
  };
  struct Model {
    std::string uri, version;
    ua::DateTime publication_date;
    std::vector<Required> required;
    uint32_t line = 0;
  };
  std::string file;
  std::string text;
  pugi::xml_document doc;
  std::vector<size_t> line_starts;  // offsets of the lines after the first
  std::vector<std::string> uris;    // NamespaceUris, the file's indexes 1..n
  std::vector<Model> models;
  uint32_t config_index = 0;              // among the NodeSet2 files, in the order of the configuration
  size_t nodes_begin = 0, nodes_end = 0;  // in result.config.imported.nodes
  size_t references_begin = 0, references_end = 0;
  size_t definitions_begin = 0, definitions_end = 0;
  ConvertedNodeSet converted;

  uint32_t line_at(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return static_cast<uint32_t>(
        std::upper_bound(line_starts.begin(), line_starts.end(), static_cast<size_t>(offset)) -
        line_starts.begin() + 1);
  }
  uint32_t line(pugi::xml_node n) const { return n ? line_at(n.offset_debug()) : 0; }
};

// Appends the nodes, references and definitions of `d` to `into` (the rest to d.converted), with the
// NodeIds in the server's namespace indexes (`namespaces`, the NamespaceArray, which already holds the
// file's NamespaceUris).
void convert_nodeset(NodeSetDocument& d, const std::vector<std::string>& namespaces, ImportedModels& into);

// How many nodes, references, DataTypes and Models a NodeSet2 text holds, counted in its text without
// parsing it (from the elements <UA..., <Reference, <UADataType and <Model): what the
// loader reserves room for before it reads a configuration's NodeSet2 files. An estimate: a comment or a
// prefixed element name counts wrongly, which costs only a vector's growth.
struct NodeSetCounts {
  size_t nodes = 0, references = 0, data_types = 0, models = 0;
};
void count_nodeset_elements(std::string_view text, NodeSetCounts& counts);

// One index of result.config.imported for every step of resolve_nodesets() (the checks, the namespace
// metadata, the definitions, the dictionaries, the structure values), built once and kept current as the
// steps add nodes and references through add_node() and add_reference(): the NodeId of every node, the
// HasSubtype and HasEncoding references, and the few other references the steps look for.
class ImportedIndex {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};

  explicit ImportedIndex(ImportedModels& m);

  ImportedModels& models() const noexcept { return m_; }
  // The first node with this NodeId (index into nodes), or kNone.
  uint32_t find(const ua::NodeId& id) const;
  // The nodes there were when the index was made whose NodeId an earlier node has: (node, first node),
  // in the order of the nodes.
  const std::vector<std::pair<uint32_t, uint32_t>>& duplicates() const noexcept { return duplicates_; }
  const ImportedSpec* spec(const ua::NodeId& id) const {
    const uint32_t i = find(id);
    return i == kNone ? nullptr : &m_.nodes[i].spec;
  }
  // The supertype of a DataType (its first HasSubtype source), or nullptr.
  const ua::NodeId* supertype(const ua::NodeId& type) const;
  // The HasEncoding targets of a DataType, in reference order (nullptr: none).
  const std::vector<ua::NodeId>* encodings(const ua::NodeId& type) const;
  // The DataType an encoding node belongs to (its first HasEncoding source), or nullptr.
  const ua::NodeId* data_type_of_encoding(const ua::NodeId& encoding) const;
  // The HasProperty targets of `node`, in reference order.
  std::vector<ua::NodeId> properties(const ua::NodeId& node) const;
  // The references of a type other than HasSubtype, HasEncoding, HasProperty and the hierarchical ones
  // that the steps look for (HasTypeDefinition of NamespaceMetadataType and DataTypeDictionaryType,
  // HasDescription) and those from or to Server.Namespaces or OPC Binary, in reference order.
  const std::vector<uint32_t>& marked() const noexcept { return marked_; }  // indexes into references

  void add_node(ImportedNode n);
  void add_reference(const CreatedReference& r);

 private:
  void index_reference(uint32_t i);
  uint32_t insert(uint32_t node);  // the first node of its NodeId
  void grow();

  ImportedModels& m_;
  // Open addressing, linear probing, at most two thirds full. A numeric NodeId's slot holds the NodeId
  // itself (namespace and identifier), so that finding it reads no node; any other's holds its hash.
  struct Slot {
    uint64_t key = 0;
    uint32_t node = 0;     // index + 1; 0: an empty slot
    uint32_t numeric = 0;  // 1: `key` is a numeric NodeId
  };
  static Slot slot_of(const ua::NodeId& id, uint32_t node);
  std::vector<Slot> slots_;
  size_t used_ = 0;
  std::unordered_map<ua::NodeId, ua::NodeId> supertype_;
  std::unordered_map<ua::NodeId, std::vector<ua::NodeId>> encodings_;
  std::unordered_map<ua::NodeId, ua::NodeId> encoding_of_;
  // The HasProperty references: (their source's hash >> 32) << 32 | index into references.
  std::vector<uint64_t> has_property_;
  std::vector<uint32_t> marked_;
  std::vector<std::pair<uint32_t, uint32_t>> duplicates_;
};

// A Variable the loader adds to a model (a NamespaceMetadata property, an OPC Binary dictionary, a
// DataTypeDescription): its DisplayName is its BrowseName's name, its Value `value`, stamped now.
ImportedNode created_variable(ua::NodeId id, ua::QualifiedName browse_name, uint32_t data_type,
                              int32_t value_rank, ua::Variant value, uint32_t file, uint32_t line);

// What resolve_definitions() asks of the address space being loaded: the NodeClass of a NodeId in
// namespace 0 or the files (Unspecified: none), and whether its absence is already explained (its model
// is missing, or a node file did not parse).
// Supertype chains of the files' types longer than this are taken for cycles.
inline constexpr int kMaxSupertypeDepth = 64;

struct DataTypeLookup {
  std::function<addressspace::NodeClass(const ua::NodeId&)> node_class;
  std::function<bool(const ua::NodeId&)> excused;
};

// Sets the DataTypeDefinition (NodeSpec::definition) of every DataType of result.config.imported that has
// a <Definition>, adding the "Default Binary" encoding nodes missing from the files
// (nodeset_definitions.cpp); errors into result.errors.
void resolve_definitions(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index);

// Gives every model of result.config.imported its NamespaceMetadata object below Server.Namespaces
// (Part 5 §6.3.13), the file's own completed or one created (nodeset_namespaces.cpp). Runs before
// resolve_definitions(), so StaticNodeIdTypes names the IdTypes of the files' nodes only.
void add_namespace_metadata(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index);

// Gives every namespace whose DataTypes have definitions an OPC Binary DataTypeDictionary below
// OPC Binary (Part 5 Annex D), the file's own or one generated from the resolved DataTypeDefinitions,
// with a DataTypeDescription per structure linked from its Default Binary encoding
// (nodeset_dictionary.cpp). Runs after resolve_definitions().
void add_type_dictionaries(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index);

// Reads the `pending` values again with the resolved definitions (after resolve_definitions(), while
// their documents live): each ExtensionObject of a loaded model's structure becomes its Default Binary
// body (Part 6 §5.2.7); a value that does not fit its definition is an error naming its file and line.
// What stays undecoded (no definition for its TypeId) is listed in ImportedModels::undecoded
// (nodeset_values.cpp).
void encode_structure_values(LoadResult& result, const std::vector<PendingValue>& pending,
                             const ImportedIndex& index);

}  // namespace opcuad::config
