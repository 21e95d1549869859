// Accelerator targets: every shipped target file loads and validates, bad files
// are refused with errors naming the file, the JSON path and the problem, the
// condition language behaves as documented on tiny hand-built graphs, and the
// published fallbacks reproduce on the real models.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "core/error.h"
#include "delegate/target.h"
#include "model/model.h"
#include "test_util.h"

namespace delegato {
namespace {

namespace fs = std::filesystem;

using testing::SourceDir;
fs::path TargetsDir() { return SourceDir() / "targets"; }

// /work/shared unless DELEGATO_SHARED_DIR says otherwise: <source dir>/../shared.
using testing::SharedDir;

#define REQUIRE_MODEL(var, name)                                                             \
  const fs::path var = SharedDir() / "models" / (name);                                      \
  if (!fs::exists(var)) GTEST_SKIP() << "shared model not found: " << var                    \
                                     << " (set DELEGATO_SHARED_DIR to run the real-model cases)";

// Runs `body` and returns the delegato::Error message it throws ("" if none).
template <class F>
std::string ErrorOf(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("delegato_target_test_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    std::ofstream(file) << text;
    return file.string();
  }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// ---------------------------------------------------------------------------
// Shipped files

TEST(TargetFiles, EveryShippedTargetLoadsAndValidates) {
  const auto ids = ListTargetIds(TargetsDir().string());
  for (const char* required : {"nnapi-1.2", "nnapi-1.3", "imx8mp-nnapi", "imx8mp-vx", "edgetpu", "ethos-u55", "cpu"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), required), ids.end()) << "missing targets/" << required << ".json";
  }
  for (const auto& id : ids) {
    SCOPED_TRACE(id);
    Target target;
    ASSERT_NO_THROW(target = FindTarget(id, TargetsDir().string()));
    EXPECT_EQ(target.id, id) << "a target's id must match its file name";
    EXPECT_FALSE(target.description.empty());
    ASSERT_FALSE(target.layers.empty());
    std::set<std::string> rule_ids;
    for (const auto& layer : target.layers) {
      EXPECT_FALSE(layer.name.empty());
      auto check_rule = [&](const TargetRule& rule) {
        EXPECT_FALSE(rule.source.url.empty()) << rule.id;
        EXPECT_FALSE(rule.source.says.empty()) << rule.id;
        EXPECT_FALSE(rule.fix.empty()) << rule.id;
        EXPECT_TRUE(rule_ids.insert(layer.name + "/" + rule.id).second) << "duplicate rule id " << rule.id;
      };
      for (const auto& rule : layer.rules) check_rule(rule);
      for (const auto& entry : layer.ops) {
        EXPECT_FALSE(entry.source.url.empty());
        for (const auto& rule : entry.rules) check_rule(rule);
      }
    }
    // Every cost number is sourced or explicitly a placeholder.
    auto check_cost = [](const CostNumber& n) { EXPECT_TRUE(n.placeholder || !n.source.url.empty()); };
    for (const auto& [dtype, n] : target.cost.ops_per_second) check_cost(n);
    if (target.cost.partition_sync_us) check_cost(*target.cost.partition_sync_us);
    if (target.cost.first_inference_compile_ms) check_cost(*target.cost.first_inference_compile_ms);
    // The Ethos-U targets' block model rests on no placeholder.
    for (const auto& [key, n] : target.cost.ethos_u) {
      SCOPED_TRACE(key);
      check_cost(n);
      EXPECT_FALSE(n.placeholder);
    }
    if (target.id.rfind("ethos-u", 0) == 0) EXPECT_EQ(target.cost.ethos_u.size(), EthosUCostNames().size());
  }
}

TEST(TargetFiles, ExtendsInheritsLayersAndOverridesTheFeatureLevel) {
  const Target base = FindTarget("nnapi-1.2", TargetsDir().string());
  const Target newer = FindTarget("nnapi-1.3", TargetsDir().string());
  const Target imx = FindTarget("imx8mp-nnapi", TargetsDir().string());
  EXPECT_EQ(base.feature_level, 29);
  EXPECT_EQ(newer.feature_level, 30);
  ASSERT_EQ(newer.layers.size(), 1u);
  EXPECT_EQ(newer.layers[0].ops.size(), base.layers[0].ops.size());
  ASSERT_EQ(imx.layers.size(), 2u);
  EXPECT_EQ(imx.layers[0].name, "delegate");
  EXPECT_EQ(imx.layers[1].name, "driver");
  EXPECT_EQ(base.partitioning.max_delegated_partitions, 3);
  EXPECT_TRUE(FindTarget("edgetpu", TargetsDir().string()).partitioning.single_cut);
}

TEST(TargetFiles, FindTargetByPathAndUnknownIdListsTheAvailableOnes) {
  const std::string path = (TargetsDir() / "cpu.json").string();
  EXPECT_EQ(FindTarget(path, "").id, "cpu");
  const std::string error = ErrorOf([] { FindTarget("no-such-npu", TargetsDir().string()); });
  EXPECT_NE(error.find("unknown target 'no-such-npu'"), std::string::npos) << error;
  EXPECT_NE(error.find("nnapi-1.2"), std::string::npos) << error;
}

// ---------------------------------------------------------------------------
// Bad files

constexpr const char* kSource = R"("source": {"url": "https://example.com/doc", "says": "a fact"})";

std::string MinimalTarget(const std::string& op_entry) {
  return std::string(R"({"id": "t", "description": "d", "layers": [{"name": "delegate", "description": "d",
    "ops_not_listed": "reject",
    "unsupported_op": {"message": "m", "fix": "f", )") + kSource + R"(},
    "ops": [)" + op_entry + "]}]}";
}

