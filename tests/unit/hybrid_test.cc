// Dynamic-range (hybrid) FULLY_CONNECTED: float input and output with
// constant int8 weights, per tensor or per channel, symmetric or asymmetric
// on-the-fly input quantization, bias or none, fused activations, batches,
// an all-zero row and an all-zero input. Checked here against the float
// product with the dequantized weights (within the input quantization's
// error) and saved for the LiteRT replay (litert_dump.h), which checks that
// the outputs are LiteRT's to float rounding.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "litert_dump.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::DumpForLiteRt;
using ::delegato::testing::OpModel;
using ::delegato::testing::Q;
using ::delegato::testing::QPerAxis;
using ::testing::HasSubstr;

struct FcCase {
  int batches = 3, depth = 9, units = 5;
  bool per_channel = false, asymmetric = false, bias = true, zero_input = false;
  float lo = -3.0f, hi = 5.0f;  // input range
  Activation act = Activation::kNone;
};

void RunHybridFc(const FcCase& c, const std::string& name, std::mt19937& rng) {
  SCOPED_TRACE(name);
  std::uniform_real_distribution<float> in_dist(c.lo, c.hi), b_dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> w_dist(-127, 127);
  std::vector<float> input(c.batches * c.depth), bias(c.units);
  std::vector<int8_t> weights(c.units * c.depth);
  for (auto& v : input) v = c.zero_input ? 0.0f : in_dist(rng);
  if (!c.zero_input && c.batches > 1)  // one all-zero row
    std::fill(input.begin() + c.depth, input.begin() + 2 * c.depth, 0.0f);
  for (auto& v : weights) v = static_cast<int8_t>(w_dist(rng));
  for (auto& v : bias) v = b_dist(rng);
  std::vector<float> scales(c.per_channel ? c.units : 1);
  for (size_t k = 0; k < scales.size(); ++k) scales[k] = 0.01f + 0.003f * k;

  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {c.batches, c.depth});
  const int w = m.AddConst<int8_t>(
      DataType::kInt8, {c.units, c.depth}, weights,
      c.per_channel ? QPerAxis(scales, std::vector<int64_t>(c.units, 0), 0) : Q(scales[0], 0));
  const int b = c.bias ? m.AddConst<float>(DataType::kFloat32, {c.units}, bias) : -1;
  const int out = m.AddOutput(DataType::kFloat32);
  FullyConnectedParams p;
  p.activation = c.act;
  p.asymmetric_quantize_inputs = c.asymmetric;
  m.AddOp(BuiltinOp::kFullyConnected, {in, w, b}, {out}, p, c.asymmetric ? 9 : 3);
  m.Build();
  m.SetInput<float>(0, input);
  m.Invoke();
  const std::vector<float> got = m.GetOutput<float>(0);
  ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * c.units));
  for (int r = 0; r < c.batches; ++r) {
    float range = 0.0f;
    for (int k = 0; k < c.depth; ++k) range = std::max(range, std::fabs(input[r * c.depth + k]));
    for (int u = 0; u < c.units; ++u) {
      const float ws = c.per_channel ? scales[u] : scales[0];
      double want = c.bias ? bias[u] : 0.0, weight_abs = 0.0;
      for (int k = 0; k < c.depth; ++k) {
        want += double(input[r * c.depth + k]) * weights[u * c.depth + k] * ws;
        weight_abs += std::abs(weights[u * c.depth + k] * ws);
      }
      if (c.act == Activation::kRelu) want = std::max(want, 0.0);
      if (c.act == Activation::kRelu6) want = std::min(std::max(want, 0.0), 6.0);
      if (c.act == Activation::kReluN1To1) want = std::min(std::max(want, -1.0), 1.0);
      // Each input is off by at most half a quantization step (range / 127;
      // the asymmetric step is at most twice that).
      const double tolerance = weight_abs * range / 127.0 + 1e-5;
      EXPECT_NEAR(got[r * c.units + u], want, tolerance) << "batch " << r << " unit " << u;
      if (c.zero_input || (r == 1 && c.batches > 1)) {
        // Zero rows give exactly the bias (activation applied).
        float exact = c.bias ? bias[u] : 0.0f;
        if (c.act == Activation::kRelu) exact = std::max(exact, 0.0f);
        if (c.act == Activation::kRelu6) exact = std::min(std::max(exact, 0.0f), 6.0f);
        if (c.act == Activation::kReluN1To1) exact = std::min(std::max(exact, -1.0f), 1.0f);
        EXPECT_EQ(got[r * c.units + u], exact);
      }
    }
  }
  DumpForLiteRt(m, name);
}

TEST(HybridFullyConnected, Variants) {
  std::mt19937 rng(41);
  int i = 0;
  for (bool per_channel : {false, true})
    for (bool asymmetric : {false, true})
      for (bool bias : {true, false}) {
        FcCase c;
        c.per_channel = per_channel;
        c.asymmetric = asymmetric;
        c.bias = bias;
        char name[64];
        std::snprintf(name, sizeof(name), "hybrid_fc_%d%s%s%s", i++, per_channel ? "_pc" : "_pt",
                      asymmetric ? "_asym" : "_sym", bias ? "" : "_nobias");
        RunHybridFc(c, name, rng);
      }
  FcCase wide;
  wide.batches = 4; wide.depth = 100; wide.units = 70; wide.act = Activation::kRelu;
  wide.per_channel = true; wide.asymmetric = true;
  RunHybridFc(wide, "hybrid_fc_wide_relu", rng);
  FcCase relu6 = wide;
  relu6.act = Activation::kRelu6;
  relu6.asymmetric = false;
  RunHybridFc(relu6, "hybrid_fc_relu6", rng);
  FcCase n1;
  n1.act = Activation::kReluN1To1;
  RunHybridFc(n1, "hybrid_fc_relun1", rng);
  // Many rows; all-positive and all-negative inputs (the zero point at an end).
  int k = 0;
  for (auto [lo, hi] : {std::pair{-1.0f, 1.0f}, std::pair{0.5f, 4.0f}, std::pair{-6.0f, -0.1f}})
    for (bool per_channel : {false, true}) {
      FcCase many;
      many.batches = 16; many.depth = 23; many.units = 7;
      many.asymmetric = true; many.per_channel = per_channel;
      many.lo = lo; many.hi = hi;
      RunHybridFc(many, "hybrid_fc_many_" + std::to_string(k++), rng);
    }
  FcCase zero;
  zero.zero_input = true;
  zero.act = Activation::kRelu;
  RunHybridFc(zero, "hybrid_fc_zero_input", rng);
}

TEST(HybridFullyConnected, Errors) {
  auto build = [](Quantization wq, bool constant, DataType out_type) {
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {1, 2});
    const int w = constant ? m.AddConst<int8_t>(DataType::kInt8, {2, 2}, {1, 2, 3, 4}, wq)
                           : m.AddInput(DataType::kInt8, {2, 2}, wq);
    const int out = m.AddOutput(out_type);
    m.AddOp(BuiltinOp::kFullyConnected, {in, w, -1}, {out}, FullyConnectedParams{}, 3);
    return m.TryBuild();
  };
  Status st = build(Q(0.1f, 3), true, DataType::kFloat32);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("zero points of 0"));
  st = build(Q(0.1f, 0), false, DataType::kFloat32);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("must be constant"));
  st = build(Q(0.1f, 0), true, DataType::kInt8);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("needs a FLOAT32 output"));
}

}  // namespace
}  // namespace delegato
