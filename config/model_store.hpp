#pragma once
// Namespace 0 and the NodeSet2 files' nodes in one NodeStore, built while the configuration is checked, to
// walk their types and read their declarations' values (config/instances.cpp, config/alarms.cpp).

#include <memory>

#include "addressspace/namespace0.hpp"
#include "addressspace/node_store_builder.hpp"
#include "config/config.hpp"

namespace opcuad::config {

class ModelStore {
 public:
  explicit ModelStore(const ImportedModels& m) {
    auto* p = values_.reclaimer().register_participant();
    {
      addressspace::NodeStoreBuilder b(values_, *p);
      addressspace::add_namespace0(b);
      addressspace::NodeSpec spec;
      for (const ImportedNode& n : m.nodes) {
        n.spec.to_node_spec(spec);
        (void)b.add_node(spec);
      }
      for (const ImportedReference& r : m.references)
        b.add_reference(m.id(r.source), m.id(r.type), m.id(r.target));
      store_ = std::move(b.build().store);  // null when the files had errors, which are reported already
    }
    values_.reclaimer().go_offline(*p);
  }
  const addressspace::NodeStore* get() const noexcept { return store_.get(); }
  ua::DataValue value(addressspace::NodeIndex n) const {
    ua::DataValue dv;
    const addressspace::VariableAttributes* v = store_->variable(n);
    if (v && v->cell) addressspace::ValueStore::read(*v->cell, dv);
    return dv;
  }

 private:
  addressspace::ValueStore values_{1};
  std::unique_ptr<addressspace::NodeStore> store_;
};

}  // namespace opcuad::config
