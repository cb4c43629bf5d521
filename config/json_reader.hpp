#pragma once
// Typed, error-collecting access to a JSON object: every read checks the JSON type and records a
// ConfigError (file, JSON pointer, reason) instead of throwing; finish() reports the keys nobody read.

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace opcuad::config {

using Json = nlohmann::json;

class Context {
 public:
  Context(std::string file, std::vector<ConfigError>& errors) : file_(std::move(file)), errors_(errors) {}
  void error(const std::string& path, std::string reason) {
    errors_.push_back({file_, path, std::move(reason)});
  }
  const std::string& file() const noexcept { return file_; }
  size_t error_count() const noexcept { return errors_.size(); }

 private:
  std::string file_;
  std::vector<ConfigError>& errors_;
};

// A JSON syntax error as "invalid JSON: parse error at line L, column C: <what>", without the library's
// exception tag.
std::string json_syntax_error(const std::exception& e);

// "a string", "a number", ... for messages.
std::string json_type_name(const Json& j);
// JSON pointer of key/index under path.
std::string pointer(const std::string& path, const std::string& key);
std::string pointer(const std::string& path, size_t index);

class ObjectReader {
 public:
  // Reports "expected an object, got ..." when j is not an object (then every read finds nothing).
  ObjectReader(Context& ctx, const Json& j, std::string path);
  ~ObjectReader() { finish(); }
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  bool valid() const noexcept { return obj_ != nullptr; }
  bool has(const char* key) const { return obj_ && obj_->contains(key); }
  // The member if present (marks it as known), else nullptr.
  const Json* member(const char* key);
  std::string path_of(const char* key) const { return pointer(path_, key); }
  const std::string& path() const noexcept { return path_; }
  Context& context() noexcept { return ctx_; }

  // Each returns true when the key is present and has the right type (then `out` is set).
  bool read(const char* key, std::string& out);
  bool read(const char* key, bool& out);
  bool read(const char* key, double& out);
  bool read(const char* key, std::vector<std::string>& out);
  // Outside [min, max]: "out of range: must be between MIN and MAX", then `why` when it is not empty.
  bool read_int(const char* key, int64_t& out, int64_t min, int64_t max, const char* why = "");
  template <class T>
  bool read_int(const char* key, T& out) {
    int64_t v = 0;
    if (!read_int(key, v, static_cast<int64_t>(std::numeric_limits<T>::min()),
                  static_cast<int64_t>(std::min<uint64_t>(std::numeric_limits<T>::max(), INT64_MAX)))) {
      return false;
    }
    out = static_cast<T>(v);
    return true;
  }
  // Reports "missing required key" when absent.
  bool require(const char* key);
  // Reports unknown keys once; called by the destructor.
  void finish();

 private:
  Context& ctx_;
  const Json* obj_ = nullptr;
  std::string path_;
  std::set<std::string> seen_;
  bool finished_ = false;
};

}  // namespace opcuad::config
