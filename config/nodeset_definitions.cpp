// The DataTypeDefinition attribute (Part 3 §5.8.3) of every DataType a NodeSet2 file defines, from its
// <Definition> (Part 6 Annex F), once every file is read: a field may name a DataType defined further
// down the same file or in a later one. Also the "Default Binary" encoding node of a concrete structure
// whose file has none (Part 3 §5.8.4, Part 6 §5.2.7).
#include <unordered_map>

#include "addressspace/namespace0.hpp"
#include "config/config.hpp"
#include "config/nodeset_document.hpp"
#include "config/type_names.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {

class DefinitionResolver {
 public:
  DefinitionResolver(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index)
      : result_(result), out_(result.config.imported), lookup_(lookup), index_(index) {
    for (size_t i = 0; i < out_.definitions.size(); ++i)
      definition_.emplace(out_.definitions[i].data_type, i);
    state_.assign(out_.definitions.size(), State::Todo);
    resolved_.resize(out_.definitions.size());
  }

  void run() {
    for (size_t i = 0; i < out_.definitions.size(); ++i) resolve(i, 0);
    for (size_t i = 0; i < out_.definitions.size(); ++i) {
      if (state_[i] != State::Done || resolved_[i].is_empty()) continue;
      const uint32_t node = index_.find(out_.definitions[i].data_type);
      if (node != ImportedIndex::kNone) out_.nodes[node].spec.definition = std::move(resolved_[i]);
    }
    for (ImportedNode& n : created_nodes_) index_.add_node(std::move(n));
    for (const CreatedReference& r : created_references_) index_.add_reference(r);
  }

 private:
  enum class State : uint8_t { Todo, Resolving, Done, Failed };

  void error(const ImportedDefinition& d, uint32_t line, std::string reason) {
    result_.errors.push_back(
        {out_.files[d.file], "line " + std::to_string(line),
         "the Definition of DataType " + d.data_type.to_string() + ": " + std::move(reason)});
  }

  // Is `type` `base` or one of its subtypes, across the loaded files and namespace 0?
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

  // The fields of `base` a subtype inherits (Part 3 §8.48: a StructureDefinition lists every field,
  // the supertypes' first); false when the base's own definition could not be resolved.
  bool inherited_fields(const ua::NodeId& base, int depth, std::vector<ua::StructureField>& out) {
    if (const auto it = definition_.find(base); it != definition_.end()) {
      if (!resolve(it->second, depth + 1)) return false;
      if (const auto* s = resolved_[it->second].get<ua::StructureDefinition>()) out = s->fields;
      return true;
    }
    const addressspace::NodeIndex n = ns0_store().find(base);
    if (n != addressspace::kNoNode) {
      const ua::ExtensionObject* def = ns0_store().data_type_definition(n);
      if (const auto* s = def ? def->get<ua::StructureDefinition>() : nullptr) out = s->fields;
    }
    return true;  // an abstract structure of a file without a <Definition> has no fields
  }

  // The resolved StructureDefinition of `base` (a file's or namespace 0's), or nullptr.
  const ua::StructureDefinition* base_definition(const ua::NodeId& base) const {
    if (const auto it = definition_.find(base); it != definition_.end())
      return resolved_[it->second].get<ua::StructureDefinition>();
    const addressspace::NodeIndex n = ns0_store().find(base);
    const ua::ExtensionObject* def =
        n == addressspace::kNoNode ? nullptr : ns0_store().data_type_definition(n);
    return def ? def->get<ua::StructureDefinition>() : nullptr;
  }

  // The encoding node of `type` named "Default Binary" (Part 6 §5.2.7: never simply the first
  // HasEncoding target, XML and JSON encodings are HasEncoding targets too); one created when the file
  // has none (docs/CONFIGURATION.md "NodeSet2 node files": NodeId `<type's identifier>.DefaultBinary`).
  ua::NodeId default_binary(const ImportedDefinition& d, bool is_abstract) {
    const ua::QualifiedName name{0, ua::String("Default Binary")};
    if (const std::vector<ua::NodeId>* encodings = index_.encodings(d.data_type)) {
      for (const ua::NodeId& e : *encodings) {
        const ImportedSpec* n = index_.spec(e);
        if (n && n->browse_name == name) return e;
      }
    }
    if (is_abstract) return {};
    const std::string text = d.data_type.to_string();
    const auto semicolon = text.find(';');
    const ua::NodeId id(
        d.data_type.namespace_index(),
        ua::String((semicolon == std::string::npos ? text : text.substr(semicolon + 1)) + ".DefaultBinary"));
    if (lookup_.node_class(id) != addressspace::NodeClass::Unspecified ||
        index_.find(id) != ImportedIndex::kNone) {
      error(d, d.line, "its Default Binary encoding is missing, and " + id.to_string() + " is taken");
      return {};
    }
    ImportedNode n;
    n.file = d.file;
    n.line = d.line;
    n.spec.node_id = id;
    n.spec.node_class = addressspace::NodeClass::Object;
    n.spec.browse_name = name;
    n.spec.display_name = ua::LocalizedText{ua::String(), ua::String("Default Binary")};
    created_nodes_.push_back(std::move(n));
    created_references_.push_back({d.data_type, ua::NodeId(0, ua::id::HasEncoding), id, d.file, d.line});
    created_references_.push_back({id, ua::NodeId(0, ua::id::HasTypeDefinition),
                                   ua::NodeId(0, ua::id::DataTypeEncodingType), d.file, d.line});
    return id;
  }

