#pragma once
// ExtensionObject (Part 6 §5.2.2.15): a structure carried with the NodeId of its encoding.
//
//   +-------------------+----------+---------------------------+
//   | TypeId (NodeId)   | Encoding | Body                      |
//   |                   | Byte     | 0: none                   |
//   |                   |          | 1: ByteString (binary)    |
//   |                   |          | 2: XmlElement             |
//   +-------------------+----------+---------------------------+
//
// The decoder turns a binary body whose TypeId is a known ns=0 encoding into the generated C++
// structure (decoded()); anything else stays an undecoded body that re-encodes byte for byte.

#include <cstdint>
#include <utility>

#include "ua/bytes.hpp"
#include "ua/node_id.hpp"
#include "ua/structure_type.hpp"

namespace opcuad::ua {

class ExtensionObject {
 public:
  enum class Encoding : uint8_t { None = 0, ByteString = 1, Xml = 2 };

  ExtensionObject() = default;
  ExtensionObject(const ExtensionObject& o);
  // Moves take the members (a swap through a by-value parameter cost two three-way swaps of a NodeId and a
  // ByteString per assignment, measured on the Read path).
  ExtensionObject(ExtensionObject&& o) noexcept
      : type_id_(std::move(o.type_id_)),
        encoding_(o.encoding_),
        body_(std::move(o.body_)),
        type_(o.type_),
        data_(o.data_) {
    o.release();
  }
  ExtensionObject& operator=(ExtensionObject&& o) noexcept {
    if (this != &o) {
      if (type_) type_->destroy(data_);
      type_id_ = std::move(o.type_id_);
      encoding_ = o.encoding_;
      body_ = std::move(o.body_);
      type_ = o.type_;
      data_ = o.data_;
      o.release();
    }
    return *this;
  }
  // An undecoded body copied over an undecoded body reuses this object's buffers: a Read copies each
  // structured value out of its cell into the response it reuses, with no allocation once the buffers
  // are as large as the values (docs/ARCHITECTURE.md, "no heap allocation in steady state").
  ExtensionObject& operator=(const ExtensionObject& o) {
    if (this == &o) return *this;
    if (type_ == nullptr && o.type_ == nullptr) {
      type_id_ = o.type_id_;
      encoding_ = o.encoding_;
      body_ = o.body_;
    } else {
      *this = ExtensionObject(o);
    }
    return *this;
  }
  ~ExtensionObject() { reset(); }

  // A decoded structure of generated type T (T::type() names its descriptor).
  template <class T>
  static ExtensionObject make(T value) {
    ExtensionObject e;
    e.type_ = &T::type();
    e.data_ = new T(std::move(value));
    e.type_id_ = NodeId(0, T::binary_encoding_id);
    e.encoding_ = Encoding::ByteString;
    return e;
  }
  // An undecoded body, kept as bytes.
  static ExtensionObject undecoded(NodeId type_id, Encoding encoding, ByteString body) {
    ExtensionObject e;
    e.type_id_ = std::move(type_id);
    e.encoding_ = encoding;
    e.body_ = std::move(body);
    return e;
  }

  const NodeId& type_id() const noexcept { return type_id_; }
  Encoding encoding() const noexcept { return encoding_; }
  bool is_empty() const noexcept { return encoding_ == Encoding::None; }
  bool is_decoded() const noexcept { return type_ != nullptr; }
  const StructureType* structure_type() const noexcept { return type_; }
  const ByteString& body() const noexcept { return body_; }  // REQUIRES: !is_decoded()
  const void* decoded_data() const noexcept { return data_; }

  // The decoded structure if it is a T, else nullptr.
  template <class T>
  const T* get() const noexcept {
    return type_ == &T::type() ? static_cast<const T*>(data_) : nullptr;
  }
  template <class T>
  T* get_mut() noexcept {
    return type_ == &T::type() ? static_cast<T*>(data_) : nullptr;
  }

  // Decoder access: takes ownership of an object created by type->create().
  void adopt_decoded(NodeId type_id, const StructureType* type, void* data) noexcept {
    reset();
    type_id_ = std::move(type_id);
    encoding_ = Encoding::ByteString;
    type_ = type;
    data_ = data;
  }

  void reset() noexcept {
    if (type_) type_->destroy(data_);
    type_ = nullptr;
    data_ = nullptr;
    body_.set_null();
    encoding_ = Encoding::None;
    type_id_ = NodeId();
  }
  void swap(ExtensionObject& o) noexcept {
    std::swap(type_id_, o.type_id_);
    std::swap(encoding_, o.encoding_);
    std::swap(body_, o.body_);
    std::swap(type_, o.type_);
    std::swap(data_, o.data_);
  }

  friend bool operator==(const ExtensionObject& a, const ExtensionObject& b);

 private:
  // Forgets the members without destroying the decoded object, whose ownership went elsewhere: the state
  // a moved-from object is left in.
  void release() noexcept {
    type_ = nullptr;
    data_ = nullptr;
    encoding_ = Encoding::None;
    type_id_ = NodeId();
    body_.set_null();
  }

  NodeId type_id_;
  Encoding encoding_ = Encoding::None;
  ByteString body_;                      // undecoded body
  const StructureType* type_ = nullptr;  // set when decoded
  void* data_ = nullptr;                 // owned; a T created by type_->create()
};

}  // namespace opcuad::ua
