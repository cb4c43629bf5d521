// A reload publishes a new NodeStore under running sessions (docs/OPERATIONS.md, "Reload"): the session and
// its subscription stay, monitored items move to the new store's cells (an item on a removed node reports
// BadNodeIdUnknown once and stays), values of unchanged nodes survive, and browse continuation points
// into the old store become invalid.
#include <catch2/catch.hpp>

#include <map>

#include "config/address_space_loader.hpp"
#include "services/event_record.hpp"
#include "tests/unit/services/service_harness.hpp"
#include "tests/unit/services/subscription_helpers.hpp"
#include "ua/generated/node_ids.hpp"

using namespace opcuad;
using namespace opcuad::services::test;
namespace status = opcuad::ua::status;

namespace {

std::string replaced(std::string s, std::string_view from, std::string_view to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The harness's node file without Count, and with Name an Int32 of initial value 7.
std::string changed_nodes() {
  std::string nodes = replaced(
      kNodesJson,
      R"({"kind": "variable", "name": "Count", "data_type": "Int32", "value": 1, "access": ["read", "write"]},)",
      "");
  return replaced(nodes, R"("name": "Name", "data_type": "String", "value": "pump")",
                  R"("name": "Name", "data_type": "Int32", "value": 7)");
}

// Loads `nodes` as the harness's node file under the harness's server file, then reloads the harness's
// address space with it (as the daemon's SIGHUP does on its control thread).
struct Reloader {
  explicit Reloader(ServiceHarness& harness) : h(harness) {}
  config::ReloadOutcome reload(const std::string& nodes) {
    auto next = std::make_unique<config::LoadResult>();
    next->config = h.loaded.config;
    next->config.nodes.clear();
    config::load_node_file_text(nodes, "nodes.json", *next);
    config::check_references(*next);
    for (const auto& e : next->errors) UNSCOPED_INFO(e.to_string());
    REQUIRE(next->ok());
    h.space.reclaimer().go_online(*h.participant);
    auto out = config::reload_address_space(running ? running->config : h.loaded.config, next->config,
                                            h.space, *h.participant);
    h.space.reclaimer().go_offline(*h.participant);
    if (out.errors.empty()) running = std::move(next);
    return out;
  }
  ServiceHarness& h;
  std::unique_ptr<config::LoadResult> running;
};

// Every data change of the publishes within `d` (keep-alives included in the waiting).
std::vector<ua::MonitoredItemNotification> changes_for(ServiceHarness& h, std::chrono::milliseconds d) {
  std::vector<ua::MonitoredItemNotification> out;
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    auto c = changes(publish(h));
    out.insert(out.end(), c.begin(), c.end());
  }
  return out;
}

std::vector<ua::MonitoredItemNotification> of(const std::vector<ua::MonitoredItemNotification>& all,
                                              uint32_t handle) {
  std::vector<ua::MonitoredItemNotification> out;
  for (const auto& n : all) {
    if (n.client_handle == handle) out.push_back(n);
  }
  return out;
}

}  // namespace

TEST_CASE("reload: the session and its items stay; a removed node reports BadNodeIdUnknown once",
          "[services][reload]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const ua::NodeId token = h.token;
  const uint32_t sub = subscribe(h, 20, 5).subscription_id;
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Count"), 1}).status_code.is_good());
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Speed"), 2}).status_code.is_good());
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Name"), 3}).status_code.is_good());
  const auto initial = changes_for(h, std::chrono::milliseconds(100));
  REQUIRE(of(initial, 1).size() == 1);
  REQUIRE(h.write(plant(".Speed"), ua::Variant(42.0)).is_good());
  REQUIRE(of(changes_for(h, std::chrono::milliseconds(100)), 2).size() == 1);

  Reloader r(h);
  const auto out = r.reload(changed_nodes());
  REQUIRE(out.errors.empty());
  CHECK(out.diff.removed == 1);
  CHECK(out.diff.changed == 1);  // Name's DataType

  const auto after = changes_for(h, std::chrono::milliseconds(300));
  const auto count = of(after, 1);
  REQUIRE(count.size() == 1);  // once, not at every sample
  CHECK(count[0].value.status == status::BadNodeIdUnknown);
  CHECK(of(after, 2).empty());  // Speed did not change
  const auto name = of(after, 3);
  REQUIRE(name.size() == 1);
  CHECK(name[0].value.value == ua::Variant(int32_t{7}));  // a new cell with the file's value, not "pump"
  CHECK(h.token == token);
  CHECK(h.read(plant(".Speed")).value == ua::Variant(42.0));  // the written value survived
  CHECK(h.read(plant(".Count")).status == status::BadNodeIdUnknown);

  // The item stays: it can be modified, and it resumes when a later reload brings its node back.
  ua::SetMonitoringModeRequest mode;
  mode.subscription_id = sub;
  mode.monitoring_mode = ua::MonitoringMode::Reporting;
  mode.monitored_item_ids = {1};
  const auto set = h.call<ua::SetMonitoringModeResponse>(mode);
  REQUIRE(set.results.size() == 1);
  CHECK(set.results[0].is_good());
  REQUIRE(r.reload(kNodesJson).errors.empty());
  const auto back = changes_for(h, std::chrono::milliseconds(300));
  const auto resumed = of(back, 1);
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].value.status.is_good());
  CHECK(resumed[0].value.value == ua::Variant(int32_t{1}));
}

