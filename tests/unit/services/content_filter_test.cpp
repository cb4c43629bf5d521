// The EventFilter engine (Part 4 §7.22.3, §7.7): compile results, every operator, the three-valued logic,
// hostile filters, the filters real clients send, and no allocation in evaluation.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>

#include "services/content_filter.hpp"
#include "tests/unit/services/allocation_counter.hpp"

// A namespace of its own: the unit tests are built as unity sources.
namespace opcuad::services::content_filter_test {
namespace {

using FO = ua::FilterOperator;
namespace status = ua::status;

// Event types of namespace 0 (Part 5 §6.4, Part 9 §5): index, NodeId, supertype index.
enum : EventTypeIdx { kBase, kCondition, kAcknowledgeable, kAlarm, kAudit, kSystem, kTypeCount };
constexpr uint32_t kTypeIds[kTypeCount] = {2041, 2782, 2881, 2915, 2052, 2130};
constexpr int kParent[kTypeCount] = {-1, kBase, kCondition, kAcknowledgeable, kBase, kBase};

// The schema of the tests: fields by "/"-joined browse path (namespace 0), each declared on one type.
class FakeSchema : public EventSchema {
 public:
  FakeSchema() {
    for (const char* f : {"EventId", "EventType", "SourceNode", "SourceName", "Time", "ReceiveTime",
                          "LocalTime", "Message", "Severity"}) {
      add(f, kBase);
    }
    add("ConditionName", kCondition);
    add("Retain", kCondition);
    add("EnabledState", kCondition);
    add("EnabledState/Id", kCondition);
    add("AckedState/Id", kAcknowledgeable);
    add("ActiveState/Id", kAlarm);
    add("ClientUserId", kAudit);
  }
  FieldKey add(const std::string& path, EventTypeIdx declared) {
    auto [it, added] = fields_.try_emplace(path, static_cast<FieldKey>(fields_.size()), declared);
    return it->second.first;
  }
  FieldKey key(const std::string& path) const { return fields_.at(path).first; }

  std::optional<EventTypeIdx> event_type(const ua::NodeId& id) const override {
    for (EventTypeIdx t = 0; t < kTypeCount; ++t) {
      if (id.is_ns0(kTypeIds[t])) return t;
    }
    return std::nullopt;
  }
  bool is_subtype(EventTypeIdx sub, EventTypeIdx super) const override {
    for (int t = sub; t >= 0; t = kParent[t]) {
      if (t == super) return true;
    }
    return false;
  }
  std::optional<FieldKey> field(EventTypeIdx type, std::span<const ua::QualifiedName> path) const override {
    std::string joined;
    for (const auto& q : path) {
      if (q.namespace_index != 0) return std::nullopt;
      if (!joined.empty()) joined += '/';
      joined += q.name.view();
    }
    auto it = fields_.find(joined);
    if (it == fields_.end()) return std::nullopt;
    if (type != kBase && !is_subtype(type, it->second.second)) return std::nullopt;
    return it->second.first;
  }
  std::optional<ua::BuiltinType> builtin_of_data_type(const ua::NodeId& id) const override {
    if (id.namespace_index() != 0 || id.type() != ua::IdType::Numeric) return std::nullopt;
    if (id.numeric() >= 1 && id.numeric() <= 25) return static_cast<ua::BuiltinType>(id.numeric());
    if (id.numeric() == 290) return ua::BuiltinType::Double;    // Duration
    if (id.numeric() == 294) return ua::BuiltinType::DateTime;  // UtcTime
    return std::nullopt;
  }

 private:
  std::map<std::string, std::pair<FieldKey, EventTypeIdx>> fields_;
};

class FakeEvent : public EventView {
 public:
  explicit FakeEvent(EventTypeIdx t) : type_(t) {}
  FakeEvent& set(FieldKey k, ua::Variant v) {
    if (values_.size() <= k) values_.resize(k + 1u);
    values_[k] = std::move(v);
    return *this;
  }
  FakeEvent& set_condition(ua::NodeId id) {
    condition_ = ua::Variant(std::move(id));
    return *this;
  }
  EventTypeIdx type() const override { return type_; }
  const ua::Variant* field(FieldKey k) const override {
    if (k == kThisNodeField) return condition_.is_empty() ? nullptr : &condition_;
    return k < values_.size() && !values_[k].is_empty() ? &values_[k] : nullptr;
  }

