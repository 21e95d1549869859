// LOG_SOFTMAX, L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and L2_POOL_2D.
// Expectations are computed here in double from the definitions.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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

template <class T>
std::vector<T> RunUnary(BuiltinOp op, DataType type, std::vector<int32_t> shape,
                        const std::vector<T>& x, OpParams params = EmptyParams{},
                        Quantization qi = {}, Quantization qo = {}, int version = 1,
                        int threads = 1, std::vector<int32_t>* out_shape = nullptr) {
  OpModel m;
  const int in = m.AddInput(type, shape, qi);
  const int out = m.AddOutput(type, qo);
  m.AddOp(op, {in}, {out}, params, version);
  m.Build(threads);
  m.SetInput<T>(0, x);
  m.Invoke();
  if (out_shape) *out_shape = m.GetOutputShape(0);
  return m.GetOutput<T>(0);
}

Status TryBuild(BuiltinOp op, DataType type, std::vector<int32_t> shape, OpParams params,
                Quantization qi = {}, Quantization qo = {}) {
  OpModel m;
  const int in = m.AddInput(type, shape, qi);
  const int out = m.AddOutput(type, qo);
  m.AddOp(op, {in}, {out}, params);
  return m.TryBuild();
}

std::vector<float> Pattern(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(std::sin(0.7f * i) * 3.0f + 0.1f * (i % 5));
  return v;
}

TEST(LogSoftmax, Float) {
  const int rows = 3, depth = 7;
  const auto x = Pattern(rows * depth);
  auto y = RunUnary<float>(BuiltinOp::kLogSoftmax, DataType::kFloat32, {rows, depth}, x);
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int c = 0; c < depth; ++c) sum += std::exp(double(x[r * depth + c]));
    for (int c = 0; c < depth; ++c)
      EXPECT_NEAR(y[r * depth + c], x[r * depth + c] - std::log(sum), 1e-5) << r << "," << c;
  }
  Status s = TryBuild(BuiltinOp::kLogSoftmax, DataType::kInt16, {2, 4}, EmptyParams{},
                      Q(0.1f, 0), Q(16.0f / 256, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (LOG_SOFTMAX)"));
}

template <class T>
void CheckLogSoftmaxQuantized(DataType type, float in_scale, int32_t in_zp) {
  const int rows = 12, depth = 9;
  std::vector<T> x;
  for (int i = 0; i < rows * depth; ++i)
    x.push_back(static_cast<T>(std::clamp<int>(in_zp + (i * 53 % 255) - 127 + (i / depth) * 3,
                                               std::numeric_limits<T>::min(),
                                               std::numeric_limits<T>::max())));
  const int32_t out_zp = std::numeric_limits<T>::max();
  auto y = RunUnary<T>(BuiltinOp::kLogSoftmax, type, {rows, depth}, x, EmptyParams{},
                       Q(in_scale, in_zp), Q(16.0f / 256, out_zp), 2, 2);
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int c = 0; c < depth; ++c) sum += std::exp(in_scale * (double(x[r * depth + c]) - in_zp));
    for (int c = 0; c < depth; ++c) {
      const double v = in_scale * (double(x[r * depth + c]) - in_zp) - std::log(sum);
      const double q = std::clamp(std::round(v / (16.0 / 256)) + out_zp,
                                  double(std::numeric_limits<T>::min()), double(out_zp));
      EXPECT_NEAR(y[r * depth + c], q, 1) << r << "," << c;
    }
  }
}

