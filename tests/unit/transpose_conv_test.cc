// TRANSPOSE_CONV: float, uint8, int8 (per-tensor and per-channel weights),
// int16x8 (INT64 or INT32 bias) and hybrid (float with int8 weights), SAME/VALID, strides, optional bias, fused
// activations. The fixed float case is TFLite's own; the randomized cases
// compare against a gather formulation (each output sums the input pixels
// that reach it), computed here independently of the kernel's scatter loop.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/quantization.h"
#include "hybrid_ties.h"
#include "litert_dump.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::DumpForLiteRt;
using ::delegato::testing::FillTieRows;
using ::delegato::testing::OpModel;
using ::delegato::testing::Q;
using ::delegato::testing::QPerAxis;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

struct Case {
  int batches = 1, in_h = 3, in_w = 3, in_c = 2, out_c = 3, filter_h = 3, filter_w = 3;
  int stride_h = 1, stride_w = 1;
  Padding padding = Padding::kSame;
  Activation act = Activation::kNone;
  bool bias = true;
  int out_h = 0, out_w = 0;  // 0: the natural size for the padding
  void Finish() {
    if (out_h == 0) out_h = padding == Padding::kSame ? in_h * stride_h : (in_h - 1) * stride_h + filter_h;
    if (out_w == 0) out_w = padding == Padding::kSame ? in_w * stride_w : (in_w - 1) * stride_w + filter_w;
  }
  int Pad(int out, int filter, int stride) const {
    const int n = padding == Padding::kSame ? (out + stride - 1) / stride : (out + stride - filter) / stride;
    return std::max((n - 1) * stride + filter - out, 0) / 2;
  }
  int version() const {
    if (act != Activation::kNone) return 4;
    return bias ? 3 : 2;
  }
};

// acc(b, oy, ox, oc) = sum of term(input index, filter index) over the
// (fy, fx, ic) that reach it; calls emit(output index, acc).
template <class Acc, class Term, class Emit>
void Gather(const Case& c, const Term& term, const Emit& emit) {
  const int pad_h = c.Pad(c.out_h, c.filter_h, c.stride_h);
  const int pad_w = c.Pad(c.out_w, c.filter_w, c.stride_w);
  int64_t index = 0;
  for (int b = 0; b < c.batches; ++b)
    for (int oy = 0; oy < c.out_h; ++oy)
      for (int ox = 0; ox < c.out_w; ++ox)
        for (int oc = 0; oc < c.out_c; ++oc, ++index) {
          Acc acc = 0;
          for (int fy = 0; fy < c.filter_h; ++fy) {
            const int ny = oy + pad_h - fy;
            if (ny < 0 || ny % c.stride_h != 0 || ny / c.stride_h >= c.in_h) continue;
            for (int fx = 0; fx < c.filter_w; ++fx) {
              const int nx = ox + pad_w - fx;
              if (nx < 0 || nx % c.stride_w != 0 || nx / c.stride_w >= c.in_w) continue;
              for (int ic = 0; ic < c.in_c; ++ic) {
                const int64_t in = ((int64_t{b} * c.in_h + ny / c.stride_h) * c.in_w + nx / c.stride_w) * c.in_c + ic;
                const int64_t f = ((int64_t{oc} * c.filter_h + fy) * c.filter_w + fx) * c.in_c + ic;
                acc += term(in, f);
              }
            }
          }
          emit(index, oc, acc);
        }
}

template <class T>
constexpr DataType TypeOf() {
  if constexpr (std::is_same_v<T, float>) return DataType::kFloat32;
  if constexpr (std::is_same_v<T, uint8_t>) return DataType::kUInt8;
  if constexpr (std::is_same_v<T, int8_t>) return DataType::kInt8;
  if constexpr (std::is_same_v<T, int16_t>) return DataType::kInt16;
  if constexpr (std::is_same_v<T, int32_t>) return DataType::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return DataType::kInt64;
}

