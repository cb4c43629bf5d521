// The condition state file (daemon/condition_state_file.hpp): round trips, every kind of damage read as
// "ignored" with a reason, the crash guarantees of the write, the file's mode and write errors.
#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/address_space_loader.hpp"
#include "config/config.hpp"
#include "daemon/condition_state_file.hpp"
#include "services/alarm_eval.hpp"

namespace condition_state_test {

using namespace opcuad;
namespace cs = opcuad::condition_state;
namespace fs = std::filesystem;

constexpr const char* kUri = "urn:example:opcuad";

struct TempDir {
  fs::path dir;
  TempDir() {
    dir = fs::temp_directory_path() / ("opcuad-condition-state-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path file() const { return dir / "conditions.state"; }
};

std::vector<cs::Record> sample() {
  std::vector<cs::Record> v(3);
  v[0].condition = ua::NodeId(2, ua::String("Tank1.Level.LevelLimits"));
  v[0].active = true;
  v[0].acked = false;
  v[0].limit_state = cs::LimitState::HighHigh;
  v[0].active_since = ua::DateTime::from_unix_ms(1'700'000'000'123);
  v[0].enabled_time = ua::DateTime::from_unix_ms(1'600'000'000'000);
  v[0].comment.locale = ua::String("en");
  v[0].comment.text = ua::String("checked the valve");
  v[0].comment_time = ua::DateTime::from_unix_ms(1'700'000'100'000);
  v[0].client_user_id = ua::String("operator1");
  v[0].event_id = ua::ByteString(
      std::string_view("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10", 16));
  v[0].severity = 900;
  v[0].last_severity = 700;
  v[1].condition = ua::NodeId(3, 4711);
  v[1].enabled = false;
  v[1].confirmed = false;
  v[1].limit_state = cs::LimitState::LowLow;
  v[1].acked_time = ua::DateTime::from_unix_ms(1'650'000'000'000);
  v[1].confirmed_time = ua::DateTime::from_unix_ms(1'650'000'000'001);
  v[1].client_user_id = ua::String("");  // empty, not null
  v[1].severity = 1;
  v[2].condition = ua::NodeId(0, 1);  // the smallest NodeId encoding, every field at its default
  return v;
}

std::vector<uint8_t> bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The file with its trailing SHA-256 computed again (what a file of valid checksum but other contents is).
void rehash(std::vector<uint8_t>& b) {
  unsigned int n = 0;
  REQUIRE(b.size() >= 32);
  REQUIRE(EVP_Digest(b.data(), b.size() - 32, b.data() + b.size() - 32, &n, EVP_sha256(), nullptr) == 1);
}

// The offset of the record count: magic, version, the ApplicationUri String.
size_t count_offset() {
  return 8 + 4 + 4 + std::strlen(kUri);
}

using Outcome = cs::ReadResult::Outcome;

TEST_CASE("condition state: records come back as written", "[daemon][condition_state]") {
  TempDir t;
  const auto records = condition_state_test::sample();
  REQUIRE(cs::write(t.file(), kUri, records).empty());
  cs::ReadResult r = cs::read(t.file(), kUri);
  INFO(r.reason);
  REQUIRE(r.outcome == Outcome::Loaded);
  CHECK(r.records == records);
  CHECK(r.records[1].client_user_id.size() == 0);
  CHECK_FALSE(r.records[1].client_user_id.is_null());
  CHECK(r.records[2].client_user_id.is_null());
  const auto b = condition_state_test::bytes_of(t.file());
  CHECK(std::memcmp(b.data(), "OPCUADCS", 8) == 0);
  uint32_t version = 0;
  std::memcpy(&version, b.data() + 8, 4);
  CHECK(version == cs::kVersion);
  // A second write replaces the first; no records is a valid file too.
  REQUIRE(cs::write(t.file(), kUri, std::span(records).first(1)).empty());
  CHECK(cs::read(t.file(), kUri).records == std::vector<cs::Record>(records.begin(), records.begin() + 1));
  REQUIRE(cs::write(t.file(), kUri, {}).empty());
  r = cs::read(t.file(), kUri);
  CHECK(r.outcome == Outcome::Loaded);
  CHECK(r.records.empty());
  CHECK_FALSE(fs::exists(t.file().string() + ".tmp"));
}

TEST_CASE("condition state: no file is a first start, not an error", "[daemon][condition_state]") {
  TempDir t;
  const cs::ReadResult r = cs::read(t.file(), kUri);
  CHECK(r.outcome == Outcome::Missing);
  CHECK(r.reason.empty());
  CHECK(r.records.empty());
}

TEST_CASE("condition state: a flipped byte anywhere makes the file ignored", "[daemon][condition_state]") {
  TempDir t;
  REQUIRE(cs::write(t.file(), kUri, condition_state_test::sample()).empty());
  const auto good = condition_state_test::bytes_of(t.file());
  // Every position of a small file, with two different flips.
  for (size_t at = 0; at < good.size(); ++at) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0xA5}}) {
      auto bad = good;
      bad[at] ^= mask;
      condition_state_test::put(t.file(), bad);
      const cs::ReadResult r = cs::read(t.file(), kUri);
      INFO("byte " << at << " ^ " << int(mask));
      CHECK(r.outcome == Outcome::Ignored);
      CHECK_FALSE(r.reason.empty());
      CHECK(r.records.empty());
      CHECK(r.reason.find('\n') == std::string::npos);
    }
  }
  // Sampled positions of a larger one.
  std::vector<cs::Record> many(2000, condition_state_test::sample()[0]);
  for (size_t i = 0; i < many.size(); ++i) many[i].condition = ua::NodeId(2, static_cast<uint32_t>(i));
  REQUIRE(cs::write(t.file(), kUri, many).empty());
  const auto big = condition_state_test::bytes_of(t.file());
  REQUIRE(cs::read(t.file(), kUri).records.size() == many.size());
  for (size_t at = 0; at < big.size(); at += big.size() / 97 + 1) {
    auto bad = big;
    bad[at] ^= 0x10;
    condition_state_test::put(t.file(), bad);
    INFO("byte " << at);
    CHECK(cs::read(t.file(), kUri).outcome == Outcome::Ignored);
  }
}

