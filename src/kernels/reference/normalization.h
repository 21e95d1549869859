// LOG_SOFTMAX (float, uint8, int8), L2_NORMALIZATION (float, uint8, int8),
// LOCAL_RESPONSE_NORMALIZATION (float) and L2_POOL_2D (float), as TFLite's
// reference kernels compute them. Row functions work on rows [begin, end) of
// `depth` values (the last dimension).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"
#include "kernels/reference/pooling.h"
#include "kernels/reference/softmax.h"

namespace delegato::reference {

inline void LogSoftmaxFloat(const float* in, float* out, int64_t depth, int64_t row_begin,
                            int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* x = in + r * depth;
    float* y = out + r * depth;
    float max = std::numeric_limits<float>::lowest();
    for (int64_t c = 0; c < depth; ++c) max = std::max(max, x[c]);
    float sum = 0.0f;
    for (int64_t c = 0; c < depth; ++c) sum += std::exp(x[c] - max);
    const float log_sum = std::log(sum);
    for (int64_t c = 0; c < depth; ++c) y[c] = x[c] - max - log_sum;
  }
}

// ------------------------------------------------------------ quantized LOG_SOFTMAX

namespace log_detail {

using fixed_point::FixedPoint;

// x * 2^exponent for exponent >= 0, saturating (gemmlowp's run-time form).
inline int32_t SaturatingShiftLeft(int32_t x, int exponent) {
  if (exponent == 0) return x;
  const int32_t threshold = static_cast<int32_t>((int64_t{1} << (31 - exponent)) - 1);
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

inline int32_t SaturateToInt32(int64_t x) {
  return static_cast<int32_t>(std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}
inline int32_t SaturatingAdd(int32_t a, int32_t b) { return SaturateToInt32(int64_t{a} + b); }
inline int32_t SaturatingSub(int32_t a, int32_t b) { return SaturateToInt32(int64_t{a} - b); }

// log(x) for x >= 1 in fixed point (TFLite's
// log_x_for_x_greater_than_or_equal_to_1): x = 2^k * r with r near 1, and
// log r from a rational approximation in q = 2 (r - 2^-1/4).
template <int OutputIntegerBits, int InputIntegerBits>
FixedPoint<OutputIntegerBits> LogOfAtLeastOne(FixedPoint<InputIntegerBits> input) {
  using F0 = FixedPoint<0>;
  constexpr int kAccumBits = OutputIntegerBits + 1;
  using Accum = FixedPoint<kAccumBits>;
  const F0 log_2 = F0::FromRaw(1488522236);
  const F0 sqrt_sqrt_half = F0::FromRaw(1805811301);
  const F0 sqrt_half = F0::FromRaw(1518500250);
  const F0 one_quarter = F0::FromRaw(536870912);
  const F0 alpha_n = F0::FromRaw(117049297);
  const F0 alpha_d = F0::FromRaw(127690142);
  const F0 alpha_i = F0::FromRaw(1057819769);
  const F0 alpha_f = F0::FromRaw(638450708);
  const Accum shifted_quarter = fixed_point::Rescale<kAccumBits>(one_quarter);

  const F0 z_a = F0::FromRaw(input.raw);
  const int z_a_headroom_plus_1 = fixed_point::CountLeadingZeros(static_cast<uint32_t>(z_a.raw));
  const F0 r_a_tmp = F0::FromRaw(SaturatingShiftLeft(z_a.raw, z_a_headroom_plus_1 - 1));
  const int32_t r_a_raw = SaturatingShiftLeft((r_a_tmp * sqrt_half).raw, 1);
  const Accum z_a_pow_2_adj = Accum::FromRaw(SaturatingAdd(
      SaturatingShiftLeft(InputIntegerBits - z_a_headroom_plus_1, 31 - kAccumBits),
      shifted_quarter.raw));

  const F0 z_b = z_a * sqrt_half;
  const int z_b_headroom = fixed_point::CountLeadingZeros(static_cast<uint32_t>(z_b.raw)) - 1;
  const int32_t r_b_raw = SaturatingShiftLeft(z_a.raw, z_b_headroom);
  const Accum z_b_pow_2_adj = Accum::FromRaw(SaturatingSub(
      SaturatingShiftLeft(InputIntegerBits - z_b_headroom, 31 - kAccumBits), shifted_quarter.raw));

  const F0 r = F0::FromRaw(std::min(r_a_raw, r_b_raw));
  const Accum z_pow_2_adj = Accum::FromRaw(std::max(z_a_pow_2_adj.raw, z_b_pow_2_adj.raw));

  const F0 p = F0::FromRaw(fixed_point::RoundingHalfSum(r.raw, sqrt_sqrt_half.raw));
  F0 q = r - sqrt_sqrt_half;
  q = q + q;
  const F0 common_sq = q * q;
  const F0 num = q * r + q * common_sq * alpha_n;
  const F0 denom_minus_one = p * (alpha_i + q + alpha_d * common_sq) + alpha_f * q;
  const F0 recip_denom = fixed_point::OneOverOnePlusXForXIn0To1(denom_minus_one);
  const Accum num_scaled = fixed_point::Rescale<kAccumBits>(num);
  return fixed_point::Rescale<OutputIntegerBits>(z_pow_2_adj * log_2 + num_scaled * recip_denom);
}

}  // namespace log_detail

// Scaling of quantized LOG_SOFTMAX: the softmax input scaling (beta 1) and
// its inverse, to bound which differences can still reach the output.
struct QuantizedLogSoftmaxParams {
  QuantizedSoftmaxParams softmax;
  int32_t reverse_scaling_divisor = 0;
  int reverse_scaling_right_shift = 0;
};

// TFLite's PreprocessLogSoftmaxScalingExp. False when the input scale is too
// small for the fixed-point scheme.
inline bool PrepareQuantizedLogSoftmax(double input_scale, QuantizedLogSoftmaxParams* p) {
  if (!PrepareQuantizedSoftmax(1.0, input_scale, &p->softmax)) return false;
  const double real_divisor =
      static_cast<double>(int64_t{1} << (31 - p->softmax.input_left_shift)) /
      static_cast<double>(p->softmax.input_multiplier);
  if (!(real_divisor > 0.0 && real_divisor < 1.0)) return false;
  int shift = 0;
  quant::QuantizeMultiplier(real_divisor, &p->reverse_scaling_divisor, &shift);
  p->reverse_scaling_right_shift = -shift;
  return true;
}

// Output scale 16/256 with the zero point at the type's maximum (log <= 0).
template <class T>
void LogSoftmaxQuantized(const QuantizedLogSoftmaxParams& p, const T* in, T* out, int64_t depth,
                         int64_t row_begin, int64_t row_end) {
  using fixed_point::FixedPoint;
  constexpr int kInputBits = kSoftmaxScaledDiffIntegerBits;      // Q5.26
  constexpr int kAccumBits = kSoftmaxAccumulationIntegerBits;    // Q12.19
  constexpr int kOutputBits = 4;
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  const QuantizedSoftmaxParams& s = p.softmax;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* x = in + r * depth;
    T* y = out + r * depth;
    T max_in_row = std::numeric_limits<T>::min();
    for (int64_t c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[c]);
    FixedPoint<kAccumBits> sum = FixedPoint<kAccumBits>::Zero();
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      if (diff >= s.diff_min) {
        const int32_t scaled =
            quant::MultiplyByQuantizedMultiplier(diff, s.input_multiplier, s.input_left_shift);
        sum = sum + fixed_point::Rescale<kAccumBits>(
                        fixed_point::ExpOnNegativeValues(FixedPoint<kInputBits>::FromRaw(scaled)));
      }
    }
    const int32_t log_sum = log_detail::LogOfAtLeastOne<kInputBits>(sum).raw;
    const int32_t adjusted_diff_min = std::max(
        s.diff_min - 1,
        quant::MultiplyByQuantizedMultiplier(
            fixed_point::WrappingAdd(log_sum, std::numeric_limits<int32_t>::min()),
                                             p.reverse_scaling_divisor,
                                             -p.reverse_scaling_right_shift));
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      if (diff > adjusted_diff_min) {
        const int32_t scaled =
            quant::MultiplyByQuantizedMultiplier(diff, s.input_multiplier, s.input_left_shift);
        const int32_t v =
            quant::RoundingDivideByPOT(scaled - log_sum, 31 - kInputBits - kOutputBits) + kMax;
        y[c] = static_cast<T>(std::clamp(v, kMin, kMax));
      } else {
        y[c] = static_cast<T>(kMin);
      }
    }
  }
}

