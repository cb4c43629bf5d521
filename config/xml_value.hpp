#pragma once
// Values in the XML encoding of Part 6 §5.3 (the <Value> of a NodeSet2 node, Part 6 Annex F) -> Variant.
//
//   <Int32>5</Int32>                          a scalar of a built-in type, named by its type
//   <ListOfInt32><Int32>1</Int32>...</...>    a one-dimensional array (Part 6 §5.3.4)
//   <Matrix><Dimensions><Int32>2</Int32>...</Dimensions><Elements><Int32>..</Int32>...</Elements></Matrix>
//   <NodeId><Identifier>ns=1;i=5</Identifier></NodeId>, <Guid><String>...</String></Guid>,
//   <QualifiedName><NamespaceIndex>1</NamespaceIndex><Name>x</Name></QualifiedName>, ...
//   <ExtensionObject><TypeId><Identifier>i=297</Identifier></TypeId><Body><Argument>...</Argument></Body>
//
// Namespace indexes inside values (NodeIds, QualifiedNames, TypeIds) are the file's (its NamespaceUris
// table) and are mapped to the server's. An ExtensionObject of a namespace-0 structure (Argument,
// EUInformation, Range, EnumValueType, ...) is decoded field by field, by its DataTypeDefinition, into
// the generated structure, the same C++ value a binary client's write would give. An ExtensionObject of
// a structure a NodeSet2 file defines is encoded the same way, by the resolved DataTypeDefinitions the
// reader is given (XmlDataTypes), into its Default Binary body (Part 6 §5.2.2.15, encoding 1, TypeId the
// "Default Binary" encoding node). Without them (a file is read before the definitions of every file are
// resolved), or for a TypeId that is no encoding of a structure with a definition, it is kept as it was
// written: an ExtensionObject with an XmlElement body (encoding 2) whose TypeId is the server's NodeId of
// the file's encoding node and whose NodeIds and QualifiedNames inside are in the server's namespace
// indexes; XmlValueReader::undecoded() counts them, so the loader can list them (config.hpp,
// ImportedModels::undecoded).

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pugixml.hpp>

#include "ua/variant.hpp"

namespace opcuad::ua {
struct StructureDefinition;
}

namespace opcuad::config {

// A NodeSet2 file's namespace indexes (0 and its NamespaceUris, 1-based) -> the server's.
struct NamespaceMap {
  std::vector<uint16_t> server_index;  // [file index] -> server index; [0] is 0
  std::optional<uint16_t> map(uint16_t file_index) const {
    if (file_index >= server_index.size()) return std::nullopt;
    return server_index[file_index];
  }
};

// The local part of an element or attribute name ("uax:Int32" -> "Int32"): NodeSet2 files write the
// value elements with or without a prefix for the Types namespace. Inline, one pass over the name: it is
// asked for every element of a file (a million-node model has some 15 million).
inline std::string_view local_name(const char* name) noexcept {
  const char* local = name;
  const char* p = name;
  for (; *p; ++p) {
    if (*p == ':' && local == name) local = p + 1;
  }
  return std::string_view(local, static_cast<size_t>(p - local));
}
// Whether `s` is the literal `lit`: a length test, then a comparison of a known length, which the
// compiler does inline.
template <size_t N>
bool name_is(std::string_view s, const char (&lit)[N]) noexcept {
  return s.size() == N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}
// The first child element of `n` with this local name, or a null node.
pugi::xml_node xml_child(pugi::xml_node n, std::string_view local);
// The first child element of `n`, or a null node.
pugi::xml_node xml_first_element(pugi::xml_node n);
// `s` without the XML white space (space, tab, CR, LF) around it. Inline, a test per character: it is
// asked for every NodeId, number and Boolean of a file.
inline std::string_view xml_trim(std::string_view s) noexcept {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  size_t first = 0, last = s.size();
  while (first < last && space(s[first])) ++first;
  if (first == last) return {};
  while (space(s[last - 1])) --last;
  return s.substr(first, last - first);
}

// What an XML structure body is encoded by (Part 6 §5.3.7 into §5.2.7): a DataType's built-in encoding
// and StructureDefinition, namespace 0's (ns0_data_types()) or those and the loaded models'.
struct XmlDataType {
  bool known = false;
  uint8_t builtin = 0;       // the built-in type its values encode as; 0 for the abstract roots (a Variant)
  bool enumeration = false;  // an Int32 (Part 6 §5.2.4)
  // Its StructureDefinition; a structure with a DefaultEncodingId is encoded in place as a field.
  const ua::StructureDefinition* structure = nullptr;
};
class XmlDataTypes {
 public:
  virtual ~XmlDataTypes() = default;
  virtual XmlDataType type(const ua::NodeId& data_type) const = 0;
  // The DataType `type_id` (an ExtensionObject's TypeId: an encoding node or the DataType) is of; null
  // when it is none.
  virtual ua::NodeId data_type_of(const ua::NodeId& type_id) const = 0;
};
const XmlDataTypes& ns0_data_types();

class XmlValueReader {
 public:
  // `types`: the DataTypes of the loaded models too, once resolved (see above); nullptr: namespace 0 only.
  explicit XmlValueReader(const NamespaceMap& ns, const XmlDataTypes* types = nullptr)
      : ns_(ns), types_(types) {}

