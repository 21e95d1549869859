// Dynamic-range ("hybrid") kernels: float activations with constant int8
// weights, as TFLite's tensor_utils compute them. Each batch row of the input
// is quantized to int8 on the fly (symmetric: scale max|x| / 127; asymmetric:
// TFLite's nudged zero point over [min(0, x), max(0, x)], in float), multiplied with the
// weights in int32, corrected by row_sum * zero_point when asymmetric, and
// scaled back in float: out = bias + float(dot) * (row_scale * weight_scale).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/reference/batch_matmul.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/depthwise_conv.h"
#include "kernels/reference/transpose_conv.h"

namespace delegato::reference {

// One asymmetrically quantized value as LiteRT computes it: x * inverse
// rounded half away from zero, then the zero point added as an integer. This
// is not round(zero_point + x * inverse): on a half step the two differ when
// the product and the sum have opposite signs (0.5 with zero point -27 gives
// -26 here, -27 there). Measured in LiteRT 2.3's x86 build for every hybrid
// kernel with asymmetric inputs (docs/ops.md, "Hybrid input rounding").
inline int8_t AsymmetricQuantizeValue(float x, float inverse, int32_t zero_point) {
  constexpr int32_t kMin = -128, kMax = 127;
  const auto rounded = static_cast<int32_t>(std::round(x * inverse));
  // Wrapping add: an out-of-range product (cast to INT32_MIN on x86) stays defined.
  const auto q = static_cast<int32_t>(static_cast<uint32_t>(rounded) +
                                      static_cast<uint32_t>(zero_point));
  return static_cast<int8_t>(std::min(kMax, std::max(kMin, q)));
}

// SymmetricQuantizeRow's scale and its inverse from the row's extremes;
// false when the row is all zeros (quantized to 0 with scale 1).
inline bool SymmetricQuantizeParams(float lo, float hi, float* scale, float* inverse) {
  const float range = std::max(std::fabs(lo), std::fabs(hi));
  if (range == 0.0f) {
    *scale = 1.0f;
    return false;
  }
  constexpr int32_t kScale = 127;
  *scale = range / kScale;
  *inverse = kScale / range;
  return true;
}

// TFLite's SymmetricQuantizeFloats.
inline void SymmetricQuantizeRow(const float* values, int32_t n, int8_t* quantized,
                                 float* scale) {
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) {
    const auto [mn, mx] = std::minmax_element(values, values + n);
    lo = *mn;
    hi = *mx;
  }
  float inverse = 0.0f;
  if (!SymmetricQuantizeParams(lo, hi, scale, &inverse)) {
    std::memset(quantized, 0, static_cast<size_t>(n));
    return;
  }
  constexpr int32_t kScale = 127;
  for (int32_t i = 0; i < n; ++i) {
    const auto q = static_cast<int32_t>(std::round(values[i] * inverse));
    quantized[i] = static_cast<int8_t>(std::min(kScale, std::max(-kScale, q)));
  }
}

// AsymmetricQuantizeRow's scale and nudged zero point from the row's
// extremes; false when the range is empty (quantized to 0, scale 1, zero
// point 0).
inline bool AsymmetricQuantizeParams(float lo, float hi, float* scale, int32_t* zero_point) {
  constexpr int32_t kMin = -128, kMax = 127;
  // In float throughout, as LiteRT's x86 build computes it (a double
  // formulation differs in the last bit of the scale).
  const float rmin = std::min(0.0f, lo);
  const float rmax = std::max(0.0f, hi);
  if (rmin == rmax) {
    *scale = 1.0f;
    *zero_point = 0;
    return false;
  }
  const float qmin = kMin, qmax = kMax;
  const float s = (rmax - rmin) / (qmax - qmin);
  const float zp_from_min = qmin - rmin / s;
  const float zp_from_max = qmax - rmax / s;
  const float error_from_min = std::fabs(qmin) + std::fabs(rmin / s);
  const float error_from_max = std::fabs(qmax) + std::fabs(rmax / s);
  const float zp = error_from_min < error_from_max ? zp_from_min : zp_from_max;
  int32_t nudged;
  if (zp <= qmin) nudged = kMin;
  else if (zp >= qmax) nudged = kMax;
  else nudged = static_cast<int8_t>(std::round(zp));
  *scale = s;
  *zero_point = nudged;
  return true;
}

