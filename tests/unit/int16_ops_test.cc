// int16 AVERAGE_POOL_2D, MAX_POOL_2D, LOGISTIC and TANH (zero points 0).
// Pooling is checked against direct loops; LOGISTIC/TANH over every int16
// input against the float function (within the table interpolation's error)
// and the table against entries of TFLite's sigmoid_table_uint16. Every case
// is saved for the LiteRT replay (litert_dump.h), which checks bit-exactness.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/reference/activations16.h"
#include "litert_dump.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::DumpForLiteRt;
using ::delegato::testing::OpModel;
using ::delegato::testing::Q;
using ::testing::HasSubstr;

struct PoolCase {
  int batches = 1, h = 6, w = 5, c = 3, f_h = 3, f_w = 2, s_h = 2, s_w = 1;
  Padding padding = Padding::kSame;
  Activation act = Activation::kNone;
};

void RunPool(bool average, const PoolCase& c, const std::string& name, std::mt19937& rng) {
  SCOPED_TRACE(name);
  const float scale = 1.0f / 1024;
  std::uniform_int_distribution<int> dist(-32768, 32767);
  std::vector<int16_t> input(c.batches * c.h * c.w * c.c);
  for (auto& v : input) v = static_cast<int16_t>(dist(rng));
  OpModel m;
  const int in = m.AddInput(DataType::kInt16, {c.batches, c.h, c.w, c.c}, Q(scale, 0));
  const int out = m.AddOutput(DataType::kInt16, Q(scale, 0));
  Pool2DParams p;
  p.padding = c.padding;
  p.filter_h = c.f_h;
  p.filter_w = c.f_w;
  p.stride_h = c.s_h;
  p.stride_w = c.s_w;
  p.activation = c.act;
  m.AddOp(average ? BuiltinOp::kAveragePool2d : BuiltinOp::kMaxPool2d, {in}, {out}, p, 3);
  m.Build();
  m.SetInput<int16_t>(0, input);
  m.Invoke();
  const std::vector<int16_t> got = m.GetOutput<int16_t>(0);
  const bool same = c.padding == Padding::kSame;
  const int out_h = same ? (c.h + c.s_h - 1) / c.s_h : (c.h - c.f_h + c.s_h) / c.s_h;
  const int out_w = same ? (c.w + c.s_w - 1) / c.s_w : (c.w - c.f_w + c.s_w) / c.s_w;
  const int pad_h = same ? std::max((out_h - 1) * c.s_h + c.f_h - c.h, 0) / 2 : 0;
  const int pad_w = same ? std::max((out_w - 1) * c.s_w + c.f_w - c.w, 0) / 2 : 0;
  ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * out_h * out_w * c.c));
  int32_t lo = -32768, hi = 32767;
  if (c.act == Activation::kRelu) lo = 0;
  if (c.act == Activation::kRelu6) lo = 0, hi = static_cast<int32_t>(std::round(6.0f / scale));
  size_t index = 0;
  for (int b = 0; b < c.batches; ++b)
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        for (int ch = 0; ch < c.c; ++ch, ++index) {
          int64_t sum = 0, count = 0;
          int32_t max = -32768;
          for (int fy = 0; fy < c.f_h; ++fy)
            for (int fx = 0; fx < c.f_w; ++fx) {
              const int y = oy * c.s_h - pad_h + fy, x = ox * c.s_w - pad_w + fx;
              if (y < 0 || y >= c.h || x < 0 || x >= c.w) continue;
              const int32_t v = input[((b * c.h + y) * c.w + x) * c.c + ch];
              sum += v;
              ++count;
              max = std::max(max, v);
            }
          // Rounded to nearest, halves away from zero.
          const int32_t avg = static_cast<int32_t>(
              sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count);
          const int32_t expected = std::min(std::max(average ? avg : max, lo), hi);
          ASSERT_EQ(int32_t{got[index]}, expected) << "output " << index;
        }
  DumpForLiteRt(m, name);
}

std::vector<PoolCase> PoolCases() {
  std::vector<PoolCase> cases;
  for (Padding padding : {Padding::kSame, Padding::kValid})
    for (Activation act : {Activation::kNone, Activation::kRelu, Activation::kRelu6}) {
      PoolCase c;
      c.padding = padding;
      c.act = act;
      cases.push_back(c);
    }
  PoolCase big;
  big.batches = 2; big.h = 9; big.w = 8; big.c = 5; big.f_h = 4; big.f_w = 4; big.s_h = 3; big.s_w = 2;
  cases.push_back(big);
  return cases;
}

