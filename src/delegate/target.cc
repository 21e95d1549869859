// Target files: loading with strict validation, and per-node evaluation of the
// small condition language described in target.h.
#include "delegate/target.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <type_traits>
#include <variant>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace delegato {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Kind = TargetPredicate::Kind;
using Compare = TargetPredicate::Compare;
using ValueKind = TargetValue::Kind;

// Targets may extend each other; this bounds a chain (and catches cycles).
constexpr int kMaxExtendsDepth = 8;

// ---------------------------------------------------------------------------
// Vocabulary tables

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "int8", "float32", ... for the types the format defines.
const std::vector<std::string>& DtypeNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (int v = 0; v <= kMaxDataTypeValue; ++v) {
      const std::string name = Lower(DataTypeName(static_cast<DataType>(v)));
      if (name.rfind("type_", 0) != 0) out.push_back(name);
    }
    return out;
  }();
  return names;
}

struct KindInfo {
  Kind kind;
  enum class Subject { kNone, kTensor, kTensorAxis, kTensorPair, kParam } subject;
  ValueKind value;  // for kParam the param table decides
};

const std::map<std::string, KindInfo>& PredicateKinds() {
  using S = KindInfo::Subject;
  static const std::map<std::string, KindInfo> kinds = {
      {"dtype", {Kind::kDtype, S::kTensor, ValueKind::kString}},
      {"rank", {Kind::kRank, S::kTensor, ValueKind::kNumber}},
      {"dim", {Kind::kDim, S::kTensorAxis, ValueKind::kNumber}},
      {"min_dim", {Kind::kMinDim, S::kTensor, ValueKind::kNumber}},
      {"max_dim", {Kind::kMaxDim, S::kTensor, ValueKind::kNumber}},
      {"elements", {Kind::kElements, S::kTensor, ValueKind::kNumber}},
      {"per_axis", {Kind::kPerAxis, S::kTensor, ValueKind::kBool}},
      {"quantized", {Kind::kQuantized, S::kTensor, ValueKind::kBool}},
      {"zero_point", {Kind::kZeroPoint, S::kTensor, ValueKind::kNumber}},
      {"constant", {Kind::kConstant, S::kTensor, ValueKind::kBool}},
      {"present", {Kind::kPresent, S::kTensor, ValueKind::kBool}},
      {"same_dtype", {Kind::kSameDtype, S::kTensorPair, ValueKind::kBool}},
      {"same_quantization", {Kind::kSameQuantization, S::kTensorPair, ValueKind::kBool}},
      {"same_shape", {Kind::kSameShape, S::kTensorPair, ValueKind::kBool}},
      {"param", {Kind::kParam, S::kParam, ValueKind::kNumber}},
      {"op_version", {Kind::kOpVersion, S::kNone, ValueKind::kNumber}},
      {"feature_level", {Kind::kFeatureLevel, S::kNone, ValueKind::kNumber}},
      {"accelerator_named", {Kind::kAcceleratorNamed, S::kNone, ValueKind::kBool}},
      {"input_count", {Kind::kInputCount, S::kNone, ValueKind::kNumber}},
      {"output_count", {Kind::kOutputCount, S::kNone, ValueKind::kNumber}},
  };
  return kinds;
}

std::string KindName(Kind kind) {
  for (const auto& [name, info] : PredicateKinds()) {
    if (info.kind == kind) return name;
  }
  return "?";
}

struct ParamInfo {
  ValueKind kind;
  std::vector<std::string> allowed;  // for strings; empty = any dtype name (output_type)
};

const std::map<std::string, ParamInfo>& ParamTable() {
  const ParamInfo number{ValueKind::kNumber, {}};
  const ParamInfo boolean{ValueKind::kBool, {}};
  static const std::map<std::string, ParamInfo> table = {
      {"padding", {ValueKind::kString, {"same", "valid"}}},
      {"activation", {ValueKind::kString, {"none", "relu", "relu_n1_to_1", "relu6", "tanh", "sign_bit"}}},
      {"weights_format", {ValueKind::kString, {"default", "shuffled4x16int8"}}},
      {"output_type", {ValueKind::kString, {}}},
      {"stride_w", number}, {"stride_h", number},
      {"dilation_w", number}, {"dilation_h", number},
      {"depth_multiplier", number},
      {"filter_w", number}, {"filter_h", number}, {"filter_area", number},
      {"kernel_w", number}, {"kernel_h", number}, {"kernel_area", number},
      {"dilated_kernel_w", number}, {"dilated_kernel_h", number}, {"dilated_kernel_area", number},
      {"keep_num_dims", boolean}, {"asymmetric_quantize_inputs", boolean},
      {"align_corners", boolean}, {"half_pixel_centers", boolean},
      {"axis", number}, {"beta", number}, {"num_splits", number}, {"keep_dims", boolean},
      {"begin_mask", number}, {"end_mask", number}, {"ellipsis_mask", number},
      {"new_axis_mask", number}, {"shrink_axis_mask", number}, {"offset", boolean},
      {"batch_dims", number}, {"alpha", number}, {"values_count", number}, {"num", number},
      {"new_shape_rank", number}, {"squeeze_dims_count", number}, {"resize_factor", number},
      {"axis_is_last", boolean},
  };
  return table;
}

const std::map<std::string, Compare>& Comparators() {
  static const std::map<std::string, Compare> table = {
      {"eq", Compare::kEq}, {"ne", Compare::kNe}, {"lt", Compare::kLt}, {"le", Compare::kLe},
      {"gt", Compare::kGt}, {"ge", Compare::kGe}, {"in", Compare::kIn}, {"not_in", Compare::kNotIn},
  };
  return table;
}

std::string CompareText(Compare compare) {
  switch (compare) {
    case Compare::kEq: return "==";
    case Compare::kNe: return "!=";
    case Compare::kLt: return "<";
    case Compare::kLe: return "<=";
    case Compare::kGt: return ">";
    case Compare::kGe: return ">=";
    case Compare::kIn: return "one of";
    case Compare::kNotIn: return "none of";
  }
  return "?";
}

// Reason codes a target may give; the framework-side codes are not the data's to decide.
bool IsTargetReason(ReasonCode code) {
  switch (code) {
    case ReasonCode::kPrepareFailed:
    case ReasonCode::kClaimedByEarlierDelegate:
    case ReasonCode::kUserExcluded:
    case ReasonCode::kPartitionLimit:
    case ReasonCode::kBelowMinNodes:
    case ReasonCode::kAfterCut:
      return false;
    default:
      return true;
  }
}

bool IsKnownOpName(const std::string& name) {
  if (name.rfind("CUSTOM:", 0) == 0) return name.size() > 7;
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    for (int32_t v = 0; v <= kMaxBuiltinOp; ++v) {
      out.insert(std::string(BuiltinOpName(static_cast<BuiltinOp>(v))));
    }
    return out;
  }();
  return names.count(name) > 0;
}