TEST_CASE("reload: an exception-based item follows its node to a new cell", "[services][reload]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h, 20, 5).subscription_id;
  ItemSpec spec{plant(".Name"), 3};
  spec.interval = 0;
  const auto item = monitor(h, sub, spec);
  REQUIRE(item.status_code.is_good());
  REQUIRE(item.revised_sampling_interval == 0);
  REQUIRE(of(changes_for(h, std::chrono::milliseconds(100)), 3).size() == 1);
  Reloader r(h);
  REQUIRE(r.reload(changed_nodes()).errors.empty());
  auto first = of(changes_for(h, std::chrono::milliseconds(100)), 3);
  REQUIRE(first.size() == 1);
  CHECK(first[0].value.value == ua::Variant(int32_t{7}));
  // A write to the new cell wakes the item (it watches that cell now, not the old one).
  REQUIRE(h.write(plant(".Name"), ua::Variant(int32_t{8})).is_good());
  auto woken = of(changes_for(h, std::chrono::milliseconds(100)), 3);
  REQUIRE(woken.size() == 1);
  CHECK(woken[0].value.value == ua::Variant(int32_t{8}));
}

TEST_CASE("reload: browse continuation points into the old store become invalid", "[services][reload]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  ua::BrowseRequest b;
  b.requested_max_references_per_node = 4;
  b.nodes_to_browse.push_back(
      ua::BrowseDescription{plant(""), ua::BrowseDirection::Forward, ua::NodeId(0, 33), true, 0, 63});
  auto page = h.call<ua::BrowseResponse>(b);
  REQUIRE(!page.results[0].continuation_point.empty());

  Reloader r(h);
  REQUIRE(r.reload(kNodesJson).errors.empty());  // the same nodes, but another store
  ua::BrowseNextRequest next;
  next.continuation_points.push_back(page.results[0].continuation_point);
  auto stale = h.call<ua::BrowseNextResponse>(next);
  REQUIRE(stale.results.size() == 1);
  CHECK(stale.results[0].status_code == status::BadContinuationPointInvalid);
  CHECK(stale.results[0].references.empty());

  // Points taken from the new store work, and the dropped ones no longer hold the session's two slots.
  auto again = h.call<ua::BrowseResponse>(b);
  REQUIRE(!again.results[0].continuation_point.empty());
  auto second = h.call<ua::BrowseResponse>(b);
  REQUIRE(second.results[0].status_code.is_good());
  next.continuation_points = {again.results[0].continuation_point};
  auto fresh = h.call<ua::BrowseNextResponse>(next);
  CHECK(fresh.results[0].status_code.is_good());
  CHECK(fresh.results[0].references.size() == 4);
}