std::string CaseName(const char* type, const Case& c, int i) {
  char text[96];
  std::snprintf(text, sizeof(text), "transpose_conv_%s_%d_s%d%d%s", type, i, c.stride_h,
                c.stride_w, c.padding == Padding::kSame ? "same" : "valid");
  return text;
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (Padding padding : {Padding::kSame, Padding::kValid})
    for (auto [sh, sw] : {std::pair{1, 1}, std::pair{2, 2}, std::pair{2, 1}, std::pair{3, 2}})
      for (bool bias : {false, true}) {
        Case c;
        c.padding = padding;
        c.stride_h = sh;
        c.stride_w = sw;
        c.bias = bias;
        c.Finish();
        cases.push_back(c);
      }
  Case big;  // batches, even filter, odd output size, activation
  big.batches = 2; big.in_h = 4; big.in_w = 5; big.in_c = 3; big.out_c = 4;
  big.filter_h = 2; big.filter_w = 4; big.stride_h = 2; big.stride_w = 2;
  big.out_h = 7; big.out_w = 9; big.act = Activation::kRelu;
  big.Finish();
  cases.push_back(big);
  for (Activation act : {Activation::kRelu6, Activation::kReluN1To1}) {
    Case c;
    c.act = act;
    c.stride_h = c.stride_w = 2;
    c.Finish();
    cases.push_back(c);
  }
  return cases;
}

OpModel* Build(OpModel& m, const Case& c, DataType in_type, Quantization in_q,
               DataType w_type, const std::vector<uint8_t>& weights, Quantization w_q,
               DataType bias_type, const std::vector<uint8_t>& bias, Quantization bias_q,
               Quantization out_q) {
  const int shape = m.AddConst<int32_t>(DataType::kInt32, {4}, {c.batches, c.out_h, c.out_w, c.out_c});
  const int w = m.AddConstBytes(w_type, {c.out_c, c.filter_h, c.filter_w, c.in_c}, weights, w_q);
  const int in = m.AddInput(in_type, {c.batches, c.in_h, c.in_w, c.in_c}, in_q);
  std::vector<int32_t> inputs = {shape, w, in};
  if (c.bias) inputs.push_back(m.AddConstBytes(bias_type, {c.out_c}, bias, bias_q));
  const int out = m.AddOutput(in_type, out_q);
  TransposeConvParams p;
  p.padding = c.padding;
  p.stride_h = c.stride_h;
  p.stride_w = c.stride_w;
  p.activation = c.act;
  m.AddOp(BuiltinOp::kTransposeConv, inputs, {out}, p, c.version());
  return &m;
}

template <class T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// ------------------------------------------------------------------ float

TEST(TransposeConvTest, FloatTfliteExample) {
  OpModel m;
  const int shape = m.AddConst<int32_t>(DataType::kInt32, {4}, {1, 4, 4, 1});
  std::vector<float> filter(9);
  for (int i = 0; i < 9; ++i) filter[i] = i + 1.0f;
  const int w = m.AddConst<float>(DataType::kFloat32, {1, 3, 3, 1}, filter);
  const int in = m.AddInput(DataType::kFloat32, {1, 4, 4, 1});
  const int out = m.AddOutput(DataType::kFloat32);
  TransposeConvParams p;
  m.AddOp(BuiltinOp::kTransposeConv, {shape, w, in}, {out}, p, 5);  // the highest version
  m.Build();
  std::vector<float> input(16);
  for (int i = 0; i < 16; ++i) input[i] = i + 1.0f;
  m.SetInput<float>(0, input);
  m.Invoke();
  EXPECT_THAT(m.GetOutput<float>(0),
              ElementsAreArray({29.f, 62.f, 83.f, 75.f, 99.f, 192.f, 237.f, 198.f, 207.f, 372.f,
                                417.f, 330.f, 263.f, 446.f, 485.f, 365.f}));
  EXPECT_THAT(m.GetOutputShape(0), ElementsAreArray({1, 4, 4, 1}));
  DumpForLiteRt(m, "transpose_conv_float_example");
}

