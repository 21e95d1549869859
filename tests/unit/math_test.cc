// HARD_SWISH, LEAKY_RELU, PRELU, RELU_N1_TO_1, RELU_0_TO_1, GELU, EXP, LOG,
// RSQRT, SQUARE, ABS, NEG, SIN, COS, FLOOR, SIGN. Float expectations come from
// the defining formulas (in double); quantized ones from dequantize -> formula
// -> quantize, within the one or two steps fixed-point arithmetic may differ.
// 8-bit cases feed every representable input value.

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/model.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::OpModel;
using testing::Q;

// Runs a one-input op and returns its output.
template <class T>
std::vector<T> RunUnary(BuiltinOp op, DataType type, std::vector<int32_t> shape,
                        const std::vector<T>& x, Quantization qi = {}, Quantization qo = {},
                        OpParams params = std::monostate{}, int version = 1, int threads = 1) {
  OpModel m;
  const int in = m.AddInput(type, shape, qi);
  const int out = m.AddOutput(type, qo);
  m.AddOp(op, {in}, {out}, params, version);
  m.Build(threads);
  m.SetInput<T>(0, x);
  m.Invoke();
  return m.GetOutput<T>(0);
}

template <class T>
Status BuildUnary(BuiltinOp op, DataType in_type, DataType out_type, Quantization qi = {},
                  Quantization qo = {}, OpParams params = std::monostate{}) {
  OpModel m;
  const int in = m.AddInput(in_type, {4}, qi);
  const int out = m.AddOutput(out_type, qo);
  m.AddOp(op, {in}, {out}, params);
  return m.TryBuild();
}

// Every value of an 8-bit type, in order.
template <class T>
std::vector<T> AllValues() {
  std::vector<T> v;
  for (int32_t i = std::numeric_limits<T>::min(); i <= std::numeric_limits<T>::max(); ++i)
    v.push_back(static_cast<T>(i));
  return v;
}

template <class T, class Fn>
int32_t ExpectedQuantized(T x, float in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                          Fn fn) {
  const double real = fn(static_cast<double>(in_scale) * (static_cast<int32_t>(x) - in_zp));
  const double q = std::round(real / out_scale) + out_zp;
  return static_cast<int32_t>(std::clamp<double>(q, std::numeric_limits<T>::min(),
                                                 std::numeric_limits<T>::max()));
}

// Checks y against fn for every input, within `tolerance` quantized steps.
template <class T, class Fn>
void CheckQuantized(const std::vector<T>& x, const std::vector<T>& y, float in_scale,
                    int32_t in_zp, float out_scale, int32_t out_zp, Fn fn, int tolerance) {
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int32_t expected = ExpectedQuantized(x[i], in_scale, in_zp, out_scale, out_zp, fn);
    EXPECT_NEAR(static_cast<int32_t>(y[i]), expected, tolerance)
        << "input " << static_cast<int32_t>(x[i]);
  }
}

template <class Fn>
void CheckFloat(const std::vector<float>& x, const std::vector<float>& y, Fn fn,
                double tolerance = 1e-6) {
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double expected = fn(static_cast<double>(x[i]));
    EXPECT_NEAR(y[i], expected, tolerance * std::max(1.0, std::fabs(expected)))
        << "input " << x[i];
  }
}

std::vector<float> FloatRange(float lo, float hi, int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(lo + (hi - lo) * static_cast<float>(i) / (n - 1));
  return v;
}

double HardSwish(double x) { return x * std::min(6.0, std::max(0.0, x + 3.0)) / 6.0; }
double Gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double GeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

// ------------------------------------------------------------ HARD_SWISH

TEST(HardSwish, Float) {
  const std::vector<float> x = {-5, -3, -2.5f, -1, 0, 0.5f, 2, 3, 4, 100};
  auto y = RunUnary<float>(BuiltinOp::kHardSwish, DataType::kFloat32, {2, 5}, x, {}, {},
                           EmptyParams{});
  CheckFloat(x, y, HardSwish);
}

TEST(HardSwish, Uint8EveryInput) {
  const auto x = AllValues<uint8_t>();
  auto y = RunUnary<uint8_t>(BuiltinOp::kHardSwish, DataType::kUInt8, {256}, x, Q(0.05f, 128),
                             Q(0.04f, 20));
  CheckQuantized(x, y, 0.05f, 128, 0.04f, 20, HardSwish, 1);
}