TEST_CASE(
    "reload: an item on a node the session may no longer read reports it once and resumes with the right",
    "[services][reload][roles]") {
  ServiceHarness h("", "", R"("users": [{"name": "olga", "password_hash": "HASH", "roles": ["Observer"]}])");
  REQUIRE(h.login(user("olga", "secret")).is_good());
  const uint32_t sub = subscribe(h, 20, 5).subscription_id;
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Speed"), 1}).status_code.is_good());
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Fixed"), 2}).status_code.is_good());
  REQUIRE(monitor(h, sub, ItemSpec{plant(".Period"), 3}).status_code.is_good());
  REQUIRE(of(changes_for(h, std::chrono::milliseconds(100)), 1).size() == 1);

  // Speed now only for Operators (olga is an Observer); Fixed no longer readable by anyone.
  std::string nodes =
      replaced(kNodesJson, R"("name": "Speed", "data_type": "Double", "value": 10.0,)",
               R"("name": "Speed", "data_type": "Double", "value": 10.0, "read_roles": ["Operator"],)");
  nodes = replaced(nodes, R"("name": "Fixed", "data_type": "Double", "value": 1.0})",
                   R"("name": "Fixed", "data_type": "Double", "value": 1.0, "access": ["write"]})");
  Reloader r(h);
  REQUIRE(r.reload(nodes).errors.empty());
  const auto after = changes_for(h, std::chrono::milliseconds(300));
  const auto speed = of(after, 1);
  REQUIRE(speed.size() == 1);  // once, not at every sample
  CHECK(speed[0].value.status == status::BadUserAccessDenied);
  CHECK(speed[0].value.value.is_empty());
  const auto fixed = of(after, 2);
  REQUIRE(fixed.size() == 1);
  CHECK(fixed[0].value.status == status::BadNotReadable);
  CHECK(of(after, 3).empty());  // Period kept its roles and value: nothing to report
  CHECK(h.read(plant(".Speed")).status == status::BadUserAccessDenied);  // what a Read says too

  // Nothing more while the right is missing, even when the value changes underneath.
  h.space.reclaimer().go_online(*h.participant);
  ua::DataValue written;
  written.value = ua::Variant(77.0);
  h.space.values().write(*h.space.current()->variable(h.space.current()->find(plant(".Speed")))->cell,
                         written, *h.participant);
  h.space.reclaimer().go_offline(*h.participant);
  CHECK(of(changes_for(h, std::chrono::milliseconds(100)), 1).empty());

  // The right back: the item resumes with the current value.
  REQUIRE(r.reload(kNodesJson).errors.empty());
  const auto back = of(changes_for(h, std::chrono::milliseconds(300)), 1);
  REQUIRE(back.size() == 1);
  CHECK(back[0].value.status.is_good());
  CHECK(back[0].value.value == ua::Variant(77.0));
}

TEST_CASE("reload: event items compile again against the new store and keep receiving",
          "[services][reload]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  ua::SimpleAttributeOperand message;
  message.type_definition_id = ua::NodeId(0, ua::id::BaseEventType);
  message.browse_path.push_back(ua::QualifiedName{0, ua::String("Message")});
  message.attribute_id = 13;
  ua::ContentFilter where;
  where.elements.push_back(ua::ContentFilterElement{
      ua::FilterOperator::OfType,
      {ua::ExtensionObject::make(ua::LiteralOperand{ua::Variant(ua::NodeId(0, ua::id::BaseEventType))})}});
  ItemSpec spec{ua::NodeId(0, ua::id::Server),
                3,
                0,
                10,
                true,
                ua::ExtensionObject::make(ua::EventFilter{{message}, where})};
  spec.attribute = 12;
  REQUIRE(monitor(h, sub, spec).status_code.is_good());
  auto raise = [&](const char* text) {
    const addressspace::NodeStore& store = *h.space.current();
    services::EventBuilder b(store, ua::NodeId(0, ua::id::BaseEventType),
                             store.find(ua::NodeId(0, ua::id::Server)));
    REQUIRE(b.valid());
    return b.message(text).build();
  };
  auto before = raise("built before the reload");
  Reloader r(h);
  REQUIRE(r.reload(kNodesJson).errors.empty());  // the same nodes, but another store
  h.read(plant(".Speed"));                       // the shard adapts to it
  // A record of the store the shard left cannot be evaluated against the new filters: dropped, counted.
  h.server->raise_event(before);
  h.server->raise_event(raise("after the reload"));
  std::vector<std::string> got;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.empty() && std::chrono::steady_clock::now() < until) {
    for (const auto& eo : publish(h).notification_message.notification_data) {
      if (const auto* en = eo.get<ua::EventNotificationList>()) {
        for (const auto& f : en->events) {
          const auto* t = f.event_fields.at(0).get_if<ua::LocalizedText>();
          got.push_back(t ? std::string(t->text.view()) : "");
        }
      }
    }
  }
  CHECK(got == std::vector<std::string>{"after the reload"});
  CHECK(h.server->events_dropped() == 1);
}