std::string LoadError(const std::string& text) {
  TempDir dir;
  const std::string path = dir.Write("bad.json", text);
  return ErrorOf([&] { LoadTargetFile(path); });
}

TEST(TargetErrors, MalformedJsonNamesTheFile) {
  const std::string error = LoadError("{\"id\": \"t\", ");
  EXPECT_NE(error.find("bad.json"), std::string::npos) << error;
  EXPECT_NE(error.find("malformed JSON"), std::string::npos) << error;
}

TEST(TargetErrors, UnknownPredicateNamesThePathAndTheKnownKinds) {
  const std::string error = LoadError(MinimalTarget(std::string(R"({"op": "CONV_2D", )") + kSource +
      R"(, "rules": [{"id": "r", "require": {"check": "colour", "eq": 1}, "reason": "unsupported_operand_value",
          "message": "m", "fix": "f", )" + kSource + "}]}"));
  EXPECT_NE(error.find("bad.json"), std::string::npos) << error;
  EXPECT_NE(error.find("layers[0].ops[0].rules[0].require.check"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown predicate 'colour'"), std::string::npos) << error;
  EXPECT_NE(error.find("dtype"), std::string::npos) << "lists the known kinds: " << error;
}

TEST(TargetErrors, RuleWithoutSourceIsRefused) {
  const std::string error = LoadError(MinimalTarget(std::string(R"({"op": "CONV_2D", )") + kSource +
      R"(, "rules": [{"id": "r", "require": {"check": "rank", "tensor": "input:0", "le": 4},
          "reason": "unsupported_rank", "message": "m", "fix": "f"}]})"));
  EXPECT_NE(error.find("layers[0].ops[0].rules[0].source"), std::string::npos) << error;
  EXPECT_NE(error.find("every rule needs a public source"), std::string::npos) << error;
}

TEST(TargetErrors, WrongTypesUnknownNamesAndBadShapesAreRefused) {
  struct Case {
    std::string op_entry;
    std::string expected_path;
    std::string expected_problem;
  };
  const std::string s = kSource;
  auto rule_with = [&](const std::string& require) {
    return R"({"op": "CONV_2D", )" + s + R"(, "rules": [{"id": "r", "require": )" + require +
           R"(, "reason": "unsupported_rank", "message": "m", "fix": "f", )" + s + "}]}";
  };
  const std::vector<Case> cases = {
      {R"({"op": "CONV_2D", "max_version": "5", )" + s + "}", "layers[0].ops[0].max_version", "expected a number"},
      {R"({"op": "CONV_3X3", )" + s + "}", "layers[0].ops[0].op", "unknown op 'CONV_3X3'"},
      {R"({"op": "CONV_2D", "colour": 1, )" + s + "}", "layers[0].ops[0].colour", "unknown key"},
      {rule_with(R"({"check": "rank", "tensor": "input:0"})"), "require", "exactly one comparator"},
      {rule_with(R"({"check": "rank", "tensor": "input:0", "le": 4, "ge": 1})"), "require", "exactly one comparator"},
      {rule_with(R"({"check": "dtype", "tensor": "input:0", "eq": "int9"})"), "require.eq", "unknown value 'int9'"},
      {rule_with(R"({"check": "dtype", "tensor": "input:0", "lt": "int8"})"), "require.lt", "compares numbers"},
      {rule_with(R"({"check": "rank", "tensor": "weights", "le": 4})"), "require.tensor", "bad tensor selector"},
      {rule_with(R"({"check": "param", "name": "colour", "eq": 1})"), "require.name", "unknown param 'colour'"},
      {rule_with(R"({"check": "param", "name": "align_corners", "eq": 1})"), "require.eq", "expected true or false"},
      {rule_with(R"({"check": "feature_level", "ge": 30})"), "layers[0]", "sets none"},
      {rule_with(R"({"any": []})"), "require.any", "non-empty list"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.op_entry);
    const std::string error = LoadError(MinimalTarget(c.op_entry));
    EXPECT_NE(error.find(c.expected_path), std::string::npos) << error;
    EXPECT_NE(error.find(c.expected_problem), std::string::npos) << error;
  }
}

