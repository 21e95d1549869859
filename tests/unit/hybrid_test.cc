// Dynamic-range (hybrid) FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D and
// BATCH_MATMUL: float input
// and output with constant int8 weights, per tensor or per channel, symmetric or asymmetric
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
using ::testing::HasSubstr;

struct FcCase {
  int batches = 3, depth = 9, units = 5;
  bool per_channel = false, asymmetric = false, bias = true, zero_input = false;
  bool ties = false;  // inputs on exact half quantization steps (hybrid_ties.h)
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
  if (c.ties) FillTieRows(input, c.depth, c.asymmetric);
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
      if (c.zero_input || (r == 1 && c.batches > 1 && !c.ties)) {
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
  // Half steps, per tensor and per channel, symmetric and asymmetric; rows
  // long enough for the vector loop and its scalar tail.
  for (bool per_channel : {false, true})
    for (bool asymmetric : {false, true}) {
      FcCase ties;
      ties.batches = 4; ties.depth = 41; ties.units = 6;
      ties.ties = true; ties.per_channel = per_channel; ties.asymmetric = asymmetric;
      RunHybridFc(ties, std::string("hybrid_fc_ties") + (per_channel ? "_pc" : "_pt") +
                            (asymmetric ? "_asym" : "_sym"), rng);
    }
  FcCase zero;
  zero.zero_input = true;
  zero.act = Activation::kRelu;
  RunHybridFc(zero, "hybrid_fc_zero_input", rng);
}

struct DwCase {
  int batches = 2, h = 5, w = 4, in_c = 3, mult = 2, f_h = 3, f_w = 2, stride = 1, dil = 1;
  Padding padding = Padding::kSame;
  Activation act = Activation::kNone;
  bool bias = true, ties = false;
  float lo = -2.0f, hi = 3.0f;
};

void RunHybridDepthwise(const DwCase& c, const std::string& name, std::mt19937& rng) {
  SCOPED_TRACE(name);
  const int out_c = c.in_c * c.mult;
  std::uniform_real_distribution<float> in_dist(c.lo, c.hi), b_dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> w_dist(-127, 127);
  std::vector<float> input(c.batches * c.h * c.w * c.in_c), bias(out_c);
  std::vector<int8_t> filter(c.f_h * c.f_w * out_c);
  for (auto& v : input) v = in_dist(rng);
  if (c.ties) FillTieRows(input, static_cast<size_t>(c.h * c.w * c.in_c), true);
  for (auto& v : filter) v = static_cast<int8_t>(w_dist(rng));
  for (auto& v : bias) v = b_dist(rng);
  std::vector<float> scales(out_c);
  for (int k = 0; k < out_c; ++k) scales[k] = 0.01f + 0.002f * k;
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {c.batches, c.h, c.w, c.in_c});
  const int f = m.AddConst<int8_t>(DataType::kInt8, {1, c.f_h, c.f_w, out_c}, filter,
                                   QPerAxis(scales, std::vector<int64_t>(out_c, 0), 3));
  const int b = c.bias ? m.AddConst<float>(DataType::kFloat32, {out_c}, bias) : -1;
  const int out = m.AddOutput(DataType::kFloat32);
  DepthwiseConv2DParams p;
  p.padding = c.padding;
  p.stride_h = p.stride_w = c.stride;
  p.dilation_h = p.dilation_w = c.dil;
  p.depth_multiplier = c.mult;
  p.activation = c.act;
  m.AddOp(BuiltinOp::kDepthwiseConv2d, {in, f, b}, {out}, p, 6);
  m.Build();
  m.SetInput<float>(0, input);
  m.Invoke();
  const std::vector<float> got = m.GetOutput<float>(0);
  const int ext_h = (c.f_h - 1) * c.dil + 1, ext_w = (c.f_w - 1) * c.dil + 1;
  const bool same = c.padding == Padding::kSame;
  const int out_h = same ? (c.h + c.stride - 1) / c.stride : (c.h - ext_h + c.stride) / c.stride;
  const int out_w = same ? (c.w + c.stride - 1) / c.stride : (c.w - ext_w + c.stride) / c.stride;
  const int pad_h = same ? std::max((out_h - 1) * c.stride + ext_h - c.h, 0) / 2 : 0;
  const int pad_w = same ? std::max((out_w - 1) * c.stride + ext_w - c.w, 0) / 2 : 0;
  ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * out_h * out_w * out_c));
  size_t index = 0;
  for (int bt = 0; bt < c.batches; ++bt) {
    // The whole image shares one asymmetric scale: (max(0,x) - min(0,x)) / 255.
    float lo = 0, hi = 0;
    for (int k = 0; k < c.h * c.w * c.in_c; ++k) {
      lo = std::min(lo, input[bt * c.h * c.w * c.in_c + k]);
      hi = std::max(hi, input[bt * c.h * c.w * c.in_c + k]);
    }
    const double step = (hi - lo) / 255.0;
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        for (int oc = 0; oc < out_c; ++oc, ++index) {
          double want = c.bias ? bias[oc] : 0.0, weight_abs = 0.0;
          for (int fy = 0; fy < c.f_h; ++fy)
            for (int fx = 0; fx < c.f_w; ++fx) {
              const int y = oy * c.stride - pad_h + fy * c.dil, x = ox * c.stride - pad_w + fx * c.dil;
              if (y < 0 || y >= c.h || x < 0 || x >= c.w) continue;
              const double wv = filter[(fy * c.f_w + fx) * out_c + oc] * double(scales[oc]);
              want += wv * input[((bt * c.h + y) * c.w + x) * c.in_c + oc / c.mult];
              weight_abs += std::abs(wv);
            }
          if (c.act == Activation::kRelu) want = std::max(want, 0.0);
          if (c.act == Activation::kRelu6) want = std::min(std::max(want, 0.0), 6.0);
          EXPECT_NEAR(got[index], want, weight_abs * step + 1e-5) << "output " << index;
        }
  }
  // LiteRT 2.3 requires the bias of a hybrid depthwise convolution.
  if (c.bias) DumpForLiteRt(m, name);
}