TEST(TransposeConvTest, FloatRandomized) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int i = 0;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(CaseName("float", c, i));
    std::vector<float> input(c.batches * c.in_h * c.in_w * c.in_c), filter(c.out_c * c.filter_h * c.filter_w * c.in_c), bias(c.out_c);
    for (float& v : input) v = dist(rng);
    for (float& v : filter) v = dist(rng);
    for (float& v : bias) v = dist(rng);
    OpModel m;
    Build(m, c, DataType::kFloat32, {}, DataType::kFloat32, Bytes(filter), {}, DataType::kFloat32,
          Bytes(bias), {}, {});
    m.Build();
    m.SetInput<float>(0, input);
    m.Invoke();
    EXPECT_THAT(m.GetOutputShape(0), ElementsAreArray({c.batches, c.out_h, c.out_w, c.out_c}));
    const std::vector<float> got = m.GetOutput<float>(0);
    ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * c.out_h * c.out_w * c.out_c));
    float lo = -1e30f, hi = 1e30f;
    if (c.act == Activation::kRelu) lo = 0;
    if (c.act == Activation::kRelu6) lo = 0, hi = 6;
    if (c.act == Activation::kReluN1To1) lo = -1, hi = 1;
    Gather<double>(
        c, [&](int64_t in, int64_t f) { return double(input[in]) * filter[f]; },
        [&](int64_t index, int oc, double acc) {
          if (c.bias) acc += bias[oc];
          const double expected = std::min<double>(std::max<double>(acc, lo), hi);
          EXPECT_NEAR(got[index], expected, 1e-5) << "output " << index;
        });
    DumpForLiteRt(m, CaseName("float", c, i++));
  }
}

// ------------------------------------------------------------------ quantized

// Requantization as TFLite specifies it: Q31 multiplier from the real scale.
int32_t Requantize(int64_t acc, double real, bool wide) {
  int32_t mult;
  int shift;
  quant::QuantizeMultiplier(real, &mult, &shift);
  if (!wide) return quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), mult, shift);
  // TFLite's 64-bit form: multiplier rounded to 16 bits, one rounding shift.
  const int64_t reduced = mult < 0x7FFF0000 ? ((mult + (1 << 15)) >> 16) : 0x7FFF;
  const int total = 15 - shift;
  return static_cast<int32_t>((acc * reduced + (int64_t{1} << (total - 1))) >> total);
}

