// FULLY_CONNECTED: float, legacy uint8, int8 per-tensor (with and without a
// weight zero point) and per-channel weights; optional bias, keep_num_dims,
// inputs flattened to [batch, depth]. Fixed expected values come from TFLite's
// reference kernels (BUILTIN_REF), whose quantized rescale is done in double
// precision; randomized cases compare against a transcription of those loops.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/quantization.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::OpModel;
using ::delegato::testing::Q;
using ::delegato::testing::QPerAxis;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

template <class T>
constexpr DataType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat32;
  if constexpr (std::is_same_v<T, uint8_t>) return DataType::kUInt8;
  if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
  if constexpr (std::is_same_v<T, int32_t>) return DataType::kInt32;
}

struct FcSpec {
  std::vector<int32_t> input_shape = {2, 6}, weights_shape = {3, 6};
  FullyConnectedParams params;
  Quantization in_q, weights_q, bias_q, out_q;
  bool weights_are_input = false;
};

FullyConnectedParams Params(Activation act = Activation::kNone, bool keep_num_dims = false) {
  FullyConnectedParams p;
  p.activation = act;
  p.keep_num_dims = keep_num_dims;
  return p;
}

template <class T, class B>
std::vector<T> RunFc(const FcSpec& s, const std::vector<T>& input, const std::vector<T>& weights,
                     const std::vector<B>* bias, int threads,
                     std::vector<int32_t>* out_shape = nullptr) {
  OpModel m;
  const int in = m.AddInput(TypeOf<T>(), s.input_shape, s.in_q);
  const int w = s.weights_are_input
                    ? m.AddInput(TypeOf<T>(), s.weights_shape, s.weights_q)
                    : m.AddConst<T>(TypeOf<T>(), s.weights_shape, weights, s.weights_q);
  const int b = bias == nullptr ? -1
                                : m.AddConst<B>(TypeOf<B>(), {static_cast<int32_t>(bias->size())},
                                                *bias, s.bias_q);
  const int out = m.AddOutput(TypeOf<T>(), s.out_q);
  m.AddOp(BuiltinOp::kFullyConnected, {in, w, b}, {out}, s.params, 5);
  const Status st = m.TryBuild(threads);
  if (!st.ok()) {
    ADD_FAILURE() << st.message();
    return {};
  }
  m.SetInput<T>(0, input);
  if (s.weights_are_input) m.SetInput<T>(1, weights);
  m.Invoke();
  if (out_shape != nullptr) *out_shape = m.GetOutputShape(0);
  return m.GetOutput<T>(0);
}

// ------------------------------------------------------------- fixed cases

const std::vector<float> kFloatInput = {-1.25, 0.5, -0.5, 1.25,  0.25,  -0.75,
                                        1.0,   0.0, -1.0, 0.75, -0.25, -1.25};
const std::vector<float> kFloatWeights = {-1.5, 1.0,  0.0, -1.0, 1.5,  0.5,  -0.5, -1.5, 1.0,
                                          0.0,  -1.0, 1.5, 0.5,  -0.5, -1.5, 1.0,  0.0,  -1.0};
const std::vector<float> kFloatBias = {0.5f, -1.0f, 0.25f};

TEST(FullyConnectedFloat, Basic) {
  for (int threads : {1, 2}) {
    FcSpec s;
    std::vector<int32_t> shape;
    EXPECT_THAT(RunFc(s, kFloatInput, kFloatWeights, &kFloatBias, threads, &shape),
                ElementsAreArray<float>({1.625, -3.0, 2.125, -2.75, -4.125, 4.25}));
    EXPECT_THAT(shape, ElementsAre(2, 3));
    s.weights_are_input = true;
    EXPECT_THAT(RunFc(s, kFloatInput, kFloatWeights, &kFloatBias, threads),
                ElementsAreArray<float>({1.625, -3.0, 2.125, -2.75, -4.125, 4.25}));
  }
}

TEST(FullyConnectedFloat, ReluNoBias) {
  FcSpec s;
  s.params = Params(Activation::kRelu);
  EXPECT_THAT((RunFc<float, float>(s, kFloatInput, kFloatWeights, nullptr, 1)),
              ElementsAreArray<float>({1.125, 0.0, 1.875, 0.0, 0.0, 4.0}));
}