TEST(HybridDepthwiseConv, Variants) {
  std::mt19937 rng(43);
  int i = 0;
  for (Padding padding : {Padding::kSame, Padding::kValid})
    for (bool bias : {true, false}) {
      DwCase c;
      c.padding = padding;
      c.bias = bias;
      RunHybridDepthwise(c, "hybrid_dw_" + std::to_string(i++), rng);
    }
  DwCase strided;
  strided.h = 8; strided.w = 7; strided.stride = 2; strided.mult = 1; strided.in_c = 5;
  strided.act = Activation::kRelu;
  RunHybridDepthwise(strided, "hybrid_dw_strided", rng);
  DwCase dilated;
  dilated.h = 7; dilated.w = 7; dilated.dil = 2; dilated.act = Activation::kRelu6;
  dilated.lo = 0.2f; dilated.hi = 4.0f;
  RunHybridDepthwise(dilated, "hybrid_dw_dilated_positive", rng);
  DwCase negative;
  negative.lo = -5.0f; negative.hi = -0.5f; negative.batches = 3;
  RunHybridDepthwise(negative, "hybrid_dw_negative", rng);
  DwCase ties;  // one image per quantization row
  ties.ties = true;
  ties.h = 6; ties.w = 5;
  RunHybridDepthwise(ties, "hybrid_dw_ties", rng);
}

struct ConvCase {
  int batches = 2, h = 5, w = 4, in_c = 3, out_c = 4, f_h = 3, f_w = 2, stride = 1, groups = 1;
  Padding padding = Padding::kSame;
  Activation act = Activation::kNone;
  bool bias = true, per_channel = true, ties = false;
  float lo = -2.0f, hi = 3.0f;
};