TEST(TargetErrors, BadReasonAndMissingFixAndUnknownExtends) {
  const std::string s = kSource;
  std::string error = LoadError(MinimalTarget(R"({"op": "CONV_2D", )" + s +
      R"(, "rules": [{"id": "r", "require": {"check": "rank", "tensor": "input:0", "le": 4},
         "reason": "after_cut", "message": "m", "fix": "f", )" + s + "}]}"));
  EXPECT_NE(error.find("unknown reason 'after_cut'"), std::string::npos) << error;
  error = LoadError(MinimalTarget(R"({"op": "CONV_2D", )" + s +
      R"(, "rules": [{"id": "r", "require": {"check": "rank", "tensor": "input:0", "le": 4},
         "reason": "unsupported_rank", "message": "m", )" + s + "}]}"));
  EXPECT_NE(error.find("layers[0].ops[0].rules[0].fix"), std::string::npos) << error;
  error = LoadError(R"({"id": "t", "description": "d", "extends": "nothing-here"})");
  EXPECT_NE(error.find("extends"), std::string::npos) << error;
  EXPECT_NE(error.find("no target 'nothing-here'"), std::string::npos) << error;
  error = LoadError(R"({"id": "t", "description": "d", "cost": {"partition_sync_us": {"value": 3}}, "layers": []})");
  EXPECT_NE(error.find("cost.partition_sync_us"), std::string::npos) << error;
  EXPECT_NE(error.find("placeholder"), std::string::npos) << error;
}

// Cost numbers that would make every estimate meaningless are refused at load,
// naming the file and the JSON field.
TEST(TargetErrors, NonsenseCostNumbersAreRejected) {
  struct Case {
    std::string cost, path, problem;
  };
  const std::string p = R"("placeholder": true)";
  const std::vector<Case> cases = {
      {R"({"ops_per_second": {"int8": {"value": 0, )" + p + "}}}", "cost.ops_per_second.int8.value", "> 0"},
      {R"({"ops_per_second": {"int8": {"value": -5, )" + p + "}}}", "cost.ops_per_second.int8.value", "> 0"},
      {R"({"ops_per_second": {"int8": {"value": 1e999, )" + p + "}}}", "bad.json", "overflow"},  // JSON has no infinity
      {R"({"partition_sync_us": {"value": -1, )" + p + "}}", "cost.partition_sync_us.value", "negative"},
      {R"({"first_inference_compile_ms": {"value": -3, )" + p + "}}", "cost.first_inference_compile_ms.value",
       "negative"},
      {R"({"ethos_u": {"clock_hz": {"value": 0, )" + p + "}}}", "cost.ethos_u.clock_hz.value", "> 0"},
      {R"({"ethos_u": {"clock_hz": {"value": 5e8, )" + p + "}}}", "cost.ethos_u.ofm_ublock_height", "missing"},
      {R"({"ethos_u": {"macs": {"value": 5e8, )" + p + "}}}", "cost.ethos_u.macs", "unknown Ethos-U cost key"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.cost);
    TempDir dir;
    const std::string file =
        dir.Write("bad.json", R"({"id": "bad", "description": "d", "cost": )" + c.cost + R"(, "layers": []})");
    const std::string error = ErrorOf([&] { LoadTargetFile(file); });
    EXPECT_NE(error.find("bad.json"), std::string::npos) << error;
    EXPECT_NE(error.find(c.path), std::string::npos) << error;
    EXPECT_NE(error.find(c.problem), std::string::npos) << error;
  }
}

// ---------------------------------------------------------------------------
// The engine on hand-built graphs

// input(uint8 or int8 [1,8,8,4]) -> CONV_2D(filter [4,3,3,4] constant, bias) -> output
ModelDef ConvModel(DataType type, bool with_bias, int version = 1) {
  ModelDef model;
  model.buffers.resize(3);
  model.buffers[1].mutable_bytes().assign(4 * 3 * 3 * 4, 1);
  model.buffers[2].mutable_bytes().assign(4 * 4, 0);
  model.operator_codes.push_back({BuiltinOp::kConv2d, "", version});
  SubgraphDef graph;
  auto tensor = [&](const std::string& name, DataType t, std::vector<int32_t> shape, uint32_t buffer) {
    TensorDef def;
    def.name = name;
    def.type = t;
    def.shape = std::move(shape);
    def.buffer = buffer;
    def.quantization.scale = {0.5f};
    def.quantization.zero_point = {0};
    graph.tensors.push_back(def);
    return static_cast<int32_t>(graph.tensors.size() - 1);
  };
  const int32_t in = tensor("in", type, {1, 8, 8, 4}, 0);
  const int32_t filter = tensor("filter", type, {4, 3, 3, 4}, 1);
  const int32_t bias = tensor("bias", DataType::kInt32, {4}, 2);
  const int32_t out = tensor("out", type, {1, 8, 8, 4}, 0);
  OperatorDef op;
  op.inputs = {in, filter, with_bias ? bias : -1};
  op.outputs = {out};
  Conv2DParams params;
  params.dilation_w = 2;
  op.params = params;
  graph.operators.push_back(op);
  graph.inputs = {in};
  graph.outputs = {out};
  model.subgraphs.push_back(graph);
  return model;
}

