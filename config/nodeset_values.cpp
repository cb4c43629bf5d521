// Values of the structures NodeSet2 files define (Part 3 §8.48), encoded once every file's
// <Definition> is resolved: an XML body (Part 6 §5.3.7) becomes the Default Binary body (Part 6 §5.2.7)
// whose TypeId is the structure's "Default Binary" encoding node, so that a value read from a file is
// the value a binary client would write.
#include <unordered_map>

#include "addressspace/namespace0.hpp"
#include "config/config.hpp"
#include "config/nodeset_document.hpp"
#include "config/type_names.hpp"
#include "config/xml_value.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

// The DataTypes of namespace 0 and of the loaded files, with the definitions resolve_definitions() set.
class ImportedDataTypes final : public XmlDataTypes {
 public:
  ImportedDataTypes(const ImportedModels& m, const ImportedIndex& index) : index_(index) {
    for (const ImportedNode& n : m.nodes) {
      if (n.spec.node_class != addressspace::NodeClass::DataType) continue;
      const ua::StructureDefinition* s =
          n.spec.definition ? n.spec.definition->get<ua::StructureDefinition>() : nullptr;
      own_.emplace(n.spec.node_id, s);
    }
  }

  XmlDataType type(const ua::NodeId& data_type) const override {
    if (ns0_store().find(data_type) != addressspace::kNoNode) return ns0_data_types().type(data_type);
    const auto own = own_.find(data_type);
    if (own == own_.end()) return {};
    // Its built-in encoding and whether it is an enumeration: those of its nearest namespace-0 supertype.
    ua::NodeId t = data_type;
    for (int depth = 0; depth < kMaxSupertypeDepth; ++depth) {
      const ua::NodeId* up = index_.supertype(t);
      if (!up) return {};
      t = *up;
      if (ns0_store().find(t) == addressspace::kNoNode) continue;
      XmlDataType r = ns0_data_types().type(t);
      r.structure = own->second;
      return r;
    }
    return {};
  }

  ua::NodeId data_type_of(const ua::NodeId& type_id) const override {
    if (ns0_store().find(type_id) != addressspace::kNoNode) return ns0_data_types().data_type_of(type_id);
    if (own_.count(type_id)) return type_id;
    const ua::NodeId* type = index_.data_type_of_encoding(type_id);
    return type ? *type : ua::NodeId();
  }

 private:
  const ImportedIndex& index_;
  std::unordered_map<ua::NodeId, const ua::StructureDefinition*> own_;  // the files' DataTypes
};

}  // namespace

void encode_structure_values(LoadResult& result, const std::vector<PendingValue>& pending,
                             const ImportedIndex& index) {
  if (pending.empty()) return;
  ImportedModels& out = result.config.imported;
  const ImportedDataTypes types(out, index);
  for (const PendingValue& p : pending) {
    ImportedSpec& spec = out.nodes[p.node].spec;
    if (!spec.value) continue;
    XmlValueReader reader(p.map, &types);
    ua::Variant v;
    if (!reader.read(p.element, v)) {
      const pugi::xml_node at = reader.error_node() ? reader.error_node() : p.element;
      result.errors.push_back(
          {out.files[p.file], "line " + std::to_string(p.doc->line(at)), "Value: " + reader.error()});
      spec.value.reset();  // one error for it: its check against the DataType would only repeat this one
      continue;
    }
    spec.value->value = std::move(v);
    if (!reader.undecoded()) continue;
    // Listed, so that nothing is kept undecoded unseen (config.hpp, UndecodedValue).
    const uint32_t line = p.doc->line(p.element);
    auto note = [&](const ua::ExtensionObject& eo) {
      if (!eo.is_decoded() && eo.encoding() == ua::ExtensionObject::Encoding::Xml)
        out.undecoded.push_back({spec.node_id, eo.type_id(), p.file, line});
    };
    if (const auto* eo = spec.value->value.get_if<ua::ExtensionObject>()) note(*eo);
    if (const auto* list = spec.value->value.get_if<std::vector<ua::ExtensionObject>>()) {
      for (const auto& eo : *list) note(eo);
    }
  }
}

}  // namespace opcuad::config