TEST(HardSwish, Int8EveryInputAndLargeInputScale) {
  const auto x = AllValues<int8_t>();
  auto y = RunUnary<int8_t>(BuiltinOp::kHardSwish, DataType::kInt8, {256}, x, Q(0.03f, -10),
                            Q(0.025f, -100));
  CheckQuantized(x, y, 0.03f, -10, 0.025f, -100, HardSwish, 1);
  // A wide input range (scale 0.5: [-64, 64]) exercises the saturating left shift.
  y = RunUnary<int8_t>(BuiltinOp::kHardSwish, DataType::kInt8, {256}, x, Q(0.5f, 0),
                       Q(0.25f, 0));
  CheckQuantized(x, y, 0.5f, 0, 0.25f, 0, HardSwish, 1);
}

// The optimized kernel set reads a 256-entry table filled in Prepare: every
// input byte must give the reference kernel's output, for both 8-bit types
// and scales that exercise the ramp's left shift, right shift and saturation.
template <class T>
std::vector<T> RunHardSwish(DataType type, const std::vector<T>& x, Quantization qi,
                            Quantization qo, KernelSet kernels) {
  OpModel m;
  const int in = m.AddInput(type, {static_cast<int32_t>(x.size())}, qi);
  const int out = m.AddOutput(type, qo);
  m.AddOp(BuiltinOp::kHardSwish, {in}, {out}, std::monostate{});
  m.Build(1, kernels);
  m.SetInput<T>(0, x);
  m.Invoke();
  return m.GetOutput<T>(0);
}

TEST(HardSwish, OptimizedTableEqualsReferenceForEveryInput) {
  const std::vector<std::pair<float, float>> scales = {
      {0.05f, 0.04f}, {0.5f, 0.25f}, {0.001f, 0.002f}, {0.02f, 0.5f}, {0.1f, 0.1f}};
  for (const auto& [in_scale, out_scale] : scales) {
    for (int32_t zp : {-100, 0, 37}) {
      const auto x8 = AllValues<int8_t>();
      EXPECT_EQ(RunHardSwish<int8_t>(DataType::kInt8, x8, Q(in_scale, zp), Q(out_scale, -zp / 2),
                                     KernelSet::kOptimized),
                RunHardSwish<int8_t>(DataType::kInt8, x8, Q(in_scale, zp), Q(out_scale, -zp / 2),
                                     KernelSet::kReference))
          << "int8 scales " << in_scale << " " << out_scale << " zero point " << zp;
      const auto xu = AllValues<uint8_t>();
      EXPECT_EQ(RunHardSwish<uint8_t>(DataType::kUInt8, xu, Q(in_scale, zp + 128),
                                      Q(out_scale, 20), KernelSet::kOptimized),
                RunHardSwish<uint8_t>(DataType::kUInt8, xu, Q(in_scale, zp + 128),
                                      Q(out_scale, 20), KernelSet::kReference))
          << "uint8 scales " << in_scale << " " << out_scale << " zero point " << zp + 128;
    }
  }
}

