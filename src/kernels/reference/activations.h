// RELU, RELU6, LOGISTIC and TANH as TFLite's reference resolver computes them:
// float kernels in float (logistic with TFLite's cut-offs), quantized RELU/RELU6
// as a requantization followed by a clamp, and 8-bit LOGISTIC/TANH through a
// 256-entry table filled once from the float function (TFLite's LUTPopulate).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"

namespace delegato::reference {

inline void ReluFloat(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = in[i] < 0.0f ? 0.0f : in[i];
}

// x > 6 ? 6 : x < 0 ? 0 : x, as LiteRT's reference kernel: a NaN input stays NaN.
inline void Relu6Float(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = in[i] > 6.0f ? 6.0f : in[i] < 0.0f ? 0.0f : in[i];
}

// Quantized RELU/RELU6: out = clamp(out_zp + (in - in_zp) * in_s/out_s).
struct QuantizedReluParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t output_multiplier = 0;
  int output_shift = 0;
  int32_t act_min = 0, act_max = 0;
};

template <class T>
void QuantizedRelu(const QuantizedReluParams& p, const T* in, T* out, int64_t begin,
                   int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    int32_t v = p.output_zero_point +
                quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(in[i]) - p.input_zero_point,
                                                     p.output_multiplier, p.output_shift);
    v = std::max(p.act_min, v);
    v = std::min(p.act_max, v);
    out[i] = static_cast<T>(v);
  }
}

// TFLite's float logistic: exact 1 above ~16.62, exp(x) below -9, otherwise
// 1 / (1 + exp(-x)), all in float.
inline float LogisticValue(float x) {
  constexpr float kCutoffUpper = 16.619047164916992188f;
  constexpr float kCutoffLower = -9.0f;
  if (x > kCutoffUpper) return 1.0f;
  if (x < kCutoffLower) return std::exp(x);
  return 1.0f / (1.0f + std::exp(-x));
}

inline void LogisticFloat(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = LogisticValue(in[i]);
}

inline void TanhFloat(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = std::tanh(in[i]);
}

// The transform a quantized table applies (in float, as TFLite does).
inline float LogisticForTable(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline float TanhForTable(float x) { return std::tanh(x); }

// Fills a 256-entry table indexed by the input byte (uint8 value, or the
// int8 value reinterpreted as uint8): dequantize, apply fn, requantize with
// round-half-away and clamp (TFLite's LUTPopulate for 8-bit types).
template <class T, class Fn>
void PopulateLookupTable(float input_scale, int32_t input_zero_point, float output_scale,
                         int32_t output_zero_point, Fn fn, T* table) {
  static_assert(std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>);
  const float inverse_scale = 1 / output_scale;
  const int32_t min_value = std::numeric_limits<T>::min();
  const int32_t max_value = std::numeric_limits<T>::max();
  for (int32_t value = min_value; value <= max_value; ++value) {
    const float dequantized = input_scale * static_cast<float>(value - input_zero_point);
    const float transformed = fn(dequantized);
    const float rescaled = std::round(transformed * inverse_scale);
    const int32_t quantized = fixed_point::TruncateToInt32(rescaled + static_cast<float>(output_zero_point));
    table[static_cast<uint8_t>(static_cast<T>(value))] =
        static_cast<T>(std::max(std::min(max_value, quantized), min_value));
  }
}

template <class T>
void LookupTable(const T* table, const T* in, T* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = table[static_cast<uint8_t>(in[i])];
}

}  // namespace delegato::reference
