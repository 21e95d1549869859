// Q-format fixed-point arithmetic on int32 (and int16, for the integer LSTM's
// gate activations) in the style of gemmlowp, as used by TFLite's quantized
// softmax, division, logistic/tanh and LSTM: values carry a
// compile-time number of integer bits, products round and saturate, and the
// transcendental helpers (exp on negative values, 1/(1+x)) reproduce TFLite's
// results bit for bit. Plain additions wrap on overflow exactly like the
// two's-complement hardware TFLite runs on; we spell the wrap out so the code
// has no undefined behaviour.
#pragma once

#include <algorithm>
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


// 1/sqrt(input) as a Q31 multiplier and a shift (TFLite's
// GetInvSqrtQuantizedMultiplierExp, used by integer layer normalization):
// Newton-Raphson in Q3.28 after normalising input into [2^27, 2^29). The
// shift is returned multiplied by reverse_shift (-1 turns it into a left shift).
inline void GetInvSqrtQuantizedMultiplierExp(int32_t input, int reverse_shift,
                                             int32_t* output_inv_sqrt, int* output_shift) {
  if (input <= 1) {
    // 0 is invalid and 1 would overflow below; both map to the largest multiplier.
    *output_inv_sqrt = std::numeric_limits<int32_t>::max();
    *output_shift = 0;
    return;
  }
  *output_shift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++*output_shift;
  }
  const int max_left_shift_bits = CountLeadingZeros(static_cast<uint32_t>(input)) - 1;
  const int left_shift_bit_pairs = max_left_shift_bits / 2 - 1;
  *output_shift -= left_shift_bit_pairs;
  input <<= 2 * left_shift_bit_pairs;
  using F3 = FixedPoint<3>;
  using F0 = FixedPoint<0>;
  const F3 fixedpoint_input = F3::FromRaw(input >> 1);
  const F3 half_input = F3::FromRaw(SaturatingRoundingMultiplyByPOT<-1>(fixedpoint_input.raw));
  const F3 half_three = F3::FromRaw((1 << 28) + (1 << 27));  // 1.5
  F3 x = F3::One();
  for (int i = 0; i < 5; ++i) {
    const F3 x3 = Rescale<3>(x * x * x);
    x = Rescale<3>(half_three * x - half_input * x3);
  }
  const F0 half_sqrt_2 = F0::FromRaw(1518500250);  // sqrt(2) / 2
  x = x * half_sqrt_2;
  *output_inv_sqrt = x.raw;
  if (*output_shift < 0) {
    *output_inv_sqrt = quant::ShiftLeftWrapping(*output_inv_sqrt, -*output_shift);
    *output_shift = 0;
  }
  *output_shift *= reverse_shift;
}

// ---------------------------------------------------------------------------
// The same arithmetic on int16 raw values (gemmlowp's FixedPoint<int16_t, N>),
// as TFLite's integer LSTM uses for its gate activations: products keep the
// high 16 bits, constants are the 32-bit ones rounded to 16 bits, and the
// final addition of the exp polynomial saturates. Overloads of the 32-bit
// functions above, selected by the FixedPoint16 argument type.

inline int16_t WrapToInt16(int32_t x) { return static_cast<int16_t>(x); }  // modular (C++20)

inline int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min())
    return std::numeric_limits<int16_t>::max();
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

template <int Exponent>
inline int16_t SaturatingRoundingMultiplyByPOT16(int16_t x) {
  static_assert(Exponent > -16 && Exponent < 16);
  if constexpr (Exponent == 0) {
    return x;
  } else if constexpr (Exponent < 0) {
    return static_cast<int16_t>(quant::RoundingDivideByPOT(x, -Exponent));
  } else {
    constexpr int32_t kThreshold = (int32_t{1} << (15 - Exponent)) - 1;
    if (x > kThreshold) return std::numeric_limits<int16_t>::max();
    if (x < -kThreshold) return std::numeric_limits<int16_t>::min();
    return WrapToInt16(int32_t{x} * (int32_t{1} << Exponent));
  }
}

// A 32-bit Q0.31-style constant rounded to its 16-bit counterpart.
constexpr int16_t Constant16(int32_t raw32) {
  // RoundingDivideByPOT(raw32, 16), spelled out so it stays constexpr.
  const int32_t remainder = raw32 & 0xFFFF;
  const int32_t threshold = 0x7FFF + (raw32 < 0 ? 1 : 0);
  return static_cast<int16_t>((raw32 >> 16) + (remainder > threshold ? 1 : 0));
}