// One RESIZE_NEAREST_NEIGHBOR, uint8 1x8x8x4 -> 1x16x16x4, constant size.
ModelDef ResizeNearestModel() {
  ModelDef model;
  model.buffers.resize(2);
  const int32_t size[2] = {16, 16};
  model.buffers[1].mutable_bytes().resize(sizeof(size));
  std::memcpy(model.buffers[1].mutable_bytes().data(), size, sizeof(size));
  model.operator_codes.push_back({BuiltinOp::kResizeNearestNeighbor, "", 1});
  SubgraphDef graph;
  auto tensor = [&](const std::string& name, DataType t, std::vector<int32_t> shape, uint32_t buffer) {
    TensorDef def;
    def.name = name;
    def.type = t;
    def.shape = std::move(shape);
    def.buffer = buffer;
    if (t == DataType::kUInt8) {
      def.quantization.scale = {0.5f};
      def.quantization.zero_point = {128};
    }
    graph.tensors.push_back(def);
    return static_cast<int32_t>(graph.tensors.size() - 1);
  };
  const int32_t in = tensor("in", DataType::kUInt8, {1, 8, 8, 4}, 0);
  const int32_t sz = tensor("size", DataType::kInt32, {2}, 1);
  const int32_t out = tensor("out", DataType::kUInt8, {1, 16, 16, 4}, 0);
  OperatorDef op;
  op.inputs = {in, sz};
  op.outputs = {out};
  op.params = ResizeParams{};
  graph.operators.push_back(op);
  graph.inputs = {in};
  graph.outputs = {out};
  model.subgraphs.push_back(graph);
  return model;
}

Target TinyTarget(const std::string& layers) {
  return ParseTarget(R"({"id": "tiny", "description": "d", "feature_level": 29, "layers": )" + layers + "}",
                     "<tiny>", "");
}

std::string Rule(const std::string& id, const std::string& when, const std::string& require,
                 const std::string& reason = "unsupported_operand_value") {
  return R"({"id": ")" + id + "\"" + (when.empty() ? "" : ", \"when\": " + when) + R"(, "require": )" + require +
         R"(, "reason": ")" + reason + R"(", "message": "msg-)" + id + R"(", "fix": "fix-)" + id + "\", " +
         kSource + "}";
}

std::string Layer(const std::string& name, const std::string& policy, const std::string& ops,
                  const std::string& rules) {
  return R"({"name": ")" + name + R"(", "description": "d", "ops_not_listed": ")" + policy + "\", " +
         (policy == "reject" ? std::string(R"("unsupported_op": {"message": "no mapping", "fix": "f", )") + kSource + "}, "
                             : "") +
         R"("ops": )" + ops + R"(, "rules": )" + rules + "}";
}

TEST(TargetEngine, PlaceholderRulesAreMarkedAndNeedANote) {
  const ModelDef model = ConvModel(DataType::kUInt8, true, /*version=*/1);
  const std::string placeholder = R"({"id": "p", "require": {"check": "dtype", "tensor": "input:0", "eq": "int8"},
      "reason": "unsupported_input_type", "message": "no uint8 here", "fix": "f", "placeholder": true,
      "note": "no public source says this"})";
  const Target target = TinyTarget("[" + Layer("delegate", "accept", "[]", "[" + placeholder + "]") + "]");
  EXPECT_EQ(PlaceholderRuleCount(target), 1);
  const NodeSupport s = EvaluateNode(target, model, 0, "");
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_EQ(s.reasons[0].message.rfind(kPlaceholderMark, 0), 0u) << s.reasons[0].message;

  std::string error = ErrorOf([] {
    TinyTarget("[" + Layer("delegate", "accept", "[]", R"([{"id": "p", "require": {"check": "rank", "tensor": "input:0", "le": 4},
        "reason": "unsupported_rank", "message": "m", "fix": "f", "placeholder": true}])") + "]");
  });
  EXPECT_NE(error.find("placeholder rule says why"), std::string::npos) << error;
  error = ErrorOf([] {
    TinyTarget("[" + Layer("delegate", "accept", "[]", R"([{"id": "p", "require": {"check": "rank", "tensor": "input:0", "le": 4},
        "reason": "unsupported_rank", "message": "m", "fix": "f", "placeholder": true, "note": "n", )" +
        std::string(kSource) + "}]") + "]");
  });
  EXPECT_NE(error.find("not a placeholder"), std::string::npos) << error;
}

