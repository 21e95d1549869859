// int16x8 CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: int16 activations
// (zero point 0) with int8 weights per tensor or per channel, INT64 bias or
// none, padding, strides, dilation, fused activations. Each case is checked
// against a direct loop formulation with TFLite's requantization written out
// here, and saved for the LiteRT replay (litert_dump.h); LiteRT 2.3 requires
// the bias of a 16x8 convolution, so bias-less convolutions are not saved.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/quantization.h"
#include "litert_dump.h"
#include "test_util.h"

namespace delegato {
namespace {

using ::delegato::testing::DumpForLiteRt;
using ::delegato::testing::OpModel;
using ::delegato::testing::Q;
using ::delegato::testing::QPerAxis;

// kInt32: an INT32 bias declared by quantized_bias_type INT32 in the options
// (CONV_2D, FULLY_CONNECTED): 32-bit sums.
enum class BiasKind { kNone, kInt64, kInt32 };

template <class T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// TFLite's requantization: 64-bit (Q31 multiplier rounded to 16 bits, one
// rounding shift), or the 32-bit form for 32-bit sums.
int32_t Requantize(int64_t acc, double real, BiasKind bias) {
  int32_t mult;
  int shift;
  quant::QuantizeMultiplier(real, &mult, &shift);
  if (bias == BiasKind::kInt32)
    return quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), mult, shift);
  const int64_t reduced = mult < 0x7FFF0000 ? ((mult + (1 << 15)) >> 16) : 0x7FFF;
  const int total = 15 - shift;
  return static_cast<int32_t>((acc * reduced + (int64_t{1} << (total - 1))) >> total);
}

struct Range {
  int32_t lo = -32768, hi = 32767;
};

Range ActRange(Activation act, float out_scale) {
  Range r;
  auto q = [&](float x) { return static_cast<int32_t>(std::round(x / out_scale)); };
  if (act == Activation::kRelu) r.lo = std::max(r.lo, q(0));
  if (act == Activation::kRelu6) r.lo = std::max(r.lo, q(0)), r.hi = std::min(r.hi, q(6));
  if (act == Activation::kReluN1To1) r.lo = std::max(r.lo, q(-1)), r.hi = std::min(r.hi, q(1));
  return r;
}

int OutSize(Padding p, int in, int f, int stride, int dil) {
  const int ext = (f - 1) * dil + 1;
  return p == Padding::kSame ? (in + stride - 1) / stride : (in - ext + stride) / stride;
}
int PadSize(Padding p, int in, int f, int stride, int dil, int out) {
  if (p != Padding::kSame) return 0;
  const int ext = (f - 1) * dil + 1;
  return std::max((out - 1) * stride + ext - in, 0) / 2;
}

struct ConvCase {
  bool depthwise = false;
  int batches = 1, in_h = 5, in_w = 4, in_c = 3, out_c = 4, f_h = 3, f_w = 2;
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  Padding padding = Padding::kSame;
  Activation act = Activation::kNone;
  BiasKind bias = BiasKind::kInt64;
  bool per_channel = true;
  // Every product (-32768) * (-128) = 2^22: sums of 512 of them leave int32;
  // the INT64 bias brings the total back into the output's range.
  bool extreme = false;
};

std::string Name(const ConvCase& c, int i) {
  char text[128];
  std::snprintf(text, sizeof(text), "int16x8_%s_%d_%s_b%d%s", c.depthwise ? "dwconv" : "conv", i,
                c.padding == Padding::kSame ? "same" : "valid", static_cast<int>(c.bias),
                c.per_channel ? "_pc" : "_pt");
  return text;
}

