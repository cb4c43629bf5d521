// structure_fuzz seeds.
#include "tests/fuzz/seed_corpus.hpp"

namespace opcuad::fuzz::seeds {

// Bodies of the structures of structure_fuzz_types.hpp, each after its selector byte (the index into
// kFuzzStructures): every field kind with a value, so that mutation starts inside each.
void write_structure_seeds(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  int count = 0;
  auto add = [&](uint8_t selector, auto&& fill) {
    ByteBuffer b;
    b.append(&selector, 1);
    Encoder e(b);
    fill(e);
    std::ofstream(dir / ("seed-" + std::to_string(count++)), std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  auto parameter_result = [](Encoder& e) {
    e.write_i32(2);  // NodePath
    encode(e, QualifiedName{1, String("Device")});
    encode(e, QualifiedName{0, String("Value")});
    e.write_u32(0x80340000u);
    DiagnosticInfo d;
    d.symbolic_id = 3;
    d.additional_info = String("detail");
    encode(e, d);
  };
  auto processing_times = [](Encoder& e, uint32_t mask) {
    e.write_u32(mask);
    encode(e, DateTime{133000000000000000});
    encode(e, DateTime{133000000010000000});
    if (mask & 1) e.write_f64(12.5);
    if (mask & 2) e.write_f64(3.0);
  };
  auto result_meta = [&](Encoder& e) {
    e.write_u32(0xFF);  // every optional field
    encode(e, String("result-1"));
    e.write_u8(1);
    e.write_i32(2);
    encode(e, DateTime{133000000000000000});
    processing_times(e, 3);
    e.write_i32(2);
    encode(e, String("urn:a"));
    encode(e, String("urn:b"));
    e.write_i32(1);
    e.write_u64(42);
    encode(e, LocalizedText{String("en"), String("fine")});
  };
  add(0, parameter_result);
  add(1, [&](Encoder& e) {
    e.write_i32(7);
    e.write_u8(1);
    e.write_i32(2);
    parameter_result(e);
    parameter_result(e);
  });
  add(2, [&](Encoder& e) { processing_times(e, 1); });
  add(3, result_meta);
  add(3, [](Encoder& e) {
    e.write_u32(0);
    encode(e, String("minimal"));
  });
  add(4, [&](Encoder& e) {
    ByteBuffer meta;
    Encoder me(meta);
    result_meta(me);
    // TypeId: a NodeId the fuzz target's model gives no codec, so the body stays bytes.
    encode(e, ExtensionObject::undecoded(NodeId(1, 5004), ExtensionObject::Encoding::ByteString,
                                         ByteString::from_bytes(meta.span())));
    e.write_i32(3);
    encode(e, Variant(1.5));
    encode(e, Variant(String("ok")));
    encode(e, Variant(std::vector<int32_t>{1, 2, 3}));
  });
  for (uint32_t which : {0u, 1u, 2u, 3u, 4u}) {
    add(5, [&](Encoder& e) {
      e.write_u32(which);
      if (which == 1) e.write_i32(-5);
      if (which == 2) encode(e, String("text"));
      if (which == 3) encode(e, NodeId(1, String("node")));
      if (which == 4) processing_times(e, 2);
    });
  }
  add(6, [&](Encoder& e) {
    e.write_i32(2);  // Pixels: 2 x 2
    e.write_i32(2);
    e.write_i32(2);
    for (double d : {1.0, 2.0, 3.0, 4.0}) e.write_f64(d);
    encode(e, ByteString("raw"));
    e.write_i32(1);
    e.write_u32(1);
    e.write_i32(9);
  });
  add(6, [](Encoder& e) {
    e.write_i32(-1);  // a null matrix
    encode(e, ByteString());
    e.write_i32(-1);
  });
  add(7, [](Encoder& e) {
    encode(e, String("root"));
    e.write_i32(2);
    encode(e, String("a"));
    e.write_i32(1);
    encode(e, String("a.1"));
    e.write_i32(-1);
    encode(e, String("b"));
    e.write_i32(0);
  });
  std::printf("wrote %d structure seeds\n", count);
}

}  // namespace opcuad::fuzz::seeds