inline void L2NormalizeFloat(const float* in, float* out, int64_t depth, int64_t row_begin,
                             int64_t row_end) {
  constexpr float kEpsilon = 1e-6f;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* x = in + r * depth;
    float* y = out + r * depth;
    float squared = 0.0f;
    for (int64_t c = 0; c < depth; ++c) squared += x[c] * x[c];
    const float norm = std::max(std::sqrt(squared), kEpsilon);
    for (int64_t c = 0; c < depth; ++c) y[c] = x[c] / norm;
  }
}

// 1 / sqrt(x) for x > 0 as a Q31 multiplier and a left shift (negative:
// right); 0 and 1 give the largest multiplier.
inline void InvSqrtMultiplier(int32_t x, int32_t* multiplier, int* left_shift) {
  fixed_point::GetInvSqrtQuantizedMultiplierExp(x, -1, multiplier, left_shift);
}

// Quantized L2 normalization onto the fixed output scale 1/128 (zero point
// 128 for uint8, 0 for int8).
template <class T>
void L2NormalizeQuantized(int32_t input_zero_point, const T* in, T* out, int64_t depth,
                          int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const T* x = in + r * depth;
    T* y = out + r * depth;
    int32_t squared = 0;
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t d = static_cast<int32_t>(x[c]) - input_zero_point;
      squared += d * d;
    }
    int32_t multiplier;
    int shift;
    InvSqrtMultiplier(squared, &multiplier, &shift);
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t d = static_cast<int32_t>(x[c]) - input_zero_point;
      if constexpr (std::is_same_v<T, uint8_t>) {
        const int32_t v =
            128 + quant::MultiplyByQuantizedMultiplierSmallerThanOneExp(128 * d, multiplier, shift);
        y[c] = static_cast<T>(std::clamp(v, 0, 255));
      } else {
        const int32_t v = quant::MultiplyByQuantizedMultiplier(d, multiplier, shift + 7);
        y[c] = static_cast<T>(std::clamp(v, -128, 127));
      }
    }
  }
}