template <class T, class W, class B>
void RunQuantized(const char* type_name, bool per_channel, int seed) {
  std::mt19937 rng(seed);
  constexpr bool is16 = std::is_same_v<T, int16_t>;
  constexpr bool is_u8 = std::is_same_v<T, uint8_t>;
  int i = 0;
  for (const Case& c : Cases()) {
    const std::string name = CaseName(type_name, c, i++) + (per_channel ? "_pc" : "");
    SCOPED_TRACE(name);
    const float in_scale = is16 ? 1.0f / 4096 : 0.05f, out_scale = is16 ? 1.0f / 1024 : 0.08f;
    const int32_t in_zp = is16 ? 0 : (is_u8 ? 130 : -3), out_zp = is16 ? 0 : (is_u8 ? 120 : 5);
    const int32_t w_zp = is_u8 ? 125 : 0;
    std::vector<float> w_scales(per_channel ? c.out_c : 1);
    for (size_t k = 0; k < w_scales.size(); ++k) w_scales[k] = 0.02f + 0.005f * k;
    std::uniform_int_distribution<int> in_dist(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    std::uniform_int_distribution<int> w_dist(is_u8 ? 0 : -127, is_u8 ? 255 : 127);
    std::uniform_int_distribution<int> b_dist(-3000, 3000);
    std::vector<T> input(c.batches * c.in_h * c.in_w * c.in_c);
    std::vector<W> filter(c.out_c * c.filter_h * c.filter_w * c.in_c);
    std::vector<B> bias(c.out_c);
    for (T& v : input) v = static_cast<T>(in_dist(rng));
    for (W& v : filter) v = static_cast<W>(w_dist(rng));
    for (B& v : bias) v = static_cast<B>(b_dist(rng) * (is16 ? 40 : 1));
    Quantization w_q = per_channel ? QPerAxis(w_scales, std::vector<int64_t>(c.out_c, 0), 0)
                                   : Q(w_scales[0], w_zp);
    Quantization bias_q = Q(in_scale * w_scales[0], 0);
    OpModel m;
    Build(m, c, TypeOf<T>(), Q(in_scale, in_zp), TypeOf<W>(), Bytes(filter), w_q, TypeOf<B>(),
          Bytes(bias), bias_q, Q(out_scale, out_zp));
    m.Build();
    m.SetInput<T>(0, input);
    m.Invoke();
    const std::vector<T> got = m.GetOutput<T>(0);
    ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * c.out_h * c.out_w * c.out_c));
    int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    auto q = [&](float x) { return out_zp + static_cast<int32_t>(std::round(x / out_scale)); };
    if (c.act == Activation::kRelu) lo = std::max(lo, q(0));
    if (c.act == Activation::kRelu6) lo = std::max(lo, q(0)), hi = std::min(hi, q(6));
    if (c.act == Activation::kReluN1To1) lo = std::max(lo, q(-1)), hi = std::min(hi, q(1));
    Gather<int64_t>(
        c,
        [&](int64_t in, int64_t f) {
          return int64_t{(input[in] - in_zp)} * (filter[f] - w_zp);
        },
        [&](int64_t index, int oc, int64_t acc) {
          if (c.bias) acc += bias[oc];
          const float ws = per_channel ? w_scales[oc] : w_scales[0];
          const double real = is_u8 ? double(in_scale * ws) / out_scale
                                    : double(in_scale) * double(ws) / double(out_scale);
          const int32_t v = Requantize(acc, real, is16) + out_zp;
          EXPECT_EQ(int32_t{got[index]}, std::min(std::max(v, lo), hi)) << "output " << index;
        });
    DumpForLiteRt(m, name);
  }
}

TEST(TransposeConvTest, Uint8Randomized) { RunQuantized<uint8_t, uint8_t, int32_t>("uint8", false, 1); }
TEST(TransposeConvTest, Int8PerTensor) { RunQuantized<int8_t, int8_t, int32_t>("int8", false, 2); }
TEST(TransposeConvTest, Int8PerChannel) { RunQuantized<int8_t, int8_t, int32_t>("int8", true, 3); }
TEST(TransposeConvTest, Int16x8Int64Bias) { RunQuantized<int16_t, int8_t, int64_t>("int16", true, 4); }

// ------------------------------------------------------------------ hybrid