TEST(LogSoftmax, Quantized) {
  CheckLogSoftmaxQuantized<uint8_t>(DataType::kUInt8, 0.05f, 128);
  CheckLogSoftmaxQuantized<int8_t>(DataType::kInt8, 0.1f, 0);
  CheckLogSoftmaxQuantized<int8_t>(DataType::kInt8, 0.02f, -10);
  // The output parameters are fixed.
  Status s = TryBuild(BuiltinOp::kLogSoftmax, DataType::kInt8, {2, 4}, EmptyParams{},
                      Q(0.1f, 0), Q(16.0f / 256, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("zero point 127"));
}

TEST(L2Normalization, Float) {
  const auto x = Pattern(12);
  auto y = RunUnary<float>(BuiltinOp::kL2Normalization, DataType::kFloat32, {1, 3, 4}, x,
                           L2NormParams{});
  for (int r = 0; r < 3; ++r) {
    double sq = 0;
    for (int c = 0; c < 4; ++c) sq += double(x[r * 4 + c]) * x[r * 4 + c];
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(y[r * 4 + c], x[r * 4 + c] / std::sqrt(sq), 1e-6);
  }
  // All zeros: the epsilon keeps the output at zero.
  y = RunUnary<float>(BuiltinOp::kL2Normalization, DataType::kFloat32, {3}, {0.0f, 0.0f, 0.0f},
                      L2NormParams{});
  EXPECT_THAT(y, ElementsAre(0, 0, 0));
}

template <class T>
void CheckL2NormQuantized(DataType type, float in_scale, int32_t in_zp, int32_t out_zp) {
  const int rows = 16, depth = 5;
  std::vector<T> x;
  for (int i = 0; i < rows * depth; ++i)
    x.push_back(static_cast<T>(std::clamp<int>(in_zp + (i * 37 % 201) - 100, std::numeric_limits<T>::min(),
                                               std::numeric_limits<T>::max())));
  auto y = RunUnary<T>(BuiltinOp::kL2Normalization, type, {rows, depth}, x, L2NormParams{},
                       Q(in_scale, in_zp), Q(1.0f / 128, out_zp), 2, 2);
  for (int r = 0; r < rows; ++r) {
    double sq = 0;
    for (int c = 0; c < depth; ++c) sq += std::pow(double(x[r * depth + c]) - in_zp, 2);
    for (int c = 0; c < depth; ++c) {
      const double v = sq == 0 ? 0 : (double(x[r * depth + c]) - in_zp) / std::sqrt(sq);
      const double q = std::clamp(std::round(v * 128) + out_zp, double(std::numeric_limits<T>::min()),
                                  double(std::numeric_limits<T>::max()));
      EXPECT_NEAR(y[r * depth + c], q, 1) << r << "," << c;
    }
  }
}

TEST(L2Normalization, Quantized) {
  CheckL2NormQuantized<uint8_t>(DataType::kUInt8, 0.1f, 120, 128);
  CheckL2NormQuantized<int8_t>(DataType::kInt8, 0.05f, -3, 0);
  Status s = TryBuild(BuiltinOp::kL2Normalization, DataType::kInt8, {2, 4}, L2NormParams{},
                      Q(0.1f, 0), Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (L2_NORMALIZATION)"));
  EXPECT_THAT(s.message(), HasSubstr("scale"));
  s = TryBuild(BuiltinOp::kL2Normalization, DataType::kFloat32, {1, 1, 1, 2, 2},
               L2NormParams{});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("rank 5"));
}

TEST(LocalResponseNormalization, Float) {
  const int depth = 6;
  const auto x = Pattern(2 * depth);
  const LocalResponseNormParams p{2, 1.5f, 0.3f, 0.75f};
  auto y = RunUnary<float>(BuiltinOp::kLocalResponseNormalization, DataType::kFloat32,
                           {1, 1, 2, depth}, x, p);
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < depth; ++c) {
      double accum = 0;
      // TFLite's window: channels [c - radius, c + radius).
      for (int k = std::max(0, c - p.radius); k < std::min(depth, c + p.radius); ++k)
        accum += double(x[r * depth + k]) * x[r * depth + k];
      const double expected = x[r * depth + c] * std::pow(p.bias + p.alpha * accum, -p.beta);
      EXPECT_NEAR(y[r * depth + c], expected, 1e-5) << r << "," << c;
    }
  }
  Status s = TryBuild(BuiltinOp::kLocalResponseNormalization, DataType::kFloat32, {2, 6}, p);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("rank 4"));
}

