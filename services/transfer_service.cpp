// TransferSubscriptions (Part 4 §5.13.7): subscriptions move to the session that asks for them, when it
// may take them (access_control::may_take_subscriptions_of). The session a subscription leaves gets a
// StatusChangeNotification GoodSubscriptionTransferred with its next Publish.
//
// Threads: the asking session lives on this shard ("home"); each subscription lives on its session's
// shard, which may be another one (sessions move between shards on re-activation). A TransferJob visits
// every shard that holds a requested subscription in turn, through asio::post, and each shard takes its
// subscriptions out itself (Subscription::detach: timer cancelled, items out of its Sampler). The job
// then returns home, where the subscriptions are attached (new timer, items in this shard's Sampler) and
// the request is answered. The job is touched by one thread at a time; each post hands it over.
#include <asio/post.hpp>

#include <algorithm>

#include "services/access_control.hpp"
#include "services/handlers.hpp"
#include "services/publish_queue.hpp"
#include "services/request.hpp"
#include "services/server.hpp"
#include "services/subscription.hpp"

namespace opcuad::services {

namespace {

namespace status = ua::status;

struct TransferJob {
  ShardState* home = nullptr;
  std::weak_ptr<transport::SecureChannel> channel;
  uint32_t request_id = 0;
  ua::RequestHeader header;
  ua::NodeId token;             // the asking session
  std::string user;             // its user; empty for anonymous
  std::string application_uri;  // its client's ApplicationUri, as CreateSession claimed it
  std::string address;          // its client's IP address at CreateSession
  bool send_initial_values = false;
  std::vector<uint32_t> ids;
  std::vector<ShardState*> owners;                    // per id: the shard that held it when asked
  std::vector<ua::TransferResult> results;            // per id
  std::vector<std::shared_ptr<Subscription>> moving;  // per id: detached, on its way home
  std::vector<ShardState*> route;                     // shards still to visit
};

// On `shard`'s thread: takes the requested subscriptions it holds out of their sessions. Each id is found
// through the shard's subscription index, so a request costs O(ids), however many sessions the shard has.
void take_from(TransferJob& job, ShardState& shard) {
  for (size_t i = 0; i < job.ids.size(); ++i) {
    if (job.owners[i] != &shard) continue;
    const uint32_t id = job.ids[i];
    auto found = shard.subscription_index.find(id);
    Session* from = found == shard.subscription_index.end() ? nullptr : found->second->session();
    ua::TransferResult& result = job.results[i];
    if (!from) continue;                            // deleted or moved meanwhile: BadSubscriptionIdInvalid
    ++found->second->counters().transfer_requests;  // Part 5 §12.15 TransferRequestCount
    if (!access_control::may_take_subscriptions_of(*from, job.user, job.application_uri, job.address)) {
      // The same status as for an id that does not exist: a caller learns nothing about other users'
      // subscriptions (which ids exist) from a refusal.
      result.status_code = status::BadSubscriptionIdInvalid;
      continue;
    }
    std::shared_ptr<Subscription> sub = from->subscriptions[id];
    result.status_code = status::Good;
    result.available_sequence_numbers = sub->available_sequence_numbers();
    if (from->authentication_token == job.token) {
      // Already the asking session's: nothing moves, but the initial values are still sent.
      if (job.send_initial_values) sub->queue_current_values();
      continue;
    }
    // Part 5 §12.15: to the same client or an alternate one, as the clients described themselves
    // (their ApplicationUri at CreateSession).
    ++(from->client_application_uri == job.application_uri ? sub->counters().transferred_to_same_client
                                                           : sub->counters().transferred_to_alt_client);
    from->subscriptions.erase(id);
    from->status_changes.push_back(sub->status_change(status::GoodSubscriptionTransferred));
    serve_waiting(*from);
    drop_idle_publishes(*from);
    sub->detach();
    job.moving[i] = std::move(sub);
  }
}

// On the home shard: the subscriptions join the asking session; the request is answered.
void finish(TransferJob& job) {
  ShardState& home = *job.home;
  auto it = home.sessions.find(job.token);
  auto ch = job.channel.lock();
  const bool open = ch && ch->state() == transport::SecureChannel::State::Open;
  if (it == home.sessions.end()) {
    // The asking session closed (or moved) while the job travelled: what was taken is deleted.
    job.moving.clear();
    if (open) ch->send_fault(job.request_id, job.header.request_handle, status::BadSessionIdInvalid);
    return;
  }
  Session& session = *it->second;
  for (size_t i = 0; i < job.ids.size(); ++i) {
    std::shared_ptr<Subscription>& sub = job.moving[i];
    if (!sub) continue;
    sub->attach(home, session);
    if (job.send_initial_values) sub->queue_current_values();
    session.subscriptions.emplace(job.ids[i], std::move(sub));
  }
  if (open) {
    ua::TransferSubscriptionsResponse resp;
    set_response_header(resp.response_header, job.header);
    resp.results = std::move(job.results);
    ch->send(job.request_id, resp);
  }
  serve_waiting(session);  // its queued Publish requests may now have work
}

// Posts the job to the next shard on its route, or home when none is left.
void travel(std::shared_ptr<TransferJob> job) {
  if (job->route.empty()) {
    ShardState* home = job->home;
    asio::post(*home->context, [job = std::move(job)] { finish(*job); });
    return;
  }
  ShardState* next = job->route.back();
  job->route.pop_back();
  asio::post(*next->context, [job = std::move(job), next]() mutable {
    take_from(*job, *next);
    travel(std::move(job));
  });
}

}  // namespace

bool park_session(Server& server, ShardState& shard, const ua::NodeId& token) {
  const auto& limits = server.config().limits;
  auto it = shard.sessions.find(token);
  if (it == shard.sessions.end() || it->second->subscriptions.empty() ||
      shard.parked.size() >= limits.max_parked_sessions) {
    return false;
  }
  Session& s = *it->second;
  reject_publishes(s, status::BadSessionClosed);
  s.status_changes.clear();
  s.continuations.clear();
  std::unique_ptr<Session> parked = server.sessions().take(shard, token);
  parked->authentication_token = ua::NodeId();
  parked->parked_until =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double, std::milli>(std::min(limits.parked_session_lifetime_ms, 1e11)));
  shard.parked.push_back(std::move(parked));
  return true;
}

