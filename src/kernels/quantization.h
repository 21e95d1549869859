// Fixed-point arithmetic of TFLite's quantized kernels, reproduced exactly:
// double-rounding requantization (SaturatingRoundingDoublingHighMul followed by
// a rounding right shift), multiplier decomposition via frexp, and activation
// clamping ranges. Everything here is pure and header-only so kernels inline it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "model/op_params.h"

namespace delegato::quant {

// (a * b * 2) >> 32 with round-to-nearest, saturating the one overflow case.
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  const bool overflow = a == b && a == std::numeric_limits<int32_t>::min();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  const int32_t high = static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
  return overflow ? std::numeric_limits<int32_t>::max() : high;
}

// x / 2^exponent rounded to nearest, ties away from zero. exponent in [0, 31].
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// RoundingDivideByPOT for exponents up to 63, in 64 bits. Quantized softmax
// needs it: with many classes of similar value its exponent reaches 35
// (8-bit outputs), where TFLite's reference kernel stops on an assertion and
// its optimized kernels give the rounded quotient, which this returns.
// (Quantized DIV matches LiteRT's x86 shift wrap instead:
// reference::RoundingDivideByPOTWrappedShift.)
inline int32_t RoundingDivideByPOTWide(int32_t x, int exponent) {
  if (exponent <= 31) return RoundingDivideByPOT(x, exponent);
  const int64_t wide = x;
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = wide & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int32_t>((wide >> exponent) + (remainder > threshold ? 1 : 0));
}

// x << left_shift in 32 bits, as TFLite's `x * (1 << left_shift)` executes on
// x86: the product wraps, and a shift count of 32 or more (undefined in C++,
// reachable with absurd scales such as traffic_model's 3e-35 MUL output) acts
// modulo 32 because the shift instruction masks its count. Reproduced here
// without undefined behaviour so results match LiteRT on such models too.
inline int32_t ShiftLeftWrapping(int32_t x, int left_shift) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) << (left_shift & 31));
}

// x * multiplier * 2^shift, multiplier a Q31 value in [2^30, 2^31).
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  return RoundingDivideByPOT(
      SaturatingRoundingDoublingHighMul(ShiftLeftWrapping(x, left_shift), multiplier),
      right_shift);
}

// Legacy helpers used by older uint8 kernels: multiplier < 1 with a right
// shift given as a positive number, or > 1 with a left shift.
inline int32_t MultiplyByQuantizedMultiplierSmallerThanOneExp(int32_t x, int32_t multiplier,
                                                              int left_shift) {
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, multiplier), -left_shift);
}
inline int32_t MultiplyByQuantizedMultiplierGreaterThanOne(int32_t x, int32_t multiplier,
                                                           int left_shift) {
  return SaturatingRoundingDoublingHighMul(ShiftLeftWrapping(x, left_shift), multiplier);
}

// Decomposes a real multiplier into a Q31 mantissa and a power-of-two shift
// (TFLite's QuantizeMultiplier, default double-rounding build).
inline void QuantizeMultiplier(double real_multiplier, int32_t* quantized_multiplier, int* shift) {
  if (real_multiplier == 0.0) {
    *quantized_multiplier = 0;
    *shift = 0;
    return;
  }
  const double q = std::frexp(real_multiplier, shift);
  auto q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++*shift;
  }
  if (*shift < -31) {
    *shift = 0;
    q_fixed = 0;
  }
  *quantized_multiplier = static_cast<int32_t>(q_fixed);
}

// For multipliers known to be < 1: shift is returned as a non-positive exponent.
inline void QuantizeMultiplierSmallerThanOneExp(double real_multiplier,
                                                int32_t* quantized_multiplier, int* left_shift) {
  QuantizeMultiplier(real_multiplier, quantized_multiplier, left_shift);
}

// For multipliers > 1: a non-negative left shift.
inline void QuantizeMultiplierGreaterThanOne(double real_multiplier,
                                             int32_t* quantized_multiplier, int* left_shift) {
  QuantizeMultiplier(real_multiplier, quantized_multiplier, left_shift);
}

template <class T>
constexpr int32_t QMin() {
  return std::numeric_limits<T>::min();
}
template <class T>
constexpr int32_t QMax() {
  return std::numeric_limits<T>::max();
}

// The clamp range [*act_min, *act_max] a fused activation imposes on a
// quantized output with the given parameters (TFLite's
// CalculateActivationRangeQuantized). Returns false for activations that have
// no quantized form (TANH, SIGN_BIT).
template <class T>
bool ActivationRangeQuantized(Activation activation, float scale, int32_t zero_point,
                              int32_t* act_min, int32_t* act_max) {
  const int32_t qmin = QMin<T>();
  const int32_t qmax = QMax<T>();
  auto quantize = [&](float x) {
    return zero_point + static_cast<int32_t>(std::round(x / scale));
  };
  switch (activation) {
    case Activation::kNone:
      *act_min = qmin;
      *act_max = qmax;
      return true;
    case Activation::kRelu:
      *act_min = std::max(qmin, quantize(0.0f));
      *act_max = qmax;
      return true;
    case Activation::kRelu6:
      *act_min = std::max(qmin, quantize(0.0f));
      *act_max = std::min(qmax, quantize(6.0f));
      return true;
    case Activation::kReluN1To1:
      *act_min = std::max(qmin, quantize(-1.0f));
      *act_max = std::min(qmax, quantize(1.0f));
      return true;
    default:
      return false;
  }
}

// Float clamp range of a fused activation (TFLite's CalculateActivationRange).
// Returns false for TANH / SIGN_BIT, which are not clamps.
inline bool ActivationRangeFloat(Activation activation, float* act_min, float* act_max) {
  // Unbounded sides use the finite extremes, as TFLite does (so +inf clamps to FLT_MAX).
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  constexpr float kMax = std::numeric_limits<float>::max();
  switch (activation) {
    case Activation::kNone: *act_min = kLowest; *act_max = kMax; return true;
    case Activation::kRelu: *act_min = 0.0f; *act_max = kMax; return true;
    case Activation::kRelu6: *act_min = 0.0f; *act_max = 6.0f; return true;
    case Activation::kReluN1To1: *act_min = -1.0f; *act_max = 1.0f; return true;
    default: return false;
  }
}

}  // namespace delegato::quant
