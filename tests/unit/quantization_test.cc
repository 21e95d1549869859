// Edge cases of the fixed-point helpers in kernels/quantization.h and
// kernels/fixed_point.h. Expected values follow the definitions used by
// TFLite's kernels (double rounding, ties away from zero, saturation).
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"

namespace delegato {
namespace {

constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax = std::numeric_limits<int32_t>::max();

TEST(SaturatingRoundingDoublingHighMul, SaturatesOnlyMinTimesMin) {
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(kMin, kMin), kMax);
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(kMin, kMax), -kMax);
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(kMax, kMax), kMax - 1);
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(kMin, 1 << 30), -(1 << 30));
}

TEST(SaturatingRoundingDoublingHighMul, RoundsToNearestWithNegativeTiesTowardZero) {
  // The nudge is 2^30 for positive products, 1 - 2^30 for negative ones, then
  // the division truncates: 0.5 -> 1 but -0.5 -> 0 and -1.5 -> -1.
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(1, 1 << 30), 1);
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(-1, 1 << 30), 0);
  // 0.25 -> 0 both signs.
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(1, 1 << 29), 0);
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(-1, 1 << 29), 0);
  // 3 * 0.5 = 1.5 -> 2, -1.5 -> -2.
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(3, 1 << 30), 2);
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(-3, 1 << 30), -1);
  EXPECT_EQ(quant::SaturatingRoundingDoublingHighMul(-5, 1 << 30), -2);  // -2.5
}

TEST(RoundingDivideByPOT, TiesAwayFromZeroBothSigns) {
  EXPECT_EQ(quant::RoundingDivideByPOT(5, 1), 3);    // 2.5
  EXPECT_EQ(quant::RoundingDivideByPOT(-5, 1), -3);  // -2.5
  EXPECT_EQ(quant::RoundingDivideByPOT(6, 2), 2);    // 1.5
  EXPECT_EQ(quant::RoundingDivideByPOT(-6, 2), -2);  // -1.5
  EXPECT_EQ(quant::RoundingDivideByPOT(-7, 2), -2);  // -1.75
  EXPECT_EQ(quant::RoundingDivideByPOT(-9, 2), -2);  // -2.25
  EXPECT_EQ(quant::RoundingDivideByPOT(7, 0), 7);
  EXPECT_EQ(quant::RoundingDivideByPOT(kMax, 31), 1);
  EXPECT_EQ(quant::RoundingDivideByPOT(kMin, 31), -1);
  EXPECT_EQ(quant::RoundingDivideByPOT(kMin, 1), kMin / 2);
}

TEST(QuantizeMultiplier, DecomposesIntoQ31AndShift) {
  int32_t m;
  int shift;
  quant::QuantizeMultiplier(0.5, &m, &shift);
  EXPECT_EQ(m, 1 << 30);
  EXPECT_EQ(shift, 0);
  quant::QuantizeMultiplier(1.0, &m, &shift);
  EXPECT_EQ(m, 1 << 30);
  EXPECT_EQ(shift, 1);
  quant::QuantizeMultiplier(0.75, &m, &shift);
  EXPECT_EQ(m, 3 << 29);
  EXPECT_EQ(shift, 0);
  quant::QuantizeMultiplier(0.0, &m, &shift);
  EXPECT_EQ(m, 0);
  EXPECT_EQ(shift, 0);
}

TEST(QuantizeMultiplier, MantissaRoundingUpToOneBumpsTheShift) {
  int32_t m;
  int shift;
  // Just below 1.0: the Q31 mantissa rounds to 2^31, which is halved.
  quant::QuantizeMultiplier(1.0 - 1e-12, &m, &shift);
  EXPECT_EQ(m, 1 << 30);
  EXPECT_EQ(shift, 1);
  quant::QuantizeMultiplier(std::nextafter(1.0, 2.0), &m, &shift);
  EXPECT_EQ(m, 1 << 30);
  EXPECT_EQ(shift, 1);
}

TEST(QuantizeMultiplier, TinyMultipliersFlushToZero) {
  int32_t m;
  int shift;
  quant::QuantizeMultiplier(std::ldexp(1.0, -32), &m, &shift);  // shift would be -31: kept
  EXPECT_EQ(m, 1 << 30);
  EXPECT_EQ(shift, -31);
  quant::QuantizeMultiplier(std::ldexp(1.0, -33), &m, &shift);  // shift -32: flushed
  EXPECT_EQ(m, 0);
  EXPECT_EQ(shift, 0);
  EXPECT_EQ(quant::MultiplyByQuantizedMultiplier(kMax, m, shift), 0);
}

TEST(MultiplyByQuantizedMultiplier, LeftAndRightShifts) {
  int32_t m;
  int shift;
  quant::QuantizeMultiplier(3.0, &m, &shift);  // 0.75 * 2^2
  EXPECT_EQ(quant::MultiplyByQuantizedMultiplier(10, m, shift), 30);
  EXPECT_EQ(quant::MultiplyByQuantizedMultiplier(-10, m, shift), -30);
  quant::QuantizeMultiplier(0.1, &m, &shift);
  EXPECT_EQ(quant::MultiplyByQuantizedMultiplier(25, m, shift), 3);    // 2.5 -> 3
  EXPECT_EQ(quant::MultiplyByQuantizedMultiplier(-25, m, shift), -3);  // -2.5 -> -3
  EXPECT_EQ(quant::MultiplyByQuantizedMultiplier(24, m, shift), 2);
}

