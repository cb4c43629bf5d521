#include "services/pending_publish.hpp"

namespace opcuad::services {

std::shared_ptr<transport::SecureChannel> PendingPublish::open_channel() const {
  auto ch = channel_.lock();
  if (ch && ch->state() == transport::SecureChannel::State::Open) return ch;
  return nullptr;
}

void PendingPublish::fault(ua::StatusCode result) noexcept {
  if (!owed_) return;
  answered();
  if (auto ch = open_channel()) ch->send_fault(request_id_, request_handle_, result, stream_);
}

void PendingPublish::send_encoded(transport::SecureChannel& channel, ua::ByteBuffer encoded) {
  if (!owed_) return;
  answered();
  channel.send_response(request_id_, std::move(encoded), stream_);
}

void PendingPublish::send_copy(transport::SecureChannel& channel, const ua::ByteBuffer& encoded) {
  if (!owed_) return;
  answered();
  channel.send_response_copy(request_id_, encoded, stream_);
}

}  // namespace opcuad::services