void RunConv(const ConvCase& c, const std::string& name, std::mt19937& rng) {
  SCOPED_TRACE(name);
  const int out_h = OutSize(c.padding, c.in_h, c.f_h, c.stride_h, c.dil_h);
  const int out_w = OutSize(c.padding, c.in_w, c.f_w, c.stride_w, c.dil_w);
  const int pad_h = PadSize(c.padding, c.in_h, c.f_h, c.stride_h, c.dil_h, out_h);
  const int pad_w = PadSize(c.padding, c.in_w, c.f_w, c.stride_w, c.dil_w, out_w);
  const int mult = c.depthwise ? c.out_c / c.in_c : 1;
  const int f_depth = c.depthwise ? c.out_c : c.in_c;
  const float in_scale = 1.0f / 2048, out_scale = 1.0f / 512;
  std::vector<float> w_scales(c.per_channel ? c.out_c : 1);
  for (size_t k = 0; k < w_scales.size(); ++k) w_scales[k] = 0.01f + 0.004f * k;
  std::uniform_int_distribution<int> in_dist(-32768, 32767), w_dist(-127, 127),
      b_dist(-200000, 200000);
  std::vector<int16_t> input(c.batches * c.in_h * c.in_w * c.in_c);
  std::vector<int8_t> filter((c.depthwise ? 1 : c.out_c) * c.f_h * c.f_w * f_depth);
  std::vector<int64_t> bias(c.out_c);
  for (auto& v : input) v = static_cast<int16_t>(in_dist(rng));
  for (auto& v : filter) v = static_cast<int8_t>(w_dist(rng));
  for (auto& v : bias) v = b_dist(rng);
  if (c.extreme) {
    std::fill(input.begin(), input.end(), int16_t{-32768});
    std::fill(filter.begin(), filter.end(), int8_t{-128});
    for (auto& v : bias) v -= int64_t{32768} * 128 * c.f_h * c.f_w * (c.depthwise ? 1 : f_depth);
  }

  OpModel m;
  const int in = m.AddInput(DataType::kInt16, {c.batches, c.in_h, c.in_w, c.in_c}, Q(in_scale, 0));
  const int axis = c.depthwise ? 3 : 0;
  Quantization w_q = c.per_channel ? QPerAxis(w_scales, std::vector<int64_t>(c.out_c, 0), axis)
                                   : Q(w_scales[0], 0);
  const std::vector<int32_t> f_shape =
      c.depthwise ? std::vector<int32_t>{1, c.f_h, c.f_w, c.out_c}
                  : std::vector<int32_t>{c.out_c, c.f_h, c.f_w, c.in_c};
  const int f = m.AddConstBytes(DataType::kInt8, f_shape, Bytes(filter), w_q);
  int b = -1;
  if (c.bias == BiasKind::kInt64) {
    b = m.AddConstBytes(DataType::kInt64, {c.out_c}, Bytes(bias), Q(in_scale * w_scales[0], 0));
  } else if (c.bias == BiasKind::kInt32) {
    std::vector<int32_t> b32(bias.begin(), bias.end());
    b = m.AddConstBytes(DataType::kInt32, {c.out_c}, Bytes(b32), Q(in_scale * w_scales[0], 0));
  }
  const int out = m.AddOutput(DataType::kInt16, Q(out_scale, 0));
  if (c.depthwise) {
    DepthwiseConv2DParams p;
    p.padding = c.padding;
    p.stride_h = c.stride_h;
    p.stride_w = c.stride_w;
    p.dilation_h = c.dil_h;
    p.dilation_w = c.dil_w;
    p.depth_multiplier = mult;
    p.activation = c.act;
    m.AddOp(BuiltinOp::kDepthwiseConv2d, {in, f, b}, {out}, p, 5);
  } else {
    Conv2DParams p;
    p.padding = c.padding;
    p.stride_h = c.stride_h;
    p.stride_w = c.stride_w;
    p.dilation_h = c.dil_h;
    p.dilation_w = c.dil_w;
    p.activation = c.act;
    if (c.bias == BiasKind::kInt32) p.quantized_bias_type = DataType::kInt32;
    m.AddOp(BuiltinOp::kConv2d, {in, f, b}, {out}, p, 4);
  }
  m.Build();
  m.SetInput<int16_t>(0, input);
  m.Invoke();
  const std::vector<int16_t> got = m.GetOutput<int16_t>(0);
  ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * out_h * out_w * c.out_c));
  const Range r = ActRange(c.act, out_scale);
  size_t index = 0;
  for (int bt = 0; bt < c.batches; ++bt)
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        for (int oc = 0; oc < c.out_c; ++oc, ++index) {
          int64_t acc = 0;
          for (int fy = 0; fy < c.f_h; ++fy)
            for (int fx = 0; fx < c.f_w; ++fx) {
              const int iy = oy * c.stride_h - pad_h + fy * c.dil_h;
              const int ix = ox * c.stride_w - pad_w + fx * c.dil_w;
              if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) continue;
              const int64_t pixel = ((int64_t{bt} * c.in_h + iy) * c.in_w + ix) * c.in_c;
              if (c.depthwise) {
                acc += int64_t{input[pixel + oc / mult]} *
                       filter[(int64_t{fy} * c.f_w + fx) * c.out_c + oc];
              } else {
                for (int ic = 0; ic < c.in_c; ++ic)
                  acc += int64_t{input[pixel + ic]} *
                         filter[((int64_t{oc} * c.f_h + fy) * c.f_w + fx) * c.in_c + ic];
              }
            }
          if (c.bias != BiasKind::kNone) acc += bias[oc];
          const float ws = c.per_channel ? w_scales[oc] : w_scales[0];
          const double real = double(in_scale) * double(ws) / double(out_scale);
          const int32_t v = Requantize(acc, real, c.bias);
          ASSERT_EQ(int32_t{got[index]}, std::min(std::max(v, r.lo), r.hi)) << "output " << index;
        }
  if (c.bias != BiasKind::kNone) DumpForLiteRt(m, name);
}

