#include "config/type_names.hpp"

#include <memory>
#include <string>
#include <unordered_map>

#include "addressspace/namespace0.hpp"

namespace opcuad::config {

namespace {
struct Ns0 {
  addressspace::ValueStore values{1};
  std::unique_ptr<addressspace::NodeStore> store;
  std::unordered_map<std::string, addressspace::NodeIndex> by_name[3];  // DataType, ObjectType, VariableType
  Ns0() {
    auto* p = values.reclaimer().register_participant();
    addressspace::NodeStoreBuilder b(values, *p);
    addressspace::add_namespace0(b);
    store = std::move(b.build().store);  // generated from the nodeset: an error here is a broken build
    for (addressspace::NodeIndex n = 0; n < store->size(); ++n) {
      const int slot = slot_of(store->node_class(n));
      if (slot >= 0) by_name[slot].emplace(std::string(store->string(store->record(n).browse_name)), n);
    }
    values.reclaimer().go_offline(*p);
  }
  static int slot_of(addressspace::NodeClass c) {
    switch (c) {
      case addressspace::NodeClass::DataType:
        return 0;
      case addressspace::NodeClass::ObjectType:
        return 1;
      case addressspace::NodeClass::VariableType:
        return 2;
      default:
        return -1;
    }
  }
};
const Ns0& ns0() {
  static const Ns0 instance;
  return instance;
}
}  // namespace

const addressspace::NodeStore& ns0_store() {
  return *ns0().store;
}

addressspace::NodeIndex find_ns0_by_name(std::string_view name, addressspace::NodeClass cls) {
  const int slot = Ns0::slot_of(cls);
  if (slot < 0) return addressspace::kNoNode;
  const auto& m = ns0().by_name[slot];
  auto it = m.find(std::string(name));
  return it == m.end() ? addressspace::kNoNode : it->second;
}

}  // namespace opcuad::config
