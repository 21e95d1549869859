// CONV_2D: float, legacy uint8, int8 per-channel and per-tensor weights.
// Expected values of the fixed cases were produced by TFLite's reference
// kernels (BUILTIN_REF); the randomized cases compare against a direct
// transcription of the reference loops, bit for bit, with 1 and 2 threads.
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

struct ConvSpec {
  std::vector<int32_t> input_shape, filter_shape;
  Conv2DParams params;
  Quantization in_q, filter_q, bias_q, out_q;
  bool filter_is_input = false;  // exercises the per-Eval filter packing
};

Conv2DParams Params(Padding padding, int stride_h, int stride_w, int dilation_h = 1,
                    int dilation_w = 1, Activation act = Activation::kNone) {
  Conv2DParams p;
  p.padding = padding;
  p.stride_h = stride_h;
  p.stride_w = stride_w;
  p.dilation_h = dilation_h;
  p.dilation_w = dilation_w;
  p.activation = act;
  return p;
}

template <class T, class B>
std::vector<T> RunConv(const ConvSpec& s, const std::vector<T>& input,
                       const std::vector<T>& filter, const std::vector<B>* bias, int threads,
                       std::vector<int32_t>* out_shape = nullptr) {
  OpModel m;
  const int in = m.AddInput(TypeOf<T>(), s.input_shape, s.in_q);
  const int f = s.filter_is_input ? m.AddInput(TypeOf<T>(), s.filter_shape, s.filter_q)
                                  : m.AddConst<T>(TypeOf<T>(), s.filter_shape, filter, s.filter_q);
  const int b = bias == nullptr ? -1
                                : m.AddConst<B>(TypeOf<B>(), {static_cast<int32_t>(bias->size())},
                                                *bias, s.bias_q);
  const int out = m.AddOutput(TypeOf<T>(), s.out_q);
  // Without a bias the node has two inputs: LiteRT refuses a third input of -1
  // for this op ("Tensor at index 2 was optional but was expected").
  std::vector<int32_t> inputs = {in, f};
  if (b >= 0) inputs.push_back(b);
  m.AddOp(BuiltinOp::kConv2d, inputs, {out}, s.params, 3);
  const Status st = m.TryBuild(threads);
  if (!st.ok()) {
    ADD_FAILURE() << st.message();
    return {};
  }
  m.SetInput<T>(0, input);
  if (s.filter_is_input) m.SetInput<T>(1, filter);
  m.Invoke();
  if (out_shape != nullptr) *out_shape = m.GetOutputShape(0);
  return m.GetOutput<T>(0);
}

// ------------------------------------------------------------- fixed cases

const std::vector<float> kFloatInput = {
    -1.25, 0.5,  -0.5, 1.25,  0.25,  -0.75, 1.0,  0.0,  -1.0, 0.75,  -0.25,
    -1.25, 0.5,  -0.5, 1.25,  0.25,  -0.75, 1.0,  0.0,  -1.0, 0.75,  -0.25,
    -1.25, 0.5,  -0.5, 1.25,  0.25,  -0.75, 1.0,  0.0,  -1.0, 0.75};  // [1,4,4,2]
const std::vector<float> kFloatFilter = {
    -1.5, 1.0,  0.0, -1.0, 1.5,  0.5, -0.5, -1.5, 1.0, 0.0, -1.0, 1.5,
    0.5,  -0.5, -1.5, 1.0, 0.0, -1.0, 1.5,  0.5,  -0.5, -1.5, 1.0, 0.0};  // [3,2,2,2]
const std::vector<float> kFloatBias = {0.5f, -1.0f, 0.25f};

ConvSpec FloatSpec(Conv2DParams params) {
  ConvSpec s;
  s.input_shape = {1, 4, 4, 2};
  s.filter_shape = {3, 2, 2, 2};
  s.params = params;
  return s;
}