TEST(TargetFiles, VersionObservedSourcesKnownDifferencesAndTheCutException) {
  const Target t = ParseTarget(R"({"id": "o", "description": "d", "version": "compiler 9",
      "partitioning": {"single_cut": true, "source": {"url": "https://example.com", "says": "s"},
                       "cut_after_first_mapped": {"source": {"observed": "model.tflite -> model_compiled.tflite", "says": "s"}}},
      "known_differences": [{"oracle": "compiler 9", "says": "node 3 differs"}],
      "layers": [{"name": "compiler", "description": "d", "ops_not_listed": "accept"}]})", "<o>", "");
  EXPECT_EQ(t.version, "compiler 9");
  EXPECT_TRUE(t.partitioning.cut_after_first_mapped);
  ASSERT_EQ(t.known_differences.size(), 1u);
  EXPECT_EQ(t.known_differences[0].says, "node 3 differs");
  const auto sources = TargetSourceList(t);
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[1], "observed: model.tflite -> model_compiled.tflite");
  const std::string error = ErrorOf([] {
    ParseTarget(R"({"id": "o", "description": "d",
        "partitioning": {"single_cut": false, "source": {"url": "https://example.com", "says": "s"},
                         "cut_after_first_mapped": {"source": {"url": "https://example.com", "says": "s"}}},
        "layers": [{"name": "c", "description": "d", "ops_not_listed": "accept"}]})", "<o>", "");
  });
  EXPECT_NE(error.find("only meaningful with"), std::string::npos) << error;
}

TEST(TargetFiles, EveryShippedRuleHasASourceOrIsAMarkedPlaceholder) {
  for (const auto& id : ListTargetIds(TargetsDir().string())) {
    const Target target = FindTarget(id, TargetsDir().string());
    for (const auto& layer : target.layers) {
      auto check = [&](const TargetRule& rule) {
        EXPECT_TRUE(rule.placeholder || !rule.source.url.empty()) << id << " rule " << rule.id;
      };
      for (const auto& rule : layer.rules) check(rule);
      for (const auto& entry : layer.ops) {
        EXPECT_FALSE(entry.source.url.empty()) << id << " op " << entry.ops[0];
        for (const auto& rule : entry.rules) check(rule);
      }
    }
  }
}

TEST(TargetEngine, UnlistedOpVersionAndFeatureLevelGates) {
  const ModelDef model = ConvModel(DataType::kUInt8, true, /*version=*/4);
  NodeSupport s = EvaluateNode(TinyTarget("[" + Layer("delegate", "reject", "[]", "[]") + "]"), model, 0, "");
  ASSERT_FALSE(s.supported);
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_EQ(s.reasons[0].code, ReasonCode::kUnsupportedOp);
  EXPECT_EQ(s.reasons[0].layer, "delegate");
  EXPECT_NE(s.reasons[0].message.find("CONV_2D"), std::string::npos);

  const std::string versioned = std::string(R"([{"op": "CONV_2D", "max_version": 3, )") + kSource + "}]";
  s = EvaluateNode(TinyTarget("[" + Layer("delegate", "reject", versioned, "[]") + "]"), model, 0, "");
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_EQ(s.reasons[0].code, ReasonCode::kUnsupportedOpVersion);
  EXPECT_NE(s.reasons[0].message.find("version 4"), std::string::npos) << s.reasons[0].message;

  const std::string gated = std::string(R"([{"op": "CONV_2D", "min_feature_level": 30, )") + kSource + "}]";
  s = EvaluateNode(TinyTarget("[" + Layer("delegate", "reject", gated, "[]") + "]"), model, 0, "");
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_EQ(s.reasons[0].code, ReasonCode::kFeatureLevelTooLow);
  EXPECT_NE(s.reasons[0].message.find("feature level >= 30"), std::string::npos) << s.reasons[0].message;

  s = EvaluateNode(TinyTarget("[" + Layer("delegate", "accept", "[]", "[]") + "]"), model, 0, "");
  EXPECT_TRUE(s.supported);
}