void handle_transfer_subscriptions(Server& server, Call& call, ua::Decoder& body) {
  ua::TransferSubscriptionsRequest req;
  if (!decode_request(call, body, req)) return;
  const auto& limits = server.config().limits;
  if (!check_operation_count(call, req.subscription_ids.size(), limits.max_subscriptions_per_call)) {
    return;
  }
  auto job = std::make_shared<TransferJob>();
  job->home = &call.shard;
  job->channel = call.channel.weak_from_this();
  job->request_id = call.request_id;
  job->header = req.request_header;
  job->token = call.session->authentication_token;
  job->user = call.session->user;
  job->application_uri = call.session->client_application_uri;
  job->address = call.session->client_address;
  job->send_initial_values = req.send_initial_values;
  job->ids = std::move(req.subscription_ids);
  const size_t n = job->ids.size();
  job->owners.resize(n);
  job->results.resize(n, ua::TransferResult{status::BadSubscriptionIdInvalid, {}});
  job->moving.resize(n);
  // Part 4 §5.13.2 MaxSubscriptionsPerSession holds for transferred subscriptions too: ids beyond the
  // session's room are refused before anything moves (ones it holds already take no room).
  const Session& asking = *call.session;
  size_t room = SIZE_MAX;
  if (limits.max_subscriptions_per_session != 0) {
    room = limits.max_subscriptions_per_session > asking.subscriptions.size()
               ? limits.max_subscriptions_per_session - asking.subscriptions.size()
               : 0;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!asking.subscriptions.count(job->ids[i])) {
      if (room == 0) {
        job->results[i].status_code = status::BadTooManySubscriptions;
        continue;  // no owner: nothing is taken
      }
      --room;
    }
    ShardState* owner = server.subscriptions().shard_of(job->ids[i]);
    job->owners[i] = owner;
    if (owner && owner != &call.shard &&
        std::find(job->route.begin(), job->route.end(), owner) == job->route.end()) {
      job->route.push_back(owner);
    }
  }
  take_from(*job, call.shard);
  // The common case (every subscription on this shard) answers at once; otherwise the job travels.
  if (job->route.empty()) return finish(*job);
  travel(std::move(job));
}

}  // namespace opcuad::services