TEST(FullyConnectedFloat, Rank4InputIsFlattened) {
  FcSpec s;
  s.input_shape = {1, 2, 2, 3};
  s.params = Params(Activation::kReluN1To1);
  std::vector<int32_t> shape;
  EXPECT_THAT(RunFc(s, kFloatInput, kFloatWeights, &kFloatBias, 1, &shape),
              ElementsAreArray<float>({1.0, -1.0, 1.0, -1.0, -1.0, 1.0}));
  EXPECT_THAT(shape, ElementsAre(2, 3));
}

TEST(FullyConnectedFloat, KeepNumDims) {
  FcSpec s;
  s.input_shape = {2, 1, 6};
  s.params = Params(Activation::kNone, true);
  std::vector<int32_t> shape;
  EXPECT_THAT(RunFc(s, kFloatInput, kFloatWeights, &kFloatBias, 2, &shape),
              ElementsAreArray<float>({1.625, -3.0, 2.125, -2.75, -4.125, 4.25}));
  EXPECT_THAT(shape, ElementsAre(2, 1, 3));
}

const std::vector<uint8_t> kU8Input = {60, 137, 214, 130, 207, 123, 200, 116, 193, 109, 186, 102};
const std::vector<uint8_t> kU8Weights = {70,  115, 160, 88,  133, 178, 106, 151, 79,
                                         124, 169, 97,  142, 70,  115, 160, 88,  133};
const std::vector<int32_t> kU8Bias = {100, -200, 37};

TEST(FullyConnectedUint8, Basic) {
  FcSpec s;
  s.in_q = Q(0.5f, 128);
  s.weights_q = Q(0.25f, 120);
  s.bias_q = Q(0.125f, 0);
  s.out_q = Q(16.0f, 100);
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunFc(s, kU8Input, kU8Weights, &kU8Bias, threads),
                ElementsAreArray<uint8_t>({159, 112, 62, 92, 93, 92}));
  }
}

TEST(FullyConnectedUint8, Relu6NoBias) {
  FcSpec s;
  s.in_q = Q(0.5f, 128);
  s.weights_q = Q(0.25f, 120);
  s.out_q = Q(0.05f, 20);
  s.params = Params(Activation::kRelu6);
  EXPECT_THAT((RunFc<uint8_t, int32_t>(s, kU8Input, kU8Weights, nullptr, 1)),
              ElementsAreArray<uint8_t>({140, 140, 20, 20, 20, 20}));
}

const std::vector<int8_t> kI8Input = {-121, 0, 121, -11, 110, -22, 99, -33, 88, -44, 77, -55};
const std::vector<int8_t> kI8Weights = {-114, -19, 76,  -76,  19,  114, -38, 57, -95,
                                        0,    95,  -57, 38,   -114, -19, 76, -76, 19};
const std::vector<int32_t> kI8Bias = {300, -150, 41};

FcSpec Int8Spec(Quantization weights_q, Quantization bias_q) {
  FcSpec s;
  s.in_q = Q(0.5f, -3);
  s.out_q = Q(20.0f, 5);
  s.weights_q = std::move(weights_q);
  s.bias_q = std::move(bias_q);
  return s;
}

TEST(FullyConnectedInt8, PerChannel) {
  FcSpec s = Int8Spec(QPerAxis({0.25f, 0.125f, 0.0625f}, {0, 0, 0}, 0),
                      QPerAxis({0.125f, 0.0625f, 0.03125f}, {0, 0, 0}, 0));
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunFc(s, kI8Input, kI8Weights, &kI8Bias, threads),
                ElementsAreArray<int8_t>({127, 19, -21, -27, -7, -2}));
    s.weights_are_input = true;
    EXPECT_THAT(RunFc(s, kI8Input, kI8Weights, &kI8Bias, threads),
                ElementsAreArray<int8_t>({127, 19, -21, -27, -7, -2}));
    s.weights_are_input = false;
  }
}

