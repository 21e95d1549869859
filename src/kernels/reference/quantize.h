// QUANTIZE (float -> integer, and integer -> integer requantization),
// DEQUANTIZE (integer/float16 -> float) and CAST, with TFLite's reference
// arithmetic: round(x / scale) in float, double-precision dequantization, the
// fixed-point requantization multiplier, and saturating float -> int casts.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"

namespace delegato::reference {

// q = clamp(round(x / scale) + zero_point). Conversions of huge or NaN values
// follow x86 (see fixed_point::TruncateToInt32), as does the wrapping add.
template <class T>
inline T QuantizeValue(float x, float scale, int32_t zero_point) {
  const int32_t rounded = fixed_point::TruncateToInt32(std::round(x / scale));
  const int32_t unclamped = fixed_point::WrappingAdd(rounded, zero_point);
  return static_cast<T>(std::min<int32_t>(std::max<int32_t>(unclamped, std::numeric_limits<T>::min()),
                                          std::numeric_limits<T>::max()));
}

template <class T>
void AffineQuantize(float scale, int32_t zero_point, const float* in, T* out, int64_t begin,
                    int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = QuantizeValue<T>(in[i], scale, zero_point);
}

// Per-axis parameters: the tensor viewed as [outer, channels, inner].
struct PerAxisLayout {
  int64_t channels = 1;
  int64_t inner = 1;
};

template <class T>
void PerAxisQuantize(const PerAxisLayout& layout, const float* scales, const int32_t* zero_points,
                     const float* in, T* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t c = (i / layout.inner) % layout.channels;
    out[i] = QuantizeValue<T>(in[i], scales[c], zero_points[c]);
  }
}

// uint8 -> int8 (input_is_uint8) or int8 -> uint8 with the same scale
// (multiplier 2^30, shift 1) and the zero point moved by 128: requantizing is
// a flip of the top bit.
inline bool RequantizeIsSignFlip(bool input_is_uint8, int32_t multiplier, int shift,
                                 int32_t input_zero_point, int32_t output_zero_point) {
  return multiplier == (1 << 30) && shift == 1 &&
         input_zero_point - output_zero_point == (input_is_uint8 ? 128 : -128);
}

// Integer -> integer: out = clamp(out_zp + (in - in_zp) * in_scale/out_scale).
template <class In, class Out>
void Requantize(const In* in, Out* out, int32_t multiplier, int shift, int32_t input_zero_point,
                int32_t output_zero_point, int64_t begin, int64_t end) {
  constexpr bool kInt8UInt8Pair = (std::is_same_v<In, int8_t> && std::is_same_v<Out, uint8_t>) ||
                                  (std::is_same_v<In, uint8_t> && std::is_same_v<Out, int8_t>);
  if (kInt8UInt8Pair && RequantizeIsSignFlip(std::is_same_v<In, uint8_t>, multiplier, shift,
                                             input_zero_point, output_zero_point)) {
    for (int64_t i = begin; i < end; ++i) out[i] = static_cast<Out>(in[i] ^ 0x80);
    return;
  }
  constexpr int32_t kMin = std::numeric_limits<Out>::min();
  constexpr int32_t kMax = std::numeric_limits<Out>::max();
  for (int64_t i = begin; i < end; ++i) {
    const int32_t value = static_cast<int32_t>(in[i]) - input_zero_point;
    const int32_t output =
        quant::MultiplyByQuantizedMultiplier(value, multiplier, shift) + output_zero_point;
    out[i] = static_cast<Out>(std::max(std::min(output, kMax), kMin));
  }
}

// x = scale * (q - zero_point), computed in double and rounded once to float.
template <class T>
void Dequantize(float scale, int32_t zero_point, const T* in, float* out, int64_t begin,
                int64_t end) {
  const double s = scale;
  for (int64_t i = begin; i < end; ++i)
    out[i] = static_cast<float>(s * (static_cast<int32_t>(in[i]) - zero_point));
}

template <class T>
void PerAxisDequantize(const PerAxisLayout& layout, const float* scales,
                       const int32_t* zero_points, const T* in, float* out, int64_t begin,
                       int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const int64_t c = (i / layout.inner) % layout.channels;
    out[i] = scales[c] * static_cast<float>(static_cast<int32_t>(in[i]) - zero_points[c]);
  }
}

// IEEE half -> float (exact).
inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalise into a float.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline void DequantizeHalf(const uint16_t* in, float* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = HalfToFloat(in[i]);
}

// CAST of one value: float -> integer truncates and saturates (NaN gives the
// maximum), -> bool tests != 0, everything else is static_cast (integers wrap).
template <class To, class From>
inline To CastValue(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != From{0};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(value)) return std::numeric_limits<To>::max();
    const From lowest = static_cast<From>(std::numeric_limits<To>::lowest());
    From highest = static_cast<From>(std::numeric_limits<To>::max());
    // When the maximum is not representable it rounds up; step back below it.
    if (static_cast<long double>(highest) > static_cast<long double>(std::numeric_limits<To>::max()))
      highest = std::nextafter(highest, From{0});
    if (value < lowest) return std::numeric_limits<To>::lowest();
    if (value > highest) return std::numeric_limits<To>::max();
    return static_cast<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

template <class From, class To>
void Cast(const From* in, To* out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) out[i] = CastValue<To>(in[i]);
}

}  // namespace delegato::reference
