// NodeStore's views into its string pool: the same values as the owning accessors, and the same bytes
// when encoded, for every node of namespace 0.
#include <catch2/catch.hpp>

#include "addressspace/namespace0.hpp"
#include "ua/codec.hpp"

using namespace opcuad;
using namespace opcuad::addressspace;

namespace {

template <class T>
std::string encoded(const T& v) {
  ua::ByteBuffer buf;
  ua::Encoder e(buf);
  encode(e, v);
  return {reinterpret_cast<const char*>(buf.data()), buf.size()};
}

}  // namespace

TEST_CASE("addressspace: name and text views encode like the owning values", "[addressspace][node_store]") {
  ValueStore values;
  EpochReclaimer::Participant* p = values.reclaimer().register_participant();
  NodeStoreBuilder b(values, *p);
  add_namespace0(b);
  auto built = b.build();
  REQUIRE(built.errors.empty());
  const NodeStore& s = *built.store;
  for (NodeIndex n = 0; n < s.size(); ++n) {
    const ua::QualifiedName name = s.browse_name(n);
    const QualifiedNameView name_view = s.browse_name_view(n);
    CHECK(name_view.namespace_index == name.namespace_index);
    CHECK(name_view.name.null == name.name.is_null());
    CHECK(name_view.name.text == name.name.view());
    CHECK(encoded(name_view) == encoded(name));
    const ua::LocalizedText display = s.display_name(n);
    CHECK(encoded(s.display_name_view(n)) == encoded(display));
    const LocalizedTextView description = s.text_view(s.record(n).description);
    CHECK(encoded(description) == encoded(s.description(n)));
  }
  // Null and empty stay apart.
  CHECK(encoded(QualifiedNameView{}) == encoded(ua::QualifiedName{}));
  CHECK(encoded(QualifiedNameView{3, {"", false}}) == encoded(ua::QualifiedName{3, ua::String("")}));
  CHECK(encoded(LocalizedTextView{{}, {"", false}}) == encoded(ua::LocalizedText{{}, ua::String("")}));
  // Every combination of the LocalizedText mask (namespace 0 has no locales).
  CHECK(encoded(LocalizedTextView{{"en", false}, {"Text", false}}) ==
        encoded(ua::LocalizedText{ua::String("en"), ua::String("Text")}));
  CHECK(encoded(LocalizedTextView{{"en", false}, {}}) == encoded(ua::LocalizedText{ua::String("en"), {}}));
  CHECK(encoded(LocalizedTextView{}) == encoded(ua::LocalizedText{}));
}
