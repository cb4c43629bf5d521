#pragma once
// One session of the `sub` scenario: blocking setup (session, subscriptions, monitored items), then an
// asynchronous Publish loop (wire_client.hpp) that keeps K Publish requests outstanding, acknowledges every
// notification message and counts, per item, the distinct samples (source timestamps) inside the measured
// window.
//
// shard-local: a SubConnection runs on the thread of its io_context; the per-item counters it writes are
// a disjoint slice of SubCounters (client handles first..last), so connections on other threads never
// touch the same element.

#include <sys/types.h>

#include <asio/io_context.hpp>

#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench/sub_scenario.hpp"
#include "bench/ua_client.hpp"
#include "bench/wire_client.hpp"
#include "ua/buffer.hpp"

namespace opcuad::bench {

class ChildServer;

struct SubCounters {
  explicit SubCounters(uint32_t items) : last(items, 0), count(items, 0) {}
  std::atomic<int64_t> window_begin{INT64_MAX};  // DateTime ticks; set by the main thread
  std::atomic<int64_t> window_end{INT64_MAX};
  std::vector<int64_t> last;    // last source timestamp seen per item
  std::vector<uint32_t> count;  // distinct samples with a source timestamp inside the window
  std::atomic<uint64_t> unknown_handles{0};
};

struct SubParameters {
  double sampling_interval_ms = 100;
  double publishing_interval_ms = 500;
  uint32_t queue_size = 12;
  uint32_t items_per_subscription = 50000;
  uint32_t create_batch = 20000;
  uint32_t variables = 1;  // item k monitors ns=2;i=(k % variables) + 1
};

class SubConnection : private WireClient<SubConnection> {
 public:
  SubConnection(asio::io_context& ctx, SubCounters& counters);
  // Blocking, on the caller's thread: session, subscriptions, items with client handles [first, last).
  bool setup(const Endpoint& endpoint, const std::string& name, const SubParameters& p, uint32_t first,
             uint32_t last, std::string& error);
  // On the io_context's thread.
  void start(uint32_t publish_outstanding);
  void stop() noexcept { close_wire(); }

  double revised_sampling_interval() const noexcept { return revised_sampling_; }
  double revised_publishing_interval() const noexcept { return revised_publishing_; }
  uint32_t revised_queue_size() const noexcept { return revised_queue_; }
  uint64_t duplicates() const noexcept { return duplicates_; }
  // PublishResponses with data whose publishTime fell inside the window, and their notifications.
  uint64_t window_messages() const noexcept { return window_messages_; }
  uint64_t window_message_notifications() const noexcept { return window_message_notifications_; }
  const std::map<std::string, uint64_t>& errors() const noexcept { return errors_; }

 private:
  friend WireClient;
  // WireClient's hooks.
  void on_message(const MessageChunk& m);
  void on_wire_error(const std::string& what) { fail(what); }

  void send_publish();
  void handle_response(std::span<const uint8_t> body);
  void fail(const std::string& what);

  SubCounters& counters_;
  uint32_t next_request_id_ = 100;
  double revised_sampling_ = 0;
  double revised_publishing_ = 0;
  uint32_t revised_queue_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t window_messages_ = 0;
  uint64_t window_message_notifications_ = 0;
  std::map<std::string, uint64_t> errors_;
  std::map<uint32_t, uint32_t> last_sequence_;  // per subscription: the last data message's number
  std::vector<std::pair<uint32_t, uint32_t>> acks_;
};

// Shared by `sub` and `connect`.
long process_rss_kib(pid_t pid);
void raise_fd_limit();
double effective_publishing_interval(const SubOptions& o);
std::filesystem::path make_temp_dir();
bool start_server(const SubOptions& o, const std::filesystem::path& dir, uint32_t variables, uint32_t items,
                  uint32_t sessions, ChildServer& child, std::string& error);

}  // namespace opcuad::bench
