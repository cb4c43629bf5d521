// The Server's diagnostics arrays (Part 5 §8.2.10, §12.11, §12.12, §12.15; services/diagnostics.hpp):
// an entry per session and subscription across shards, counters that move with the requests, entries that
// go with their session, each reader's part (its own entries; an administrator's: all), and the
// EnabledFlag that switches the collection (written by administrators only).
#include <catch2/catch.hpp>

#include <tuple>

#include "addressspace/server_object.hpp"
#include "services/diagnostics.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = ua::status;
namespace id = ua::id;

namespace {

constexpr const char* kUsers = R"("users": [
    {"name": "admin", "password_hash": "HASH", "roles": ["SecurityAdmin"]},
    {"name": "config", "password_hash": "HASH", "roles": ["ConfigureAdmin"]},
    {"name": "boss", "password_hash": "HASH", "roles": ["Supervisor"]}])";
// The same, with diagnostics.enabled: EnabledFlag starts TRUE.
const std::string kEnabled = std::string(kUsers) + R"(, "diagnostics": {"enabled": true})";

const ua::NodeId kSessions(0,
                           id::Server_ServerDiagnostics_SessionsDiagnosticsSummary_SessionDiagnosticsArray);
const ua::NodeId kSecurity(
    0, id::Server_ServerDiagnostics_SessionsDiagnosticsSummary_SessionSecurityDiagnosticsArray);
const ua::NodeId kSubscriptions(0, id::Server_ServerDiagnostics_SubscriptionDiagnosticsArray);
const ua::NodeId kEnabledFlag(0, id::Server_ServerDiagnostics_EnabledFlag);

// The daemon's control loop, for a test: its own io_context and participant, the refresher, and the shards
// (the harness's and, when given, a second one) run by hand until a collection is back.
struct Control {
  explicit Control(ServiceHarness& h, asio::io_context* second = nullptr)
      : h(h), second(second), refresher(*h.server, h.space, ctx) {
    participant = h.space.reclaimer().register_participant();
  }
  ~Control() { h.space.reclaimer().go_offline(*participant); }

  // One tick, then the shards and the control loop until nothing is out (at most 5 s).
  void tick() {
    refresher.tick(*participant);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    do {
      h.ctx.restart();
      h.ctx.poll();
      if (second) {
        second->restart();
        second->poll();
      }
      ctx.restart();
      ctx.poll();
    } while (refresher.collecting() && std::chrono::steady_clock::now() < deadline);
    REQUIRE_FALSE(refresher.collecting());
    h.space.reclaimer().quiescent(*participant);
  }

  ServiceHarness& h;
  asio::io_context* second;
  asio::io_context ctx;
  addressspace::EpochReclaimer::Participant* participant = nullptr;
  services::DiagnosticsRefresher refresher;
};

template <class T>
std::vector<T> entries(const ua::DataValue& v) {
  REQUIRE(v.status.is_good());
  const auto* eos = v.value.get_if<std::vector<ua::ExtensionObject>>();
  REQUIRE(eos);
  std::vector<T> out;
  for (const auto& eo : *eos) {
    const T* t = eo.get<T>();
    REQUIRE(t);
    out.push_back(*t);
  }
  return out;
}

template <class T>
const T* entry_of(const std::vector<T>& all, const ua::NodeId& session) {
  for (const T& e : all) {
    if (e.session_id == session) return &e;
  }
  return nullptr;
}

ua::ReadRequest read_of(const ua::NodeId& node) {
  ua::ReadRequest r;
  r.nodes_to_read.push_back(ua::ReadValueId{node, 13, {}, {}});
  return r;
}

// The id of the reader's session when it is the only one it sees (a non-admin, or an admin alone).
template <class Side>
ua::NodeId own_session(Side& side) {
  const auto mine = entries<ua::SessionDiagnosticsDataType>(
      side.template call<ua::ReadResponse>(read_of(kSessions)).results.at(0));
  REQUIRE(mine.size() == 1);
  return mine[0].session_id;
}

// The harness's shard, a second one, and the control loop over both: what most cases start from.
struct TwoShards {
  asio::io_context ctx2;
  ServiceHarness h{"", "", kEnabled};
  SecondShard s2{h, ctx2};
  Control control{h, &ctx2};
  std::tuple<ServiceHarness&, SecondShard&, Control&> parts() { return {h, s2, control}; }
};

}  // namespace

