// opcuad: the command line (daemon/cli.hpp) and nothing else; the commands live in daemon/commands.cpp.
#include "daemon/cli.hpp"

int main(int argc, char** argv) {
  return opcuad::cli::main(argc, argv);
}
