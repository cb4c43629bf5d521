// The configuration opcuad uses without --config: one anonymous, unsecured endpoint on port 4840 and a
// demo namespace with simulated and writable variables of every built-in type, which anonymous sessions may
// write (security.anonymous_write, logged at start as every such grant is). It is JSON run through the
// same loader as user files, so it is validated like them.
#include <cstdio>
#include <cstdlib>

#include "config/config.hpp"
#include "config/pki_settings.hpp"

namespace opcuad::config {

namespace {
constexpr const char* kServer = R"json({
  "application_uri": "urn:opcuad:server",
  "application_name": "opcuad",
  "endpoints": [{"url": "opc.tcp://0.0.0.0:4840", "security_policies": ["None"], "security_modes": ["None"]}],
  "security": {"allow_anonymous": true, "anonymous_write": true},
  "namespaces": ["urn:opcuad:demo"]
})json";

constexpr const char* kDemoNodes = R"json({
  "namespaces": ["urn:opcuad:demo"],
  "nodes": [{
    "kind": "folder", "name": "Demo",
    "children": [
      {"kind": "folder", "name": "Simulation", "children": [
        {"kind": "variable", "name": "Sine", "data_type": "Double", "value": 0.0,
         "simulation": {"kind": "sine", "period_ms": 10000, "interval_ms": 100, "min": -1, "max": 1}},
        {"kind": "variable", "name": "Ramp", "data_type": "Double", "value": 0.0,
         "simulation": {"kind": "ramp", "period_ms": 60000, "interval_ms": 1000, "min": 0, "max": 100}},
        {"kind": "variable", "name": "Counter", "data_type": "UInt32", "value": 0,
         "simulation": {"kind": "counter", "interval_ms": 1000, "min": 0, "max": 1000000, "step": 1}},
        {"kind": "variable", "name": "Square", "data_type": "Int32", "value": 0,
         "simulation": {"kind": "square", "period_ms": 2000, "interval_ms": 500, "min": 0, "max": 1}},
        {"kind": "variable", "name": "Random", "data_type": "Float", "value": 0.0,
         "simulation": {"kind": "random", "interval_ms": 1000, "min": 0, "max": 10}},
        {"kind": "variable", "name": "Temperature", "data_type": "Double", "value": 20.0,
         "engineering_units": {"unit_id": 4408652, "display_name": "°C", "description": "degree Celsius"},
         "eu_range": {"low": -40, "high": 125},
         "simulation": {"kind": "sine", "period_ms": 30000, "interval_ms": 1000, "min": 15, "max": 25}}
      ]},
      {"kind": "folder", "name": "Static", "children": [
        {"kind": "variable", "name": "Boolean", "data_type": "Boolean", "value": true, "access": ["read", "write"]},
        {"kind": "variable", "name": "SByte", "data_type": "SByte", "value": -8, "access": ["read", "write"]},
        {"kind": "variable", "name": "Byte", "data_type": "Byte", "value": 8, "access": ["read", "write"]},
        {"kind": "variable", "name": "Int16", "data_type": "Int16", "value": -16, "access": ["read", "write"]},
        {"kind": "variable", "name": "UInt16", "data_type": "UInt16", "value": 16, "access": ["read", "write"]},
        {"kind": "variable", "name": "Int32", "data_type": "Int32", "value": -32, "access": ["read", "write"]},
        {"kind": "variable", "name": "UInt32", "data_type": "UInt32", "value": 32, "access": ["read", "write"]},
        {"kind": "variable", "name": "Int64", "data_type": "Int64", "value": -64, "access": ["read", "write"]},
        {"kind": "variable", "name": "UInt64", "data_type": "UInt64", "value": 64, "access": ["read", "write"]},
        {"kind": "variable", "name": "Float", "data_type": "Float", "value": 3.5, "access": ["read", "write"]},
        {"kind": "variable", "name": "Double", "data_type": "Double", "value": 2.25, "access": ["read", "write"]},
        {"kind": "variable", "name": "String", "data_type": "String", "value": "hello", "access": ["read", "write"]},
        {"kind": "variable", "name": "DateTime", "data_type": "DateTime", "value": "2024-01-01T00:00:00Z", "access": ["read", "write"]},
        {"kind": "variable", "name": "Guid", "data_type": "Guid", "value": "72962B91-FA75-4AE6-8D28-B404DC7DAF63", "access": ["read", "write"]},
        {"kind": "variable", "name": "ByteString", "data_type": "ByteString", "value": "SGVsbG8=", "access": ["read", "write"]},
        {"kind": "variable", "name": "XmlElement", "data_type": "XmlElement", "value": "<a>1</a>", "access": ["read", "write"]},
        {"kind": "variable", "name": "NodeId", "data_type": "NodeId", "value": "i=85", "access": ["read", "write"]},
        {"kind": "variable", "name": "ExpandedNodeId", "data_type": "ExpandedNodeId", "value": "nsu=urn:opcuad:demo;s=Demo", "access": ["read", "write"]},
        {"kind": "variable", "name": "StatusCode", "data_type": "StatusCode", "value": 0, "access": ["read", "write"]},
        {"kind": "variable", "name": "QualifiedName", "data_type": "QualifiedName", "value": "2:Name", "access": ["read", "write"]},
        {"kind": "variable", "name": "LocalizedText", "data_type": "LocalizedText", "value": {"locale": "en", "text": "Hello"}, "access": ["read", "write"]},
        {"kind": "variable", "name": "Duration", "data_type": "Duration", "value": 250.0, "access": ["read", "write"]},
        {"kind": "variable", "name": "UtcTime", "data_type": "UtcTime", "value": "2024-01-01T00:00:00Z", "access": ["read", "write"]},
        {"kind": "variable", "name": "Range", "data_type": "Range", "value": {"low": 0, "high": 100}, "access": ["read", "write"]},
        {"kind": "variable", "name": "Variant", "data_type": "BaseDataType", "value_rank": -2, "access": ["read", "write"]},
        {"kind": "variable", "name": "DoubleArray", "data_type": "Double", "value_rank": 1, "array_dimensions": [0], "value": [1.0, 2.0, 3.0], "access": ["read", "write"]},
        {"kind": "variable", "name": "StringArray", "data_type": "String", "value_rank": 1, "value": ["a", "b"], "access": ["read", "write"]},
        {"kind": "variable", "name": "Int32Matrix", "data_type": "Int32", "value_rank": 2, "array_dimensions": [2, 3], "value": [[1, 2, 3], [4, 5, 6]], "access": ["read", "write"]}
      ]},
      {"kind": "folder", "name": "Sensors", "children": [
        {"kind": "variable", "name": "Sensor{n}", "count": 100, "data_type": "Double", "value": 0.0,
         "simulation": {"kind": "random", "interval_ms": 1000, "min": 0, "max": 100}}
      ]}
    ]
  }]
})json";
}  // namespace

ServerConfig default_config() {
  LoadResult r = load_config_text(kServer, "<default>", ".");
  load_node_file_text(kDemoNodes, "<default>", r);
  check_references(r);
  if (!r.ok()) {
    // A broken built-in configuration is a broken build, not a user error.
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
    std::abort();
  }
  r.config.pki.directory = built_in_pki_directory();
  r.config.condition_state_file = built_in_state_path(kConditionStateFile);
  return std::move(r.config);
}

}  // namespace opcuad::config
