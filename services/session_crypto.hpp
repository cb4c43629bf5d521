#pragma once
// What the session services share for their public-key work (session_service.cpp, session_identity.cpp):
// running it on the server's crypto pool, the bytes a signature covers, whether a channel is secured.

#include <asio/post.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "services/server.hpp"
#include "services/shard.hpp"
#include "transport/handshake_pool.hpp"
#include "transport/secure_channel.hpp"

namespace opcuad::services {

// A channel with a SecurityPolicy other than None (signatures are checked on it, Part 4 §5.6.2-3).
inline bool secured(const transport::SecureChannel& channel) {
  return channel.security_policy().id != security::PolicyId::None;
}

// What a session signature covers: a certificate followed by a nonce (Part 4 §5.6.2, §5.6.3, §7.41.5).
inline std::vector<uint8_t> concat(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  std::vector<uint8_t> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

// Runs `work` (RSA private-key work: 1-10 ms) on the server's crypto pool, then `done(result)` back on
// `shard`'s thread, so the shard serves its other sessions meanwhile (docs/SECURITY.md); both inline when
// the server has no pool. False when the pool's queue is full: nothing ran, `done` never will.
// `done` must hold nothing whose destruction touches the Server (a completion still queued when the
// shards stop is destroyed without running, after the Server).
template <class Work, class Done>
[[nodiscard]] bool offload(Server& server, ShardState& shard, Work work, Done done) {
  transport::HandshakePool* pool = server.crypto_pool();
  if (pool == nullptr) {
    done(work());
    return true;
  }
  auto job = std::make_shared<std::pair<Work, Done>>(std::move(work), std::move(done));
  return pool->submit([job, ctx = shard.context] {
    auto result = std::make_shared<decltype(job->first())>(job->first());
    asio::post(*ctx, [job, result] { job->second(std::move(*result)); });
  });
}

}  // namespace opcuad::services