// TFLite's AsymmetricQuantizeFloats: the zero point nudged from whichever
// end of [min(0, x), max(0, x)] gives the smaller error.
inline void AsymmetricQuantizeRow(const float* values, int32_t n, int8_t* quantized,
                                  float* scale, int32_t* zero_point) {
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) {
    const auto [mn, mx] = std::minmax_element(values, values + n);
    lo = *mn;
    hi = *mx;
  }
  if (!AsymmetricQuantizeParams(lo, hi, scale, zero_point)) {
    std::memset(quantized, 0, static_cast<size_t>(n));
    return;
  }
  const float inverse = 1.0f / *scale;
  for (int32_t i = 0; i < n; ++i)
    quantized[i] = AsymmetricQuantizeValue(values[i], inverse, *zero_point);
}

// TFLite's portable AsymmetricQuantizeFloats as its BatchQuantizeFloats calls
// it from the SVDF and RNN kernels: range, scale and zero point in double
// (the scale stored as float). It differs from AsymmetricQuantizeRow when the
// zero point is a rounding tie (e.g. a row spanning exactly [-a, a]).
inline void AsymmetricQuantizeRowDouble(const float* values, int32_t n, int8_t* quantized,
                                        float* scale, int32_t* zero_point) {
  constexpr int32_t kMin = -128, kMax = 127;
  float lo = 0.0f, hi = 0.0f;
  if (n > 0) {
    const auto [mn, mx] = std::minmax_element(values, values + n);
    lo = *mn;
    hi = *mx;
  }
  const double rmin = std::min(0.0f, lo);
  const double rmax = std::max(0.0f, hi);
  if (rmin == rmax) {
    std::memset(quantized, 0, static_cast<size_t>(n));
    *scale = 1.0f;
    *zero_point = 0;
    return;
  }
  const double s = (rmax - rmin) / (double{kMax} - double{kMin});
  const double zp_from_min = kMin - rmin / s;
  const double zp_from_max = kMax - rmax / s;
  const double error_from_min = std::fabs(double{kMin}) + std::fabs(rmin / s);
  const double error_from_max = std::fabs(double{kMax}) + std::fabs(rmax / s);
  const double zp = error_from_min < error_from_max ? zp_from_min : zp_from_max;
  int32_t nudged;
  if (zp <= kMin) nudged = kMin;
  else if (zp >= kMax) nudged = kMax;
  else nudged = static_cast<int8_t>(std::round(zp));
  *scale = static_cast<float>(s);
  *zero_point = nudged;
  const float inverse = 1.0f / *scale;
  for (int32_t i = 0; i < n; ++i)
    quantized[i] = AsymmetricQuantizeValue(values[i], inverse, nudged);
}

// Each of n_batch rows of n values quantized on its own (BatchQuantizeFloats):
// symmetric (zero point 0) or asymmetric in double (above).
inline void BatchQuantizeRows(const float* v, int32_t n_batch, int32_t n, bool asymmetric,
                              int8_t* q, float* scales, int32_t* zero_points) {
  for (int32_t b = 0; b < n_batch; ++b) {
    const int64_t o = static_cast<int64_t>(b) * n;
    if (asymmetric) {
      AsymmetricQuantizeRowDouble(v + o, n, q + o, &scales[b], &zero_points[b]);
    } else {
      SymmetricQuantizeRow(v + o, n, q + o, &scales[b]);
      zero_points[b] = 0;
    }
  }
}

struct HybridFullyConnectedParams {
  int32_t batches = 0, depth = 0, units = 0;
  const int8_t* weights = nullptr;      // [units][depth]
  const float* weight_scales = nullptr;  // one per unit, or one
  bool per_channel = false;
  bool asymmetric = false;
  const int32_t* row_sums = nullptr;  // per unit, for asymmetric inputs
  float act_min = 0, act_max = 0;
};

// Batch rows [begin, end). `quantized` has room for batches * depth values.
// `clamp`: apply [act_min, act_max] (a fused activation; NONE passes values,
// infinities included, unchanged).
inline void HybridFullyConnected(const HybridFullyConnectedParams& p, const float* input,
                                 const float* bias, int8_t* quantized, float* output,
                                 int64_t begin, int64_t end, bool clamp) {
  for (int64_t b = begin; b < end; ++b) {
    const float* in = input + b * p.depth;
    float* out = output + b * p.units;
    int8_t* q = quantized + b * p.depth;
    float row_scale = 1.0f;
    int32_t zero_point = 0;
    if (p.asymmetric)
      AsymmetricQuantizeRow(in, p.depth, q, &row_scale, &zero_point);
    else
      SymmetricQuantizeRow(in, p.depth, q, &row_scale);
    for (int32_t u = 0; u < p.units; ++u) {
      const int8_t* w = p.weights + static_cast<size_t>(u) * p.depth;
      int32_t dot = 0;
      for (int32_t d = 0; d < p.depth; ++d) dot += int32_t{w[d]} * int32_t{q[d]};
      if (p.asymmetric) dot -= p.row_sums[u] * zero_point;
      const float scale = row_scale * (p.per_channel ? p.weight_scales[u] : p.weight_scales[0]);
      const float v = (bias != nullptr ? bias[u] : 0.0f) + static_cast<float>(dot) * scale;
      out[u] = clamp ? std::min(std::max(v, p.act_min), p.act_max) : v;
    }
  }
}

}  // namespace delegato::reference