TEST(TargetEngine, RulesReportObservedValuesAndSkipWhatDoesNotApply) {
  const std::string rules = "[" +
      Rule("dtype", "", R"({"check": "dtype", "tensor": "input:0", "in": ["float32", "uint8"]})", "unsupported_input_type") + "," +
      Rule("dilation", "", R"({"check": "param", "name": "dilation_w", "eq": 1})") + "," +
      Rule("kernel", "", R"({"check": "param", "name": "kernel_area", "le": 4})") + "," +
      // Pools only: a CONV_2D has no filter_area, so neither when nor require applies.
      Rule("pool-area", R"({"check": "param", "name": "filter_area", "gt": 0})", R"({"check": "param", "name": "filter_area", "le": 1})") + "," +
      Rule("resize-flag", "", R"({"check": "param", "name": "align_corners", "eq": false})") + "," +
      Rule("bias", "", R"({"check": "present", "tensor": "input:2", "eq": true})") + "," +
      Rule("weights-constant", "", R"({"check": "constant", "tensor": "input:1", "eq": true})", "non_constant_input") + "," +
      Rule("activations-not-int8", "", R"({"check": "dtype", "tensor": "activations", "not_in": ["int8"]})") + "," +
      Rule("fl-gate", "", R"({"any": [{"check": "feature_level", "ge": 1000006}, {"check": "accelerator_named", "eq": true}]})") + "]";
  const Target target = TinyTarget("[" + Layer("delegate", "accept", "[]", rules) + "]");

  const NodeSupport s = EvaluateNode(target, ConvModel(DataType::kInt8, false), 0, "");
  ASSERT_FALSE(s.supported);
  std::map<std::string, const Reason*> by_message;
  for (const auto& r : s.reasons) by_message[r.message.substr(0, r.message.find(' '))] = &r;
  ASSERT_EQ(s.reasons.size(), 6u) << "dtype, dilation, kernel, bias, activations-not-int8, fl-gate";
  EXPECT_EQ(by_message["msg-dtype"]->code, ReasonCode::kUnsupportedInputType);
  EXPECT_NE(by_message["msg-dtype"]->message.find("type of input:0 \"in\" is int8"), std::string::npos)
      << by_message["msg-dtype"]->message;
  EXPECT_NE(by_message["msg-dilation"]->message.find("dilation_w is 2, needs == 1"), std::string::npos);
  EXPECT_NE(by_message["msg-kernel"]->message.find("kernel_area is 9, needs <= 4"), std::string::npos);
  EXPECT_NE(by_message["msg-bias"]->message.find("input:2 present is false"), std::string::npos);
  EXPECT_EQ(by_message["msg-bias"]->fix, "fix-bias");
  EXPECT_NE(by_message["msg-activations-not-int8"]->message.find("input:0 \"in\""), std::string::npos);
  // Whole numbers print in full: NNAPI's feature level 6 is 1000006, not 1.00001e+06.
  EXPECT_NE(by_message["msg-fl-gate"]->message.find("feature level is 29, needs >= 1000006"),
            std::string::npos)
      << by_message["msg-fl-gate"]->message;
  EXPECT_EQ(by_message.count("msg-pool-area"), 0u);
  EXPECT_EQ(by_message.count("msg-resize-flag"), 0u);
  EXPECT_EQ(by_message.count("msg-weights-constant"), 0u);

  // Naming an accelerator satisfies the `any`; uint8 passes the dtype rules.
  const NodeSupport named = EvaluateNode(target, ConvModel(DataType::kUInt8, true), 0, "npu");
  ASSERT_EQ(named.reasons.size(), 2u);  // dilation and kernel remain
}

TEST(TargetEngine, LaterLayersOnlySeeWhatEarlierLayersAccepted) {
  const std::string driver_rule = "[" + Rule("no-int8", "", R"({"check": "dtype", "tensor": "activations", "not_in": ["int8"]})", "driver_rejected") + "]";
  const std::string delegate_rule = "[" + Rule("needs-bias", "", R"({"check": "present", "tensor": "input:2", "eq": true})") + "]";
  const Target target = TinyTarget("[" + Layer("delegate", "accept", "[]", delegate_rule) + "," +
                                   Layer("driver", "accept", "[]", driver_rule) + "]");
  NodeSupport s = EvaluateNode(target, ConvModel(DataType::kInt8, false), 0, "");
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_EQ(s.reasons[0].layer, "delegate");
  s = EvaluateNode(target, ConvModel(DataType::kInt8, true), 0, "");
  ASSERT_EQ(s.reasons.size(), 1u);
  EXPECT_EQ(s.reasons[0].layer, "driver");
  EXPECT_EQ(s.reasons[0].code, ReasonCode::kDriverRejected);
  EXPECT_TRUE(EvaluateNode(target, ConvModel(DataType::kUInt8, true), 0, "").supported);
}

TEST(TargetEngine, NodeIndexOutOfRangeIsAnError) {
  const Target target = TinyTarget("[" + Layer("delegate", "accept", "[]", "[]") + "]");
  const std::string error = ErrorOf([&] { EvaluateNode(target, ConvModel(DataType::kUInt8, true), 5, ""); });
  EXPECT_NE(error.find("node index 5 out of range"), std::string::npos) << error;
}

// ---------------------------------------------------------------------------
// Published cases on the real models

struct NodeResult {
  std::string op;
  NodeSupport support;
};

std::vector<NodeResult> EvaluateModel(const std::string& target_id, const fs::path& model_path,
                                      const std::string& accelerator = "") {
  const Target target = FindTarget(target_id, TargetsDir().string());
  const auto model = ReadModelFile(model_path.string());
  std::vector<NodeResult> results;
  const auto& ops = model->subgraphs[0].operators;
  for (size_t i = 0; i < ops.size(); ++i) {
    results.push_back({model->OpName(ops[i]), EvaluateNode(target, *model, static_cast<int>(i), accelerator)});
  }
  return results;
}

bool HasReason(const NodeSupport& s, ReasonCode code, const std::string& layer, const std::string& text) {
  for (const auto& r : s.reasons) {
    if (r.code == code && r.layer == layer && r.message.find(text) != std::string::npos && !r.fix.empty()) return true;
  }
  return false;
}

