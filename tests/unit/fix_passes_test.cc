// Rewrite passes (src/passes): each on small models built in code, the
// original and the rewritten model run on the same random inputs; then the
// passes on the shared real models against their targets.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "delegate/target.h"
#include "passes/graph_edit.h"
#include "passes/pass.h"
#include "passes/passes.h"
#include "passes/values.h"
#include "test_util.h"
#include "tools/placement.h"

namespace delegato {
namespace {

namespace fs = std::filesystem;
using passes::FindPass;
using passes::PassContext;
using passes::PassResult;
using testing::OpModel;
using testing::Q;
using testing::QPerAxis;

using testing::SourceDir;
using testing::SharedDir;

#define REQUIRE_MODEL(var, name)                                        \
  const fs::path var = SharedDir() / "models" / (name);                 \
  if (!fs::exists(var)) GTEST_SKIP() << "shared model not found: " << var \
                                     << " (set DELEGATO_SHARED_DIR)";

// Runs a model on seeded random inputs; returns every output's real values.
// Inputs of different types between two models carry the same real values
// because both are generated from the first model's input types.
struct Outputs {
  std::vector<std::vector<double>> real;
  std::vector<DataType> types;
};

Outputs RunModel(const ModelDef& model, uint64_t seed, const ModelDef* input_types_from = nullptr) {
  // Through the writer and reader: what users load is what is tested.
  const std::vector<uint8_t> bytes = WriteModel(model);
  auto loaded = ReadModelBuffer(bytes.data(), bytes.size(), "<test>");
  Status status;
  InterpreterOptions options;
  options.kernels = KernelSet::kReference;
  auto interpreter = Interpreter::Create(loaded, options, &status);
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return {};
  status = interpreter->AllocateTensors();
  EXPECT_TRUE(status.ok()) << status.message();
  if (!status.ok()) return {};
  std::mt19937_64 rng(seed);
  std::unique_ptr<Interpreter> reference;
  if (input_types_from) {
    const std::vector<uint8_t> ref_bytes = WriteModel(*input_types_from);
    reference = Interpreter::Create(ReadModelBuffer(ref_bytes.data(), ref_bytes.size()), options, &status);
    EXPECT_TRUE(reference->AllocateTensors().ok());
  }
  for (int i = 0; i < interpreter->num_inputs(); ++i) {
    if (reference) {
      passes::FillRandom(reference->input(i), rng);
      passes::CopyValues(reference->input(i), interpreter->input(i));
    } else {
      passes::FillRandom(interpreter->input(i), rng);
    }
  }
  status = interpreter->Invoke();
  EXPECT_TRUE(status.ok()) << status.message();
  Outputs out;
  for (int o = 0; o < interpreter->num_outputs(); ++o) {
    TensorView v = interpreter->output(o);
    std::vector<double> values(passes::ElementCount(v));
    for (size_t k = 0; k < values.size(); ++k) values[k] = passes::RealValue(v, static_cast<int64_t>(k));
    out.real.push_back(std::move(values));
    out.types.push_back(v.type);
  }
  return out;
}

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

int CountOps(const ModelDef& model, BuiltinOp op) {
  int n = 0;
  for (const auto& o : model.subgraphs[0].operators) n += model.operator_codes[o.opcode_index].builtin == op;
  return n;
}

bool HasActivationOfType(const ModelDef& model, DataType type) {
  const auto& g = model.subgraphs[0];
  for (const auto& t : g.tensors)
    if (t.type == type && (t.buffer == 0 || model.buffers[t.buffer].empty())) return true;
  return false;
}

PassResult RunPass(const std::string& name, ModelDef& model, const PassContext& ctx = {}) {
  const passes::Pass* pass = FindPass(name);
  EXPECT_NE(pass, nullptr) << name;
  return pass->Run(model, ctx);
}

std::string AllText(const PassResult& r) {
  std::string s;
  for (const auto& c : r.changes) {
    s += c.what + "\n";
    for (const auto& d : c.details) s += "  " + d + "\n";
  }
  for (const auto& f : r.findings) s += "- " + f + "\n";
  return s;
}

Target LoadShippedTarget(const std::string& id) { return FindTarget(id, (SourceDir() / "targets").string()); }

// ------------------------------------------------------------ registry

TEST(FixPasses, RegistryNamesMatchTheTargetHints) {
  for (const char* name : {"int8-to-uint8", "uint8-to-int8", "per-tensor-weights", "float-islands",
                           "argmax-int32", "resize-flags", "avgpool-split", "fold-requantize"})
    EXPECT_NE(FindPass(name), nullptr) << name;
  EXPECT_EQ(FindPass("no-such-pass"), nullptr);
}

// ------------------------------------------------------------ argmax-int32

TEST(ArgMaxInt32, OutputBecomesInt32WithTheSameIndices) {
  OpModel m;
  const int in = m.AddInput(DataType::kUInt8, {1, 4, 4, 5}, Q(0.1f, 3));
  const int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {3});
  const int out = m.AddOutput(DataType::kInt64, {}, {1, 4, 4}, "labels");
  m.AddOp(BuiltinOp::kArgMax, {in, axis}, {out}, ArgMinMaxParams{DataType::kInt64});
  ModelDef rewritten = m.model();
  const PassResult r = RunPass("argmax-int32", rewritten);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_TRUE(r.changes[0].exact);
  EXPECT_TRUE(r.changes[0].changes_interface);
  EXPECT_NE(AllText(r).find("CHANGES TYPE: int64 -> int32"), std::string::npos) << AllText(r);
  EXPECT_EQ(rewritten.subgraphs[0].tensors[out].type, DataType::kInt32);
  const Outputs a = RunModel(m.model(), 7), b = RunModel(rewritten, 7);
  EXPECT_EQ(b.types[0], DataType::kInt32);
  EXPECT_EQ(MaxAbsDiff(a.real[0], b.real[0]), 0.0);
}

TEST(ArgMaxInt32, InternalReadersGetACastBackToInt64) {
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {2, 6});
  const int axis = m.AddConst<int32_t>(DataType::kInt32, {}, {1});
  const int idx = m.AddTensor(DataType::kInt64);
  const int out = m.AddOutput(DataType::kInt64);
  const int shape = m.AddConst<int32_t>(DataType::kInt32, {1}, {2});
  m.AddOp(BuiltinOp::kArgMin, {in, axis}, {idx}, ArgMinMaxParams{DataType::kInt64});
  m.AddOp(BuiltinOp::kReshape, {idx, shape}, {out}, ReshapeParams{{2}, true});
  ModelDef rewritten = m.model();
  const PassResult r = RunPass("argmax-int32", rewritten);
  ASSERT_EQ(r.changes.size(), 1u) << AllText(r);
  EXPECT_FALSE(r.changes[0].changes_interface);
  EXPECT_EQ(CountOps(rewritten, BuiltinOp::kCast), 1);
  const Outputs a = RunModel(m.model(), 3), b = RunModel(rewritten, 3);
  EXPECT_EQ(b.types[0], DataType::kInt64);
  EXPECT_EQ(MaxAbsDiff(a.real[0], b.real[0]), 0.0);
}