// Float input and output with int8 weights (dynamic-range quantization): each
// batch's input is quantized on the fly, so the result is the float transpose
// convolution with the dequantized weights up to the input's quantization
// error, at most half an input step per term (step max|x| / 127 or finer).
// ties: every batch's input on exact half quantization steps (hybrid_ties.h).
void RunHybrid(bool per_channel, int seed, bool ties = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> w_dist(-127, 127);
  int i = 0;
  for (const Case& c : Cases()) {
    const std::string name =
        CaseName("hybrid", c, i++) + (per_channel ? "_pc" : "") + (ties ? "_ties" : "");
    SCOPED_TRACE(name);
    std::vector<float> input(c.batches * c.in_h * c.in_w * c.in_c), bias(c.out_c);
    std::vector<int8_t> filter(c.out_c * c.filter_h * c.filter_w * c.in_c);
    for (float& v : input) v = dist(rng);
    if (ties) FillTieRows(input, input.size() / c.batches, true);
    for (int8_t& v : filter) v = static_cast<int8_t>(w_dist(rng));
    for (float& v : bias) v = dist(rng);
    std::vector<float> w_scales(per_channel ? c.out_c : 1);
    for (size_t k = 0; k < w_scales.size(); ++k) w_scales[k] = 0.01f + 0.003f * k;
    Quantization w_q = per_channel ? QPerAxis(w_scales, std::vector<int64_t>(c.out_c, 0), 0)
                                   : Q(w_scales[0], 0);
    OpModel m;
    Build(m, c, DataType::kFloat32, {}, DataType::kInt8, Bytes(filter), w_q, DataType::kFloat32,
          Bytes(bias), {}, {});
    m.Build();
    m.SetInput<float>(0, input);
    m.Invoke();
    const std::vector<float> got = m.GetOutput<float>(0);
    ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * c.out_h * c.out_w * c.out_c));
    float lo = -1e30f, hi = 1e30f;
    if (c.act == Activation::kRelu) lo = 0;
    if (c.act == Activation::kRelu6) lo = 0, hi = 6;
    if (c.act == Activation::kReluN1To1) lo = -1, hi = 1;
    const size_t per_batch = input.size() / c.batches;
    std::vector<double> half_step(c.batches);
    for (int b = 0; b < c.batches; ++b) {
      float m_abs = 0;
      for (size_t k = 0; k < per_batch; ++k) m_abs = std::max(m_abs, std::fabs(input[b * per_batch + k]));
      half_step[b] = 0.5 * m_abs / 127.0 * 1.001;
    }
    auto w_real = [&](int64_t f, int oc) {
      return double(filter[f]) * (per_channel ? w_scales[oc] : w_scales[0]);
    };
    // Gather twice: the value and its error bound (sum of |w| * half step).
    std::vector<double> value(got.size()), bound(got.size());
    const int64_t out_per_batch = int64_t{c.out_h} * c.out_w * c.out_c;
    Gather<double>(
        c, [&](int64_t in, int64_t f) { return double(input[in]) * w_real(f, int(f / (int64_t{c.filter_h} * c.filter_w * c.in_c))); },
        [&](int64_t index, int oc, double acc) { value[index] = acc + (c.bias ? bias[oc] : 0.0); });
    Gather<double>(
        c, [&](int64_t in, int64_t f) {
          const int oc = int(f / (int64_t{c.filter_h} * c.filter_w * c.in_c));
          return std::fabs(w_real(f, oc)) * half_step[in / int64_t(per_batch)];
        },
        [&](int64_t index, int, double acc) { bound[index] = acc; });
    for (size_t k = 0; k < got.size(); ++k) {
      const double expected = std::min<double>(std::max<double>(value[k], lo), hi);
      EXPECT_NEAR(got[k], expected, bound[k] + 1e-5)
          << "output " << k << " (batch " << k / out_per_batch << ")";
    }
    DumpForLiteRt(m, name);
  }
}

TEST(TransposeConvTest, HybridPerTensor) { RunHybrid(false, 5); }
TEST(TransposeConvTest, HybridPerChannel) { RunHybrid(true, 6); }
TEST(TransposeConvTest, HybridInputsOnHalfQuantizationSteps) {
  RunHybrid(false, 7, true);
  RunHybrid(true, 8, true);
}

// ------------------------------------------------------------------ bad input

Status TryBuild(const std::function<void(OpModel&)>& make) {
  OpModel m;
  make(m);
  return m.TryBuild();
}

