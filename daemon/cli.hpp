#pragma once
// The command line of opcuad (opcuad(8), docs/OPERATIONS.md):
//
//   opcuad [--config FILE] [--log-level LEVEL] [run]     serve (the default command)
//   opcuad [--config FILE] check-config                   validate, report every problem, exit
//   opcuad print-default-config [--node-file]             the packaged, commented starting point
//   opcuad hash-password                                  a password hash for the users list
//   opcuad --version | --help | COMMAND --help
//
// CLI11 parses; this layer only says which commands exist and maps their outcomes to the exit codes
// below. Global options may stand before or after the command.

namespace opcuad::cli {

// Exit codes, the same for every command (documented in opcuad(8)).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,  // a runtime failure: a socket that cannot be bound, a log file that cannot be opened
  kExitUsage = 2,    // the command line is wrong
  kExitInvalidConfig = 3,  // the configuration does not load or does not validate
};

int main(int argc, char** argv);

}  // namespace opcuad::cli
