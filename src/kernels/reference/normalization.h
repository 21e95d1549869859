// LOG_SOFTMAX (float), L2_NORMALIZATION (float, uint8, int8),
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
// right), by five Newton-Raphson steps in Q3.28 (TFLite's
// GetInvSqrtQuantizedMultiplierExp with its reverse shift). 0 and 1 give
// the largest multiplier.
inline void InvSqrtMultiplier(int32_t x, int32_t* multiplier, int* left_shift) {
  using fixed_point::FixedPoint;
  using fixed_point::Rescale;
  if (x <= 1) {
    *multiplier = std::numeric_limits<int32_t>::max();
    *left_shift = 0;
    return;
  }
  int shift = 11;
  while (x >= (1 << 29)) {
    x /= 4;
    ++shift;
  }
  const int max_left_shift_bits = fixed_point::CountLeadingZeros(static_cast<uint32_t>(x)) - 1;
  const int left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
  shift -= left_shift_bit_pairs;
  x <<= 2 * left_shift_bit_pairs;
  using F3 = FixedPoint<3>;
  using F0 = FixedPoint<0>;
  const F3 input = F3::FromRaw(x >> 1);
  const F3 half_input = F3::FromRaw(fixed_point::SaturatingRoundingMultiplyByPOT<-1>(input.raw));
  const F3 three_halves = F3::FromRaw((1 << 28) + (1 << 27));
  F3 estimate = F3::One();
  for (int i = 0; i < 5; ++i) {
    const F3 cube = Rescale<3>(estimate * estimate * estimate);
    estimate = Rescale<3>(three_halves * estimate - half_input * cube);
  }
  const F0 half_sqrt2 = F0::FromRaw(1518500250);
  estimate = estimate * half_sqrt2;
  int32_t raw = estimate.raw;
  if (shift < 0) {
    raw = static_cast<int32_t>(static_cast<uint32_t>(raw) << -shift);
    shift = 0;
  }
  *multiplier = raw;
  *left_shift = -shift;
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