// ------------------------------------------------------------ resize-flags

ModelDef ResizeModel(DataType type, int in_size, int out_size, bool align, bool half, bool output_is_resize = true) {
  OpModel m;
  const Quantization q = type == DataType::kFloat32 ? Quantization{} : Q(0.05f, type == DataType::kUInt8 ? 128 : 0);
  const int in = m.AddInput(type, {1, in_size, in_size, 3}, q);
  const int size = m.AddConst<int32_t>(DataType::kInt32, {2}, {out_size, out_size});
  const int out = output_is_resize ? m.AddOutput(type, q, {1, out_size, out_size, 3})
                                   : m.AddTensor(type, q, {1, out_size, out_size, 3});
  m.AddOp(BuiltinOp::kResizeBilinear, {in, size}, {out}, ResizeParams{align, half});
  if (!output_is_resize) {
    const int relu = m.AddOutput(type, q, {1, out_size, out_size, 3});
    m.AddOp(BuiltinOp::kMaxPool2d, {out}, {relu}, Pool2DParams{Padding::kSame, 1, 1, 1, 1, Activation::kNone});
  }
  return m.model();
}

TEST(ResizeFlags, AlignCornersBecomesALargerResizePlusCropBitExact) {
  // 5 -> 17 aligned samples y * 4/16; 5 -> 20 unaligned samples y * 5/20: the same.
  for (DataType type : {DataType::kUInt8, DataType::kInt8, DataType::kFloat32}) {
    ModelDef original = ResizeModel(type, 5, 17, true, false);
    ModelDef rewritten = original;
    const PassResult r = RunPass("resize-flags", rewritten);
    ASSERT_EQ(r.changes.size(), 1u) << AllText(r);
    EXPECT_TRUE(r.changes[0].exact) << AllText(r);
    EXPECT_NE(r.changes[0].what.find("5x5 -> 20x20 + STRIDED_SLICE"), std::string::npos) << AllText(r);
    EXPECT_EQ(CountOps(rewritten, BuiltinOp::kStridedSlice), 1);
    const auto* p = std::get_if<ResizeParams>(&rewritten.subgraphs[0].operators[0].params);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(p->align_corners);
    for (uint64_t seed : {1u, 2u}) {
      const Outputs a = RunModel(original, seed), b = RunModel(rewritten, seed);
      EXPECT_EQ(MaxAbsDiff(a.real[0], b.real[0]), 0.0) << DataTypeName(type);
    }
  }
}