TEST(Conv2DFloat, ValidStride2) {
  for (int threads : {1, 2}) {
    std::vector<int32_t> shape;
    EXPECT_THAT(RunConv(FloatSpec(Params(Padding::kValid, 2, 2)), kFloatInput, kFloatFilter,
                        &kFloatBias, threads, &shape),
                ElementsAreArray<float>({2.5, -1.625, -1.25, -1.125, -2.875, 4.25, 4.5, -5.25,
                                         -2.625, -0.5, 4.5, -2.625}));
    EXPECT_THAT(shape, ElementsAre(1, 2, 2, 3));
  }
}

TEST(Conv2DFloat, SameStride1Relu6) {
  const std::vector<float> expected = {
      2.5, 0.0, 0.0, 2.75, 0.0, 1.5, 0.0, 0.0, 4.25, 1.0, 0.5, 0.0,  4.875, 0.0, 0.0, 0.0,
      0.0, 4.25, 0.0, 1.5, 1.5, 0.0, 0.0, 0.0, 4.5,  0.0, 0.0, 0.0,  0.0,   4.25, 0.0, 4.5,
      0.0, 1.75, 0.0, 0.0, 3.25, 0.0, 0.0, 0.0, 0.0, 2.5, 0.0, 2.125, 0.0,  2.75, 0.0, 0.0};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunConv(FloatSpec(Params(Padding::kSame, 1, 1, 1, 1, Activation::kRelu6)),
                        kFloatInput, kFloatFilter, &kFloatBias, threads),
                ElementsAreArray(expected));
  }
}

TEST(Conv2DFloat, SameDilation2) {
  const std::vector<float> expected = {
      2.5,  -1.875, 0.0,   -0.125, -3.125, 0.125,  -1.5, -2.125, 3.5,   1.0,  -0.5,   0.75,
      0.75, 0.375,  0.125, 3.0,    -5.875, -0.625, 1.875, 0.375, 0.75,  0.375, -0.25, 1.0,
      2.75, -3.75,  -0.5,  2.625,  -5.625, -0.625, -1.25, 0.625, 3.5,   0.75, 0.0,    0.25,
      1.5,  -2.5,   -0.25, 2.875,  -2.875, 0.25,   -1.0, 1.0,    -0.375, -0.875, -0.25, 0.5};
  for (int threads : {1, 2}) {
    ConvSpec s = FloatSpec(Params(Padding::kSame, 1, 1, 2, 2));
    EXPECT_THAT(RunConv(s, kFloatInput, kFloatFilter, &kFloatBias, threads),
                ElementsAreArray(expected));
    s.filter_is_input = true;
    EXPECT_THAT(RunConv(s, kFloatInput, kFloatFilter, &kFloatBias, threads),
                ElementsAreArray(expected));
  }
}

TEST(Conv2DFloat, SameUnevenStrideDilationRelu) {
  for (int threads : {1, 2}) {
    std::vector<int32_t> shape;
    EXPECT_THAT(RunConv(FloatSpec(Params(Padding::kSame, 2, 1, 2, 2, Activation::kRelu)),
                        kFloatInput, kFloatFilter, &kFloatBias, threads, &shape),
                ElementsAreArray<float>({0.75, 0.375, 0.125, 3.0, 0.0, 0.0, 1.875, 0.375, 0.75,
                                         0.375, 0.0, 1.0, 1.5, 0.0, 0.0, 2.875, 0.0, 0.25, 0.0,
                                         1.0, 0.0, 0.0, 0.0, 0.5}));
    EXPECT_THAT(shape, ElementsAre(1, 2, 4, 3));
  }
}

TEST(Conv2DFloat, NoBias) {
  EXPECT_THAT((RunConv<float, float>(FloatSpec(Params(Padding::kValid, 2, 2)), kFloatInput,
                                     kFloatFilter, nullptr, 1)),
              ElementsAreArray<float>({2.0, -0.625, -1.5, -1.625, -1.875, 4.0, 4.0, -4.25,
                                       -2.875, -1.0, 5.5, -2.875}));
}