  // Is every field's DataType a DataType? Errors name the field's line.
  bool check_fields(const ImportedDefinition& d) {
    bool ok = true;
    for (const ImportedDefinition::Field& f : d.fields) {
      const ua::NodeId& t = f.field.data_type;
      const addressspace::NodeClass c = lookup_.node_class(t);
      if (c == addressspace::NodeClass::DataType || lookup_.excused(t)) continue;
      error(d, f.line,
            "field \"" + std::string(f.field.name.view()) + "\": " + t.to_string() +
                (c == addressspace::NodeClass::Unspecified ? " exists nowhere" : " is not a DataType"));
      ok = false;
    }
    return ok;
  }

  bool resolve(size_t i, int depth) {
    const ImportedDefinition& d = out_.definitions[i];
    switch (state_[i]) {
      case State::Done:
        return true;
      case State::Failed:
        return false;
      case State::Resolving:
        error(d, d.line, "its supertypes form a cycle");
        state_[i] = State::Failed;
        return false;
      case State::Todo:
        break;
    }
    if (depth > kMaxSupertypeDepth) {
      error(d, d.line, "its supertypes are nested more than " + std::to_string(kMaxSupertypeDepth) + " deep");
      state_[i] = State::Failed;
      return false;
    }
    state_[i] = State::Resolving;
    const bool ok = build(i, depth);
    state_[i] = ok ? State::Done : State::Failed;
    return ok;
  }

  bool build(size_t i, int depth) {
    const ImportedDefinition& d = out_.definitions[i];
    if (!check_fields(d)) return false;
    const bool is_enum = is_subtype(d.data_type, ua::NodeId(0, ua::id::Enumeration));
    if (d.is_option_set || is_enum) {
      // Part 3 §5.8.3: an enumeration's EnumDefinition; an OptionSet's lists its bits, Value the bit number.
      ua::EnumDefinition e;
      int64_t position = 0;
      for (const ImportedDefinition::Field& f : d.fields) {
        ua::EnumField ef;
        ef.value = f.has_value ? f.value : position;
        ef.name = f.field.name;
        ef.display_name = f.display_name;
        ef.description = f.field.description;
        e.fields.push_back(std::move(ef));
        ++position;
      }
      resolved_[i] = ua::ExtensionObject::make(std::move(e));
      return true;
    }
    if (!is_subtype(d.data_type, ua::NodeId(0, ua::id::Structure))) {
      if (d.fields.empty()) return true;  // nothing to define: no DataTypeDefinition (Part 3 §5.8.3)
      error(d, d.line, "a DataType with fields that is no Structure, Enumeration or OptionSet");
      return false;
    }
    ua::StructureDefinition s;
    s.base_data_type = *index_.supertype(d.data_type);  // is_subtype() found a supertype
    if (!inherited_fields(s.base_data_type, depth, s.fields)) {
      error(d, d.line, "its supertype " + s.base_data_type.to_string() + " has no resolvable Definition");
      return false;
    }
    // Part 3 §8.49, §8.51: in the subtyped kinds IsOptional says that a field allows subtypes, so a
    // structure cannot have both optional fields and fields that allow subtypes; what a subtype inherits
    // keeps the meaning its supertype gave it.
    bool optional = false, subtyped = false;
    if (const auto* b = base_definition(s.base_data_type)) {
      optional = b->structure_type == ua::StructureTypeEnum::StructureWithOptionalFields;
      subtyped = b->structure_type == ua::StructureTypeEnum::StructureWithSubtypedValues ||
                 b->structure_type == ua::StructureTypeEnum::UnionWithSubtypedValues;
    }
    for (const ImportedDefinition::Field& f : d.fields) {
      optional |= f.field.is_optional && !d.is_union;
      subtyped |= f.allow_subtypes;
    }
    if (optional && subtyped) {
      error(d, d.line,
            "optional fields and fields that allow subtypes together have no StructureType (Part 3 §8.49)");
      return false;
    }
    for (const ImportedDefinition::Field& f : d.fields) {
      ua::StructureField sf = f.field;
      // A union's switch, not a mask, says which field is there (Part 6 §5.2.7).
      sf.is_optional = subtyped ? f.allow_subtypes : sf.is_optional && !d.is_union;
      s.fields.push_back(std::move(sf));
    }
    // Part 3 §8.49 StructureType; Part 6 §5.2.7 encodes a field that allows subtypes as an
    // ExtensionObject (a Structure) or a Variant (any other DataType).
    if (d.is_union) {
      s.structure_type =
          subtyped ? ua::StructureTypeEnum::UnionWithSubtypedValues : ua::StructureTypeEnum::Union;
    } else if (subtyped) {
      s.structure_type = ua::StructureTypeEnum::StructureWithSubtypedValues;
    } else {
      s.structure_type =
          optional ? ua::StructureTypeEnum::StructureWithOptionalFields : ua::StructureTypeEnum::Structure;
    }
    const ImportedSpec* node = index_.spec(d.data_type);
    const bool is_abstract = node && node->is_abstract;
    s.default_encoding_id = default_binary(d, is_abstract);
    resolved_[i] = ua::ExtensionObject::make(std::move(s));
    return true;
  }

  LoadResult& result_;
  ImportedModels& out_;
  const DataTypeLookup& lookup_;
  ImportedIndex& index_;
  std::unordered_map<ua::NodeId, size_t> definition_;  // index into out_.definitions
  std::vector<State> state_;
  std::vector<ua::ExtensionObject> resolved_;
  std::vector<ImportedNode> created_nodes_;
  std::vector<CreatedReference> created_references_;
};

}  // namespace

void resolve_definitions(LoadResult& result, const DataTypeLookup& lookup, ImportedIndex& index) {
  DefinitionResolver(result, lookup, index).run();
}

}  // namespace opcuad::config