TEST(Int16Ops, AveragePool) {
  std::mt19937 rng(21);
  int i = 0;
  for (const PoolCase& c : PoolCases()) RunPool(true, c, "int16_avgpool_" + std::to_string(i++), rng);
}

TEST(Int16Ops, MaxPool) {
  std::mt19937 rng(22);
  int i = 0;
  for (const PoolCase& c : PoolCases()) RunPool(false, c, "int16_maxpool_" + std::to_string(i++), rng);
}

TEST(Int16Ops, PoolNeedsZeroPoints) {
  OpModel m;
  const int in = m.AddInput(DataType::kInt16, {1, 4, 4, 1}, Q(0.5f, 2));
  const int out = m.AddOutput(DataType::kInt16, Q(0.5f, 2));
  Pool2DParams p;
  p.filter_h = p.filter_w = 2;
  m.AddOp(BuiltinOp::kMaxPool2d, {in}, {out}, p, 3);
  const Status st = m.TryBuild();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("need zero points 0"));
}

TEST(Int16Ops, SigmoidTable) {
  // Non-decreasing and within 1.2 units of 65536 * sigmoid(i / 24).
  const auto& t = reference::kSigmoidTable16;
  for (int i = 0; i < 256; ++i) {
    EXPECT_NEAR(t[i], 65536.0 / (1.0 + std::exp(-i / 24.0)), 1.2) << i;
    if (i > 0) {
      EXPECT_GE(t[i], t[i - 1]) << i;
    }
  }
}

// Every int16 input through LOGISTIC or TANH at a given input scale.
void RunTableActivation(BuiltinOp op, float in_scale, const std::string& name) {
  SCOPED_TRACE(name);
  std::vector<int16_t> input(65536);
  for (int i = 0; i < 65536; ++i) input[i] = static_cast<int16_t>(i - 32768);
  OpModel m;
  const int in = m.AddInput(DataType::kInt16, {1, 256, 256}, Q(in_scale, 0));
  const int out = m.AddOutput(DataType::kInt16, Q(1.0f / 32768, 0));
  m.AddOp(op, {in}, {out}, std::monostate{}, 3);
  m.Build();
  m.SetInput<int16_t>(0, input);
  m.Invoke();
  const std::vector<int16_t> got = m.GetOutput<int16_t>(0);
  ASSERT_EQ(got.size(), input.size());
  double worst = 0;
  for (int i = 0; i < 65536; ++i) {
    const double x = double(input[i]) * in_scale;
    const double want = op == BuiltinOp::kLogistic ? 1.0 / (1.0 + std::exp(-x)) : std::tanh(x);
    worst = std::max(worst, std::abs(got[i] / 32768.0 - want));
  }
  // Linear interpolation over steps of 1/24 plus the 16-bit rounding.
  EXPECT_LT(worst, op == BuiltinOp::kLogistic ? 2.5e-4 : 5e-4);
  DumpForLiteRt(m, name);
}

TEST(Int16Ops, Logistic) {
  int i = 0;
  for (float s : {1.0f / 4096, 1.0f / 8192, 0.0007f, 0.003f, 1.0f / 1000})
    RunTableActivation(BuiltinOp::kLogistic, s, "int16_logistic_" + std::to_string(i++));
}

TEST(Int16Ops, Tanh) {
  int i = 0;
  for (float s : {1.0f / 4096, 1.0f / 8192, 1.0f / 2048, 0.0007f, 0.003f, 1.0f / 1000})
    RunTableActivation(BuiltinOp::kTanh, s, "int16_tanh_" + std::to_string(i++));
}

TEST(Int16Ops, ActivationErrors) {
  auto build = [](BuiltinOp op, Quantization qi, Quantization qo) {
    OpModel m;
    const int in = m.AddInput(DataType::kInt16, {4}, qi);
    const int out = m.AddOutput(DataType::kInt16, qo);
    m.AddOp(op, {in}, {out}, std::monostate{}, 3);
    return m.TryBuild();
  };
  Status st = build(BuiltinOp::kTanh, Q(1.0f / 4096, 1), Q(1.0f / 32768, 0));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("zero point 0"));
  st = build(BuiltinOp::kTanh, Q(1.0f / 4096, 0), Q(1.0f / 256, 0));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("scale 2^-15"));
  st = build(BuiltinOp::kLogistic, Q(10.0f, 0), Q(1.0f / 32768, 0));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("too large"));
}

}  // namespace
}  // namespace delegato
