#include "daemon/condition_state_file.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "transport/security/pki.hpp"
#include "ua/buffer.hpp"
#include "ua/codec.hpp"
#include "ua/decoder.hpp"
#include "ua/encoder.hpp"

namespace opcuad::condition_state {

namespace fs = std::filesystem;

namespace {

constexpr size_t kDigestSize = 32;  // SHA-256
// magic, version, an empty ApplicationUri (its length), count, the digest.
constexpr size_t kMinFileSize = sizeof(kMagic) + 4 + 4 + 4 + kDigestSize;
// The smallest record: a two-byte NodeId, the two bytes of states, 5 DateTimes, an empty LocalizedText
// (its mask), two null strings and two UInt16: what the count is checked against before it is used.
constexpr size_t kMinRecordSize = 2 + 2 + 5 * 8 + 1 + 4 + 4 + 2 + 2;
constexpr uint8_t kEnabled = 0x01, kActive = 0x02, kAcked = 0x04, kConfirmed = 0x08;

std::string errno_text(const char* what, const fs::path& p) {
  return std::string(what) + " " + p.string() + ": " + std::strerror(errno);
}

fs::path tmp_path(const fs::path& path) {
  return fs::path(path.string() + ".tmp");
}

bool sha256(std::span<const uint8_t> data, uint8_t (&out)[kDigestSize]) {
  unsigned int n = 0;
  return EVP_Digest(data.data(), data.size(), out, &n, EVP_sha256(), nullptr) == 1 && n == kDigestSize;
}

void encode_record(ua::Encoder& e, const Record& r) {
  ua::encode(e, r.condition);
  e.write_u8(static_cast<uint8_t>((r.enabled ? kEnabled : 0) | (r.active ? kActive : 0) |
                                  (r.acked ? kAcked : 0) | (r.confirmed ? kConfirmed : 0)));
  e.write_u8(static_cast<uint8_t>(r.limit_state));
  for (ua::DateTime t : {r.active_since, r.enabled_time, r.acked_time, r.confirmed_time}) ua::encode(e, t);
  ua::encode(e, r.comment);
  ua::encode(e, r.comment_time);
  ua::encode(e, r.client_user_id);
  ua::encode(e, r.event_id);
  ua::encode(e, r.message);
  e.write_u16(r.severity);
  e.write_u16(r.last_severity);
}

// False (the decoder's status set) for a malformed record.
bool decode_record(ua::Decoder& d, Record& r) {
  ua::decode(d, r.condition);
  const uint8_t states = d.read_u8();
  const uint8_t limit = d.read_u8();
  if (d.ok() && ((states & ~(kEnabled | kActive | kAcked | kConfirmed)) != 0 ||
                 limit > static_cast<uint8_t>(LimitState::LowLow))) {
    d.fail(ua::status::BadDecodingError);
  }
  r.enabled = (states & kEnabled) != 0;
  r.active = (states & kActive) != 0;
  r.acked = (states & kAcked) != 0;
  r.confirmed = (states & kConfirmed) != 0;
  r.limit_state = static_cast<LimitState>(limit);
  for (ua::DateTime* t : {&r.active_since, &r.enabled_time, &r.acked_time, &r.confirmed_time})
    ua::decode(d, *t);
  ua::decode(d, r.comment);
  ua::decode(d, r.comment_time);
  ua::decode(d, r.client_user_id);
  ua::decode(d, r.event_id);
  ua::decode(d, r.message);
  r.severity = d.read_u16();
  r.last_severity = d.read_u16();
  return d.ok();
}

// Writes all of `bytes` to a new `file` (mode 0600) and fsyncs it; empty or the error.
ReadResult ignored(std::string reason) {
  ReadResult r;
  r.outcome = ReadResult::Outcome::Ignored;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

std::string write(const fs::path& path, std::string_view application_uri, std::span<const Record> records) {
  try {
    if (records.size() > kMaxRecords) {
      return "cannot write " + path.string() + ": " + std::to_string(records.size()) +
             " conditions, more than the " + std::to_string(kMaxRecords) + " a state file may hold";
    }
    // What read() could not decode is not written either (the decoder's string bounds).
    const ua::DecodeLimits& limits = ua::Decoder::default_limits();
    for (size_t i = 0; i < records.size(); ++i) {
      const Record& r = records[i];
      if (r.comment.text.size() > limits.max_string_length ||
          r.comment.locale.size() > limits.max_string_length ||
          r.client_user_id.size() > limits.max_string_length || r.message.size() > limits.max_string_length ||
          r.event_id.size() > limits.max_byte_string_length) {
        return "cannot write " + path.string() + ": condition " + r.condition.to_string() +
               " has a string longer than a state file may hold";
      }
    }
    ua::ByteBuffer buf;
    ua::Encoder e(buf);
    e.write_raw(kMagic, sizeof(kMagic));
    e.write_u32(kVersion);
    e.write_bytes(false, application_uri);
    e.write_u32(static_cast<uint32_t>(records.size()));
    for (const Record& r : records) encode_record(e, r);
    uint8_t digest[kDigestSize];
    if (!e.status().is_good() || !sha256(buf.span(), digest)) {
      return "cannot write " + path.string() + ": the records cannot be encoded";
    }
    e.write_raw(digest, sizeof(digest));
    if (buf.size() > kMaxFileSize) {
      return "cannot write " + path.string() + ": " + std::to_string(buf.size()) + " bytes, more than the " +
             std::to_string(kMaxFileSize) + " a state file may have";
    }
    return security::write_file_atomically(path, buf.span(),
                                           security::AtomicWrite{0600, tmp_path(path), true});
  } catch (const std::exception& ex) {
    return "cannot write " + path.string() + ": " + ex.what();
  }
}

ReadResult read(const fs::path& path, std::string_view application_uri) {
  try {
    ::unlink(tmp_path(path).c_str());  // what a write interrupted by a crash left; the file itself is whole
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return {};
      return ignored(errno_text("cannot open", path));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return ignored(path.string() + " is not a regular file");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > kMaxFileSize) {
      ::close(fd);
      return ignored(path.string() + " has " + std::to_string(size) + " bytes, more than " +
                     std::to_string(kMaxFileSize));
    }
    std::vector<uint8_t> bytes(static_cast<size_t>(size));
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        std::string e = errno_text("cannot read", path);
        ::close(fd);
        return ignored(std::move(e));
      }
      if (n == 0) break;  // shrank since fstat
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    bytes.resize(done);

    const std::string file = path.string();
    if (bytes.size() < sizeof(kMagic) + 4) return ignored(file + " is truncated");
    if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
      return ignored(file + " is not a condition state file");
    uint32_t version = 0;
    std::memcpy(&version, bytes.data() + sizeof(kMagic), 4);
    if (version != kVersion) {
      return ignored(file + " has format version " + std::to_string(version) + ", this opcuad reads " +
                     std::to_string(kVersion));
    }
    if (bytes.size() < kMinFileSize) return ignored(file + " is truncated");
    const std::span<const uint8_t> body(bytes.data(), bytes.size() - kDigestSize);
    uint8_t digest[kDigestSize];
    if (!sha256(body, digest)) return ignored(file + ": SHA-256 unavailable");
    if (std::memcmp(digest, bytes.data() + body.size(), kDigestSize) != 0) {
      return ignored(file + " is damaged or truncated (checksum mismatch)");
    }

    ua::Decoder d(body.subspan(sizeof(kMagic) + 4));
    ua::String uri;
    ua::decode(d, uri);
    if (!d.ok()) return ignored(file + ": undecodable ApplicationUri");
    if (uri.view() != application_uri) {
      return ignored(file + " was written by another server (" + std::string(uri.view()) + ")");
    }
    const uint32_t count = d.read_u32();
    if (!d.ok()) return ignored(file + " is truncated");
    if (count > kMaxRecords) {
      return ignored(file + " holds " + std::to_string(count) + " records, more than " +
                     std::to_string(kMaxRecords));
    }
    if (count > d.remaining() / kMinRecordSize) return ignored(file + " is truncated (record count)");
    ReadResult result;
    result.records.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
      if (!decode_record(d, result.records[i])) {
        return ignored(file + ": record " + std::to_string(i) + " cannot be decoded (" +
                       std::string(d.status().name()) + ")");
      }
    }
    if (d.remaining() != 0)
      return ignored(file + ": " + std::to_string(d.remaining()) + " bytes after the records");
    result.outcome = ReadResult::Outcome::Loaded;
    return result;
  } catch (const std::exception& ex) {
    return ignored("cannot read " + path.string() + ": " + ex.what());
  }
}

}  // namespace opcuad::condition_state