TEST(FullyConnectedInt8, PerTensor) {
  const FcSpec s = Int8Spec(Q(0.1f, 0), Q(0.05f, 0));
  EXPECT_THAT(RunFc(s, kI8Input, kI8Weights, &kI8Bias, 1),
              ElementsAreArray<int8_t>({64, 16, -37, -8, -5, -6}));
}

TEST(FullyConnectedInt8, PerTensorWeightZeroPointIsApplied) {
  const FcSpec s = Int8Spec(Q(0.1f, 7), Q(0.05f, 0));
  EXPECT_THAT(RunFc(s, kI8Input, kI8Weights, &kI8Bias, 1),
              ElementsAreArray<int8_t>({63, 15, -38, -10, -7, -9}));
}

TEST(FullyConnectedInt8, PerChannelKeepNumDimsRelu) {
  FcSpec s = Int8Spec(QPerAxis({0.25f, 0.125f, 0.0625f}, {0, 0, 0}, 0),
                      QPerAxis({0.125f, 0.0625f, 0.03125f}, {0, 0, 0}, 0));
  s.input_shape = {1, 2, 6};
  s.params = Params(Activation::kRelu, true);
  std::vector<int32_t> shape;
  EXPECT_THAT(RunFc(s, kI8Input, kI8Weights, &kI8Bias, 1, &shape),
              ElementsAreArray<int8_t>({127, 19, 5, 5, 5, 5}));
  EXPECT_THAT(shape, ElementsAre(1, 2, 3));
}

// The reference FULLY_CONNECTED rescales as round(acc * M) in double, so
// halves round away from zero: M = 0.5, acc = -3 -> -2 and acc = -9 -> -5
// (CONV_2D's fixed-point path gives -1 and -4 for the same numbers).
TEST(FullyConnectedInt8, DoubleRescaleRoundsHalvesAwayFromZero) {
  for (bool per_channel : {false, true}) {
    FcSpec s;
    s.input_shape = {1, 1};
    s.weights_shape = {4, 1};
    s.in_q = Q(1.0f, 0);
    s.out_q = Q(1.0f, 0);
    s.weights_q = per_channel ? QPerAxis({0.5f, 0.5f, 0.5f, 0.5f}, {0, 0, 0, 0}, 0) : Q(0.5f, 0);
    EXPECT_THAT((RunFc<int8_t, int32_t>(s, {-3}, {1, 1, 3, 3}, nullptr, 1)),
                ElementsAre(-2, -2, -5, -5));
    EXPECT_THAT((RunFc<int8_t, int32_t>(s, {3}, {1, 1, 3, 3}, nullptr, 1)),
                ElementsAre(2, 2, 5, 5));
  }
}

// ------------------------------------------------ randomized, bit-exact