// Each value divided by (bias + alpha * sum of squares over channels
// [c - radius, c + radius)) ^ beta; TFLite's window stops one short of
// c + radius.
struct LocalResponseNormParamsRef {
  int32_t radius = 0;
  float bias = 0, alpha = 0, beta = 0;
};

inline void LocalResponseNormFloat(const LocalResponseNormParamsRef& p, const float* in,
                                   float* out, int64_t depth, int64_t row_begin,
                                   int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const float* x = in + r * depth;
    float* y = out + r * depth;
    for (int64_t c = 0; c < depth; ++c) {
      const int64_t begin = std::max<int64_t>(0, c - p.radius);
      const int64_t end = std::min<int64_t>(depth, c + p.radius);
      float accum = 0.0f;
      for (int64_t k = begin; k < end; ++k) accum += x[k] * x[k];
      y[c] = x[c] * std::pow(p.bias + p.alpha * accum, -p.beta);
    }
  }
}

// sqrt(mean of squares) over each window, then the activation clamp.
inline void L2PoolFloat(const PoolGeometry& g, const float* input, float act_min, float act_max,
                        float* output, int64_t row_begin, int64_t row_end) {
  const int32_t depth = g.depth;
  detail::ForEachPoolOutput(g, input, output, row_begin, row_end,
                            [&](float* out, int32_t count, auto&& for_each_pixel) {
                              for (int32_t c = 0; c < depth; ++c) out[c] = 0.0f;
                              for_each_pixel([&](const float* in) {
                                for (int32_t c = 0; c < depth; ++c) out[c] += in[c] * in[c];
                              });
                              const float divisor = static_cast<float>(count);
                              for (int32_t c = 0; c < depth; ++c)
                                out[c] = std::min(std::max(std::sqrt(out[c] / divisor), act_min),
                                                  act_max);
                            });
}

}  // namespace delegato::reference