void RunHybridConv(const ConvCase& c, const std::string& name, std::mt19937& rng) {
  SCOPED_TRACE(name);
  std::uniform_real_distribution<float> in_dist(c.lo, c.hi), b_dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> w_dist(-127, 127);
  std::vector<float> input(c.batches * c.h * c.w * c.in_c), bias(c.out_c);
  const int fd = c.in_c / c.groups, per_group = c.out_c / c.groups;
  std::vector<int8_t> filter(c.out_c * c.f_h * c.f_w * fd);
  for (auto& v : input) v = in_dist(rng);
  // Per-channel hybrid convolution quantizes asymmetrically, per tensor symmetrically.
  if (c.ties) FillTieRows(input, static_cast<size_t>(c.h * c.w * c.in_c), c.per_channel);
  for (auto& v : filter) v = static_cast<int8_t>(w_dist(rng));
  for (auto& v : bias) v = b_dist(rng);
  std::vector<float> scales(c.per_channel ? c.out_c : 1);
  for (size_t k = 0; k < scales.size(); ++k) scales[k] = 0.01f + 0.002f * k;
  OpModel m;
  const int in = m.AddInput(DataType::kFloat32, {c.batches, c.h, c.w, c.in_c});
  const int f = m.AddConst<int8_t>(
      DataType::kInt8, {c.out_c, c.f_h, c.f_w, fd}, filter,
      c.per_channel ? QPerAxis(scales, std::vector<int64_t>(c.out_c, 0), 0) : Q(scales[0], 0));
  const int b = c.bias ? m.AddConst<float>(DataType::kFloat32, {c.out_c}, bias) : -1;
  const int out = m.AddOutput(DataType::kFloat32);
  Conv2DParams p;
  p.padding = c.padding;
  p.stride_h = p.stride_w = c.stride;
  p.activation = c.act;
  m.AddOp(BuiltinOp::kConv2d, {in, f, b}, {out}, p, 2);
  m.Build();
  m.SetInput<float>(0, input);
  m.Invoke();
  const std::vector<float> got = m.GetOutput<float>(0);
  const bool same = c.padding == Padding::kSame;
  const int out_h = same ? (c.h + c.stride - 1) / c.stride : (c.h - c.f_h + c.stride) / c.stride;
  const int out_w = same ? (c.w + c.stride - 1) / c.stride : (c.w - c.f_w + c.stride) / c.stride;
  const int pad_h = same ? std::max((out_h - 1) * c.stride + c.f_h - c.h, 0) / 2 : 0;
  const int pad_w = same ? std::max((out_w - 1) * c.stride + c.f_w - c.w, 0) / 2 : 0;
  ASSERT_EQ(got.size(), static_cast<size_t>(c.batches * out_h * out_w * c.out_c));
  size_t index = 0;
  for (int bt = 0; bt < c.batches; ++bt) {
    float lo = 0, hi = 0;
    for (int k = 0; k < c.h * c.w * c.in_c; ++k) {
      lo = std::min(lo, input[bt * c.h * c.w * c.in_c + k]);
      hi = std::max(hi, input[bt * c.h * c.w * c.in_c + k]);
    }
    // Quantization step: (hi - lo) / 255 asymmetric, max|x| / 127 symmetric.
    const double step = c.per_channel ? (hi - lo) / 255.0 : std::max(-lo, hi) / 127.0;
    for (int oy = 0; oy < out_h; ++oy)
      for (int ox = 0; ox < out_w; ++ox)
        for (int oc = 0; oc < c.out_c; ++oc, ++index) {
          const double ws = c.per_channel ? scales[oc] : scales[0];
          double want = c.bias ? bias[oc] : 0.0, weight_abs = 0.0;
          for (int fy = 0; fy < c.f_h; ++fy)
            for (int fx = 0; fx < c.f_w; ++fx) {
              const int y = oy * c.stride - pad_h + fy, x = ox * c.stride - pad_w + fx;
              if (y < 0 || y >= c.h || x < 0 || x >= c.w) continue;
              for (int ic = 0; ic < fd; ++ic) {
                const double wv = filter[((oc * c.f_h + fy) * c.f_w + fx) * fd + ic] * ws;
                want += wv * input[((bt * c.h + y) * c.w + x) * c.in_c + oc / per_group * fd + ic];
                weight_abs += std::abs(wv);
              }
            }
          if (c.act == Activation::kRelu) want = std::max(want, 0.0);
          if (c.act == Activation::kRelu6) want = std::min(std::max(want, 0.0), 6.0);
          EXPECT_NEAR(got[index], want, weight_abs * step + 1e-5) << "output " << index;
        }
  }
  // LiteRT 2.3 requires the bias of a hybrid convolution.
  if (c.bias) DumpForLiteRt(m, name);
}

