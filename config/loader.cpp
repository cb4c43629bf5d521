// The server file, node-file globs and the checks that span files.
#include <algorithm>
#include <bit>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "addressspace/namespace0.hpp"
#include "config/bulk_load.hpp"
#include "config/config.hpp"
#include "config/json_reader.hpp"
#include "config/nodeset_document.hpp"
#include "config/password.hpp"
#include "config/pki_settings.hpp"
#include "config/settings_table.hpp"
#include "config/type_names.hpp"
#include "ua/endpoint_url.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {
std::optional<std::array<uint8_t, 20>> parse_thumbprint(std::string_view text) {
  std::array<uint8_t, 20> out{};
  size_t n = 0;
  int high = -1;
  for (char ch : text) {
    if (ch == ':' || ch == ' ') continue;
    int v = ch >= '0' && ch <= '9'   ? ch - '0'
            : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
            : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                     : -1;
    if (v < 0 || n == out.size()) return std::nullopt;
    if (high < 0) {
      high = v;
    } else {
      out[n++] = static_cast<uint8_t>(high << 4 | v);
      high = -1;
    }
  }
  if (n != out.size() || high >= 0) return std::nullopt;
  return out;
}

bool glob_match(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

void read_limits(ObjectReader& parent, Limits& l) {
  const Json* j = parent.member("limits");
  if (!j) return;
  ObjectReader r(parent.context(), *j, parent.path_of("limits"));
  read_settings(r, limit_settings(), l);
  read_settings(r, operation_limit_settings(), l.operations);
  if (l.max_session_timeout_ms < l.min_session_timeout_ms) {
    parent.context().error(r.path_of("min_session_timeout_ms"),
                           "min_session_timeout_ms must not be above max_session_timeout_ms");
  }
}

// An optional section of scalar keys only.
template <class Section>
void read_section(ObjectReader& parent, const SettingsTable<Section>& table, Section& out) {
  const Json* j = parent.member(table.section);
  if (!j) return;
  ObjectReader r(parent.context(), *j, parent.path_of(table.section));
  read_settings(r, table, out);
}

// endpoints[].security_policies x security_modes -> the pairs offered. None pairs only with None, a secure
// policy only with Sign and SignAndEncrypt (Part 4 §7.20; Part 7); a policy or mode that pairs with nothing
// listed is an error, so every configured name is offered or the daemon refuses to start.
void read_security_offers(ObjectReader& e, Endpoint& ep) {
  Context& ctx = e.context();
  e.read("security_policies", ep.security_policies);
  e.read("security_modes", ep.security_modes);
  if (ep.security_policies.empty())
    ctx.error(e.path_of("security_policies"), "must name at least one policy");
  if (ep.security_modes.empty()) ctx.error(e.path_of("security_modes"), "must name at least one mode");
  std::vector<const security::Policy*> policies;
  for (const auto& name : ep.security_policies) {
    const security::Policy* p = security::find_policy(name);
    if (!p) {
      std::string known;
      for (const auto& q : security::all_policies())
        known += (known.empty() ? "" : ", ") + std::string(q.name);
      ctx.error(e.path_of("security_policies"), "unknown security policy \"" + name + "\" (" + known + ")");
    } else if (std::find(policies.begin(), policies.end(), p) != policies.end()) {
      ctx.error(e.path_of("security_policies"), "security policy \"" + name + "\" listed twice");
    } else {
      policies.push_back(p);
    }
  }
  std::vector<SecurityMode> modes;
  for (const auto& name : ep.security_modes) {
    SecurityMode m;
    if (name == "None") {
      m = SecurityMode::None;
    } else if (name == "Sign") {
      m = SecurityMode::Sign;
    } else if (name == "SignAndEncrypt") {
      m = SecurityMode::SignAndEncrypt;
    } else {
      ctx.error(e.path_of("security_modes"),
                "unknown security mode \"" + name + "\" (None, Sign, SignAndEncrypt)");
      continue;
    }
    if (std::find(modes.begin(), modes.end(), m) != modes.end()) {
      ctx.error(e.path_of("security_modes"), "security mode \"" + name + "\" listed twice");
    } else {
      modes.push_back(m);
    }
  }
  ep.offers.clear();
  for (const security::Policy* p : policies) {
    bool paired = false;
    for (SecurityMode m : modes) {
      if ((p->id == security::PolicyId::None) != (m == SecurityMode::None)) continue;
      ep.offers.push_back({p->id, m});
      paired = true;
    }
    if (!paired && !modes.empty()) {
      ctx.error(e.path_of("security_policies"),
                p->id == security::PolicyId::None
                    ? std::string(
                          "SecurityPolicy None needs security mode None, which security_modes does not list")
                    : "SecurityPolicy " + std::string(p->name) +
                          " needs security mode Sign or SignAndEncrypt, which security_modes does not list");
    }
  }
  for (SecurityMode m : modes) {
    bool paired = false;
    for (const security::Policy* p : policies)
      paired |= (p->id == security::PolicyId::None) == (m == SecurityMode::None);
    if (!paired && !policies.empty()) {
      ctx.error(
          e.path_of("security_modes"),
          m == SecurityMode::None
              ? std::string(
                    "security mode None needs SecurityPolicy None, which security_policies does not list")
              : "security mode " + std::string(m == SecurityMode::Sign ? "Sign" : "SignAndEncrypt") +
                    " needs a secure policy, which security_policies does not list (None cannot sign)");
    }
  }
}

// The PKI keys of the security section; pki_directory is resolved by load_config_text(), which knows
// the server file's folder.
void read_pki(ObjectReader& sr, PkiConfig& p) {
  Context& ctx = sr.context();
  std::string dir;
  if (sr.read("pki_directory", dir)) {
    if (dir.empty()) ctx.error(sr.path_of("pki_directory"), "must not be empty");
    p.directory = dir;
  }
  read_settings(sr, pki_settings_table(), p);
  if (p.key_bits % 1024 != 0) ctx.error(sr.path_of("certificate_key_bits"), "must be 2048, 3072 or 4096");
  if (sr.read("certificate_dns_names", p.dns_names)) {
    for (const auto& name : p.dns_names) {
      if (!is_dns_name(name))
        ctx.error(sr.path_of("certificate_dns_names"), "not a DNS name: \"" + name + "\"");
    }
  }
  if (sr.read("certificate_ip_addresses", p.ip_addresses)) {
    for (const auto& ip : p.ip_addresses) {
      if (!is_ip_address(ip))
        ctx.error(sr.path_of("certificate_ip_addresses"), "not an IP address: \"" + ip + "\"");
    }
  }
}

void read_http(ObjectReader& parent, std::optional<Http>& out) {
  const Json* j = parent.member("http");
  if (!j) return;
  ObjectReader r(parent.context(), *j, parent.path_of("http"));
  Http h;
  if (r.read("listen", h.listen)) {
    std::string host;
    uint16_t port = 0;
    if (!split_listen_address(h.listen, host, port)) {
      parent.context().error(r.path_of("listen"),
                             "expected host:port or [address]:port, got \"" + h.listen + "\"");
    }
  }
  read_settings(r, http_settings(), h);
  out = h;
}

void read_server(ObjectReader& r, ServerConfig& c) {
  Context& ctx = r.context();
  r.read("application_uri", c.application_uri);
  r.read("product_uri", c.product_uri);
  r.read("application_name", c.application_name);
  if (r.read("advertised_hostname", c.advertised_hostname) && !c.advertised_hostname.empty()) {
    // A host name, an IPv4 address or an IPv6 address (with or without brackets), checked as the host
    // of a URL so that every URL published with it parses.
    const std::string& h = c.advertised_hostname;
    const bool bare_ipv6 = h.find(':') != std::string::npos && h.front() != '[';
    const char* reason = nullptr;
    if (!ua::parse_endpoint_url("opc.tcp://" + (bare_ipv6 ? "[" + h + "]" : h), &reason)) {
      ctx.error(r.path_of("advertised_hostname"), "not a host name or address: " + std::string(reason));
    } else if (h.find('/') != std::string::npos) {
      ctx.error(r.path_of("advertised_hostname"), "not a host name or address: it contains '/'");
    }
  }
  // endpoints[].allow_anonymous, applied once security.allow_anonymous (their default) is known.
  std::vector<std::pair<size_t, bool>> anonymous_overrides;
  if (const Json* eps = r.member("endpoints")) {
    if (!eps->is_array() || eps->empty()) {
      ctx.error(r.path_of("endpoints"), "expected a non-empty array, got " + json_type_name(*eps));
    } else {
      c.endpoints.clear();
      for (size_t i = 0; i < eps->size(); ++i) {
        ObjectReader e(ctx, (*eps)[i], pointer(r.path_of("endpoints"), i));
        Endpoint ep;
        if (e.require("url") && e.read("url", ep.url)) {
          const char* reason = nullptr;
          if (!ua::parse_endpoint_url(ep.url, &reason))
            ctx.error(e.path_of("url"), "invalid endpoint URL: " + std::string(reason));
        }
        read_security_offers(e, ep);
        if (e.member("allow_anonymous")) {
          bool allow = true;
          if (e.read("allow_anonymous", allow)) anonymous_overrides.emplace_back(c.endpoints.size(), allow);
        }
        c.endpoints.push_back(std::move(ep));
      }
    }
  }
  read_settings(r, top_level_settings(), c);
  read_limits(r, c.limits);
  read_section(r, connection_settings(), c.connections);
  if (const Json* s = r.member("security")) {
    ObjectReader sr(ctx, *s, r.path_of("security"));
    read_pki(sr, c.pki);
    read_settings(sr, security_settings(), c.security);
  }
  for (auto& e : c.endpoints) e.allow_anonymous = c.security.allow_anonymous;
  for (auto [index, allow] : anonymous_overrides) c.endpoints[index].allow_anonymous = allow;
  // Part 7 deprecates Basic128Rsa15 and Basic256 (SHA-1, PKCS#1 v1.5 encryption): offered only on request.
  if (!c.security.allow_deprecated_policies) {
    for (size_t i = 0; i < c.endpoints.size(); ++i) {
      for (const auto& offer : c.endpoints[i].offers) {
        const security::Policy& p = security::policy(offer.policy);
        if (p.deprecated) {
          ctx.error(pointer(r.path_of("endpoints"), i) + "/security_policies",
                    "SecurityPolicy " + std::string(p.name) +
                        " is deprecated (Part 7): set security.allow_deprecated_policies to offer it");
          break;
        }
      }
    }
  }
  if (const Json* users = r.member("users")) {
    if (!users->is_array()) {
      ctx.error(r.path_of("users"), "expected an array, got " + json_type_name(*users));
    } else {
      for (size_t i = 0; i < users->size(); ++i) {
        ObjectReader u(ctx, (*users)[i], pointer(r.path_of("users"), i));
        User user;
        u.require("name");
        u.read("name", user.name);
        // Never a clear-text password: only the salted hash, which is checked for its form here.
        if (u.member("password"))
          ctx.error(u.path_of("password"), "clear-text passwords are not accepted: use password_hash");
        if (u.read("password_hash", user.password_hash) && !is_password_hash(user.password_hash)) {
          ctx.error(u.path_of("password_hash"), "not a pbkdf2-sha256$<iterations>$<salt>$<hash> string");
        }
        std::string thumbprint;
        if (u.read("certificate_thumbprint", thumbprint)) {
          user.certificate_thumbprint = parse_thumbprint(thumbprint);
          if (!user.certificate_thumbprint) {
            ctx.error(u.path_of("certificate_thumbprint"),
                      "not a SHA-1 thumbprint (40 hexadecimal digits, optionally separated by ':')");
          }
        }
        if (!u.has("password_hash") && !u.has("certificate_thumbprint")) {
          ctx.error(u.path(), "a user needs password_hash, certificate_thumbprint or both");
        }
        std::vector<std::string> roles;
        if (u.read("roles", roles)) {
          user.roles = role::kAuthenticatedUser;  // every authenticated user has it (Part 3 §4.8.2)
          for (const auto& name : roles) {
            const auto bit = role_bit(name);
            if (!bit) {
              ctx.error(u.path_of("roles"), unknown_role(name));
            } else if (*bit == role::kAnonymous) {
              ctx.error(u.path_of("roles"), "the Anonymous role belongs to anonymous sessions, not to users");
            } else {
              user.roles |= *bit;
            }
          }
        }
        for (const auto& other : c.users) {
          if (other.name == user.name) ctx.error(u.path_of("name"), "duplicate user \"" + user.name + "\"");
          if (user.certificate_thumbprint && other.certificate_thumbprint == user.certificate_thumbprint) {
            ctx.error(u.path_of("certificate_thumbprint"),
                      "the same certificate as user \"" + other.name + "\"");
          }
        }
        c.users.push_back(std::move(user));
      }
    }
  }
  if (const Json* l = r.member("logging")) {
    ObjectReader lr(ctx, *l, r.path_of("logging"));
    if (lr.read("level", c.logging.level)) {
      static constexpr std::string_view kLevels[] = {"trace", "debug", "info", "warn", "error"};
      if (std::find(std::begin(kLevels), std::end(kLevels), c.logging.level) == std::end(kLevels)) {
        ctx.error(lr.path_of("level"),
                  "unknown log level \"" + c.logging.level + "\" (trace, debug, info, warn, error)");
      }
    }
    lr.read("file", c.logging.file);
    read_settings(lr, logging_settings(), c.logging);
  }
  read_section(r, shutdown_settings(), c.shutdown);
  read_section(r, scheduling_settings(), c.scheduling);
  read_section(r, diagnostics_settings(), c.diagnostics);
  read_section(r, audit_settings(), c.audit);
  read_http(r, c.http);
  c.namespaces = {addressspace::kNamespace0Uri, c.application_uri};
  std::vector<std::string> extra;
  if (r.read("namespaces", extra)) {
    for (auto& u : extra) {
      if (std::find(c.namespaces.begin(), c.namespaces.end(), u) == c.namespaces.end())
        c.namespaces.push_back(u);
    }
  }
  r.read("node_files", c.node_file_patterns);
}
}  // namespace

