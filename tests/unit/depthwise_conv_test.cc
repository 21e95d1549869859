// DEPTHWISE_CONV_2D: float, legacy uint8, int8 per-channel (axis 3) and
// per-tensor weights, depth multipliers, dilation. Fixed expected values come
// from TFLite's reference kernels (BUILTIN_REF); randomized cases compare
// against a transcription of the reference loops, bit for bit.
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

DepthwiseConv2DParams Params(Padding padding, int stride_h, int stride_w, int dilation_h = 1,
                             int dilation_w = 1, Activation act = Activation::kNone,
                             int depth_multiplier = 0) {
  DepthwiseConv2DParams p;
  p.padding = padding;
  p.stride_h = stride_h;
  p.stride_w = stride_w;
  p.dilation_h = dilation_h;
  p.dilation_w = dilation_w;
  p.activation = act;
  p.depth_multiplier = depth_multiplier;
  return p;
}

struct DwSpec {
  std::vector<int32_t> input_shape = {1, 4, 4, 2}, filter_shape = {1, 2, 2, 4};
  DepthwiseConv2DParams params;
  Quantization in_q, filter_q, bias_q, out_q;
  bool filter_is_input = false;
};

template <class T, class B>
std::vector<T> RunDw(const DwSpec& s, const std::vector<T>& input, const std::vector<T>& filter,
                     const std::vector<B>* bias, int threads,
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
  m.AddOp(BuiltinOp::kDepthwiseConv2d, inputs, {out}, s.params, 3);
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
const std::vector<float> kFloatFilter = {-1.5, 1.0, 0.0,  -1.0, 1.5,  0.5, -0.5, -1.5,
                                         1.0,  0.0, -1.0, 1.5,  0.5, -0.5, -1.5, 1.0};  // [1,2,2,4]
const std::vector<float> kFloatBias = {0.5f, -1.0f, 0.25f, 2.0f};

TEST(DepthwiseConv2DFloat, ValidStride2DepthMultiplier2) {
  DwSpec s;
  s.params = Params(Padding::kValid, 2, 2, 1, 1, Activation::kNone, 2);
  for (int threads : {1, 2}) {
    std::vector<int32_t> shape;
    EXPECT_THAT(RunDw(s, kFloatInput, kFloatFilter, &kFloatBias, threads, &shape),
                ElementsAreArray<float>({0.5, -2.375, 0.75, -0.5, 2.75, -0.875, 0.375, 2.25,
                                         1.25, -1.875, 0.625, 3.625, -2.0, -0.375, -1.125,
                                         2.25}));
    EXPECT_THAT(shape, ElementsAre(1, 2, 2, 4));
  }
}

TEST(DepthwiseConv2DFloat, SameDilation2Relu) {
  const std::vector<float> expected = {
      0.375, 0.0,   2.125, 0.75,  0.0, 0.0, 0.25, 2.625, 0.875, 0.0,   1.125, 0.375, 1.0,
      0.0,   0.75,  1.25,  0.0,   0.0, 1.125, 0.0, 2.375, 0.0,  0.0,   3.875, 2.125, 0.0,
      0.5,   0.0,   0.875, 0.0,   0.5, 2.375, 0.25, 0.0,  2.0,  3.125, 2.75,  0.0,   0.0,
      3.875, 2.5,   0.0,   0.0,   2.5, 0.75,  0.0,  0.25, 2.5,  0.5,   0.0,   0.75,  3.5,
      2.75,  0.0,   0.375, 1.375, 0.0, 0.0,   0.0,  2.25, 0.0,  0.0,   0.25,  2.25};
  DwSpec s;
  s.params = Params(Padding::kSame, 1, 1, 2, 2, Activation::kRelu, 2);
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunDw(s, kFloatInput, kFloatFilter, &kFloatBias, threads),
                ElementsAreArray(expected));
  }
}