TEST(HybridConv, Variants) {
  std::mt19937 rng(44);
  int i = 0;
  for (bool per_channel : {true, false})
    for (Padding padding : {Padding::kSame, Padding::kValid})
      for (bool bias : {true, false}) {
        ConvCase c;
        c.per_channel = per_channel;
        c.padding = padding;
        c.bias = bias;
        RunHybridConv(c, "hybrid_conv_" + std::to_string(i++), rng);
      }
  ConvCase strided;
  strided.h = 8; strided.w = 7; strided.stride = 2; strided.in_c = 5; strided.out_c = 6;
  strided.act = Activation::kRelu;
  RunHybridConv(strided, "hybrid_conv_strided", rng);
  ConvCase positive = strided;
  positive.per_channel = false;
  positive.act = Activation::kRelu6;
  positive.lo = 0.2f; positive.hi = 4.0f;
  RunHybridConv(positive, "hybrid_conv_positive", rng);
  ConvCase negative;
  negative.lo = -5.0f; negative.hi = -0.5f; negative.batches = 3;
  RunHybridConv(negative, "hybrid_conv_negative", rng);
  // Grouped (per-channel weights, as the converter writes them for a Keras
  // Conv2D with groups): 2 and 3 groups.
  for (int groups : {2, 3}) {
    ConvCase grouped;
    grouped.groups = groups;
    grouped.in_c = 6;
    grouped.out_c = 3 * groups;
    grouped.h = 7;
    grouped.w = 6;
    RunHybridConv(grouped, "hybrid_conv_groups_" + std::to_string(groups), rng);
  }
  for (bool per_channel : {true, false}) {
    ConvCase ties;
    ties.ties = true;
    ties.per_channel = per_channel;
    ties.h = 6; ties.w = 5;
    RunHybridConv(ties, per_channel ? "hybrid_conv_ties_pc" : "hybrid_conv_ties_pt", rng);
  }
}

struct BmmCase {
  std::vector<int32_t> lhs = {2, 3, 4}, rhs = {4, 5};  // as stored (adj applied)
  bool adj_x = false, adj_y = false, asymmetric = false, ties = false;
  float lo = -2.0f, hi = 3.0f;
};