TEST(ResizeFlags, SameSizeResizeIsRemoved) {
  ModelDef original = ResizeModel(DataType::kUInt8, 9, 9, true, false, /*output_is_resize=*/false);
  ModelDef rewritten = original;
  const PassResult r = RunPass("resize-flags", rewritten);
  ASSERT_EQ(r.changes.size(), 1u) << AllText(r);
  EXPECT_NE(r.changes[0].what.find("node removed"), std::string::npos);
  EXPECT_EQ(CountOps(rewritten, BuiltinOp::kResizeBilinear), 0);
  const Outputs a = RunModel(original, 4), b = RunModel(rewritten, 4);
  EXPECT_EQ(MaxAbsDiff(a.real[0], b.real[0]), 0.0);
}

TEST(ResizeFlags, NoExactGeometryFlipsTheFlagAndMeasures) {
  // 3 -> 8: 3 * 7 / 2 is not an integer, so no crop reproduces the samples.
  ModelDef original = ResizeModel(DataType::kUInt8, 3, 8, true, false);
  ModelDef rewritten = original;
  const PassResult r = RunPass("resize-flags", rewritten);
  ASSERT_EQ(r.changes.size(), 1u) << AllText(r);
  EXPECT_FALSE(r.changes[0].exact);
  EXPECT_NE(AllText(r).find("numeric change of this op on random inputs"), std::string::npos) << AllText(r);
  const auto* p = std::get_if<ResizeParams>(&rewritten.subgraphs[0].operators[0].params);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->align_corners);
}

TEST(ResizeFlags, OnlyWhatTheTargetRefusesIsTouched) {
  ModelDef model = ResizeModel(DataType::kUInt8, 5, 17, true, false);
  const Target nnapi13 = LoadShippedTarget("nnapi-1.3");  // takes align_corners
  PassContext ctx;
  ctx.target = &nnapi13;
  const PassResult r = RunPass("resize-flags", model, ctx);
  EXPECT_TRUE(r.changes.empty()) << AllText(r);
}

// ------------------------------------------------------------ avgpool-split

ModelDef GlobalPoolModel(DataType type, int size, int channels) {
  OpModel m;
  const Quantization q = type == DataType::kFloat32 ? Quantization{} : Q(0.17f, type == DataType::kUInt8 ? 131 : 3);
  const int in = m.AddInput(type, {1, size, size, channels}, q);
  const int out = m.AddOutput(type, q, {1, 1, 1, channels});
  m.AddOp(BuiltinOp::kAveragePool2d, {in}, {out},
          Pool2DParams{Padding::kValid, size, size, size, size, Activation::kNone});
  return m.model();
}

TEST(AvgPoolSplit, GlobalPoolBecomesMeanOnNnapi12) {
  const Target nnapi12 = LoadShippedTarget("nnapi-1.2");
  for (DataType type : {DataType::kUInt8, DataType::kInt8}) {
    ModelDef original = GlobalPoolModel(type, 33, 8);
    ModelDef rewritten = original;
    PassContext ctx;
    ctx.target = &nnapi12;
    ASSERT_FALSE(ctx.Accepts(original, 0));
    const PassResult r = RunPass("avgpool-split", rewritten, ctx);
    ASSERT_EQ(r.changes.size(), 1u) << AllText(r);
    EXPECT_EQ(CountOps(rewritten, BuiltinOp::kMean), 1) << AllText(r);
    EXPECT_TRUE(ctx.Accepts(rewritten, 0));
    // The exhaustive check is reported: 1089-window sums rounding differently are rare.
    EXPECT_NE(AllText(r).find("possible window sums"), std::string::npos) << AllText(r);
    EXPECT_NE(AllText(r).find("also considered: AVERAGE_POOL_2D"), std::string::npos) << AllText(r);
    for (uint64_t seed : {1u, 2u, 3u}) {
      const Outputs a = RunModel(original, seed), b = RunModel(rewritten, seed);
      EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 0.17 + 1e-6) << "at most one step";
    }
  }
}

TEST(AvgPoolSplit, WindowsWithinTheLimitAreLeftAlone) {
  ModelDef original = GlobalPoolModel(DataType::kUInt8, 16, 3);  // window 256: within NNAPI's limit
  ModelDef rewritten = original;
  EXPECT_TRUE(RunPass("avgpool-split", rewritten).changes.empty());
}