// A real number stored as raw / 2^(15 - IntegerBits) in an int16.
template <int IntegerBits>
struct FixedPoint16 {
  static_assert(IntegerBits >= 0 && IntegerBits < 16);
  static constexpr int kIntegerBits = IntegerBits;
  static constexpr int kFractionalBits = 15 - IntegerBits;

  int16_t raw = 0;

  static constexpr FixedPoint16 FromRaw(int16_t r) { return FixedPoint16{r}; }
  static constexpr FixedPoint16 Zero() { return FixedPoint16{0}; }
  static constexpr FixedPoint16 One() {
    return FixedPoint16{IntegerBits == 0 ? std::numeric_limits<int16_t>::max()
                                         : static_cast<int16_t>(1 << kFractionalBits)};
  }
  template <int Exponent>
  static constexpr FixedPoint16 ConstantPOT() {
    static_assert(kFractionalBits + Exponent >= 0 && kFractionalBits + Exponent < 15);
    return FixedPoint16{static_cast<int16_t>(1 << (kFractionalBits + Exponent))};
  }
};

template <int B>
inline FixedPoint16<B> operator+(FixedPoint16<B> a, FixedPoint16<B> b) {
  return FixedPoint16<B>::FromRaw(WrapToInt16(int32_t{a.raw} + b.raw));
}
template <int B>
inline FixedPoint16<B> operator-(FixedPoint16<B> a, FixedPoint16<B> b) {
  return FixedPoint16<B>::FromRaw(WrapToInt16(int32_t{a.raw} - b.raw));
}
template <int B>
inline FixedPoint16<B> operator-(FixedPoint16<B> a) {
  return FixedPoint16<B>::FromRaw(WrapToInt16(-int32_t{a.raw}));
}
template <int A, int B>
inline FixedPoint16<A + B> operator*(FixedPoint16<A> a, FixedPoint16<B> b) {
  return FixedPoint16<A + B>::FromRaw(SaturatingRoundingDoublingHighMul16(a.raw, b.raw));
}
template <int B>
inline FixedPoint16<B> SaturatingAdd(FixedPoint16<B> a, FixedPoint16<B> b) {
  const int32_t sum = int32_t{a.raw} + b.raw;
  return FixedPoint16<B>::FromRaw(static_cast<int16_t>(std::clamp(sum, -32768, 32767)));
}

template <int DstBits, int SrcBits>
inline FixedPoint16<DstBits> Rescale(FixedPoint16<SrcBits> x) {
  return FixedPoint16<DstBits>::FromRaw(
      SaturatingRoundingMultiplyByPOT16<SrcBits - DstBits>(x.raw));
}

template <int Exponent, int B>
inline FixedPoint16<B + Exponent> ExactMulByPOT(FixedPoint16<B> x) {
  return FixedPoint16<B + Exponent>::FromRaw(x.raw);
}

inline FixedPoint16<0> ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(FixedPoint16<0> a) {
  using F = FixedPoint16<0>;
  const F constant_term = F::FromRaw(Constant16(1895147668));     // exp(-1/8)
  const F constant_1_over_3 = F::FromRaw(Constant16(715827883));  // 1/3
  const F x = a + F::ConstantPOT<-3>();
  const F x2 = x * x;
  const F x3 = x2 * x;
  const F x4 = x2 * x2;
  const F x4_over_4 = F::FromRaw(SaturatingRoundingMultiplyByPOT16<-2>(x4.raw));
  const F x4_over_24_plus_x3_over_6_plus_x2_over_2 = F::FromRaw(
      SaturatingRoundingMultiplyByPOT16<-1>((((x4_over_4 + x3) * constant_1_over_3) + x2).raw));
  return SaturatingAdd(constant_term,
                       constant_term * (x + x4_over_24_plus_x3_over_6_plus_x2_over_2));
}

