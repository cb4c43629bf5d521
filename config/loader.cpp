// The server file, node-file globs and the checks that span files.
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_map>

#include "addressspace/namespace0.hpp"
#include "config/config.hpp"
#include "config/json_reader.hpp"
#include "config/password.hpp"
#include "config/type_names.hpp"
#include "ua/endpoint_url.hpp"
#include "ua/generated/node_ids.hpp"

namespace opcuad::config {

namespace {
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
  r.read_int("max_sessions", l.max_sessions);
  r.read_int("max_subscriptions", l.max_subscriptions);
  r.read_int("max_monitored_items", l.max_monitored_items);
  r.read_int("max_message_size", l.max_message_size);
  r.read_int("max_chunk_count", l.max_chunk_count);
  r.read_int("max_array_length", l.max_array_length);
  r.read_int("max_string_length", l.max_string_length);
  r.read_int("max_byte_string_length", l.max_byte_string_length);
  r.read_int("max_browse_continuation_points", l.max_browse_continuation_points);
  r.read("min_sampling_interval_ms", l.min_sampling_interval_ms);
  r.read("min_session_timeout_ms", l.min_session_timeout_ms);
  r.read("max_session_timeout_ms", l.max_session_timeout_ms);
  if (l.min_session_timeout_ms <= 0 || l.max_session_timeout_ms < l.min_session_timeout_ms) {
    parent.context().error(parent.path_of("limits") + "/min_session_timeout_ms",
                           "min_session_timeout_ms must be positive and not above max_session_timeout_ms");
  }
  r.read_int("max_subscriptions_per_session", l.max_subscriptions_per_session);
  r.read_int("max_monitored_items_per_subscription", l.max_monitored_items_per_subscription);
  r.read_int("max_monitored_items_per_session", l.max_monitored_items_per_session);
  r.read_int("max_monitored_item_queue_size", l.max_monitored_item_queue_size);
  r.read_int("max_publish_requests_per_session", l.max_publish_requests_per_session);
  r.read_int("max_subscriptions_per_call", l.max_subscriptions_per_call);
  r.read("parked_session_lifetime_ms", l.parked_session_lifetime_ms);
  r.read_int("max_parked_sessions", l.max_parked_sessions);
  if (l.max_monitored_item_queue_size == 0 || l.max_monitored_item_queue_size > 65535) {
    parent.context().error(parent.path_of("limits") + "/max_monitored_item_queue_size",
                           "max_monitored_item_queue_size must be 1..65535");
  }
  if (l.max_publish_requests_per_session == 0) {
    parent.context().error(parent.path_of("limits") + "/max_publish_requests_per_session",
                           "max_publish_requests_per_session must be at least 1");
  }
  if (!(l.parked_session_lifetime_ms >= 0)) {
    parent.context().error(parent.path_of("limits") + "/parked_session_lifetime_ms",
                           "parked_session_lifetime_ms must not be negative");
  }
  auto& o = l.operations;
  r.read_int("max_nodes_per_read", o.max_nodes_per_read);
  r.read_int("max_nodes_per_write", o.max_nodes_per_write);
  r.read_int("max_nodes_per_browse", o.max_nodes_per_browse);
  r.read_int("max_nodes_per_method_call", o.max_nodes_per_method_call);
  r.read_int("max_nodes_per_register_nodes", o.max_nodes_per_register_nodes);
  r.read_int("max_nodes_per_translate_browse_paths", o.max_nodes_per_translate_browse_paths);
  r.read_int("max_monitored_items_per_call", o.max_monitored_items_per_call);
  r.read_int("max_references_per_node", l.max_references_per_node);
  r.read_int("max_references_per_browse", l.max_references_per_browse);
  r.read_int("max_translate_matches", l.max_translate_matches);
  r.read_int("max_translate_references", l.max_translate_references);
  r.read_int("max_decoded_request_bytes", l.max_decoded_request_bytes);
  const auto positive = [&](const char* key, uint32_t value) {
    if (value == 0) parent.context().error(parent.path_of("limits") + "/" + key, std::string(key) + " must be at least 1");
  };
  positive("max_references_per_node", l.max_references_per_node);
  positive("max_references_per_browse", l.max_references_per_browse);
  // Part 4 §5.8.4.4: a server should allow at least 10 matches before answering Bad_TooManyMatches.
  if (l.max_translate_matches < 10) {
    parent.context().error(parent.path_of("limits") + "/max_translate_matches",
                           "max_translate_matches must be at least 10 (Part 4 §5.8.4.4)");
  }
  positive("max_translate_references", l.max_translate_references);
  r.read_int("max_unactivated_sessions", l.max_unactivated_sessions);
  r.read_int("max_unactivated_sessions_per_address", l.max_unactivated_sessions_per_address);
  r.read("unactivated_session_timeout_ms", l.unactivated_session_timeout_ms);
  r.read_int("max_queued_logins", l.max_queued_logins);
  r.read_int("max_failed_logins_per_address", l.max_failed_logins_per_address);
  r.read("failed_login_window_ms", l.failed_login_window_ms);
  if (!(l.unactivated_session_timeout_ms > 0)) {
    parent.context().error(parent.path_of("limits") + "/unactivated_session_timeout_ms",
                           "unactivated_session_timeout_ms must be positive");
  }
  if (!(l.failed_login_window_ms >= 0)) {
    parent.context().error(parent.path_of("limits") + "/failed_login_window_ms",
                           "failed_login_window_ms must not be negative");
  }
  positive("max_queued_logins", l.max_queued_logins);
  if (l.max_decoded_request_bytes < (1u << 20)) {
    parent.context().error(parent.path_of("limits") + "/max_decoded_request_bytes",
                           "max_decoded_request_bytes must be at least 1048576");
  }
}

void read_connections(ObjectReader& parent, Connections& c) {
  const Json* j = parent.member("connections");
  if (!j) return;
  ObjectReader r(parent.context(), *j, parent.path_of("connections"));
  r.read_int("max_connections", c.max_connections);
  r.read_int("max_connections_per_address", c.max_connections_per_address);
  r.read_int("max_message_size_before_session", c.max_message_size_before_session);
  // A timeout of 0 would close every connection at the first tick: at least one millisecond.
  for (auto [key, value] :
       {std::pair{"hello_timeout_ms", &c.hello_timeout_ms}, std::pair{"open_timeout_ms", &c.open_timeout_ms},
        std::pair{"session_activation_timeout_ms", &c.session_activation_timeout_ms}}) {
    int64_t v = 0;
    if (r.read_int(key, v, 1, UINT32_MAX)) *value = static_cast<uint32_t>(v);
  }
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
        // Signing and encryption are not implemented yet: an endpoint that asks for them is refused
        // rather than served in plain text (docs/CONFIGURATION.md, "Not supported yet").
        e.read("security_policies", ep.security_policies);
        for (const auto& p : ep.security_policies) {
          static constexpr std::string_view kPolicies[] = {"None", "Basic128Rsa15", "Basic256", "Basic256Sha256",
                                                           "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"};
          if (std::find(std::begin(kPolicies), std::end(kPolicies), p) == std::end(kPolicies)) {
            ctx.error(e.path_of("security_policies"), "unknown security policy \"" + p + "\"");
          } else if (p != "None") {
            ctx.error(e.path_of("security_policies"),
                      "SecurityPolicy " + p + " is not supported by this version (only None)");
          }
        }
        e.read("security_modes", ep.security_modes);
        for (const auto& m : ep.security_modes) {
          if (m != "None" && m != "Sign" && m != "SignAndEncrypt") {
            ctx.error(e.path_of("security_modes"), "unknown security mode \"" + m + "\" (None, Sign, SignAndEncrypt)");
          } else if (m != "None") {
            ctx.error(e.path_of("security_modes"),
                      "MessageSecurityMode " + m + " is not supported by this version (only None)");
          }
        }
        c.endpoints.push_back(std::move(ep));
      }
    }
  }
  r.read_int("threads", c.threads);
  read_limits(r, c.limits);
  read_connections(r, c.connections);
  if (const Json* s = r.member("security")) {
    ObjectReader sr(ctx, *s, r.path_of("security"));
    // Without signing and encryption there are no certificates to keep: the setting would do nothing.
    if (sr.member("pki_directory")) {
      ctx.error(sr.path_of("pki_directory"),
                "security.pki_directory is not supported by this version (no certificates until signing and "
                "encryption exist)");
    }
    sr.read("allow_anonymous", c.allow_anonymous);
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
        if (u.member("password")) ctx.error(u.path_of("password"), "clear-text passwords are not accepted: use password_hash");
        if (u.require("password_hash") && u.read("password_hash", user.password_hash) &&
            !is_password_hash(user.password_hash)) {
          ctx.error(u.path_of("password_hash"), "not a pbkdf2-sha256$<iterations>$<salt>$<hash> string");
        }
        for (const auto& other : c.users) {
          if (other.name == user.name) ctx.error(u.path_of("name"), "duplicate user \"" + user.name + "\"");
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
        ctx.error(lr.path_of("level"), "unknown log level \"" + c.logging.level + "\" (trace, debug, info, warn, error)");
      }
    }
    lr.read("file", c.logging.file);
    int64_t v = 0;
    if (lr.read_int("rate_limit_burst", v, 0, kMaxRateLimitBurst))
      c.logging.rate_limit_burst = static_cast<uint32_t>(v);
    if (lr.read_int("rate_limit_window_s", v, 1, kMaxRateLimitWindowS)) {
      c.logging.rate_limit_window_s = static_cast<uint32_t>(v);
    }
  }
  if (const Json* sd = r.member("shutdown")) {
    ObjectReader sr(ctx, *sd, r.path_of("shutdown"));
    int64_t grace = 0;
    if (sr.read_int("grace_period_s", grace, 0, kMaxGracePeriodS))
      c.shutdown.grace_period_s = static_cast<uint32_t>(grace);
  }
  if (const Json* s = r.member("scheduling")) {
    ObjectReader sr(ctx, *s, r.path_of("scheduling"));
    sr.read("pin_shards", c.scheduling.pin_shards);
    int64_t priority = 0;
    if (sr.read_int("realtime_priority", priority, 0, 99)) c.scheduling.realtime_priority = static_cast<int>(priority);
  }
  if (const Json* d = r.member("diagnostics")) {
    ObjectReader dr(ctx, *d, r.path_of("diagnostics"));
    dr.read("counters", c.diagnostics.counters);
  }
  c.namespaces = {addressspace::kNamespace0Uri, c.application_uri};
  std::vector<std::string> extra;
  if (r.read("namespaces", extra)) {
    for (auto& u : extra) {
      if (std::find(c.namespaces.begin(), c.namespaces.end(), u) == c.namespaces.end()) c.namespaces.push_back(u);
    }
  }
  r.read("node_files", c.node_file_patterns);
}
}  // namespace

