// The service manager's notification protocol (daemon/notify.hpp) against a datagram socket the test
// binds, and the watchdog interval from the environment's values. The shard heartbeats the watchdog pings
// depend on are tested with the shard pool (tests/unit/transport/shard_heartbeat_test.cpp).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string>

#include "daemon/notify.hpp"

using namespace opcuad;
namespace fs = std::filesystem;

namespace {

// An AF_UNIX datagram socket bound at `path` (or an abstract name for "@..."), as systemd binds
// $NOTIFY_SOCKET; receive() returns the next datagram, or "" after 2 s.
struct TestSocket {
  int fd = -1;
  std::string path;
  explicit TestSocket(std::string p) : path(std::move(p)) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
    if (path[0] == '@') {
      addr.sun_path[0] = '\0';
    } else {
      ::unlink(path.c_str());
      len += 1;
    }
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  }
  ~TestSocket() {
    ::close(fd);
    if (path[0] == '/') ::unlink(path.c_str());
  }
  std::string receive() const {
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }
};

}  // namespace

TEST_CASE("notify: each state is one datagram to the socket path", "[notify]") {
  const std::string path =
      (fs::temp_directory_path() / ("opcuad-notify-" + std::to_string(::getpid()))).string();
  TestSocket sock(path);
  Notifier n(path);
  REQUIRE(n.active());
  CHECK(n.send("READY=1\nSTATUS=serving"));
  CHECK(n.send("WATCHDOG=1"));
  CHECK(sock.receive() == "READY=1\nSTATUS=serving");
  CHECK(sock.receive() == "WATCHDOG=1");
}

TEST_CASE("notify: an abstract socket name", "[notify]") {
  const std::string name = "@opcuad-notify-test-" + std::to_string(::getpid());
  TestSocket sock(name);
  Notifier n(name);
  REQUIRE(n.active());
  CHECK(n.send("STOPPING=1"));
  CHECK(sock.receive() == "STOPPING=1");
}

TEST_CASE("notify: without a usable socket nothing is sent", "[notify]") {
  CHECK_FALSE(Notifier("").active());
  CHECK_FALSE(Notifier("").send("READY=1"));
  CHECK_FALSE(Notifier("relative/path").active());  // systemd only ever passes absolute or abstract names
  CHECK_FALSE(Notifier("/" + std::string(200, 'x')).active());  // longer than sockaddr_un can hold
  // A path where nobody listens: the send fails, nothing else happens.
  Notifier gone((fs::temp_directory_path() / "opcuad-notify-nobody").string());
  CHECK(gone.active());
  CHECK_FALSE(gone.send("READY=1"));
}

TEST_CASE("notify: RELOADING carries the monotonic clock in microseconds", "[notify]") {
  const std::string line = monotonic_usec_line();
  REQUIRE(line.rfind("MONOTONIC_USEC=", 0) == 0);
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t now =
      static_cast<uint64_t>(ts.tv_sec) * 1000000u + static_cast<uint64_t>(ts.tv_nsec) / 1000u;
  const uint64_t sent = std::stoull(line.substr(15));
  CHECK(sent <= now);
  CHECK(now - sent < 1000000u);
}

TEST_CASE("notify: the watchdog interval from WATCHDOG_USEC and WATCHDOG_PID", "[notify]") {
  using std::chrono::microseconds;
  CHECK(watchdog_interval("3000000", nullptr, 42) == microseconds(3000000));
  CHECK(watchdog_interval("3000000", "42", 42) == microseconds(3000000));
  CHECK(watchdog_interval("3000000", "", 42) == microseconds(3000000));
  CHECK_FALSE(watchdog_interval("3000000", "41", 42));  // meant for another process
  CHECK_FALSE(watchdog_interval(nullptr, nullptr, 42));
  CHECK_FALSE(watchdog_interval("", nullptr, 42));
  CHECK_FALSE(watchdog_interval("0", nullptr, 42));
  CHECK_FALSE(watchdog_interval("-5", nullptr, 42));
  CHECK_FALSE(watchdog_interval("12abc", nullptr, 42));
  CHECK_FALSE(watchdog_interval("99999999999999999999999", nullptr, 42));
  CHECK_FALSE(watchdog_interval("3000000", "42x", 42));
}
