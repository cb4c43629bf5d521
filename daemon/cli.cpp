#include "daemon/cli.hpp"

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/build_info.hpp"
#include "daemon/commands.hpp"
#include "daemon/install_paths.hpp"
#include "daemon/log.hpp"

namespace opcuad::cli {

namespace {

// The commands of one command line: each a CLI11 subcommand and what runs when it was the one given.
// A group of commands (e.g. `opcuad pki show|list|trust|...`) is a subcommand that requires one of its
// own; its members are added here with the group as their parent, and only they run.
class CommandTable {
 public:
  CLI::App* add(CLI::App& parent, std::string name, std::string description, std::function<int()> run) {
    CLI::App* app = parent.add_subcommand(std::move(name), std::move(description));
    commands_.push_back({app, std::move(run)});
    return app;
  }
  CLI::App* add_group(CLI::App& parent, std::string name, std::string description) {
    CLI::App* group = parent.add_subcommand(std::move(name), std::move(description));
    group->require_subcommand(1);
    return group;
  }
  // The command the line named, if any.
  const std::function<int()>* parsed() const {
    for (const auto& c : commands_) {
      if (c.app->parsed()) return &c.run;
    }
    return nullptr;
  }

 private:
  struct Command {
    CLI::App* app;
    std::function<int()> run;
  };
  std::vector<Command> commands_;
};

std::string footer() {
  return "Global options (before or after the command): -c,--config FILE, --log-level LEVEL.\n"
         "Configuration: without --config, " +
         std::string(install::kDefaultConfigFile) +
         " if it exists, else a built-in demo (opc.tcp://0.0.0.0:4840, SecurityPolicy None, anonymous).\n"
         "Exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 invalid configuration.\n"
         "See opcuad(8) and docs/OPERATIONS.md.";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"opcuad: an OPC UA server daemon. Without a command, it serves (`run`).", "opcuad"};
  app.set_version_flag("--version", std::string("opcuad ") + std::string(build::kVersion));
  app.footer(footer());
  app.require_subcommand(0, 1);
  // Subcommands pass options they do not know up to here, so `opcuad check-config --config F` works too.
  app.fallthrough();

  GlobalOptions options;
  app.add_option("-c,--config", options.config_file, "server file (JSON, docs/CONFIGURATION.md)")
      ->type_name("FILE");
  app.add_option("--log-level", options.log_level, "log threshold, overriding the file's logging.level")
      ->type_name("LEVEL")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  // The flags of earlier versions, kept as hidden aliases (scripts and the test harnesses use them).
  bool legacy_check = false;
  bool legacy_hash = false;
  app.add_flag("--check-config", legacy_check, "same as the check-config command")->group("");
  app.add_flag("--hash-password", legacy_hash, "same as the hash-password command")->group("");

  CommandTable commands;
  commands.add(app, "run", "serve until SIGINT or SIGTERM (the default command)",
               [&] { return run_daemon(options); });
  commands.add(app, "check-config", "load and validate the configuration, report every problem, and exit",
               [&] { return check_config(options); });
  bool node_file = false;
  commands
      .add(app, "print-default-config",
           "print the packaged, commented server file (a starting point that loads as is)",
           [&] { return print_default_config(node_file); })
      ->add_flag("--node-file", node_file, "print the packaged demo node file (nodes.d/demo.json) instead");
  commands.add(app, "hash-password",
               "read a password (twice, without echo, from a terminal; else one line of standard input) and "
               "print the password_hash for the users list",
               [] { return hash_password(); });
  // A group of commands registers the same way, e.g. the certificate commands of daemon/pki_command.hpp:
  //   CLI::App* pki = commands.add_group(app, "pki", "the server certificate and the trust lists");
  //   commands.add(*pki, "list", "...", [&] { return pki_list(load_configuration(options)); });
  // The group requires one of its commands; `opcuad pki --help` lists them.

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end the parse with exit code 0; anything else is a usage error.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (legacy_check && legacy_hash) {
    fmt::print(stderr, "opcuad: --check-config and --hash-password exclude each other\n");
    return kExitUsage;
  }
  if (!options.log_level.empty()) {
    if (const auto level = log::parse_level(options.log_level)) log::set_level(*level);
  }
  if (const auto* run = commands.parsed()) {
    if (legacy_check || legacy_hash) {
      fmt::print(stderr, "opcuad: --check-config and --hash-password do not go with a command\n");
      return kExitUsage;
    }
    return (*run)();
  }
  if (legacy_check) return check_config(options);
  if (legacy_hash) return hash_password();
  return run_daemon(options);
}

}  // namespace opcuad::cli