TEST_CASE("condition state: a file cut at any length is ignored", "[daemon][condition_state]") {
  TempDir t;
  REQUIRE(cs::write(t.file(), kUri, condition_state_test::sample()).empty());
  const auto good = condition_state_test::bytes_of(t.file());
  for (size_t len = 0; len < good.size(); ++len) {
    condition_state_test::put(t.file(),
                              std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(len)));
    const cs::ReadResult r = cs::read(t.file(), kUri);
    INFO("length " << len << ": " << r.reason);
    CHECK(r.outcome == Outcome::Ignored);
    CHECK_THAT(r.reason, Catch::Contains("truncated"));
  }
}

TEST_CASE("condition state: another server's file, another version, another format",
          "[daemon][condition_state]") {
  TempDir t;
  REQUIRE(cs::write(t.file(), "urn:other:server", condition_state_test::sample()).empty());
  cs::ReadResult r = cs::read(t.file(), kUri);
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("another server") && Catch::Contains("urn:other:server"));
  CHECK(r.records.empty());

  REQUIRE(cs::write(t.file(), kUri, condition_state_test::sample()).empty());
  auto b = condition_state_test::bytes_of(t.file());
  const uint32_t next = cs::kVersion + 1;
  std::memcpy(b.data() + 8, &next, 4);
  condition_state_test::rehash(b);
  condition_state_test::put(t.file(), b);
  r = cs::read(t.file(), kUri);
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("version " + std::to_string(next)));

  condition_state_test::put(t.file(), std::vector<uint8_t>(200, 'x'));
  r = cs::read(t.file(), kUri);
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("not a condition state file"));

  fs::remove(t.file());
  fs::create_directory(t.file());
  r = cs::read(t.file(), kUri);
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("not a regular file"));
}