namespace delegato::reference {

// Hybrid DEPTHWISE_CONV_2D (TFLite's DepthwiseConvHybridPerChannel): each
// batch image is quantized asymmetrically as one row (QuantizeDepthwiseInput),
// then out = clamp(float(sum w * (q - zero_point)) * (channel_scale *
// image_scale) + bias).
struct HybridDepthwiseParams {
  const float* channel_scales = nullptr;  // one per output channel
  float act_min = 0, act_max = 0;
};

inline void QuantizeDepthwiseInput(const DepthwiseGeometry& g, const float* input,
                                   int8_t* quantized, float* scales, int32_t* zero_points,
                                   int64_t batch_begin, int64_t batch_end) {
  const int64_t size = static_cast<int64_t>(g.input_height) * g.input_width * g.input_depth;
  for (int64_t b = batch_begin; b < batch_end; ++b)
    AsymmetricQuantizeRow(input + b * size, static_cast<int32_t>(size), quantized + b * size,
                          &scales[b], &zero_points[b]);
}

// Output rows [row_begin, row_end) (a row is one (batch, out_y) pair).
inline void HybridDepthwiseConv(const DepthwiseGeometry& g, const HybridDepthwiseParams& p,
                                const int8_t* quantized, const float* scales,
                                const int32_t* zero_points, const int8_t* filter,
                                const float* bias, float* output, int64_t row_begin,
                                int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const int8_t* batch_input = quantized + batch * batch_input_size;
    const int32_t zero_point = zero_points[batch];
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      float* out = output + (static_cast<size_t>(row) * g.output_width + out_x) * out_depth;
      for (int32_t oc = 0; oc < g.output_depth; ++oc) {
        const int32_t ic = oc / g.depth_multiplier;
        int32_t acc = 0;
        detail::ForEachDepthwiseTap(g, batch_input, out_y, out_x,
                                    [&](int32_t tap, const int8_t* in) {
          acc += int32_t{filter[static_cast<size_t>(tap) * out_depth + oc]} *
                 (int32_t{in[ic]} - zero_point);
        });
        float v = static_cast<float>(acc);
        v *= p.channel_scales[oc] * scales[batch];
        if (bias != nullptr) v += bias[oc];
        out[oc] = std::min(std::max(v, p.act_min), p.act_max);
      }
    }
  }
}

}  // namespace delegato::reference