TEST(TransposeConvTest, RejectsBadInput) {
  const std::vector<float> filter(2 * 3 * 3 * 2, 0.5f);
  auto base = [&](OpModel& m, std::vector<int32_t> out_shape, int filter_in_c, bool shape_const,
                  DataType bias_type) {
    const int shape = shape_const ? m.AddConst<int32_t>(DataType::kInt32, {4}, out_shape)
                                  : m.AddInput(DataType::kInt32, {4});
    const int w = m.AddConst<float>(DataType::kFloat32, {2, 3, 3, filter_in_c},
                                    std::vector<float>(2 * 9 * filter_in_c, 0.5f));
    const int in = m.AddInput(DataType::kFloat32, {1, 2, 2, 2});
    std::vector<int32_t> inputs = {shape, w, in};
    if (bias_type != DataType::kBool) {
      inputs.push_back(bias_type == DataType::kFloat32
                           ? m.AddConst<float>(DataType::kFloat32, {2}, {1, 2})
                           : m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2}));
    }
    const int out = m.AddOutput(DataType::kFloat32);
    m.AddOp(BuiltinOp::kTransposeConv, inputs, {out}, TransposeConvParams{}, 3);
  };
  EXPECT_TRUE(TryBuild([&](OpModel& m) { base(m, {1, 2, 2, 2}, 2, true, DataType::kFloat32); }).ok());
  EXPECT_THAT(TryBuild([&](OpModel& m) { base(m, {1, 2, 2, 2}, 3, true, DataType::kBool); }).message(),
              HasSubstr("input channels"));
  EXPECT_THAT(TryBuild([&](OpModel& m) { base(m, {1, 2, 2, 5}, 2, true, DataType::kBool); }).message(),
              HasSubstr("output_shape depth"));
  EXPECT_THAT(TryBuild([&](OpModel& m) { base(m, {1, 2, 2, 2}, 2, true, DataType::kInt32); }).message(),
              HasSubstr("bias tensor"));
  // int16 activations need zero point 0.
  EXPECT_THAT(TryBuild([&](OpModel& m) {
                const int shape = m.AddConst<int32_t>(DataType::kInt32, {4}, {1, 2, 2, 1});
                const int w = m.AddConst<int8_t>(DataType::kInt8, {1, 1, 1, 1}, {1}, Q(0.5f, 0));
                const int in = m.AddInput(DataType::kInt16, {1, 2, 2, 1}, Q(0.5f, 3));
                const int out = m.AddOutput(DataType::kInt16, Q(0.5f, 0));
                m.AddOp(BuiltinOp::kTransposeConv, {shape, w, in}, {out}, TransposeConvParams{}, 3);
              }).message(),
              HasSubstr("must have zero point 0"));
  // A 16x8 INT32 bias: LiteRT accepts it but reads it as INT64.
  EXPECT_THAT(TryBuild([&](OpModel& m) {
                const int shape = m.AddConst<int32_t>(DataType::kInt32, {4}, {1, 2, 2, 1});
                const int w = m.AddConst<int8_t>(DataType::kInt8, {1, 1, 1, 1}, {1}, Q(0.5f, 0));
                const int in = m.AddInput(DataType::kInt16, {1, 2, 2, 1}, Q(0.5f, 0));
                const int b = m.AddConst<int32_t>(DataType::kInt32, {1}, {1}, Q(0.25f, 0));
                const int out = m.AddOutput(DataType::kInt16, Q(0.5f, 0));
                m.AddOp(BuiltinOp::kTransposeConv, {shape, w, in, b}, {out}, TransposeConvParams{}, 3);
              }).message(),
              HasSubstr("which INT16 TRANSPOSE_CONV does not take"));
  // uint8 activations with int8 weights are not a TFLite combination.
  EXPECT_THAT(TryBuild([&](OpModel& m) {
                const int shape = m.AddConst<int32_t>(DataType::kInt32, {4}, {1, 2, 2, 1});
                const int w = m.AddConst<int8_t>(DataType::kInt8, {1, 1, 1, 1}, {1}, Q(0.5f, 0));
                const int in = m.AddInput(DataType::kUInt8, {1, 2, 2, 1}, Q(0.5f, 3));
                const int out = m.AddOutput(DataType::kUInt8, Q(0.5f, 0));
                m.AddOp(BuiltinOp::kTransposeConv, {shape, w, in}, {out}, TransposeConvParams{}, 2);
              }).message(),
              HasSubstr("unsupported types"));
}

}  // namespace
}  // namespace delegato