TEST(HardSwish, Rejects) {
  Status s = BuildUnary<int16_t>(BuiltinOp::kHardSwish, DataType::kInt16, DataType::kInt16,
                                 Q(0.1f, 0), Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (HARD_SWISH)"));
  EXPECT_THAT(s.message(), HasSubstr("INT16"));
  // Output scale below input scale / 128: TFLite's fixed point cannot express it.
  s = BuildUnary<int8_t>(BuiltinOp::kHardSwish, DataType::kInt8, DataType::kInt8, Q(1.0f, 0),
                         Q(0.001f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("too large"));
  s = BuildUnary<float>(BuiltinOp::kHardSwish, DataType::kFloat32, DataType::kUInt8);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("output"));
}

// ------------------------------------------------------------ LEAKY_RELU

TEST(LeakyRelu, Float) {
  const std::vector<float> x = {-4, -1, -0.5f, 0, 0.5f, 3};
  for (float alpha : {0.2f, -0.5f, 1.5f}) {
    auto y = RunUnary<float>(BuiltinOp::kLeakyRelu, DataType::kFloat32, {6}, x, {}, {},
                             LeakyReluParams{alpha});
    CheckFloat(x, y, [alpha](double v) { return v > 0 ? v : v * static_cast<double>(alpha); });
  }
}

TEST(LeakyRelu, Uint8AndInt8EveryInput) {
  for (float alpha : {0.1f, 0.3f, -0.25f}) {
    auto fn = [alpha](double v) { return v > 0 ? v : v * static_cast<double>(alpha); };
    const auto xu = AllValues<uint8_t>();
    auto yu = RunUnary<uint8_t>(BuiltinOp::kLeakyRelu, DataType::kUInt8, {16, 16}, xu,
                                Q(0.1f, 100), Q(0.08f, 60), LeakyReluParams{alpha}, 2);
    CheckQuantized(xu, yu, 0.1f, 100, 0.08f, 60, fn, 1);
    const auto xs = AllValues<int8_t>();
    auto ys = RunUnary<int8_t>(BuiltinOp::kLeakyRelu, DataType::kInt8, {256}, xs, Q(0.05f, 5),
                               Q(0.05f, -20), LeakyReluParams{alpha}, 2);
    CheckQuantized(xs, ys, 0.05f, 5, 0.05f, -20, fn, 1);
  }
}

TEST(LeakyRelu, Int16) {
  std::vector<int16_t> x;
  for (int v = -32768; v <= 32767; v += 257) x.push_back(static_cast<int16_t>(v));
  auto fn = [](double v) { return v > 0 ? v : v * 0.2; };
  auto y = RunUnary<int16_t>(BuiltinOp::kLeakyRelu, DataType::kInt16,
                             {static_cast<int32_t>(x.size())}, x, Q(1.0f / 4096, 0),
                             Q(1.0f / 2048, 0), LeakyReluParams{0.2f}, 2);
  CheckQuantized(x, y, 1.0f / 4096, 0, 1.0f / 2048, 0, fn, 1);
  Status s = BuildUnary<int16_t>(BuiltinOp::kLeakyRelu, DataType::kInt16, DataType::kInt16,
                                 Q(0.1f, 3), Q(0.1f, 0), LeakyReluParams{0.2f});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("zero point 0"));
}

TEST(LeakyRelu, RejectsInt32) {
  Status s = BuildUnary<int32_t>(BuiltinOp::kLeakyRelu, DataType::kInt32, DataType::kInt32, {},
                                 {}, LeakyReluParams{0.2f});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (LEAKY_RELU)"));
}

// ------------------------------------------------------------ PRELU

template <class T>
std::vector<T> RunPrelu(DataType type, std::vector<int32_t> in_shape,
                        std::vector<int32_t> alpha_shape, const std::vector<T>& x,
                        const std::vector<T>& alpha, Quantization qi = {}, Quantization qa = {},
                        Quantization qo = {}, bool alpha_const = true) {
  OpModel m;
  const int in = m.AddInput(type, in_shape, qi);
  const int a = alpha_const ? m.AddConst<T>(type, alpha_shape, alpha, qa)
                            : m.AddInput(type, alpha_shape, qa);
  const int out = m.AddOutput(type, qo);
  m.AddOp(BuiltinOp::kPrelu, {in, a}, {out});
  m.Build();
  m.SetInput<T>(0, x);
  if (!alpha_const) m.SetInput<T>(1, alpha);
  m.Invoke();
  return m.GetOutput<T>(0);
}

TEST(Prelu, FloatBroadcastPerChannel) {
  // Alpha per channel over NHWC.
  const std::vector<float> x = {-1, 2, -3, 4, -5, 6, 0, -8, 9, -10, 11, -12};
  auto y = RunPrelu<float>(DataType::kFloat32, {1, 2, 2, 3}, {1, 1, 3}, x, {0.5f, 2.0f, -1.0f});
  EXPECT_THAT(y, ElementsAre(-0.5f, 2, 3, 4, -10, 6, 0, -16, 9, -5, 11, 12));
  // Same shapes, alpha as a graph input.
  y = RunPrelu<float>(DataType::kFloat32, {4}, {4}, {-1, -2, 3, -4}, {0.1f, 0.2f, 0.3f, 0.0f},
                      {}, {}, {}, false);
  EXPECT_THAT(y, ElementsAre(-0.1f, -0.4f, 3, 0));
}

