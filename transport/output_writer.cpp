#include "transport/output_writer.hpp"

#include <asio/post.hpp>

namespace opcuad::transport {

OutputWriter::OutputWriter(asio::io_context& ctx, Sink& sink, ChunkStamper& stamper, BufferPool& pool,
                           TransportStats& stats)
    : ctx_(ctx), sink_(sink), stamper_(stamper), pool_(pool), stats_(stats) {
  in_flight_.reserve(kMaxChunksPerWrite);
  iov_.reserve(kMaxChunksPerWrite);
}

OutputWriter::~OutputWriter() { *alive_ = false; }

void OutputWriter::enqueue(OutboundChunk chunk, uint64_t stream) {
  if (shut_) {
    pool_.release(std::move(chunk.buffer));
    return;
  }
  queued_bytes_ += chunk.buffer.size();
  Stream& s = streams_[stream];
  s.chunks.push_back(std::move(chunk));
  if (!s.ready) {
    s.ready = true;
    ready_.push_back(stream);
  }
  schedule_drain();
}

void OutputWriter::schedule_drain() {
  if (drain_scheduled_ || write_in_flight_) return;  // a running write drains again when it completes
  drain_scheduled_ = true;
  asio::post(ctx_, [this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.lock()) drain();
  });
}

void OutputWriter::drain() {
  drain_scheduled_ = false;
  if (write_in_flight_ || shut_ || ready_.empty()) return;
  size_t bytes = 0;
  // Take whole messages, one per ready stream in turn, until the write is full.
  while (!ready_.empty() && in_flight_.size() < kMaxChunksPerWrite && bytes < kMaxBytesPerWrite) {
    const uint64_t id = ready_.front();
    ready_.pop_front();
    Stream& s = streams_[id];
    bool message_done = false;
    while (!s.chunks.empty() && !message_done) {
      OutboundChunk& c = s.chunks.front();
      stamper_.stamp(c);
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
      streams_.erase(id);
    } else {
      ready_.push_back(id);
    }
  }
  iov_.clear();
  for (auto& c : in_flight_) iov_.emplace_back(c.buffer.data(), c.buffer.size());
  write_in_flight_ = true;
  write_started_ = Clock::now();
  TransportStats::add(stats_.write_calls);
  sink_.async_write(iov_, [this, alive = std::weak_ptr<bool>(alive_)](std::error_code ec) {
    if (alive.lock()) write_done(ec);
  });
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
  if (!ready_.empty() && !shut_) drain();  // continue at once: we are already in a completion handler
}

void OutputWriter::shut() noexcept {
  shut_ = true;
  for (auto& [id, s] : streams_) {
    for (auto& c : s.chunks) {
      queued_bytes_ -= c.buffer.size();
      pool_.release(std::move(c.buffer));
    }
  }
  streams_.clear();
  ready_.clear();
}

}  // namespace opcuad::transport