namespace delegato::reference {

// Hybrid CONV_2D (no dilation), TFLite's two paths:
// - per-channel weights: each batch image quantized asymmetrically as one
//   row; out = clamp(float(sum w * (q - zp)) * channel_scale * image_scale
//   + bias), multiplied left to right (reference HybridConvPerChannel,
//   which also takes grouped filters: output channel oc reads input
//   channels from (oc / filters per group) * filter depth);
// - per-tensor weights: each image quantized symmetrically, its scale times
//   the weight scale; out = clamp(float(sum w * q) * scale + bias) (HybridConv).
struct HybridConvParams {
  bool per_channel = false;
  const float* weight_scales = nullptr;  // per output channel, or one
  float act_min = 0, act_max = 0;
};

inline void QuantizeConvInput(const ConvGeometry& g, bool per_channel, float weight_scale,
                              const float* input, int8_t* quantized, float* scales,
                              int32_t* zero_points, int64_t batch_begin, int64_t batch_end) {
  const int64_t size = static_cast<int64_t>(g.input_height) * g.input_width * g.input_depth;
  for (int64_t b = batch_begin; b < batch_end; ++b) {
    if (per_channel) {
      AsymmetricQuantizeRow(input + b * size, static_cast<int32_t>(size), quantized + b * size,
                            &scales[b], &zero_points[b]);
    } else {
      SymmetricQuantizeRow(input + b * size, static_cast<int32_t>(size), quantized + b * size,
                           &scales[b]);
      scales[b] *= weight_scale;
      zero_points[b] = 0;
    }
  }
}

// Output rows [row_begin, row_end); `filter` in its [out][y][x][in] layout.
inline void HybridConv(const ConvGeometry& g, const HybridConvParams& p, const int8_t* quantized,
                       const float* scales, const int32_t* zero_points, const int8_t* filter,
                       const float* bias, float* output, int64_t row_begin, int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  const size_t filter_taps = static_cast<size_t>(g.filter_height) * g.filter_width;
  const int32_t per_group = g.filters_per_group();
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const int8_t* batch_input = quantized + batch * batch_input_size;
    const int32_t zero_point = zero_points[batch];
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      float* out = output + (static_cast<size_t>(row) * g.output_width + out_x) * out_depth;
      for (int32_t oc = 0; oc < g.output_depth; ++oc) {
        const int8_t* w = filter + oc * filter_taps * g.filter_depth;
        const size_t group_channels = static_cast<size_t>(oc / per_group) * g.filter_depth;
        int32_t acc = 0;
        detail::ForEachConvTap(g, batch_input, out_y, out_x, [&](int32_t tap, const int8_t* px) {
          const int8_t* wt = w + static_cast<size_t>(tap) * g.filter_depth;
          const int8_t* in = px + group_channels;
          for (int32_t ic = 0; ic < g.filter_depth; ++ic)
            acc += int32_t{wt[ic]} * (int32_t{in[ic]} - zero_point);
        });
        float v;
        if (p.per_channel) {
          v = static_cast<float>(acc) * p.weight_scales[oc] * scales[batch];
        } else {
          v = static_cast<float>(acc) * scales[batch];
        }
        if (bias != nullptr) v += bias[oc];
        out[oc] = std::min(std::max(v, p.act_min), p.act_max);
      }
    }
  }
}

// Hybrid TRANSPOSE_CONV (float input and output, constant int8 weights with
// zero points 0). Each batch's input is quantized asymmetrically (a scale and
// zero point per batch, whether the weights are per-tensor or per-channel);
// the products (q - zero_point) * w are scattered into int32 accumulators as
// the integer kernels do, then scaled back per output:
// out = float(acc) * weight_scale[oc] * batch_scale (+ bias, clamped).
// LiteRT's reference kernel agrees to within float rounding (it sums in
// another order), not bit for bit.
struct HybridTransposeConvParams {
  bool per_channel = false;
  const float* weight_scales = nullptr;  // per output channel, or one
  float act_min = 0, act_max = 0;
};

// quantized: batches * input elements; scales, zero_points: per batch;
// acc: output_elements.
inline void HybridTransposeConv(const TransposeConvGeometry& g,
                                const HybridTransposeConvParams& p, const float* input,
                                const int8_t* filter, const float* bias, int8_t* quantized,
                                float* scales, int32_t* zero_points, int32_t* acc,
                                float* output) {
  const int64_t in_size = static_cast<int64_t>(g.input_height) * g.input_width * g.input_depth;
  const int64_t out_size =
      static_cast<int64_t>(g.output_height) * g.output_width * g.output_depth;
  TransposeConvGeometry one = g;
  one.batches = 1;
  for (int32_t b = 0; b < g.batches; ++b) {
    const float* in = input + b * in_size;
    int8_t* q = quantized + b * in_size;
    AsymmetricQuantizeRow(in, static_cast<int32_t>(in_size), q, &scales[b], &zero_points[b]);
    const int32_t zero_point = zero_points[b];
    TransposeConvScatter(one, q, filter, acc + b * out_size, [zero_point](int8_t x, int8_t w) {
      return (int32_t{x} - zero_point) * int32_t{w};
    });
    const int64_t pixels = static_cast<int64_t>(g.output_height) * g.output_width;
    for (int64_t px = 0; px < pixels; ++px) {
      const int32_t* a = acc + b * out_size + px * g.output_depth;
      float* out = output + b * out_size + px * g.output_depth;
      for (int32_t oc = 0; oc < g.output_depth; ++oc) {
        float v = static_cast<float>(a[oc]) * p.weight_scales[p.per_channel ? oc : 0] * scales[b];
        if (bias != nullptr) v += bias[oc];
        out[oc] = std::min(std::max(v, p.act_min), p.act_max);
      }
    }
  }
}

}  // namespace delegato::reference

