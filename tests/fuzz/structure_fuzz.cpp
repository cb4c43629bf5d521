// libFuzzer target for the structure codec (addressspace/structure_codec.hpp; Part 6 §5.2.7): the
// Default Binary bodies of the structures a NodeSet2 model defines, transcoded by the codecs built from
// their resolved StructureDefinitions, as a Write's value is (addressspace/type_check.hpp).
//
// Input: one selector byte choosing the structure (structure_fuzz_types.hpp, kFuzzStructures), then the
// body. Beyond "no crash, no leak, no UB", and every failure being BadDecodingError or
// BadEncodingLimitsExceeded, it checks that a body that transcodes comes out as one that transcodes again to
// itself (the transcoder is idempotent after one canonicalising pass).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "addressspace/address_space.hpp"
#include "addressspace/structure_codec.hpp"
#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "tests/fuzz/structure_fuzz_types.hpp"

namespace {

using namespace opcuad;

const ua::DecodeLimits& fuzz_limits() {
  static const ua::DecodeLimits limits{.max_string_length = 1u << 16,
                                       .max_byte_string_length = 1u << 16,
                                       .max_array_length = 1u << 14,
                                       .max_depth = 100};
  return limits;
}

// The model loaded once, as the daemon loads a NodeSet2 file; the codecs of its structures in selector order.
struct Model {
  Model() {
    config::LoadResult r = config::load_config_text("{}", "server.json", ".");
    config::load_nodeset_file_text(fuzz::kStructureFuzzTypes, "structure_fuzz_types.xml", r);
    config::resolve_nodesets(r);
    if (!r.ok()) std::abort();
    participant = space.reclaimer().register_participant();
    if (!config::build_address_space(r.config, space, *participant).empty()) std::abort();
    space.reclaimer().go_offline(*participant);
    const addressspace::NodeStore& store = *space.current();
    uint16_t ns = 0;
    for (size_t i = 0; i < r.config.namespaces.size(); ++i) {
      if (r.config.namespaces[i] == fuzz::kStructureFuzzNamespace) ns = static_cast<uint16_t>(i);
    }
    codecs = store.structure_codecs();
    if (!codecs) std::abort();
    for (uint32_t id : fuzz::kFuzzStructures) {
      const int c = codecs->find(store.find(ua::NodeId(ns, id)));
      if (c < 0) std::abort();
      selected.push_back(c);
    }
  }
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* participant = nullptr;
  const addressspace::StructureCodecs* codecs = nullptr;
  std::vector<int> selected;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Model model;
  if (size < 1) return 0;
  const int codec = model.selected[data[0] % model.selected.size()];
  std::span<const uint8_t> body(data + 1, size - 1);
  ua::ByteBuffer first;
  ua::Decoder in(body, fuzz_limits());
  ua::Encoder out(first);
  ua::StatusCode st = model.codecs->transcode(codec, in, out);
  if (st.is_good() && in.remaining() != 0) return 0;  // bytes left over: a Write refuses the body
  if (!st.is_good()) {
    if (st != ua::status::BadDecodingError && st != ua::status::BadEncodingLimitsExceeded) std::abort();
    return 0;
  }
  ua::ByteBuffer second;
  if (!model.codecs->transcode_body(codec, first.span(), second).is_good()) std::abort();
  if (first.size() != second.size() || std::memcmp(first.data(), second.data(), first.size()) != 0)
    std::abort();
  return 0;
}
