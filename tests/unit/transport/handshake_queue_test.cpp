// The handshake pool's bound under a connection storm (docs/SECURITY.md, "Secure conversation"): with every
// worker busy and the queue full, a further secured OPN is refused at once with ERR
// BadTcpNotEnoughResources instead of queueing without end, the queued handshakes complete once the
// workers are free, and an established secured channel is served all the while.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <memory>

#include "tests/unit/transport/secure_fixture.hpp"
#include "transport/handshake_pool.hpp"

using namespace opcuad;
using namespace opcuad::transport;
using namespace opcuad::transport::test;
namespace status = ua::status;

TEST_CASE("handshake pool: a full queue refuses further secured OPNs, established channels keep being served",
          "[transport][security][handshake]") {
  const auto& p = security::policy(security::PolicyId::Basic256Sha256);
  const auto mode = ua::MessageSecurityMode::SignAndEncrypt;
  constexpr size_t kQueue = 3;
  constexpr size_t kStorm = 7;
  HandshakePool pool(1, kQueue);
  const TransportConfig config = fixed_secured_config(p, mode, &pool);

  // A channel opened before the storm, through the same pool.
  Harness established(config);
  SecureTestClient ec = fixed_client(p, mode);
  established.feed(hello());
  established.sink.out.clear();
  established.feed(ec.open_request(1, ua::SecurityTokenRequestType::Issue));
  REQUIRE(run_until(established, [&] { return !established.sink.out.empty(); }));
  REQUIRE(ec.accept_open(established.sink.out));
  established.sink.out.clear();

  // The only worker is busy until the test lets it go.
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> busy{false};
  REQUIRE(pool.submit([gate, &busy] {
    busy = true;
    gate.wait();
  }));
  while (!busy) std::this_thread::yield();

  // The storm: the first kQueue handshakes wait in the queue, the others are refused at once.
  std::vector<std::unique_ptr<Harness>> storm;
  std::vector<SecureTestClient> clients;
  for (size_t i = 0; i < kStorm; ++i) {
    storm.push_back(std::make_unique<Harness>(config));
    clients.push_back(fixed_client(p, mode));
    Harness& h = *storm.back();
    h.feed(hello());
    h.sink.out.clear();
    h.feed(clients.back().open_request(1, ua::SecurityTokenRequestType::Issue));
    INFO("connection " << i);
    if (i < kQueue) {
      CHECK(h.sink.out.empty());
      CHECK(!h.events.closed);
      CHECK(!h.channel->reading_allowed());  // nothing more is read while its handshake waits
    } else {
      const auto out = output_chunks(h.sink.out);
      REQUIRE(out.size() == 1);
      CHECK(out[0].substr(0, 3) == "ERR");
      CHECK(error_status(out[0]) == status::BadTcpNotEnoughResources);
      CHECK(h.events.closed);
    }
  }
  CHECK(pool.queued() == kQueue);

  // Meanwhile the established channel is served: its chunks need no handshake worker.
  for (uint32_t r = 0; r < 3; ++r) {
    established.feed(ec.message(20 + r, encode_request(read_request(20 + r, 4))));
    established.run();
    const auto out = output_chunks(established.sink.out);
    REQUIRE(out.size() == 1);
    SecureTestClient::Unsealed u;
    REQUIRE(ec.unseal(out[0], u));
    CHECK(u.request_id == 20 + r);
    established.sink.out.clear();
  }

  // Freed, the workers finish the queued handshakes: each of those clients gets a good OPN response.
  release.set_value();
  for (size_t i = 0; i < kQueue; ++i) {
    INFO("queued connection " << i);
    Harness& h = *storm[i];
    REQUIRE(run_until(h, [&] { return !h.sink.out.empty(); }));
    REQUIRE(clients[i].accept_open(h.sink.out));
    CHECK(!h.events.closed);
    CHECK(h.channel->reading_allowed());
  }
  CHECK(pool.queued() == 0);
}

TEST_CASE("handshake pool: its threads run below the shards' priority", "[transport][security]") {
  transport::HandshakePool pool(1, 4);
  std::promise<int> seen;
  auto nice = seen.get_future();
  REQUIRE(pool.submit([&seen] { seen.set_value(getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()))); }));
  // At least kNice: a process started at a higher nice value keeps it.
  CHECK(nice.get() >= std::max(transport::HandshakePool::kNice, getpriority(PRIO_PROCESS, 0)));
  pool.stop();
}