namespace delegato::reference {

// Hybrid BATCH_MATMUL (TFLite's reference hybrid BatchMatMul): every row of
// the float lhs (as [M, K] after adj_x) is quantized on its own, its scale
// times the rhs's per-tensor scale; per output, an int32 sum over k, the
// zero-point correction done in float as TFLite writes it
// (total = int32(float(total) - float(row_sum) * float(zero_point))), and
// out = row_scale * float(total). No bias, no activation.
struct HybridBatchMatMulParams {
  bool asymmetric = false;
  float rhs_scale = 0;
  const int32_t* column_sums = nullptr;  // per rhs matrix and output column
};

// Quantizes the lhs rows of lhs matrices [matrix_begin, matrix_end) with
// quantize_row(values, depth, quantized, &scale, &zero_point), a row's values
// gathered into row_buffer first when adj_x spreads them; the scales then
// include the rhs scale.
template <class QuantizeRow>
void QuantizeBatchMatMulLhs(const BatchMatMulGeometry& g, const HybridBatchMatMulParams& p,
                            const float* lhs, float* row_buffer, int8_t* quantized, float* scales,
                            int32_t* zero_points, int64_t matrix_begin, int64_t matrix_end,
                            const QuantizeRow& quantize_row) {
  const int64_t lhs_m = g.adj_x ? 1 : g.depth, lhs_k = g.adj_x ? g.rows : 1;
  const int64_t matrix_size = static_cast<int64_t>(g.rows) * g.depth;
  for (int64_t mat = matrix_begin; mat < matrix_end; ++mat) {
    for (int32_t m = 0; m < g.rows; ++m) {
      const int64_t row = mat * g.rows + m;
      const float* values = lhs + mat * matrix_size + m * lhs_m;
      if (lhs_k != 1) {
        for (int32_t k = 0; k < g.depth; ++k) row_buffer[k] = values[k * lhs_k];
        values = row_buffer;
      }
      quantize_row(values, g.depth, quantized + row * g.depth, &scales[row], &zero_points[row]);
      scales[row] *= p.rhs_scale;
    }
  }
}

// The reference's quantizer: asymmetric, or symmetric with zero point 0.
inline void QuantizeBatchMatMulLhs(const BatchMatMulGeometry& g, const HybridBatchMatMulParams& p,
                                   const float* lhs, float* row_buffer, int8_t* quantized,
                                   float* scales, int32_t* zero_points, int64_t matrix_begin,
                                   int64_t matrix_end) {
  QuantizeBatchMatMulLhs(g, p, lhs, row_buffer, quantized, scales, zero_points, matrix_begin,
                         matrix_end,
                         [&](const float* v, int32_t n, int8_t* q, float* scale, int32_t* zp) {
                           if (p.asymmetric) {
                             AsymmetricQuantizeRow(v, n, q, scale, zp);
                           } else {
                             SymmetricQuantizeRow(v, n, q, scale);
                             *zp = 0;
                           }
                         });
}

inline void HybridBatchMatMul(const BatchMatMulGeometry& g, const HybridBatchMatMulParams& p,
                              const int8_t* quantized, const float* scales,
                              const int32_t* zero_points, const int8_t* rhs, float* out) {
  const int64_t rhs_k = g.adj_y ? 1 : g.cols, rhs_n = g.adj_y ? g.depth : 1;
  const int64_t lhs_size = static_cast<int64_t>(g.rows) * g.depth;
  const int64_t rhs_size = static_cast<int64_t>(g.depth) * g.cols;
  ForEachBatchMatrix(g, [&](int64_t l, int64_t r, int64_t o) {
    const int64_t first_row = l / std::max<int64_t>(lhs_size, 1) * g.rows;
    const int32_t* sums = p.column_sums + r / std::max<int64_t>(rhs_size, 1) * g.cols;
    const int8_t* b = rhs + r;
    for (int32_t m = 0; m < g.rows; ++m) {
      const int8_t* q = quantized + (first_row + m) * g.depth;
      const float scale = scales[first_row + m];
      const float offset = static_cast<float>(zero_points[first_row + m]);
      for (int32_t n = 0; n < g.cols; ++n) {
        int32_t total = 0;
        for (int32_t k = 0; k < g.depth; ++k)
          total += int32_t{b[k * rhs_k + n * rhs_n]} * int32_t{q[k]};
        total = static_cast<int32_t>(static_cast<float>(total) -
                                     static_cast<float>(sums[n]) * offset);
        out[o + static_cast<int64_t>(m) * g.cols + n] = scale * static_cast<float>(total);
      }
    }
  });
}

}  // namespace delegato::reference