TEST_CASE("condition state: counts and values are checked even under a valid checksum",
          "[daemon][condition_state]") {
  TempDir t;
  const auto records = condition_state_test::sample();
  REQUIRE(cs::write(t.file(), kUri, records).empty());
  const auto good = condition_state_test::bytes_of(t.file());
  auto with_count = [&](uint32_t count) {
    auto b = good;
    std::memcpy(b.data() + condition_state_test::count_offset(), &count, 4);
    condition_state_test::rehash(b);
    condition_state_test::put(t.file(), b);
    return cs::read(t.file(), kUri);
  };
  cs::ReadResult r = with_count(cs::kMaxRecords + 1);
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("more than 1000000"));
  r = with_count(0xFFFFFFFFu);
  CHECK(r.outcome == Outcome::Ignored);
  r = with_count(1000);  // more than the bytes can hold: refused before anything is allocated
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("truncated"));
  r = with_count(2);  // one record too few: bytes left over
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("after the records"));
  // A states byte with an unknown bit, a limit state out of range: the first record's, after its NodeId
  // (String NodeId: 1 + 2 + 4 + 23 bytes).
  const size_t states = condition_state_test::count_offset() + 4 + 1 + 2 + 4 + 23;
  for (auto [at, value] : {std::pair<size_t, uint8_t>{states, 0x10}, {states + 1, 5}}) {
    auto b = good;
    b[at] = value;
    condition_state_test::rehash(b);
    condition_state_test::put(t.file(), b);
    r = cs::read(t.file(), kUri);
    CHECK(r.outcome == Outcome::Ignored);
    CHECK_THAT(r.reason, Catch::Contains("record 0 cannot be decoded"));
  }
  // Larger than the file bound (a sparse file): ignored before it is read.
  { std::ofstream out(t.file(), std::ios::binary | std::ios::trunc); }
  fs::resize_file(t.file(), cs::kMaxFileSize + 1);
  r = cs::read(t.file(), kUri);
  CHECK(r.outcome == Outcome::Ignored);
  CHECK_THAT(r.reason, Catch::Contains("more than " + std::to_string(cs::kMaxFileSize)));
}

TEST_CASE("condition state: a crash before the rename leaves the old file, and the .tmp is removed",
          "[daemon][condition_state]") {
  TempDir t;
  const auto records = condition_state_test::sample();
  REQUIRE(cs::write(t.file(), kUri, records).empty());
  const fs::path tmp = t.file().string() + ".tmp";
  // A write cut short (part of a file) and a write complete but not renamed: the old file wins.
  const auto old_bytes = condition_state_test::bytes_of(t.file());
  for (size_t cut : {size_t{10}, old_bytes.size()}) {
    REQUIRE(cs::write(tmp, kUri, std::span(records).first(1)).empty());
    auto partial = condition_state_test::bytes_of(tmp);
    partial.resize(std::min(cut, partial.size()));
    condition_state_test::put(tmp, partial);
    const cs::ReadResult r = cs::read(t.file(), kUri);
    CHECK(r.outcome == Outcome::Loaded);
    CHECK(r.records == records);
    CHECK_FALSE(fs::exists(tmp));
  }
  // With no file at all, the leftover is removed too.
  fs::remove(t.file());
  condition_state_test::put(tmp, old_bytes);
  CHECK(cs::read(t.file(), kUri).outcome == Outcome::Missing);
  CHECK_FALSE(fs::exists(tmp));
}

