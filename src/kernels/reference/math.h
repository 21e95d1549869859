// Activations and element-wise math beyond elementwise.h: HARD_SWISH,
// LEAKY_RELU, PRELU, RELU_N1_TO_1, RELU_0_TO_1, GELU, EXP, LOG, RSQRT,
// SQUARE, ABS, NEG, SIN, COS, FLOOR, SIGN. Per-element formulas follow
// TFLite's reference kernels (float in float; the quantized forms in the same
// fixed-point steps, so results are bit-exact). Functions work on a flat range
// [begin, end) so callers can split the work across threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/quantization.h"
#include "kernels/reference/elementwise.h"

namespace delegato::reference {

// ------------------------------------------------------------ 16-bit fixed point
// The int16 forms of gemmlowp's primitives that quantized HARD_SWISH uses.

// (a * b * 2) >> 16 rounded to nearest; saturates the one overflow case.
inline int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  constexpr int16_t kMin = std::numeric_limits<int16_t>::min();
  if (a == b && a == kMin) return std::numeric_limits<int16_t>::max();
  const int32_t ab = static_cast<int32_t>(a) * static_cast<int32_t>(b);
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

// Same, rounding toward zero (ARM's SQDMULH).
inline int16_t SaturatingDoublingHighMul16(int16_t a, int16_t b) {
  constexpr int16_t kMin = std::numeric_limits<int16_t>::min();
  if (a == b && a == kMin) return std::numeric_limits<int16_t>::max();
  const int32_t ab = static_cast<int32_t>(a) * static_cast<int32_t>(b);
  return static_cast<int16_t>(ab / (1 << 15));
}

// x / 2^exponent, ties away from zero, in int16 (exponent in [0, 31]).
inline int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((int64_t{1} << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

inline int16_t SaturatingLeftShift16(int16_t value, int amount) {
  const int64_t shifted = static_cast<int64_t>(value) * (int64_t{1} << amount);
  return static_cast<int16_t>(std::clamp<int64_t>(shifted, std::numeric_limits<int16_t>::min(),
                                                  std::numeric_limits<int16_t>::max()));
}

// A Q31 multiplier rounded to Q15 (TFLite's DownScaleInt32ToInt16Multiplier).
inline int16_t DownScaleMultiplierToInt16(int32_t multiplier) {
  constexpr int32_t kRoundingOffset = 1 << 15;
  if (multiplier >= std::numeric_limits<int32_t>::max() - kRoundingOffset)
    return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>((multiplier + kRoundingOffset) >> 16);
}

// ------------------------------------------------------------ HARD_SWISH

inline float HardSwishValue(float x) {
  return x * std::min(6.0f, std::max(0.0f, x + 3.0f)) / 6.0f;
}

inline void HardSwishFloat(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = HardSwishValue(in[i]);
}

// x * relu6(x + 3) / 6 in 16-bit fixed point: the input is moved to a
// "high resolution" scale (input_scale / 128), the [-3, 3] ramp computed as a
// Q15 value in [0, 1] and multiplied in.
struct QuantizedHardSwishParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int16_t reluish_multiplier = 0;  // Q15
  int reluish_exponent = 0;
  int16_t output_multiplier = 0;  // Q15
  int output_exponent = 0;        // <= 0
};

template <class T>
inline T QuantizedHardSwishValue(const QuantizedHardSwishParams& p, T x) {
  const int16_t centered = static_cast<int16_t>(static_cast<int32_t>(x) - p.input_zero_point);
  const int16_t hires = static_cast<int16_t>(centered * (1 << 7));
  const int16_t preshift_scaled = SaturatingRoundingDoublingHighMul16(hires, p.output_multiplier);
  int16_t reluish = hires;
  // Left shifts saturate; all but the last bit are applied before the
  // multiplier so that only the final shift's saturation shows.
  if (p.reluish_exponent > 0) reluish = SaturatingLeftShift16(reluish, p.reluish_exponent - 1);
  reluish = SaturatingRoundingDoublingHighMul16(reluish, p.reluish_multiplier);
  if (p.reluish_exponent > 0) reluish = SaturatingLeftShift16(reluish, 1);
  if (p.reluish_exponent < 0) reluish = RoundingDivideByPOT16(reluish, -p.reluish_exponent);
  // [-1, 1] -> [0, 1].
  reluish = static_cast<int16_t>((static_cast<int32_t>(reluish) + (1 << 15)) >> 1);
  const int16_t preshift_output = SaturatingDoublingHighMul16(reluish, preshift_scaled);
  int16_t result = RoundingDivideByPOT16(preshift_output, -p.output_exponent);
  result = static_cast<int16_t>(result + p.output_zero_point);
  result = std::min<int16_t>(result, std::numeric_limits<T>::max());
  result = std::max<int16_t>(result, std::numeric_limits<T>::min());
  return static_cast<T>(result);
}

template <class T>
void QuantizedHardSwish(const QuantizedHardSwishParams& p, const T* in, T* out, int64_t begin,
                        int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = QuantizedHardSwishValue(p, in[i]);
}

// ------------------------------------------------------------ LEAKY_RELU

inline void LeakyReluFloat(float alpha, const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = in[i] > 0 ? in[i] : in[i] * alpha;
}

// Separate requantizations for the positive side (identity) and the negative
// side (alpha); a negative alpha multiplies by |alpha| and negates.
struct QuantizedLeakyReluParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t identity_multiplier = 0;
  int identity_shift = 0;
  int32_t alpha_multiplier = 0;
  int alpha_shift = 0;
};

template <class T>
void QuantizedLeakyRelu(const QuantizedLeakyReluParams& p, const T* in, T* out, int64_t begin,
                        int64_t end) {
  const bool negative_alpha = p.alpha_multiplier < 0;
  const int32_t alpha_magnitude = negative_alpha ? -p.alpha_multiplier : p.alpha_multiplier;
  for (int64_t i = begin; i < end; ++i) {
    const int32_t x = static_cast<int32_t>(in[i]) - p.input_zero_point;
    int32_t y = p.output_zero_point;
    if (x >= 0) {
      y += quant::MultiplyByQuantizedMultiplier(x, p.identity_multiplier, p.identity_shift);
    } else {
      const int32_t scaled =
          quant::MultiplyByQuantizedMultiplier(x, alpha_magnitude, p.alpha_shift);
      y += negative_alpha ? -scaled : scaled;
    }
    out[i] = static_cast<T>(std::clamp<int32_t>(y, std::numeric_limits<T>::min(),
                                                std::numeric_limits<T>::max()));
  }
}

// ------------------------------------------------------------ PRELU

inline void PreluFloat(const BroadcastPlan& plan, const float* in, const float* alpha, float* out,
                       int64_t begin, int64_t end) {
  BroadcastBinary(plan, in, alpha, out, begin, end,
                  [](float x, float a) { return x >= 0.0f ? x : x * a; });
}

struct QuantizedPreluParams {
  int32_t input_offset = 0;   // -zero_point
  int32_t alpha_offset = 0;   // -zero_point
  int32_t output_offset = 0;  // +zero_point
  int32_t positive_multiplier = 0;  // input_scale / output_scale
  int positive_shift = 0;
  int32_t negative_multiplier = 0;  // input_scale * alpha_scale / output_scale
  int negative_shift = 0;
};

template <class T>
void QuantizedPrelu(const QuantizedPreluParams& p, const BroadcastPlan& plan, const T* in,
                    const T* alpha, T* out, int64_t begin, int64_t end) {
  BroadcastBinary(plan, in, alpha, out, begin, end, [&p](T x, T a) {
    const int32_t xv = p.input_offset + static_cast<int32_t>(x);
    int32_t y;
    if (xv >= 0) {
      y = quant::MultiplyByQuantizedMultiplier(xv, p.positive_multiplier, p.positive_shift);
    } else {
      const int32_t av = p.alpha_offset + static_cast<int32_t>(a);
      y = quant::MultiplyByQuantizedMultiplier(xv * av, p.negative_multiplier, p.negative_shift);
    }
    y += p.output_offset;
    return static_cast<T>(
        std::clamp<int32_t>(y, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  });
}

// ------------------------------------------------------------ clamps

// TFLite's comparison order: a NaN input passes through.
inline float ClampRelu1(float x, float lo) {
  return x > 1.0f ? 1.0f : (x < lo ? lo : x);
}

inline void ReluN1To1Float(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = ClampRelu1(in[i], -1.0f);
}
inline void Relu0To1Float(const float* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = ClampRelu1(in[i], 0.0f);
}

// ------------------------------------------------------------ GELU

inline float GeluValue(float x) {
  // 0.5 x (1 + erf(x / sqrt 2)), through erfc to avoid cancellation.
  return 0.5f * x * std::erfc(x * static_cast<float>(-0.70710678118654752440));
}

inline float GeluApproximateValue(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

inline void GeluFloat(bool approximate, const float* in, float* out, int64_t begin, int64_t end) {
  if (approximate) {
    for (int64_t i = begin; i < end; ++i) out[i] = GeluApproximateValue(in[i]);
  } else {
    for (int64_t i = begin; i < end; ++i) out[i] = GeluValue(in[i]);
  }
}

// ------------------------------------------------------------ int16 lookup tables

// 513-entry table for an int16 -> int16 function (TFLite's LUTPopulate for
// int16): 512 samples over the input range, each biased by half the error
// of linear interpolation at the segment's midpoint, plus the end point. The
// output is on output_scale with zero point 0.
template <class Fn>
void PopulateLookupTable16(float input_scale, int32_t input_zero_point, float output_scale,
                           int32_t output_zero_point, Fn fn, int16_t* table) {
  const float input_min = input_scale * static_cast<float>(-32768 - input_zero_point);
  const float input_max = input_scale * static_cast<float>(32767 - input_zero_point);
  const float output_min = output_scale * static_cast<float>(-32768 - output_zero_point);
  const float output_max = output_scale * static_cast<float>(32767 - output_zero_point);
  constexpr int kSteps = 512;
  const float step = (input_max - input_min) / kSteps;
  const float half_step = step / 2;
  const float output_scaling_inv = 65536.0f / (output_max - output_min);
  // A NaN sample becomes 0, as x86's float-to-integer conversion gives.
  auto clamp16 = [](float v) {
    if (std::isnan(v)) return int16_t{0};
    return static_cast<int16_t>(std::min(std::max(v, -32768.0f), 32767.0f));
  };
  for (int i = 0; i < kSteps; ++i) {
    const float value = fn(input_min + static_cast<float>(i) * step);
    const float value_midpoint = fn(input_min + static_cast<float>(i) * step + half_step);
    const float value_next = fn(input_min + static_cast<float>(i + 1) * step);
    const float sample = std::round(value * output_scaling_inv);
    const float midpoint_interpolated =
        std::round((value_next * output_scaling_inv + std::round(value * output_scaling_inv)) / 2);
    const float midpoint = std::round(value_midpoint * output_scaling_inv);
    const float bias = std::round((midpoint_interpolated - midpoint) / 2);
    table[i] = clamp16(sample - bias);
  }
  table[kSteps] = clamp16(std::round(fn(input_max) * output_scaling_inv));
}

// The high 9 bits pick a segment, the low 7 interpolate within it.
inline int16_t LookupTable16Value(const int16_t* table, int16_t x) {
  const int index = 256 + (x >> 7);
  const int16_t offset = static_cast<int16_t>(x & 0x7f);
  const int16_t base = table[index];
  const int16_t slope = static_cast<int16_t>(table[index + 1] - table[index]);
  const int delta = (slope * offset + 64) >> 7;
  return static_cast<int16_t>(base + delta);
}

inline void LookupTable16(const int16_t* table, const int16_t* in, int16_t* out, int64_t begin,
                          int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = LookupTable16Value(table, in[i]);
}

// ------------------------------------------------------------ unary math

enum class UnaryMath { kExp, kLog, kRsqrt, kSquare, kAbs, kNeg, kSin, kCos, kFloor, kSign };

template <class T>
inline T UnaryMathValue(UnaryMath op, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryMath::kExp: return std::exp(x);
      case UnaryMath::kLog: return std::log(x);
      case UnaryMath::kRsqrt: return T{1} / std::sqrt(x);
      case UnaryMath::kSquare: return x * x;
      case UnaryMath::kAbs: return std::abs(x);
      case UnaryMath::kNeg: return -x;
      case UnaryMath::kSin: return std::sin(x);
      case UnaryMath::kCos: return std::cos(x);
      case UnaryMath::kFloor: return std::floor(x);
      case UnaryMath::kSign: return static_cast<T>((T{0} < x) - (x < T{0}));
    }
    return x;
  } else {
    switch (op) {
      // |INT_MIN| and -INT_MIN wrap to INT_MIN.
      case UnaryMath::kAbs: return x < 0 ? WrapSub(T{0}, x) : x;
      case UnaryMath::kNeg: return WrapSub(T{0}, x);
      case UnaryMath::kSign: return static_cast<T>((T{0} < x) - (x < T{0}));
      default: return x;
    }
  }
}

template <class T>
void UnaryMathRange(UnaryMath op, const T* in, T* out, int64_t begin, int64_t end) {
  switch (op) {
#define DLG_UNARY_CASE(name)                                                        \
  case UnaryMath::name:                                                             \
    for (int64_t i = begin; i < end; ++i) out[i] = UnaryMathValue(UnaryMath::name, in[i]); \
    break;
    DLG_UNARY_CASE(kExp)
    DLG_UNARY_CASE(kLog)
    DLG_UNARY_CASE(kRsqrt)
    DLG_UNARY_CASE(kSquare)
    DLG_UNARY_CASE(kAbs)
    DLG_UNARY_CASE(kNeg)
    DLG_UNARY_CASE(kSin)
    DLG_UNARY_CASE(kCos)
    DLG_UNARY_CASE(kFloor)
    DLG_UNARY_CASE(kSign)
#undef DLG_UNARY_CASE
  }
}

// Quantized ABS: |x - zp_in|, rescaled only when the scales differ.
struct QuantizedAbsParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  bool rescale = false;
  int32_t multiplier = 0;
  int shift = 0;
};

template <class T>
void QuantizedAbs(const QuantizedAbsParams& p, const T* in, T* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const int32_t magnitude = std::abs(static_cast<int32_t>(in[i]) - p.input_zero_point);
    const int32_t y =
        (p.rescale ? quant::MultiplyByQuantizedMultiplier(magnitude, p.multiplier, p.shift)
                   : magnitude) +
        p.output_zero_point;
    out[i] = static_cast<T>(
        std::clamp<int32_t>(y, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  }
}

// Quantized int8 RSQRT: 1/sqrt(x - zp) by a fixed-point inverse square root
// (InvSqrtMultiplier, normalization.h, passed in as `inv_sqrt`), rescaled by
// 1 / (sqrt(input_scale) * output_scale). The input zero point maps to the
// largest output; values below it must have been rejected by the caller.
struct QuantizedRsqrtParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int32_t multiplier = 0;
  int shift = 0;
};

template <class InvSqrt>
void QuantizedRsqrt(const QuantizedRsqrtParams& p, InvSqrt inv_sqrt, const int8_t* in,
                    int8_t* out, int64_t begin, int64_t end) {
  constexpr int kShift = 20;  // keeps 1/sqrt(x) an integer with fractional bits
  for (int64_t i = begin; i < end; ++i) {
    const int32_t value = static_cast<int32_t>(in[i]) - p.input_zero_point;
    if (value == 0) {
      out[i] = std::numeric_limits<int8_t>::max();
      continue;
    }
    int32_t inv_multiplier;
    int inv_shift;
    inv_sqrt(value, &inv_multiplier, &inv_shift);
    const int32_t scaled =
        quant::MultiplyByQuantizedMultiplier(1, inv_multiplier, inv_shift + kShift);
    const int32_t y =
        quant::MultiplyByQuantizedMultiplier(scaled, p.multiplier, p.shift - kShift) +
        p.output_zero_point;
    out[i] = static_cast<int8_t>(std::clamp<int32_t>(y, -128, 127));
  }
}

}  // namespace delegato::reference