TEST(L2Pool2D, ValidAndSame) {
  std::vector<float> x;
  for (int i = 0; i < 2 * 4 * 4 * 2; ++i) x.push_back(0.25f * (i % 9) - 1.0f);
  for (Padding padding : {Padding::kValid, Padding::kSame}) {
    Pool2DParams p{padding, 2, 2, 3, 3, Activation::kNone};
    std::vector<int32_t> shape;
    auto y = RunUnary<float>(BuiltinOp::kL2Pool2d, DataType::kFloat32, {2, 4, 4, 2}, x, p, {}, {},
                             1, 1, &shape);
    const int oh = padding == Padding::kValid ? 1 : 2;
    EXPECT_THAT(shape, ElementsAre(2, oh, oh, 2));
    const int pad = padding == Padding::kValid ? 0 : 0;  // SAME with stride 2, filter 3, size 4: pad 0
    for (int b = 0; b < 2; ++b)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < oh; ++ox)
          for (int c = 0; c < 2; ++c) {
            double sum = 0;
            int count = 0;
            for (int iy = oy * 2 - pad; iy < oy * 2 - pad + 3; ++iy)
              for (int ix = ox * 2 - pad; ix < ox * 2 - pad + 3; ++ix) {
                if (iy < 0 || ix < 0 || iy >= 4 || ix >= 4) continue;
                const double v = x[((b * 4 + iy) * 4 + ix) * 2 + c];
                sum += v * v;
                ++count;
              }
            EXPECT_NEAR(y[((b * oh + oy) * oh + ox) * 2 + c], std::sqrt(sum / count), 1e-6);
          }
  }
  Status s = TryBuild(BuiltinOp::kL2Pool2d, DataType::kUInt8, {1, 2, 2, 1},
                      Pool2DParams{Padding::kValid, 1, 1, 2, 2, Activation::kNone}, Q(0.1f, 0),
                      Q(0.1f, 0));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("node 0 (L2_POOL_2D)"));
}

// GELU, L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION options survive a
// write and a read of the model file.
TEST(Options, RoundTripThroughTheFile) {
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {1, 1, 1, 4});
  const int a = m.AddTensor(DataType::kFloat32);
  const int b = m.AddTensor(DataType::kFloat32);
  const int out = m.AddOutput(DataType::kFloat32);
  m.AddOp(BuiltinOp::kGelu, {in}, {a}, GeluParams{true});
  m.AddOp(BuiltinOp::kL2Normalization, {a}, {b}, L2NormParams{Activation::kNone});
  m.AddOp(BuiltinOp::kLocalResponseNormalization, {b}, {out},
          LocalResponseNormParams{3, 1.25f, 0.5f, 0.75f});
  const std::vector<uint8_t> bytes = WriteModel(m.model());
  const auto model = ReadModelBuffer(bytes.data(), bytes.size());
  const auto& ops = model->subgraphs[0].operators;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_TRUE(std::get<GeluParams>(ops[0].params).approximate);
  EXPECT_EQ(std::get<L2NormParams>(ops[1].params).activation, Activation::kNone);
  const auto& lrn = std::get<LocalResponseNormParams>(ops[2].params);
  EXPECT_EQ(lrn.radius, 3);
  EXPECT_EQ(lrn.bias, 1.25f);
  EXPECT_EQ(lrn.alpha, 0.5f);
  EXPECT_EQ(lrn.beta, 0.75f);
}

// Exact outputs of LiteRT's reference kernels for the same models and inputs.
TEST(LiteRtValues, QuantizedLogSoftmaxAndL2Norm) {
  auto ls = RunUnary<int8_t>(BuiltinOp::kLogSoftmax, DataType::kInt8, {2, 5},
                             {-100, -20, 0, 30, 90, 5, 5, 5, 5, 5}, EmptyParams{}, Q(0.1f, 0),
                             Q(16.0f / 256, 127), 2);
  EXPECT_THAT(ls, ElementsAreArray(std::vector<int8_t>{-128, -49, -17, 31, 127, 101, 101, 101, 101, 101}));
  auto l2 = RunUnary<uint8_t>(BuiltinOp::kL2Normalization, DataType::kUInt8, {2, 4},
                              {0, 64, 128, 255, 130, 126, 128, 129}, L2NormParams{},
                              Q(0.1f, 128), Q(1.0f / 128, 128));
  EXPECT_THAT(l2, ElementsAreArray(std::vector<uint8_t>{42, 85, 128, 213, 213, 43, 128, 171}));
}

}  // namespace
}  // namespace delegato
