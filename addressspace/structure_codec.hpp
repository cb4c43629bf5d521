#pragma once
// Structures of the DataTypes a NodeStore defines by a StructureDefinition (Part 3 §8.48), read and
// written in their Default Binary encoding (Part 6 §5.2.7) by a table built once when the store is
// loaded: no generated code per model. A body is transcoded: decoded field by field and written again,
// so a well-formed body comes out byte for byte and a malformed one is refused.
//
// Wire layout of one structure (Part 6 §5.2.7):
//   Structure                        field_1 ... field_n
//   StructureWithOptionalFields      UInt32 EncodingMask (bit i: i-th optional field present), then the
//                                    mandatory fields and the present optional ones, in order
//   Union                            UInt32 SwitchField (0: no field, k: field k), then field k
//   StructureWithSubtypedValues      like Structure; UnionWithSubtypedValues like Union
// A field: a nested structure in place (a concrete structure DataType), an ExtensionObject (an abstract
// structure, or one that allows subtypes), a Variant (BaseDataType and the other abstract roots), an
// Int32 (an enumeration), or its built-in type (OptionSets of integers included). A field with
// ValueRank 1 is an Int32 length and the elements; with ValueRank > 1, an Int32 array of dimensions and
// their product of elements (Part 6 §5.2.5).

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "addressspace/node_store.hpp"
#include "ua/buffer.hpp"
#include "ua/decoder.hpp"
#include "ua/encoder.hpp"
#include "ua/generated/types_enums.hpp"
#include "ua/status_code.hpp"

namespace opcuad::addressspace {

class StructureCodecs {
 public:
  // The codecs of every DataType of `s` with a StructureDefinition. Built on the load path (it
  // allocates; NodeStoreBuilder::build() makes one per store, NodeStore::structure_codecs()); reads nothing
  // of `s` afterwards. Transcoding allocates nothing for fields of numbers, enumerations, Strings,
  // ByteStrings and nested structures; a field of another built-in type (NodeId, LocalizedText, Variant,
  // ExtensionObject, ...) is decoded to be checked and may allocate.
  explicit StructureCodecs(const NodeStore& s);

  // The codec of DataType node `type`, or -1 when it has no StructureDefinition.
  int find(NodeIndex type) const noexcept;
  // The codec whose DefaultEncodingId (its "Default Binary" encoding node) is `encoding`, or -1.
  int find_encoding(NodeIndex encoding) const noexcept;
  // The DataType node of codec `codec` (REQUIRES: 0 <= codec < size()).
  NodeIndex data_type(int codec) const noexcept { return types_[static_cast<size_t>(codec)]; }
  size_t size() const noexcept { return codecs_.size(); }

  // One body of structure `codec` from `in`, written to `out`. The status of `in` afterwards: Good,
  // BadDecodingError (malformed, a SwitchField out of range, a mask with bits of no optional field) or
  // BadEncodingLimitsExceeded (nesting, array lengths: `in`'s DecodeLimits).
  ua::StatusCode transcode(int codec, ua::Decoder& in, ua::Encoder& out) const;
  // A whole ExtensionObject body: transcode(), and no byte left over (BadDecodingError).
  ua::StatusCode transcode_body(int codec, std::span<const uint8_t> body, ua::ByteBuffer& out) const;

 private:
  enum class Kind : uint8_t { Builtin, Nested, Enumeration, ExtensionObject, Variant };
  struct Field {
    Kind kind = Kind::Builtin;
    uint8_t builtin = 0;  // Kind::Builtin
    int32_t nested = -1;  // Kind::Nested: the codec
    int32_t value_rank = -1;
    bool optional = false;  // StructureWithOptionalFields only
  };
  struct Codec {
    ua::StructureTypeEnum structure_type = ua::StructureTypeEnum::Structure;
    uint32_t optional_count = 0;
    std::vector<Field> fields;
  };
  void field(const Field& f, ua::Decoder& in, ua::Encoder& out) const;
  void one(const Field& f, ua::Decoder& in, ua::Encoder& out) const;

  std::vector<Codec> codecs_;
  std::vector<NodeIndex> types_;  // [codec] -> its DataType
  std::unordered_map<NodeIndex, int32_t> by_type_;
  std::unordered_map<NodeIndex, int32_t> by_encoding_;
};

}  // namespace opcuad::addressspace