// A target without MEAN and with NNAPI's window limit: the pool becomes two pools.
Target NoMeanTarget() {
  const std::string source = R"("source": {"url": "https://example.com", "says": "test"})";
  const std::string text = std::string(R"({"id": "no-mean", "description": "test", "layers": [{"name": "delegate",
    "description": "d", "ops_not_listed": "reject", "unsupported_op": {"message": "m", "fix": "f", )") + source +
    R"(}, "ops": [{"op": "AVERAGE_POOL_2D", )" + source + R"(, "rules": [{"id": "area",
      "require": {"check": "param", "name": "filter_area", "le": 256}, "reason": "unsupported_operand_value",
      "message": "window too large", "fix": "split", )" + source + "}]}]}]}";
  return ParseTarget(text, "no-mean.json", ".");
}

TEST(AvgPoolSplit, WithoutMeanTheWindowIsSplitIntoTwoPools) {
  const Target target = NoMeanTarget();
  ModelDef original = GlobalPoolModel(DataType::kUInt8, 33, 8);
  ModelDef rewritten = original;
  PassContext ctx;
  ctx.target = &target;
  const PassResult r = RunPass("avgpool-split", rewritten, ctx);
  ASSERT_EQ(r.changes.size(), 1u) << AllText(r);
  EXPECT_EQ(CountOps(rewritten, BuiltinOp::kAveragePool2d), 2);
  EXPECT_NE(AllText(r).find("target refuses"), std::string::npos) << "MEAN refused is reported: " << AllText(r);
  for (int n = 0; n < 2; ++n) EXPECT_TRUE(ctx.Accepts(rewritten, n));
  const Outputs a = RunModel(original, 5), b = RunModel(rewritten, 5);
  EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 0.17 + 1e-6) << "double rounding: at most one step";
}

// ------------------------------------------------------------ int8-to-uint8

// uint8 in -> QUANTIZE int8 -> CONV_2D (per-channel) -> QUANTIZE uint8 out.
ModelDef Int8ConvModel(bool int8_io) {
  OpModel m;
  const int in = int8_io ? m.AddInput(DataType::kInt8, {1, 6, 6, 3}, Q(0.02f, -1), "image")
                         : m.AddInput(DataType::kUInt8, {1, 6, 6, 3}, Q(0.02f, 127), "image");
  const int q_in = int8_io ? in : m.AddTensor(DataType::kInt8, Q(0.02f, -1), {1, 6, 6, 3});
  if (!int8_io) m.AddOp(BuiltinOp::kQuantize, {in}, {q_in}, EmptyParams{});
  std::vector<int8_t> w(4 * 3 * 3 * 3);
  std::mt19937 rng(11);
  for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
  const int weights = m.AddConst<int8_t>(DataType::kInt8, {4, 3, 3, 3}, w,
                                         QPerAxis({0.01f, 0.004f, 0.02f, 0.012f}, {0, 0, 0, 0}, 0));
  const int bias = m.AddConst<int32_t>(DataType::kInt32, {4}, {100, -50, 20, 0},
                                       QPerAxis({0.0002f, 0.00008f, 0.0004f, 0.00024f}, {0, 0, 0, 0}, 0));
  const int conv = int8_io ? m.AddOutput(DataType::kInt8, Q(0.05f, -10), {1, 6, 6, 4}, "result")
                           : m.AddTensor(DataType::kInt8, Q(0.05f, -10), {1, 6, 6, 4});
  m.AddOp(BuiltinOp::kConv2d, {q_in, weights, bias}, {conv},
          Conv2DParams{Padding::kSame, 1, 1, 1, 1, Activation::kNone}, 3);
  if (!int8_io) {
    const int out = m.AddOutput(DataType::kUInt8, Q(0.05f, 118), {1, 6, 6, 4}, "result");
    m.AddOp(BuiltinOp::kQuantize, {conv}, {out}, EmptyParams{});
  }
  return m.model();
}

TEST(Int8ToUint8, ActivationsShiftWeightsGoPerTensorIdentityQuantizesGo) {
  ModelDef original = Int8ConvModel(false);
  ModelDef rewritten = original;
  PassContext ctx;
  ctx.max_groups = 1;  // plain per-tensor weights
  const PassResult r = RunPass("int8-to-uint8", rewritten, ctx);
  const std::string text = AllText(r);
  EXPECT_FALSE(HasActivationOfType(rewritten, DataType::kInt8)) << text;
  EXPECT_EQ(CountOps(rewritten, BuiltinOp::kQuantize), 0) << "both QUANTIZE nodes became identities: " << text;
  EXPECT_NE(text.find("-> uint8 per-tensor scale"), std::string::npos) << text;
  EXPECT_NE(text.find("weight error max"), std::string::npos) << "error reported per layer: " << text;
  const auto& g = rewritten.subgraphs[0];
  EXPECT_EQ(g.tensors[g.inputs[0]].name, "image");
  EXPECT_EQ(g.tensors[g.outputs[0]].name, "result");
  const Outputs a = RunModel(original, 9), b = RunModel(rewritten, 9);
  EXPECT_EQ(b.types[0], DataType::kUInt8);
  EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 4 * 0.05) << "a few output steps at most";
}

