#pragma once
// Base64 (RFC 4648, standard alphabet with padding), for ByteString text forms (b= NodeIds, JSON config).

#include <optional>
#include <string>
#include <string_view>

namespace opcuad::ua {

std::string base64_encode(std::string_view bytes);
// Rejects characters outside the alphabet and bad padding; whitespace is not allowed.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace opcuad::ua