std::string Describe(const NodeSupport& s) {
  std::string text;
  for (const auto& r : s.reasons) text += StrCat("[", ReasonCodeName(r.code), " @", r.layer, "] ", r.message, "\n");
  return text;
}

TEST(TargetRealModels, Imx8mpNnapiTakesTheWholeUint8MobileNet) {
  REQUIRE_MODEL(path, "mobilenet_v2_1.0_224_quant.tflite");
  const auto results = EvaluateModel("imx8mp-nnapi", path);
  ASSERT_EQ(results.size(), 66u);
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_TRUE(results[i].support.supported) << "node " << i << " " << results[i].op << ":\n"
                                              << Describe(results[i].support);
  }
}

TEST(TargetRealModels, Imx8mpNnapiDriverRefusesSignedInt8Ops) {
  REQUIRE_MODEL(path, "tf2_mobilenet_v2_1.0_224_ptq.tflite");
  const auto results = EvaluateModel("imx8mp-nnapi", path);
  int refused = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (r.op != "CONV_2D" && r.op != "DEPTHWISE_CONV_2D" && r.op != "ADD") continue;
    SCOPED_TRACE(StrCat("node ", i, " ", r.op));
    EXPECT_FALSE(r.support.supported);
    EXPECT_TRUE(HasReason(r.support, ReasonCode::kDriverRejected, "driver", "TENSOR_QUANT8_ASYMM_SIGNED"))
        << Describe(r.support);
    // The delegate itself accepted it: only the driver layer speaks.
    for (const auto& reason : r.support.reasons) EXPECT_EQ(reason.layer, "driver");
    ++refused;
  }
  EXPECT_EQ(refused, 36 + 17 + 10);
  // QUANTIZE is placed on vsi-npu in the published log.
  for (const auto& r : results) {
    if (r.op == "QUANTIZE") {
      EXPECT_TRUE(r.support.supported) << Describe(r.support);
    }
  }
}

TEST(TargetRealModels, Nnapi12RefusesDeepLabsPoolResizesAndArgMax) {
  REQUIRE_MODEL(path, "deeplabv3_mnv2_dm05_pascal_quant.tflite");
  const auto results = EvaluateModel("nnapi-1.2", path);
  int avgpool = 0, resize = 0, argmax = 0, conv = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    SCOPED_TRACE(StrCat("node ", i, " ", r.op));
    if (r.op == "AVERAGE_POOL_2D") {
      ++avgpool;
      EXPECT_FALSE(r.support.supported);
      EXPECT_TRUE(HasReason(r.support, ReasonCode::kUnsupportedOperandValue, "delegate", "filter_area is 1089, needs <= 256"))
          << Describe(r.support);
    } else if (r.op == "RESIZE_BILINEAR") {
      ++resize;
      EXPECT_FALSE(r.support.supported);
      EXPECT_TRUE(HasReason(r.support, ReasonCode::kUnsupportedOperandValue, "delegate", "align_corners is true"))
          << Describe(r.support);
    } else if (r.op == "ARG_MAX") {
      ++argmax;
      EXPECT_FALSE(r.support.supported);
      EXPECT_TRUE(HasReason(r.support, ReasonCode::kUnsupportedOutputType, "delegate", "output_type is int64"))
          << Describe(r.support);
    } else {
      if (r.op == "CONV_2D" || r.op == "DEPTHWISE_CONV_2D") ++conv;
      EXPECT_TRUE(r.support.supported) << Describe(r.support);
    }
  }
  EXPECT_EQ(avgpool, 1);
  EXPECT_EQ(resize, 3);
  EXPECT_EQ(argmax, 1);
  EXPECT_EQ(conv, 38 + 17);
}

TEST(TargetRealModels, Nnapi12TakesDeepLabsPoolWhenAnAcceleratorIsNamed) {
  REQUIRE_MODEL(path, "deeplabv3_mnv2_dm05_pascal_quant.tflite");
  for (const auto& r : EvaluateModel("nnapi-1.2", path, "neuron-ann")) {
    if (r.op == "AVERAGE_POOL_2D") {
      EXPECT_TRUE(r.support.supported) << Describe(r.support);
    }
  }
}

TEST(TargetRealModels, Nnapi13TakesDeepLabsResizes) {
  REQUIRE_MODEL(path, "deeplabv3_mnv2_dm05_pascal_quant.tflite");
  for (const auto& r : EvaluateModel("nnapi-1.3", path)) {
    if (r.op == "RESIZE_BILINEAR") {
      EXPECT_TRUE(r.support.supported) << Describe(r.support);
    }
    if (r.op == "AVERAGE_POOL_2D" || r.op == "ARG_MAX") {
      EXPECT_FALSE(r.support.supported);
    }
  }
}

