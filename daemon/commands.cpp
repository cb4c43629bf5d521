#include "daemon/commands.hpp"

#include <fmt/core.h>
#include <openssl/crypto.h>

#include <filesystem>
#include <system_error>

#include "config/config.hpp"
#include "config/password.hpp"
#include "daemon/build_info.hpp"
#include "daemon/cli.hpp"
#include "daemon/daemon.hpp"
#include "daemon/install_paths.hpp"
#include "daemon/log.hpp"
#include "daemon/password_prompt.hpp"

namespace opcuad::cli {

LoadedConfig load_configuration(const GlobalOptions& options) {
  LoadedConfig loaded;
  std::filesystem::path file = options.config_file;
  if (file.empty()) {
    std::error_code ec;
    const std::filesystem::path installed{std::string(install::kDefaultConfigFile)};
    if (std::filesystem::exists(installed, ec)) file = installed;
  }
  if (file.empty()) {
    loaded.source =
        "built-in default (opc.tcp://0.0.0.0:4840, SecurityPolicy None, anonymous, demo namespace)";
    loaded.result.config = config::default_config();
  } else {
    loaded.source = file.string();
    loaded.file = file;
    loaded.result = config::load_config(file);
  }
  return loaded;
}

bool report_problems(const LoadedConfig& loaded) {
  if (loaded.result.ok()) return false;
  for (const auto& e : loaded.result.errors) log::error("{}", e.to_string());
  log::error("{}: {} problem(s)", loaded.source, loaded.result.errors.size());
  return true;
}

int run_daemon(const GlobalOptions& options) {
  log::info("opcuad {} ({} build)", build::kVersion, build::kBuildType);
  const LoadedConfig loaded = load_configuration(options);
  log::info("configuration: {}", loaded.source);
  if (report_problems(loaded)) {
    log::error("not starting");
    return kExitInvalidConfig;
  }
  const config::ServerConfig& config = loaded.result.config;
  // --log-level wins over the file's `logging.level` (whose name the loader has checked).
  if (options.log_level.empty()) {
    if (const auto level = log::parse_level(config.logging.level)) log::set_level(*level);
  }
  if (!config.logging.file.empty()) {
    if (const auto failed = log::open_file(config.logging.file)) {
      log::error("{}: not starting", *failed);
      return kExitFailure;
    }
  }
  Daemon daemon(config);
  // SIGHUP re-reads the same file; --log-level keeps winning over its logging.level.
  daemon.set_reload_source(Daemon::ReloadSource{loaded.file, !options.log_level.empty()});
  if (!daemon.start()) return kExitFailure;
  return daemon.run();
}

int check_config(const GlobalOptions& options) {
  const LoadedConfig loaded = load_configuration(options);
  if (report_problems(loaded)) return kExitInvalidConfig;
  const auto& c = loaded.result.config;
  fmt::print("{}: valid: {} endpoint(s), {} user(s), {} node declaration(s) in {} node file(s)\n",
             loaded.source, c.endpoints.size(), c.users.size(), c.nodes.size(), c.node_files.size());
  if (!c.imported.models.empty()) {
    fmt::print("{}: {} node(s) of {} model(s) from {} NodeSet2 file(s):", loaded.source,
               c.imported.nodes.size(), c.imported.models.size(), c.imported.files.size());
    for (const auto& m : c.imported.models) fmt::print(" {} {}", m.uri, m.version);
    fmt::print("\n");
  }
  // What the daemon warns about at every start, before it starts (the file is still valid).
  for (const auto& w : config::security_warnings(c))
    fmt::print(stderr, "{}: warning: {}\n", loaded.source, w);
  return kExitOk;
}

int print_default_config(bool node_file) {
  fmt::print("{}", node_file ? install::kPackagedNodeFile : install::kPackagedServerFile);
  return kExitOk;
}

int hash_password() {
  PasswordInput input = read_new_password();
  if (!input.password) {
    fmt::print(stderr, "opcuad hash-password: {}\n", input.error);
    return kExitFailure;
  }
  const std::string hash = config::hash_password(*input.password);
  OPENSSL_cleanse(input.password->data(), input.password->size());
  if (hash.empty()) {
    fmt::print(stderr, "opcuad hash-password: hashing failed (OpenSSL)\n");
    return kExitFailure;
  }
  fmt::print("{}\n", hash);
  return kExitOk;
}

}  // namespace opcuad::cli