std::vector<ConvCase> ConvCases(bool depthwise) {
  std::vector<ConvCase> cases;
  for (Padding padding : {Padding::kSame, Padding::kValid})
    for (BiasKind bias : {BiasKind::kInt64, BiasKind::kNone, BiasKind::kInt32})
      for (bool per_channel : {true, false}) {
        if (depthwise && bias == BiasKind::kInt32) continue;  // no such option
        ConvCase c;
        c.depthwise = depthwise;
        c.padding = padding;
        c.bias = bias;
        c.per_channel = per_channel;
        if (depthwise) c.out_c = 6;  // depth multiplier 2
        cases.push_back(c);
      }
  ConvCase strided;
  strided.depthwise = depthwise;
  strided.batches = 2; strided.in_h = 7; strided.in_w = 6; strided.stride_h = 2; strided.stride_w = 3;
  strided.act = Activation::kRelu;
  if (depthwise) strided.out_c = 3;
  cases.push_back(strided);
  ConvCase dilated = strided;
  dilated.stride_h = dilated.stride_w = 1;
  dilated.dil_h = 2; dilated.dil_w = 2;
  dilated.act = Activation::kRelu6;
  cases.push_back(dilated);
  ConvCase n1 = dilated;
  n1.dil_h = 1;
  n1.act = Activation::kReluN1To1;
  cases.push_back(n1);
  // Depthwise windows of 256 taps (summed in 32 bits) and of 529 (whose
  // extreme sums leave int32).
  for (int f : {16, 23}) {
    if (!depthwise) break;
    ConvCase wide;
    wide.depthwise = true;
    wide.in_h = wide.in_w = f;
    wide.in_c = wide.out_c = 2;
    wide.f_h = wide.f_w = f;
    wide.padding = Padding::kValid;
    wide.extreme = true;
    cases.push_back(wide);
  }
  if (!depthwise) {
    ConvCase deep;  // 1100 input channels, 1x1, every input inside
    deep.in_h = deep.in_w = 2;
    deep.in_c = 1100;
    deep.out_c = 3;
    deep.f_h = deep.f_w = 1;
    deep.padding = Padding::kValid;
    deep.extreme = true;
    cases.push_back(deep);
  }
  return cases;
}

TEST(Int16x8Test, Conv2D) {
  std::mt19937 rng(11);
  int i = 0;
  for (const ConvCase& c : ConvCases(false)) RunConv(c, Name(c, i++), rng);
}

TEST(Int16x8Test, DepthwiseConv2D) {
  std::mt19937 rng(12);
  int i = 0;
  for (const ConvCase& c : ConvCases(true)) RunConv(c, Name(c, i++), rng);
}

struct FcCase {
  int batches = 3, depth = 7, units = 5;
  BiasKind bias = BiasKind::kInt64;
  bool per_channel = false;
  Activation act = Activation::kNone;
  bool declare_int32 = false;  // quantized_bias_type INT32 without a bias
};