template <int IntegerBits>
inline FixedPoint16<0> ExpOnNegativeValues(FixedPoint16<IntegerBits> a) {
  using InputF = FixedPoint16<IntegerBits>;
  using ResultF = FixedPoint16<0>;
  constexpr int kFractionalBits = InputF::kFractionalBits;
  const InputF one_quarter = InputF::template ConstantPOT<-2>();
  const InputF mask = one_quarter - InputF::FromRaw(1);
  const InputF a_mod_quarter_minus_one_quarter =
      InputF::FromRaw(static_cast<int16_t>(a.raw & mask.raw)) - one_quarter;
  ResultF result =
      ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(Rescale<0>(a_mod_quarter_minus_one_quarter));
  const int16_t remainder = (a_mod_quarter_minus_one_quarter - a).raw;

  auto barrel_shift = [&](auto exponent_tag, int32_t multiplier_raw32) {
    constexpr int kExponent = decltype(exponent_tag)::value;
    if constexpr (IntegerBits > kExponent) {
      constexpr int kShiftAmount = kFractionalBits + kExponent;
      if ((remainder & (1 << kShiftAmount)) != 0)
        result = result * ResultF::FromRaw(Constant16(multiplier_raw32));
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
    constexpr int kClampBits = 36 - IntegerBits;
    const InputF clamp = InputF::FromRaw(Constant16(-(int32_t{1} << kClampBits)));  // -32
    if (a.raw < clamp.raw) result = ResultF::Zero();
  }
  if (a.raw == 0) result = ResultF::One();
  return result;
}

// 1 / (1 + a) for a in [0, 1).
inline FixedPoint16<0> OneOverOnePlusXForXIn0To1(FixedPoint16<0> a) {
  using F0 = FixedPoint16<0>;
  using F2 = FixedPoint16<2>;
  const int32_t sum = int32_t{a.raw} + F0::One().raw;
  const F0 half_denominator = F0::FromRaw(static_cast<int16_t>((sum + (sum >= 0 ? 1 : -1)) / 2));
  const F2 constant_48_over_17 = F2::FromRaw(Constant16(1515870810));
  const F2 constant_neg_32_over_17 = F2::FromRaw(Constant16(-1010580540));
  F2 x = constant_48_over_17 + half_denominator * constant_neg_32_over_17;
  for (int i = 0; i < 3; ++i) {
    const F2 half_denominator_times_x = half_denominator * x;
    const F2 one_minus_half_denominator_times_x = F2::One() - half_denominator_times_x;
    x = x + Rescale<2>(x * one_minus_half_denominator_times_x);
  }
  return Rescale<0>(ExactMulByPOT<-1>(x));
}

// (1 - a) / (1 + a) for a in [0, 1).
inline FixedPoint16<0> OneMinusXOverOnePlusXForXIn0To1(FixedPoint16<0> a) {
  using F0 = FixedPoint16<0>;
  using F2 = FixedPoint16<2>;
  const int32_t sum = int32_t{a.raw} + F0::One().raw;
  const F0 half_denominator = F0::FromRaw(static_cast<int16_t>((sum + (sum >= 0 ? 1 : -1)) / 2));
  const F2 constant_48_over_17 = F2::FromRaw(Constant16(1515870810));
  const F2 constant_neg_32_over_17 = F2::FromRaw(Constant16(-1010580540));
  F2 x = constant_48_over_17 + half_denominator * constant_neg_32_over_17;
  for (int i = 0; i < 3; ++i) {
    const F2 half_denominator_times_x = half_denominator * x;
    const F2 one_minus_half_denominator_times_x = F2::One() - half_denominator_times_x;
    x = x + Rescale<2>(x * one_minus_half_denominator_times_x);
  }
  return Rescale<0>(x - F2::One());
}

// logistic(a) = 1 / (1 + exp(-a)), result in Q0.15.
template <int IntegerBits>
inline FixedPoint16<0> Logistic(FixedPoint16<IntegerBits> a) {
  using ResultF = FixedPoint16<0>;
  if (a.raw == 0) return ResultF::FromRaw(Constant16(1 << 30));  // 1/2
  const bool positive = a.raw > 0;
  const FixedPoint16<IntegerBits> abs_input = positive ? a : -a;  // -(-32768) wraps, as in gemmlowp
  const ResultF result_if_positive = OneOverOnePlusXForXIn0To1(ExpOnNegativeValues(-abs_input));
  return positive ? result_if_positive : ResultF::One() - result_if_positive;
}

// tanh(a), result in Q0.15.
template <int IntegerBits>
inline FixedPoint16<0> Tanh(FixedPoint16<IntegerBits> a) {
  using ResultF = FixedPoint16<0>;
  if (a.raw == 0) return ResultF::Zero();
  const bool negative = a.raw < 0;
  const FixedPoint16<IntegerBits> negative_input = negative ? a : -a;
  const ResultF t =
      OneMinusXOverOnePlusXForXIn0To1(ExpOnNegativeValues(ExactMulByPOT<1>(negative_input)));
  return negative ? -t : t;
}

}  // namespace delegato::fixed_point
