#pragma once
// A strict reader of the Prometheus text exposition format 0.0.4 for the metrics tests: it refuses what
// a Prometheus server would refuse (bad names, labels, values; a TYPE after its samples; a family typed
// twice) and what opcuad promises on top (every family with HELP and TYPE, opcuad_ names, counters
// ending in _total, histograms with cumulative buckets ending in +Inf that equal _count).

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace opcuad::test {

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PromExposition {
  std::map<std::string, std::string> types;  // family -> type
  std::set<std::string> helped;
  std::vector<PromSample> samples;

  // The value of the sample `name` with exactly `labels`; NaN when there is none.
  double value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& s : samples) {
      if (s.name == name && s.labels == labels) return s.value;
    }
    return std::nan("");
  }
};

inline bool prom_name_ok(std::string_view n) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

inline bool prom_value(std::string_view t, double& out) {
  if (t == "+Inf") return out = INFINITY, true;
  if (t == "-Inf") return out = -INFINITY, true;
  if (t == "NaN") return out = NAN, true;
  const std::string s(t);
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && !std::isinf(out) && !std::isnan(out);
}

// The family a sample belongs to: histogram samples carry a suffix.
inline std::string prom_family(const PromExposition& e, const std::string& name) {
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string base = name.substr(0, name.size() - suffix.size());
      auto it = e.types.find(base);
      if (it != e.types.end() && it->second == "histogram") return base;
    }
  }
  return name;
}

// Parses `text` into `out`; on failure `error` says which line and why.
inline bool parse_prometheus(const std::string& text, PromExposition& out, std::string& error) {
  if (text.empty() || text.back() != '\n') return error = "does not end with a newline", false;
  std::set<std::string> sampled;  // families with samples seen
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    auto fail = [&](const std::string& why) {
      error = "line " + std::to_string(line_no) + ": " + why + ": " + line;
      return false;
    };
    if (line.empty()) return fail("empty line");
    if (line[0] == '#') {
      const bool help = line.rfind("# HELP ", 0) == 0, type = line.rfind("# TYPE ", 0) == 0;
      if (!help && !type) return fail("comment that is neither HELP nor TYPE");
      const std::string rest = line.substr(7);
      const size_t sp = rest.find(' ');
      if (sp == std::string::npos) return fail("no text after the name");
      const std::string name = rest.substr(0, sp);
      if (!prom_name_ok(name)) return fail("bad metric name");
      if (help) {
        if (!out.helped.insert(name).second) return fail("HELP twice");
      } else {
        const std::string t = rest.substr(sp + 1);
        if (t != "counter" && t != "gauge" && t != "histogram" && t != "summary" && t != "untyped") {
          return fail("unknown type");
        }
        if (out.types.count(name)) return fail("TYPE twice");
        if (sampled.count(name)) return fail("TYPE after samples");
        out.types[name] = t;
      }
      continue;
    }
    PromSample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!prom_name_ok(s.name)) return fail("bad sample name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos) return fail("label without =");
        const std::string key = line.substr(i, eq - i);
        if (!prom_name_ok(key) || key.rfind("__", 0) == 0) return fail("bad label name");
        if (eq + 1 >= line.size() || line[eq + 1] != '"') return fail("label value not quoted");
        std::string v;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            if (++j >= line.size()) return fail("dangling escape");
            if (line[j] == 'n')
              v += '\n';
            else if (line[j] == '\\' || line[j] == '"')
              v += line[j];
            else
              return fail("bad escape");
          } else {
            v += line[j];
          }
        }
        if (j >= line.size()) return fail("unterminated label value");
        if (s.labels.count(key)) return fail("label twice");
        s.labels[key] = v;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return fail("unterminated label set");
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') return fail("no value");
    const std::string rest = line.substr(i + 1);
    if (rest.find(' ') != std::string::npos) return fail("timestamps are not expected");
    if (!prom_value(rest, s.value)) return fail("bad value");
    sampled.insert(prom_family(out, s.name));
    out.samples.push_back(std::move(s));
  }
  // opcuad's conventions.
  for (const auto& [family, type] : out.types) {
    if (family.rfind("opcuad_", 0) != 0) return error = family + ": not an opcuad_ name", false;
    if (!out.helped.count(family)) return error = family + ": no HELP", false;
    if (type == "counter" && (family.size() < 6 || family.compare(family.size() - 6, 6, "_total") != 0)) {
      return error = family + ": a counter whose name does not end in _total", false;
    }
  }
  for (const auto& s : out.samples) {
    const std::string family = prom_family(out, s.name);
    if (!out.types.count(family)) return error = s.name + ": a sample without TYPE", false;
  }
  for (const auto& [family, type] : out.types) {
    if (type != "histogram") continue;
    double last = -1, last_le = -INFINITY;
    bool inf = false;
    for (const auto& s : out.samples) {
      if (s.name != family + "_bucket") continue;
      auto le = s.labels.find("le");
      double bound = 0;
      if (le == s.labels.end() || !prom_value(le->second, bound))
        return error = family + ": bucket without le", false;
      if (bound <= last_le) return error = family + ": le not increasing", false;
      if (s.value < last) return error = family + ": buckets not cumulative", false;
      last_le = bound;
      last = s.value;
      inf = std::isinf(bound);
    }
    if (!inf) return error = family + ": no +Inf bucket", false;
    if (out.value(family + "_count") != last)
      return error = family + ": _count differs from the +Inf bucket", false;
    if (std::isnan(out.value(family + "_sum"))) return error = family + ": no _sum", false;
  }
  return true;
}

}  // namespace opcuad::test