TEST(Int16x8Test, FullyConnected) {
  std::mt19937 rng(13);
  std::vector<FcCase> cases;
  for (BiasKind bias : {BiasKind::kInt64, BiasKind::kNone, BiasKind::kInt32})
    for (bool per_channel : {false, true}) {
      FcCase c;
      c.bias = bias;
      c.per_channel = per_channel;
      cases.push_back(c);
    }
  FcCase wide;
  wide.batches = 2; wide.depth = 70; wide.units = 70; wide.act = Activation::kRelu;
  cases.push_back(wide);
  FcCase declared;  // 32-bit sums without a bias
  declared.bias = BiasKind::kNone;
  declared.declare_int32 = true;
  cases.push_back(declared);
  FcCase relu6 = wide;
  relu6.act = Activation::kRelu6;
  relu6.per_channel = true;
  cases.push_back(relu6);
  int i = 0;
  for (const FcCase& c : cases) {
    char text[96];
    std::snprintf(text, sizeof(text), "int16x8_fc_%d_b%d%s", i++, static_cast<int>(c.bias),
                  c.per_channel ? "_pc" : "_pt");
    SCOPED_TRACE(text);
    const float in_scale = 1.0f / 1024, out_scale = 1.0f / 256;
    std::vector<float> w_scales(c.per_channel ? c.units : 1);
    for (size_t k = 0; k < w_scales.size(); ++k) w_scales[k] = 0.008f + 0.003f * k;
    std::uniform_int_distribution<int> in_dist(-32768, 32767), w_dist(-127, 127),
        b_dist(-100000, 100000);
    std::vector<int16_t> input(c.batches * c.depth);
    std::vector<int8_t> weights(c.units * c.depth);
    std::vector<int64_t> bias(c.units);
    for (auto& v : input) v = static_cast<int16_t>(in_dist(rng));
    for (auto& v : weights) v = static_cast<int8_t>(w_dist(rng));
    for (auto& v : bias) v = b_dist(rng);
    OpModel m;
    const int in = m.AddInput(DataType::kInt16, {c.batches, c.depth}, Q(in_scale, 0));
    Quantization w_q = c.per_channel ? QPerAxis(w_scales, std::vector<int64_t>(c.units, 0), 0)
                                     : Q(w_scales[0], 0);
    const int w = m.AddConstBytes(DataType::kInt8, {c.units, c.depth}, Bytes(weights), w_q);
    int b = -1;
    if (c.bias == BiasKind::kInt64) {
      b = m.AddConstBytes(DataType::kInt64, {c.units}, Bytes(bias), Q(in_scale * w_scales[0], 0));
    } else if (c.bias == BiasKind::kInt32) {
      std::vector<int32_t> b32(bias.begin(), bias.end());
      b = m.AddConstBytes(DataType::kInt32, {c.units}, Bytes(b32), Q(in_scale * w_scales[0], 0));
    }
    const int out = m.AddOutput(DataType::kInt16, Q(out_scale, 0));
    FullyConnectedParams p;
    p.activation = c.act;
    if (c.bias == BiasKind::kInt32 || c.declare_int32) p.quantized_bias_type = DataType::kInt32;
    m.AddOp(BuiltinOp::kFullyConnected, {in, w, b}, {out}, p, 7);
    m.Build();
    m.SetInput<int16_t>(0, input);
    m.Invoke();
    const std::vector<int16_t> got = m.GetOutput<int16_t>(0);
    ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * c.units));
    const Range r = ActRange(c.act, out_scale);
    for (int bt = 0; bt < c.batches; ++bt)
      for (int u = 0; u < c.units; ++u) {
        int64_t acc = 0;
        for (int d = 0; d < c.depth; ++d)
          acc += int64_t{input[bt * c.depth + d]} * weights[u * c.depth + d];
        if (c.bias != BiasKind::kNone) acc += bias[u];
        const float ws = c.per_channel ? w_scales[u] : w_scales[0];
        // The reference FULLY_CONNECTED rescales in double precision.
        const double real = double(in_scale) * double(ws) / double(out_scale);
        const int32_t v = static_cast<int32_t>(std::round(double(acc) * real));
        ASSERT_EQ(int32_t{got[bt * c.units + u]}, std::min(std::max(v, r.lo), r.hi))
            << "batch " << bt << " unit " << u;
      }
    DumpForLiteRt(m, text);
  }
}

TEST(Int16x8Test, RejectsInt32Bias) {
  for (BuiltinOp op : {BuiltinOp::kConv2d, BuiltinOp::kDepthwiseConv2d,
                       BuiltinOp::kFullyConnected}) {
    OpModel m;
    const bool fc = op == BuiltinOp::kFullyConnected;
    const int in = m.AddInput(DataType::kInt16, fc ? std::vector<int32_t>{1, 2}
                                                   : std::vector<int32_t>{1, 2, 2, 2},
                              Q(0.01f, 0));
    const int w = m.AddConst<int8_t>(DataType::kInt8, fc ? std::vector<int32_t>{2, 2}
                                                         : std::vector<int32_t>{1, 1, 1, 2},
                                     fc ? std::vector<int8_t>{1, 2, 3, 4} : std::vector<int8_t>{1, 2},
                                     Q(0.1f, 0));
    const int b = m.AddConst<int32_t>(DataType::kInt32, {2}, {1, 2}, Q(0.001f, 0));
    const int out = m.AddOutput(DataType::kInt16, Q(0.02f, 0));
    if (op == BuiltinOp::kConv2d) {
      m.AddOp(op, {in, w, b}, {out}, Conv2DParams{}, 4);
    } else if (op == BuiltinOp::kDepthwiseConv2d) {
      m.AddOp(op, {in, w, b}, {out}, DepthwiseConv2DParams{}, 5);
    } else {
      m.AddOp(op, {in, w, b}, {out}, FullyConnectedParams{}, 7);
    }
    const Status st = m.TryBuild();
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), ::testing::HasSubstr("expected INT64 for INT16 input"));
  }
}

}  // namespace
}  // namespace delegato