TEST_CASE("condition state: the file is readable by its owner only", "[daemon][condition_state]") {
  TempDir t;
  const fs::path tmp = t.file().string() + ".tmp";
  condition_state_test::put(tmp, {1, 2, 3});
  ::chmod(tmp.c_str(), 0644);  // a leftover with another mode is not reused
  const mode_t old_mask = ::umask(0);
  const std::string error = cs::write(t.file(), kUri, condition_state_test::sample());
  ::umask(old_mask);
  REQUIRE(error.empty());
  struct stat st {};
  REQUIRE(::stat(t.file().c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK_FALSE(fs::exists(tmp));
}

TEST_CASE("condition state: write errors are reported, never thrown", "[daemon][condition_state]") {
  TempDir t;
  // A directory that does not exist, one nobody may create files in (not even root: /proc), a path
  // below a regular file.
  for (const fs::path& p : {t.dir / "missing" / "conditions.state", fs::path("/proc/opcuad-conditions.state"),
                            t.file() / "below-a-file"}) {
    condition_state_test::put(t.file(), {0});
    const std::string error = cs::write(p, kUri, condition_state_test::sample());
    INFO(p.string());
    CHECK_FALSE(error.empty());
    CHECK_THAT(error, Catch::Contains(p.parent_path().string()));
  }
  if (::geteuid() != 0) {
    const fs::path locked = t.dir / "locked";
    fs::create_directory(locked);
    ::chmod(locked.c_str(), 0500);
    CHECK_FALSE(cs::write(locked / "conditions.state", kUri, condition_state_test::sample()).empty());
    ::chmod(locked.c_str(), 0700);
  }
  // The rename fails (a directory is in the way): the error names it and no .tmp is left.
  fs::remove(t.file());
  fs::create_directories(t.file() / "occupied");
  const std::string error = cs::write(t.file(), kUri, condition_state_test::sample());
  CHECK_THAT(error, Catch::Contains("cannot rename"));
  CHECK_FALSE(fs::exists(t.file().string() + ".tmp"));
  // Strings the reader could not decode are not written.
  fs::remove_all(t.file());
  auto records = condition_state_test::sample();
  records[1].comment.text = ua::String(std::string((16u << 20) + 1, 'c'));
  CHECK_THAT(cs::write(t.file(), kUri, records), Catch::Contains("longer than"));
  CHECK_FALSE(fs::exists(t.file()));
}

// A tank level with a confirmable limit alarm, built as the daemon builds it.
struct Tank {
  Tank() {
    loaded = config::load_config_text(R"({"namespaces": ["urn:t"]})", "server.json", ".");
    config::load_node_file_text(R"({"namespaces": ["urn:t"], "nodes": [
      {"kind": "variable", "name": "Level", "data_type": "Double", "value": 50,
       "alarms": [{"name": "High", "type": "exclusive_limit", "limits": {"high": 80}, "confirm": true}]}]})",
                                "nodes.json", loaded);
    config::check_references(loaded);
    REQUIRE(loaded.ok());
    p = space.reclaimer().register_participant();
    REQUIRE(config::build_address_space(loaded.config, space, *p).empty());
  }
  const addressspace::ConditionSpec& spec() const {
    const auto& s = *space.current();
    const auto* c = s.condition_specs()->find(s.find(ua::NodeId(2, ua::String("Level.High"))));
    REQUIRE(c);
    return *c;
  }
  config::LoadResult loaded;
  addressspace::AddressSpace space;
  addressspace::EpochReclaimer::Participant* p = nullptr;
};

