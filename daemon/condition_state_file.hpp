#pragma once
// The condition state file: what of the alarm conditions (Part 9 §5.5 ConditionType, §5.7
// AcknowledgeableConditionType, §5.8 AlarmConditionType) must survive a restart: Enabled, Active, Acked,
// Confirmed with their transition times (ActiveState's is "active since"), the exclusive limit state,
// the last Comment and who made it, the last EventId (so an Acknowledge of the event a client saw before
// the restart still matches it) and the severities. The live input values are not kept: at start the
// daemon evaluates each alarm again from its input.
//
// Layout (all integers little-endian, strings and values in the OPC UA binary encoding, Part 6 §5.2):
//
//   "OPCUADCS"                  8 bytes, magic
//   UInt32 version              kVersion
//   String application_uri      the ApplicationUri of the server that wrote it
//   UInt32 count                records that follow (<= kMaxRecords)
//   count x Record:
//     NodeId    condition
//     Byte      states          bit 0 Enabled, 1 Active, 2 Acked, 3 Confirmed; the other bits 0
//     Byte      limit_state     LimitState below
//     DateTime  active_since, enabled_time, acked_time, confirmed_time
//     LocalizedText comment, DateTime comment_time
//     String    client_user_id
//     ByteString event_id
//     String    message         the Message of the last event
//     UInt16    severity, last_severity
//   32 bytes                    SHA-256 of every byte before it
//
// The checksum finds a damaged file (a torn write, a flipped bit, a truncation), not a forged one: whoever
// may write the state directory may write a valid file. Crash safety comes from write(): the new
// contents go to "<path>.tmp" (mode 0600, created anew), which is fsync'ed, renamed over <path>, and the
// directory fsync'ed, so after a crash at any point <path> is the old file or the new one, whole. A
// ".tmp" left behind by a crash is removed by the next read() or write().
//
// Threads: the functions keep no state; the daemon calls them from its control thread: at start before
// the listeners open (read, restore), once a second when a condition changed (but no sooner than
// write_spacing() after the previous write began), after a reload and at shutdown after the shards
// stopped (collect, write).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "addressspace/condition_specs.hpp"
#include "addressspace/node_store.hpp"
#include "ua/bytes.hpp"
#include "ua/node_id.hpp"
#include "ua/scalars.hpp"
#include "ua/text.hpp"

namespace opcuad::condition_state {

inline constexpr char kMagic[8] = {'O', 'P', 'C', 'U', 'A', 'D', 'C', 'S'};
inline constexpr uint32_t kVersion = 1;
// Reading bounds, checked before anything is allocated: a larger file or count is ignored. 100,000
// conditions take about 10 MB; a million stays well under the size bound.
inline constexpr uint64_t kMaxFileSize = uint64_t{64} << 20;
inline constexpr uint32_t kMaxRecords = 1'000'000;

// ExclusiveLimitAlarmType's LimitState (Part 9 §5.8.19.2 ExclusiveLimitStateMachineType); None while the
// alarm is inactive.
using LimitState = addressspace::LimitState;

struct Record {
  ua::NodeId condition;
  bool enabled = true;
  bool active = false;
  bool acked = true;
  bool confirmed = true;
  LimitState limit_state = LimitState::None;
  ua::DateTime active_since;  // ActiveState/TransitionTime
  ua::DateTime enabled_time;  // EnabledState/TransitionTime
  ua::DateTime acked_time;    // AckedState/TransitionTime
  ua::DateTime confirmed_time;
  ua::LocalizedText comment;
  ua::DateTime comment_time;  // Comment/SourceTimestamp
  ua::String client_user_id;
  ua::ByteString event_id;
  ua::String message;
  uint16_t severity = 0;
  uint16_t last_severity = 0;

  friend bool operator==(const Record&, const Record&) = default;
};

// How long after a write began the next one may begin, from how long that one took (collect and write):
// a second, or 20 times the write's duration when that is longer, so that keeping the file costs the
// control thread at most 5 % of a core however many conditions change (100,000 conditions changing every
// second: a file of about 10 MB, written every few seconds). A reload and the shutdown write at once.
inline std::chrono::steady_clock::duration write_spacing(std::chrono::steady_clock::duration took) {
  return std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), 20 * took);
}

// Writes `records` to `path` as described above. Empty on success, else one line naming the file and the
// reason (the file at `path` is then unchanged). Never throws.
std::string write(const std::filesystem::path& path, std::string_view application_uri,
                  std::span<const Record> records);

struct ReadResult {
  enum class Outcome : uint8_t {
    Loaded,   // records holds the file's records
    Missing,  // no file: a first start, nothing to report
    Ignored,  // the file is unusable: reason says why, in one line; start from the configuration
  };
  Outcome outcome = Outcome::Missing;
  std::vector<Record> records;
  std::string reason;
};

// Reads the file `write` made for the server `application_uri`. Never throws, never fatal: a file too
// large, of another format, version or server, damaged or truncated is Ignored with its reason.
ReadResult read(const std::filesystem::path& path, std::string_view application_uri);

// The records of the conditions of `store` that were ever judged, each read under its lock. Any thread.
std::vector<Record> collect(const addressspace::NodeStore& store);
// Gives the conditions of `store` the state of the records with their NodeIds (before the first judgement:
// the daemon judges every condition afterwards, Server::evaluate_all_alarms). Records of conditions the
// store does not have are skipped. Returns how many were applied.
size_t restore(const addressspace::NodeStore& store, std::span<const Record> records);

}  // namespace opcuad::condition_state
