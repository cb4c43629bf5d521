#pragma once
// The "alarms" of node files (docs/CONFIGURATION.md, "Alarms"): parsed with the file (parse_alarms), then
// resolved against every file's nodes and turned into condition nodes by expand_alarms() (config.hpp).

#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/json_reader.hpp"

namespace opcuad::config {

// Reads NodeId text as the node file's other NodeIds are read (its default namespace); false after
// reporting an error at `path`.
using NodeIdReader = std::function<bool(const std::string& text, const std::string& path, ua::NodeId& out)>;

// Parses the "alarms" array `list` at JSON pointer `path` into `out`. `input` is the variable that carries
// the list, or nullptr for a file's top-level list, whose entries name their input with "input".
void parse_alarms(Context& ctx, const Json& list, const std::string& path, const ua::NodeId* input,
                  const NodeIdReader& node_id, std::vector<AlarmDecl>& out);

}  // namespace opcuad::config