TEST(TargetRealModels, VxDelegateTakesInt8AndRefusesInt64Outputs) {
  REQUIRE_MODEL(int8_path, "tf2_mobilenet_v2_1.0_224_ptq.tflite");
  for (const auto& r : EvaluateModel("imx8mp-vx", int8_path)) EXPECT_TRUE(r.support.supported) << r.op << Describe(r.support);
  REQUIRE_MODEL(deeplab, "deeplabv3_mnv2_dm05_pascal_quant.tflite");
  for (const auto& r : EvaluateModel("imx8mp-vx", deeplab)) {
    if (r.op == "ARG_MAX") {
      EXPECT_TRUE(HasReason(r.support, ReasonCode::kUnsupportedOutputType, "delegate", "is int64")) << Describe(r.support);
    } else {
      EXPECT_TRUE(r.support.supported) << r.op << Describe(r.support);
    }
  }
}

TEST(TargetRealModels, VelaRefusesDeepLabsSixteenfoldResize) {
  REQUIRE_MODEL(path, "deeplabv3_mnv2_dm05_pascal_quant.tflite");
  int refused_resizes = 0;
  for (const auto& r : EvaluateModel("ethos-u55", path)) {
    if (r.op == "RESIZE_BILINEAR" && !r.support.supported) {
      ++refused_resizes;
      EXPECT_TRUE(HasReason(r.support, ReasonCode::kUnsupportedShape, "compiler", "resize_factor is 16")) << Describe(r.support);
    }
  }
  EXPECT_EQ(refused_resizes, 1) << "the 1x1 image-pooling upsample and the 2x-class ones map; 33x33 -> 513x513 does not";
}

TEST(TargetRealModels, EdgeTpuRefusesOpsOutsideItsTableAndNon8BitTensors) {
  REQUIRE_MODEL(path, "movenet_single_pose_lightning_ptq.tflite");
  int cast = 0, int32_ops = 0;
  for (const auto& r : EvaluateModel("edgetpu", path)) {
    if (r.op == "CAST") {
      ++cast;
      EXPECT_TRUE(HasReason(r.support, ReasonCode::kUnsupportedOp, "compiler", "CAST")) << Describe(r.support);
    }
    if (HasReason(r.support, ReasonCode::kUnsupportedInputType, "compiler", "unsupported data type")) ++int32_ops;
  }
  EXPECT_EQ(cast, 5);
  EXPECT_GT(int32_ops, 0);
}

TEST(TargetRealModels, EveryTargetEvaluatesEveryNodeOfEverySharedModel) {
  const fs::path dir = SharedDir() / "models";
  if (!fs::exists(dir)) GTEST_SKIP() << "shared models not found: " << dir << " (set DELEGATO_SHARED_DIR)";
  for (const auto& id : ListTargetIds(TargetsDir().string())) {
    const Target target = FindTarget(id, TargetsDir().string());
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".tflite") continue;
      std::shared_ptr<const ModelDef> model;
      try {
        model = ReadModelFile(entry.path().string());
      } catch (const Error&) {
        continue;  // files the reader refuses are covered by the reader's tests
      }
      for (size_t i = 0; i < model->subgraphs[0].operators.size(); ++i) {
        const NodeSupport s = EvaluateNode(target, *model, static_cast<int>(i), "");
        EXPECT_EQ(s.supported, s.reasons.empty()) << id << " " << entry.path().filename() << " node " << i;
        for (const auto& r : s.reasons) EXPECT_FALSE(r.message.empty());
      }
    }
  }
}

TEST(TargetRealModels, CpuTargetClaimsNothing) {
  REQUIRE_MODEL(path, "mobilenet_v2_1.0_224_quant.tflite");
  for (const auto& r : EvaluateModel("cpu", path)) {
    EXPECT_FALSE(r.support.supported);
    ASSERT_EQ(r.support.reasons.size(), 1u);
    EXPECT_EQ(r.support.reasons[0].code, ReasonCode::kUnsupportedOp);
  }
}

TEST(TargetFiles, Vs680NnapiDriverLeavesResizeNearestOnTheCpu) {
  // Seed 001 (SyNAP manual): a RESIZE_NEAREST_NEIGHBOR layer falls back to CPU execution under NNAPI.
  const ModelDef model = ResizeNearestModel();
  const NodeSupport nnapi = EvaluateNode(FindTarget("nnapi-1.3", TargetsDir().string()), model, 0, "");
  EXPECT_TRUE(nnapi.supported) << Describe(nnapi);
  const NodeSupport synap = EvaluateNode(FindTarget("vs680-nnapi", TargetsDir().string()), model, 0, "synap-npu");
  ASSERT_FALSE(synap.supported);
  ASSERT_EQ(synap.reasons.size(), 1u);
  EXPECT_EQ(synap.reasons[0].layer, "driver");
  EXPECT_EQ(synap.reasons[0].code, ReasonCode::kDriverRejected);
  // The timvx delegate maps it (the vx-delegate's op map lists RESIZE_NEAREST_NEIGHBOR).
  const NodeSupport timvx = EvaluateNode(FindTarget("vs680-timvx", TargetsDir().string()), model, 0, "");
  EXPECT_TRUE(timvx.supported) << Describe(timvx);
}

}  // namespace
}  // namespace delegato
