// An 8-bit ADD/SUB/MUL by a constant per-channel operand right after another
// (a batch norm's scale then shift) runs as one composed table with the
// optimized kernels, and so does MUL(x, LOGISTIC(x)) (swish): results must
// equal the reference kernels' bit for bit, and the fold must happen exactly
// where it is sound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/optimized/float_activations.h"
#include "kernels/optimized/quant_binary.h"
#include "kernels/quantization.h"
#include "kernels/reference/activations.h"
#include "test_util.h"

namespace delegato {
namespace {

using optimized::Isa;
using optimized::QuantBinary;
using testing::OpModel;
using testing::Q;

struct ChainCase {
  DataType type = DataType::kInt8;
  BuiltinOp first = BuiltinOp::kMul, second = BuiltinOp::kAdd;
  int channels = 16;
  bool first_scalar = false, second_scalar = false;  // constants of one value
  bool first_constant_left = false, second_constant_left = false;
  bool second_reader = false;     // the middle tensor is also a graph output
  bool variable_operand = false;  // the second node's other input is a graph input
  bool expect_fused() const { return !second_reader && !variable_operand; }
  std::string Describe() const {
    return std::string(DataTypeName(type)) + " " + std::to_string(static_cast<int>(first)) + "->" +
           std::to_string(static_cast<int>(second)) + " C=" + std::to_string(channels) +
           (first_scalar ? " first scalar" : "") + (second_scalar ? " second scalar" : "") +
           (first_constant_left ? " first const left" : "") +
           (second_constant_left ? " second const left" : "") +
           (second_reader ? " second reader" : "") + (variable_operand ? " variable operand" : "");
  }
};

constexpr int kH = 5, kW = 7;

std::vector<uint8_t> Bytes(std::mt19937& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Output 0's bytes with `kernels`; *fused_into: node 0's NodeView::fused_into.
std::vector<uint8_t> Run(const ChainCase& c, KernelSet kernels, int threads, int* fused_into) {
  std::mt19937 rng(static_cast<unsigned>(c.channels * 31 + static_cast<int>(c.first) * 7 +
                                         static_cast<int>(c.second)));
  const int zp = c.type == DataType::kUInt8 ? 128 : 0;
  OpModel m;
  const int x = m.AddInput(c.type, {1, kH, kW, c.channels}, Q(0.05f, zp - 3), "x");
  const int n1 = c.first_scalar ? 1 : c.channels, n2 = c.second_scalar ? 1 : c.channels;
  const int k1 = m.AddConstBytes(c.type, {n1}, Bytes(rng, n1), Q(0.02f, zp + 7));
  const int mid = c.second_reader ? m.AddOutput(c.type, Q(0.04f, zp - 5), {}, "mid")
                                  : m.AddTensor(c.type, Q(0.04f, zp - 5));
  const int k2 = c.variable_operand
                     ? m.AddInput(c.type, {n2}, Q(0.03f, zp + 2), "k2")
                     : m.AddConstBytes(c.type, {n2}, Bytes(rng, n2), Q(0.03f, zp + 2));
  const int out = m.AddOutput(c.type, Q(0.06f, zp + 1), {}, "out");
  ElementwiseParams relu;
  relu.activation = Activation::kRelu;
  m.AddOp(c.first, c.first_constant_left ? std::vector<int>{k1, x} : std::vector<int>{x, k1},
          {mid}, ElementwiseParams{});
  m.AddOp(c.second, c.second_constant_left ? std::vector<int>{k2, mid} : std::vector<int>{mid, k2},
          {out}, relu);
  m.Build(threads, kernels);
  if (::testing::Test::HasFailure()) return {};
  for (int round = 0; round < 2; ++round) {
    m.SetInput<uint8_t>(0, Bytes(rng, static_cast<size_t>(kH) * kW * c.channels));
    if (c.variable_operand) m.SetInput<uint8_t>(1, Bytes(rng, n2));
    m.Invoke();
  }
  *fused_into = m.interpreter().node(0).fused_into;
  return m.GetOutput<uint8_t>(0);
}

void Check(const ChainCase& c) {
  int ref_fused = -2, fused = -2;
  const std::vector<uint8_t> want = Run(c, KernelSet::kReference, 1, &ref_fused);
  EXPECT_EQ(ref_fused, -1) << c.Describe();
  const bool vector_isa = optimized::BestIsa() == Isa::kAvx2 || optimized::BestIsa() == Isa::kAvx512Vnni;
  for (int threads : {1, 2}) {
    EXPECT_EQ(want, Run(c, KernelSet::kOptimized, threads, &fused)) << c.Describe();
    EXPECT_EQ(fused, c.expect_fused() && vector_isa ? 1 : -1) << c.Describe();
  }
}

TEST(TableFusion, ComposedTablesGiveTheReferenceResults) {
  const BuiltinOp ops[] = {BuiltinOp::kMul, BuiltinOp::kAdd, BuiltinOp::kSub};
  int trial = 0;
  for (DataType type : {DataType::kInt8, DataType::kUInt8})
    for (int channels : {1, 16, 24, 40, 64})
      for (BuiltinOp first : ops)
        for (BuiltinOp second : ops) {
          ChainCase c;
          c.type = type;
          c.channels = channels;
          c.first = first;
          c.second = second;
          c.first_scalar = trial % 5 == 1;
          c.second_scalar = trial % 7 == 2;
          c.first_constant_left = trial % 3 == 0;
          c.second_constant_left = trial % 4 == 1;
          ++trial;
          Check(c);
          if (::testing::Test::HasFailure()) return;
        }
}

TEST(TableFusion, NotFoldedWhereItWouldChangeResults) {
  for (DataType type : {DataType::kInt8, DataType::kUInt8}) {
    ChainCase c;
    c.type = type;
    c.second_reader = true;
    Check(c);
    c.second_reader = false;
    c.variable_operand = true;
    Check(c);
  }
}

TEST(TableFusion, ChainsFoldPairwise) {
  // x -> MUL -> ADD -> MUL: the ADD takes in the first MUL; the last MUL
  // must not take in the ADD (whose input, the first MUL's output, is never
  // written) and runs on its own.
  const Isa isa = optimized::BestIsa();
  const bool vector_isa = isa == Isa::kAvx2 || isa == Isa::kAvx512Vnni;
  std::mt19937 rng(13);
  const auto run = [&](KernelSet kernels, std::vector<int>* fused_into) {
    OpModel m;
    const int x = m.AddInput(DataType::kInt8, {1, 3, 4, 24}, Q(0.05f, -3), "x");
    int prev = x;
    const BuiltinOp ops[] = {BuiltinOp::kMul, BuiltinOp::kAdd, BuiltinOp::kMul};
    std::mt19937 weights(21);
    for (int i = 0; i < 3; ++i) {
      const int k = m.AddConstBytes(DataType::kInt8, {24}, Bytes(weights, 24), Q(0.02f, 4 - i));
      const int out = i == 2 ? m.AddOutput(DataType::kInt8, Q(0.07f, 1), {}, "out")
                             : m.AddTensor(DataType::kInt8, Q(0.04f + 0.01f * i, -5 + i));
      m.AddOp(ops[i], {prev, k}, {out}, ElementwiseParams{});
      prev = out;
    }
    m.Build(1, kernels);
    m.SetInput<uint8_t>(0, Bytes(rng, 3 * 4 * 24));
    m.Invoke();
    for (int n = 0; n < 3; ++n) fused_into->push_back(m.interpreter().node(n).fused_into);
    return m.GetOutput<uint8_t>(0);
  };
  std::vector<int> ref_fused, fused;
  rng.seed(13);
  const std::vector<uint8_t> want = run(KernelSet::kReference, &ref_fused);
  rng.seed(13);
  EXPECT_EQ(want, run(KernelSet::kOptimized, &fused));
  EXPECT_EQ(fused, (vector_isa ? std::vector<int>{1, -1, -1} : std::vector<int>{-1, -1, -1}));
}

TEST(TableFusion, ComposeAfterRefusesLongPeriods) {
  // Periods 48 and 40 over 240 elements: their least common multiple (240)
  // is past kMaxConstantPeriod; 16 and 24 compose (48) and equal the two
  // kernels applied in turn.
  const Isa isa = optimized::BestIsa();
  if (isa != Isa::kAvx2 && isa != Isa::kAvx512Vnni) GTEST_SKIP() << "no x86 vector ISA";
  std::mt19937 rng(9);
  reference::QuantizedAddParams add;
  reference::QuantizedMulDivParams mul;
  mul.input1_offset = 3;
  mul.input2_offset = -7;
  mul.output_offset = 2;
  mul.act_min = -128;
  mul.act_max = 127;
  quant::QuantizeMultiplier(0.37, &mul.output_multiplier, &mul.output_shift);
  const auto make = [&](int64_t period, const std::vector<uint8_t>& constant) {
    auto k = std::make_unique<QuantBinary>(QuantBinary::Kind::kMul, false, add, mul, isa);
    const reference::BroadcastPlan plan =
        reference::MakeBroadcastPlan({static_cast<int32_t>(240 / period), static_cast<int32_t>(period)},
                                     {static_cast<int32_t>(period)},
                                     {static_cast<int32_t>(240 / period), static_cast<int32_t>(period)});
    EXPECT_TRUE(k->TabulateConstant(plan, constant.data(), false));
    return std::make_pair(std::move(k), plan);
  };
  const std::vector<uint8_t> c48 = Bytes(rng, 48), c40 = Bytes(rng, 40), c16 = Bytes(rng, 16),
                             c24 = Bytes(rng, 24);
  auto [k48, p48] = make(48, c48);
  auto [k40, p40] = make(40, c40);
  EXPECT_FALSE(k40->ComposeAfter(*k48));
  auto [k16, p16] = make(16, c16);
  auto [k24, p24] = make(24, c24);
  const std::vector<uint8_t> x = Bytes(rng, 240);
  std::vector<uint8_t> mid(240), want(240), got(240);
  k16->Run(p16, x.data(), c16.data(), mid.data(), 0, 240);
  k24->Run(p24, mid.data(), c24.data(), want.data(), 0, 240);
  ASSERT_TRUE(k24->ComposeAfter(*k16));
  k24->Run(p24, x.data(), c24.data(), got.data(), 0, 240);
  EXPECT_EQ(want, got);
}

// x -> LOGISTIC -> MUL with x (EfficientNet's swish), every byte of x in the
// input; the MUL may take the LOGISTIC in only when the LOGISTIC's output has
// no other reader and the MUL's other input is the LOGISTIC's input.
struct SwishCase {
  DataType type = DataType::kInt8;
  bool logistic_left = false;   // MUL(LOGISTIC(x), x)
  bool logistic_output = false;  // the LOGISTIC's output is also a graph output
  bool other_input = false;      // MUL(y, LOGISTIC(x)), y another graph input
  Activation act = Activation::kNone;
  bool expect_fused() const { return !logistic_output && !other_input; }
  std::string Describe() const {
    return std::string(DataTypeName(type)) + (logistic_left ? " logistic left" : "") +
           (logistic_output ? " logistic output read" : "") + (other_input ? " other input" : "") +
           " act " + std::to_string(static_cast<int>(act));
  }
};

std::vector<uint8_t> RunSwish(const SwishCase& c, KernelSet kernels, int threads,
                              int* fused_into) {
  const int zp = c.type == DataType::kUInt8 ? 128 : 0;
  const int channels = 32, h = 4, w = 16;  // 2048 values: every byte 8 times
  OpModel m;
  const int x = m.AddInput(c.type, {1, h, w, channels}, Q(0.047f, zp + 11), "x");
  const int y = c.other_input ? m.AddInput(c.type, {1, h, w, channels}, Q(0.03f, zp - 4), "y") : x;
  const Quantization logistic_q = Q(1.0f / 256, c.type == DataType::kUInt8 ? 0 : -128);
  const int l = c.logistic_output ? m.AddOutput(c.type, logistic_q, {}, "l")
                                  : m.AddTensor(c.type, logistic_q);
  const int out = m.AddOutput(c.type, Q(0.025f, zp - 100), {}, "out");
  m.AddOp(BuiltinOp::kLogistic, {x}, {l});
  ElementwiseParams params;
  params.activation = c.act;
  m.AddOp(BuiltinOp::kMul, c.logistic_left ? std::vector<int>{l, y} : std::vector<int>{y, l}, {out},
          params);
  m.Build(threads, kernels);
  if (::testing::Test::HasFailure()) return {};
  std::vector<uint8_t> bytes(static_cast<size_t>(h) * w * channels);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  m.SetInput<uint8_t>(0, bytes);
  if (c.other_input) {
    std::mt19937 rng(5);
    m.SetInput<uint8_t>(1, Bytes(rng, bytes.size()));
  }
  m.Invoke();
  *fused_into = m.interpreter().node(0).fused_into;
  std::vector<uint8_t> result = m.GetOutput<uint8_t>(c.logistic_output ? 1 : 0);
  if (c.logistic_output) {
    const std::vector<uint8_t> logistic = m.GetOutput<uint8_t>(0);
    result.insert(result.end(), logistic.begin(), logistic.end());
  }
  return result;
}

TEST(TableFusion, SwishIsOneTable) {
  int trial = 0;
  for (DataType type : {DataType::kInt8, DataType::kUInt8})
    for (bool left : {false, true})
      for (int variant = 0; variant < 3; ++variant) {
        SwishCase c;
        c.type = type;
        c.logistic_left = left;
        c.logistic_output = variant == 1;
        c.other_input = variant == 2;
        c.act = trial++ % 3 == 0 ? Activation::kRelu : Activation::kNone;
        int ref_fused = -2, fused = -2;
        const std::vector<uint8_t> want = RunSwish(c, KernelSet::kReference, 1, &ref_fused);
        EXPECT_EQ(ref_fused, -1) << c.Describe();
        for (int threads : {1, 2}) {
          EXPECT_EQ(want, RunSwish(c, KernelSet::kOptimized, threads, &fused)) << c.Describe();
          EXPECT_EQ(fused, c.expect_fused() ? 1 : -1) << c.Describe();
        }
      }
}

// float32 swish: the MUL takes the LOGISTIC in and computes both in one pass
// (optimized::FloatSwish), bit for bit what the two optimized nodes give
// (fuse_nodes off), in either operand order; not with an activation on the
// MUL or when the LOGISTIC's output has another reader.
TEST(TableFusion, FloatSwishIsOnePass) {
  if (!optimized::HasFloatLogistic(optimized::BestIsa())) GTEST_SKIP() << "no vector LOGISTIC";
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  std::vector<float> x(3 * 5 * 37);
  for (float& v : x) v = dist(rng);
  x[0] = 0.0f;
  x[1] = -100.0f;
  x[2] = 100.0f;
  x[3] = 1e-30f;
  for (bool left : {false, true})
    for (int variant = 0; variant < 3; ++variant) {
      OpModel m;
      const int in = m.AddInput(DataType::kFloat32, {1, 3, 5, 37}, {}, "x");
      const int l = variant == 2 ? m.AddOutput(DataType::kFloat32, {}, {}, "l")
                                 : m.AddTensor(DataType::kFloat32, {});
      const int out = m.AddOutput(DataType::kFloat32, {}, {}, "out");
      m.AddOp(BuiltinOp::kLogistic, {in}, {l});
      ElementwiseParams params;
      params.activation = variant == 1 ? Activation::kRelu : Activation::kNone;
      m.AddOp(BuiltinOp::kMul, left ? std::vector<int>{l, in} : std::vector<int>{in, l}, {out},
              params);
      m.Build(1, KernelSet::kOptimized);
      const bool expect_fused = variant == 0;
      const int out_index = variant == 2 ? 1 : 0;
      std::vector<std::vector<float>> results;
      for (bool fuse : {false, true}) {
        InterpreterOptions options;
        options.fuse_nodes = fuse;
        options.num_threads = fuse ? 2 : 1;
        Status status;
        auto interpreter = Interpreter::Create(
            std::shared_ptr<const ModelDef>(&m.model(), [](const ModelDef*) {}), options, &status);
        ASSERT_TRUE(status.ok()) << status.message();
        ASSERT_TRUE(interpreter->AllocateTensors().ok());
        std::memcpy(interpreter->input(0).data, x.data(), x.size() * sizeof(float));
        ASSERT_TRUE(interpreter->Invoke().ok());
        const float* y = static_cast<const float*>(interpreter->output(out_index).data);
        results.emplace_back(y, y + x.size());
        EXPECT_EQ(interpreter->node(0).fused_into, fuse && expect_fused ? 1 : -1)
            << "left " << left << " variant " << variant;
      }
      EXPECT_EQ(0, std::memcmp(results[0].data(), results[1].data(), x.size() * sizeof(float)))
          << "left " << left << " variant " << variant;
      for (size_t i = 0; i < x.size() && variant != 1; ++i)  // near the reference's x * logistic(x)
        EXPECT_NEAR(results[1][i], x[i] * reference::LogisticValue(x[i]),
                    1e-5f * std::abs(x[i]) + 1e-30f) << i;
    }
}

}  // namespace
}  // namespace delegato