TEST(Prelu, QuantizedBroadcast) {
  const auto xu = AllValues<uint8_t>();
  const std::vector<uint8_t> alpha_u = {128 + 25, 128 - 50, 128};  // 0.25, -0.5, 0 at scale 0.01
  auto yu = RunPrelu<uint8_t>(DataType::kUInt8, {1, 1, 256, 3}, {3},
                              [&] {
                                std::vector<uint8_t> v;
                                for (uint8_t b : xu) v.insert(v.end(), {b, b, b});
                                return v;
                              }(),
                              alpha_u, Q(0.1f, 120), Q(0.01f, 128), Q(0.1f, 100));
  const double alphas[3] = {0.25, -0.5, 0.0};
  for (int i = 0; i < 256; ++i) {
    for (int c = 0; c < 3; ++c) {
      auto fn = [&](double v) { return v >= 0 ? v : v * alphas[c]; };
      EXPECT_NEAR(yu[i * 3 + c], ExpectedQuantized<uint8_t>(xu[i], 0.1f, 120, 0.1f, 100, fn), 1)
          << i << "," << c;
    }
  }
  const auto xs = AllValues<int8_t>();
  auto ys = RunPrelu<int8_t>(DataType::kInt8, {256}, {1}, xs, {int8_t{64}}, Q(0.05f, 0),
                             Q(1.0f / 128, 0), Q(0.05f, -5));
  CheckQuantized(xs, ys, 0.05f, 0, 0.05f, -5, [](double v) { return v >= 0 ? v : v * 0.5; }, 1);
}

TEST(Prelu, Rejects) {
  {
    OpModel m;
    const int in = m.AddInput(DataType::kFloat32, {2, 3});
    const int a = m.AddInput(DataType::kInt8, {3}, Q(0.1f, 0));
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kPrelu, {in, a}, {out});
    Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("node 0 (PRELU)"));
    EXPECT_THAT(s.message(), HasSubstr("alpha"));
  }
  {
    OpModel m;  // alpha larger than the input
    const int in = m.AddInput(DataType::kFloat32, {3});
    const int a = m.AddInput(DataType::kFloat32, {2, 3});
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kPrelu, {in, a}, {out});
    Status s = m.TryBuild();
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("beyond the input"));
  }
}

// ------------------------------------------------------------ RELU_N1_TO_1, RELU_0_TO_1

TEST(ReluN1To1, FloatAndQuantized) {
  const std::vector<float> x = {-3, -1, -0.5f, 0, 0.7f, 1, 2};
  auto y = RunUnary<float>(BuiltinOp::kReluN1To1, DataType::kFloat32, {7}, x);
  EXPECT_THAT(y, ElementsAre(-1, -1, -0.5f, 0, 0.7f, 1, 1));
  auto clamp = [](double v) { return std::clamp(v, -1.0, 1.0); };
  const auto xs = AllValues<int8_t>();
  auto ys = RunUnary<int8_t>(BuiltinOp::kReluN1To1, DataType::kInt8, {256}, xs, Q(0.02f, 3),
                             Q(0.01f, -4));
  CheckQuantized(xs, ys, 0.02f, 3, 0.01f, -4, clamp, 1);
  const auto xu = AllValues<uint8_t>();
  auto yu = RunUnary<uint8_t>(BuiltinOp::kReluN1To1, DataType::kUInt8, {256}, xu, Q(0.02f, 128),
                              Q(1.0f / 127, 127));
  CheckQuantized(xu, yu, 0.02f, 128, 1.0f / 127, 127, clamp, 1);
}