TEST_CASE("diagnostics arrays: an entry per session on every shard, with counters that move",
          "[services][diagnostics][diagnostics-arrays]") {
  TwoShards t;
  auto [h, s2, control] = t.parts();
  REQUIRE(h.login(user("admin", "secret")).is_good());
  s2.login();
  control.tick();
  const ua::NodeId second = own_session(s2);  // a Read too
  for (int i = 0; i < 3; ++i) s2.call<ua::ReadResponse>(read_of(plant(".Speed")));
  s2.call<ua::WriteResponse>(write_request(plant(".Count"), int32_t{7}));
  ua::StatusCode fault;
  ua::ReadRequest too_many;
  for (int i = 0; i < 6; ++i) too_many.nodes_to_read.push_back(ua::ReadValueId{plant(".Speed"), 13, {}, {}});
  s2.call<ua::ReadResponse>(too_many, &fault);  // max_nodes_per_read 5: a ServiceFault
  REQUIRE(fault == status::BadTooManyOperations);
  // 5 Reads in all, one of them failed.
  control.tick();
  CHECK(control.refresher.refreshes() == 2);
  const auto all = entries<ua::SessionDiagnosticsDataType>(h.read(kSessions));
  REQUIRE(all.size() == 2);
  const auto* e = entry_of(all, second);
  REQUIRE(e);
  CHECK(e->session_name == ua::String("second"));
  CHECK(e->read_count.total_count == 5);
  CHECK(e->read_count.error_count == 1);
  CHECK(e->write_count.total_count == 1);
  CHECK(e->write_count.error_count == 0);
  // ActivateSession, 5 Reads and a Write (CreateSession has no session yet: it is not the session's).
  CHECK(e->total_request_count.total_count == 7);
  CHECK(e->total_request_count.error_count == 1);
  CHECK(e->actual_session_timeout == 60000);
  CHECK(e->client_connection_time.ticks > 0);
  CHECK(e->client_last_contact_time.ticks >= e->client_connection_time.ticks);
  CHECK(e->client_last_contact_time.ticks <= ua::DateTime::now().ticks);
  CHECK(e->current_subscriptions_count == 0);

  // They move with the next refresh, and only then.
  s2.call<ua::ReadResponse>(read_of(plant(".Speed")));
  CHECK(
      entry_of(entries<ua::SessionDiagnosticsDataType>(h.read(kSessions)), second)->read_count.total_count ==
      5);
  control.tick();
  CHECK(
      entry_of(entries<ua::SessionDiagnosticsDataType>(h.read(kSessions)), second)->read_count.total_count ==
      6);
}

TEST_CASE("diagnostics arrays: a request refused by the session checks is an unauthorized request",
          "[services][diagnostics][diagnostics-arrays]") {
  ServiceHarness h("", "", kEnabled);
  Control control(h);
  REQUIRE(h.login(user("admin", "secret")).is_good());
  SecondShard other(h, h.ctx);  // a second channel on the same shard
  other.token = h.token;        // the harness's session, used on a channel it is not bound to
  ua::StatusCode fault;
  other.call<ua::ReadResponse>(read_of(plant(".Speed")), &fault);
  REQUIRE(fault == status::BadSecureChannelIdInvalid);
  control.tick();
  const auto all = entries<ua::SessionDiagnosticsDataType>(h.read(kSessions));
  REQUIRE(all.size() == 1);
  CHECK(all[0].unauthorized_request_count == 1);
  CHECK(all[0].read_count.total_count == 0);  // the refused one never reached Read
}