TEST(Int8ToUint8, UserIoTypesAreKeptUnlessModelTypesAreAsked) {
  ModelDef original = Int8ConvModel(true);
  {
    ModelDef rewritten = original;
    const PassResult r = RunPass("int8-to-uint8", rewritten);
    const auto& g = rewritten.subgraphs[0];
    EXPECT_EQ(g.tensors[g.inputs[0]].type, DataType::kInt8);
    EXPECT_EQ(g.tensors[g.outputs[0]].type, DataType::kInt8);
    EXPECT_EQ(g.tensors[g.inputs[0]].name, "image");
    EXPECT_EQ(CountOps(rewritten, BuiltinOp::kQuantize), 2) << AllText(r);
    const Outputs a = RunModel(original, 2), b = RunModel(rewritten, 2);
    EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 4 * 0.05);
  }
  {
    ModelDef rewritten = original;
    PassContext ctx;
    ctx.io_types = passes::IoTypes::kModel;
    const PassResult r = RunPass("int8-to-uint8", rewritten, ctx);
    const auto& g = rewritten.subgraphs[0];
    EXPECT_EQ(g.tensors[g.inputs[0]].type, DataType::kUInt8);
    EXPECT_EQ(g.tensors[g.outputs[0]].type, DataType::kUInt8);
    EXPECT_EQ(CountOps(rewritten, BuiltinOp::kQuantize), 0);
    bool said = false;
    for (const auto& c : r.changes) said |= c.changes_interface;
    EXPECT_TRUE(said) << AllText(r);
    const Outputs a = RunModel(original, 2), b = RunModel(rewritten, 2, &original);
    EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 4 * 0.05);
  }
}