std::string ValueText(const TargetValue& value) {
  switch (value.kind) {
    case ValueKind::kBool: return value.boolean ? "true" : "false";
    case ValueKind::kString: return value.text;
    case ValueKind::kNumber: {
      // Whole numbers in full (NNAPI feature levels such as 1000006 must not
      // print as 1.00001e+06).
      if (std::nearbyint(value.number) == value.number && std::fabs(value.number) < 1e15)
        return std::to_string(static_cast<int64_t>(value.number));
      std::ostringstream out;
      out << value.number;
      return out.str();
    }
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Parsing with JSON paths in every error

class Parser {
 public:
  explicit Parser(std::string label) : label_(std::move(label)) {}

  [[noreturn]] void Bad(const std::string& path, const std::string& problem) const {
    Fail("target file ", label_, ": ", path.empty() ? "<root>" : path, ": ", problem);
  }

  static std::string Key(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string Index(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  void RequireObject(const json& j, const std::string& path) const {
    if (!j.is_object()) Bad(path, StrCat("expected an object, got ", j.type_name()));
  }

  void CheckKeys(const json& j, const std::string& path,
                 std::initializer_list<const char*> allowed) const {
    for (const auto& [key, value] : j.items()) {
      bool known = false;
      for (const char* a : allowed) known = known || key == a;
      if (!known) {
        std::string list;
        for (const char* a : allowed) list += StrCat(list.empty() ? "" : ", ", a);
        Bad(Key(path, key), StrCat("unknown key (allowed here: ", list, ")"));
      }
    }
  }

  std::string String(const json& j, const std::string& path, const char* key,
                     bool required = true) const {
    if (!j.contains(key)) {
      if (required) Bad(Key(path, key), "missing (a string is required)");
      return {};
    }
    const json& v = j.at(key);
    if (!v.is_string()) Bad(Key(path, key), StrCat("expected a string, got ", v.type_name()));
    std::string text = v.get<std::string>();
    if (required && text.empty()) Bad(Key(path, key), "must not be empty");
    return text;
  }

  std::optional<double> Number(const json& j, const std::string& path, const char* key) const {
    if (!j.contains(key)) return std::nullopt;
    const json& v = j.at(key);
    if (!v.is_number()) Bad(Key(path, key), StrCat("expected a number, got ", v.type_name()));
    return v.get<double>();
  }

  int Int(const json& j, const std::string& path, const char* key, int fallback, int min_value) const {
    const auto number = Number(j, path, key);
    if (!number) return fallback;
    if (*number != std::floor(*number) || *number < min_value || *number > 1e9) {
      Bad(Key(path, key), StrCat("expected an integer >= ", min_value, ", got ", *number));
    }
    return static_cast<int>(*number);
  }

  bool Bool(const json& j, const std::string& path, const char* key, bool fallback) const {
    if (!j.contains(key)) return fallback;
    const json& v = j.at(key);
    if (!v.is_boolean()) Bad(Key(path, key), StrCat("expected true or false, got ", v.type_name()));
    return v.get<bool>();
  }

  TargetSource Source(const json& j, const std::string& path) const {
    if (!j.contains("source")) Bad(Key(path, "source"), "missing: every rule needs a public source");
    const std::string sp = Key(path, "source");
    const json& s = j.at("source");
    RequireObject(s, sp);
    CheckKeys(s, sp, {"url", "path", "observed", "calibration", "says"});
    TargetSource source;
    source.url = String(s, sp, "url", false);
    if (source.url.empty()) source.url = String(s, sp, "path", false);
    if (source.url.empty()) {
      const std::string calibration = String(s, sp, "calibration", false);
      if (!calibration.empty()) source.url = StrCat("calibration: ", calibration);
    }
    if (source.url.empty()) {
      const std::string observed = String(s, sp, "observed", false);
      if (!observed.empty()) source.url = StrCat("observed: ", observed);
    }
    if (source.url.empty()) {
      Bad(sp, "needs \"url\" (public URL), \"path\" (repo path), \"observed\" (a real compiler's output) or "
              "\"calibration\" (the script that fitted the number)");
    }
    source.says = String(s, sp, "says");
    return source;
  }

  std::vector<std::string> OpNames(const json& j, const std::string& path) const {
    std::vector<std::string> names;
    if (j.is_string()) {
      names.push_back(j.get<std::string>());
    } else if (j.is_array() && !j.empty()) {
      for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_string()) Bad(Index(path, i), "expected an op name string");
        names.push_back(j[i].get<std::string>());
      }
    } else {
      Bad(path, "expected an op name or a non-empty list of op names");
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (!IsKnownOpName(names[i])) {
        Bad(j.is_array() ? Index(path, i) : path,
            StrCat("unknown op '", names[i], "' (builtin names as in the schema, e.g. CONV_2D; "
                   "custom ops as CUSTOM:<code>)"));
      }
    }
    return names;
  }

  // ------------------------------------------------------------------ predicates

  void CheckSelector(const std::string& selector, const std::string& path, bool single) const {
    static const std::set<std::string> groups = {"inputs", "outputs", "tensors", "activations"};
    if (groups.count(selector)) {
      if (single) Bad(path, StrCat("'", selector, "' selects several tensors; this check needs one "
                                   "(input:N or output:N)"));
      return;
    }
    for (const char* prefix : {"input:", "output:"}) {
      const std::string p = prefix;
      if (selector.rfind(p, 0) == 0 && selector.size() > p.size() &&
          selector.size() - p.size() <= 3 &&
          std::all_of(selector.begin() + p.size(), selector.end(),
                      [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        return;
      }
    }
    Bad(path, StrCat("bad tensor selector '", selector,
                     "' (use input:N, output:N, inputs, outputs, tensors or activations)"));
  }

  TargetValue Value(const json& v, const std::string& path, ValueKind kind,
                    const std::vector<std::string>& allowed_strings, bool dtype_strings) const {
    TargetValue value;
    value.kind = kind;
    switch (kind) {
      case ValueKind::kNumber:
        if (!v.is_number()) Bad(path, StrCat("expected a number, got ", v.type_name()));
        value.number = v.get<double>();
        break;
      case ValueKind::kBool:
        if (!v.is_boolean()) Bad(path, StrCat("expected true or false, got ", v.type_name()));
        value.boolean = v.get<bool>();
        break;
      case ValueKind::kString: {
        if (!v.is_string()) Bad(path, StrCat("expected a string, got ", v.type_name()));
        value.text = v.get<std::string>();
        const auto& names = dtype_strings ? DtypeNames() : allowed_strings;
        if (std::find(names.begin(), names.end(), value.text) == names.end()) {
          std::string list;
          for (const auto& n : names) list += StrCat(list.empty() ? "" : ", ", n);
          Bad(path, StrCat("unknown value '", value.text, "' (expected one of: ", list, ")"));
        }
        break;
      }
    }
    return value;
  }

  TargetPredicate Predicate(const json& j, const std::string& path) const {
    RequireObject(j, path);
    TargetPredicate p;
    for (const char* combinator : {"all", "any"}) {
      if (j.contains(combinator)) {
        CheckKeys(j, path, {combinator});
        p.kind = std::string(combinator) == "all" ? Kind::kAll : Kind::kAny;
        const std::string cp = Key(path, combinator);
        const json& list = j.at(combinator);
        if (!list.is_array() || list.empty()) Bad(cp, "expected a non-empty list of predicates");
        for (size_t i = 0; i < list.size(); ++i) p.children.push_back(Predicate(list[i], Index(cp, i)));
        return p;
      }
    }
    if (j.contains("not")) {
      CheckKeys(j, path, {"not"});
      p.kind = Kind::kNot;
      p.children.push_back(Predicate(j.at("not"), Key(path, "not")));
      return p;
    }
    const std::string kind_name = String(j, path, "check");
    const auto it = PredicateKinds().find(kind_name);
    if (it == PredicateKinds().end()) {
      std::string list;
      for (const auto& [name, info] : PredicateKinds()) list += StrCat(list.empty() ? "" : ", ", name);
      Bad(Key(path, "check"), StrCat("unknown predicate '", kind_name, "' (known: ", list,
                                     "; or all / any / not)"));
    }
    const KindInfo& info = it->second;
    p.kind = info.kind;

    using S = KindInfo::Subject;
    ValueKind value_kind = info.value;
    std::vector<std::string> allowed_strings;
    bool dtype_strings = info.kind == Kind::kDtype;
    switch (info.subject) {
      case S::kNone:
        CheckKeys(j, path, {"check", "eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"});
        break;
      case S::kTensor:
      case S::kTensorAxis: {
        if (info.subject == S::kTensor) {
          CheckKeys(j, path, {"check", "tensor", "eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"});
        } else {
          CheckKeys(j, path, {"check", "tensor", "axis", "eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"});
          if (!j.contains("axis")) Bad(Key(path, "axis"), "missing (dim needs an axis)");
          const double axis = *Number(j, path, "axis");
          if (axis != std::floor(axis) || std::fabs(axis) > 16) Bad(Key(path, "axis"), "expected a small integer");
          p.axis = static_cast<int>(axis);
        }
        p.tensors.push_back(String(j, path, "tensor"));
        CheckSelector(p.tensors[0], Key(path, "tensor"), info.kind == Kind::kPresent);
        break;
      }
      case S::kTensorPair: {
        CheckKeys(j, path, {"check", "tensors", "eq", "ne", "in", "not_in"});
        const std::string tp = Key(path, "tensors");
        if (!j.contains("tensors")) Bad(tp, "missing (a list of two tensor selectors)");
        const json& list = j.at("tensors");
        if (!list.is_array() || list.size() != 2) Bad(tp, "expected a list of two tensor selectors");
        for (size_t i = 0; i < 2; ++i) {
          if (!list[i].is_string()) Bad(Index(tp, i), "expected a tensor selector string");
          p.tensors.push_back(list[i].get<std::string>());
          CheckSelector(p.tensors.back(), Index(tp, i), true);
        }
        break;
      }
      case S::kParam: {
        CheckKeys(j, path, {"check", "name", "eq", "ne", "lt", "le", "gt", "ge", "in", "not_in"});
        p.param = String(j, path, "name");
        const auto param = ParamTable().find(p.param);
        if (param == ParamTable().end()) {
          std::string list;
          for (const auto& n : KnownParamNames()) list += StrCat(list.empty() ? "" : ", ", n);
          Bad(Key(path, "name"), StrCat("unknown param '", p.param, "' (known: ", list, ")"));
        }
        value_kind = param->second.kind;
        allowed_strings = param->second.allowed;
        dtype_strings = value_kind == ValueKind::kString && allowed_strings.empty();
        break;
      }
    }

    int comparator_count = 0;
    for (const auto& [name, compare] : Comparators()) {
      if (!j.contains(name)) continue;
      ++comparator_count;
      p.compare = compare;
      const std::string vp = Key(path, name);
      const json& v = j.at(name);
      const bool ordered = compare == Compare::kLt || compare == Compare::kLe ||
                           compare == Compare::kGt || compare == Compare::kGe;
      if (ordered && value_kind != ValueKind::kNumber) {
        Bad(vp, StrCat("'", name, "' compares numbers; '", kind_name, "' is not a number"));
      }
      if (compare == Compare::kIn || compare == Compare::kNotIn) {
        if (!v.is_array() || v.empty()) Bad(vp, "expected a non-empty list of values");
        for (size_t i = 0; i < v.size(); ++i) {
          p.values.push_back(Value(v[i], Index(vp, i), value_kind, allowed_strings, dtype_strings));
        }
      } else {
        p.values.push_back(Value(v, vp, value_kind, allowed_strings, dtype_strings));
      }
    }
    if (comparator_count != 1) {
      Bad(path, StrCat("a check needs exactly one comparator (eq, ne, lt, le, gt, ge, in, not_in); found ",
                       comparator_count));
    }
    return p;
  }

  std::vector<TargetPredicate> PredicateList(const json& j, const std::string& path) const {
    std::vector<TargetPredicate> list;
    if (j.is_array()) {
      if (j.empty()) Bad(path, "expected at least one predicate");
      for (size_t i = 0; i < j.size(); ++i) list.push_back(Predicate(j[i], Index(path, i)));
    } else {
      list.push_back(Predicate(j, path));
    }
    return list;
  }

  // ------------------------------------------------------------------ rules, ops, layers

  TargetRule Rule(const json& j, const std::string& path, bool layer_wide) const {
    RequireObject(j, path);
    if (layer_wide) {
      CheckKeys(j, path, {"id", "when", "require", "reason", "message", "fix", "source", "ops", "except_ops",
                          "placeholder", "note"});
    } else {
      CheckKeys(j, path, {"id", "when", "require", "reason", "message", "fix", "source", "placeholder", "note"});
    }
    TargetRule rule;
    rule.placeholder = Bool(j, path, "placeholder", false);
    rule.id = String(j, path, "id");
    if (j.contains("when")) rule.when = PredicateList(j.at("when"), Key(path, "when"));
    if (!j.contains("require")) Bad(Key(path, "require"), "missing (the condition a node must meet)");
    rule.require = PredicateList(j.at("require"), Key(path, "require"));
    const std::string reason = String(j, path, "reason");
    if (!ParseReasonCode(reason, &rule.reason) || !IsTargetReason(rule.reason)) {
      Bad(Key(path, "reason"), StrCat("unknown reason '", reason,
                                      "' (a ReasonCode name such as unsupported_input_type, "
                                      "unsupported_operand_value, driver_rejected)"));
    }
    rule.message = String(j, path, "message");
    rule.fix = String(j, path, "fix");
    if (rule.placeholder) {
      if (j.contains("source")) Bad(Key(path, "placeholder"), "a rule with a source is not a placeholder");
      if (!j.contains("note")) Bad(Key(path, "note"), "missing: a placeholder rule says why it exists");
    } else {
      rule.source = Source(j, path);
    }
    if (j.contains("ops")) rule.ops = OpNames(j.at("ops"), Key(path, "ops"));
    if (j.contains("except_ops")) rule.except_ops = OpNames(j.at("except_ops"), Key(path, "except_ops"));
    return rule;
  }

  TargetOpEntry OpEntry(const json& j, const std::string& path) const {
    RequireObject(j, path);
    CheckKeys(j, path, {"op", "max_version", "min_feature_level", "source", "fix", "rules", "note"});
    TargetOpEntry entry;
    if (!j.contains("op")) Bad(Key(path, "op"), "missing (an op name or a list of op names)");
    entry.ops = OpNames(j.at("op"), Key(path, "op"));
    entry.max_version = Int(j, path, "max_version", 0, 1);
    entry.min_feature_level = Int(j, path, "min_feature_level", 0, 1);
    entry.source = Source(j, path);
    entry.fix = String(j, path, "fix", false);
    if (j.contains("rules")) {
      const std::string rp = Key(path, "rules");
      const json& rules = j.at("rules");
      if (!rules.is_array()) Bad(rp, "expected a list of rules");
      for (size_t i = 0; i < rules.size(); ++i) entry.rules.push_back(Rule(rules[i], Index(rp, i), false));
    }
    return entry;
  }

  TargetLayer Layer(const json& j, const std::string& path) const {
    RequireObject(j, path);
    CheckKeys(j, path, {"name", "description", "ops_not_listed", "unsupported_op", "op_version",
                        "feature_level", "ops", "rules"});
    TargetLayer layer;
    layer.name = String(j, path, "name");
    layer.description = String(j, path, "description");
    const std::string policy = String(j, path, "ops_not_listed");
    if (policy != "reject" && policy != "accept") {
      Bad(Key(path, "ops_not_listed"), "expected \"reject\" or \"accept\"");
    }
    layer.reject_ops_not_listed = policy == "reject";
    if (layer.reject_ops_not_listed) {
      const std::string up = Key(path, "unsupported_op");
      if (!j.contains("unsupported_op")) Bad(up, "missing (message, fix and source for ops the layer does not list)");
      const json& u = j.at("unsupported_op");
      RequireObject(u, up);
      CheckKeys(u, up, {"message", "fix", "source"});
      layer.unsupported_op.id = layer.name + ".unsupported_op";
      layer.unsupported_op.reason = ReasonCode::kUnsupportedOp;
      layer.unsupported_op.message = String(u, up, "message");
      layer.unsupported_op.fix = String(u, up, "fix");
      layer.unsupported_op.source = Source(u, up);
    }
    for (const char* gate : {"op_version", "feature_level"}) {
      if (!j.contains(gate)) continue;
      const std::string gp = Key(path, gate);
      const json& g = j.at(gate);
      RequireObject(g, gp);
      CheckKeys(g, gp, {"fix", "source"});
      (std::string(gate) == "op_version" ? layer.op_version_fix : layer.feature_level_fix) = String(g, gp, "fix");
      Source(g, gp);
    }
    std::set<std::string> seen_ops;
    if (j.contains("ops")) {
      const std::string op = Key(path, "ops");
      const json& ops = j.at("ops");
      if (!ops.is_array()) Bad(op, "expected a list of op entries");
      for (size_t i = 0; i < ops.size(); ++i) {
        layer.ops.push_back(OpEntry(ops[i], Index(op, i)));
        for (const auto& name : layer.ops.back().ops) {
          if (!seen_ops.insert(name).second) Bad(Index(op, i), StrCat("op '", name, "' is listed twice in this layer"));
        }
      }
    }
    if (j.contains("rules")) {
      const std::string rp = Key(path, "rules");
      const json& rules = j.at("rules");
      if (!rules.is_array()) Bad(rp, "expected a list of rules");
      for (size_t i = 0; i < rules.size(); ++i) layer.rules.push_back(Rule(rules[i], Index(rp, i), true));
    }
    return layer;
  }

  // `positive`: a rate (throughput, bandwidth) that must be > 0; otherwise a
  // time or count that must be >= 0. Either way finite.
  CostNumber Cost(const json& j, const std::string& path, bool positive = false) const {
    RequireObject(j, path);
    CheckKeys(j, path, {"value", "placeholder", "source", "note"});
    CostNumber number;
    const auto value = Number(j, path, "value");
    if (!value) Bad(Key(path, "value"), "missing (a number is required)");
    if (!std::isfinite(*value)) Bad(Key(path, "value"), StrCat("not a finite number: ", *value));
    if (positive && *value <= 0)
      Bad(Key(path, "value"), StrCat("a throughput must be > 0, got ", *value));
    if (*value < 0) Bad(Key(path, "value"), StrCat("negative (a number >= 0 is required), got ", *value));
    number.value = *value;
    number.placeholder = Bool(j, path, "placeholder", false);
    number.note = String(j, path, "note", false);
    if (number.placeholder) {
      if (j.contains("source")) number.source = Source(j, path);
    } else if (!j.contains("source")) {
      Bad(path, "a cost number needs a \"source\" or \"placeholder\": true");
    } else {
      number.source = Source(j, path);
    }
    return number;
  }

  // {"name": cost number} with names from `names` (what `what` calls them).
  CostTable Table(const json& j, const std::string& path, const std::vector<std::string>& names,
                  const char* what, bool positive) const {
    RequireObject(j, path);
    CostTable table;
    for (const auto& [name, number] : j.items()) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        Bad(Key(path, name), StrCat("unknown ", what, " (one of: ", known, ")"));
      }
      table.emplace_back(name, Cost(number, Key(path, name), positive));
    }
    return table;
  }

  std::optional<CostNumber> OptionalCost(const json& j, const std::string& path, const char* key,
                                         bool positive) const {
    if (!j.contains(key)) return std::nullopt;
    return Cost(j.at(key), Key(path, key), positive);
  }

  CostModel CostModelOf(const json& j, const std::string& path) const {
    RequireObject(j, path);
    CheckKeys(j, path, {"ops_per_second", "op_class_efficiency", "memory_bytes_per_second", "weight_bytes_per_second", "node_overhead_us",
                        "partition_sync_us", "copy_bytes_per_second", "first_inference_compile_ms", "cpu",
                        "cpu_classes", "driver_fallback", "ethos_u", "note"});
    CostModel cost;
    cost.present = true;
    if (j.contains("ops_per_second")) {
      const std::string op = Key(path, "ops_per_second");
      RequireObject(j.at("ops_per_second"), op);
      for (const auto& [dtype, number] : j.at("ops_per_second").items()) {
        const auto& names = DtypeNames();
        if (std::find(names.begin(), names.end(), dtype) == names.end()) {
          Bad(Key(op, dtype), "unknown dtype class (use a dtype name such as int8, uint8, int16, float32)");
        }
      }
      cost.ops_per_second = Table(j.at("ops_per_second"), op, DtypeNames(), "dtype class", true);
    }
    if (j.contains("op_class_efficiency"))
      cost.op_class_efficiency = Table(j.at("op_class_efficiency"), Key(path, "op_class_efficiency"),
                                       CostOpClassNames(), "op class", true);
    cost.memory_bytes_per_second = OptionalCost(j, path, "memory_bytes_per_second", true);
    cost.weight_bytes_per_second = OptionalCost(j, path, "weight_bytes_per_second", true);
    cost.node_overhead_us = OptionalCost(j, path, "node_overhead_us", false);
    cost.partition_sync_us = OptionalCost(j, path, "partition_sync_us", false);
    cost.copy_bytes_per_second = OptionalCost(j, path, "copy_bytes_per_second", true);
    cost.first_inference_compile_ms = OptionalCost(j, path, "first_inference_compile_ms", false);
    if (j.contains("cpu")) {
      const std::string cp = Key(path, "cpu");
      const json& c = j.at("cpu");
      RequireObject(c, cp);
      CheckKeys(c, cp, {"class", "cores", "clock_hz", "note"});
      cost.cpu_class = String(c, cp, "class");
      if (!c.contains("cores") || !c.contains("clock_hz")) Bad(cp, "needs \"cores\" and \"clock_hz\"");
      cost.cpu_cores = Cost(c.at("cores"), Key(cp, "cores"), true);
      cost.cpu_clock_hz = Cost(c.at("clock_hz"), Key(cp, "clock_hz"), true);
    }
    if (j.contains("cpu_classes")) {
      const std::string cp = Key(path, "cpu_classes");
      RequireObject(j.at("cpu_classes"), cp);
      for (const auto& [name, c] : j.at("cpu_classes").items()) {
        const std::string np = Key(cp, name);
        RequireObject(c, np);
        CheckKeys(c, np, {"ops_per_cycle_per_core", "op_class_efficiency", "note"});
        CpuClassCost cls;
        if (!c.contains("ops_per_cycle_per_core")) Bad(np, "needs \"ops_per_cycle_per_core\"");
        cls.ops_per_cycle_per_core = Table(c.at("ops_per_cycle_per_core"), Key(np, "ops_per_cycle_per_core"),
                                           DtypeNames(), "dtype class", true);
        if (c.contains("op_class_efficiency"))
          cls.op_class_efficiency = Table(c.at("op_class_efficiency"), Key(np, "op_class_efficiency"),
                                          CostOpClassNames(), "op class", true);
        cost.cpu_classes.emplace_back(name, std::move(cls));
      }
    }
    if (j.contains("driver_fallback")) {
      const std::string fp = Key(path, "driver_fallback");
      const json& f = j.at("driver_fallback");
      RequireObject(f, fp);
      CheckKeys(f, fp, {"layer", "slowdown", "note"});
      cost.fallback_layer = String(f, fp, "layer");
      if (!f.contains("slowdown")) Bad(fp, "needs \"slowdown\"");
      cost.fallback_slowdown = Cost(f.at("slowdown"), Key(fp, "slowdown"), true);
    }
    if (j.contains("ethos_u")) {
      const std::string ep = Key(path, "ethos_u");
      // Counts and rates must be > 0; a cache size or an overhead may be 0.
      RequireObject(j.at("ethos_u"), ep);
      for (const auto& [name, number] : j.at("ethos_u").items()) {
        const bool may_be_zero = name == "sram_cache_bytes" || name == "op_overhead_cycles" ||
                                 name == "feature_maps_off_chip" || name.rfind("activation_cycles", 0) == 0 ||
                                 name.find("_latency_cycles") != std::string::npos ||
                                 name == "arg_max_cycles_per_element" || name == "fuses_channel_scale_shift" ||
                                 name == "shram_banks" || name == "weight_dma_bytes_per_cycle" || name == "chains_elementwise_after_convolution" ||
                                 name.find("_channel_bytes_per_cycle") != std::string::npos;  // 0: no channel limit
        CostTable one = Table(json::object({{name, number}}), ep, EthosUCostNames(), "Ethos-U cost key", !may_be_zero);
        cost.ethos_u.push_back(std::move(one.front()));
      }
      for (const auto& name : EthosUCostNames()) {
        bool found = false;
        for (const auto& [have, number] : cost.ethos_u) found = found || have == name;
        if (!found) Bad(Key(ep, name), "missing (every Ethos-U cost key is required)");
      }
    }
    return cost;
  }

  TargetPartitioning Partitioning(const json& j, const std::string& path) const {
    RequireObject(j, path);
    CheckKeys(j, path, {"max_delegated_partitions", "min_nodes_per_partition", "single_cut", "source",
                        "cut_after_first_mapped"});
    TargetPartitioning p;
    p.max_delegated_partitions = Int(j, path, "max_delegated_partitions", 0, 0);
    p.min_nodes_per_partition = Int(j, path, "min_nodes_per_partition", 0, 0);
    p.single_cut = Bool(j, path, "single_cut", false);
    p.source = Source(j, path);
    if (j.contains("cut_after_first_mapped")) {
      const std::string cp = Key(path, "cut_after_first_mapped");
      const json& c = j.at("cut_after_first_mapped");
      RequireObject(c, cp);
      CheckKeys(c, cp, {"source", "note"});
      if (!p.single_cut) Bad(cp, "only meaningful with \"single_cut\": true");
      p.cut_after_first_mapped = true;
      p.cut_after_first_mapped_source = Source(c, cp);
    }
    return p;
  }

 private:
  std::string label_;
};

bool UsesFeatureLevel(const TargetPredicate& p) {
  if (p.kind == Kind::kFeatureLevel) return true;
  return std::any_of(p.children.begin(), p.children.end(), UsesFeatureLevel);
}

bool RuleUsesFeatureLevel(const TargetRule& rule) {
  return std::any_of(rule.when.begin(), rule.when.end(), UsesFeatureLevel) ||
         std::any_of(rule.require.begin(), rule.require.end(), UsesFeatureLevel);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("target file ", path, ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) Fail("target file ", path, ": read error");
  return text.str();
}

Target ParseTargetImpl(const std::string& json_text, const std::string& label,
                       const std::string& base_dir, int depth) {
  Parser parser(label);
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for numbers beyond a double (1e400).
    Fail("target file ", label, ": malformed JSON: ", e.what());
  }
  parser.RequireObject(root, "");
  parser.CheckKeys(root, "", {"id", "description", "version", "extends", "feature_level", "partitioning", "cost",
                              "layers", "known_differences", "note"});

  Target target;
  const std::string parent = parser.String(root, "", "extends", false);
  if (!parent.empty()) {
    if (depth >= kMaxExtendsDepth) parser.Bad("extends", "chain of 'extends' too long (a cycle?)");
    if (parent.find('/') != std::string::npos || parent.find('\\') != std::string::npos) {
      parser.Bad("extends", "expected a target id in the same folder, not a path");
    }
    const std::string parent_path = (fs::path(base_dir) / (parent + ".json")).string();
    if (!fs::exists(parent_path)) parser.Bad("extends", StrCat("no target '", parent, "' at ", parent_path));
    target = ParseTargetImpl(ReadText(parent_path), parent_path, base_dir, depth + 1);
  }
  target.path = label;
  target.id = parser.String(root, "", "id");
  target.description = parser.String(root, "", "description");
  if (root.contains("version")) target.version = parser.String(root, "", "version");
  if (root.contains("known_differences")) {
    const json& list = root.at("known_differences");
    if (!list.is_array()) parser.Bad("known_differences", "expected a list of {oracle, says}");
    target.known_differences.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string dp = Parser::Index("known_differences", i);
      parser.RequireObject(list[i], dp);
      parser.CheckKeys(list[i], dp, {"oracle", "says"});
      target.known_differences.push_back({parser.String(list[i], dp, "oracle"), parser.String(list[i], dp, "says")});
    }
  }
  if (root.contains("feature_level")) target.feature_level = parser.Int(root, "", "feature_level", 0, 1);
  if (root.contains("partitioning")) target.partitioning = parser.Partitioning(root.at("partitioning"), "partitioning");
  if (root.contains("cost")) target.cost = parser.CostModelOf(root.at("cost"), "cost");

  if (!root.contains("layers")) {
    if (parent.empty()) parser.Bad("layers", "missing (a list with at least one layer)");
  } else {
    const json& layers = root.at("layers");
    if (!layers.is_array() || (layers.empty() && parent.empty())) {
      parser.Bad("layers", "expected a non-empty list of layers");
    }
    // A layer named like one of the parent's replaces it; others are appended.
    std::set<std::string> names_here;
    for (size_t i = 0; i < layers.size(); ++i) {
      TargetLayer layer = parser.Layer(layers[i], Parser::Index("layers", i));
      if (!names_here.insert(layer.name).second) {
        parser.Bad(Parser::Index("layers", i), StrCat("layer name '", layer.name, "' used twice"));
      }
      auto same = std::find_if(target.layers.begin(), target.layers.end(),
                               [&](const TargetLayer& l) { return l.name == layer.name; });
      if (same != target.layers.end()) {
        *same = std::move(layer);
      } else {
        target.layers.push_back(std::move(layer));
      }
    }
  }

  // Feature-level gates need a level to compare with.
  if (!target.feature_level) {
    for (size_t l = 0; l < target.layers.size(); ++l) {
      const TargetLayer& layer = target.layers[l];
      const std::string lp = StrCat("layers[", l, "] (", layer.name, ")");
      for (const auto& rule : layer.rules) {
        if (RuleUsesFeatureLevel(rule)) parser.Bad(lp, StrCat("rule '", rule.id, "' checks feature_level but the target sets none"));
      }
      for (const auto& entry : layer.ops) {
        if (entry.min_feature_level > 0) parser.Bad(lp, StrCat("op ", entry.ops[0], " has min_feature_level but the target sets no feature_level"));
        for (const auto& rule : entry.rules) {
          if (RuleUsesFeatureLevel(rule)) parser.Bad(lp, StrCat("rule '", rule.id, "' checks feature_level but the target sets none"));
        }
      }
    }
  }
  return target;
}