TEST_CASE("diagnostics arrays: subscription entries count publishing",
          "[services][diagnostics][diagnostics-arrays]") {
  ServiceHarness h("", "", kEnabled);
  Control control(h);
  REQUIRE(h.login(user("admin", "secret")).is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Speed")}).status_code.is_good());
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Count"), 2, 10, 1, true, {}, ua::MonitoringMode::Disabled})
              .status_code.is_good());
  REQUIRE(changes(publish(h)).size() == 1);  // the initial value
  REQUIRE(h.write(plant(".Speed"), 20.0).is_good());
  REQUIRE(next_changes(h).size() == 1);
  ua::SetPublishingModeRequest off;
  off.publishing_enabled = false;
  off.subscription_ids = {sub};
  h.call<ua::SetPublishingModeResponse>(off);
  ua::RepublishRequest again;
  again.subscription_id = sub;
  again.retransmit_sequence_number = 1;
  h.call<ua::RepublishResponse>(again);
  again.retransmit_sequence_number = 999;
  ua::StatusCode fault;
  h.call<ua::RepublishResponse>(again, &fault);
  REQUIRE(fault == status::BadMessageNotAvailable);

  control.tick();
  const auto subs = entries<ua::SubscriptionDiagnosticsDataType>(h.read(kSubscriptions));
  REQUIRE(subs.size() == 1);
  const auto& d = subs[0];
  CHECK(d.subscription_id == sub);
  CHECK(d.session_id == own_session(h));
  CHECK(d.publishing_interval == 20);
  CHECK(d.max_keep_alive_count == 100);
  CHECK(d.max_lifetime_count == 1000);
  CHECK_FALSE(d.publishing_enabled);
  CHECK(d.disable_count == 1);
  CHECK(d.enable_count == 0);
  CHECK(d.data_change_notifications_count == 2);
  CHECK(d.notifications_count == 2);
  CHECK(d.publish_request_count >= 2);
  CHECK(d.monitored_item_count == 2);
  CHECK(d.disabled_monitored_item_count == 1);
  CHECK(d.next_sequence_number == 3);  // two data messages sent
  CHECK(d.unacknowledged_message_count == 2);
  CHECK(d.republish_request_count == 2);
  CHECK(d.republish_message_request_count == 2);
  CHECK(d.republish_message_count == 1);
  CHECK(d.current_lifetime_count > 0);
  const auto sessions = entries<ua::SessionDiagnosticsDataType>(h.read(kSessions));
  REQUIRE(sessions.size() == 1);
  CHECK(sessions[0].current_subscriptions_count == 1);
  CHECK(sessions[0].current_monitored_items_count == 2);
  CHECK(sessions[0].create_subscription_count.total_count == 1);
  CHECK(sessions[0].create_monitored_items_count.total_count == 2);
  CHECK(sessions[0].republish_count.total_count == 2);
  CHECK(sessions[0].republish_count.error_count == 1);
  CHECK(sessions[0].set_publishing_mode_count.total_count == 1);
}

TEST_CASE("diagnostics arrays: a closed session's entries go at the next refresh",
          "[services][diagnostics][diagnostics-arrays]") {
  TwoShards t;
  auto [h, s2, control] = t.parts();
  REQUIRE(h.login(user("admin", "secret")).is_good());
  s2.login();
  ua::CreateSubscriptionRequest cs;
  cs.requested_publishing_interval = 50;
  cs.publishing_enabled = true;
  REQUIRE(s2.call<ua::CreateSubscriptionResponse>(cs).response_header.service_result.is_good());
  control.tick();
  CHECK(entries<ua::SessionDiagnosticsDataType>(h.read(kSessions)).size() == 2);
  CHECK(entries<ua::SubscriptionDiagnosticsDataType>(h.read(kSubscriptions)).size() == 1);
  CHECK(entries<ua::SessionSecurityDiagnosticsDataType>(h.read(kSecurity)).size() == 2);
  ua::CloseSessionRequest close;
  close.delete_subscriptions = true;
  s2.call<ua::CloseSessionResponse>(close);
  control.tick();
  const auto left = entries<ua::SessionDiagnosticsDataType>(h.read(kSessions));
  REQUIRE(left.size() == 1);
  CHECK(left[0].session_id == own_session(h));
  CHECK(entries<ua::SubscriptionDiagnosticsDataType>(h.read(kSubscriptions)).empty());
  CHECK(entries<ua::SessionSecurityDiagnosticsDataType>(h.read(kSecurity)).size() == 1);
}

TEST_CASE("diagnostics arrays: a session without an administrative role sees its own entries",
          "[services][diagnostics][diagnostics-arrays][roles]") {
  TwoShards t;
  auto [h, s2, control] = t.parts();
  REQUIRE(h.login(user("boss", "secret")).is_good());  // Supervisor: not an administrator
  s2.login();                                          // anonymous
  const uint32_t mine = subscribe(h).subscription_id;
  ua::CreateSubscriptionRequest cs;
  cs.requested_publishing_interval = 50;
  cs.publishing_enabled = true;
  const uint32_t theirs = s2.call<ua::CreateSubscriptionResponse>(cs).subscription_id;
  control.tick();

  const auto sessions = entries<ua::SessionDiagnosticsDataType>(h.read(kSessions));
  REQUIRE(sessions.size() == 1);
  CHECK(sessions[0].session_name == ua::String("test"));
  const auto subs = entries<ua::SubscriptionDiagnosticsDataType>(h.read(kSubscriptions));
  REQUIRE(subs.size() == 1);
  CHECK(subs[0].subscription_id == mine);
  const auto other = entries<ua::SubscriptionDiagnosticsDataType>(
      s2.call<ua::ReadResponse>(read_of(kSubscriptions)).results.at(0));
  REQUIRE(other.size() == 1);
  CHECK(other[0].subscription_id == theirs);
  // SessionSecurityDiagnostics: administrators only (Part 5 §8.2.10), also through an index range.
  CHECK(h.read(kSecurity).status == status::BadUserAccessDenied);
  CHECK(h.read(kSecurity, 13, "0").status == status::BadUserAccessDenied);
  CHECK(s2.call<ua::ReadResponse>(read_of(kSecurity)).results.at(0).status == status::BadUserAccessDenied);
  CHECK(h.read(kSecurity, 18).value == ua::Variant(uint8_t{0}));  // UserAccessLevel says so
  // An index range applies to what the reader sees: index 1 is past its one entry.
  CHECK(h.read(kSessions, 13, "1").status == status::BadIndexRangeNoData);
}