void RunHybridBatchMatMul(const BmmCase& c, const std::string& name, std::mt19937& rng) {
  SCOPED_TRACE(name);
  size_t nl = 1, nr = 1;
  for (int32_t d : c.lhs) nl *= d;
  for (int32_t d : c.rhs) nr *= d;
  std::uniform_real_distribution<float> in_dist(c.lo, c.hi);
  std::uniform_int_distribution<int> w_dist(-127, 127);
  std::vector<float> lhs(nl);
  std::vector<int8_t> rhs(nr);
  for (auto& v : lhs) v = in_dist(rng);
  // Rows of K values: the tie cases keep adj_x false.
  if (c.ties) FillTieRows(lhs, static_cast<size_t>(c.lhs.back()), c.asymmetric);
  for (auto& v : rhs) v = static_cast<int8_t>(w_dist(rng));
  const float rhs_scale = 0.013f;
  OpModel m;
  const int a = m.AddInput(DataType::kFloat32, c.lhs);
  const int b = m.AddConst<int8_t>(DataType::kInt8, c.rhs, rhs, Q(rhs_scale, 0));
  const int out = m.AddOutput(DataType::kFloat32);
  BatchMatMulParams p;
  p.adj_x = c.adj_x;
  p.adj_y = c.adj_y;
  p.asymmetric_quantize_inputs = c.asymmetric;
  m.AddOp(BuiltinOp::kBatchMatmul, {a, b}, {out}, p, 4);
  m.Build();
  m.SetInput<float>(0, lhs);
  m.Invoke();
  const std::vector<float> got = m.GetOutput<float>(0);
  // Shapes: lhs [..., M, K] or [..., K, M]; rhs [K, N] or [N, K] (rank 2 here, or
  // with batch dimensions equal to lhs's).
  const int lr = static_cast<int>(c.lhs.size()), rr = static_cast<int>(c.rhs.size());
  const int M = c.adj_x ? c.lhs[lr - 1] : c.lhs[lr - 2], K = c.adj_x ? c.lhs[lr - 2] : c.lhs[lr - 1];
  const int N = c.adj_y ? c.rhs[rr - 2] : c.rhs[rr - 1];
  const int lhs_batches = static_cast<int>(nl) / (M * K), rhs_batches = static_cast<int>(nr) / (K * N);
  const int batches = std::max(lhs_batches, rhs_batches);
  ASSERT_EQ(got.size(), static_cast<size_t>(batches * M * N));
  for (int bt = 0; bt < batches; ++bt) {
    const int lb = lhs_batches == 1 ? 0 : bt, rb = rhs_batches == 1 ? 0 : bt;
    for (int i = 0; i < M; ++i) {
      auto L = [&](int k) {
        return lhs[lb * M * K + (c.adj_x ? k * M + i : i * K + k)];
      };
      float lo = 0, hi = 0;
      for (int k = 0; k < K; ++k) lo = std::min(lo, L(k)), hi = std::max(hi, L(k));
      const double step = c.asymmetric ? (hi - lo) / 255.0 : std::max(-lo, hi) / 127.0;
      for (int j = 0; j < N; ++j) {
        double want = 0, weight_abs = 0;
        for (int k = 0; k < K; ++k) {
          const double w = rhs[rb * K * N + (c.adj_y ? j * K + k : k * N + j)] * double(rhs_scale);
          want += w * L(k);
          weight_abs += std::abs(w);
        }
        EXPECT_NEAR(got[(bt * M + i) * N + j], want, weight_abs * step + 1e-5);
      }
    }
  }
  DumpForLiteRt(m, name);
}

TEST(HybridBatchMatMul, Variants) {
  std::mt19937 rng(45);
  int i = 0;
  for (bool asymmetric : {false, true})
    for (bool adj_x : {false, true})
      for (bool adj_y : {false, true}) {
        BmmCase c;
        c.asymmetric = asymmetric;
        c.adj_x = adj_x;
        c.adj_y = adj_y;
        c.lhs = adj_x ? std::vector<int32_t>{2, 4, 3} : std::vector<int32_t>{2, 3, 4};
        c.rhs = adj_y ? std::vector<int32_t>{5, 4} : std::vector<int32_t>{4, 5};
        RunHybridBatchMatMul(c, "hybrid_bmm_" + std::to_string(i++), rng);
      }
  BmmCase batched;  // rhs with its own batch dimension
  batched.lhs = {3, 2, 6};
  batched.rhs = {3, 6, 4};
  RunHybridBatchMatMul(batched, "hybrid_bmm_batched", rng);
  BmmCase positive;
  positive.asymmetric = true;
  positive.lo = 0.3f;
  positive.hi = 2.0f;
  RunHybridBatchMatMul(positive, "hybrid_bmm_positive", rng);
  for (bool asymmetric : {false, true}) {
    BmmCase ties;
    ties.ties = true;
    ties.asymmetric = asymmetric;
    ties.lhs = {2, 3, 41};
    ties.rhs = {41, 5};
    RunHybridBatchMatMul(ties, asymmetric ? "hybrid_bmm_ties_asym" : "hybrid_bmm_ties_sym", rng);
  }
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
