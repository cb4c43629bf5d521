#include "services/content_filter.hpp"

#include <algorithm>

#include "addressspace/attributes.hpp"
#include "ua/buffer.hpp"
#include "ua/codec.hpp"
#include "ua/encoder.hpp"

namespace opcuad::services {

using filter::Compared;
using filter::FilterValue;
using ua::BuiltinType;
using ua::FilterOperator;
namespace status = ua::status;

namespace {

constexpr uint32_t kBaseEventType = 2041;  // ns=0, Part 5 §6.4.2

// Operand counts of Part 4 §7.7.3 (Table 122 basic, Table 123 advanced operators in v1.05); InList takes
// two or more, shown as 0 here.
constexpr uint32_t kOperandCount[18] = {
    2,  // Equals
    1,  // IsNull
    2,  // GreaterThan
    2,  // LessThan
    2,  // GreaterThanOrEqual
    2,  // LessThanOrEqual
    2,  // Like
    1,  // Not
    3,  // Between
    0,  // InList (2..n)
    2,  // And
    2,  // Or
    2,  // Cast
    1,  // InView
    1,  // OfType
    6,  // RelatedTo
    2,  // BitwiseAnd
    2,  // BitwiseOr
};

// ---- Like (Part 4 §7.7.3, the Like operator's pattern characters) ----

// One UTF-8 code point at `pos` (a stray byte counts as one character), advancing `pos`.
uint32_t next_char(std::string_view s, size_t& pos) {
  const auto c = static_cast<uint8_t>(s[pos]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  if (pos + n > s.size()) n = 1;
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<uint8_t>(s[pos + k]);
    if ((b >> 6) != 2) {  // not a continuation byte: take the lead byte alone
      n = 1, cp = c;
      break;
    }
    cp = (cp << 6) | (b & 0x3Fu);
  }
  pos += n;
  return cp;
}

struct Token {
  enum class Kind : uint8_t { Char, One, Any, Set } kind = Kind::Char;
  uint32_t cp = 0;
  size_t set_begin = 0, set_end = 0;  // the set's items, between [ (or [^) and ]
  bool negate = false;
  size_t next = 0;
};

// The token at `pos`; false for a malformed pattern (an unclosed [, a \ at the end).
bool next_token(std::string_view p, size_t pos, Token& t) {
  t = Token{};
  const char c = p[pos];
  if (c == '%') {
    t.kind = Token::Kind::Any, t.next = pos + 1;
    return true;
  }
  if (c == '_') {
    t.kind = Token::Kind::One, t.next = pos + 1;
    return true;
  }
  if (c == '\\') {
    if (pos + 1 >= p.size()) return false;
    size_t q = pos + 1;
    t.cp = next_char(p, q);
    t.next = q;
    return true;
  }
  if (c == '[') {
    size_t q = pos + 1;
    if (q < p.size() && p[q] == '^') t.negate = true, ++q;
    t.set_begin = q;
    while (q < p.size() && p[q] != ']') {
      if (p[q] == '\\') {
        if (q + 1 >= p.size()) return false;
        ++q;
      }
      next_char(p, q);
    }
    if (q >= p.size()) return false;
    t.kind = Token::Kind::Set, t.set_end = q, t.next = q + 1;
    return true;
  }
  size_t q = pos;
  t.cp = next_char(p, q);
  t.next = q;
  return true;
}

// Whether code point `c` is in the set items p[b, e): single characters (\ escapes one) and ranges a-z.
bool in_set(std::string_view p, size_t b, size_t e, uint32_t c) {
  size_t q = b;
  while (q < e) {
    if (p[q] == '\\') ++q;
    const uint32_t lo = next_char(p, q);
    uint32_t hi = lo;
    if (q + 1 < e && p[q] == '-') {
      ++q;
      if (p[q] == '\\') ++q;
      hi = next_char(p, q);
    }
    if (c >= lo && c <= hi) return true;
  }
  return false;
}

bool token_matches(std::string_view p, const Token& t, uint32_t c) {
  switch (t.kind) {
    case Token::Kind::One:
      return true;
    case Token::Kind::Char:
      return c == t.cp;
    case Token::Kind::Set:
      return in_set(p, t.set_begin, t.set_end, c) != t.negate;
    default:
      return false;
  }
}

}  // namespace

bool like_pattern_valid(std::string_view pattern) noexcept {
  Token t;
  for (size_t p = 0; p < pattern.size(); p = t.next) {
    if (!next_token(pattern, p, t)) return false;
  }
  return true;
}

bool like_match(std::string_view text, std::string_view pat) noexcept {
  size_t ti = 0, pi = 0;
  size_t star_p = std::string_view::npos, star_t = 0;  // after the last %: pattern position, text restart
  Token t;
  while (ti < text.size()) {
    if (pi < pat.size()) {
      if (!next_token(pat, pi, t)) return false;
      if (t.kind == Token::Kind::Any) {
        pi = t.next;
        star_p = pi, star_t = ti;
        continue;
      }
      size_t tn = ti;
      const uint32_t c = next_char(text, tn);
      if (token_matches(pat, t, c)) {
        ti = tn, pi = t.next;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    // Let the last % take one more character and retry the rest of the pattern from there.
    next_char(text, star_t);
    ti = star_t, pi = star_p;
  }
  while (pi < pat.size()) {
    if (!next_token(pat, pi, t) || t.kind != Token::Kind::Any) return false;
    pi = t.next;
  }
  return true;
}

// ---- compile ----

struct FilterCompiler {
  FilterCompiler(const EventSchema& s, const FilterLimits& l)
      : schema(s), limits(l), base(s.event_type(ua::NodeId(0, kBaseEventType))) {}

  const EventSchema& schema;
  const FilterLimits& limits;
  std::optional<EventTypeIdx> base;
  ua::ByteBuffer buffer;  // a literal's encoding, to measure it

  // Part 4 §7.7.4.5 (SimpleAttributeOperand) and §7.22.3: the checks, in this order, and their codes.
  ua::StatusCode resolve(const ua::SimpleAttributeOperand& o, ResolvedField& out) {
    if (o.browse_path.size() > limits.max_browse_path) return status::BadBrowseNameInvalid;
    const ua::NodeId& t = o.type_definition_id;
    if (t.is_null() || t.is_ns0(kBaseEventType)) {
      out.type = std::nullopt;  // any event (a null id is read as BaseEventType)
    } else {
      out.type = schema.event_type(t);
      if (!out.type) return status::BadTypeDefinitionInvalid;
    }
    // Supported attributes: Value of a field (a Variable InstanceDeclaration), and NodeId of the event
    // itself (the empty path: the ConditionId, Part 9 §5.5.2). Any other attribute is not supported for
    // the node it names (BadAttributeIdInvalid), which covers ids that are no attribute at all.
    if (o.browse_path.empty()) {
      if (o.attribute_id != addressspace::attr::kNodeId) return status::BadAttributeIdInvalid;
    } else if (o.attribute_id != addressspace::attr::kValue) {
      return status::BadAttributeIdInvalid;
    }
    for (const auto& name : o.browse_path) {
      if (name.name.empty()) return status::BadBrowseNameInvalid;
    }
    bool ok = true;
    out.range = IndexRange::parse(o.index_range.view(), ok);
    if (!ok) return status::BadIndexRangeInvalid;
    if (o.browse_path.empty()) {
      out.key = kThisNodeField;
      return status::Good;
    }
    const auto on = out.type ? out.type : base;
    std::optional<FieldKey> key;
    if (on) key = schema.field(*on, o.browse_path);
    if (key) {
      out.key = *key;
    } else if (out.type) {
      return status::BadNodeIdUnknown;  // the named type has no InstanceDeclaration at this path
    } else {
      out.always_null = true;  // no event type has it: a Good clause that selects null (Part 4 §7.22.3)
    }
    return status::Good;
  }

  size_t encoded_size(const ua::Variant& v) {
    buffer.clear();
    ua::Encoder e(buffer);
    ua::encode(e, v);
    return e.status().is_good() ? buffer.size() : SIZE_MAX;
  }

  // The Like pattern literal, when it is one: a String (or LocalizedText) within the bound, well formed.
  ua::StatusCode check_pattern(const ua::Variant& v) {
    std::string_view p;
    if (const auto* s = v.get_if<ua::String>()) {
      p = s->view();
    } else if (const auto* l = v.get_if<ua::LocalizedText>()) {
      p = l->text.view();
    } else {
      return status::BadFilterLiteralInvalid;
    }
    if (p.size() > limits.max_like_pattern || !like_pattern_valid(p)) return status::BadFilterLiteralInvalid;
    return status::Good;
  }

  FilterCompilation run(const ua::EventFilter& f);
};

FilterCompilation FilterCompiler::run(const ua::EventFilter& f) {
  FilterCompilation out;
  CompiledFilter& c = out.filter;
  c.schema_ = &schema;
  c.max_like_pattern_ = limits.max_like_pattern;
  const auto& elements = f.where_clause.elements;
  // Bounds first, on counts alone.
  if (f.select_clauses.size() > limits.max_select_clauses || elements.size() > limits.max_elements) {
    out.status = status::BadEventFilterInvalid;
    return out;
  }
  size_t total = 0;
  for (const auto& e : elements) {
    if (e.filter_operands.size() > limits.max_operands_per_element) {
      out.status = status::BadEventFilterInvalid;
      return out;
    }
    total += e.filter_operands.size();
  }
  if (total > limits.max_operands) {
    out.status = status::BadEventFilterInvalid;
    return out;
  }

  // Select clauses.
  bool any_select_bad = false;
  size_t valid = 0;
  std::vector<ua::StatusCode> select_codes(f.select_clauses.size());
  c.select_.resize(f.select_clauses.size());
  for (size_t i = 0; i < f.select_clauses.size(); ++i) {
    ResolvedField r;
    select_codes[i] = resolve(f.select_clauses[i], r);
    if (select_codes[i].is_good()) {
      c.select_[i] = std::move(r);
      ++valid;
    } else {
      any_select_bad = true;
    }
  }
  if (any_select_bad) out.result.select_clause_results = std::move(select_codes);

  // Where clause.
  const size_t n = elements.size();
  std::vector<ua::ContentFilterElementResult> results(n);
  bool any_where_bad = false;
  c.elements_.resize(n);
  c.operands_.reserve(total);
  c.literals_.reserve(total);
  for (size_t i = 0; i < n; ++i) {
    const auto& src = elements[i];
    auto& dst = c.elements_[i];
    auto& res = results[i];
    const auto op_num = static_cast<int32_t>(src.filter_operator);
    dst.op = src.filter_operator;
    dst.first = static_cast<uint32_t>(c.operands_.size());
    dst.count = static_cast<uint32_t>(src.filter_operands.size());
    if (op_num < 0 || op_num > 17) {
      res.status_code = status::BadFilterOperatorInvalid;
    } else if (src.filter_operator == FilterOperator::InView ||
               src.filter_operator == FilterOperator::RelatedTo) {
      res.status_code = status::BadFilterOperatorUnsupported;
    } else if (src.filter_operator == FilterOperator::InList ? dst.count < 2
                                                             : dst.count != kOperandCount[op_num]) {
      res.status_code = status::BadFilterOperandCountMismatch;
    }
    if (!res.status_code.is_good()) {
      any_where_bad = true;
      c.operands_.resize(c.operands_.size() + dst.count);  // keeps the operand ranges of later elements
      continue;
    }
    std::vector<ua::StatusCode> codes(dst.count);
    bool bad = false;
    for (uint32_t k = 0; k < dst.count; ++k) {
      const ua::ExtensionObject& x = src.filter_operands[k];
      CompiledFilter::Operand o;
      ua::StatusCode sc;
      if (const auto* el = x.get<ua::ElementOperand>()) {
        // Part 4 §7.7.4.2: valid only if greater than the element's own index and within the array.
        if (el->index <= i || el->index >= n) {
          sc = status::BadFilterElementInvalid;
        } else {
          o.kind = CompiledFilter::Operand::Kind::Element;
          o.index = el->index;
        }
      } else if (const auto* lit = x.get<ua::LiteralOperand>()) {
        if (encoded_size(lit->value) > limits.max_literal_bytes) {
          sc = status::BadFilterLiteralInvalid;
        } else {
          o.kind = CompiledFilter::Operand::Kind::Literal;
          o.index = static_cast<uint32_t>(c.literals_.size());
          c.literals_.push_back(lit->value);
        }
      } else if (const auto* sa = x.get<ua::SimpleAttributeOperand>()) {
        ResolvedField r;
        sc = resolve(*sa, r);
        if (sc.is_good()) {
          o.kind = CompiledFilter::Operand::Kind::Field;
          o.index = static_cast<uint32_t>(c.fields_.size());
          c.fields_.push_back(std::move(r));
        }
      } else {
        // Not a FilterOperand, or an AttributeOperand, which Part 4 §7.7.4.4 keeps for Query: an
        // EventFilter's operands are Element, Literal and SimpleAttribute operands (§7.22.3).
        sc = status::BadFilterOperandInvalid;
      }
      // What each operator requires of its operands (Part 4 §7.7.3).
      if (sc.is_good()) {
        const bool literal = o.kind == CompiledFilter::Operand::Kind::Literal;
        const ua::Variant* lv = literal ? &c.literals_[o.index] : nullptr;
        if (src.filter_operator == FilterOperator::OfType) {
          // operand[0]: a NodeId literal of an ObjectType; opcuad knows the event types.
          if (!literal) {
            sc = status::BadFilterOperandInvalid;
          } else if (const auto* id = lv->get_if<ua::NodeId>()) {
            if (auto t = schema.event_type(*id)) {
              dst.of_type = *t;
            } else if (schema.builtin_of_data_type(*id)) {
              sc = status::BadNotTypeDefinition;  // a DataType, not an ObjectType
            } else {
              sc = status::BadNodeIdUnknown;
            }
          } else {
            sc = status::BadFilterLiteralInvalid;
          }
        } else if (src.filter_operator == FilterOperator::Cast && k == 1) {
          // operand[1]: a NodeId literal of a DataType whose built-in type values can be converted to.
          if (!literal) {
            sc = status::BadFilterOperandInvalid;
          } else if (const auto* id = lv->get_if<ua::NodeId>()) {
            const auto bt = schema.builtin_of_data_type(*id);
            if (!bt) {
              sc = status::BadNodeIdUnknown;
            } else if (static_cast<uint8_t>(*bt) < 1 || static_cast<uint8_t>(*bt) > 21) {
              sc = status::BadFilterLiteralInvalid;  // no conversion leads to it
            } else {
              dst.cast_to = *bt;
            }
          } else {
            sc = status::BadFilterLiteralInvalid;
          }
        } else if (src.filter_operator == FilterOperator::Like && k == 1 && literal) {
          sc = check_pattern(*lv);
        }
      }
      codes[k] = sc;
      if (!sc.is_good()) bad = true;
      c.operands_.push_back(o);
    }
    // An InList whose list is all NodeId literals (asyncua's EventType filter lists every event type):
    // kept sorted too, so that a NodeId operand is found by a binary search.
    if (!bad && src.filter_operator == FilterOperator::InList) {
      bool ids = true;
      for (uint32_t k = 1; k < dst.count && ids; ++k) {
        const auto& o = c.operands_[dst.first + k];
        ids = o.kind == CompiledFilter::Operand::Kind::Literal && c.literals_[o.index].get_if<ua::NodeId>();
      }
      if (ids) {
        dst.ids_first = static_cast<uint32_t>(c.id_pool_.size());
        dst.ids_count = dst.count - 1;
        for (uint32_t k = 1; k < dst.count; ++k) {
          c.id_pool_.push_back(*c.literals_[c.operands_[dst.first + k].index].get_if<ua::NodeId>());
        }
        std::sort(c.id_pool_.begin() + dst.ids_first, c.id_pool_.end());
      }
    }
    if (bad) {
      res.status_code = status::BadFilterOperandInvalid;
      res.operand_status_codes = std::move(codes);
      any_where_bad = true;
    }
  }
  if (any_where_bad) out.result.where_clause_result.element_results = std::move(results);

  // Part 4 §7.7.1: elements that cannot be traced back to the first are ignored. References point forward,
  // so one ascending pass marks every reachable element.
  if (n > 0) c.elements_[0].reachable = true;
  for (size_t i = 0; i < n && !any_where_bad; ++i) {
    if (!c.elements_[i].reachable) continue;
    const auto& e = c.elements_[i];
    for (uint32_t k = 0; k < e.count; ++k) {
      const auto& o = c.operands_[e.first + k];
      if (o.kind == CompiledFilter::Operand::Kind::Element) c.elements_[o.index].reachable = true;
    }
  }
  c.literal_values_.resize(c.literals_.size());
  for (size_t k = 0; k < c.literals_.size(); ++k) c.literal_values_[k] = filter::view_of(&c.literals_[k]);
  c.results_.resize(n);
  c.cast_scratch_ = std::make_unique<filter::ConvertScratch[]>(n);
  c.field_scratch_.resize(c.fields_.size());

  // Part 4 §7.22.3: at least one select clause must be valid; a where clause in error fails the filter.
  out.status = (valid == 0 || any_where_bad) ? status::BadEventFilterInvalid : status::Good;
  return out;
}

FilterCompilation compile(const ua::EventFilter& filter, const EventSchema& schema,
                          const FilterLimits& limits) {
  FilterCompiler compiler(schema, limits);
  return compiler.run(filter);
}

// ---- evaluate ----

namespace {

// Three-valued Boolean (Part 4 §7.7.3, the And / Or truth tables): an operand that is not a Boolean and
// does not convert implicitly to one is NULL.
enum class Tri : uint8_t { False, True, Null };

Tri tri(const FilterValue& v, filter::ConvertScratch& s) {
  FilterValue b;
  if (!filter::convert(v, BuiltinType::Boolean, false, s, b)) return Tri::Null;
  return b.b ? Tri::True : Tri::False;
}

FilterValue from_tri(Tri t) {
  if (t == Tri::Null) return FilterValue{};
  return filter::boolean(t == Tri::True);
}

bool is_integer(BuiltinType t) {
  const auto v = static_cast<uint8_t>(t);
  return v >= static_cast<uint8_t>(BuiltinType::SByte) && v <= static_cast<uint8_t>(BuiltinType::UInt64);
}

}  // namespace

FilterValue CompiledFilter::operand_value(const Operand& o, const EventView& ev) const noexcept {
  switch (o.kind) {
    case Operand::Kind::Literal:
      return literal_values_[o.index];
    case Operand::Kind::Element:
      return results_[o.index];
    case Operand::Kind::Field: {
      const ResolvedField& f = fields_[o.index];
      if (f.always_null) return {};
      // Part 4 §7.7.4.5: typeDefinitionId restricts the operand to instances of that type or a subtype.
      if (f.type && !schema_->is_subtype(ev.type(), *f.type)) return {};
      const ua::Variant* v = ev.field(f.key);
      if (v != nullptr && f.range) {
        ua::Variant& out = field_scratch_[o.index];
        try {
          if (!read_range(*v, *f.range, out).is_good()) return {};
        } catch (...) {
          return {};
        }
        return filter::view_of(&out);
      }
      return filter::view_of(v);
    }
  }
  return {};
}

FilterValue CompiledFilter::evaluate(const Element& e, size_t index, const EventView& ev) const noexcept {
  const Operand* ops = operands_.data() + e.first;
  auto& s = compare_scratch_;
  auto cmp = [&](uint32_t a, uint32_t b) {
    return filter::compare(operand_value(ops[a], ev), operand_value(ops[b], ev), s);
  };
  switch (e.op) {
    case FilterOperator::Equals:
      return filter::boolean(cmp(0, 1) == Compared::Equal);
    case FilterOperator::IsNull:
      return filter::boolean(operand_value(ops[0], ev).is_null());
    case FilterOperator::GreaterThan:
      return filter::boolean(cmp(0, 1) == Compared::Greater);
    case FilterOperator::LessThan:
      return filter::boolean(cmp(0, 1) == Compared::Less);
    case FilterOperator::GreaterThanOrEqual: {
      const auto r = cmp(0, 1);
      return filter::boolean(r == Compared::Greater || r == Compared::Equal);
    }
    case FilterOperator::LessThanOrEqual: {
      const auto r = cmp(0, 1);
      return filter::boolean(r == Compared::Less || r == Compared::Equal);
    }
    case FilterOperator::Between: {
      const auto lo = cmp(0, 1);
      if (lo != Compared::Greater && lo != Compared::Equal) return filter::boolean(false);
      const auto hi = cmp(0, 2);
      return filter::boolean(hi == Compared::Less || hi == Compared::Equal);
    }
    case FilterOperator::InList: {
      const FilterValue a = operand_value(ops[0], ev);
      if (e.ids_count > 0 && a.type == BuiltinType::NodeId && !a.array) {
        // Equal NodeIds are what Equals finds between two NodeIds; other operand types take the general path.
        const auto* first = id_pool_.data() + e.ids_first;
        return filter::boolean(std::binary_search(first, first + e.ids_count, *a.node));
      }
      for (uint32_t k = 1; k < e.count; ++k) {
        if (filter::compare(a, operand_value(ops[k], ev), s) == Compared::Equal) return filter::boolean(true);
      }
      return filter::boolean(false);
    }
    case FilterOperator::Like: {
      // Both operands resolve to String (implicit conversions: LocalizedText, QualifiedName, ids).
      FilterValue text, pat;
      filter::ConvertScratch& ps = cast_scratch_[index];
      if (!filter::convert(operand_value(ops[0], ev), BuiltinType::String, false, s, text) ||
          !filter::convert(operand_value(ops[1], ev), BuiltinType::String, false, ps, pat)) {
        return filter::boolean(false);
      }
      if (pat.text.size() > max_like_pattern_ || !like_pattern_valid(pat.text)) return filter::boolean(false);
      return filter::boolean(like_match(text.text, pat.text));
    }
    case FilterOperator::Not: {
      const Tri t = tri(operand_value(ops[0], ev), s);
      return from_tri(t == Tri::Null ? Tri::Null : t == Tri::True ? Tri::False : Tri::True);
    }
    case FilterOperator::And: {
      const Tri a = tri(operand_value(ops[0], ev), s), b = tri(operand_value(ops[1], ev), s);
      if (a == Tri::False || b == Tri::False) return from_tri(Tri::False);
      if (a == Tri::True && b == Tri::True) return from_tri(Tri::True);
      return from_tri(Tri::Null);
    }
    case FilterOperator::Or: {
      const Tri a = tri(operand_value(ops[0], ev), s), b = tri(operand_value(ops[1], ev), s);
      if (a == Tri::True || b == Tri::True) return from_tri(Tri::True);
      if (a == Tri::False && b == Tri::False) return from_tri(Tri::False);
      return from_tri(Tri::Null);
    }
    case FilterOperator::Cast: {
      FilterValue out;
      if (!filter::convert(operand_value(ops[0], ev), e.cast_to, true, cast_scratch_[index], out)) return {};
      return out;
    }
    case FilterOperator::OfType:
      return filter::boolean(schema_->is_subtype(ev.type(), e.of_type));
    case FilterOperator::BitwiseAnd:
    case FilterOperator::BitwiseOr: {
      // Integers of the common type (the data precedence rules); anything else is NULL.
      FilterValue a = operand_value(ops[0], ev), b = operand_value(ops[1], ev);
      if (a.array || b.array || !is_integer(a.type) || !is_integer(b.type)) return {};
      if (a.type != b.type) {
        FilterValue c;
        if (filter::precedence(a.type) > filter::precedence(b.type)) {
          if (!filter::convert(a, b.type, false, s, c)) return {};
          a = c;
        } else {
          if (!filter::convert(b, a.type, false, s, c)) return {};
          b = c;
        }
      }
      const bool is_and = e.op == FilterOperator::BitwiseAnd;
      FilterValue r;
      r.type = a.type;
      r.i = is_and ? (a.i & b.i) : (a.i | b.i);
      r.u = is_and ? (a.u & b.u) : (a.u | b.u);
      return r;
    }
    default:
      return {};  // InView, RelatedTo: refused at compile
  }
}

bool matches(const CompiledFilter& f, const EventView& ev) noexcept {
  const size_t n = f.elements_.size();
  if (n == 0) return true;
  for (size_t i = n; i-- > 0;) {
    const auto& e = f.elements_[i];
    if (e.reachable) f.results_[i] = f.evaluate(e, i, ev);
  }
  return f.results_[0].is_bool(true);
}

const ua::Variant& selected_value(const CompiledFilter& f, size_t i, const EventView& ev,
                                  ua::Variant& scratch) {
  static const ua::Variant kNull;
  const auto& c = f.select_[i];
  if (!c || c->always_null) return kNull;
  if (c->type && !f.schema_->is_subtype(ev.type(), *c->type)) return kNull;
  const ua::Variant* v = ev.field(c->key);
  if (v == nullptr) return kNull;
  if (!c->range) return *v;
  if (!read_range(*v, *c->range, scratch).is_good()) return kNull;
  return scratch;
}

}  // namespace opcuad::services