TEST(Relu0To1, FloatAndQuantized) {
  const std::vector<float> x = {-3, -0.5f, 0, 0.7f, 1, 2};
  auto y = RunUnary<float>(BuiltinOp::kRelu0To1, DataType::kFloat32, {6}, x);
  EXPECT_THAT(y, ElementsAre(0, 0, 0, 0.7f, 1, 1));
  auto clamp = [](double v) { return std::clamp(v, 0.0, 1.0); };
  const auto xs = AllValues<int8_t>();
  auto ys = RunUnary<int8_t>(BuiltinOp::kRelu0To1, DataType::kInt8, {256}, xs, Q(0.01f, 0),
                             Q(1.0f / 255, -128));
  CheckQuantized(xs, ys, 0.01f, 0, 1.0f / 255, -128, clamp, 1);
  const auto xu = AllValues<uint8_t>();
  auto yu = RunUnary<uint8_t>(BuiltinOp::kRelu0To1, DataType::kUInt8, {256}, xu, Q(0.01f, 100),
                              Q(1.0f / 255, 0));
  CheckQuantized(xu, yu, 0.01f, 100, 1.0f / 255, 0, clamp, 1);
  Status s = BuildUnary<int16_t>(BuiltinOp::kRelu0To1, DataType::kInt16, DataType::kInt16,
                                 Q(0.1f, 0), Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (RELU_0_TO_1)"));
}

// ------------------------------------------------------------ GELU

TEST(Gelu, FloatExactAndApproximate) {
  const auto x = FloatRange(-6, 6, 49);
  auto y = RunUnary<float>(BuiltinOp::kGelu, DataType::kFloat32, {49}, x, {}, {},
                           GeluParams{false});
  CheckFloat(x, y, Gelu, 1e-5);
  y = RunUnary<float>(BuiltinOp::kGelu, DataType::kFloat32, {49}, x, {}, {}, GeluParams{true}, 2);
  CheckFloat(x, y, GeluTanh, 1e-5);
  // No options table: the exact form.
  y = RunUnary<float>(BuiltinOp::kGelu, DataType::kFloat32, {49}, x);
  CheckFloat(x, y, Gelu, 1e-5);
}

TEST(Gelu, QuantizedTables) {
  for (bool approximate : {false, true}) {
    auto fn = approximate ? GeluTanh : Gelu;
    const auto xs = AllValues<int8_t>();
    auto ys = RunUnary<int8_t>(BuiltinOp::kGelu, DataType::kInt8, {256}, xs, Q(0.04f, 10),
                               Q(0.03f, -90), GeluParams{approximate}, 2);
    CheckQuantized(xs, ys, 0.04f, 10, 0.03f, -90, fn, 1);
    const auto xu = AllValues<uint8_t>();
    auto yu = RunUnary<uint8_t>(BuiltinOp::kGelu, DataType::kUInt8, {256}, xu, Q(0.04f, 128),
                                Q(0.02f, 10), GeluParams{approximate}, 2);
    CheckQuantized(xu, yu, 0.04f, 128, 0.02f, 10, fn, 1);
  }
}

// ------------------------------------------------------------ EXP, LOG, RSQRT

TEST(Exp, FloatAndInt8) {
  const auto x = FloatRange(-10, 10, 41);
  auto y = RunUnary<float>(BuiltinOp::kExp, DataType::kFloat32, {41}, x);
  CheckFloat(x, y, [](double v) { return std::exp(v); }, 1e-6);
  const auto xs = AllValues<int8_t>();
  auto ys = RunUnary<int8_t>(BuiltinOp::kExp, DataType::kInt8, {256}, xs, Q(0.02f, 0),
                             Q(0.05f, -128), {}, 2);
  CheckQuantized(xs, ys, 0.02f, 0, 0.05f, -128, [](double v) { return std::exp(v); }, 1);
  Status s = BuildUnary<uint8_t>(BuiltinOp::kExp, DataType::kUInt8, DataType::kUInt8,
                                 Q(0.1f, 0), Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (EXP)"));
  EXPECT_THAT(s.message(), HasSubstr("UINT8"));
}

TEST(Log, FloatAndInt8) {
  const std::vector<float> x = {0.001f, 0.5f, 1, 2.718281828f, 10, 1e6f};
  auto y = RunUnary<float>(BuiltinOp::kLog, DataType::kFloat32, {6}, x);
  CheckFloat(x, y, [](double v) { return std::log(v); }, 1e-6);
  y = RunUnary<float>(BuiltinOp::kLog, DataType::kFloat32, {2}, {0.0f, -1.0f});
  EXPECT_EQ(y[0], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(y[1]));
  const auto xs = AllValues<int8_t>();
  auto ys = RunUnary<int8_t>(BuiltinOp::kLog, DataType::kInt8, {256}, xs, Q(0.05f, -100),
                             Q(0.04f, 30), {}, 2);
  // Non-positive inputs give the lowest output; the rest log(x).
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] <= -100) {
      EXPECT_EQ(ys[i], -128) << int(xs[i]);
    } else {
      EXPECT_NEAR(ys[i],
                  ExpectedQuantized<int8_t>(xs[i], 0.05f, -100, 0.04f, 30,
                                            [](double v) { return std::log(v); }),
                  1)
          << int(xs[i]);
    }
  }
}

std::vector<int16_t> Int16Samples(int from, int step) {
  std::vector<int16_t> v;
  for (int x = from; x <= 32767; x += step) v.push_back(static_cast<int16_t>(x));
  return v;
}