// ---------------------------------------------------------------------------
// Evaluation

struct NodeView {
  const ModelDef& model;
  const SubgraphDef& graph;
  const OperatorDef& op;
  std::string op_name;
  int version = 1;
  int feature_level = 0;
  bool accelerator_named = false;

  const TensorDef* Tensor(int index) const {
    if (index < 0 || static_cast<size_t>(index) >= graph.tensors.size()) return nullptr;
    return &graph.tensors[index];
  }

  bool IsConstant(int index) const {
    const TensorDef* t = Tensor(index);
    if (!t || t->is_variable || t->buffer == 0 || t->buffer >= model.buffers.size()) return false;
    return !model.buffers[t->buffer].empty();
  }

  // Tensor indices a selector names; empty when it names nothing present.
  std::vector<int> Select(const std::string& selector) const {
    std::vector<int> out;
    auto add_inputs = [&](bool only_activations) {
      for (int t : op.inputs) {
        if (Tensor(t) && !(only_activations && IsConstant(t))) out.push_back(t);
      }
    };
    auto add_outputs = [&] {
      for (int t : op.outputs) {
        if (Tensor(t)) out.push_back(t);
      }
    };
    if (selector == "inputs") {
      add_inputs(false);
    } else if (selector == "outputs") {
      add_outputs();
    } else if (selector == "tensors") {
      add_inputs(false);
      add_outputs();
    } else if (selector == "activations") {
      add_inputs(true);
      add_outputs();
    } else {
      const bool input = selector.rfind("input:", 0) == 0;
      const auto& list = input ? op.inputs : op.outputs;
      const size_t n = std::stoul(selector.substr(input ? 6 : 7));
      if (n < list.size() && Tensor(list[n])) out.push_back(list[n]);
    }
    return out;
  }
};

