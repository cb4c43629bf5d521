// opcuad: the command line (daemon/cli.hpp) and nothing else; the commands live in daemon/commands.cpp.
#include "daemon/alloc_counters.hpp"
#include "daemon/cli.hpp"
#include "daemon/large_pages.hpp"

int main(int argc, char** argv) {
  // Before anything touches OpenSSL: its allocations count in the diagnostics counters too.
  opcuad::alloc_counters::count_openssl();
  opcuad::large_pages::observe_bulk_loads();
  return opcuad::cli::main(argc, argv);
}