// expand CONV -> DEPTHWISE -> project CONV with per-channel scales far apart.
ModelDef InvertedResidual() {
  OpModel m;
  const int in = m.AddInput(DataType::kInt8, {1, 5, 5, 4}, Q(0.03f, 0));
  const int c = 6;
  std::mt19937 rng(5);
  auto weights = [&](size_t n) {
    std::vector<int8_t> w(n);
    for (auto& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    return w;
  };
  const std::vector<float> p_scales = {0.01f, 0.0002f, 0.008f, 0.0005f, 0.012f, 0.003f};
  const std::vector<float> d_scales = {0.002f, 0.2f, 0.004f, 0.15f, 0.001f, 0.05f};
  std::vector<float> pb_scales, db_scales;
  for (float s : p_scales) pb_scales.push_back(0.03f * s);
  for (float s : d_scales) db_scales.push_back(0.04f * s);
  const std::vector<int64_t> zeros(c, 0);
  const int pw = m.AddConst<int8_t>(DataType::kInt8, {c, 1, 1, 4}, weights(c * 4), QPerAxis(p_scales, zeros, 0));
  const int pb = m.AddConst<int32_t>(DataType::kInt32, {c}, {10, -5, 3, 0, 7, -2}, QPerAxis(pb_scales, zeros, 0));
  const int mid = m.AddTensor(DataType::kInt8, Q(0.04f, -128), {1, 5, 5, c});
  m.AddOp(BuiltinOp::kConv2d, {in, pw, pb}, {mid}, Conv2DParams{Padding::kSame, 1, 1, 1, 1, Activation::kRelu6}, 3);
  const int dw = m.AddConst<int8_t>(DataType::kInt8, {1, 3, 3, c}, weights(9 * c), QPerAxis(d_scales, zeros, 3));
  const int db = m.AddConst<int32_t>(DataType::kInt32, {c}, {1, 2, 3, 4, 5, 6}, QPerAxis(db_scales, zeros, 0));
  const int dout = m.AddTensor(DataType::kInt8, Q(0.05f, -128), {1, 5, 5, c});
  DepthwiseConv2DParams dp{Padding::kSame, 1, 1, 1, 1, 1, Activation::kRelu6};
  m.AddOp(BuiltinOp::kDepthwiseConv2d, {mid, dw, db}, {dout}, dp, 3);
  const int qw = m.AddConst<int8_t>(DataType::kInt8, {3, 1, 1, c}, weights(3 * c),
                                    QPerAxis({0.01f, 0.011f, 0.009f}, {0, 0, 0}, 0));
  const int qb = m.AddConst<int32_t>(DataType::kInt32, {3}, {0, 0, 0},
                                     QPerAxis({0.0005f, 0.00055f, 0.00045f}, {0, 0, 0}, 0));
  const int out = m.AddOutput(DataType::kInt8, Q(0.06f, 2), {1, 5, 5, 3});
  m.AddOp(BuiltinOp::kConv2d, {dout, qw, qb}, {out}, Conv2DParams{Padding::kSame, 1, 1, 1, 1, Activation::kNone}, 3);
  return m.model();
}

TEST(Int8ToUint8, ChannelGroupsKeepSpreadScalesApart) {
  ModelDef original = InvertedResidual();
  ModelDef grouped = original, plain = original;
  const PassResult r = RunPass("int8-to-uint8", grouped);
  EXPECT_NE(AllText(r).find("reordered by scale and split into"), std::string::npos) << AllText(r);
  EXPECT_GE(CountOps(grouped, BuiltinOp::kDepthwiseConv2d), 2);
  EXPECT_EQ(CountOps(grouped, BuiltinOp::kConcatenation), 1);
  PassContext off;
  off.max_groups = 1;
  RunPass("int8-to-uint8", plain, off);
  EXPECT_EQ(CountOps(plain, BuiltinOp::kDepthwiseConv2d), 1);
  double grouped_error = 0, plain_error = 0;
  for (uint64_t seed : {1u, 2u, 3u}) {
    const Outputs a = RunModel(original, seed);
    grouped_error += MaxAbsDiff(a.real[0], RunModel(grouped, seed).real[0]);
    plain_error += MaxAbsDiff(a.real[0], RunModel(plain, seed).real[0]);
  }
  EXPECT_LT(grouped_error, plain_error) << "groups of similar scales lose less than one scale for all";
}

// ------------------------------------------------------------ uint8-to-int8

TEST(Uint8ToInt8, AsymmetricWeightsBecomeSymmetricPerChannel) {
  OpModel m;
  const int in = m.AddInput(DataType::kUInt8, {1, 4, 4, 2}, Q(0.02f, 128));
  std::vector<uint8_t> w(3 * 2 * 2 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(40 + 17 * i % 200);
  const int weights = m.AddConst<uint8_t>(DataType::kUInt8, {3, 2, 2, 2}, w, Q(0.01f, 120));
  const int bias = m.AddConst<int32_t>(DataType::kInt32, {3}, {50, -20, 0}, Q(0.0002f, 0));
  const int out = m.AddOutput(DataType::kUInt8, Q(0.04f, 100), {1, 4, 4, 3});
  m.AddOp(BuiltinOp::kConv2d, {in, weights, bias}, {out}, Conv2DParams{Padding::kSame, 1, 1, 1, 1, Activation::kNone});
  ModelDef rewritten = m.model();
  const PassResult r = RunPass("uint8-to-int8", rewritten);
  EXPECT_NE(AllText(r).find("int8 symmetric per-channel"), std::string::npos) << AllText(r);
  const auto& g = rewritten.subgraphs[0];
  const auto& conv = g.operators[g.operators.size() > 1 ? 1 : 0];
  const TensorDef& wt = g.tensors[conv.inputs[1]];
  EXPECT_EQ(wt.type, DataType::kInt8);
  for (int64_t zp : wt.quantization.zero_point) EXPECT_EQ(zp, 0);
  EXPECT_EQ(g.tensors[g.inputs[0]].type, DataType::kUInt8) << "the user's input type is kept";
  const Outputs a = RunModel(m.model(), 6), b = RunModel(rewritten, 6);
  EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 2 * 0.04);
}

// ------------------------------------------------------------ float-islands

TEST(FloatIslands, OneOpIslandsBecomeIntegerOthersAreReported) {
  OpModel m;
  const int in = m.AddInput(DataType::kInt8, {1, 8}, Q(0.05f, -3));
  const int f = m.AddTensor(DataType::kFloat32, {}, {1, 8});
  m.AddOp(BuiltinOp::kDequantize, {in}, {f});
  const int c = m.AddConst<float>(DataType::kFloat32, {8}, {0.5f, -1, 2, 0.25f, 1, -0.5f, 0, 3});
  const int sum = m.AddTensor(DataType::kFloat32, {}, {1, 8});
  m.AddOp(BuiltinOp::kAdd, {f, c}, {sum}, ElementwiseParams{});
  const int q = m.AddTensor(DataType::kInt8, Q(0.08f, -20), {1, 8});
  m.AddOp(BuiltinOp::kQuantize, {sum}, {q}, EmptyParams{});
  // A second island whose op has no integer kernel.
  const int f2 = m.AddTensor(DataType::kFloat32, {}, {1, 8});
  m.AddOp(BuiltinOp::kDequantize, {q}, {f2});
  const int root = m.AddTensor(DataType::kFloat32, {}, {1, 8});
  m.AddOp(BuiltinOp::kSqrt, {f2}, {root});
  const int out = m.AddOutput(DataType::kInt8, Q(0.02f, -128), {1, 8});
  m.AddOp(BuiltinOp::kQuantize, {root}, {out}, EmptyParams{});
  ModelDef rewritten = m.model();
  EXPECT_TRUE(passes::HasFloatIslands(rewritten));
  const PassResult r = RunPass("float-islands", rewritten);
  const std::string text = AllText(r);
  ASSERT_EQ(r.changes.size(), 1u) << text;
  EXPECT_NE(r.changes[0].what.find("-> int8 ADD"), std::string::npos) << text;
  EXPECT_NE(text.find("SQRT has no int8 kernel"), std::string::npos) << text;
  EXPECT_EQ(CountOps(rewritten, BuiltinOp::kAdd), 1);
  EXPECT_EQ(CountOps(rewritten, BuiltinOp::kDequantize), 1) << "only the SQRT island's stays";
  const Outputs a = RunModel(m.model(), 8), b = RunModel(rewritten, 8);
  EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 0.1);
}