// A predicate's outcome: holds, fails (with what was observed), or does not apply.
struct Outcome {
  std::optional<bool> holds;
  std::string detail;  // when !*holds: what was observed and what was needed
};

TargetValue Number(double v) { return TargetValue{ValueKind::kNumber, v, false, {}}; }
TargetValue Boolean(bool v) { return TargetValue{ValueKind::kBool, 0, v, {}}; }
TargetValue Text(std::string v) { return TargetValue{ValueKind::kString, 0, false, std::move(v)}; }

bool Equal(const TargetValue& a, const TargetValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ValueKind::kNumber: return a.number == b.number;
    case ValueKind::kBool: return a.boolean == b.boolean;
    case ValueKind::kString: return a.text == b.text;
  }
  return false;
}

bool Matches(const TargetValue& observed, const TargetPredicate& p) {
  switch (p.compare) {
    case Compare::kEq: return Equal(observed, p.values[0]);
    case Compare::kNe: return !Equal(observed, p.values[0]);
    case Compare::kLt: return observed.number < p.values[0].number;
    case Compare::kLe: return observed.number <= p.values[0].number;
    case Compare::kGt: return observed.number > p.values[0].number;
    case Compare::kGe: return observed.number >= p.values[0].number;
    case Compare::kIn:
    case Compare::kNotIn: {
      const bool found = std::any_of(p.values.begin(), p.values.end(),
                                     [&](const TargetValue& v) { return Equal(observed, v); });
      return p.compare == Compare::kIn ? found : !found;
    }
  }
  return false;
}