TEST(Conv2DFloat, Grouped) {
  // 4 input channels, filters with 2 input channels: 2 groups of 2 filters.
  ConvSpec s;
  s.input_shape = {1, 2, 2, 4};
  s.filter_shape = {4, 1, 1, 2};
  s.params = Params(Padding::kValid, 1, 1);
  const std::vector<float> input = {-2.0, 1.5,  0.5, -0.5, -1.5, 2.0, 1.0, 0.0,
                                    -1.0, -2.0, 1.5, 0.5,  -0.5, -1.5, 2.0, 1.0};
  const std::vector<float> filter = {-1.0, 0.0, 1.0, -0.5, 0.5, -1.0, 0.0, 1.0};
  const std::vector<float> bias = {0, 1, 2, 3};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunConv(s, input, filter, &bias, threads),
                ElementsAreArray<float>({2.0, -1.75, 2.75, 2.5, 1.5, -1.5, 2.5, 3.0, 1.0, 1.0,
                                         2.25, 3.5, 0.5, 1.25, 2.0, 4.0}));
  }
}

// uint8: input (0.5, 128), filter (0.25, 120), bias scale 0.125.
const std::vector<uint8_t> kU8Input = {60,  137, 214, 130, 207, 123, 200, 116, 193, 109, 186,
                                       102, 179, 95,  172, 88,  165, 81,  158, 74,  151, 67,
                                       144, 60,  137, 214, 130, 207, 123, 200, 116, 193};
const std::vector<uint8_t> kU8Filter = {70,  115, 160, 88,  133, 178, 106, 151,
                                        79,  124, 169, 97,  142, 70,  115, 160,
                                        88,  133, 178, 106, 151, 79,  124, 169};
const std::vector<int32_t> kU8Bias = {100, -200, 37};

ConvSpec Uint8Spec(Conv2DParams params, Quantization out_q) {
  ConvSpec s = FloatSpec(params);
  s.in_q = Q(0.5f, 128);
  s.filter_q = Q(0.25f, 120);
  s.bias_q = Q(0.125f, 0);
  s.out_q = std::move(out_q);
  return s;
}

TEST(Conv2DUint8, ValidStride2) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunConv(Uint8Spec(Params(Padding::kValid, 2, 2), Q(16.0f, 100)), kU8Input,
                        kU8Filter, &kU8Bias, threads),
                ElementsAreArray<uint8_t>({139, 161, 171, 71, 110, 123, 170, 99, 111, 165, 99,
                                           103}));
  }
}

TEST(Conv2DUint8, SameRelu) {
  const std::vector<uint8_t> expected = {
      139, 161, 171, 100, 110, 127, 100, 110, 123, 100, 100, 105, 100, 111, 116, 100,
      111, 112, 100, 111, 108, 100, 112, 111, 170, 100, 111, 168, 100, 107, 165, 100,
      103, 125, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 103, 104, 110};
  for (int threads : {1, 2}) {
    ConvSpec s = Uint8Spec(Params(Padding::kSame, 1, 1, 1, 1, Activation::kRelu), Q(16.0f, 100));
    EXPECT_THAT(RunConv(s, kU8Input, kU8Filter, &kU8Bias, threads), ElementsAreArray(expected));
    s.filter_is_input = true;
    EXPECT_THAT(RunConv(s, kU8Input, kU8Filter, &kU8Bias, threads), ElementsAreArray(expected));
  }
}

TEST(Conv2DUint8, SameDilation2) {
  const std::vector<uint8_t> expected = {
      88,  88,  92,  85,  105, 111, 80,  104, 109, 91,  120, 123, 111, 113, 119, 118,
      156, 156, 53,  105, 112, 45,  101, 105, 144, 150, 160, 158, 93,  111, 156, 93,
      107, 114, 52,  60,  124, 120, 120, 111, 105, 103, 113, 105, 102, 94,  89,  88};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunConv(Uint8Spec(Params(Padding::kSame, 1, 1, 2, 2), Q(16.0f, 100)), kU8Input,
                        kU8Filter, &kU8Bias, threads),
                ElementsAreArray(expected));
  }
}