TEST(FloatIslands, FloatConvolutionGetsQuantizedWeights) {
  // Seed 003: CONV_2D left float between DEQUANTIZE and QUANTIZE.
  OpModel m;
  const int in = m.AddInput(DataType::kInt8, {1, 5, 5, 2}, Q(0.02f, 0));
  const int f = m.AddTensor(DataType::kFloat32, {}, {1, 5, 5, 2});
  m.AddOp(BuiltinOp::kDequantize, {in}, {f});
  std::vector<float> w(3 * 3 * 3 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(static_cast<float>(i)) * (i % 3 == 0 ? 0.1f : 0.5f);
  const int weights = m.AddConst<float>(DataType::kFloat32, {3, 3, 3, 2}, w);
  const int bias = m.AddConst<float>(DataType::kFloat32, {3}, {0.1f, -0.2f, 0.05f});
  const int conv = m.AddTensor(DataType::kFloat32, {}, {1, 5, 5, 3});
  m.AddOp(BuiltinOp::kConv2d, {f, weights, bias}, {conv}, Conv2DParams{Padding::kSame, 1, 1, 1, 1, Activation::kNone});
  const int out = m.AddOutput(DataType::kInt8, Q(0.03f, 1), {1, 5, 5, 3});
  m.AddOp(BuiltinOp::kQuantize, {conv}, {out}, EmptyParams{});
  ModelDef rewritten = m.model();
  const PassResult r = RunPass("float-islands", rewritten);
  ASSERT_EQ(r.changes.size(), 1u) << AllText(r);
  EXPECT_NE(AllText(r).find("float -> int8 per-channel"), std::string::npos) << AllText(r);
  EXPECT_FALSE(HasActivationOfType(rewritten, DataType::kFloat32));
  EXPECT_EQ(rewritten.subgraphs[0].operators.size(), 1u);
  const Outputs a = RunModel(m.model(), 3), b = RunModel(rewritten, 3);
  EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 3 * 0.03);
}

// ------------------------------------------------------------ fold-requantize

TEST(FoldRequantize, IdentitiesAndExactPairsFold) {
  OpModel m;
  const int in = m.AddInput(DataType::kUInt8, {1, 16}, Q(0.1f, 128));
  const int same = m.AddTensor(DataType::kUInt8, Q(0.1f, 128), {1, 16});
  m.AddOp(BuiltinOp::kQuantize, {in}, {same}, EmptyParams{});  // identity
  const int f = m.AddTensor(DataType::kFloat32, {}, {1, 16});
  m.AddOp(BuiltinOp::kDequantize, {same}, {f});
  const int back = m.AddTensor(DataType::kUInt8, Q(0.1f, 128), {1, 16});
  m.AddOp(BuiltinOp::kQuantize, {f}, {back}, EmptyParams{});  // there and back
  const int out = m.AddOutput(DataType::kUInt8, Q(0.1f, 128), {1, 16});
  const int shape = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 16});
  m.AddOp(BuiltinOp::kReshape, {back, shape}, {out}, ReshapeParams{{1, 16}, true});
  ModelDef rewritten = m.model();
  const PassResult r = RunPass("fold-requantize", rewritten);
  EXPECT_EQ(rewritten.subgraphs[0].operators.size(), 1u) << AllText(r);
  for (const auto& c : r.changes) EXPECT_TRUE(c.exact);
  const Outputs a = RunModel(m.model(), 1), b = RunModel(rewritten, 1);
  EXPECT_EQ(MaxAbsDiff(a.real[0], b.real[0]), 0.0);
}

// ------------------------------------------------------------ graph editing