TEST_CASE("condition state: what a daemon collects is what the next one restores",
          "[daemon][condition_state]") {
  TempDir t;
  ua::ByteString last_event;
  {
    Tank a;
    const auto& c = a.spec();
    ua::DataValue dv;
    dv.value = ua::Variant(90.0);
    a.space.values().write(*c.input_cell, dv, *a.p);
    auto raised =
        services::alarm::evaluate(*a.space.current(), a.space.values(), *a.p, c, ua::DateTime::now(), false);
    REQUIRE(raised.event);
    const ua::ByteString& id =
        *raised.event->field(addressspace::event_field::kEventId)->get_if<ua::ByteString>();
    services::alarm::MethodCall ack;
    ack.method = services::alarm::Method::Acknowledge;
    ack.event_id = &id;
    const ua::LocalizedText comment{ua::String("en"), ua::String("on it")};
    ack.comment = &comment;
    ack.user = "operator1";
    ack.roles = config::role::kOperator;
    services::alarm::Outcome out;
    REQUIRE(services::alarm::call(*a.space.current(), a.space.values(), *a.p, c, ack, ua::DateTime::now(),
                                  out) == ua::status::Good);
    last_event = *out.event->field(addressspace::event_field::kEventId)->get_if<ua::ByteString>();
    const auto records = cs::collect(*a.space.current());
    REQUIRE(records.size() == 1);
    REQUIRE(cs::write(t.file(), kUri, records).empty());
  }
  Tank b;
  const cs::ReadResult r = cs::read(t.file(), kUri);
  REQUIRE(r.outcome == cs::ReadResult::Outcome::Loaded);
  CHECK(cs::restore(*b.space.current(), r.records) == 1);
  const addressspace::ConditionState& s = *b.spec().state;
  CHECK(s.active);
  CHECK(s.acked);
  CHECK_FALSE(s.confirmed);  // acknowledged, waiting for Confirm
  CHECK(s.limit_state == addressspace::LimitState::High);
  CHECK(s.comment.text == ua::String("on it"));
  CHECK(s.client_user_id == ua::String("operator1"));
  CHECK(s.event_id == last_event);  // a Confirm with the EventId seen before the restart matches
  // Judged again at start with the input still high: still active, nothing new to report.
  ua::DataValue dv;
  dv.value = ua::Variant(91.0);
  b.space.values().write(*b.spec().input_cell, dv, *b.p);
  CHECK_FALSE(services::alarm::evaluate(*b.space.current(), b.space.values(), *b.p, b.spec(),
                                        ua::DateTime::now(), true)
                  .event);
  // ... and the condition's variables, what clients read, show the restored state.
  auto member = [&](const std::string& name) {
    const addressspace::NodeStore& store = *b.space.current();
    const addressspace::NodeIndex n = store.find(ua::NodeId(2, ua::String("Level.High." + name)));
    REQUIRE(n != addressspace::kNoNode);
    ua::DataValue v;
    addressspace::ValueStore::read(*store.variable(n)->cell, v);
    return v.value;
  };
  const ua::Variant active = member("ActiveState.Id");
  REQUIRE(active.get_if<bool>());
  CHECK(*active.get_if<bool>());
  const ua::Variant acked = member("AckedState.Id");
  REQUIRE(acked.get_if<bool>());
  CHECK(*acked.get_if<bool>());
  const ua::Variant comment = member("Comment");
  REQUIRE(comment.get_if<ua::LocalizedText>());
  CHECK(comment.get_if<ua::LocalizedText>()->text == ua::String("on it"));
  const ua::Variant event_id = member("EventId");
  REQUIRE(event_id.get_if<ua::ByteString>());
  CHECK(*event_id.get_if<ua::ByteString>() == last_event);
}

TEST_CASE("condition state: writes are spaced by their own cost", "[daemon][condition_state]") {
  using std::chrono::milliseconds;
  using std::chrono::seconds;
  // A small file: at most once a second, as before.
  CHECK(cs::write_spacing(milliseconds(0)) == seconds(1));
  CHECK(cs::write_spacing(milliseconds(3)) == seconds(1));
  CHECK(cs::write_spacing(milliseconds(50)) == seconds(1));
  // A large one (100,000 conditions, about 10 MB): at most 5 % of the control thread.
  CHECK(cs::write_spacing(milliseconds(150)) == seconds(3));
  CHECK(cs::write_spacing(seconds(2)) == seconds(40));
}

}  // namespace condition_state_test