std::string Needed(const TargetPredicate& p) {
  if (p.compare == Compare::kIn || p.compare == Compare::kNotIn) {
    std::string list;
    for (const auto& v : p.values) list += StrCat(list.empty() ? "" : ", ", ValueText(v));
    return StrCat("needs ", CompareText(p.compare), " [", list, "]");
  }
  return StrCat("needs ", CompareText(p.compare), " ", ValueText(p.values[0]));
}

std::string ShapeString(const std::vector<int32_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += StrCat(i ? "," : "", shape[i]);
  return text + "]";
}

// Where tensor `index` sits in the node, e.g. input:0 "conv/weights".
std::string TensorLabel(const NodeView& node, int index) {
  std::string where;
  for (size_t i = 0; i < node.op.inputs.size() && where.empty(); ++i) {
    if (node.op.inputs[i] == index) where = StrCat("input:", i);
  }
  for (size_t i = 0; i < node.op.outputs.size() && where.empty(); ++i) {
    if (node.op.outputs[i] == index) where = StrCat("output:", i);
  }
  const TensorDef* t = node.Tensor(index);
  std::string name = t ? t->name : "?";
  // Converter-made names can be hundreds of characters of fused scopes.
  constexpr size_t kMaxName = 48;
  if (name.size() > kMaxName) name = name.substr(0, kMaxName - 3) + "...";
  return StrCat(where, " \"", name, "\"");
}

