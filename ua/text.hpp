#pragma once
// QualifiedName (Part 6 §5.2.2.13) and LocalizedText (Part 6 §5.2.2.14).

#include <cstdint>

#include "ua/bytes.hpp"

namespace opcuad::ua {

struct QualifiedName {
  uint16_t namespace_index = 0;
  String name;

  // Part 3 §8.3: the text form "ns:name" (ns omitted when 0).
  std::string to_string() const;
  bool is_null() const noexcept { return namespace_index == 0 && name.empty(); }
  friend bool operator==(const QualifiedName&, const QualifiedName&) = default;
};

// The binary encoding mask marks locale and text present only when they are not null, so an empty but
// present field survives a round trip.
struct LocalizedText {
  String locale;
  String text;

  friend bool operator==(const LocalizedText&, const LocalizedText&) = default;
};

}  // namespace opcuad::ua