uint32_t NextRandom(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

struct Shape {
  int batches, depth, units;
};
const Shape kRandomShapes[] = {{1, 1280, 1001}, {3, 37, 70}, {4, 5, 129}, {2, 300, 64}};

TEST(FullyConnectedRandomized, FloatMatchesReferenceLoopsBitExact) {
  // float32 runs the reference kernel with the scalar ISA (the vector kernels
  // sum in another order: optimized_float_test checks them within rounding).
  optimized::ScopedIsaOverride reference_kernels(optimized::Isa::kScalar);
  uint32_t seed = 5;
  for (const Shape& sh : kRandomShapes) {
    FcSpec s;
    s.input_shape = {sh.batches, sh.depth};
    s.weights_shape = {sh.units, sh.depth};
    auto random_floats = [&](size_t n) {
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>(NextRandom(&seed) % 20001) / 7919.0f - 1.25f;
      return v;
    };
    const auto input = random_floats(static_cast<size_t>(sh.batches) * sh.depth);
    const auto weights = random_floats(static_cast<size_t>(sh.units) * sh.depth);
    const auto bias = random_floats(sh.units);
    std::vector<float> expected;
    for (int b = 0; b < sh.batches; ++b)
      for (int o = 0; o < sh.units; ++o) {
        float total = 0.0f;
        for (int d = 0; d < sh.depth; ++d)
          total += input[b * sh.depth + d] * weights[static_cast<size_t>(o) * sh.depth + d];
        expected.push_back(total + bias[o]);
      }
    for (int threads : {1, 2}) {
      const std::vector<float> got = RunFc(s, input, weights, &bias, threads);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << i;
    }
  }
}

template <class T>
void CheckRandomQuantized(bool per_channel) {
  uint32_t seed = 9;
  const bool is_uint8 = std::is_same_v<T, uint8_t>;
  for (const Shape& sh : kRandomShapes) {
    FcSpec s;
    s.input_shape = {sh.batches, sh.depth};
    s.weights_shape = {sh.units, sh.depth};
    const int32_t in_zp = is_uint8 ? 127 : 4, out_zp = is_uint8 ? 133 : -6;
    const int32_t w_zp = is_uint8 ? 121 : (per_channel ? 0 : -3);
    const float in_scale = 0.02f, out_scale = 0.17f;
    std::vector<float> w_scales(per_channel ? sh.units : 1);
    for (size_t c = 0; c < w_scales.size(); ++c) w_scales[c] = 0.001f + 0.00003f * c;
    s.in_q = Q(in_scale, in_zp);
    s.out_q = Q(out_scale, out_zp);
    s.weights_q = QPerAxis(w_scales, std::vector<int64_t>(w_scales.size(), w_zp), 0);
    std::vector<float> bias_scales;
    for (float ws : w_scales) bias_scales.push_back(in_scale * ws);
    s.bias_q = QPerAxis(bias_scales, std::vector<int64_t>(bias_scales.size(), 0), 0);
    s.params = Params(Activation::kRelu);

    auto random_values = [&](size_t n, int lo, int hi) {
      std::vector<T> v(n);
      for (T& x : v) x = static_cast<T>(lo + static_cast<int>(NextRandom(&seed) % (hi - lo + 1)));
      return v;
    };
    const auto input = random_values(static_cast<size_t>(sh.batches) * sh.depth,
                                     is_uint8 ? 0 : -128, is_uint8 ? 255 : 127);
    const auto weights = random_values(static_cast<size_t>(sh.units) * sh.depth,
                                       is_uint8 ? 0 : -127, is_uint8 ? 255 : 127);
    std::vector<int32_t> bias(sh.units);
    for (int32_t& b : bias) b = static_cast<int32_t>(NextRandom(&seed) % 40001) - 20000;
    int32_t act_min, act_max;
    ASSERT_TRUE(quant::ActivationRangeQuantized<T>(Activation::kRelu, out_scale, out_zp, &act_min,
                                                   &act_max));
    std::vector<T> expected;
    for (int b = 0; b < sh.batches; ++b)
      for (int o = 0; o < sh.units; ++o) {
        int32_t acc = 0;
        for (int d = 0; d < sh.depth; ++d)
          acc += (static_cast<int32_t>(weights[static_cast<size_t>(o) * sh.depth + d]) - w_zp) *
                 (static_cast<int32_t>(input[b * sh.depth + d]) - in_zp);
        acc += bias[o];
        const double scale = static_cast<double>(in_scale) *
                             static_cast<double>(w_scales[per_channel ? o : 0]) /
                             static_cast<double>(out_scale);
        int32_t v = static_cast<int32_t>(std::round(static_cast<double>(acc) * scale)) + out_zp;
        expected.push_back(static_cast<T>(std::min(std::max(v, act_min), act_max)));
      }
    for (int threads : {1, 2}) {
      const std::vector<T> got = RunFc(s, input, weights, &bias, threads);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(expected[i])) << i;
    }
  }
}

TEST(FullyConnectedRandomized, Uint8MatchesReferenceLoops) { CheckRandomQuantized<uint8_t>(false); }
TEST(FullyConnectedRandomized, Int8PerChannelMatchesReferenceLoops) {
  CheckRandomQuantized<int8_t>(true);
}
TEST(FullyConnectedRandomized, Int8PerTensorMatchesReferenceLoops) {
  CheckRandomQuantized<int8_t>(false);
}

// ------------------------------------------------------------- bad input