TEST(DepthwiseConv2DFloat, NoBiasUnevenStride) {
  DwSpec s;
  s.params = Params(Padding::kSame, 2, 1);  // depth_multiplier left 0: the shapes decide
  for (int threads : {1, 2}) {
    std::vector<int32_t> shape;
    EXPECT_THAT(
        (RunDw<float, float>(s, kFloatInput, kFloatFilter, nullptr, threads, &shape)),
        ElementsAreArray<float>({0.0,   -1.375, 0.5,   -2.5,  1.125,  -0.625, 2.375, -2.5,
                                 2.25,  0.125,  0.125, 0.25,  -0.25,  1.0,    -0.25, 0.375,
                                 0.75,  -0.875, 0.375, 1.625, 1.875,  -0.125, 0.875, 0.25,
                                 -2.5,  0.625,  -1.375, 0.25, 0.875,  -1.25,  -0.75, 0.625}));
    EXPECT_THAT(shape, ElementsAre(1, 2, 4, 4));
  }
}

TEST(DepthwiseConv2DFloat, DepthMultiplier1SameRelu6) {
  DwSpec s;
  s.input_shape = {1, 3, 3, 4};
  s.filter_shape = {1, 3, 3, 4};
  s.params = Params(Padding::kSame, 1, 1, 1, 1, Activation::kRelu6, 1);
  const std::vector<float> input = {-3.0, 0.5,  -2.5, 1.0, -2.0, 1.5, -1.5, 2.0, -1.0,
                                    2.5,  -0.5, 3.0,  0.0, -3.0, 0.5, -2.5, 1.0, -2.0,
                                    1.5,  -1.5, 2.0,  -1.0, 2.5, -0.5, 3.0, 0.0, -3.0,
                                    0.5,  -2.5, 1.0,  -2.0, 1.5, -1.5, 2.0, -1.0, 2.5};
  const std::vector<float> filter = {-1.0, 0.25,  -0.75, 0.5,  -0.5, 0.75,  -0.25, 1.0,  0.0,
                                     -1.0, 0.25,  -0.75, 0.5,  -0.5, 0.75,  -0.25, 1.0,  0.0,
                                     -1.0, 0.25,  -0.75, 0.5,  -0.5, 0.75,  -0.25, 1.0,  0.0,
                                     -1.0, 0.25,  -0.75, 0.5,  -0.5, 0.75,  -0.25, 1.0,  0.0};
  const std::vector<float> bias = {1, -1, 0.5, 0};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunDw(s, input, filter, &bias, threads),
                ElementsAreArray<float>({0.25, 2.5, 5.5, 3.0,   0.0, 0.0, 3.625, 5.75, 0.0,
                                         0.0,  1.125, 2.0, 0.625, 0.0, 0.0, 0.0,  2.0,  0.0,
                                         0.0,  0.0, 6.0, 1.75,  0.0, 1.5, 5.875, 0.0,  4.75,
                                         0.0,  0.625, 0.0, 0.625, 0.0, 0.0, 0.0,  0.0,  0.0}));
  }
}

const std::vector<uint8_t> kU8Input = {60,  137, 214, 130, 207, 123, 200, 116, 193, 109, 186,
                                       102, 179, 95,  172, 88,  165, 81,  158, 74,  151, 67,
                                       144, 60,  137, 214, 130, 207, 123, 200, 116, 193};
const std::vector<uint8_t> kU8Filter = {70, 115, 160, 88,  133, 178, 106, 151,
                                        79, 124, 169, 97,  142, 70,  115, 160};
const std::vector<int32_t> kU8Bias = {100, -200, 37, 5};

DwSpec Uint8Spec(DepthwiseConv2DParams params) {
  DwSpec s;
  s.params = params;
  s.in_q = Q(0.5f, 128);
  s.filter_q = Q(0.25f, 120);
  s.bias_q = Q(0.125f, 0);
  s.out_q = Q(4.0f, 100);
  return s;
}

TEST(DepthwiseConv2DUint8, ValidStride2) {
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunDw(Uint8Spec(Params(Padding::kValid, 2, 2)), kU8Input, kU8Filter, &kU8Bias,
                      threads),
                ElementsAreArray<uint8_t>({201, 178, 86, 74, 0, 150, 56, 67, 47, 140, 185, 132,
                                           72, 137, 155, 125}));
  }
}