// int8: input (0.5, -3), output (40, 5); per-channel filter scales 1/4, 1/8, 1/16.
const std::vector<int8_t> kI8Input = {-121, 0,   121, -11, 110, -22, 99,  -33, 88,   -44, 77,
                                      -55,  66,  -66, 55,  -77, 44,  -88, 33,  -99,  22,  -110,
                                      11,   -121, 0,  121, -11, 110, -22, 99,  -33,  88};
const std::vector<int8_t> kI8Filter = {-114, -19, 76,  -76,  19, 114, -38, 57,
                                       -95,  0,   95,  -57,  38, -114, -19, 76,
                                       -76,  19,  114, -38,  57, -95,  0,   95};
const std::vector<int32_t> kI8Bias = {300, -150, 41};

ConvSpec Int8Spec(Conv2DParams params, bool per_channel) {
  ConvSpec s = FloatSpec(params);
  s.in_q = Q(0.5f, -3);
  s.out_q = Q(40.0f, 5);
  if (per_channel) {
    s.filter_q = QPerAxis({0.25f, 0.125f, 0.0625f}, {0, 0, 0}, 0);
    s.bias_q = QPerAxis({0.125f, 0.0625f, 0.03125f}, {0, 0, 0}, 0);
  } else {
    s.filter_q = Q(0.1f, 0);
    s.bias_q = Q(0.05f, 0);
  }
  return s;
}

TEST(Conv2DInt8PerChannel, ValidStride2) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunConv(Int8Spec(Params(Padding::kValid, 2, 2), true), kI8Input, kI8Filter,
                        &kI8Bias, threads),
                ElementsAreArray<int8_t>({51, 46, 27, -40, 11, 10, 91, 3, 6, 90, 6, 5}));
  }
}

TEST(Conv2DInt8PerChannel, SameRelu) {
  const std::vector<int8_t> expected = {51, 46, 27, 5,  9,  11, 5, 11, 10, 5,  6,  7,
                                        5,  13, 9,  5,  15, 8,  5, 16, 8,  5,  18, 10,
                                        91, 5,  6,  90, 5,  6,  90, 6, 5,  39, 5,  5,
                                        5,  5,  5,  5,  5,  5,  5, 5,  5,  11, 9,  8};
  for (int threads : {1, 2}) {
    ConvSpec s = Int8Spec(Params(Padding::kSame, 1, 1, 1, 1, Activation::kRelu), true);
    EXPECT_THAT(RunConv(s, kI8Input, kI8Filter, &kI8Bias, threads), ElementsAreArray(expected));
    s.filter_is_input = true;
    EXPECT_THAT(RunConv(s, kI8Input, kI8Filter, &kI8Bias, threads), ElementsAreArray(expected));
  }
}

TEST(Conv2DInt8PerChannel, SameDilation2Stride2) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunConv(Int8Spec(Params(Padding::kSame, 2, 2, 2, 2), true), kI8Input, kI8Filter,
                        &kI8Bias, threads),
                ElementsAreArray<int8_t>({30, 45, 23, -70, 9, 7, 26, 11, 6, 3, 1, 2}));
  }
}

TEST(Conv2DInt8PerChannel, NoBias) {
  EXPECT_THAT((RunConv<int8_t, int32_t>(Int8Spec(Params(Padding::kValid, 2, 2), true),
                                        kI8Input, kI8Filter, nullptr, 1)),
              ElementsAreArray<int8_t>({50, 46, 27, -41, 11, 10, 90, 4, 6, 89, 6, 5}));
}

TEST(Conv2DInt8PerTensor, Same) {
  const std::vector<int8_t> expected = {
      23,  37, 40, -13, 8,   14,  -13, 9,  13, -18, 6,  8,  -14, 12, 11, -14,
      13,  10, -14, 14, 9,   -18, 15,  13, 39, 4,   7,  39, 5,   6,  39, 6,
      5,   18, -11, -12, -9, -5,  1,   -8, -4, 1,   -6, -3, 1,   7,  8,  10};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunConv(Int8Spec(Params(Padding::kSame, 1, 1), false), kI8Input, kI8Filter,
                        &kI8Bias, threads),
                ElementsAreArray(expected));
  }
}