  // Reads the typed element `element` (the first element child of <Value>). False with error() and
  // error_node() set when it is malformed or does not fit its type.
  bool read(pugi::xml_node element, ua::Variant& out);

  // NodeId text of the file ("ns=1;i=5", "i=85"), its namespace mapped. False (with error()) otherwise.
  bool node_id(std::string_view text, ua::NodeId& out);

  const std::string& error() const noexcept { return why_; }
  pugi::xml_node error_node() const noexcept { return where_; }
  // ExtensionObjects kept undecoded by the last read() (see above).
  size_t undecoded() const noexcept { return undecoded_; }

 private:
  friend struct XmlValueAccess;
  bool fail(pugi::xml_node where, std::string why);
  bool scalar(pugi::xml_node n, ua::BuiltinType t, ua::Variant& out);
  bool array(pugi::xml_node list, ua::BuiltinType t, ua::Variant& out);
  bool matrix(pugi::xml_node m, ua::Variant& out);
  // The element as text, with the declaration of its XML namespace; with `remap`, the NodeIds and
  // QualifiedNames inside it in the server's namespace indexes.
  bool serialize(pugi::xml_node element, bool remap, std::string& out);
  bool remap_namespaces(pugi::xml_node element);

 public:
  // Per type: the element's content (n may be null: the type's default). Public for the table that
  // dispatches on the built-in type; not an interface of its own.
  bool parse(pugi::xml_node n, bool& v);
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) bool parse(pugi::xml_node n, T& v);
  bool parse(pugi::xml_node n, float& v);
  bool parse(pugi::xml_node n, double& v);
  bool parse(pugi::xml_node n, ua::String& v);
  bool parse(pugi::xml_node n, ua::DateTime& v);
  bool parse(pugi::xml_node n, ua::Guid& v);
  bool parse(pugi::xml_node n, ua::ByteString& v);
  bool parse(pugi::xml_node n, ua::XmlElement& v);
  bool parse(pugi::xml_node n, ua::NodeId& v);
  bool parse(pugi::xml_node n, ua::ExpandedNodeId& v);
  bool parse(pugi::xml_node n, ua::StatusCode& v);
  bool parse(pugi::xml_node n, ua::QualifiedName& v);
  bool parse(pugi::xml_node n, ua::LocalizedText& v);
  bool parse(pugi::xml_node n, ua::ExtensionObject& v);
  bool parse(pugi::xml_node n, ua::DataValue& v);
  bool parse(pugi::xml_node n, ua::Variant& v);
  bool parse(pugi::xml_node n, ua::DiagnosticInfo& v);

 private:
  const NamespaceMap& ns_;
  const XmlDataTypes* types_ = nullptr;
  std::string why_;
  pugi::xml_node where_;
  size_t undecoded_ = 0;
  int depth_ = 0;  // nesting of Variants and ExtensionObjects, bounded as a decoder's (Part 6 §5.2.2.16)
};

}  // namespace opcuad::config