TEST_CASE("reload: a GeneralModelChangeEvent lists the nodes and references the reload changed",
          "[services][reload][events]") {
  ServiceHarness h;
  REQUIRE(h.login().is_good());
  const uint32_t sub = subscribe(h).subscription_id;
  ua::SimpleAttributeOperand changes_clause;
  changes_clause.type_definition_id = ua::NodeId(0, ua::id::GeneralModelChangeEventType);
  changes_clause.browse_path.push_back(ua::QualifiedName{0, ua::String("Changes")});
  changes_clause.attribute_id = 13;
  ua::SimpleAttributeOperand type_clause = changes_clause;
  type_clause.type_definition_id = ua::NodeId(0, ua::id::BaseEventType);
  type_clause.browse_path[0].name = ua::String("EventType");
  ItemSpec spec{ua::NodeId(0, ua::id::Server),
                4,
                0,
                10,
                true,
                ua::ExtensionObject::make(ua::EventFilter{{type_clause, changes_clause}, {}})};
  spec.attribute = 12;
  REQUIRE(monitor(h, sub, spec).status_code.is_good());
  Reloader r(h);
  const auto out = r.reload(changed_nodes());  // Count removed, Name's DataType String -> Int32
  REQUIRE(out.errors.empty());
  REQUIRE(out.changes.complete);
  h.server->raise_event(services::model_change_event(*h.space.current(), out.changes));
  std::vector<ua::EventFieldList> events;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (events.empty() && std::chrono::steady_clock::now() < until) {
    for (const auto& eo : publish(h).notification_message.notification_data) {
      if (const auto* en = eo.get<ua::EventNotificationList>()) events = en->events;
    }
  }
  REQUIRE(events.size() == 1);
  CHECK(events[0].event_fields.at(0) == ua::Variant(ua::NodeId(0, ua::id::GeneralModelChangeEventType)));
  const auto* list = events[0].event_fields.at(1).get_if<std::vector<ua::ExtensionObject>>();
  REQUIRE(list);
  // Each entry a ModelChangeStructureDataType (Part 5 §12.16), decoded from the wire by its encoding id.
  std::map<std::string, std::pair<ua::NodeId, uint8_t>> got;
  for (const auto& eo : *list) {
    CHECK(eo.type_id() == ua::NodeId(0, ua::id::ModelChangeStructureDataType_Encoding_DefaultBinary));
    const auto* c = eo.get<ua::ModelChangeStructureDataType>();
    REQUIRE(c);
    got[c->affected.to_string()] = {c->affected_type, c->verb};
  }
  namespace verb = addressspace::model_verb;
  REQUIRE(got.count(plant(".Count").to_string()));
  CHECK(got[plant(".Count").to_string()] ==
        std::pair{ua::NodeId(0, ua::id::BaseDataVariableType), verb::kNodeDeleted});
  REQUIRE(got.count(plant(".Name").to_string()));
  CHECK(got[plant(".Name").to_string()].second == verb::kDataTypeChanged);
  REQUIRE(got.count(plant("").to_string()));  // the folder lost its HasComponent to Count
  CHECK(got[plant("").to_string()] == std::pair{ua::NodeId(0, ua::id::FolderType), verb::kReferenceDeleted});
  CHECK_FALSE(got.count(plant(".Speed").to_string()));  // unchanged
  // The same reload again changes nothing with a verb: no event.
  const auto again = r.reload(changed_nodes());
  REQUIRE(again.errors.empty());
  CHECK(again.changes.entries.empty());
  CHECK(services::model_change_event(*h.space.current(), again.changes) == nullptr);
}

TEST_CASE("reload: past the bound of listed changes the event is the coarse BaseModelChangeEvent",
          "[services][reload][events]") {
  ServiceHarness h;
  addressspace::ModelChanges cut;
  cut.entries.push_back({plant(".Count"), {}, addressspace::model_verb::kNodeDeleted});
  cut.complete = false;
  auto e = services::model_change_event(*h.space.current(), cut);
  REQUIRE(e);
  const auto* types = h.space.current()->event_types();
  REQUIRE(types);
  CHECK(e->type() == *types->event_type(ua::NodeId(0, ua::id::BaseModelChangeEventType)));
  CHECK(e->field(addressspace::event_field::kChanges) == nullptr);
}