std::vector<std::filesystem::path> expand_glob(const std::filesystem::path& base_dir, const std::string& pattern) {
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

LoadResult load_config_text(const std::string& text, const std::string& file_name, const std::filesystem::path& base_dir) {
  LoadResult result;
  Context ctx(file_name, result.errors);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    ctx.error("", std::string("invalid JSON: ") + e.what());
    return result;
  }
  {
    ObjectReader r(ctx, j, "");
    read_server(r, result.config);
  }
  for (size_t i = 0; i < result.config.node_file_patterns.size(); ++i) {
    const auto& pattern = result.config.node_file_patterns[i];
    const auto files = expand_glob(base_dir, pattern);
    if (files.empty() && pattern.find_first_of("*?") == std::string::npos) {
      ctx.error(pointer("/node_files", i), "node file \"" + pattern + "\" does not exist");
    }
    for (const auto& f : files) {
      if (std::find(result.config.node_files.begin(), result.config.node_files.end(), f) != result.config.node_files.end()) continue;
      result.config.node_files.push_back(f);
      std::ifstream in(f);
      std::stringstream ss;
      ss << in.rdbuf();
      load_node_file_text(ss.str(), f.string(), result);
    }
  }
  check_references(result);
  return result;
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
  auto& nodes = result.config.nodes;
  struct Where {
    size_t index;
    uint32_t n;
  };
  std::unordered_map<ua::NodeId, Where> seen;
  std::map<std::string, size_t> types;  // object types by browse name
  std::unordered_map<ua::NodeId, size_t> bulk_patterns;  // a bulk declaration's own id: parent of its properties
  auto resolver = [&](std::string_view uri) -> std::optional<uint16_t> {
    for (size_t i = 0; i < result.config.namespaces.size(); ++i) {
      if (result.config.namespaces[i] == uri) return static_cast<uint16_t>(i);
    }
    return std::nullopt;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeDecl& d = nodes[i];
    if (d.is_type) types.emplace(std::string(d.browse_name.name.view()), i);
    const uint32_t count = d.count ? d.count : 1;
    if (d.count) bulk_patterns.emplace(d.node_id, i);
    for (uint32_t k = 0; k < count; ++k) {
      ua::NodeId id = d.node_id;
      if (d.count) id = bulk_node_id(d, d.start + k, resolver);
      if (ns0_store().find(id) != addressspace::kNoNode) {
        result.errors.push_back({d.file, d.path, "NodeId " + id.to_string() + " is already used by namespace 0"});
        break;
      }
      auto [it, inserted] = seen.emplace(id, Where{i, k});
      if (!inserted) {
        const NodeDecl& first = nodes[it->second.index];
        result.errors.push_back({d.file, d.path, "duplicate NodeId " + id.to_string() + ", first declared in " +
                                                     first.file + " at " + first.path});
        break;
      }
    }
  }
  for (NodeDecl& d : nodes) {
    if (!d.type_name.empty()) {
      auto it = types.find(d.type_name);
      if (it == types.end()) {
        result.errors.push_back({d.file, d.path + (d.is_type ? "/base" : "/type_definition"),
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
    auto pit = seen.find(d.parent);
    if (pit == seen.end() && d.count) {
      auto bit = bulk_patterns.find(d.parent);
      if (bit != bulk_patterns.end()) pit = seen.find(bulk_node_id(nodes[bit->second], nodes[bit->second].start, resolver));
    }
    if (p0 == addressspace::kNoNode && pit == seen.end()) {
      result.errors.push_back({d.file, d.path + "/parent", "parent " + d.parent.to_string() + " does not exist"});
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