TEST(GraphEditor, CompactDropsUnusedTensorsBuffersAndCodes) {
  ModelDef model = ResizeModel(DataType::kUInt8, 4, 8, false, false);
  passes::GraphEditor g(model);
  g.AddConstantOf<int32_t>("unused", DataType::kInt32, {1}, {5});
  g.Opcode(BuiltinOp::kMean, 1);
  const size_t tensors = model.subgraphs[0].tensors.size() - 1, buffers = model.buffers.size() - 1;
  g.Compact();
  EXPECT_EQ(model.subgraphs[0].tensors.size(), tensors);
  EXPECT_EQ(model.buffers.size(), buffers);
  EXPECT_EQ(model.operator_codes.size(), 1u);
  const Outputs a = RunModel(ResizeModel(DataType::kUInt8, 4, 8, false, false), 1), b = RunModel(model, 1);
  EXPECT_EQ(MaxAbsDiff(a.real[0], b.real[0]), 0.0);
}

// ------------------------------------------------------------ shared models

TEST(SharedModels, DeepLabOnNnapi12BecomesOnePartitionWithTheSameLabels) {
  REQUIRE_MODEL(path, "deeplabv3_mnv2_dm05_pascal_quant.tflite");
  auto original = ReadModelFile(path.string());
  const tools::Placement before = tools::PlaceModel(*original, "nnapi-1.2", {});
  EXPECT_LT(before.plan.num_delegated_nodes, static_cast<int>(original->subgraphs[0].operators.size()));
  ModelDef model = *original;
  PassContext ctx;
  ctx.target = &before.target;
  for (const char* name : {"argmax-int32", "resize-flags", "avgpool-split"}) {
    const PassResult r = RunPass(name, model, ctx);
    EXPECT_TRUE(r.changed()) << name;
  }
  const tools::Placement after = tools::PlaceModel(model, "nnapi-1.2", {});
  EXPECT_EQ(after.plan.num_delegated_nodes, static_cast<int>(model.subgraphs[0].operators.size()));
  EXPECT_EQ(after.plan.num_partitions(), 1);
  const Outputs a = RunModel(*original, 1), b = RunModel(model, 1);
  size_t equal = 0;
  for (size_t i = 0; i < a.real[0].size(); ++i) equal += a.real[0][i] == b.real[0][i];
  EXPECT_GE(static_cast<double>(equal) / a.real[0].size(), 0.99);
}

TEST(SharedModels, Tf2MobileNetOnImx8mpNnapiGetsEveryConvOnTheNpu) {
  REQUIRE_MODEL(path, "tf2_mobilenet_v2_1.0_224_ptq.tflite");
  auto original = ReadModelFile(path.string());
  const tools::Placement before = tools::PlaceModel(*original, "imx8mp-nnapi", {});
  auto conv_share = [](const ModelDef& m, const tools::Placement& p) {
    int total = 0, npu = 0;
    for (size_t i = 0; i < m.subgraphs[0].operators.size(); ++i)
      if (m.operator_codes[m.subgraphs[0].operators[i].opcode_index].builtin == BuiltinOp::kConv2d) {
        ++total;
        npu += p.plan.nodes[i].delegated;
      }
    return total ? static_cast<double>(npu) / total : 0.0;
  };
  EXPECT_EQ(conv_share(*original, before), 0.0);
  ModelDef model = *original;
  PassContext ctx;
  ctx.target = &before.target;
  RunPass("int8-to-uint8", model, ctx);
  const tools::Placement after = tools::PlaceModel(model, "imx8mp-nnapi", {});
  EXPECT_EQ(conv_share(model, after), 1.0);
  EXPECT_EQ(after.plan.num_partitions(), 1);
  const Outputs a = RunModel(*original, 2), b = RunModel(model, 2);
  EXPECT_LE(MaxAbsDiff(a.real[0], b.real[0]), 0.25) << "softmax scores on random input";
}

TEST(SharedModels, MoveNetFloatIslandsAreFoundAndExplained) {
  REQUIRE_MODEL(path, "movenet_single_pose_lightning_ptq.tflite");
  ModelDef model = *ReadModelFile(path.string());
  EXPECT_TRUE(passes::HasFloatIslands(model));
  const Target nnapi13 = LoadShippedTarget("nnapi-1.3");
  PassContext ctx;
  ctx.target = &nnapi13;
  const PassResult r = RunPass("float-islands", model, ctx);
  const std::string text = AllText(r);
  EXPECT_NE(text.find("SQRT has no int8 kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("DIV"), std::string::npos) << text;
  EXPECT_NE(text.find("CAST"), std::string::npos) << "integer -> float -> quantized pairs: " << text;
}

}  // namespace
}  // namespace delegato
