#include "transport/output_writer.hpp"

#include <asio/bind_allocator.hpp>
#include <asio/post.hpp>

namespace opcuad::transport {

void WriteDone::operator()(std::error_code ec) const {
  if (auto shared = shared_.lock(); shared && shared->alive) writer_->write_done(ec);
}

OutputWriter::OutputWriter(asio::io_context& ctx, Sink& sink, ChunkStamper& stamper, BufferPool& pool,
                           TransportStats& stats)
    : ctx_(ctx), sink_(sink), stamper_(stamper), pool_(pool), stats_(stats) {
  // in_flight_ and iov_ grow to the largest write this channel has made (at most kMaxChunksPerWrite)
  // and keep that capacity: a mostly idle session does not hold room for 64 chunks, a busy one
  // stops allocating after its first few writes.
}

OutputWriter::~OutputWriter() {
  shared_->alive = false;
}

void OutputWriter::enqueue(OutboundChunk chunk, uint64_t stream) {
  if (shut_) {
    pool_.release(std::move(chunk.buffer));
    return;
  }
  queued_bytes_ += chunk.buffer.size();
  const uint32_t slot = stream_slot(stream);
  Stream& s = streams_[slot];
  s.chunks.push_back(std::move(chunk));
  if (!s.ready) {
    s.ready = true;
    ready_.push_back(slot);
  }
  schedule_drain();
}

uint32_t OutputWriter::stream_slot(uint64_t id) {
  uint32_t free = UINT32_MAX;
  for (uint32_t i = 0; i < streams_.size(); ++i) {
    const Stream& s = streams_[i];
    if (s.id == id) return i;
    if (free == UINT32_MAX && !s.ready && s.chunks.empty()) free = i;
  }
  if (free == UINT32_MAX) {
    free = static_cast<uint32_t>(streams_.size());
    streams_.emplace_back();
  }
  streams_[free].id = id;
  return free;
}

void OutputWriter::schedule_drain() {
  if (drain_scheduled_ || write_in_flight_) return;  // a running write drains again when it completes
  drain_scheduled_ = true;
  // The handler holds `shared_` strongly, so the slot its operation lives in outlives the operation.
  asio::post(ctx_, asio::bind_allocator(SlotAllocator<void, WriterShared::kPostSlotSize>(shared_->post_slot),
                                        [this, shared = shared_] {
                                          if (shared->alive) drain();
                                        }));
}

void OutputWriter::send_first(OutboundChunk chunk) {
  if (shut_) {
    pool_.release(std::move(chunk.buffer));
    return;
  }
  queued_bytes_ += chunk.buffer.size();
  first_ = std::move(chunk);
  release();
}

void OutputWriter::release() noexcept {
  held_ = false;
  if (first_ || !ready_.empty()) schedule_drain();
}

void OutputWriter::drain() {
  drain_scheduled_ = false;  // a drain still posted finds nothing, or what was enqueued since
  if (write_in_flight_ || shut_ || held_ || (ready_.empty() && !first_)) return;
  size_t bytes = 0;
  if (first_) {
    bytes += first_->buffer.size();
    in_flight_.push_back(std::move(*first_));
    first_.reset();
  }
  // Take whole messages, one per ready stream in turn, until the write is full.
  while (!ready_.empty() && in_flight_.size() < kMaxChunksPerWrite && bytes < kMaxBytesPerWrite) {
    const uint32_t id = ready_.front();
    ready_.pop_front();
    Stream& s = streams_[id];
    bool message_done = false;
    while (!s.chunks.empty() && !message_done) {
      OutboundChunk& c = s.chunks.front();
      const size_t before = c.buffer.size();
      stamper_.stamp(c);  // a secured channel's chunk grows by its padding and signature here
      queued_bytes_ += c.buffer.size() - before;
      message_done = c.ends_message;
      bytes += c.buffer.size();
      in_flight_.push_back(std::move(c));
      s.chunks.pop_front();
      // A message longer than one write continues in the next write, still before any other message:
      // the stream stays at the front.
      if (!message_done && (in_flight_.size() >= kMaxChunksPerWrite || bytes >= kMaxBytesPerWrite)) break;
    }
    if (!message_done && !s.chunks.empty()) {
      ready_.push_front(id);
      break;
    }
    if (s.chunks.empty()) {
      s.ready = false;  // the slot stays, with its ring, for the stream's next message
    } else {
      ready_.push_back(id);
    }
  }
  stamper_.seal_batch(in_flight_);  // a SignAndEncrypt channel encrypts the write's chunks together here
  iov_.clear();
  for (auto& c : in_flight_) iov_.emplace_back(c.buffer.data(), c.buffer.size());
  write_in_flight_ = true;
  write_started_ = Clock::now();
  TransportStats::add(stats_.write_calls);
  sink_.async_write(iov_, WriteDone(this, shared_));
}

void OutputWriter::write_done(std::error_code ec) {
  write_in_flight_ = false;
  size_t responses = 0, messages = 0, bytes = 0;
  for (auto& c : in_flight_) {
    bytes += c.buffer.size();
    if (c.ends_message) {
      ++messages;
      if (c.is_response) ++responses;
    }
    pool_.release(std::move(c.buffer));
  }
  TransportStats::add(stats_.chunks_sent, in_flight_.size());
  TransportStats::add(stats_.messages_sent, messages);
  TransportStats::add(stats_.bytes_sent, bytes);
  queued_bytes_ -= bytes;
  in_flight_.clear();
  if (ec) {
    shut();
    if (on_error_) on_error_(ec);
    return;
  }
  if (on_written_) on_written_(responses);
  if ((!ready_.empty() || first_) && !shut_)
    drain();  // continue at once: we are already in a completion handler
}

void OutputWriter::shut() noexcept {
  shut_ = true;
  for (auto& s : streams_) {
    for (size_t i = 0; i < s.chunks.size(); ++i) {
      queued_bytes_ -= s.chunks[i].buffer.size();
      pool_.release(std::move(s.chunks[i].buffer));
    }
    s.chunks.clear();
    s.ready = false;
  }
  ready_.clear();
  if (first_) {
    queued_bytes_ -= first_->buffer.size();
    pool_.release(std::move(first_->buffer));
    first_.reset();
  }
  held_ = false;
}

}  // namespace opcuad::transport