TEST(DepthwiseConv2DUint8, SameDilation2Relu) {
  const std::vector<uint8_t> expected = {
      143, 100, 105, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 124,
      159, 203, 109, 100, 210, 216, 100, 100, 100, 190, 100, 100, 100, 100, 100, 149,
      128, 196, 100, 174, 100, 185, 212, 115, 100, 183, 197, 112, 100, 100, 170, 100,
      115, 148, 125, 100, 100, 130, 100, 100, 100, 118, 100, 100, 100, 100, 100, 161};
  for (int threads : {1, 2}) {
    DwSpec s = Uint8Spec(Params(Padding::kSame, 1, 1, 2, 2, Activation::kRelu));
    EXPECT_THAT(RunDw(s, kU8Input, kU8Filter, &kU8Bias, threads), ElementsAreArray(expected));
    s.filter_is_input = true;
    EXPECT_THAT(RunDw(s, kU8Input, kU8Filter, &kU8Bias, threads), ElementsAreArray(expected));
  }
}

const std::vector<int8_t> kI8Input = {-121, 0,   121, -11, 110, -22, 99,  -33, 88,   -44, 77,
                                      -55,  66,  -66, 55,  -77, 44,  -88, 33,  -99,  22,  -110,
                                      11,   -121, 0,  121, -11, 110, -22, 99,  -33,  88};
const std::vector<int8_t> kI8Filter = {-114, -19, 76, -76, 19, 114, -38, 57,
                                       -95,  0,   95, -57, 38, -114, -19, 76};
const std::vector<int32_t> kI8Bias = {300, -150, 41, -7};

DwSpec Int8Spec(DepthwiseConv2DParams params, bool per_channel, Quantization out_q) {
  DwSpec s;
  s.params = params;
  s.in_q = Q(0.5f, -3);
  s.out_q = std::move(out_q);
  if (per_channel) {
    s.filter_q = QPerAxis({0.25f, 0.125f, 0.0625f, 0.5f}, {0, 0, 0, 0}, 3);
    s.bias_q = QPerAxis({0.125f, 0.0625f, 0.03125f, 0.25f}, {0, 0, 0, 0}, 0);
  } else {
    s.filter_q = Q(0.2f, 0);
    s.bias_q = Q(0.1f, 0);
  }
  return s;
}

TEST(DepthwiseConv2DInt8PerChannel, ValidStride2) {
  for (int threads : {1, 2}) {
    DwSpec s = Int8Spec(Params(Padding::kValid, 2, 2), true, Q(10.0f, 5));
    const std::vector<int8_t> expected = {127, 49, -2, -53, -128, 22, -10, -53,
                                          -57, 30, 26, 68,  -15,  32, 19,  68};
    EXPECT_THAT(RunDw(s, kI8Input, kI8Filter, &kI8Bias, threads), ElementsAreArray(expected));
    s.filter_is_input = true;
    EXPECT_THAT(RunDw(s, kI8Input, kI8Filter, &kI8Bias, threads), ElementsAreArray(expected));
  }
}

TEST(DepthwiseConv2DInt8PerChannel, SameDilation2Relu6) {
  const std::vector<int8_t> expected = {
      20,   -100, 20,   -100, -100, -100, -100, -100, -100, -100, -100, -100, -100,
      -100, -100, 20,   20,   20,   20,   -100, 20,   20,   -100, -100, -100, 20,
      -100, -100, -100, -100, -100, 20,   20,   20,   -100, 20,   -100, 20,   20,
      20,   -100, 20,   20,   20,   -100, -100, 20,   -100, 20,   20,   20,   -100,
      -100, 20,   -100, 20,   -100, 20,   -100, 20,   -100, -100, -100, 20};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunDw(Int8Spec(Params(Padding::kSame, 1, 1, 2, 2, Activation::kRelu6), true,
                               Q(0.05f, -100)),
                      kI8Input, kI8Filter, &kI8Bias, threads),
                ElementsAreArray(expected));
  }
}

TEST(DepthwiseConv2DInt8PerChannel, NoBias) {
  EXPECT_THAT((RunDw<int8_t, int32_t>(Int8Spec(Params(Padding::kValid, 2, 2), true, Q(10.0f, 5)),
                                      kI8Input, kI8Filter, nullptr, 1)),
              ElementsAreArray<int8_t>({127, 50, -2, -52, -128, 23, -10, -52, -61, 31, 26, 68,
                                        -19, 33, 18, 68}));
}