// Halves of the requantization round away from zero in fixed point:
// M = 0.5 (1.0 * 0.5 / 1.0), acc = -3 -> SRDHM gives -1 (the double-rounding
// result TFLite's reference conv produces), acc = 3 -> 2, acc = -9 -> -4.
TEST(Conv2DInt8PerTensor, FixedPointRoundingOfHalves) {
  ConvSpec s;
  s.input_shape = {1, 1, 1, 1};
  s.filter_shape = {4, 1, 1, 1};
  s.params = Params(Padding::kValid, 1, 1);
  s.in_q = Q(1.0f, 0);
  s.filter_q = Q(0.5f, 0);
  s.bias_q = Q(0.5f, 0);
  s.out_q = Q(1.0f, 0);
  const std::vector<int8_t> filter = {1, 1, 3, 3};
  const std::vector<int32_t> bias = {0, 0, 0, 0};
  EXPECT_THAT(RunConv<int8_t>(s, {-3}, filter, &bias, 1), ElementsAre(-1, -1, -4, -4));
  EXPECT_THAT(RunConv<int8_t>(s, {3}, filter, &bias, 1), ElementsAre(2, 2, 5, 5));
}

// ------------------------------------------------ randomized, bit-exact

uint32_t NextRandom(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

struct Geometry {
  int batches, in_h, in_w, in_c, out_c, f_h, f_w, groups;
  Padding padding;
  int stride_h, stride_w, dil_h, dil_w;
};

// Output size and padding as TFLite computes them.
void WindowOf(const Geometry& g, int* out_h, int* out_w, int* pad_h, int* pad_w) {
  auto dim = [](Padding p, int in, int f, int s, int d, int* out, int* pad) {
    const int eff = (f - 1) * d + 1;
    *out = p == Padding::kSame ? (in + s - 1) / s : (in + s - eff) / s;
    *pad = std::max(0, ((*out - 1) * s + eff - in) / 2);
  };
  dim(g.padding, g.in_h, g.f_h, g.stride_h, g.dil_h, out_h, pad_h);
  dim(g.padding, g.in_w, g.f_w, g.stride_w, g.dil_w, out_w, pad_w);
}

// TFLite's reference loops, transcribed: Acc is float or int32; finish maps
// (accumulator, out_channel) to the output value.
template <class T, class Acc, class Term, class Finish>
std::vector<T> NaiveConv(const Geometry& g, const std::vector<T>& input, Term term,
                         Finish finish) {
  int out_h, out_w, pad_h, pad_w;
  WindowOf(g, &out_h, &out_w, &pad_h, &pad_w);
  const int fd = g.in_c / g.groups, per_group = g.out_c / g.groups;
  std::vector<T> out;
  for (int b = 0; b < g.batches; ++b)
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        for (int oc = 0; oc < g.out_c; ++oc) {
          const int group = oc / per_group;
          Acc acc = 0;
          for (int fy = 0; fy < g.f_h; ++fy) {
            const int iy = oy * g.stride_h - pad_h + g.dil_h * fy;
            for (int fx = 0; fx < g.f_w; ++fx) {
              const int ix = ox * g.stride_w - pad_w + g.dil_w * fx;
              if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
              for (int ic = 0; ic < fd; ++ic) {
                const size_t in_index =
                    ((static_cast<size_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c + ic +
                    group * fd;
                const size_t f_index = ((static_cast<size_t>(oc) * g.f_h + fy) * g.f_w + fx) * fd + ic;
                acc += term(input[in_index], f_index);
              }
            }
          }
          out.push_back(finish(acc, oc));
        }
  return out;
}

const Geometry kRandomGeometries[] = {
    {1, 7, 6, 3, 5, 3, 3, 1, Padding::kSame, 1, 1, 1, 1},
    {2, 9, 8, 4, 70, 3, 2, 1, Padding::kSame, 2, 1, 1, 2},   // > one channel block
    {1, 11, 10, 6, 9, 3, 3, 3, Padding::kValid, 1, 2, 2, 1},  // grouped, dilated
    {1, 5, 5, 130, 67, 1, 1, 1, Padding::kValid, 1, 1, 1, 1},  // 1x1, many channels
    {2, 8, 8, 8, 16, 5, 5, 2, Padding::kSame, 3, 3, 1, 1},
    {1, 6, 7, 2, 3, 4, 3, 1, Padding::kSame, 2, 2, 3, 2},
};

ConvSpec SpecOf(const Geometry& g) {
  ConvSpec s;
  s.input_shape = {g.batches, g.in_h, g.in_w, g.in_c};
  s.filter_shape = {g.out_c, g.f_h, g.f_w, g.in_c / g.groups};
  s.params = Params(g.padding, g.stride_h, g.stride_w, g.dil_h, g.dil_w);
  return s;
}

TEST(Conv2DRandomized, FloatMatchesReferenceLoopsBitExact) {
  // float32 runs the reference kernel with the scalar ISA (the vector kernels
  // sum in another order: optimized_float_test checks them within rounding).
  optimized::ScopedIsaOverride reference_kernels(optimized::Isa::kScalar);
  uint32_t seed = 1;
  for (const Geometry& g : kRandomGeometries) {
    ConvSpec s = SpecOf(g);
    auto random_floats = [&](size_t n) {
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>(NextRandom(&seed) % 20001) / 7919.0f - 1.25f;
      return v;
    };
    const std::vector<float> input = random_floats(static_cast<size_t>(g.batches) * g.in_h * g.in_w * g.in_c);
    const std::vector<float> filter = random_floats(static_cast<size_t>(g.out_c) * g.f_h * g.f_w * (g.in_c / g.groups));
    const std::vector<float> bias = random_floats(g.out_c);
    const std::vector<float> expected = NaiveConv<float, float>(
        g, input, [&](float x, size_t fi) { return x * filter[fi]; },
        [&](float acc, int oc) { return acc + bias[oc]; });
    for (int threads : {1, 2}) {
      const std::vector<float> got = RunConv(s, input, filter, &bias, threads);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], expected[i]) << "geometry " << (&g - kRandomGeometries) << " index " << i;
    }
  }
}

template <class T>
void CheckRandomQuantized(bool per_channel) {
  uint32_t seed = 7;
  for (const Geometry& g : kRandomGeometries) {
    ConvSpec s = SpecOf(g);
    const bool is_uint8 = std::is_same_v<T, uint8_t>;
    const int32_t in_zp = is_uint8 ? 131 : -7, out_zp = is_uint8 ? 120 : 3;
    const int32_t filter_zp = is_uint8 ? 117 : 0;
    const float in_scale = 0.05f, out_scale = 0.8f + 0.01f * (&g - kRandomGeometries);
    std::vector<float> filter_scales(per_channel ? g.out_c : 1);
    for (size_t c = 0; c < filter_scales.size(); ++c) filter_scales[c] = 0.002f + 0.0007f * c;
    s.in_q = Q(in_scale, in_zp);
    s.out_q = Q(out_scale, out_zp);
    std::vector<int64_t> zps(filter_scales.size(), filter_zp);
    s.filter_q = QPerAxis(filter_scales, zps, 0);
    std::vector<float> bias_scales;
    for (float fs : filter_scales) bias_scales.push_back(in_scale * fs);
    s.bias_q = QPerAxis(bias_scales, std::vector<int64_t>(bias_scales.size(), 0), 0);
    s.params.activation = Activation::kRelu6;

    auto random_values = [&](size_t n, int lo, int hi) {
      std::vector<T> v(n);
      for (T& x : v) x = static_cast<T>(lo + static_cast<int>(NextRandom(&seed) % (hi - lo + 1)));
      return v;
    };
    const int lo = is_uint8 ? 0 : -128, hi = is_uint8 ? 255 : 127;
    const std::vector<T> input = random_values(static_cast<size_t>(g.batches) * g.in_h * g.in_w * g.in_c, lo, hi);
    const std::vector<T> filter = random_values(static_cast<size_t>(g.out_c) * g.f_h * g.f_w * (g.in_c / g.groups), is_uint8 ? 0 : -127, hi);
    std::vector<int32_t> bias(g.out_c);
    for (int32_t& b : bias) b = static_cast<int32_t>(NextRandom(&seed) % 20001) - 10000;

    std::vector<int32_t> multipliers, shifts;
    for (int c = 0; c < g.out_c; ++c) {
      const float fs = filter_scales[per_channel ? c : 0];
      const double real = is_uint8 ? static_cast<double>(in_scale * fs) / out_scale
                                   : static_cast<double>(in_scale) * fs / out_scale;
      int32_t m;
      int sh;
      quant::QuantizeMultiplier(real, &m, &sh);
      multipliers.push_back(m);
      shifts.push_back(sh);
    }
    int32_t act_min, act_max;
    ASSERT_TRUE(quant::ActivationRangeQuantized<T>(Activation::kRelu6, out_scale, out_zp, &act_min, &act_max));
    const std::vector<T> expected = NaiveConv<T, int32_t>(
        g, input,
        [&](T x, size_t fi) {
          return (static_cast<int32_t>(filter[fi]) - filter_zp) * (static_cast<int32_t>(x) - in_zp);
        },
        [&](int32_t acc, int oc) {
          int32_t v = quant::MultiplyByQuantizedMultiplier(acc + bias[oc], multipliers[oc], shifts[oc]);
          v = std::min(std::max(v + out_zp, act_min), act_max);
          return static_cast<T>(v);
        });
    for (int threads : {1, 2}) {
      const std::vector<T> got = RunConv(s, input, filter, &bias, threads);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(expected[i]))
            << "geometry " << (&g - kRandomGeometries) << " index " << i;
    }
  }
}

