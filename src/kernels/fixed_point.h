// Q-format fixed-point arithmetic on int32 in the style of gemmlowp, as used by
// TFLite's quantized softmax, division and logistic/tanh: values carry a
// compile-time number of integer bits, products round and saturate, and the
// transcendental helpers (exp on negative values, 1/(1+x)) reproduce TFLite's
// results bit for bit. Plain additions wrap on overflow exactly like the
// two's-complement hardware TFLite runs on; we spell the wrap out so the code
// has no undefined behaviour.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/quantization.h"

namespace delegato::fixed_point {

inline int32_t WrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t WrappingSub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
inline int32_t WrappingNeg(int32_t a) { return WrappingSub(0, a); }
inline int32_t WrappingMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

// static_cast<int32_t>(x) as x86 evaluates it: truncation toward zero, and
// INT32_MIN (the "integer indefinite" value) for NaN and out-of-range inputs.
// TFLite's requantizing kernels rely on that conversion for extreme floats.
inline int32_t TruncateToInt32(float x) {
  if (!(x > -2147483904.0f && x < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(x);
}

// Number of leading zero bits; 32 for 0.
inline int CountLeadingZeros(uint32_t x) { return x == 0 ? 32 : __builtin_clz(x); }

// Number of redundant sign bits (bits after the sign bit equal to it); 31 for 0 and -1.
inline int CountLeadingSignBits(int32_t x) {
  const uint32_t u = static_cast<uint32_t>(x);
  return CountLeadingZeros(x < 0 ? ~u : u) - 1;
}

// (a + b) / 2 rounded to nearest, ties away from zero, computed without overflow.
inline int32_t RoundingHalfSum(int32_t a, int32_t b) {
  const int64_t sum = int64_t{a} + int64_t{b};
  const int64_t sign = sum >= 0 ? 1 : -1;
  return static_cast<int32_t>((sum + sign) / 2);
}

// x * 2^Exponent: saturating for Exponent > 0, rounding to nearest (ties away
// from zero) for Exponent < 0.
template <int Exponent>
inline int32_t SaturatingRoundingMultiplyByPOT(int32_t x) {
  static_assert(Exponent > -32 && Exponent < 32);
  if constexpr (Exponent == 0) {
    return x;
  } else if constexpr (Exponent < 0) {
    return quant::RoundingDivideByPOT(x, -Exponent);
  } else {
    constexpr int32_t kThreshold = static_cast<int32_t>((int64_t{1} << (31 - Exponent)) - 1);
    if (x > kThreshold) return std::numeric_limits<int32_t>::max();
    if (x < -kThreshold) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(static_cast<uint32_t>(x) << Exponent);
  }
}

// A real number stored as raw / 2^(31 - IntegerBits) in an int32.
template <int IntegerBits>
struct FixedPoint {
  static_assert(IntegerBits >= 0 && IntegerBits < 32);
  static constexpr int kIntegerBits = IntegerBits;
  static constexpr int kFractionalBits = 31 - IntegerBits;

  int32_t raw = 0;

  static constexpr FixedPoint FromRaw(int32_t r) { return FixedPoint{r}; }
  static constexpr FixedPoint Zero() { return FixedPoint{0}; }
  // 1.0, or the largest value below it when it is not representable (0 integer bits).
  static constexpr FixedPoint One() {
    return FixedPoint{IntegerBits == 0 ? std::numeric_limits<int32_t>::max()
                                       : static_cast<int32_t>(int64_t{1} << kFractionalBits)};
  }
  // 2^Exponent, which must be exactly representable.
  template <int Exponent>
  static constexpr FixedPoint ConstantPOT() {
    static_assert(kFractionalBits + Exponent >= 0 && kFractionalBits + Exponent < 31);
    return FixedPoint{int32_t{1} << (kFractionalBits + Exponent)};
  }
};

template <int B>
inline FixedPoint<B> operator+(FixedPoint<B> a, FixedPoint<B> b) {
  return FixedPoint<B>::FromRaw(WrappingAdd(a.raw, b.raw));
}
template <int B>
inline FixedPoint<B> operator-(FixedPoint<B> a, FixedPoint<B> b) {
  return FixedPoint<B>::FromRaw(WrappingSub(a.raw, b.raw));
}
template <int B>
inline FixedPoint<B> operator-(FixedPoint<B> a) {
  return FixedPoint<B>::FromRaw(WrappingNeg(a.raw));
}
// Products add the integer bits of their factors.
template <int A, int B>
inline FixedPoint<A + B> operator*(FixedPoint<A> a, FixedPoint<B> b) {
  return FixedPoint<A + B>::FromRaw(quant::SaturatingRoundingDoublingHighMul(a.raw, b.raw));
}

// Changes the number of integer bits, keeping the value (saturating/rounding).
template <int DstBits, int SrcBits>
inline FixedPoint<DstBits> Rescale(FixedPoint<SrcBits> x) {
  return FixedPoint<DstBits>::FromRaw(SaturatingRoundingMultiplyByPOT<SrcBits - DstBits>(x.raw));
}

// Multiplies by 2^Exponent exactly by reinterpreting the integer bits.
template <int Exponent, int B>
inline FixedPoint<B + Exponent> ExactMulByPOT(FixedPoint<B> x) {
  return FixedPoint<B + Exponent>::FromRaw(x.raw);
}

// exp(a) for a in [-1/4, 0): Taylor expansion around -1/8.
inline FixedPoint<0> ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(FixedPoint<0> a) {
  using F = FixedPoint<0>;
  const F constant_term = F::FromRaw(1895147668);     // exp(-1/8)
  const F constant_1_over_3 = F::FromRaw(715827883);  // 1/3
  const F x = a + F::ConstantPOT<-3>();
  const F x2 = x * x;
  const F x3 = x2 * x;
  const F x4 = x2 * x2;
  const F x4_over_4 = F::FromRaw(SaturatingRoundingMultiplyByPOT<-2>(x4.raw));
  const F x4_over_24_plus_x3_over_6_plus_x2_over_2 =
      F::FromRaw(SaturatingRoundingMultiplyByPOT<-1>((((x4_over_4 + x3) * constant_1_over_3) + x2).raw));
  return constant_term + constant_term * (x + x4_over_24_plus_x3_over_6_plus_x2_over_2);
}

// exp(a) for a <= 0 (exactly 1 at 0); the result has 0 integer bits.
template <int IntegerBits>
inline FixedPoint<0> ExpOnNegativeValues(FixedPoint<IntegerBits> a) {
  using InputF = FixedPoint<IntegerBits>;
  using ResultF = FixedPoint<0>;
  constexpr int kFractionalBits = InputF::kFractionalBits;
  const InputF one_quarter = InputF::template ConstantPOT<-2>();
  const InputF mask = one_quarter - InputF::FromRaw(1);
  const InputF a_mod_quarter_minus_one_quarter = InputF::FromRaw(a.raw & mask.raw) - one_quarter;
  ResultF result =
      ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(Rescale<0>(a_mod_quarter_minus_one_quarter));
  const int32_t remainder = (a_mod_quarter_minus_one_quarter - a).raw;

  // Multiply in exp(-2^k) for every bit k set in the remaining (multiple of 1/4) magnitude.
  auto barrel_shift = [&](auto exponent_tag, int32_t multiplier_raw) {
    constexpr int kExponent = decltype(exponent_tag)::value;
    if constexpr (IntegerBits > kExponent) {
      constexpr int kShiftAmount = kFractionalBits + kExponent;
      if ((remainder & (int32_t{1} << kShiftAmount)) != 0)
        result = result * ResultF::FromRaw(multiplier_raw);
    }
  };
  barrel_shift(std::integral_constant<int, -2>{}, 1672461947);  // exp(-1/4)
  barrel_shift(std::integral_constant<int, -1>{}, 1302514674);  // exp(-1/2)
  barrel_shift(std::integral_constant<int, 0>{}, 790015084);    // exp(-1)
  barrel_shift(std::integral_constant<int, 1>{}, 290630308);    // exp(-2)
  barrel_shift(std::integral_constant<int, 2>{}, 39332535);     // exp(-4)
  barrel_shift(std::integral_constant<int, 3>{}, 720401);       // exp(-8)
  barrel_shift(std::integral_constant<int, 4>{}, 242);          // exp(-16)

  if constexpr (IntegerBits > 5) {
    // Below -32 the result is zero.
    constexpr int kClampBits = 36 - IntegerBits;
    const InputF clamp = InputF::FromRaw(-(int32_t{1} << kClampBits));
    if (a.raw < clamp.raw) result = ResultF::Zero();
  }
  if (a.raw == 0) result = ResultF::One();
  return result;
}

// 1 / (1 + a) for a in [0, 1): three Newton-Raphson iterations.
inline FixedPoint<0> OneOverOnePlusXForXIn0To1(FixedPoint<0> a) {
  using F0 = FixedPoint<0>;
  using F2 = FixedPoint<2>;
  const F0 half_denominator = F0::FromRaw(RoundingHalfSum(a.raw, F0::One().raw));
  const F2 constant_48_over_17 = F2::FromRaw(1515870810);
  const F2 constant_neg_32_over_17 = F2::FromRaw(-1010580540);
  F2 x = constant_48_over_17 + half_denominator * constant_neg_32_over_17;
  for (int i = 0; i < 3; ++i) {
    const F2 half_denominator_times_x = half_denominator * x;
    const F2 one_minus_half_denominator_times_x = F2::One() - half_denominator_times_x;
    x = x + Rescale<2>(x * one_minus_half_denominator_times_x);
  }
  return Rescale<0>(ExactMulByPOT<-1>(x));
}

// Reciprocal of a positive x with x_integer_digits integer bits: returns the
// Q0.31 mantissa of 1/x and sets *num_bits_over_unit so that
// 1/x = mantissa * 2^-num_bits_over_unit (TFLite's GetReciprocal).
inline int32_t GetReciprocal(int32_t x, int x_integer_digits, int* num_bits_over_unit) {
  const int headroom_plus_one = CountLeadingZeros(static_cast<uint32_t>(x));
  *num_bits_over_unit = x_integer_digits - headroom_plus_one;
  const int32_t shifted_sum_minus_one = static_cast<int32_t>(
      (static_cast<uint32_t>(x) << headroom_plus_one) - (uint32_t{1} << 31));
  return OneOverOnePlusXForXIn0To1(FixedPoint<0>::FromRaw(shifted_sum_minus_one)).raw;
}

}  // namespace delegato::fixed_point
