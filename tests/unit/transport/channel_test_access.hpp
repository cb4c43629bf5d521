#pragma once
// SecureChannelTestAccess (declared a friend in transport/secure_channel.hpp, defined only here): what the
// tests look at or set up inside a channel, so that the production interface carries no test hooks.

#include <cstddef>
#include <utility>
#include <vector>

#include "transport/secure_channel.hpp"

namespace opcuad::transport {

struct SecureChannelTestAccess {
  // The state a secured OPN leaves, without the handshake, so the session services can be tested on a
  // "secured" channel whose chunks still travel unsecured (its tokens carry no keys). Responses are
  // split with the security's smaller body room, as on a secured channel.
  static void set_security(SecureChannel& channel, const security::Policy& policy,
                           ua::MessageSecurityMode mode, std::vector<uint8_t> client_certificate,
                           security::Pkey client_key) {
    channel.set_security(policy, mode);
    channel.client_certificate_ = std::move(client_certificate);
    channel.client_key_ = std::move(client_key);
  }
  // Bytes the receive buffer holds now (its capacity, not what is buffered).
  static size_t receive_capacity(const SecureChannel& channel) noexcept { return channel.rx_.capacity(); }
  // The capacity of the reassembly buffer of multi-chunk requests.
  static size_t reassembly_capacity(const SecureChannel& channel) noexcept {
    return channel.reassembly_.capacity();
  }
  // The newest token issued; the client may still be using an older one.
  static const SecurityToken& newest_token(const SecureChannel& channel) noexcept {
    return channel.tokens_.newest();
  }
};

}  // namespace opcuad::transport