// INT16 goes through TFLite's interpolating 513-entry table.
TEST(Int16Tables, ExpLogRsqrt) {
  auto x = Int16Samples(-32768, 97);
  int n = static_cast<int>(x.size());
  const float exp_out = 20.1f / 32767;
  auto y = RunUnary<int16_t>(BuiltinOp::kExp, DataType::kInt16, {n}, x, Q(3.0f / 32768, 0),
                             Q(exp_out, 0), {}, 2, 2);
  // Linear interpolation between samples costs a few steps on curved stretches.
  CheckQuantized(x, y, 3.0f / 32768, 0, exp_out, 0, [](double v) { return std::exp(v); }, 4);

  x = Int16Samples(1, 89);
  n = static_cast<int>(x.size());
  y = RunUnary<int16_t>(BuiltinOp::kLog, DataType::kInt16, {n}, x, Q(1.0f / 1024, 0),
                        Q(12.0f / 32768, 0), {}, 2);
  for (int i = 0; i < n; ++i) {
    // Near zero the table interpolates towards the clamp at the lowest value.
    if (x[i] < 1024) continue;
    EXPECT_NEAR(y[i],
                ExpectedQuantized<int16_t>(x[i], 1.0f / 1024, 0, 12.0f / 32768, 0,
                                           [](double v) { return std::log(v); }),
                4)
        << x[i];
  }

  y = RunUnary<int16_t>(BuiltinOp::kRsqrt, DataType::kInt16, {n}, x, Q(1.0f / 1024, 0),
                        Q(1.0f / 32768, 0), {}, 3);
  for (int i = 0; i < n; ++i) {
    if (x[i] < 2048) continue;  // steep near zero: interpolation error grows
    EXPECT_NEAR(y[i],
                ExpectedQuantized<int16_t>(x[i], 1.0f / 1024, 0, 1.0f / 32768, 0,
                                           [](double v) { return 1.0 / std::sqrt(v); }),
                8)
        << x[i];
  }
  Status s = BuildUnary<int16_t>(BuiltinOp::kExp, DataType::kInt16, DataType::kInt16,
                                 Q(0.001f, 3), Q(0.001f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("zero point 0"));
}

TEST(Rsqrt, Float) {
  const std::vector<float> x = {0.25f, 1, 2, 4, 100, 1e-4f};
  auto y = RunUnary<float>(BuiltinOp::kRsqrt, DataType::kFloat32, {6}, x);
  CheckFloat(x, y, [](double v) { return 1.0 / std::sqrt(v); }, 1e-6);
  Status s = BuildUnary<uint8_t>(BuiltinOp::kRsqrt, DataType::kUInt8, DataType::kUInt8,
                                 Q(0.1f, 0), Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (RSQRT)"));
  EXPECT_THAT(s.message(), HasSubstr("UINT8"));
}

TEST(Rsqrt, Int8) {
  // Inputs from the zero point up: 0 maps to the largest output.
  std::vector<int8_t> x;
  for (int v = -20; v <= 127; ++v) x.push_back(static_cast<int8_t>(v));
  const int n = static_cast<int>(x.size());
  auto y = RunUnary<int8_t>(BuiltinOp::kRsqrt, DataType::kInt8, {n}, x, Q(0.05f, -20),
                            Q(0.02f, -128), {}, 2);
  EXPECT_EQ(y[0], 127);
  for (int i = 1; i < n; ++i) {
    EXPECT_NEAR(y[i],
                ExpectedQuantized<int8_t>(x[i], 0.05f, -20, 0.02f, -128,
                                          [](double v) { return 1.0 / std::sqrt(v); }),
                1)
        << int(x[i]);
  }
  // Negative real inputs stop Eval.
  OpModel m;
  const int in = m.AddInput(DataType::kInt8, {2}, Q(0.05f, -20));
  const int out = m.AddOutput(DataType::kInt8, Q(0.02f, -128));
  m.AddOp(BuiltinOp::kRsqrt, {in}, {out}, std::monostate{}, 2);
  m.Build();
  m.SetInput<int8_t>(0, {0, -21});
  Status s = m.TryInvoke();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("negative"));
}

// ------------------------------------------------------------ SQUARE, SIN, COS, FLOOR

TEST(FloatMath, SquareSinCosFloor) {
  const auto x = FloatRange(-7.5f, 7.5f, 31);
  CheckFloat(x, RunUnary<float>(BuiltinOp::kSquare, DataType::kFloat32, {31}, x),
             [](double v) { return v * v; });
  CheckFloat(x, RunUnary<float>(BuiltinOp::kSin, DataType::kFloat32, {31}, x),
             [](double v) { return std::sin(v); }, 1e-6);
  CheckFloat(x, RunUnary<float>(BuiltinOp::kCos, DataType::kFloat32, {31}, x),
             [](double v) { return std::cos(v); }, 1e-6);
  auto y = RunUnary<float>(BuiltinOp::kFloor, DataType::kFloat32, {6},
                           {-2.5f, -2.0f, -0.1f, 0.0f, 0.9f, 3.0f});
  EXPECT_THAT(y, ElementsAre(-3, -2, -1, 0, 0, 3));
  for (BuiltinOp op : {BuiltinOp::kSquare, BuiltinOp::kSin, BuiltinOp::kCos, BuiltinOp::kFloor}) {
    Status s = BuildUnary<int32_t>(op, DataType::kInt32, DataType::kInt32);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("node 0 ("));
    EXPECT_THAT(s.message(), HasSubstr("INT32 input"));
  }
}

