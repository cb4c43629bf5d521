#pragma once
// A NodeSet2 file between load_nodeset_file_text() and resolve_nodesets() (config.hpp), and the per-file
// conversion resolve_nodesets() runs once the load order is known. Internal to config/.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <pugixml.hpp>

#include "config/config.hpp"
#include "config/xml_value.hpp"

namespace opcuad::config {

// One NodeSet2 file between load_nodeset_file_text() and resolve_nodesets(): the text pugixml parsed in
// place (its strings point into it), and what the header says. resolve_nodesets() frees the text, the
// tree and the line offsets once the file is converted.
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

  uint32_t line_at(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return static_cast<uint32_t>(
        std::upper_bound(line_starts.begin(), line_starts.end(), static_cast<size_t>(offset)) -
        line_starts.begin() + 1);
  }
  uint32_t line(pugi::xml_node n) const { return n ? line_at(n.offset_debug()) : 0; }
};

// Which file and line define a node, for the messages that name both places.
struct NodeLocation {
  uint32_t file = 0;
  uint32_t line = 0;
};

// A Value that holds ExtensionObjects of structures a loaded model defines: read again, by the resolved
// definitions, before the documents are freed (encode_structure_values()).
struct PendingValue {
  size_t node = 0;  // index into result.config.imported.nodes
  const NodeSetDocument* doc = nullptr;
  pugi::xml_node element;  // the Value's typed element
  NamespaceMap map;        // the file's namespace indexes -> the server's
  uint32_t file = 0;
};

// Turns the nodes and references of `d`, the `file`-th file in load order, into result.config.imported
// (errors into result.errors); `parents` gets the ParentNodeIds to check once every file is converted,
// `pending` the values to encode once every definition is resolved.
void convert_nodeset(const NodeSetDocument& d, uint32_t file, LoadResult& result,
                     std::vector<std::pair<ua::NodeId, NodeLocation>>& parents,
                     std::vector<PendingValue>& pending);

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
void resolve_definitions(LoadResult& result, const DataTypeLookup& lookup);

// Gives every model of result.config.imported its NamespaceMetadata object below Server.Namespaces
// (Part 5 §6.3.13), the file's own completed or one created (nodeset_namespaces.cpp). Runs before
// resolve_definitions(), so StaticNodeIdTypes names the IdTypes of the files' nodes only.
void add_namespace_metadata(LoadResult& result, const DataTypeLookup& lookup);

// Gives every namespace whose DataTypes have definitions an OPC Binary DataTypeDictionary below
// OPC Binary (Part 5 Annex D), the file's own or one generated from the resolved DataTypeDefinitions,
// with a DataTypeDescription per structure linked from its Default Binary encoding
// (nodeset_dictionary.cpp). Runs after resolve_definitions().
void add_type_dictionaries(LoadResult& result, const DataTypeLookup& lookup);

// Reads the `pending` values again with the resolved definitions (after resolve_definitions(), while
// their documents live): each ExtensionObject of a loaded model's structure becomes its Default Binary
// body (Part 6 §5.2.7); a value that does not fit its definition is an error naming its file and line.
// What stays undecoded (no definition for its TypeId) is listed in ImportedModels::undecoded
// (nodeset_values.cpp).
void encode_structure_values(LoadResult& result, const std::vector<PendingValue>& pending);

}  // namespace opcuad::config