TEST_CASE("diagnostics arrays: an administrator sees every entry and the security diagnostics",
          "[services][diagnostics][diagnostics-arrays][roles]") {
  TwoShards t;
  auto [h, s2, control] = t.parts();
  REQUIRE(h.login(user("config", "secret")).is_good());  // ConfigureAdmin
  s2.login();
  control.tick();
  CHECK(entries<ua::SessionDiagnosticsDataType>(h.read(kSessions)).size() == 2);
  const auto security = entries<ua::SessionSecurityDiagnosticsDataType>(h.read(kSecurity));
  REQUIRE(security.size() == 2);
  auto by_user = [&security](const char* name) -> const ua::SessionSecurityDiagnosticsDataType* {
    for (const auto& e : security) {
      if (e.client_user_id_of_session == ua::String(name)) return &e;
    }
    return nullptr;
  };
  const auto* mine = by_user("config");
  REQUIRE(mine);
  CHECK(mine->authentication_mechanism == ua::String("UserName"));
  CHECK(mine->transport_protocol == ua::String("opc.tcp"));
  CHECK(mine->encoding == ua::String("UA Binary"));
  CHECK(mine->security_mode == ua::MessageSecurityMode::None);
  CHECK(mine->security_policy_uri == ua::String("http://opcfoundation.org/UA/SecurityPolicy#None"));
  const auto* anonymous = entry_of(security, own_session(s2));
  REQUIRE(anonymous);
  CHECK(anonymous->authentication_mechanism == ua::String("Anonymous"));
  CHECK(anonymous->client_user_id_of_session == ua::String(""));
  CHECK(anonymous != mine);
}

TEST_CASE("diagnostics arrays: a monitored item on them reports the reader's part",
          "[services][diagnostics][diagnostics-arrays]") {
  TwoShards t;
  auto [h, s2, control] = t.parts();
  REQUIRE(h.login().is_good());  // anonymous: its own entry only
  s2.login();
  control.tick();
  const uint32_t sub = subscribe(h).subscription_id;
  REQUIRE(monitor(h, sub, ItemSpec{kSessions}).status_code.is_good());
  const auto first = changes(publish(h));
  REQUIRE(first.size() == 1);
  const auto seen = entries<ua::SessionDiagnosticsDataType>(first[0].value);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].session_id == own_session(h));
  // The next refresh changes the counters (the Reads and the Publish): the item reports again, still
  // with its own entry only.
  control.tick();
  const auto next = next_changes(h);
  REQUIRE(next.size() == 1);
  const auto again = entries<ua::SessionDiagnosticsDataType>(next[0].value);
  REQUIRE(again.size() == 1);
  CHECK(again[0].session_id == seen[0].session_id);
  CHECK(again[0].create_monitored_items_count.total_count == 1);
}

