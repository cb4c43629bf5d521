#pragma once
// The scalar keys of the server file, one table per section. Each entry names the key as the file spells
// it, the member it sets, the range the loader accepts and whether a reload may apply it. The loader
// reads and checks every key from these tables (read_settings), a reload compares them with them
// (restart_only_changes, config/reload_settings.hpp), and the defaults are the members' initializers in
// config/config.hpp and addressspace/server_object.hpp, nowhere else. docs/CONFIGURATION.md describes
// each key; the packaged server file lists each with its default.
//
// Keys that are not a number or a boolean (URLs, lists, users, names) and checks across keys stay with
// the loader (config/loader.cpp).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "config/config.hpp"
#include "config/json_reader.hpp"

namespace opcuad::config {

enum class OnReload : uint8_t {
  Restart,  // read once at start: a changed value is reported (event=reload.needs_restart) and waits
  Apply,    // a reload applies it
};

template <class Section>
struct Setting {
  using Field = std::variant<uint32_t Section::*, uint16_t Section::*, int Section::*, double Section::*,
                             bool Section::*>;
  const char* key;
  Field field;
  // The values accepted (numbers only); an unsigned member's range is at most its type's.
  double min = 0;
  double max = std::numeric_limits<uint32_t>::max();
  const char* why = "";  // said after the range when a value is outside it, e.g. "(Part 4 §5.8.4.4)"
  OnReload on_reload = OnReload::Restart;
};

// One section's table and where the section sits in the file ("limits", "security", "" for the top).
template <class Section>
struct SettingsTable {
  const char* section;
  std::span<const Setting<Section>> settings;
};

const SettingsTable<ServerConfig>& top_level_settings();
const SettingsTable<Limits>& limit_settings();
const SettingsTable<addressspace::OperationLimits>& operation_limit_settings();  // also under "limits"
const SettingsTable<Connections>& connection_settings();
const SettingsTable<Security>& security_settings();
const SettingsTable<PkiConfig>& pki_settings_table();  // under "security"
const SettingsTable<Logging>& logging_settings();
const SettingsTable<Shutdown>& shutdown_settings();
const SettingsTable<Scheduling>& scheduling_settings();
const SettingsTable<Diagnostics>& diagnostics_settings();
const SettingsTable<Audit>& audit_settings();
const SettingsTable<Http>& http_settings();

// "out of range: must be between 0 and 60" (and " " + why when there is one).
std::string range_message(double min, double max, const char* why);

// Reads every key of `table` that `r` (the section's object) has into `out`, each checked against its
// range: "out of range: must be between MIN and MAX" plus the entry's why.
template <class Section>
void read_settings(ObjectReader& r, const SettingsTable<Section>& table, Section& out) {
  for (const Setting<Section>& s : table.settings) {
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(out.*member)>;
          if constexpr (std::is_same_v<T, bool>) {
            r.read(s.key, out.*member);
          } else if constexpr (std::is_same_v<T, double>) {
            double v = 0;
            if (!r.read(s.key, v)) return;
            if (!(v >= s.min && v <= s.max)) {
              r.context().error(r.path_of(s.key), range_message(s.min, s.max, s.why));
              return;
            }
            out.*member = v;
          } else {
            int64_t v = 0;
            const auto min = static_cast<int64_t>(s.min);
            const auto max =
                std::min(static_cast<int64_t>(s.max), static_cast<int64_t>(std::numeric_limits<T>::max()));
            if (r.read_int(s.key, v, min, max, s.why)) out.*member = static_cast<T>(v);
          }
        },
        s.field);
  }
}

// The dotted names ("limits.max_sessions") of the entries with OnReload::Restart whose value differs.
template <class Section>
void changed_settings(const SettingsTable<Section>& table, const Section& running, const Section& next,
                      std::vector<std::string>& out) {
  for (const Setting<Section>& s : table.settings) {
    if (s.on_reload != OnReload::Restart) continue;
    const bool differs = std::visit([&](auto member) { return !(running.*member == next.*member); }, s.field);
    if (differs)
      out.push_back(*table.section ? std::string(table.section) + "." + s.key : std::string(s.key));
  }
}

}  // namespace opcuad::config