TEST(DepthwiseConv2DInt8PerTensor, Same) {
  const std::vector<int8_t> expected = {
      110, 76,  -18, -18, -128, 30,  -31, -18, -128, 32,  -43, -18, -128, -16, -88, 70,
      -112, 36, -69, -18, -95,  38,  -81, -18, -78,  41,  -94, -18, -71,  -8,  -128, 127,
      -45, 45,  74,  30,  -28,  47,  61,  30,  -11,  49,  49,  30,  21,   1,   2,   43,
      3,   -6,  57,  -25, 14,   -17, 53,  -23, 24,   -27, 48,  -21, 42,   9,   75,  -64};
  for (int threads : {1, 2}) {
    EXPECT_THAT(RunDw(Int8Spec(Params(Padding::kSame, 1, 1), false, Q(10.0f, 5)), kI8Input,
                      kI8Filter, &kI8Bias, threads),
                ElementsAreArray(expected));
  }
}

// ------------------------------------------------ randomized, bit-exact

uint32_t NextRandom(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

struct Geometry {
  int batches, in_h, in_w, in_c, multiplier, f_h, f_w;
  Padding padding;
  int stride_h, stride_w, dil_h, dil_w;
};

const Geometry kRandomGeometries[] = {
    {1, 7, 6, 3, 1, 3, 3, Padding::kSame, 1, 1, 1, 1},
    {2, 9, 8, 70, 1, 3, 3, Padding::kSame, 2, 2, 1, 1},   // > one channel block
    {1, 11, 10, 5, 3, 3, 3, Padding::kValid, 1, 2, 2, 1},  // multiplier 3, dilated
    {1, 6, 7, 40, 2, 5, 3, Padding::kSame, 2, 1, 2, 3},    // 80 outputs, multiplier 2
    {2, 5, 5, 8, 1, 1, 1, Padding::kValid, 1, 1, 1, 1},
};

template <class T, class Acc, class Term, class Finish>
std::vector<T> NaiveDepthwise(const Geometry& g, const std::vector<T>& input, Term term,
                              Finish finish) {
  auto dim = [](Padding p, int in, int f, int s, int d, int* out, int* pad) {
    const int eff = (f - 1) * d + 1;
    *out = p == Padding::kSame ? (in + s - 1) / s : (in + s - eff) / s;
    *pad = std::max(0, ((*out - 1) * s + eff - in) / 2);
  };
  int out_h, out_w, pad_h, pad_w;
  dim(g.padding, g.in_h, g.f_h, g.stride_h, g.dil_h, &out_h, &pad_h);
  dim(g.padding, g.in_w, g.f_w, g.stride_w, g.dil_w, &out_w, &pad_w);
  const int out_c = g.in_c * g.multiplier;
  std::vector<T> out;
  for (int b = 0; b < g.batches; ++b)
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        for (int ic = 0; ic < g.in_c; ++ic)
          for (int m = 0; m < g.multiplier; ++m) {
            const int oc = m + ic * g.multiplier;
            Acc acc = 0;
            for (int fy = 0; fy < g.f_h; ++fy)
              for (int fx = 0; fx < g.f_w; ++fx) {
                const int iy = oy * g.stride_h - pad_h + g.dil_h * fy;
                const int ix = ox * g.stride_w - pad_w + g.dil_w * fx;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                acc += term(input[((static_cast<size_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c + ic],
                            (static_cast<size_t>(fy) * g.f_w + fx) * out_c + oc);
              }
            out.push_back(finish(acc, oc));
          }
  return out;
}

DwSpec SpecOf(const Geometry& g) {
  DwSpec s;
  s.input_shape = {g.batches, g.in_h, g.in_w, g.in_c};
  s.filter_shape = {1, g.f_h, g.f_w, g.in_c * g.multiplier};
  s.params = Params(g.padding, g.stride_h, g.stride_w, g.dil_h, g.dil_w, Activation::kNone,
                    g.multiplier);
  return s;
}

TEST(DepthwiseConv2DRandomized, FloatMatchesReferenceLoopsBitExact) {
  // float32 runs the reference kernel with the scalar ISA (the vector kernels
  // sum in another order: optimized_float_test checks them within rounding).
  optimized::ScopedIsaOverride reference_kernels(optimized::Isa::kScalar);
  uint32_t seed = 3;
  for (const Geometry& g : kRandomGeometries) {
    const DwSpec s = SpecOf(g);
    auto random_floats = [&](size_t n) {
      std::vector<float> v(n);
      for (float& x : v) x = static_cast<float>(NextRandom(&seed) % 20001) / 7919.0f - 1.25f;
      return v;
    };
    const int out_c = g.in_c * g.multiplier;
    const auto input = random_floats(static_cast<size_t>(g.batches) * g.in_h * g.in_w * g.in_c);
    const auto filter = random_floats(static_cast<size_t>(g.f_h) * g.f_w * out_c);
    const auto bias = random_floats(out_c);
    const auto expected = NaiveDepthwise<float, float>(
        g, input, [&](float x, size_t fi) { return x * filter[fi]; },
        [&](float acc, int oc) { return acc + bias[oc]; });
    for (int threads : {1, 2}) {
      const std::vector<float> got = RunDw(s, input, filter, &bias, threads);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], expected[i]) << "geometry " << (&g - kRandomGeometries) << " index " << i;
    }
  }
}

template <class T>
void CheckRandomQuantized(bool per_channel) {
  uint32_t seed = 11;
  for (const Geometry& g : kRandomGeometries) {
    DwSpec s = SpecOf(g);
    const int out_c = g.in_c * g.multiplier;
    const bool is_uint8 = std::is_same_v<T, uint8_t>;
    const int32_t in_zp = is_uint8 ? 125 : 9, out_zp = is_uint8 ? 131 : -4;
    const int32_t filter_zp = is_uint8 ? 140 : 0;
    const float in_scale = 0.04f, out_scale = 0.3f;
    std::vector<float> filter_scales(per_channel ? out_c : 1);
    for (size_t c = 0; c < filter_scales.size(); ++c) filter_scales[c] = 0.003f + 0.0011f * c;
    s.in_q = Q(in_scale, in_zp);
    s.out_q = Q(out_scale, out_zp);
    s.filter_q = QPerAxis(filter_scales, std::vector<int64_t>(filter_scales.size(), filter_zp), 3);
    std::vector<float> bias_scales;
    for (float fs : filter_scales) bias_scales.push_back(in_scale * fs);
    s.bias_q = QPerAxis(bias_scales, std::vector<int64_t>(bias_scales.size(), 0), 0);
    s.params.activation = Activation::kReluN1To1;

    auto random_values = [&](size_t n, int lo, int hi) {
      std::vector<T> v(n);
      for (T& x : v) x = static_cast<T>(lo + static_cast<int>(NextRandom(&seed) % (hi - lo + 1)));
      return v;
    };
    const auto input = random_values(static_cast<size_t>(g.batches) * g.in_h * g.in_w * g.in_c,
                                     is_uint8 ? 0 : -128, is_uint8 ? 255 : 127);
    const auto filter = random_values(static_cast<size_t>(g.f_h) * g.f_w * out_c,
                                      is_uint8 ? 0 : -127, is_uint8 ? 255 : 127);
    std::vector<int32_t> bias(out_c);
    for (int32_t& b : bias) b = static_cast<int32_t>(NextRandom(&seed) % 4001) - 2000;

    std::vector<int32_t> multipliers, shifts;
    for (int c = 0; c < out_c; ++c) {
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
    ASSERT_TRUE(quant::ActivationRangeQuantized<T>(Activation::kReluN1To1, out_scale, out_zp,
                                                   &act_min, &act_max));
    const auto expected = NaiveDepthwise<T, int32_t>(
        g, input,
        [&](T x, size_t fi) {
          return (static_cast<int32_t>(filter[fi]) - filter_zp) * (static_cast<int32_t>(x) - in_zp);
        },
        [&](int32_t acc, int oc) {
          int32_t v = quant::MultiplyByQuantizedMultiplier(acc + bias[oc], multipliers[oc], shifts[oc]);
          return static_cast<T>(std::min(std::max(v + out_zp, act_min), act_max));
        });
    for (int threads : {1, 2}) {
      const std::vector<T> got = RunDw(s, input, filter, &bias, threads);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(expected[i]))
            << "geometry " << (&g - kRandomGeometries) << " index " << i;
    }
  }
}

TEST(DepthwiseConv2DRandomized, Uint8MatchesReferenceLoops) { CheckRandomQuantized<uint8_t>(false); }
TEST(DepthwiseConv2DRandomized, Int8PerChannelMatchesReferenceLoops) {
  CheckRandomQuantized<int8_t>(true);
}
TEST(DepthwiseConv2DRandomized, Int8PerTensorMatchesReferenceLoops) {
  CheckRandomQuantized<int8_t>(false);
}

// ------------------------------------------------------------- bad input

struct BadDw {
  DataType in_type = DataType::kInt8, filter_type = DataType::kInt8, out_type = DataType::kInt8;
  std::vector<int32_t> input_shape = {1, 4, 4, 2}, filter_shape = {1, 2, 2, 4};
  Quantization in_q = Q(0.5f, 0), out_q = Q(1.0f, 0);
  Quantization filter_q = QPerAxis({0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 3);
  std::vector<int32_t> bias_shape = {4};
  DepthwiseConv2DParams params = Params(Padding::kSame, 1, 1);

  Status Build() const {
    OpModel m;
    const int in = m.AddInput(in_type, input_shape, in_q);
    size_t n = 1;
    for (int32_t d : filter_shape) n *= d;
    const int f = m.AddConstBytes(filter_type, filter_shape,
                                  std::vector<uint8_t>(n * (filter_type == DataType::kFloat32 ? 4 : 1)),
                                  filter_q);
    size_t bn = 1;
    for (int32_t d : bias_shape) bn *= d;
    const int b = m.AddConstBytes(DataType::kInt32, bias_shape, std::vector<uint8_t>(bn * 4), Q(0.05f, 0));
    const int out = m.AddOutput(out_type, out_q);
    m.AddOp(BuiltinOp::kDepthwiseConv2d, {in, f, b}, {out}, params, 3);
    return m.TryBuild();
  }
};

void ExpectFailure(const BadDw& c, const std::string& fragment) {
  const Status st = c.Build();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("DEPTHWISE_CONV_2D"));
  EXPECT_THAT(st.message(), HasSubstr(fragment));
}

TEST(DepthwiseConv2DErrors, Valid) { EXPECT_TRUE(BadDw{}.Build().ok()) << BadDw{}.Build().message(); }

TEST(DepthwiseConv2DErrors, WrongFilterRank) {
  BadDw c;
  c.filter_shape = {2, 2, 4};
  ExpectFailure(c, "filter tensor \"t1\" must have rank 4");
}

TEST(DepthwiseConv2DErrors, FilterDim0) {
  BadDw c;
  c.filter_shape = {2, 2, 2, 4};
  c.filter_q = QPerAxis({0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 3);
  ExpectFailure(c, "must have shape [1, height, width, channels]");
}

TEST(DepthwiseConv2DErrors, ChannelMismatch) {
  BadDw c;
  c.input_shape = {1, 4, 4, 3};
  ExpectFailure(c, "not a multiple of the input's 3 channels");
}

TEST(DepthwiseConv2DErrors, PerAxisScaleCountMismatch) {
  BadDw c;
  c.filter_q = QPerAxis({0.1f, 0.2f, 0.3f}, {0, 0, 0}, 3);
  ExpectFailure(c, "3 per-axis scales, expected one per output channel (4)");
}

TEST(DepthwiseConv2DErrors, PerAxisWrongDimension) {
  BadDw c;
  c.filter_q = QPerAxis({0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 0);
  ExpectFailure(c, "quantized_dimension 0");
}

TEST(DepthwiseConv2DErrors, BiasRank) {
  BadDw c;
  c.bias_shape = {2, 2};
  ExpectFailure(c, "must have rank 1");
}

TEST(DepthwiseConv2DErrors, HybridWeights) {
  BadDw c;  // hybrid needs a FLOAT32 bias (here INT32)
  c.in_type = c.out_type = DataType::kFloat32;
  ExpectFailure(c, "expected FLOAT32 for FLOAT32 input");
}

TEST(DepthwiseConv2DErrors, OutputTypeMismatch) {
  BadDw c;
  c.out_type = DataType::kUInt8;
  ExpectFailure(c, "output \"t3\" UINT8");
}

}  // namespace
}  // namespace delegato