// The value a one-tensor check reads, or nullopt when it does not exist.
std::optional<TargetValue> TensorValue(const NodeView& node, const TargetPredicate& p, int index) {
  const TensorDef& t = *node.Tensor(index);
  switch (p.kind) {
    case Kind::kDtype: return Text(Lower(DataTypeName(t.type)));
    case Kind::kRank: return Number(static_cast<double>(t.shape.size()));
    case Kind::kDim: {
      const int rank = static_cast<int>(t.shape.size());
      const int axis = p.axis < 0 ? rank + p.axis : p.axis;
      if (axis < 0 || axis >= rank) return std::nullopt;
      return Number(t.shape[axis]);
    }
    case Kind::kMinDim:
    case Kind::kMaxDim: {
      if (t.shape.empty()) return std::nullopt;
      const auto [lo, hi] = std::minmax_element(t.shape.begin(), t.shape.end());
      return Number(p.kind == Kind::kMinDim ? *lo : *hi);
    }
    case Kind::kElements: {
      double n = 1;
      for (int32_t d : t.shape) n *= d;
      return Number(n);
    }
    case Kind::kPerAxis: return Boolean(t.quantization.per_axis());
    case Kind::kQuantized: return Boolean(!t.quantization.empty());
    case Kind::kZeroPoint:
      if (t.quantization.zero_point.empty()) return std::nullopt;
      return Number(static_cast<double>(t.quantization.zero_point[0]));
    case Kind::kConstant: return Boolean(node.IsConstant(index));
    case Kind::kPresent: return Boolean(true);
    default: return std::nullopt;
  }
}

std::string TensorValueName(Kind kind) {
  switch (kind) {
    case Kind::kDtype: return "type";
    case Kind::kMinDim: return "smallest dim";
    case Kind::kMaxDim: return "largest dim";
    case Kind::kPerAxis: return "per-axis quantized";
    case Kind::kConstant: return "constant";
    default: return KindName(kind);
  }
}

std::string ActivationName(Activation a) {
  switch (a) {
    case Activation::kNone: return "none";
    case Activation::kRelu: return "relu";
    case Activation::kReluN1To1: return "relu_n1_to_1";
    case Activation::kRelu6: return "relu6";
    case Activation::kTanh: return "tanh";
    case Activation::kSignBit: return "sign_bit";
  }
  return "none";
}

// The integer upscale factor shared by height and width of an NHWC resize:
// out/in, or (out-1)/(in-1) with align_corners; 0 when the ratio is not an
// integer or differs between height and width; nullopt without static shapes.
std::optional<double> ResizeFactor(const NodeView& node, bool align_corners) {
  if (node.op.inputs.empty() || node.op.outputs.empty()) return std::nullopt;
  const TensorDef* in = node.Tensor(node.op.inputs[0]);
  const TensorDef* out = node.Tensor(node.op.outputs[0]);
  if (!in || !out || in->shape.size() != 4 || out->shape.size() != 4) return std::nullopt;
  double factor[2] = {0, 0};
  for (int axis = 1; axis <= 2; ++axis) {
    const int64_t i = in->shape[axis] - (align_corners ? 1 : 0);
    const int64_t o = out->shape[axis] - (align_corners ? 1 : 0);
    if (i <= 0 || o <= 0 || o % i != 0) return 0.0;
    factor[axis - 1] = static_cast<double>(o / i);
  }
  return factor[0] == factor[1] ? factor[0] : 0.0;
}