TEST_CASE("diagnostics arrays: EnabledFlag switches the collection, and only administrators write it",
          "[services][diagnostics][diagnostics-arrays][roles]") {
  SECTION("off by default: nothing is collected") {
    ServiceHarness h("", "", kUsers);
    Control control(h);
    REQUIRE(h.login(user("admin", "secret")).is_good());
    CHECK(h.read(kEnabledFlag).value == ua::Variant(false));
    control.tick();
    CHECK(control.refresher.refreshes() == 0);
    CHECK(entries<ua::SessionDiagnosticsDataType>(h.read(kSessions)).empty());  // Part 5: empty when off
    // An administrator switches it on: the next tick collects.
    REQUIRE(h.write(kEnabledFlag, true).is_good());
    control.tick();
    CHECK(control.refresher.refreshes() == 1);
    CHECK(entries<ua::SessionDiagnosticsDataType>(h.read(kSessions)).size() == 1);
    // ... and off again: the arrays are emptied, and no more collections run.
    REQUIRE(h.write(kEnabledFlag, false).is_good());
    control.tick();
    control.tick();
    CHECK(control.refresher.refreshes() == 1);
    CHECK(entries<ua::SessionDiagnosticsDataType>(h.read(kSessions)).empty());
    CHECK(entries<ua::SubscriptionDiagnosticsDataType>(h.read(kSubscriptions)).empty());
  }
  SECTION("diagnostics.enabled starts it TRUE") {
    ServiceHarness h("", "", kEnabled);
    Control control(h);
    REQUIRE(h.login().is_good());
    CHECK(h.read(kEnabledFlag).value == ua::Variant(true));
    control.tick();
    CHECK(control.refresher.refreshes() == 1);
  }
  SECTION("a session without an administrative role may not write it") {
    ServiceHarness h("", "", kEnabled);
    Control control(h);
    REQUIRE(h.login(user("boss", "secret")).is_good());
    CHECK(h.write(kEnabledFlag, false) == status::BadUserAccessDenied);
    CHECK(h.read(kEnabledFlag, 18).value == ua::Variant(uint8_t{0x01}));  // UserAccessLevel: read only
    CHECK(h.read(kEnabledFlag).value == ua::Variant(true));
    control.tick();
    CHECK(control.refresher.refreshes() == 1);
  }
  SECTION("nor may an anonymous one") {
    ServiceHarness h("", "", kUsers);
    REQUIRE(h.login().is_good());
    CHECK(h.write(kEnabledFlag, true) == status::BadUserAccessDenied);
    CHECK(h.read(kEnabledFlag).value == ua::Variant(false));
  }
}

TEST_CASE(
    "diagnostics arrays: a collection still out is not asked again, and one back after stop() is dropped",
    "[services][diagnostics][diagnostics-arrays]") {
  ServiceHarness h("", "", kEnabled);
  Control control(h);
  REQUIRE(h.login().is_good());
  control.refresher.tick(*control.participant);  // the shard has not run: the collection is out
  CHECK(control.refresher.collecting());
  control.refresher.tick(*control.participant);  // not asked twice
  control.refresher.stop();
  h.ctx.restart();
  h.ctx.poll();
  control.ctx.restart();
  CHECK(control.ctx.poll() == 1);  // one part came back: one collection went out
  CHECK_FALSE(control.refresher.collecting());
  CHECK(control.refresher.refreshes() == 0);  // dropped: stopped
}

TEST_CASE("diagnostics arrays: a client's long description strings are kept at their bound",
          "[services][diagnostics][diagnostics-arrays]") {
  // A CreateSession carrying 9000-byte strings (six of them fill most of one 64 KB chunk): each session
  // keeps at most 4096 bytes of the server URI, endpoint URL, ApplicationUri and ProductUri, and 256 of the
  // session and application names, so what a session costs the diagnostics arrays does not grow with what
  // the client sends (docs/SECURITY.md).
  ServiceHarness h{"", "", kEnabled};
  Control control{h};
  const std::string huge(9000, 'x');
  ua::CreateSessionRequest create;
  create.session_name = ua::String(huge);
  create.server_uri = ua::String(huge);
  create.endpoint_url = ua::String("opc.tcp://" + huge);
  create.client_description.application_uri = ua::String("urn:" + huge);
  create.client_description.product_uri = ua::String("urn:p" + huge);
  create.client_description.application_name.text = ua::String(huge);
  create.requested_session_timeout = 60000;
  ua::StatusCode s;
  const auto created = h.call<ua::CreateSessionResponse>(create, &s);
  REQUIRE(s.is_good());
  h.token = created.authentication_token;
  ua::ActivateSessionRequest activate;
  activate.user_identity_token = user("admin", "secret");
  h.call<ua::ActivateSessionResponse>(activate, &s);
  REQUIRE(s.is_good());
  control.tick();
  const auto all = entries<ua::SessionDiagnosticsDataType>(h.read(kSessions));
  REQUIRE(all.size() == 1);
  const auto& e = all[0];
  CHECK(e.session_name.view() == std::string_view(huge).substr(0, 256));
  CHECK(e.server_uri.view() == std::string_view(huge).substr(0, 4096));
  CHECK(e.endpoint_url.view().size() == 4096);
  CHECK(e.endpoint_url.view().substr(0, 10) == "opc.tcp://");
  CHECK(e.client_description.application_uri.view().size() == 4096);
  CHECK(e.client_description.product_uri.view().size() == 4096);
  CHECK(e.client_description.application_name.text.view().size() <= 256);
}
