#include "services/diagnostics.hpp"

#include <asio/post.hpp>

#include <algorithm>
#include <memory>
#include <string_view>

#include "addressspace/server_object.hpp"
#include "services/server.hpp"
#include "services/subscription.hpp"

namespace opcuad::services {

namespace {

using Counter = ua::ServiceCounterDataType ua::SessionDiagnosticsDataType::*;

// The SessionDiagnosticsDataType counter of each service the dispatch table serves, by its name
// (Server::service_name). The services opcuad does not implement (History*, Query*, NodeManagement) are
// answered BadServiceUnsupported by the transport before any session is looked up: their counters stay 0.
struct ServiceField {
  std::string_view service;
  Counter field;
};
constexpr ServiceField kServiceFields[] = {
    {"Read", &ua::SessionDiagnosticsDataType::read_count},
    {"Write", &ua::SessionDiagnosticsDataType::write_count},
    {"Call", &ua::SessionDiagnosticsDataType::call_count},
    {"CreateMonitoredItems", &ua::SessionDiagnosticsDataType::create_monitored_items_count},
    {"ModifyMonitoredItems", &ua::SessionDiagnosticsDataType::modify_monitored_items_count},
    {"SetMonitoringMode", &ua::SessionDiagnosticsDataType::set_monitoring_mode_count},
    {"SetTriggering", &ua::SessionDiagnosticsDataType::set_triggering_count},
    {"DeleteMonitoredItems", &ua::SessionDiagnosticsDataType::delete_monitored_items_count},
    {"CreateSubscription", &ua::SessionDiagnosticsDataType::create_subscription_count},
    {"ModifySubscription", &ua::SessionDiagnosticsDataType::modify_subscription_count},
    {"SetPublishingMode", &ua::SessionDiagnosticsDataType::set_publishing_mode_count},
    {"Publish", &ua::SessionDiagnosticsDataType::publish_count},
    {"Republish", &ua::SessionDiagnosticsDataType::republish_count},
    {"TransferSubscriptions", &ua::SessionDiagnosticsDataType::transfer_subscriptions_count},
    {"DeleteSubscriptions", &ua::SessionDiagnosticsDataType::delete_subscriptions_count},
    {"Browse", &ua::SessionDiagnosticsDataType::browse_count},
    {"BrowseNext", &ua::SessionDiagnosticsDataType::browse_next_count},
    {"TranslateBrowsePathsToNodeIds",
     &ua::SessionDiagnosticsDataType::translate_browse_paths_to_node_ids_count},
    {"RegisterNodes", &ua::SessionDiagnosticsDataType::register_nodes_count},
    {"UnregisterNodes", &ua::SessionDiagnosticsDataType::unregister_nodes_count},
};

Counter field_of(std::string_view service) noexcept {
  for (const ServiceField& f : kServiceFields) {
    if (f.service == service) return f.field;
  }
  return nullptr;
}

uint32_t clamp32(size_t n) noexcept {
  return static_cast<uint32_t>(std::min<size_t>(n, UINT32_MAX));
}

template <class T>
const ua::NodeId* entry_session(const ua::ExtensionObject& eo) noexcept {
  const T* entry = eo.get<T>();
  return entry ? &entry->session_id : nullptr;
}

}  // namespace

void scope_to_reader(const Session* reader, ua::Variant& value) {
  auto* entries = value.get_if<std::vector<ua::ExtensionObject>>();
  if (!entries || (reader && access_control::sees_all_diagnostics(reader->access))) return;
  std::erase_if(*entries, [reader](const ua::ExtensionObject& eo) {
    const ua::NodeId* id = entry_session<ua::SessionDiagnosticsDataType>(eo);
    if (!id) id = entry_session<ua::SubscriptionDiagnosticsDataType>(eo);
    if (!id) id = entry_session<ua::SessionSecurityDiagnosticsDataType>(eo);
    return !reader || !id || *id != reader->session_id;
  });
}

ua::SessionDiagnosticsDataType session_diagnostics(const Session& s, ua::DateTime wall,
                                                   std::chrono::steady_clock::time_point steady) {
  ua::SessionDiagnosticsDataType d;
  d.session_id = s.session_id;
  d.session_name = ua::String(s.name);
  d.client_description.application_uri = ua::String(s.client_application_uri);
  d.client_description.product_uri = ua::String(s.described.product_uri);
  d.client_description.application_name.text = ua::String(s.client_application_name);
  d.client_description.application_type = s.described.application_type;
  d.server_uri = ua::String(s.described.server_uri);
  d.endpoint_url = ua::String(s.described.endpoint_url);
  d.actual_session_timeout = s.timeout_ms;
  d.max_response_message_size = s.max_response_message_size;
  d.client_connection_time = s.described.connected;
  // The last request's arrival, on the wall clock: now minus how long ago it was on the steady clock.
  const auto ago = std::chrono::duration_cast<std::chrono::nanoseconds>(steady - s.last_activity);
  d.client_last_contact_time = ua::DateTime{wall.ticks - std::max<int64_t>(ago.count() / 100, 0)};
  d.current_subscriptions_count = clamp32(s.subscriptions.size());
  size_t items = 0;
  for (const auto& [id, sub] : s.subscriptions) items += sub->item_count();
  d.current_monitored_items_count = clamp32(items);
  d.current_publish_requests_in_queue = clamp32(s.publish_queue.size());
  d.unauthorized_request_count = s.counters.unauthorized;
  for (size_t i = 0; i < Server::service_count(); ++i) {
    const SessionCounters::Service& c = s.counters.services[i];
    d.total_request_count.total_count += c.total;
    d.total_request_count.error_count += c.errors;
    if (const Counter f = field_of(Server::service_name(i))) {
      (d.*f).total_count = c.total;
      (d.*f).error_count = c.errors;
    }
  }
  return d;
}

ua::SessionSecurityDiagnosticsDataType session_security_diagnostics(const Session& s) {
  ua::SessionSecurityDiagnosticsDataType d;
  d.session_id = s.session_id;
  d.client_user_id_of_session = ua::String(s.user);
  d.authentication_mechanism = ua::String(std::string(s.described.authentication));
  d.encoding = ua::String("UA Binary");          // the only encoding opcuad speaks (Part 6 §5.2)
  d.transport_protocol = ua::String("opc.tcp");  // the only transport (Part 6 §7.2)
  d.security_mode = s.described.security_mode;
  d.security_policy_uri = ua::String(std::string(s.described.security_policy_uri));
  d.client_certificate = s.described.client_certificate;
  return d;
}

ua::SubscriptionDiagnosticsDataType subscription_diagnostics(const Session& owner, const Subscription& sub) {
  ua::SubscriptionDiagnosticsDataType d;
  const Subscription::Parameters& p = sub.parameters();
  const SubscriptionCounters& c = sub.counters();
  d.session_id = owner.session_id;
  d.subscription_id = sub.id();
  d.priority = p.priority;
  d.publishing_interval = p.publishing_interval_ms;
  d.max_keep_alive_count = p.max_keep_alive_count;
  d.max_lifetime_count = p.lifetime_count;
  d.max_notifications_per_publish = p.max_notifications_per_publish;
  d.publishing_enabled = sub.publishing_enabled();
  d.modify_count = c.modify;
  d.enable_count = c.enable;
  d.disable_count = c.disable;
  d.republish_request_count = c.republish_requests;
  d.republish_message_request_count = c.republish_requests;  // a Republish asks for one message
  d.republish_message_count = c.republished;
  d.transfer_request_count = c.transfer_requests;
  d.transferred_to_alt_client_count = c.transferred_to_alt_client;
  d.transferred_to_same_client_count = c.transferred_to_same_client;
  d.publish_request_count = c.publish_requests;
  d.data_change_notifications_count = c.data_change_notifications;
  d.event_notifications_count = c.event_notifications;
  d.notifications_count = c.data_change_notifications + c.event_notifications;
  d.event_queue_over_flow_count = c.event_queue_overflows;
  d.late_publish_request_count = c.late;
  d.current_keep_alive_count = sub.keep_alive_counter();
  d.current_lifetime_count = sub.lifetime_counter();
  d.unacknowledged_message_count = clamp32(sub.unacknowledged_count());
  d.discarded_message_count = c.discarded;
  d.monitored_item_count = clamp32(sub.item_count());
  d.disabled_monitored_item_count = clamp32(sub.disabled_item_count());
  d.next_sequence_number = sub.next_sequence_number();
  return d;
}

void collect_diagnostics(const ShardState& shard, DiagnosticsArrays& out) {
  const ua::DateTime wall = ua::DateTime::now();
  const auto steady = std::chrono::steady_clock::now();
  for (const auto& [token, session] : shard.sessions) {
    out.sessions.push_back(ua::ExtensionObject::make(session_diagnostics(*session, wall, steady)));
    out.security.push_back(ua::ExtensionObject::make(session_security_diagnostics(*session)));
    for (const auto& [id, sub] : session->subscriptions) {
      out.subscriptions.push_back(ua::ExtensionObject::make(subscription_diagnostics(*session, *sub)));
    }
  }
  for (const auto& session : shard.parked) {
    for (const auto& [id, sub] : session->subscriptions) {
      out.subscriptions.push_back(ua::ExtensionObject::make(subscription_diagnostics(*session, *sub)));
    }
  }
}

void Server::collect_diagnostics(asio::io_context& reply_to, std::function<void(DiagnosticsArrays&)> done) {
  // Touched by one thread at a time: each shard fills its own part on its thread, then the merge runs
  // on `reply_to`, which also counts the parts in.
  struct Job {
    std::vector<DiagnosticsArrays> parts;
    size_t missing = 0;
    std::function<void(DiagnosticsArrays&)> done;
  };
  auto job = std::make_shared<Job>();
  job->parts.resize(shards_.size());
  job->missing = shards_.size();
  job->done = std::move(done);
  if (shards_.empty()) {
    asio::post(reply_to, [job] {
      DiagnosticsArrays none;
      job->done(none);
    });
    return;
  }
  for (size_t i = 0; i < shards_.size(); ++i) {
    ShardState* shard = shards_[i].get();
    DiagnosticsArrays* part = &job->parts[i];
    asio::post(*shard->context, [job, shard, part, &reply_to] {
      services::collect_diagnostics(*shard, *part);
      asio::post(reply_to, [job] {
        if (--job->missing != 0) return;
        DiagnosticsArrays all = std::move(job->parts.front());
        for (size_t k = 1; k < job->parts.size(); ++k) {
          auto append = [](std::vector<ua::ExtensionObject>& to, std::vector<ua::ExtensionObject>& from) {
            to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
          };
          append(all.sessions, job->parts[k].sessions);
          append(all.security, job->parts[k].security);
          append(all.subscriptions, job->parts[k].subscriptions);
        }
        job->done(all);
      });
    });
  }
}

void DiagnosticsRefresher::tick(addressspace::EpochReclaimer::Participant& p) {
  participant_ = &p;
  if (stopped_) return;
  const addressspace::NodeStore* store = space_.current();
  if (!store) return;
  if (!addressspace::diagnostics_enabled(*store)) {
    if (filled_) {
      addressspace::update_diagnostic_arrays(*store, space_.values(), p, {}, {}, {});
      filled_ = false;
    }
    return;
  }
  if (collecting_) return;
  collecting_ = true;
  server_.collect_diagnostics(control_, [this](DiagnosticsArrays& all) {
    collecting_ = false;
    const addressspace::NodeStore* now = space_.current();
    // Switched off meanwhile: what was collected is not shown.
    if (stopped_ || !now || !addressspace::diagnostics_enabled(*now)) return;
    const addressspace::EpochReclaimer::OnlineScope online(space_.reclaimer(), *participant_);
    addressspace::update_diagnostic_arrays(*now, space_.values(), *participant_, std::move(all.sessions),
                                           std::move(all.security), std::move(all.subscriptions));
    filled_ = true;
    ++refreshes_;
  });
}

}  // namespace opcuad::services
