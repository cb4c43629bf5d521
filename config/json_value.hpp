#pragma once
// JSON -> Variant for a Variable's DataType and ValueRank (initial values in node files).
//
//   Boolean true | integers 42 | Float, Double 1.5 | String "text" | DateTime "2024-05-01T12:00:00Z"
//   Guid "72962B91-FA75-4AE6-8D28-B404DC7DAF63" | ByteString "base64" | NodeId "ns=1;s=x"
//   QualifiedName "1:Name" | LocalizedText "text" or {"locale": "en", "text": "..."} | StatusCode 0
//   Range {"low": 0, "high": 100} | EUInformation {"unit_id": 4408652, "display_name": "°C", ...}
//   arrays [1, 2, 3] and matrices [[1, 2], [3, 4]] (row-major) where the ValueRank allows them.

#include <string>

#include <nlohmann/json.hpp>

#include "addressspace/node_store.hpp"
#include "ua/variant.hpp"

namespace opcuad::config {

// False with a reason when the JSON does not fit. `store` holds the DataType node.
bool json_to_variant(const nlohmann::json& j, const addressspace::NodeStore& store,
                     addressspace::NodeIndex data_type, int32_t value_rank,
                     const ua::NodeId::NamespaceResolver& resolver, ua::Variant& out, std::string& why);

// "2024-05-01T12:00:00Z" or with fractional seconds "…:00.123Z".
bool parse_date_time(std::string_view text, ua::DateTime& out);

}  // namespace opcuad::config