namespace opcuad::condition_state {

std::vector<Record> collect(const addressspace::NodeStore& store) {
  std::vector<Record> out;
  const addressspace::ConditionSpecs* specs = store.condition_specs();
  if (!specs) return out;
  out.reserve(specs->size());
  for (const addressspace::ConditionSpec& spec : specs->all()) {
    if (!spec.state) continue;
    Record r;
    r.condition = store.node_id(spec.node);
    {
      addressspace::ConditionLock lock(*spec.state);
      const addressspace::ConditionState& s = *spec.state;
      if (!s.initialised) continue;  // never judged: the configuration's start is all there is
      r.enabled = s.enabled;
      r.active = s.active;
      r.acked = s.acked;
      r.confirmed = s.confirmed;
      r.limit_state = s.limit_state;
      r.active_since = s.active_time;
      r.enabled_time = s.enabled_time;
      r.acked_time = s.acked_time;
      r.confirmed_time = s.confirmed_time;
      r.comment = s.comment;
      r.comment_time = s.comment_time;
      r.client_user_id = s.client_user_id;
      r.event_id = s.event_id;
      r.message = ua::String(s.message);
      r.severity = s.severity;
      r.last_severity = s.last_severity;
    }
    out.push_back(std::move(r));
  }
  return out;
}

size_t restore(const addressspace::NodeStore& store, std::span<const Record> records) {
  const addressspace::ConditionSpecs* specs = store.condition_specs();
  if (!specs) return 0;
  size_t applied = 0;
  for (const Record& r : records) {
    const addressspace::NodeIndex n = store.find(r.condition);
    const addressspace::ConditionSpec* spec = n == addressspace::kNoNode ? nullptr : specs->find(n);
    if (!spec || !spec->state) continue;  // a condition the configuration no longer has
    addressspace::ConditionLock lock(*spec->state);
    addressspace::ConditionState& s = *spec->state;
    s.initialised = true;
    s.enabled = r.enabled;
    s.active = r.active;
    s.acked = r.acked;
    s.confirmed = r.confirmed;
    // The limit state of an alarm of another kind now (the configuration changed) starts afresh.
    const bool exclusive = spec->kind == addressspace::ConditionKind::ExclusiveLimit ||
                           spec->kind == addressspace::ConditionKind::Deviation;
    s.limit_state = exclusive ? r.limit_state : addressspace::LimitState::None;
    s.active_time = r.active_since;
    s.enabled_time = r.enabled_time;
    s.acked_time = r.acked_time;
    s.confirmed_time = r.confirmed_time;
    s.comment = r.comment;
    s.comment_time = r.comment_time;
    s.client_user_id = r.client_user_id;
    s.event_id = r.event_id;
    s.event_time = r.active_since;
    s.message = std::string(r.message.view());
    s.severity = r.severity;
    s.last_severity = r.last_severity;
    ++applied;
  }
  return applied;
}

}  // namespace opcuad::condition_state