// Reads a param (option or derived value) of the node; nullopt when the op has none.
std::optional<TargetValue> ParamValue(const NodeView& node, const std::string& name) {
  std::map<std::string, TargetValue> values;
  auto kernel_from_filter = [&](int dilation_w, int dilation_h) {
    if (node.op.inputs.size() < 2) return;
    const TensorDef* filter = node.Tensor(node.op.inputs[1]);
    if (!filter || filter->shape.size() != 4) return;
    const double kh = filter->shape[1], kw = filter->shape[2];
    values["kernel_h"] = Number(kh);
    values["kernel_w"] = Number(kw);
    values["kernel_area"] = Number(kh * kw);
    const double dkh = (kh - 1) * dilation_h + 1, dkw = (kw - 1) * dilation_w + 1;
    values["dilated_kernel_h"] = Number(dkh);
    values["dilated_kernel_w"] = Number(dkw);
    values["dilated_kernel_area"] = Number(dkh * dkw);
  };
  std::visit(
      [&](const auto& params) {
        using P = std::decay_t<decltype(params)>;
        if constexpr (std::is_same_v<P, Conv2DParams> || std::is_same_v<P, DepthwiseConv2DParams>) {
          values["padding"] = Text(params.padding == Padding::kSame ? "same" : "valid");
          values["stride_w"] = Number(params.stride_w);
          values["stride_h"] = Number(params.stride_h);
          values["dilation_w"] = Number(params.dilation_w);
          values["dilation_h"] = Number(params.dilation_h);
          values["activation"] = Text(ActivationName(params.activation));
          if constexpr (std::is_same_v<P, DepthwiseConv2DParams>) {
            values["depth_multiplier"] = Number(params.depth_multiplier);
          }
          kernel_from_filter(params.dilation_w, params.dilation_h);
        } else if constexpr (std::is_same_v<P, TransposeConvParams>) {
          values["padding"] = Text(params.padding == Padding::kSame ? "same" : "valid");
          values["stride_w"] = Number(params.stride_w);
          values["stride_h"] = Number(params.stride_h);
          values["activation"] = Text(ActivationName(params.activation));
          kernel_from_filter(1, 1);
        } else if constexpr (std::is_same_v<P, Pool2DParams>) {
          values["padding"] = Text(params.padding == Padding::kSame ? "same" : "valid");
          values["stride_w"] = Number(params.stride_w);
          values["stride_h"] = Number(params.stride_h);
          values["activation"] = Text(ActivationName(params.activation));
          const double w = params.filter_w, h = params.filter_h;
          for (const char* prefix : {"filter", "kernel", "dilated_kernel"}) {
            values[StrCat(prefix, "_w")] = Number(w);
            values[StrCat(prefix, "_h")] = Number(h);
            values[StrCat(prefix, "_area")] = Number(w * h);
          }
        } else if constexpr (std::is_same_v<P, FullyConnectedParams>) {
          values["activation"] = Text(ActivationName(params.activation));
          values["weights_format"] = Text(params.weights_format == 1 ? "shuffled4x16int8" : "default");
          values["keep_num_dims"] = Boolean(params.keep_num_dims);
          values["asymmetric_quantize_inputs"] = Boolean(params.asymmetric_quantize_inputs);
        } else if constexpr (std::is_same_v<P, ElementwiseParams>) {
          values["activation"] = Text(ActivationName(params.activation));
        } else if constexpr (std::is_same_v<P, SoftmaxParams>) {
          values["beta"] = Number(params.beta);
        } else if constexpr (std::is_same_v<P, ConcatenationParams>) {
          values["axis"] = Number(params.axis);
          values["activation"] = Text(ActivationName(params.activation));
        } else if constexpr (std::is_same_v<P, ReshapeParams>) {
          if (params.has_new_shape) values["new_shape_rank"] = Number(static_cast<double>(params.new_shape.size()));
        } else if constexpr (std::is_same_v<P, SplitParams>) {
          values["num_splits"] = Number(params.num_splits);
        } else if constexpr (std::is_same_v<P, ReducerParams>) {
          values["keep_dims"] = Boolean(params.keep_dims);
        } else if constexpr (std::is_same_v<P, ResizeParams>) {
          values["align_corners"] = Boolean(params.align_corners);
          values["half_pixel_centers"] = Boolean(params.half_pixel_centers);
          if (const auto factor = ResizeFactor(node, params.align_corners)) values["resize_factor"] = Number(*factor);
        } else if constexpr (std::is_same_v<P, ArgMinMaxParams>) {
          values["output_type"] = Text(Lower(DataTypeName(params.output_type)));
        } else if constexpr (std::is_same_v<P, PackParams>) {
          values["values_count"] = Number(params.values_count);
          values["axis"] = Number(params.axis);
        } else if constexpr (std::is_same_v<P, UnpackParams>) {
          values["num"] = Number(params.num);
          values["axis"] = Number(params.axis);
        } else if constexpr (std::is_same_v<P, SqueezeParams>) {
          values["squeeze_dims_count"] = Number(static_cast<double>(params.squeeze_dims.size()));
        } else if constexpr (std::is_same_v<P, GatherParams>) {
          values["axis"] = Number(params.axis);
          values["batch_dims"] = Number(params.batch_dims);
        } else if constexpr (std::is_same_v<P, StridedSliceParams>) {
          values["begin_mask"] = Number(params.begin_mask);
          values["end_mask"] = Number(params.end_mask);
          values["ellipsis_mask"] = Number(params.ellipsis_mask);
          values["new_axis_mask"] = Number(params.new_axis_mask);
          values["shrink_axis_mask"] = Number(params.shrink_axis_mask);
          values["offset"] = Boolean(params.offset);
        } else if constexpr (std::is_same_v<P, LeakyReluParams>) {
          values["alpha"] = Number(params.alpha);
        } else if constexpr (std::is_same_v<P, SvdfParams> || std::is_same_v<P, SequenceLstmParams>) {
          values["activation"] = Text(ActivationName(params.activation));
          values["asymmetric_quantize_inputs"] = Boolean(params.asymmetric_quantize_inputs);
        }
      },
      node.op.params);
  // ARG_MAX / ARG_MIN without an options table default to an int64 output.
  if ((node.op_name == "ARG_MAX" || node.op_name == "ARG_MIN") && !values.count("output_type")) {
    values["output_type"] = Text("int64");
  }
  // ARG_MAX / ARG_MIN: the reduced axis, read from the constant axis tensor.
  if ((node.op_name == "ARG_MAX" || node.op_name == "ARG_MIN") && node.op.inputs.size() >= 2 &&
      node.IsConstant(node.op.inputs[1])) {
    const TensorDef* input = node.Tensor(node.op.inputs[0]);
    const TensorDef* axis_tensor = node.Tensor(node.op.inputs[1]);
    const std::span<const uint8_t> bytes = node.model.buffers[axis_tensor->buffer].bytes();
    std::optional<int64_t> axis;
    if (axis_tensor->type == DataType::kInt32 && bytes.size() >= 4) {
      int32_t v;
      std::memcpy(&v, bytes.data(), 4);
      axis = v;
    } else if (axis_tensor->type == DataType::kInt64 && bytes.size() >= 8) {
      int64_t v;
      std::memcpy(&v, bytes.data(), 8);
      axis = v;
    }
    if (axis && input && !input->shape.empty()) {
      const int64_t rank = static_cast<int64_t>(input->shape.size());
      const int64_t normalized = *axis < 0 ? *axis + rank : *axis;
      values["axis"] = Number(static_cast<double>(normalized));
      values["axis_is_last"] = Boolean(normalized == rank - 1);
    }
  }
  const auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

Outcome Evaluate(const NodeView& node, const TargetPredicate& p);

Outcome EvaluateAll(const NodeView& node, const std::vector<TargetPredicate>& list) {
  Outcome result;
  bool any_applies = false;
  for (const auto& child : list) {
    Outcome o = Evaluate(node, child);
    if (!o.holds) continue;
    any_applies = true;
    if (!*o.holds) return o;
  }
  if (any_applies) result.holds = true;
  return result;
}

Outcome Leaf(std::optional<TargetValue> observed, const TargetPredicate& p, const std::string& subject) {
  Outcome o;
  if (!observed) return o;
  o.holds = Matches(*observed, p);
  if (!*o.holds) o.detail = StrCat(subject, " is ", ValueText(*observed), ", ", Needed(p));
  return o;
}

Outcome Evaluate(const NodeView& node, const TargetPredicate& p) {
  switch (p.kind) {
    case Kind::kAll: return EvaluateAll(node, p.children);
    case Kind::kAny: {
      Outcome result;
      std::string details;
      for (const auto& child : p.children) {
        Outcome o = Evaluate(node, child);
        if (!o.holds) continue;
        if (*o.holds) return o;
        result.holds = false;
        details += StrCat(details.empty() ? "" : "; and ", o.detail);
      }
      if (result.holds) result.detail = details;
      return result;
    }
    case Kind::kNot: {
      // Re-evaluate the child to describe what it observed when it holds.
      const TargetPredicate& child = p.children[0];
      Outcome o = Evaluate(node, child);
      if (!o.holds) return o;
      Outcome result;
      result.holds = !*o.holds;
      if (!*result.holds) {
        TargetPredicate inverted = child;
        bool inverted_leaf = true;
        switch (child.compare) {
          case Compare::kEq: inverted.compare = Compare::kNe; break;
          case Compare::kNe: inverted.compare = Compare::kEq; break;
          case Compare::kLt: inverted.compare = Compare::kGe; break;
          case Compare::kLe: inverted.compare = Compare::kGt; break;
          case Compare::kGt: inverted.compare = Compare::kLe; break;
          case Compare::kGe: inverted.compare = Compare::kLt; break;
          case Compare::kIn: inverted.compare = Compare::kNotIn; break;
          case Compare::kNotIn: inverted.compare = Compare::kIn; break;
        }
        if (child.kind == Kind::kAll || child.kind == Kind::kAny || child.kind == Kind::kNot) {
          inverted_leaf = false;
        }
        Outcome described = inverted_leaf ? Evaluate(node, inverted) : Outcome{};
        result.detail = described.holds && !*described.holds ? described.detail
                                                              : "a combination the layer does not accept";
      }
      return result;
    }
    case Kind::kOpVersion: return Leaf(Number(node.version), p, StrCat("op version"));
    case Kind::kFeatureLevel: return Leaf(Number(node.feature_level), p, "feature level");
    case Kind::kAcceleratorNamed: return Leaf(Boolean(node.accelerator_named), p, "accelerator named");
    case Kind::kInputCount: return Leaf(Number(static_cast<double>(node.op.inputs.size())), p, "input count");
    case Kind::kOutputCount: return Leaf(Number(static_cast<double>(node.op.outputs.size())), p, "output count");
    case Kind::kParam: return Leaf(ParamValue(node, p.param), p, p.param);
    case Kind::kPresent: {
      const bool present = !node.Select(p.tensors[0]).empty();
      return Leaf(Boolean(present), p, StrCat(p.tensors[0], " present"));
    }
    case Kind::kSameDtype:
    case Kind::kSameQuantization:
    case Kind::kSameShape: {
      const auto a = node.Select(p.tensors[0]), b = node.Select(p.tensors[1]);
      if (a.empty() || b.empty()) return {};
      const TensorDef& ta = *node.Tensor(a[0]);
      const TensorDef& tb = *node.Tensor(b[0]);
      bool same = false;
      std::string what;
      if (p.kind == Kind::kSameDtype) {
        same = ta.type == tb.type;
        what = StrCat("types ", Lower(DataTypeName(ta.type)), " and ", Lower(DataTypeName(tb.type)));
      } else if (p.kind == Kind::kSameShape) {
        same = ta.shape == tb.shape;
        what = StrCat("shapes ", ShapeString(ta.shape), " and ", ShapeString(tb.shape));
      } else {
        same = ta.quantization.scale == tb.quantization.scale &&
               ta.quantization.zero_point == tb.quantization.zero_point;
        what = "quantization parameters";
      }
      Outcome o;
      o.holds = Matches(Boolean(same), p);
      if (!*o.holds) {
        o.detail = StrCat(TensorLabel(node, a[0]), " and ", TensorLabel(node, b[0]), " have ",
                          same ? "the same " : "different ", what);
      }
      return o;
    }
    default: {
      // One-tensor checks over one or several selected tensors: all must hold.
      Outcome result;
      for (int index : node.Select(p.tensors[0])) {
        const auto observed = TensorValue(node, p, index);
        if (!observed) continue;
        result.holds = true;
        if (!Matches(*observed, p)) {
          result.holds = false;
          const std::string what = p.kind == Kind::kDim ? StrCat("dim[", p.axis, "]") : TensorValueName(p.kind);
          result.detail = StrCat(what, " of ", TensorLabel(node, index), " is ",
                                 ValueText(*observed), ", ", Needed(p));
          if (p.kind == Kind::kDtype || p.kind == Kind::kRank) {
            result.detail += StrCat(" (shape ", ShapeString(node.Tensor(index)->shape), ")");
          }
          return result;
        }
      }
      return result;
    }
  }
}

bool Listed(const std::vector<std::string>& names, const std::string& op) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

// Appends a reason when the rule applies to this node and its requirement fails.
void ApplyRule(const NodeView& node, const TargetRule& rule, const std::string& layer,
               std::vector<Reason>* reasons) {
  if (!rule.when.empty()) {
    for (const auto& w : rule.when) {
      const Outcome o = Evaluate(node, w);
      if (!o.holds || !*o.holds) return;
    }
  }
  for (const auto& r : rule.require) {
    const Outcome o = Evaluate(node, r);
    if (o.holds && !*o.holds) {
      reasons->push_back(Reason{rule.reason, layer,
                                StrCat(rule.placeholder ? kPlaceholderMark : "",
                                       rule.message, " (", o.detail, ")"),
                                rule.fix});
      return;
    }
  }
}

std::string NodeOpName(const ModelDef& model, const OperatorDef& op) {
  if (op.opcode_index >= model.operator_codes.size()) return "<invalid opcode>";
  const OperatorCodeDef& code = model.operator_codes[op.opcode_index];
  if (code.builtin == BuiltinOp::kCustom) return "CUSTOM:" + code.custom_code;
  const auto value = static_cast<int32_t>(code.builtin);
  if (value < 0 || value > kMaxBuiltinOp) return StrCat("BUILTIN_", value);
  return std::string(BuiltinOpName(code.builtin));
}

std::vector<Reason> EvaluateLayer(const NodeView& node, const TargetLayer& layer,
                                  const std::optional<int>& feature_level) {
  std::vector<Reason> reasons;
  const TargetOpEntry* entry = nullptr;
  for (const auto& e : layer.ops) {
    if (Listed(e.ops, node.op_name)) entry = &e;
  }
  if (!entry && layer.reject_ops_not_listed) {
    reasons.push_back(Reason{ReasonCode::kUnsupportedOp, layer.name,
                             StrCat(layer.unsupported_op.message, " (op ", node.op_name, ")"),
                             layer.unsupported_op.fix});
    return reasons;
  }
  if (entry) {
    if (entry->min_feature_level > 0 && feature_level && *feature_level < entry->min_feature_level) {
      reasons.push_back(Reason{
          ReasonCode::kFeatureLevelTooLow, layer.name,
          StrCat(node.op_name, " needs feature level >= ", entry->min_feature_level,
                 "; this target is at ", *feature_level),
          !entry->fix.empty() ? entry->fix : layer.feature_level_fix});
      return reasons;
    }
    if (entry->max_version > 0 && node.version > entry->max_version) {
      reasons.push_back(Reason{
          ReasonCode::kUnsupportedOpVersion, layer.name,
          StrCat(node.op_name, " version ", node.version, " is above the highest version this ",
                 layer.name, " accepts (", entry->max_version, ")"),
          !entry->fix.empty() ? entry->fix : layer.op_version_fix});
    }
  }
  for (const auto& rule : layer.rules) {
    if (!rule.ops.empty() && !Listed(rule.ops, node.op_name)) continue;
    if (Listed(rule.except_ops, node.op_name)) continue;
    ApplyRule(node, rule, layer.name, &reasons);
  }
  if (entry) {
    for (const auto& rule : entry->rules) ApplyRule(node, rule, layer.name, &reasons);
  }
  return reasons;
}

}  // namespace