struct BadFc {
  DataType in_type = DataType::kInt8, w_type = DataType::kInt8, out_type = DataType::kInt8;
  std::vector<int32_t> input_shape = {2, 6}, weights_shape = {3, 6};
  Quantization in_q = Q(0.5f, 0), out_q = Q(1.0f, 0);
  Quantization w_q = QPerAxis({0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0);
  int bias_size = 3;
  FullyConnectedParams params;

  Status Build() const {
    OpModel m;
    const int in = m.AddInput(in_type, input_shape, in_q);
    size_t n = 1;
    for (int32_t d : weights_shape) n *= d;
    const int w = m.AddConstBytes(w_type, weights_shape,
                                  std::vector<uint8_t>(n * (w_type == DataType::kFloat32 ? 4 : 1)),
                                  w_q);
    const int b = bias_size < 0 ? -1
                                : m.AddConstBytes(DataType::kInt32, {bias_size},
                                                  std::vector<uint8_t>(bias_size * 4), Q(0.05f, 0));
    const int out = m.AddOutput(out_type, out_q);
    m.AddOp(BuiltinOp::kFullyConnected, {in, w, b}, {out}, params, 5);
    return m.TryBuild();
  }
};

void ExpectFailure(const BadFc& c, const std::string& fragment) {
  const Status st = c.Build();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("FULLY_CONNECTED"));
  EXPECT_THAT(st.message(), HasSubstr(fragment));
}

TEST(FullyConnectedErrors, Valid) { EXPECT_TRUE(BadFc{}.Build().ok()) << BadFc{}.Build().message(); }

TEST(FullyConnectedErrors, WeightsRank) {
  BadFc c;
  c.weights_shape = {3, 2, 3};
  c.w_q = Q(0.1f, 0);
  ExpectFailure(c, "weights tensor \"t1\" must have rank 2");
}

TEST(FullyConnectedErrors, DepthDoesNotDivideInput) {
  BadFc c;
  c.input_shape = {2, 5};
  ExpectFailure(c, "not a multiple of the weights' depth 6");
}

TEST(FullyConnectedErrors, KeepNumDimsDepthMismatch) {
  BadFc c;
  c.input_shape = {6, 2};
  c.params.keep_num_dims = true;
  ExpectFailure(c, "keep_num_dims needs the input's last dimension (2)");
}

TEST(FullyConnectedErrors, PerAxisScaleCountMismatch) {
  BadFc c;
  c.w_q = QPerAxis({0.1f, 0.2f}, {0, 0}, 0);
  ExpectFailure(c, "2 per-axis scales, expected one per output channel (3)");
}

TEST(FullyConnectedErrors, ShuffledWeights) {
  BadFc c;
  c.params.weights_format = 1;
  ExpectFailure(c, "SHUFFLED4x16INT8");
}

TEST(FullyConnectedErrors, Hybrid) {
  BadFc c;  // hybrid needs an optional FLOAT32 bias (here INT32)
  c.in_type = c.out_type = DataType::kFloat32;
  ExpectFailure(c, "expected FLOAT32");
}

TEST(FullyConnectedErrors, TanhActivation) {
  BadFc c;
  c.params.activation = Activation::kTanh;
  ExpectFailure(c, "fused activation TANH");
}

TEST(FullyConnectedErrors, BiasSize) {
  BadFc c;
  c.bias_size = 2;
  ExpectFailure(c, "has 2 elements, expected 3");
}

TEST(FullyConnectedErrors, Int16) {
  BadFc c;
  c.in_type = c.out_type = DataType::kInt16;
  ExpectFailure(c, "expected INT64 for INT16 input");  // the INT32 bias
  c.bias_size = -1;
  EXPECT_TRUE(c.Build().ok()) << c.Build().message();
  c.out_type = DataType::kInt8;
  ExpectFailure(c, "int16x8 needs INT8 weights and an INT16 output");
  c.out_type = DataType::kInt16;
  c.out_q = Q(1.0f, -2);
  ExpectFailure(c, "(INT16) must have zero point 0");
}

}  // namespace
}  // namespace delegato