TEST(ActivationRangeQuantized, ClampsToTypeAndActivation) {
  int32_t lo, hi;
  ASSERT_TRUE(quant::ActivationRangeQuantized<uint8_t>(Activation::kRelu6, 0.05f, 10, &lo, &hi));
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 130);
  ASSERT_TRUE(quant::ActivationRangeQuantized<int8_t>(Activation::kRelu6, 0.01f, 0, &lo, &hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 127);  // 6 / 0.01 = 600 is past the type's range
  ASSERT_TRUE(quant::ActivationRangeQuantized<int8_t>(Activation::kReluN1To1, 0.5f, -1, &lo, &hi));
  EXPECT_EQ(lo, -3);
  EXPECT_EQ(hi, 1);
  EXPECT_FALSE(quant::ActivationRangeQuantized<int8_t>(Activation::kTanh, 0.5f, 0, &lo, &hi));
}

TEST(FixedPoint, CountLeadingBits) {
  EXPECT_EQ(fixed_point::CountLeadingZeros(0u), 32);
  EXPECT_EQ(fixed_point::CountLeadingZeros(1u), 31);
  EXPECT_EQ(fixed_point::CountLeadingZeros(0x80000000u), 0);
  EXPECT_EQ(fixed_point::CountLeadingSignBits(0), 31);
  EXPECT_EQ(fixed_point::CountLeadingSignBits(-1), 31);
  EXPECT_EQ(fixed_point::CountLeadingSignBits(1), 30);
  EXPECT_EQ(fixed_point::CountLeadingSignBits(kMax), 0);
  EXPECT_EQ(fixed_point::CountLeadingSignBits(kMin), 0);
}

TEST(FixedPoint, SaturatingRoundingMultiplyByPOT) {
  EXPECT_EQ(fixed_point::SaturatingRoundingMultiplyByPOT<2>(1 << 28), 1 << 30);
  EXPECT_EQ(fixed_point::SaturatingRoundingMultiplyByPOT<2>(1 << 29), kMax);
  EXPECT_EQ(fixed_point::SaturatingRoundingMultiplyByPOT<2>(-(1 << 29) - 1), kMin);
  EXPECT_EQ(fixed_point::SaturatingRoundingMultiplyByPOT<-1>(3), 2);
  EXPECT_EQ(fixed_point::SaturatingRoundingMultiplyByPOT<-1>(-3), -2);
}

TEST(FixedPoint, RoundingHalfSum) {
  EXPECT_EQ(fixed_point::RoundingHalfSum(kMax, kMax), kMax);
  EXPECT_EQ(fixed_point::RoundingHalfSum(1, 2), 2);
  EXPECT_EQ(fixed_point::RoundingHalfSum(-1, -2), -2);
  EXPECT_EQ(fixed_point::RoundingHalfSum(kMin, kMin), kMin);
}

TEST(FixedPoint, ExpOnNegativeValues) {
  using F5 = fixed_point::FixedPoint<5>;
  auto exp_of = [](double x) {
    const F5 a = F5::FromRaw(static_cast<int32_t>(std::lround(x * (1 << 26))));
    return fixed_point::ExpOnNegativeValues(a).raw / 2147483648.0;
  };
  EXPECT_EQ(fixed_point::ExpOnNegativeValues(F5::Zero()).raw, kMax);
  for (double x : {-0.001, -0.1, -0.25, -0.5, -1.0, -2.5, -7.0, -15.0})
    EXPECT_NEAR(exp_of(x), std::exp(x), 1e-6) << x;
  EXPECT_EQ(fixed_point::ExpOnNegativeValues(F5::FromRaw(kMin)).raw, 0);  // exp(-32)
  // exp(-1) assembled as exp(-1/4) * exp(-1/4) * exp(-1/2): the rounding of
  // each product shows in the last bits (exp(-1) itself is 790015084).
  EXPECT_EQ(fixed_point::ExpOnNegativeValues(F5::FromRaw(-(1 << 26))).raw, 790015308);
}

TEST(FixedPoint, OneOverOnePlusX) {
  using F0 = fixed_point::FixedPoint<0>;
  EXPECT_EQ(fixed_point::OneOverOnePlusXForXIn0To1(F0::Zero()).raw, kMax);
  for (double x : {0.1, 0.5, 0.9, 0.999}) {
    const F0 a = F0::FromRaw(static_cast<int32_t>(x * 2147483648.0));
    EXPECT_NEAR(fixed_point::OneOverOnePlusXForXIn0To1(a).raw / 2147483648.0, 1.0 / (1.0 + x),
                1e-8)
        << x;
  }
}

TEST(FixedPoint, GetReciprocal) {
  int bits;
  // 1/3 = (1 / 1.5) * 2^-1: the mantissa is 1/(1+x) for the normalised divisor.
  const int32_t r = fixed_point::GetReciprocal(3, 31, &bits);
  EXPECT_EQ(bits, 1);
  EXPECT_NEAR(std::ldexp(r / 2147483648.0, -bits), 1.0 / 3.0, 1e-9);
  const int32_t one = fixed_point::GetReciprocal(1, 31, &bits);
  EXPECT_EQ(bits, 0);
  EXPECT_EQ(one, kMax);
}

TEST(FixedPoint, TruncateToInt32FollowsX86) {
  EXPECT_EQ(fixed_point::TruncateToInt32(2.9f), 2);
  EXPECT_EQ(fixed_point::TruncateToInt32(-2.9f), -2);
  EXPECT_EQ(fixed_point::TruncateToInt32(-2147483648.0f), kMin);
  EXPECT_EQ(fixed_point::TruncateToInt32(2147483648.0f), kMin);
  EXPECT_EQ(fixed_point::TruncateToInt32(std::nanf("")), kMin);
  EXPECT_EQ(fixed_point::TruncateToInt32(-1e20f), kMin);
}

}  // namespace
}  // namespace delegato
