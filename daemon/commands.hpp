#pragma once
// What each opcuad command does once its command line is parsed (daemon/cli.hpp). Each returns an exit
// code of cli::ExitCode.

#include <filesystem>
#include <string>

#include "config/config.hpp"

namespace opcuad::cli {

// Options every command sees.
struct GlobalOptions {
  std::string config_file;  // empty: the installed server file if it exists, else the built-in demo
  std::string log_level;    // empty: the configuration's logging.level
};

// The configuration a command works on: --config FILE when given; else the installed server file when it
// exists; else the built-in demo. `source` names it in messages. Commands that need the configuration
// (the PKI commands find the PKI directory there) load it through this, so all agree on which file.
struct LoadedConfig {
  config::LoadResult result;
  std::string source;
  std::filesystem::path file;  // the server file read; empty for the built-in configuration
};
LoadedConfig load_configuration(const GlobalOptions& options);
// Logs every problem of a configuration that did not load; false when there is none.
bool report_problems(const LoadedConfig& loaded);

// Loads the configuration and serves until SIGINT or SIGTERM.
int run_daemon(const GlobalOptions& options);
// Loads and validates the configuration; prints a summary on standard output or every problem on
// standard error.
int check_config(const GlobalOptions& options);
// Prints the packaged server file (or its demo node file), which loads as is.
int print_default_config(bool node_file);
// Reads a password (daemon/password_prompt.hpp) and prints its PBKDF2 hash for the users list.
int hash_password();

}  // namespace opcuad::cli