const std::vector<std::string>& KnownParamNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, info] : ParamTable()) out.push_back(name);
    return out;
  }();
  return names;
}

Target ParseTarget(const std::string& json_text, const std::string& label, const std::string& base_dir) {
  return ParseTargetImpl(json_text, label, base_dir, 0);
}

const std::vector<std::string>& CostOpClassNames() {
  static const std::vector<std::string> names = {"conv_1x1",       "conv_kxk",       "depthwise",
                                                 "fully_connected", "elementwise",    "pooling_resize",
                                                 "data_movement",   "other"};
  return names;
}

const std::vector<std::string>& EthosUCostNames() {
  static const std::vector<std::string> names = {
      "clock_hz",          "ofm_ublock_height",       "ofm_ublock_width",       "ofm_ublock_depth",
      "ifm_block_depth",   "output_cycles_per_element", "output_cycles_add_sub", "output_cycles_mul",
      "output_cycles_max_pool", "activation_cycles_lut", "activation_cycles_relu", "sram_bytes_per_cycle",
      "off_chip_bytes_per_cycle", "feature_maps_off_chip", "sram_cache_bytes", "sram_read_latency_cycles",
      "sram_write_latency_cycles", "off_chip_read_latency_cycles", "off_chip_write_latency_cycles", "arg_max_cycles_per_element", "fuses_channel_scale_shift",
      "sram_burst_bytes", "off_chip_burst_bytes", "shram_banks", "output_cycles_mul_32bit", "output_cycles_32bit_binary",
      "weight_dma_bytes_per_cycle", "chains_elementwise_after_convolution", "sram_channel_bytes_per_cycle", "off_chip_read_channel_bytes_per_cycle",
      "off_chip_write_channel_bytes_per_cycle", "op_overhead_cycles",
      "mac_cycle_scale", "elementwise_cycle_scale"};
  return names;
}

Target LoadTargetFile(const std::string& path) {
  return ParseTargetImpl(ReadText(path), path, fs::path(path).parent_path().string(), 0);
}

std::vector<std::string> ListTargetIds(const std::string& targets_dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  if (!fs::is_directory(targets_dir, ec)) return ids;
  for (const auto& entry : fs::directory_iterator(targets_dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      ids.push_back(entry.path().stem().string());
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Target FindTarget(const std::string& id_or_path, const std::string& targets_dir) {
  const bool looks_like_id = id_or_path.find('/') == std::string::npos &&
                             id_or_path.find('\\') == std::string::npos &&
                             fs::path(id_or_path).extension() != ".json";
  if (looks_like_id && !targets_dir.empty()) {
    const fs::path by_id = fs::path(targets_dir) / (id_or_path + ".json");
    if (fs::exists(by_id)) return LoadTargetFile(by_id.string());
  }
  if (fs::is_regular_file(id_or_path)) return LoadTargetFile(id_or_path);
  std::string ids;
  for (const auto& id : ListTargetIds(targets_dir)) ids += StrCat(ids.empty() ? "" : ", ", id);
  Fail("unknown target '", id_or_path, "': not an id in ", targets_dir.empty() ? "<no targets dir>" : targets_dir,
       " (available: ", ids.empty() ? "none" : ids, ") and not a file");
}

std::vector<std::string> TargetSourceList(const Target& target) {
  std::vector<std::string> list;
  auto add = [&](const TargetSource& source) {
    if (!source.url.empty() && std::find(list.begin(), list.end(), source.url) == list.end()) {
      list.push_back(source.url);
    }
  };
  add(target.partitioning.source);
  add(target.partitioning.cut_after_first_mapped_source);
  for (const auto& layer : target.layers) {
    add(layer.unsupported_op.source);
    for (const auto& rule : layer.rules) add(rule.source);
    for (const auto& entry : layer.ops) {
      add(entry.source);
      for (const auto& rule : entry.rules) add(rule.source);
    }
  }
  return list;
}

int PlaceholderRuleCount(const Target& target) {
  int count = 0;
  for (const auto& layer : target.layers) {
    for (const auto& rule : layer.rules) count += rule.placeholder;
    for (const auto& entry : layer.ops) {
      for (const auto& rule : entry.rules) count += rule.placeholder;
    }
  }
  return count;
}

NodeSupport EvaluateNode(const Target& target, const ModelDef& model, int node_index,
                         const std::string& accelerator_name) {
  DLG_CHECK(!model.subgraphs.empty(), "target ", target.id, ": model has no subgraph");
  const SubgraphDef& graph = model.subgraphs[0];
  DLG_CHECK(node_index >= 0 && static_cast<size_t>(node_index) < graph.operators.size(),
            "target ", target.id, ": node index ", node_index, " out of range (", graph.operators.size(),
            " nodes)");
  const OperatorDef& op = graph.operators[node_index];
  NodeView node{model, graph, op, NodeOpName(model, op)};
  if (op.opcode_index < model.operator_codes.size()) node.version = model.operator_codes[op.opcode_index].version;
  node.feature_level = target.feature_level.value_or(0);
  node.accelerator_named = !accelerator_name.empty();

  NodeSupport support;
  for (const auto& layer : target.layers) {
    support.reasons = EvaluateLayer(node, layer, target.feature_level);
    // A later layer only sees what this one accepted.
    if (!support.reasons.empty()) return support;
  }
  support.supported = true;
  return support;
}

}  // namespace delegato
