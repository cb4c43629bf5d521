// Value semantics of Variant and ExtensionObject: copy, compare, sizes.
#include "ua/variant.hpp"

namespace opcuad::ua {

size_t Variant::array_length() const noexcept {
  if (!is_array()) return 0;
  return std::visit(
      [](const auto& x) -> size_t {
        if constexpr (requires { x.size(); }) {
          return x.size();
        } else {
          return 0;
        }
      },
      storage_);
}

bool operator==(const Variant& a, const Variant& b) {
  return a.storage_ == b.storage_ && a.dims_ == b.dims_;
}

ExtensionObject::ExtensionObject(const ExtensionObject& o)
    : type_id_(o.type_id_), encoding_(o.encoding_), body_(o.body_), type_(o.type_) {
  if (type_) data_ = type_->clone(o.data_);
}

bool operator==(const ExtensionObject& a, const ExtensionObject& b) {
  if (a.type_ != b.type_ || a.encoding_ != b.encoding_ || !(a.type_id_ == b.type_id_)) return false;
  if (a.type_) return a.type_->equal(a.data_, b.data_);
  return a.body_ == b.body_;
}

std::string QualifiedName::to_string() const {
  if (namespace_index == 0) return std::string(name.view());
  return std::to_string(namespace_index) + ":" + std::string(name.view());
}

}  // namespace opcuad::ua