TEST(Conv2DRandomized, Uint8MatchesReferenceLoops) { CheckRandomQuantized<uint8_t>(false); }
TEST(Conv2DRandomized, Int8PerChannelMatchesReferenceLoops) { CheckRandomQuantized<int8_t>(true); }
TEST(Conv2DRandomized, Int8PerTensorMatchesReferenceLoops) { CheckRandomQuantized<int8_t>(false); }

// ------------------------------------------------------------- bad input

// Builds a conv whose tensors are given explicitly and returns TryBuild's status.
struct BadConv {
  DataType in_type = DataType::kInt8, filter_type = DataType::kInt8, out_type = DataType::kInt8;
  std::vector<int32_t> input_shape = {1, 4, 4, 2}, filter_shape = {3, 2, 2, 2};
  Quantization in_q = Q(0.5f, 0), filter_q = QPerAxis({0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0),
               out_q = Q(1.0f, 0);
  int bias_size = 3;
  DataType bias_type = DataType::kInt32;
  Conv2DParams params = Params(Padding::kSame, 1, 1);

  Status Build() const {
    OpModel m;
    const int in = m.AddInput(in_type, input_shape, in_q);
    size_t n = 1;
    for (int32_t d : filter_shape) n *= d;
    const int f = m.AddConstBytes(filter_type, filter_shape,
                                  std::vector<uint8_t>(n * (filter_type == DataType::kFloat32 ? 4 : 1)),
                                  filter_q);
    const int b = bias_size < 0 ? -1
                                : m.AddConstBytes(bias_type, {bias_size},
                                                  std::vector<uint8_t>(bias_size * 4), Q(0.05f, 0));
    const int out = m.AddOutput(out_type, out_q);
    m.AddOp(BuiltinOp::kConv2d, {in, f, b}, {out}, params, 3);
    return m.TryBuild();
  }
};

void ExpectFailure(const BadConv& c, const std::string& fragment) {
  const Status st = c.Build();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("CONV_2D"));
  EXPECT_THAT(st.message(), HasSubstr(fragment));
}

