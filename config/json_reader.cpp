#include "config/json_reader.hpp"

namespace opcuad::config {

std::string json_syntax_error(const std::exception& e) {
  std::string_view what =
      e.what();  // "[json.exception.parse_error.101] parse error at line 3, column 5: ..."
  if (what.starts_with("[json.exception.")) {
    const size_t end = what.find("] ");
    if (end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return "invalid JSON: " + std::string(what);
}

std::string json_type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

std::string pointer(const std::string& path, const std::string& key) {
  std::string p = path + "/";
  for (char c : key) {
    if (c == '~') {
      p += "~0";
    } else if (c == '/') {
      p += "~1";
    } else {
      p += c;
    }
  }
  return p;
}

std::string pointer(const std::string& path, size_t index) {
  return path + "/" + std::to_string(index);
}

ObjectReader::ObjectReader(Context& ctx, const Json& j, std::string path)
    : ctx_(ctx), path_(std::move(path)) {
  if (j.is_object()) {
    obj_ = &j;
  } else {
    ctx_.error(path_, "expected an object, got " + json_type_name(j));
  }
}

const Json* ObjectReader::member(const char* key) {
  if (!obj_) return nullptr;
  auto it = obj_->find(key);
  if (it == obj_->end()) return nullptr;
  seen_.insert(key);
  return &*it;
}

bool ObjectReader::read(const char* key, std::string& out) {
  const Json* j = member(key);
  if (!j) return false;
  if (!j->is_string()) {
    ctx_.error(path_of(key), "expected a string, got " + json_type_name(*j));
    return false;
  }
  out = j->get<std::string>();
  return true;
}

bool ObjectReader::read(const char* key, bool& out) {
  const Json* j = member(key);
  if (!j) return false;
  if (!j->is_boolean()) {
    ctx_.error(path_of(key), "expected a boolean, got " + json_type_name(*j));
    return false;
  }
  out = j->get<bool>();
  return true;
}

bool ObjectReader::read(const char* key, double& out) {
  const Json* j = member(key);
  if (!j) return false;
  if (!j->is_number()) {
    ctx_.error(path_of(key), "expected a number, got " + json_type_name(*j));
    return false;
  }
  out = j->get<double>();
  return true;
}

bool ObjectReader::read(const char* key, std::vector<std::string>& out) {
  const Json* j = member(key);
  if (!j) return false;
  if (!j->is_array()) {
    ctx_.error(path_of(key), "expected an array of strings, got " + json_type_name(*j));
    return false;
  }
  out.clear();
  bool ok = true;
  for (size_t i = 0; i < j->size(); ++i) {
    if (!(*j)[i].is_string()) {
      ctx_.error(pointer(path_of(key), i), "expected a string, got " + json_type_name((*j)[i]));
      ok = false;
      continue;
    }
    out.push_back((*j)[i].get<std::string>());
  }
  return ok;
}

bool ObjectReader::read_int(const char* key, int64_t& out, int64_t min, int64_t max, const char* why) {
  const Json* j = member(key);
  if (!j) return false;
  if (!j->is_number_integer()) {
    ctx_.error(path_of(key), "expected an integer, got " + json_type_name(*j));
    return false;
  }
  if (j->is_number_unsigned() && j->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    ctx_.error(path_of(key), "out of range: must be between " + std::to_string(min) + " and " +
                                 std::to_string(max) + (*why ? " " + std::string(why) : std::string()));
    return false;
  }
  const int64_t v = j->get<int64_t>();
  if (v < min || v > max) {
    ctx_.error(path_of(key), "out of range: must be between " + std::to_string(min) + " and " +
                                 std::to_string(max) + (*why ? " " + std::string(why) : std::string()));
    return false;
  }
  out = v;
  return true;
}

bool ObjectReader::require(const char* key) {
  if (has(key)) return true;
  if (obj_) ctx_.error(path_, std::string("missing required key \"") + key + "\"");
  return false;
}

void ObjectReader::finish() {
  if (finished_ || !obj_) return;
  finished_ = true;
  for (auto it = obj_->begin(); it != obj_->end(); ++it) {
    if (it.key() == "$schema" || it.key() == "comment") continue;  // allowed everywhere
    if (!seen_.count(it.key())) ctx_.error(pointer(path_, it.key()), "unknown key \"" + it.key() + "\"");
  }
}

}  // namespace opcuad::config