 private:
  EventTypeIdx type_;
  std::vector<ua::Variant> values_;
  ua::Variant condition_;
};

std::vector<ua::QualifiedName> path_of(const std::string& dotted) {
  std::vector<ua::QualifiedName> p;
  size_t b = 0;
  while (b <= dotted.size() && !dotted.empty()) {
    const size_t e = std::min(dotted.find('/', b), dotted.size());
    p.push_back(ua::QualifiedName{0, ua::String(dotted.substr(b, e - b))});
    b = e + 1;
  }
  return p;
}

ua::SimpleAttributeOperand sao(const std::string& path, ua::NodeId type = ua::NodeId(0, 2041),
                               uint32_t attribute = 13, const char* range = nullptr) {
  ua::SimpleAttributeOperand o;
  o.type_definition_id = std::move(type);
  o.browse_path = path_of(path);
  o.attribute_id = attribute;
  if (range) o.index_range = ua::String(range);
  return o;
}

ua::ExtensionObject field(const std::string& path, ua::NodeId type = ua::NodeId(0, 2041)) {
  return ua::ExtensionObject::make(sao(path, std::move(type)));
}
ua::ExtensionObject lit(ua::Variant v) {
  return ua::ExtensionObject::make(ua::LiteralOperand{std::move(v)});
}
ua::ExtensionObject elem(uint32_t i) {
  return ua::ExtensionObject::make(ua::ElementOperand{i});
}
ua::ContentFilterElement el(FO op, std::vector<ua::ExtensionObject> operands) {
  return ua::ContentFilterElement{op, std::move(operands)};
}

ua::EventFilter filter_of(std::vector<ua::ContentFilterElement> where) {
  ua::EventFilter f;
  f.select_clauses.push_back(sao("EventId"));
  f.where_clause.elements = std::move(where);
  return f;
}

const FakeSchema& schema() {
  static const FakeSchema s;
  return s;
}

// Compiles `where` (one select clause) and evaluates it against `ev`; REQUIRES a Good compilation.
bool eval(std::vector<ua::ContentFilterElement> where, const EventView& ev) {
  auto c = compile(filter_of(std::move(where)), schema(), FilterLimits{});
  INFO(c.status.name());
  REQUIRE(c.status.is_good());
  return matches(c.filter, ev);
}

// A one-element filter op(a, b) on an event without fields.
bool eval2(FO op, ua::Variant a, ua::Variant b) {
  return eval({el(op, {lit(std::move(a)), lit(std::move(b))})}, FakeEvent(kBase));
}

// The status of the element `i` of a where clause compiled alone, and its operand codes.
ua::ContentFilterElementResult where_result(std::vector<ua::ContentFilterElement> where, size_t i,
                                            ua::StatusCode* overall = nullptr) {
  auto c = compile(filter_of(std::move(where)), schema(), FilterLimits{});
  if (overall) *overall = c.status;
  const auto& r = c.result.where_clause_result.element_results;
  if (r.empty()) return {};
  REQUIRE(i < r.size());
  return r[i];
}

}  // namespace

// ---- select clauses ----

TEST_CASE("select: fields in clause order, null for absent fields", "[filter][select]") {
  const auto& s = schema();
  ua::EventFilter f;
  f.select_clauses = {sao("EventId"), sao("Severity"), sao("ConditionName"), sao("Message")};
  auto c = compile(f, s, FilterLimits{});
  REQUIRE(c.status.is_good());
  CHECK(c.result_empty());
  FakeEvent ev(kCondition);
  ev.set(s.key("EventId"), ua::ByteString("e1")).set(s.key("Severity"), uint16_t{500});
  ev.set(s.key("ConditionName"), ua::String("High"));
  std::vector<ua::Variant> got;
  ua::Variant scratch;
  for_each_selected(c.filter, ev, scratch, [&](const ua::Variant& v) { got.push_back(v); });
  REQUIRE(got.size() == 4);
  CHECK(got[0] == ua::Variant(ua::ByteString("e1")));
  CHECK(got[1] == ua::Variant(uint16_t{500}));
  CHECK(got[2] == ua::Variant(ua::String("High")));
  CHECK(got[3].is_empty());
}

TEST_CASE("select: a clause of a named type is null for events of other types", "[filter][select]") {
  const auto& s = schema();
  ua::EventFilter f;
  f.select_clauses = {sao("ConditionName", ua::NodeId(0, 2782)), sao("Severity", ua::NodeId(0, 2782))};
  auto c = compile(f, s, FilterLimits{});
  REQUIRE(c.status.is_good());
  ua::Variant scratch;
  FakeEvent cond(kAlarm), sys(kSystem);
  cond.set(s.key("ConditionName"), ua::String("A")).set(s.key("Severity"), uint16_t{1});
  sys.set(s.key("Severity"), uint16_t{1});
  CHECK(selected_value(c.filter, 0, cond, scratch) == ua::Variant(ua::String("A")));
  CHECK(selected_value(c.filter, 1, cond, scratch) == ua::Variant(uint16_t{1}));  // inherited field
  CHECK(selected_value(c.filter, 1, sys, scratch).is_empty());                    // not a ConditionType event
}

TEST_CASE("select: the ConditionId clause with ConditionType, BaseEventType or a null type",
          "[filter][select]") {
  for (const ua::NodeId& type : {ua::NodeId(0, 2782), ua::NodeId(0, 2041), ua::NodeId()}) {
    ua::EventFilter f;
    f.select_clauses = {sao("", type, 1)};
    auto c = compile(f, schema(), FilterLimits{});
    REQUIRE(c.status.is_good());
    CHECK(c.result_empty());
    ua::Variant scratch;
    FakeEvent cond(kAlarm);
    cond.set_condition(ua::NodeId(3, ua::String("Boiler.HighTemp")));
    CHECK(selected_value(c.filter, 0, cond, scratch) ==
          ua::Variant(ua::NodeId(3, ua::String("Boiler.HighTemp"))));
    CHECK(selected_value(c.filter, 0, FakeEvent(kSystem), scratch).is_empty());
  }
}

TEST_CASE("select: an index range selects part of an array or string", "[filter][select]") {
  const auto& s = schema();
  ua::EventFilter f;
  f.select_clauses = {sao("Message", ua::NodeId(0, 2041), 13, "1:2"),
                      sao("EventId", ua::NodeId(0, 2041), 13, "5")};
  auto c = compile(f, s, FilterLimits{});
  REQUIRE(c.status.is_good());
  FakeEvent ev(kBase);
  ev.set(s.key("Message"), std::vector<int32_t>{10, 20, 30, 40});
  ev.set(s.key("EventId"), ua::ByteString("ab"));
  ua::Variant scratch;
  CHECK(selected_value(c.filter, 0, ev, scratch) == ua::Variant(std::vector<int32_t>{20, 30}));
  CHECK(selected_value(c.filter, 1, ev, scratch).is_empty());  // beyond the end: no data, null
}

TEST_CASE("select: the status of each clause that cannot select anything", "[filter][select][compile]") {
  std::vector<ua::QualifiedName> long_path(1000, ua::QualifiedName{0, ua::String("A")});
  ua::SimpleAttributeOperand too_long = sao("EventId");
  too_long.browse_path = long_path;
  ua::EventFilter f;
  f.select_clauses = {
      sao("EventId"),                                  // 0 Good
      sao("EventId", ua::NodeId(0, 9999)),             // 1 unknown type
      sao("EventId", ua::NodeId(0, 6)),                // 2 a DataType, not an event type
      sao("NoSuchField", ua::NodeId(0, 2782)),         // 3 not declared on ConditionType
      sao("ClientUserId", ua::NodeId(0, 2782)),        // 4 an AuditEventType field, not a ConditionType one
      sao("EventId", ua::NodeId(0, 2041), 0),          // 5 attribute 0
      sao("EventId", ua::NodeId(0, 2041), 99),         // 6 no such attribute
      sao("EventId", ua::NodeId(0, 2041), 4),          // 7 DisplayName: not supported for a field
      sao("", ua::NodeId(0, 2782), 13),                // 8 Value of the event itself
      sao("EventId", ua::NodeId(0, 2041), 13, "abc"),  // 9 garbage index range
      sao("EventId", ua::NodeId(0, 2041), 13, "5:2"),  // 10 reversed range
      too_long,                                        // 11 a 1,000-element browse path
      sao("NoSuchField"),                              // 12 BaseEventType: Good, always null
  };
  ua::SimpleAttributeOperand empty_name = sao("EnabledState/Id");
  empty_name.browse_path[1].name = ua::String("");
  f.select_clauses.push_back(empty_name);  // 13
  auto c = compile(f, schema(), FilterLimits{});
  CHECK(c.status.is_good());  // clause errors alone do not fail the item
  const auto& r = c.result.select_clause_results;
  REQUIRE(r.size() == f.select_clauses.size());
  CHECK(r[0] == status::Good);
  CHECK(r[1] == status::BadTypeDefinitionInvalid);
  CHECK(r[2] == status::BadTypeDefinitionInvalid);
  CHECK(r[3] == status::BadNodeIdUnknown);
  CHECK(r[4] == status::BadNodeIdUnknown);
  CHECK(r[5] == status::BadAttributeIdInvalid);
  CHECK(r[6] == status::BadAttributeIdInvalid);
  CHECK(r[7] == status::BadAttributeIdInvalid);
  CHECK(r[8] == status::BadAttributeIdInvalid);
  CHECK(r[9] == status::BadIndexRangeInvalid);
  CHECK(r[10] == status::BadIndexRangeInvalid);
  CHECK(r[11] == status::BadBrowseNameInvalid);
  CHECK(r[12] == status::Good);
  CHECK(r[13] == status::BadBrowseNameInvalid);
  CHECK(c.result.where_clause_result.element_results.empty());
  // Invalid clauses answer null; the valid ones still deliver.
  FakeEvent ev(kAlarm);
  ev.set(schema().key("EventId"), ua::ByteString("x"));
  ua::Variant scratch;
  CHECK(selected_value(c.filter, 0, ev, scratch) == ua::Variant(ua::ByteString("x")));
  for (size_t i = 1; i < f.select_clauses.size(); ++i)
    CHECK(selected_value(c.filter, i, ev, scratch).is_empty());
}

TEST_CASE("select: no clause, or no valid clause, fails the filter", "[filter][select][compile]") {
  ua::EventFilter none;
  auto c = compile(none, schema(), FilterLimits{});
  CHECK(c.status == status::BadEventFilterInvalid);
  ua::EventFilter bad;
  bad.select_clauses = {sao("EventId", ua::NodeId(0, 9999)), sao("EventId", ua::NodeId(0, 2041), 99)};
  c = compile(bad, schema(), FilterLimits{});
  CHECK(c.status == status::BadEventFilterInvalid);
  REQUIRE(c.result.select_clause_results.size() == 2);
  CHECK(c.result.select_clause_results[0] == status::BadTypeDefinitionInvalid);
}

// ---- operators ----

TEST_CASE("where: an empty where clause passes every event", "[filter][where]") {
  CHECK(eval({}, FakeEvent(kBase)));
}

TEST_CASE("where: Equals", "[filter][where]") {
  CHECK(eval2(FO::Equals, int32_t{5}, 5.0));
  CHECK_FALSE(eval2(FO::Equals, int32_t{5}, int32_t{6}));
  CHECK(eval2(FO::Equals, ua::String("7"), uint16_t{7}));
  CHECK_FALSE(eval2(FO::Equals, ua::String("x"), uint16_t{7}));  // conversion fails: FALSE
  CHECK_FALSE(eval2(FO::Equals, ua::DateTime{5}, int64_t{5}));   // no conversion: FALSE
  CHECK_FALSE(eval2(FO::Equals, ua::Variant(), ua::Variant()));
  CHECK(eval2(FO::Equals, ua::NodeId(0, 2782), ua::NodeId(0, 2782)));
  CHECK(eval2(FO::Equals, std::vector<uint8_t>{1, 2}, std::vector<uint8_t>{1, 2}));
}

TEST_CASE("where: IsNull", "[filter][where]") {
  const auto& s = schema();
  FakeEvent ev(kBase);
  ev.set(s.key("Severity"), uint16_t{1});
  CHECK(eval({el(FO::IsNull, {field("Message")})}, ev));
  CHECK_FALSE(eval({el(FO::IsNull, {field("Severity")})}, ev));
  CHECK(eval({el(FO::IsNull, {lit(ua::Variant())})}, ev));
  CHECK(eval({el(FO::IsNull, {field("NoSuchField")})}, ev));
}

TEST_CASE("where: ordered comparisons", "[filter][where]") {
  CHECK(eval2(FO::GreaterThan, uint16_t{700}, int32_t{500}));
  CHECK_FALSE(eval2(FO::GreaterThan, uint16_t{500}, int32_t{500}));
  CHECK(eval2(FO::GreaterThanOrEqual, uint16_t{500}, int32_t{500}));
  CHECK(eval2(FO::LessThan, -1.5, int8_t{-1}));
  CHECK(eval2(FO::LessThanOrEqual, ua::String("abc"), ua::String("abc")));
  CHECK(eval2(FO::LessThan, ua::DateTime{1}, ua::DateTime{2}));
  CHECK_FALSE(eval2(FO::LessThan, ua::NodeId(0, 1), ua::NodeId(0, 2)));  // NodeIds have no order
  CHECK_FALSE(eval2(FO::GreaterThan, ua::Variant(), int32_t{0}));
  CHECK_FALSE(eval2(FO::GreaterThan, std::vector<int32_t>{2}, std::vector<int32_t>{1}));
}

TEST_CASE("where: Between", "[filter][where]") {
  auto between = [](ua::Variant v, ua::Variant lo, ua::Variant hi) {
    return eval({el(FO::Between, {lit(std::move(v)), lit(std::move(lo)), lit(std::move(hi))})},
                FakeEvent(kBase));
  };
  CHECK(between(uint16_t{500}, int32_t{100}, int32_t{800}));
  CHECK(between(uint16_t{100}, int32_t{100}, int32_t{800}));
  CHECK(between(uint16_t{800}, int32_t{100}, int32_t{800}));
  CHECK_FALSE(between(uint16_t{801}, int32_t{100}, int32_t{800}));
  CHECK_FALSE(between(uint16_t{500}, int32_t{800}, int32_t{100}));
  CHECK_FALSE(between(ua::String("x"), int32_t{0}, int32_t{1}));
}

TEST_CASE("where: InList", "[filter][where]") {
  auto in = [](std::vector<ua::ExtensionObject> ops) {
    return eval({el(FO::InList, std::move(ops))}, FakeEvent(kBase));
  };
  CHECK(in({lit(int32_t{3}), lit(int32_t{1}), lit(int32_t{2}), lit(int32_t{3})}));
  CHECK(in({lit(int32_t{3}), lit(ua::String("3"))}));
  CHECK_FALSE(in({lit(int32_t{4}), lit(int32_t{1}), lit(int32_t{2})}));
  CHECK_FALSE(in({lit(ua::Variant()), lit(ua::Variant())}));
}

TEST_CASE("where: InList of NodeId literals (searched sorted) agrees with Equals", "[filter][where]") {
  const auto& s = schema();
  std::vector<ua::ExtensionObject> ops{field("EventType")};
  for (uint32_t id : {2915u, 2041u, 3000u, 2130u, 1u}) ops.push_back(lit(ua::NodeId(0, id)));
  ops.push_back(lit(ua::NodeId(2, ua::String("MyEvent"))));
  for (const ua::Variant& v :
       {ua::Variant(ua::NodeId(0, 2130)), ua::Variant(ua::NodeId(0, 1)),
        ua::Variant(ua::NodeId(2, ua::String("MyEvent"))), ua::Variant(ua::NodeId(0, 2052)),
        ua::Variant(ua::NodeId(1, 2130)), ua::Variant(ua::String("i=2130")),
        ua::Variant(ua::ExpandedNodeId{ua::NodeId(0, 3000), {}, 0}), ua::Variant()}) {
    FakeEvent ev(kBase);
    ev.set(s.key("EventType"), v);
    bool any = false;
    for (size_t k = 1; k < ops.size(); ++k)
      any = any || eval({el(FO::Equals, {field("EventType"), ops[k]})}, ev);
    CHECK(eval({el(FO::InList, ops)}, ev) == any);
  }
}

TEST_CASE("where: Like patterns", "[filter][where][like]") {
  CHECK(like_match("Boiler1", "Boiler%"));
  CHECK(like_match("Boiler", "Boiler%"));
  CHECK(like_match("xBoiler", "%Boiler"));
  CHECK_FALSE(like_match("Boile", "Boiler%"));
  CHECK(like_match("abc", "a_c"));
  CHECK_FALSE(like_match("ac", "a_c"));
  CHECK(like_match("a%c", "a\\%c"));
  CHECK_FALSE(like_match("abc", "a\\%c"));
  CHECK(like_match("a_c", "a\\_c"));
  CHECK(like_match("a\\c", "a\\\\c"));
  CHECK(like_match("b", "[abc]"));
  CHECK_FALSE(like_match("d", "[abc]"));
  CHECK(like_match("d", "[^abc]"));
  CHECK_FALSE(like_match("a", "[^abc]"));
  CHECK(like_match("Tank7", "Tank[0-9]"));
  CHECK_FALSE(like_match("TankX", "Tank[0-9]"));
  CHECK(like_match("]", "[\\]]"));
  CHECK(like_match("", "%"));
  CHECK(like_match("", ""));
  CHECK_FALSE(like_match("a", ""));
  CHECK(like_match("mississippi", "%iss%ppi"));
  CHECK(like_match("\xC3\xA9t\xC3\xA9", "_t_"));  // "été": _ is one character, not one byte
  CHECK(like_match("caf\xC3\xA9", "caf[\xC3\xA0-\xC3\xBF]"));
  CHECK_FALSE(like_pattern_valid("[abc"));
  CHECK_FALSE(like_pattern_valid("abc\\"));
  CHECK(like_pattern_valid("a[^b-d]%_\\%"));
  // Through the operator: a LocalizedText field resolves to its text.
  const auto& s = schema();
  FakeEvent ev(kBase);
  ev.set(s.key("Message"), ua::LocalizedText{ua::String("en"), ua::String("Level high in tank 3")});
  CHECK(eval({el(FO::Like, {field("Message"), lit(ua::String("%high%"))})}, ev));
  CHECK_FALSE(eval({el(FO::Like, {field("Message"), lit(ua::String("%low%"))})}, ev));
  CHECK_FALSE(eval({el(FO::Like, {field("Severity"), lit(ua::String("%"))})}, ev));  // null field
}

TEST_CASE("where: Like with a pattern full of % stays bounded", "[filter][where][like][hostile]") {
  const std::string text(20000, 'a');
  std::string pattern;
  for (int i = 0; i < 500; ++i) pattern += "%a";
  pattern += "b";  // never matches: the worst case of the two-pointer matcher
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_FALSE(like_match(text, pattern));
  CHECK_FALSE(like_match(text, std::string(1024, '%') + "b"));
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  CHECK(ms.count() < 2000);
}

TEST_CASE("where: Not, And, Or with NULL (three-valued logic)", "[filter][where][logic]") {
  // Element 0 is the operator under test; T, F and N are literals TRUE, FALSE and a null Variant.
  const ua::Variant T(true), F(false), N;
  auto and_ = [](const ua::Variant& a, const ua::Variant& b) {
    return eval({el(FO::Equals, {elem(1), lit(true)}), el(FO::And, {lit(a), lit(b)})}, FakeEvent(kBase));
  };
  auto and_is_null = [](const ua::Variant& a, const ua::Variant& b) {
    return eval({el(FO::IsNull, {elem(1)}), el(FO::And, {lit(a), lit(b)})}, FakeEvent(kBase));
  };
  auto or_ = [](const ua::Variant& a, const ua::Variant& b) {
    return eval({el(FO::Equals, {elem(1), lit(true)}), el(FO::Or, {lit(a), lit(b)})}, FakeEvent(kBase));
  };
  auto or_is_null = [](const ua::Variant& a, const ua::Variant& b) {
    return eval({el(FO::IsNull, {elem(1)}), el(FO::Or, {lit(a), lit(b)})}, FakeEvent(kBase));
  };
  CHECK(and_(T, T));
  CHECK_FALSE(and_(T, F));
  CHECK_FALSE(and_is_null(F, N));  // FALSE AND NULL = FALSE
  CHECK_FALSE(and_is_null(N, F));
  CHECK(and_is_null(T, N));  // TRUE AND NULL = NULL
  CHECK(and_is_null(N, N));
  CHECK(or_(T, N));  // TRUE OR NULL = TRUE
  CHECK(or_(N, T));
  CHECK_FALSE(or_(F, F));
  CHECK(or_is_null(F, N));  // FALSE OR NULL = NULL
  CHECK(or_is_null(N, N));
  // Not: NULL stays NULL; a non-Boolean that does not convert is NULL.
  CHECK(eval({el(FO::Not, {lit(false)})}, FakeEvent(kBase)));
  CHECK_FALSE(eval({el(FO::Not, {lit(true)})}, FakeEvent(kBase)));
  CHECK(eval({el(FO::IsNull, {elem(1)}), el(FO::Not, {lit(N)})}, FakeEvent(kBase)));
  CHECK(eval({el(FO::IsNull, {elem(1)}), el(FO::Not, {lit(ua::NodeId(0, 1))})}, FakeEvent(kBase)));
  CHECK(eval({el(FO::Not, {lit(ua::String("false"))})}, FakeEvent(kBase)));  // String -> Boolean is implicit
  // An event passes only on TRUE: NULL at the top drops it.
  CHECK_FALSE(eval({el(FO::And, {lit(true), lit(N)})}, FakeEvent(kBase)));
}

TEST_CASE("where: Cast", "[filter][where]") {
  auto cast_eq = [](ua::Variant v, uint32_t type, ua::Variant expect) {
    return eval({el(FO::Equals, {elem(1), lit(std::move(expect))}),
                 el(FO::Cast, {lit(std::move(v)), lit(ua::NodeId(0, type))})},
                FakeEvent(kBase));
  };
  CHECK(cast_eq(2.6, 6, int32_t{3}));                            // Double -> Int32, rounded
  CHECK(cast_eq(int32_t{42}, 12, ua::String("42")));             // Int32 -> String
  CHECK(cast_eq(ua::String("ns=1;i=5"), 17, ua::NodeId(1, 5)));  // String -> NodeId
  CHECK(cast_eq(1.25, 290, 1.25));                               // Duration: its built-in type, Double
  // A failed cast is NULL.
  CHECK(eval({el(FO::IsNull, {elem(1)}), el(FO::Cast, {lit(ua::String("x")), lit(ua::NodeId(0, 6))})},
             FakeEvent(kBase)));
  CHECK(eval({el(FO::IsNull, {elem(1)}), el(FO::Cast, {lit(ua::DateTime{1}), lit(ua::NodeId(0, 6))})},
             FakeEvent(kBase)));
}

TEST_CASE("where: BitwiseAnd and BitwiseOr", "[filter][where]") {
  auto bit_eq = [](FO op, ua::Variant a, ua::Variant b, ua::Variant expect) {
    return eval(
        {el(FO::Equals, {elem(1), lit(std::move(expect))}), el(op, {lit(std::move(a)), lit(std::move(b))})},
        FakeEvent(kBase));
  };
  CHECK(bit_eq(FO::BitwiseAnd, uint16_t{0x0F0F}, uint16_t{0x00FF}, uint16_t{0x000F}));
  CHECK(bit_eq(FO::BitwiseOr, uint16_t{0x0F00}, int32_t{0x00F0}, int32_t{0x0FF0}));
  CHECK(bit_eq(FO::BitwiseAnd, int64_t{-1}, int64_t{6}, int64_t{6}));
  CHECK(eval({el(FO::IsNull, {elem(1)}), el(FO::BitwiseAnd, {lit(1.0), lit(int32_t{1})})}, FakeEvent(kBase)));
  CHECK(eval({el(FO::IsNull, {elem(1)}), el(FO::BitwiseOr, {lit(ua::Variant()), lit(int32_t{1})})},
             FakeEvent(kBase)));
}

TEST_CASE("where: OfType", "[filter][where]") {
  auto of = [](uint32_t type, EventTypeIdx ev) {
    return eval({el(FO::OfType, {lit(ua::NodeId(0, type))})}, FakeEvent(ev));
  };
  CHECK(of(2881, kAlarm));  // AlarmConditionType is an AcknowledgeableConditionType
  CHECK(of(2881, kAcknowledgeable));
  CHECK_FALSE(of(2881, kCondition));
  CHECK(of(2041, kSystem));
  CHECK_FALSE(of(2052, kSystem));
}

TEST_CASE("where: a SimpleAttributeOperand of a named type restricts to that type", "[filter][where]") {
  const auto& s = schema();
  FakeEvent alarm(kAlarm), sys(kSystem);
  alarm.set(s.key("Severity"), uint16_t{900});
  sys.set(s.key("Severity"), uint16_t{900});
  const auto where = [] {
    return std::vector{el(FO::GreaterThan, {field("Severity", ua::NodeId(0, 2782)), lit(int32_t{500})})};
  };
  CHECK(eval(where(), alarm));
  CHECK_FALSE(eval(where(), sys));
  // With an index range on a where-clause operand.
  FakeEvent arr(kBase);
  arr.set(s.key("Message"), std::vector<int32_t>{1, 2, 3});
  auto w = filter_of({el(FO::Equals, {ua::ExtensionObject::make(sao("Message", ua::NodeId(0, 2041), 13, "2")),
                                      lit(std::vector<int32_t>{3})})});
  auto c = compile(w, s, FilterLimits{});
  REQUIRE(c.status.is_good());
  CHECK(matches(c.filter, arr));
}

TEST_CASE("where: unreachable elements are validated but not evaluated", "[filter][where]") {
  // Element 1 is referenced by nobody; element 0 alone decides.
  CHECK(eval({el(FO::Equals, {lit(int32_t{1}), lit(int32_t{1})}), el(FO::OfType, {lit(ua::NodeId(0, 2052))})},
             FakeEvent(kBase)));
  ua::StatusCode overall;
  auto r = where_result(
      {el(FO::Equals, {lit(int32_t{1}), lit(int32_t{1})}), el(FO::OfType, {lit(ua::NodeId(0, 77))})}, 1,
      &overall);
  CHECK(overall == status::BadEventFilterInvalid);
  CHECK(r.status_code == status::BadFilterOperandInvalid);
}

// ---- compile results of the where clause ----

TEST_CASE("compile: element and operand result codes", "[filter][compile]") {
  ua::StatusCode overall;
  // Unknown operator.
  auto r = where_result({el(static_cast<FO>(99), {lit(int32_t{1})})}, 0, &overall);
  CHECK(overall == status::BadEventFilterInvalid);
  CHECK(r.status_code == status::BadFilterOperatorInvalid);
  CHECK(r.operand_status_codes.empty());
  CHECK(where_result({el(static_cast<FO>(-1), {lit(int32_t{1})})}, 0).status_code ==
        status::BadFilterOperatorInvalid);
  // InView and RelatedTo.
  CHECK(where_result({el(FO::InView, {lit(ua::NodeId(0, 85))})}, 0).status_code ==
        status::BadFilterOperatorUnsupported);
  CHECK(where_result({el(FO::RelatedTo, {lit(1), lit(2), lit(3), lit(4), lit(5), lit(6)})}, 0).status_code ==
        status::BadFilterOperatorUnsupported);
  // Operand counts.
  CHECK(where_result({el(FO::Equals, {lit(int32_t{1})})}, 0).status_code ==
        status::BadFilterOperandCountMismatch);
  CHECK(where_result({el(FO::Equals, {lit(1), lit(2), lit(3)})}, 0).status_code ==
        status::BadFilterOperandCountMismatch);
  CHECK(where_result({el(FO::Not, {lit(true), lit(true)})}, 0).status_code ==
        status::BadFilterOperandCountMismatch);
  CHECK(where_result({el(FO::InList, {lit(true)})}, 0).status_code == status::BadFilterOperandCountMismatch);
  CHECK(where_result({el(FO::Between, {lit(1), lit(2)})}, 0).status_code ==
        status::BadFilterOperandCountMismatch);
  CHECK(where_result({el(FO::IsNull, {})}, 0).status_code == status::BadFilterOperandCountMismatch);
}

TEST_CASE("compile: operand codes, with Good for the good operands and elements", "[filter][compile]") {
  ua::AttributeOperand attr;
  attr.node_id = ua::NodeId(0, 2253);
  attr.attribute_id = 13;
  auto r = where_result({el(FO::Equals, {lit(int32_t{1}), ua::ExtensionObject::make(attr)})}, 0);
  CHECK(r.status_code == status::BadFilterOperandInvalid);
  REQUIRE(r.operand_status_codes.size() == 2);
  CHECK(r.operand_status_codes[0] == status::Good);
  CHECK(r.operand_status_codes[1] == status::BadFilterOperandInvalid);  // AttributeOperand: Query only
  // An ExtensionObject that is no FilterOperand, and an empty one.
  r = where_result({el(FO::Equals, {ua::ExtensionObject::undecoded(ua::NodeId(0, 12345),
                                                                   ua::ExtensionObject::Encoding::ByteString,
                                                                   ua::ByteString("xx")),
                                    ua::ExtensionObject()})},
                   0);
  CHECK(r.operand_status_codes ==
        std::vector<ua::StatusCode>{status::BadFilterOperandInvalid, status::BadFilterOperandInvalid});
  // A SimpleAttributeOperand with the select clauses' codes.
  r = where_result(
      {el(FO::Equals, {field("Nope", ua::NodeId(0, 2782)), field("Severity", ua::NodeId(0, 1))})}, 0);
  CHECK(r.operand_status_codes ==
        std::vector<ua::StatusCode>{status::BadNodeIdUnknown, status::BadTypeDefinitionInvalid});
  // The whole result: one entry per element, Good ones with no operand codes.
  auto c = compile(filter_of({el(FO::And, {elem(1), elem(2)}), el(FO::OfType, {lit(ua::NodeId(0, 2782))}),
                              el(FO::Equals, {lit(1), elem(1)})}),
                   schema(), FilterLimits{});
  CHECK(c.status == status::BadEventFilterInvalid);
  const auto& all = c.result.where_clause_result.element_results;
  REQUIRE(all.size() == 3);
  CHECK(all[0].status_code == status::Good);
  CHECK(all[0].operand_status_codes.empty());
  CHECK(all[1].status_code == status::Good);
  CHECK(all[2].status_code == status::BadFilterOperandInvalid);
  CHECK(all[2].operand_status_codes ==
        std::vector<ua::StatusCode>{status::Good, status::BadFilterElementInvalid});
  CHECK(c.result.select_clause_results.empty());
}

TEST_CASE("compile: hostile element references", "[filter][compile][hostile]") {
  // Self, backward, past the end, far past the end.
  CHECK(where_result({el(FO::Not, {elem(0)})}, 0).operand_status_codes[0] == status::BadFilterElementInvalid);
  auto r = where_result({el(FO::Not, {elem(1)}), el(FO::Not, {elem(0)})}, 1);
  CHECK(r.status_code == status::BadFilterOperandInvalid);
  CHECK(r.operand_status_codes[0] == status::BadFilterElementInvalid);
  CHECK(where_result({el(FO::Not, {elem(1)})}, 0).operand_status_codes[0] == status::BadFilterElementInvalid);
  CHECK(where_result({el(FO::Not, {elem(0xFFFFFFFFu)})}, 0).operand_status_codes[0] ==
        status::BadFilterElementInvalid);
}

TEST_CASE("compile: operator-specific literal checks", "[filter][compile][hostile]") {
  auto op0 = [](std::vector<ua::ContentFilterElement> w, size_t operand = 0) {
    auto r = where_result(std::move(w), 0);
    REQUIRE(r.operand_status_codes.size() > operand);
    return r.operand_status_codes[operand];
  };
  // OfType: a NodeId literal of an event type.
  CHECK(op0({el(FO::OfType, {lit(ua::NodeId(0, 99999))})}) == status::BadNodeIdUnknown);
  CHECK(op0({el(FO::OfType, {lit(ua::NodeId(0, 6))})}) == status::BadNotTypeDefinition);  // Int32, a DataType
  CHECK(op0({el(FO::OfType, {lit(ua::String("i=2041"))})}) == status::BadFilterLiteralInvalid);
  CHECK(op0({el(FO::OfType, {field("EventType")})}) == status::BadFilterOperandInvalid);
  // Cast: a NodeId literal of a DataType.
  CHECK(op0({el(FO::Cast, {lit(1), lit(ua::NodeId(0, 99999))})}, 1) == status::BadNodeIdUnknown);
  CHECK(op0({el(FO::Cast, {lit(1), lit(ua::NodeId(0, 2041))})}, 1) ==
        status::BadNodeIdUnknown);  // an ObjectType
  CHECK(op0({el(FO::Cast, {lit(1), lit(ua::NodeId(0, 22))})}, 1) ==
        status::BadFilterLiteralInvalid);  // Structure
  CHECK(op0({el(FO::Cast, {lit(1), lit(int32_t{6})})}, 1) == status::BadFilterLiteralInvalid);
  CHECK(op0({el(FO::Cast, {lit(1), elem(1)}), el(FO::IsNull, {lit(1)})}, 1) ==
        status::BadFilterOperandInvalid);
  // Like: a well-formed String pattern within the bound.
  CHECK(op0({el(FO::Like, {field("Message"), lit(int32_t{1})})}, 1) == status::BadFilterLiteralInvalid);
  CHECK(op0({el(FO::Like, {field("Message"), lit(ua::String("[abc"))})}, 1) ==
        status::BadFilterLiteralInvalid);
  CHECK(op0({el(FO::Like, {field("Message"), lit(ua::String(std::string(1025, '%')))})}, 1) ==
        status::BadFilterLiteralInvalid);
  CHECK(where_result({el(FO::Like, {field("Message"), lit(ua::String(std::string(1024, '%')))})}, 0)
            .status_code == status::Good);
  // Any literal beyond 4 KiB encoded.
  CHECK(op0({el(FO::Equals, {field("Message"), lit(ua::String(std::string(5000, 'x')))})}, 1) ==
        status::BadFilterLiteralInvalid);
  CHECK(op0({el(FO::Equals, {field("Message"), lit(std::vector<int64_t>(600, 1))})}, 1) ==
        status::BadFilterLiteralInvalid);
}

TEST_CASE("compile: bounds fail the filter before any work", "[filter][compile][hostile]") {
  const FilterLimits limits;
  // A million operands in one element.
  {
    ua::EventFilter f = filter_of({});
    ua::ContentFilterElement e{FO::InList, {}};
    e.filter_operands.resize(1000000, lit(int32_t{1}));
    f.where_clause.elements.push_back(std::move(e));
    const auto t0 = std::chrono::steady_clock::now();
    auto c = compile(f, schema(), limits);
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
    CHECK(c.status == status::BadEventFilterInvalid);
    CHECK(c.result_empty());
    CHECK(us.count() < 100000);
  }
  // Operands per element at the bound pass; the whole filter's operands are bounded too.
  {
    ua::EventFilter f = filter_of({});
    ua::ContentFilterElement e{FO::InList, {}};
    e.filter_operands.resize(1024, lit(int32_t{1}));
    f.where_clause.elements.push_back(e);
    CHECK(compile(f, schema(), limits).status.is_good());
    f.where_clause.elements[0].filter_operands.push_back(lit(int32_t{1}));
    CHECK(compile(f, schema(), limits).status == status::BadEventFilterInvalid);
    ua::EventFilter g = filter_of({});
    g.where_clause.elements = {el(FO::Or, {elem(1), elem(2)}), e, e, e};  // 2 + 3 * 1024 operands
    CHECK(compile(g, schema(), limits).status == status::BadEventFilterInvalid);
  }
  // Select clauses.
  {
    ua::EventFilter f;
    f.select_clauses.resize(256, sao("EventId"));
    CHECK(compile(f, schema(), limits).status.is_good());
    f.select_clauses.push_back(sao("EventId"));
    auto c = compile(f, schema(), limits);
    CHECK(c.status == status::BadEventFilterInvalid);
    CHECK(c.result_empty());
  }
  // Where-clause elements: a chain of 64 Not is fine (and evaluates), 65 is not.
  {
    std::vector<ua::ContentFilterElement> chain;
    for (uint32_t i = 0; i < 63; ++i) chain.push_back(el(FO::Not, {elem(i + 1)}));
    chain.push_back(el(FO::Equals, {lit(1), lit(1)}));
    CHECK_FALSE(eval(chain, FakeEvent(kBase)));  // 63 negations of TRUE
    chain.insert(chain.begin(), el(FO::Not, {elem(1)}));
    for (uint32_t i = 1; i < 64; ++i) chain[i].filter_operands[0] = elem(i + 1);
    auto c = compile(filter_of(chain), schema(), limits);
    CHECK(c.status == status::BadEventFilterInvalid);
    CHECK(c.result_empty());
  }
}

TEST_CASE("compile: a huge InList of strings is bounded and evaluates", "[filter][compile][hostile]") {
  ua::ContentFilterElement e{FO::InList, {field("SourceName")}};
  for (int i = 0; i < 1023; ++i)
    e.filter_operands.push_back(lit(ua::String(std::string(4000, 'a') + std::to_string(i))));
  auto c = compile(filter_of({e}), schema(), FilterLimits{});
  REQUIRE(c.status.is_good());
  FakeEvent ev(kBase);
  ev.set(schema().key("SourceName"), ua::String(std::string(4000, 'a') + "1022"));
  CHECK(matches(c.filter, ev));
  ev.set(schema().key("SourceName"), ua::String("b"));
  CHECK_FALSE(matches(c.filter, ev));
}

// ---- what real clients send ----

TEST_CASE("clients: node-opcua's alarm list (AlarmConditionType fields, ConditionId, OfType)",
          "[filter][clients]") {
  // installAlarmMonitoring: every Variable path under AlarmConditionType and its supertypes, each with
  // BaseEventType and Value, plus {ConditionType, no path, NodeId}; where
  // OfType(AcknowledgeableConditionType).
  FakeSchema s;
  const char* base[] = {"EventId",     "EventType", "SourceNode", "SourceName", "Time",
                        "ReceiveTime", "LocalTime", "Message",    "Severity"};
  const char* condition[] = {"ConditionClassId",
                             "ConditionClassName",
                             "ConditionSubClassId",
                             "ConditionSubClassName",
                             "ConditionName",
                             "BranchId",
                             "Retain",
                             "EnabledState",
                             "EnabledState/Id",
                             "EnabledState/EffectiveDisplayName",
                             "EnabledState/TransitionTime",
                             "EnabledState/EffectiveTransitionTime",
                             "EnabledState/TrueState",
                             "EnabledState/FalseState",
                             "Quality",
                             "Quality/SourceTimestamp",
                             "LastSeverity",
                             "LastSeverity/SourceTimestamp",
                             "Comment",
                             "Comment/SourceTimestamp",
                             "ClientUserId"};
  const char* acknowledgeable[] = {"AckedState",
                                   "AckedState/Id",
                                   "AckedState/TransitionTime",
                                   "AckedState/TrueState",
                                   "AckedState/FalseState",
                                   "AckedState/EffectiveDisplayName",
                                   "ConfirmedState",
                                   "ConfirmedState/Id",
                                   "ConfirmedState/TransitionTime",
                                   "ConfirmedState/TrueState",
                                   "ConfirmedState/FalseState",
                                   "ConfirmedState/EffectiveDisplayName"};
  const char* alarm[] = {"ActiveState",
                         "ActiveState/Id",
                         "ActiveState/EffectiveDisplayName",
                         "ActiveState/TransitionTime",
                         "ActiveState/EffectiveTransitionTime",
                         "ActiveState/TrueState",
                         "ActiveState/FalseState",
                         "InputNode",
                         "SuppressedState",
                         "SuppressedState/Id",
                         "SuppressedState/TransitionTime",
                         "SuppressedState/TrueState",
                         "SuppressedState/FalseState",
                         "OutOfServiceState",
                         "OutOfServiceState/Id",
                         "OutOfServiceState/TransitionTime",
                         "OutOfServiceState/TrueState",
                         "OutOfServiceState/FalseState",
                         "ShelvingState/CurrentState",
                         "ShelvingState/CurrentState/Id",
                         "ShelvingState/LastTransition",
                         "ShelvingState/LastTransition/Id",
                         "ShelvingState/LastTransition/TransitionTime",
                         "ShelvingState/UnshelveTime",
                         "SuppressedOrShelved",
                         "MaxTimeShelved",
                         "AudibleEnabled",
                         "AudibleSound",
                         "SilenceState",
                         "SilenceState/Id",
                         "SilenceState/TransitionTime",
                         "SilenceState/TrueState",
                         "SilenceState/FalseState",
                         "OnDelay",
                         "OffDelay",
                         "FirstInGroupFlag",
                         "LatchedState",
                         "LatchedState/Id",
                         "LatchedState/TransitionTime",
                         "LatchedState/TrueState",
                         "LatchedState/FalseState",
                         "ReAlarmTime",
                         "ReAlarmRepeatCount"};
  ua::EventFilter f;
  for (const char* p : base) s.add(p, kBase), f.select_clauses.push_back(sao(p));
  for (const char* p : condition) s.add(p, kCondition), f.select_clauses.push_back(sao(p));
  for (const char* p : acknowledgeable) s.add(p, kAcknowledgeable), f.select_clauses.push_back(sao(p));
  for (const char* p : alarm) s.add(p, kAlarm), f.select_clauses.push_back(sao(p));
  f.select_clauses.push_back(sao("", ua::NodeId(0, 2782), 1));
  REQUIRE(f.select_clauses.size() == 86);
  f.where_clause.elements = {el(FO::OfType, {lit(ua::NodeId(0, 2881))})};
  auto c = compile(f, s, FilterLimits{});
  REQUIRE(c.status.is_good());
  CHECK(c.result_empty());
  FakeEvent ev(kAlarm);
  ev.set(s.key("ShelvingState/LastTransition/Id"), ua::NodeId(0, 2930)).set_condition(ua::NodeId(2, 7));
  CHECK(matches(c.filter, ev));
  CHECK_FALSE(matches(c.filter, FakeEvent(kSystem)));
  ua::Variant scratch;
  size_t non_null = 0;
  for_each_selected(c.filter, ev, scratch, [&](const ua::Variant& v) { non_null += v.is_empty() ? 0 : 1; });
  CHECK(non_null == 2);
  CHECK(selected_value(c.filter, 85, ev, scratch) == ua::Variant(ua::NodeId(2, 7)));
}

TEST_CASE("clients: asyncua's InList of event types with null TypeDefinitionIds", "[filter][clients]") {
  // get_filter_from_event_type: select clauses with a null TypeDefinitionId; where InList(EventType, every
  // subtype's NodeId).
  ua::EventFilter f;
  for (const char* p : {"EventId", "EventType", "SourceNode", "SourceName", "Time", "Message", "Severity"}) {
    f.select_clauses.push_back(sao(p, ua::NodeId()));
  }
  ua::ContentFilterElement in{FO::InList, {field("EventType", ua::NodeId())}};
  for (uint32_t id : {2041u, 2052u, 2130u, 2782u, 2881u, 2915u})
    in.filter_operands.push_back(lit(ua::NodeId(0, id)));
  for (uint32_t id = 3000; id < 3100; ++id)
    in.filter_operands.push_back(lit(ua::NodeId(0, id)));  // more subtypes
  f.where_clause.elements = {in};
  auto c = compile(f, schema(), FilterLimits{});
  REQUIRE(c.status.is_good());
  CHECK(c.result_empty());
  FakeEvent ev(kSystem);
  ev.set(schema().key("EventType"), ua::NodeId(0, 2130));
  CHECK(matches(c.filter, ev));
  ev.set(schema().key("EventType"), ua::NodeId(0, 11446));
  CHECK_FALSE(matches(c.filter, ev));
}

TEST_CASE("clients: the .NET client's default filter", "[filter][clients]") {
  // FilterDeclaration: {BaseEventType, no path, NodeId} first, then fields under the type that declares them;
  // where: OfType(the event type) AND Severity >= a minimum.
  ua::EventFilter f;
  f.select_clauses = {sao("", ua::NodeId(0, 2041), 1),
                      sao("EventId"),
                      sao("EventType"),
                      sao("SourceName"),
                      sao("Time"),
                      sao("Message"),
                      sao("Severity"),
                      sao("ConditionName", ua::NodeId(0, 2782)),
                      sao("AckedState/Id", ua::NodeId(0, 2881))};
  f.where_clause.elements = {el(FO::And, {elem(1), elem(2)}), el(FO::OfType, {lit(ua::NodeId(0, 2041))}),
                             el(FO::GreaterThanOrEqual, {field("Severity"), lit(uint16_t{100})})};
  auto c = compile(f, schema(), FilterLimits{});
  REQUIRE(c.status.is_good());
  CHECK(c.result_empty());
  FakeEvent ev(kAcknowledgeable);
  ev.set(schema().key("Severity"), uint16_t{300}).set(schema().key("AckedState/Id"), false);
  ev.set_condition(ua::NodeId(2, 9));
  CHECK(matches(c.filter, ev));
  ua::Variant scratch;
  CHECK(selected_value(c.filter, 0, ev, scratch) == ua::Variant(ua::NodeId(2, 9)));
  CHECK(selected_value(c.filter, 8, ev, scratch) == ua::Variant(false));
  ev.set(schema().key("Severity"), uint16_t{50});
  CHECK_FALSE(matches(c.filter, ev));
}

#ifndef OPCUAD_ALLOCATION_COUNTER_OFF
TEST_CASE("matches and the select side allocate nothing", "[filter][allocation]") {
  const auto& s = schema();
  ua::EventFilter f;
  for (const char* p :
       {"EventId", "EventType", "SourceNode", "SourceName", "Time", "ReceiveTime", "Message", "Severity"}) {
    f.select_clauses.push_back(sao(p));
  }
  // (OfType(Condition) OR Severity in [100, 900]) AND Message Like "%high%" AND Not(IsNull(EventId))
  // AND EventType InList {...} AND Cast(Severity, Double) > 1.5 AND BitwiseAnd(Severity, 0xFF) >= 0.
  f.where_clause.elements = {
      el(FO::And, {elem(1), elem(4)}),
      el(FO::Or, {elem(2), elem(3)}),
      el(FO::OfType, {lit(ua::NodeId(0, 2782))}),
      el(FO::Between, {field("Severity"), lit(int32_t{100}), lit(int32_t{900})}),
      el(FO::And, {elem(5), elem(6)}),
      el(FO::Like, {field("Message"), lit(ua::String("%high%"))}),
      el(FO::And, {elem(7), elem(9)}),
      el(FO::Not, {elem(8)}),
      el(FO::IsNull, {field("EventId")}),
      el(FO::And, {elem(10), elem(11)}),
      el(FO::InList, {field("EventType"), lit(ua::NodeId(0, 2041)), lit(ua::NodeId(0, 2130))}),
      el(FO::GreaterThan, {elem(12), lit(1.5)}),
      el(FO::Cast, {elem(13), lit(ua::NodeId(0, 11))}),
      el(FO::BitwiseAnd, {field("Severity"), lit(uint16_t{0xFF})}),
  };
  auto c = compile(f, s, FilterLimits{});
  REQUIRE(c.status.is_good());
  FakeEvent ev(kSystem);
  ev.set(s.key("EventId"), ua::ByteString("0123456789abcdef"));
  ev.set(s.key("EventType"), ua::NodeId(0, 2130));
  ev.set(s.key("Message"), ua::LocalizedText{ua::String("en"), ua::String("level high in the boiler drum")});
  ev.set(s.key("Severity"), uint16_t{500});
  REQUIRE(matches(c.filter, ev));
  ua::Variant scratch;
  size_t seen = 0;
  opcuad::test::g_allocations = 0;
  opcuad::test::g_counting = true;
  bool all = true;
  for (int i = 0; i < 100; ++i) {
    all = matches(c.filter, ev) && all;
    for_each_selected(c.filter, ev, scratch, [&](const ua::Variant& v) { seen += v.is_empty() ? 0 : 1; });
  }
  opcuad::test::g_counting = false;
  CHECK(all);
  CHECK(seen == 400);
  CHECK(opcuad::test::g_allocations == 0);
}
#endif

}  // namespace opcuad::services::content_filter_test