bool split_listen_address(std::string_view text, std::string& host, uint16_t& port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return false;
  std::string_view h = text.substr(0, colon);
  const std::string_view p = text.substr(colon + 1);
  if (h.front() == '[') {
    if (h.size() < 3 || h.back() != ']') return false;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    return false;  // an IPv6 address needs its brackets
  }
  uint32_t value = 0;
  for (char ch : p) {
    if (ch < '0' || ch > '9' || value > 65535) return false;
    value = value * 10 + static_cast<uint32_t>(ch - '0');
  }
  if (value > 65535) return false;
  host = std::string(h);
  port = static_cast<uint16_t>(value);
  return true;
}

std::vector<std::filesystem::path> expand_glob(const std::filesystem::path& base_dir,
                                               const std::string& pattern) {
  namespace fs = std::filesystem;
  fs::path p(pattern);
  if (p.is_relative()) p = base_dir / p;
  std::vector<fs::path> out;
  const std::string leaf = p.filename().string();
  if (leaf.find_first_of("*?") == std::string::npos) {
    if (fs::is_regular_file(p)) out.push_back(p);
    return out;
  }
  std::error_code ec;
  for (fs::directory_iterator it(p.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && glob_match(leaf, it->path().filename().string())) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

void (*bulk_load_observer)(bool bulk) = nullptr;

// Tells the observer of a bulk load's start and end.
class BulkLoad {
 public:
  explicit BulkLoad(bool bulk) : bulk_(bulk && bulk_load_observer) {
    if (bulk_) bulk_load_observer(true);
  }
  ~BulkLoad() {
    if (bulk_) bulk_load_observer(false);
  }
  BulkLoad(const BulkLoad&) = delete;
  BulkLoad& operator=(const BulkLoad&) = delete;

 private:
  bool bulk_;
};

}  // namespace

void set_bulk_load_observer(void (*observer)(bool bulk)) {
  bulk_load_observer = observer;
}

LoadResult load_config_text(const std::string& text, const std::string& file_name,
                            const std::filesystem::path& base_dir) {
  LoadResult result;
  Context ctx(file_name, result.errors);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    ctx.error("", json_syntax_error(e));
    return result;
  }
  {
    ObjectReader r(ctx, j, "");
    read_server(r, result.config);
  }
  auto& pki_dir = result.config.pki.directory;
  pki_dir = pki_dir.empty()         ? default_pki_directory(base_dir)
            : pki_dir.is_relative() ? base_dir / pki_dir
                                    : pki_dir;
  result.config.condition_state_file = default_state_path(base_dir, kConditionStateFile);
  // A bulk load is announced before its files are read (set_bulk_load_observer) and its end once its nodes
  // are resolved and checked.
  uintmax_t node_file_bytes = 0;
  for (const auto& pattern : result.config.node_file_patterns) {
    for (const auto& f : expand_glob(base_dir, pattern)) {
      std::error_code ec;
      const uintmax_t size = std::filesystem::file_size(f, ec);
      if (!ec) node_file_bytes += size;
    }
  }
  const BulkLoad bulk(node_file_bytes > kBulkLoadBytes);
  // Every node file read first, in the order of the configuration, each in one piece (a NodeSet2 file may
  // be hundreds of megabytes; pugixml parses this very buffer in place), so that room for all the
  // NodeSet2 files' nodes is reserved once, before the first is converted. A pattern that matches
  // nothing keeps its place among them for its error.
  struct NodeFile {
    std::filesystem::path path;
    std::string text;
    std::optional<size_t> missing;  // the index of a pattern that matches no file
  };
  std::vector<NodeFile> node_files;
  NodeSetCounts counts;
  for (size_t i = 0; i < result.config.node_file_patterns.size(); ++i) {
    const auto& pattern = result.config.node_file_patterns[i];
    const auto files = expand_glob(base_dir, pattern);
    if (files.empty() && pattern.find_first_of("*?") == std::string::npos) node_files.push_back({{}, {}, i});
    for (const auto& f : files) {
      if (std::find(result.config.node_files.begin(), result.config.node_files.end(), f) !=
          result.config.node_files.end())
        continue;
      result.config.node_files.push_back(f);
      std::ifstream in(f, std::ios::binary | std::ios::ate);
      std::string text(in ? static_cast<size_t>(std::max<std::streamoff>(in.tellg(), 0)) : 0, '\0');
      in.seekg(0);
      in.read(text.data(), static_cast<std::streamsize>(text.size()));
      text.resize(in ? text.size() : static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
      if (f.extension() == ".xml") count_nodeset_elements(text, counts);
      node_files.push_back({f, std::move(text), std::nullopt});
    }
  }
  // The nodes and references of the NodeSet2 files, and generous room for those resolve_nodesets() adds: a
  // NamespaceMetadata object with its properties per model, an encoding and a DataTypeDescription per
  // DataType. An ImportedNode is some 500 bytes: a vector that outgrows its room moves every one.
  if (counts.nodes > 0) {
    ImportedModels& imported = result.config.imported;
    imported.nodes.reserve(counts.nodes + 32 * counts.models + 4 * counts.data_types);
    imported.references.reserve(counts.references + 64 * counts.models + 8 * counts.data_types);
    // The references' NodeIds: about one per node, the nodes' own, and those of other models.
    const size_t ids = counts.nodes + 64 * counts.models + 8 * counts.data_types;
    imported.ids.reserve(ids);
    imported.id_slots.resize(std::bit_ceil(ids * 3 / 2 + 1));
  }
  for (NodeFile& f : node_files) {
    if (f.missing) {
      ctx.error(pointer("/node_files", *f.missing),
                "node file \"" + result.config.node_file_patterns[*f.missing] + "\" does not exist");
      continue;
    }
    // `*.xml`: a NodeSet2 file (docs/CONFIGURATION.md, "NodeSet2 node files"); anything else is JSON.
    if (f.path.extension() == ".xml") {
      load_nodeset_file_text(std::move(f.text), f.path.string(), result);
    } else {
      load_node_file_text(f.text, f.path.string(), result);
    }
    std::string().swap(f.text);
  }
  resolve_nodesets(result);
  check_references(result);
  return result;
}

std::vector<std::string> security_warnings(const ServerConfig& c) {
  std::vector<std::string> out;
  bool none_endpoint = false;
  for (const auto& e : c.endpoints) {
    for (const auto& offer : e.offers) {
      const security::Policy& p = security::policy(offer.policy);
      none_endpoint |= offer.mode == SecurityMode::None;
      if (p.deprecated) {
        out.push_back("endpoint " + e.url + " offers the deprecated SecurityPolicy " + std::string(p.name) +
                      " (security.allow_deprecated_policies)");
      }
    }
  }
  for (const auto& e : c.endpoints) {
    const bool none = std::any_of(e.offers.begin(), e.offers.end(),
                                  [](const SecurityOffer& o) { return o.mode == SecurityMode::None; });
    const auto url = ua::parse_endpoint_url(e.url);
    if (!none || !url) continue;
    const std::string_view h = url->host;
    const bool loopback = h == "localhost" || h.starts_with("127.") || h == "::1" || h == "0:0:0:0:0:0:0:1";
    if (!loopback) {
      // On Linux an IPv6 wildcard socket takes IPv4 too (it is not v6-only): [::] is every interface.
      out.push_back("endpoint " + e.url +
                    " offers SecurityPolicy None beyond loopback: anything on the network path reads and "
                    "changes its traffic, the sessions of logged-in users included");
    }
  }
  bool passwords = false, certificates = false;
  for (const auto& u : c.users) {
    passwords |= !u.password_hash.empty();
    certificates |= u.certificate_thumbprint.has_value();
  }
  if (c.security.allow_plaintext_passwords && passwords && none_endpoint) {
    out.push_back(
        "INSECURE: security.allow_plaintext_passwords lets clients send passwords in clear on SecurityPolicy "
        "None endpoints");
  }
  bool anonymous = false;
  for (const auto& e : c.endpoints) {
    anonymous |= e.allow_anonymous;
    // Part 4 §7.42: a session is activated with one of the endpoint's user token policies; with none, no
    // client can ever use the endpoint.
    if (!e.allow_anonymous && !passwords && !certificates) {
      out.push_back(
          "endpoint " + e.url +
          " offers no user token policy (no anonymous access, no users): no client can activate a "
          "session there; add users (docs/OPERATIONS.md, \"Connect a remote client\") or allow_anonymous");
    }
  }
  if (anonymous && c.security.anonymous_write) {
    out.push_back("anonymous sessions may write every writable variable (security.anonymous_write)");
  }
  return out;
}

LoadResult load_config(const std::filesystem::path& server_file) {
  std::ifstream in(server_file);
  if (!in) {
    LoadResult r;
    r.errors.push_back({server_file.string(), "", "cannot open file"});
    return r;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return load_config_text(ss.str(), server_file.string(), server_file.parent_path());
}

void check_references(LoadResult& result) {
  instantiate_imported_types(result);
  expand_alarms(result);
  auto& nodes = result.config.nodes;
  struct Where {
    size_t index;
    uint32_t n;
  };
  std::unordered_map<ua::NodeId, Where> seen;
  std::map<std::string, size_t> types;  // object types by browse name
  std::unordered_map<ua::NodeId, size_t>
      bulk_patterns;  // a bulk declaration's own id: parent of its properties
  auto resolver = [&](std::string_view uri) -> std::optional<uint16_t> {
    for (size_t i = 0; i < result.config.namespaces.size(); ++i) {
      if (result.config.namespaces[i] == uri) return static_cast<uint16_t>(i);
    }
    return std::nullopt;
  };
  // NodeSet2 nodes: NodeId -> index, and the objects of FolderType; only the node files' nodes ask.
  std::unordered_map<ua::NodeId, size_t> imported;
  std::unordered_set<ua::NodeId> imported_folders;
  if (!nodes.empty()) {
    for (size_t i = 0; i < result.config.imported.nodes.size(); ++i)
      imported.emplace(result.config.imported.nodes[i].spec.node_id, i);
    const ImportedModels& m = result.config.imported;
    for (const ImportedReference& r : m.references) {
      if (m.id(r.type).is_ns0(ua::id::HasTypeDefinition) && m.id(r.target).is_ns0(ua::id::FolderType))
        imported_folders.insert(m.id(r.source));
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeDecl& d = nodes[i];
    if (d.is_type) types.emplace(std::string(d.browse_name.name.view()), i);
    const uint32_t count = d.count ? d.count : 1;
    if (d.count) bulk_patterns.emplace(d.node_id, i);
    for (uint32_t k = 0; k < count; ++k) {
      ua::NodeId id = d.node_id;
      if (d.count) id = bulk_node_id(d, d.start + k, resolver);
      if (ns0_store().find(id) != addressspace::kNoNode) {
        result.errors.push_back(
            {d.file, d.path, "NodeId " + id.to_string() + " is already used by namespace 0"});
        break;
      }
      if (auto imp = imported.find(id); imp != imported.end()) {
        const ImportedNode& other = result.config.imported.nodes[imp->second];
        result.errors.push_back({d.file, d.path,
                                 "duplicate NodeId " + id.to_string() + ", first defined in " +
                                     result.config.imported.where(other.file, other.line)});
        break;
      }
      auto [it, inserted] = seen.emplace(id, Where{i, k});
      if (!inserted) {
        const NodeDecl& first = nodes[it->second.index];
        result.errors.push_back({d.file, d.path,
                                 "duplicate NodeId " + id.to_string() + ", first declared in " + first.file +
                                     " at " + first.path});
        break;
      }
    }
  }
  for (NodeDecl& d : nodes) {
    if (!d.type_name.empty()) {
      auto it = types.find(d.type_name);
      if (it == types.end()) {
        if (!result.unparsed_files)
          result.errors.push_back(
              {d.file, d.path + (d.is_type ? "/base" : "/type_definition"),
               (d.is_type ? "unknown base type \"" : "unknown type definition \"") + d.type_name + "\""});
      } else if (d.is_type) {
        d.parent = nodes[it->second].node_id;
      } else {
        d.type_definition = nodes[it->second].node_id;
      }
    }
    if (d.is_type) continue;
    // The parent: namespace 0 or a node of a node file.
    const addressspace::NodeIndex p0 = ns0_store().find(d.parent);
    if (p0 == addressspace::kNoNode && imported.count(d.parent)) {
      // A node of a NodeSet2 file: Organizes below its folders, as below namespace 0's.
      if (d.reference_type.is_null()) {
        d.reference_type = ua::NodeId(0, d.kind == NodeKind::Property       ? ua::id::HasProperty
                                         : imported_folders.count(d.parent) ? ua::id::Organizes
                                                                            : ua::id::HasComponent);
      }
      continue;
    }
    auto pit = seen.find(d.parent);
    if (pit == seen.end() && d.count) {
      auto bit = bulk_patterns.find(d.parent);
      if (bit != bulk_patterns.end())
        pit = seen.find(bulk_node_id(nodes[bit->second], nodes[bit->second].start, resolver));
    }
    if (p0 == addressspace::kNoNode && pit == seen.end()) {
      // A parent in a file that did not parse is not reported as missing: the syntax error is the problem.
      if (!result.unparsed_files) {
        result.errors.push_back(
            {d.file, d.path + "/parent", "parent " + d.parent.to_string() + " does not exist"});
      }
      continue;
    }
    if (d.reference_type.is_null()) {
      bool folder = false;
      if (p0 != addressspace::kNoNode) {
        folder = ns0_store().forward_target(p0, ns0_store().find(ua::NodeId(0, ua::id::HasTypeDefinition))) ==
                 ns0_store().find(ua::NodeId(0, ua::id::FolderType));
      } else {
        folder = nodes[pit->second.index].kind == NodeKind::Folder;
      }
      d.reference_type = ua::NodeId(0, d.kind == NodeKind::Property ? ua::id::HasProperty
                                       : folder                     ? ua::id::Organizes
                                                                    : ua::id::HasComponent);
    }
  }
}

ua::NodeId::NamespaceResolver namespace_resolver(const std::vector<std::string>& namespaces) {
  return [ns = &namespaces](std::string_view uri) -> std::optional<uint16_t> {
    for (size_t i = 0; i < ns->size(); ++i) {
      if ((*ns)[i] == uri) return static_cast<uint16_t>(i);
    }
    return std::nullopt;
  };
}

ua::NodeId bulk_node_id(const NodeDecl& d, uint32_t n, const ua::NodeId::NamespaceResolver& resolver) {
  std::string text;
  if (!d.id_pattern.empty()) {
    text = d.id_pattern;
  } else {
    text = std::string(d.node_id.string());
  }
  const auto at = text.find("{n}");
  if (at != std::string::npos) text.replace(at, 3, std::to_string(n));
  if (!d.id_pattern.empty()) {
    auto parsed = ua::NodeId::parse(text, resolver);
    return parsed ? *parsed.value : ua::NodeId();
  }
  return ua::NodeId(d.node_id.namespace_index(), ua::String(text));
}

}  // namespace opcuad::config