TEST(Conv2DErrors, Valid) { EXPECT_TRUE(BadConv{}.Build().ok()) << BadConv{}.Build().message(); }

TEST(Conv2DErrors, WrongInputRank) {
  BadConv c;
  c.input_shape = {4, 4, 2};
  ExpectFailure(c, "must have rank 4");
}

TEST(Conv2DErrors, ChannelMismatch) {
  BadConv c;
  c.input_shape = {1, 4, 4, 3};
  ExpectFailure(c, "not a multiple of the filter's 2 input channels");
}

TEST(Conv2DErrors, PerAxisScaleCountMismatch) {
  BadConv c;
  c.filter_q = QPerAxis({0.1f, 0.2f}, {0, 0}, 0);
  ExpectFailure(c, "2 per-axis scales, expected one per output channel (3)");
}

TEST(Conv2DErrors, PerAxisWrongDimension) {
  BadConv c;
  c.filter_q = QPerAxis({0.1f, 0.2f, 0.3f}, {0, 0, 0}, 3);
  ExpectFailure(c, "quantized_dimension 3");
}

TEST(Conv2DErrors, NonZeroInt8FilterZeroPoint) {
  BadConv c;
  c.filter_q = QPerAxis({0.1f, 0.2f, 0.3f}, {0, 1, 0}, 0);
  ExpectFailure(c, "zero points of 0");
}

