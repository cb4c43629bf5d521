// The log writer (daemon/log.hpp): level names and filtering, file output with mode 0640, and the
// reopen after a rotation renamed the file (what the daemon does on SIGHUP).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "daemon/log.hpp"
#include "tests/unit/daemon/text_file.hpp"

using namespace opcuad;
using opcuad::text_file::count;
using opcuad::text_file::slurp;
namespace fs = std::filesystem;

namespace {
// A fresh directory for one test; logging goes back to standard error at info afterwards.
struct LogDir {
  fs::path dir = fs::temp_directory_path() / ("opcuad-log-test-" + std::to_string(::getpid()));
  LogDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~LogDir() {
    log::use_stderr();
    log::set_level(log::Level::Info);
    fs::remove_all(dir);
  }
};
}  // namespace

TEST_CASE("log: level names", "[log]") {
  CHECK(log::parse_level("trace") == log::Level::Trace);
  CHECK(log::parse_level("debug") == log::Level::Debug);
  CHECK(log::parse_level("info") == log::Level::Info);
  CHECK(log::parse_level("warn") == log::Level::Warn);
  CHECK(log::parse_level("error") == log::Level::Error);
  CHECK_FALSE(log::parse_level("verbose"));
  CHECK_FALSE(log::parse_level("INFO"));
  CHECK_FALSE(log::parse_level(""));
}

TEST_CASE("log: the level is a threshold and the file gets whole lines", "[log]") {
  LogDir d;
  const fs::path file = d.dir / "opcuad.log";
  REQUIRE_FALSE(log::open_file(file.string()));
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);

  log::set_level(log::Level::Warn);
  log::trace("t {}", 1);
  log::debug("d {}", 2);
  log::info("i {}", 3);
  log::warn("w {}", 4);
  log::error("e {}", 5);
  std::string text = slurp(file);
  CHECK(count(text, "\n") == 2);
  CHECK(text.find(" warn  w 4\n") != std::string::npos);
  CHECK(text.find(" error e 5\n") != std::string::npos);
  CHECK(text.find("i 3") == std::string::npos);

  log::set_level(log::Level::Trace);
  log::trace("t {}", 6);
  log::debug("d {}", 7);
  text = slurp(file);
  CHECK(text.find(" trace t 6\n") != std::string::npos);
  CHECK(text.find(" debug d 7\n") != std::string::npos);
  CHECK(text.substr(0, 2) == "20");  // each line starts with its UTC time stamp
  CHECK(text[23] == 'Z');

  // Appends: an existing file keeps its lines and its mode.
  REQUIRE_FALSE(log::open_file(file.string()));
  log::error("again");
  CHECK(count(slurp(file), "\n") == 5);

  // Several threads: every line arrives whole.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) log::info("thread {} line {} {}", t, i, std::string(100, 'x'));
    });
  }
  for (auto& t : threads) t.join();
  text = slurp(file);
  CHECK(count(text, "\n") == 805);
  CHECK(count(text, std::string(100, 'x') + "\n") == 800);
}

TEST_CASE("log: reopen after a rename writes to a new file at the old path", "[log]") {
  LogDir d;
  const fs::path file = d.dir / "opcuad.log";
  const fs::path rotated = d.dir / "opcuad.log.1";
  REQUIRE_FALSE(log::open_file(file.string()));
  log::info("before rotation");
  fs::rename(file, rotated);
  log::info("after rename, before reopen");  // still the open file, now called .1
  REQUIRE_FALSE(log::reopen());
  log::info("after reopen");
  const std::string old_text = slurp(rotated);
  const std::string new_text = slurp(file);
  CHECK(old_text.find("before rotation") != std::string::npos);
  CHECK(old_text.find("before reopen") != std::string::npos);
  CHECK(old_text.find("after reopen") == std::string::npos);
  CHECK(count(new_text, "\n") == 1);
  CHECK(new_text.find("after reopen") != std::string::npos);
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);

  // A file that cannot be opened is reported and logging stays where it was.
  const auto failed = log::open_file((d.dir / "missing-dir" / "x.log").string());
  REQUIRE(failed);
  CHECK(failed->find("cannot open log file") != std::string::npos);
  log::info("still here");
  CHECK(slurp(file).find("still here") != std::string::npos);

  // Standard error: reopen has nothing to do.
  log::use_stderr();
  CHECK_FALSE(log::reopen());
}