// ------------------------------------------------------------ NEG, SIGN, ABS

TEST(Neg, FloatInt32Int64) {
  EXPECT_THAT(RunUnary<float>(BuiltinOp::kNeg, DataType::kFloat32, {3}, {-1.5f, 0, 2}),
              ElementsAre(1.5f, 0, -2));
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_THAT(RunUnary<int32_t>(BuiltinOp::kNeg, DataType::kInt32, {3}, {-7, 5, kMin32}),
              ElementsAre(7, -5, kMin32));
  EXPECT_THAT(RunUnary<int64_t>(BuiltinOp::kNeg, DataType::kInt64, {2},
                                {int64_t{1} << 40, -3}),
              ElementsAre(-(int64_t{1} << 40), 3));
  Status s = BuildUnary<int8_t>(BuiltinOp::kNeg, DataType::kInt8, DataType::kInt8, Q(1, 0),
                                Q(1, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (NEG)"));
}

TEST(Sign, FloatAndInt32) {
  EXPECT_THAT(RunUnary<float>(BuiltinOp::kSign, DataType::kFloat32, {4}, {-2.5f, 0, 0.1f, -0.0f}),
              ElementsAre(-1, 0, 1, 0));
  EXPECT_THAT(RunUnary<int32_t>(BuiltinOp::kSign, DataType::kInt32, {3}, {-9, 0, 4}, {}, {}, {},
                                2),
              ElementsAre(-1, 0, 1));
}

TEST(Abs, FloatInt32Int16) {
  EXPECT_THAT(RunUnary<float>(BuiltinOp::kAbs, DataType::kFloat32, {3}, {-1.5f, 0, 2}),
              ElementsAre(1.5f, 0, 2));
  EXPECT_THAT(RunUnary<int32_t>(BuiltinOp::kAbs, DataType::kInt32, {3}, {-7, 5, 0}),
              ElementsAre(7, 5, 0));
  // Unquantized INT16.
  EXPECT_THAT(RunUnary<int16_t>(BuiltinOp::kAbs, DataType::kInt16, {3}, {-300, 4, 0}),
              ElementsAre(300, 4, 0));
}

TEST(Abs, QuantizedSameAndDifferentScales) {
  const auto xs = AllValues<int8_t>();
  auto abs = [](double v) { return std::fabs(v); };
  // Same scale: no rescaling, exact.
  auto ys = RunUnary<int8_t>(BuiltinOp::kAbs, DataType::kInt8, {256}, xs, Q(0.1f, 5),
                             Q(0.1f, -128), {}, 2);
  CheckQuantized(xs, ys, 0.1f, 5, 0.1f, -128, abs, 0);
  ys = RunUnary<int8_t>(BuiltinOp::kAbs, DataType::kInt8, {256}, xs, Q(0.1f, 5), Q(0.07f, -128),
                        {}, 2);
  CheckQuantized(xs, ys, 0.1f, 5, 0.07f, -128, abs, 1);
  std::vector<int16_t> x16 = {-32768, -1000, -1, 0, 1, 32767};
  auto y16 = RunUnary<int16_t>(BuiltinOp::kAbs, DataType::kInt16, {6}, x16, Q(0.001f, 0),
                               Q(0.002f, 0), {}, 3);
  CheckQuantized(x16, y16, 0.001f, 0, 0.002f, 0, abs, 1);
  Status s = BuildUnary<uint8_t>(BuiltinOp::kAbs, DataType::kUInt8, DataType::kUInt8,
                                 Q(0.1f, 0), Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (ABS)"));
}

TEST(UnaryMath, RejectsTypeMismatchAndWrongInputCount) {
  Status s = BuildUnary<float>(BuiltinOp::kSin, DataType::kFloat32, DataType::kInt32);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (SIN)"));
  OpModel m;
  const int a = m.AddInput(DataType::kFloat32, {2});
  const int b = m.AddInput(DataType::kFloat32, {2});
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kExp, {a, b}, {out});
  s = m.TryBuild();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (EXP)"));
}

TEST(UnaryMath, RejectsMissingOrPerAxisQuantization) {
  Status s = BuildUnary<int8_t>(BuiltinOp::kHardSwish, DataType::kInt8, DataType::kInt8, {},
                                Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (HARD_SWISH)"));
  EXPECT_THAT(s.message(), HasSubstr("no quantization parameters"));
  s = BuildUnary<int8_t>(BuiltinOp::kGelu, DataType::kInt8, DataType::kInt8,
                         testing::QPerAxis({0.1f, 0.2f}, {0, 0}, 0), Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("per tensor"));
  s = BuildUnary<uint8_t>(BuiltinOp::kLeakyRelu, DataType::kUInt8, DataType::kUInt8, Q(0.1f, 300),
                          Q(0.1f, 0), LeakyReluParams{0.1f});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("zero point 300"));
}

// Exact outputs of LiteRT's reference kernels (BUILTIN_REF) for the same
// models and inputs, pinned so that any drift in the fixed-point steps shows.
TEST(LiteRtValues, QuantizedActivations) {
  auto hs8 = RunUnary<int8_t>(BuiltinOp::kHardSwish, DataType::kInt8, {13},
                              {-128, -100, -64, -32, -16, -1, 0, 1, 16, 32, 64, 100, 127},
                              Q(0.05f, -10), Q(0.03f, -60));
  EXPECT_THAT(hs8, ElementsAreArray(std::vector<int8_t>{-60, -60, -65, -72, -65, -51, -50, -49, -29, 0, 63, 123, 127}));
  auto hsu = RunUnary<uint8_t>(BuiltinOp::kHardSwish, DataType::kUInt8, {9},
                               {0, 20, 60, 100, 128, 140, 180, 220, 255}, Q(0.04f, 128),
                               Q(0.02f, 30));
  EXPECT_THAT(hsu, ElementsAreArray(std::vector<uint8_t>{30, 30, 24, 12, 30, 44, 118, 214, 255}));
  auto lr = RunUnary<int8_t>(BuiltinOp::kLeakyRelu, DataType::kInt8, {8},
                             {-128, -60, -7, -1, 0, 1, 9, 127}, Q(0.05f, 5), Q(0.04f, -3),
                             LeakyReluParams{-0.25f});
  EXPECT_THAT(lr, ElementsAreArray(std::vector<int8_t>{39, 18, 1, -1, -1, -2, 2, 127}));
  auto rs = RunUnary<int8_t>(BuiltinOp::kRsqrt, DataType::kInt8, {7}, {0, 1, 2, 5, 17, 60, 127},
                             Q(0.02f, 0), Q(0.05f, -128), {}, 2);
  EXPECT_THAT(rs, ElementsAreArray(std::vector<int8_t>{127, 13, -28, -65, -94, -110, -115}));
  auto ex = RunUnary<int16_t>(BuiltinOp::kExp, DataType::kInt16, {9},
                              {-32768, -20000, -5000, -1, 0, 1, 5000, 20000, 32767},
                              Q(3.0f / 32768, 0), Q(20.1f / 32767, 0), {}, 2);
  EXPECT_THAT(ex, ElementsAreArray(std::vector<int16_t>{81, 261, 1031, 1630, 1630, 1630, 2577, 10172, 32738}));
  auto pr = RunPrelu<int8_t>(DataType::kInt8, {2, 3}, {3}, {-128, -50, -1, 0, 1, 127},
                             {64, -64, 32}, Q(0.05f, 0), Q(1.0f / 128, 0), Q(0.05f, -5));
  EXPECT_THAT(pr, ElementsAreArray(std::vector<int8_t>{-69, 20, -5, -5, -4, 122}));
}

}  // namespace
}  // namespace delegato