TEST(Conv2DErrors, Uint8PerAxisWeights) {
  BadConv c;
  c.in_type = c.filter_type = c.out_type = DataType::kUInt8;
  c.in_q = Q(0.5f, 128);
  c.out_q = Q(1.0f, 128);
  ExpectFailure(c, "per-axis weights must be INT8");
}

TEST(Conv2DErrors, HybridWeights) {
  BadConv c;  // hybrid (float activations, int8 weights) with dilation
  c.in_type = c.out_type = DataType::kFloat32;
  c.bias_type = DataType::kFloat32;
  c.params.dilation_h = 2;
  ExpectFailure(c, "hybrid CONV_2D with dilation 2x1 is not supported");
}

TEST(Conv2DErrors, Int16Activations) {
  BadConv c;
  c.in_type = c.out_type = DataType::kInt16;
  ExpectFailure(c, "expected INT64 for INT16 input");  // the INT32 bias
  c.bias_size = -1;
  EXPECT_TRUE(c.Build().ok()) << c.Build().message();
  c.filter_type = DataType::kInt16;
  ExpectFailure(c, "int16x8 needs INT8 weights");
  c.filter_type = DataType::kInt8;
  c.in_q = Q(0.5f, 3);
  ExpectFailure(c, "(INT16) must have zero point 0");
}

TEST(Conv2DErrors, BiasSize) {
  BadConv c;
  c.bias_size = 4;
  ExpectFailure(c, "has 4 elements, expected 3");
}

TEST(Conv2DErrors, BiasType) {
  BadConv c;
  c.bias_type = DataType::kFloat32;
  ExpectFailure(c, "expected INT32");
}

TEST(Conv2DErrors, MissingQuantization) {
  BadConv c;
  c.in_q = Quantization{};
  ExpectFailure(c, "has no quantization parameters");
}

TEST(Conv2DErrors, ZeroStride) {
  BadConv c;
  c.params.stride_w = 0;
  ExpectFailure(c, "must be positive");
}

TEST(Conv2DErrors, TanhActivation) {
  BadConv c;
  c.params.activation = Activation::kTanh;
  ExpectFailure(c, "fused activation TANH is not supported");
}

TEST(Conv2DErrors, Uint8BiasScaleMismatch) {
  BadConv c;
  c.in_type = c.filter_type = c.out_type = DataType::kUInt8;
  c.in_q = Q(0.5f, 128);
  c.filter_q = Q(0.5f, 128);  // in * filter = 0.25, bias scale 0.05
  c.out_q = Q(1.0f, 128);
  ExpectFailure(c, "does not match input scale * filter scale");
}

}  // namespace
}  // namespace delegato
