// SOFTMAX over the last dimension, as TFLite's reference kernels compute it:
// float with beta in float arithmetic, and 8-bit inputs with the fixed-point
// exp of the difference to the row maximum (Q5.26), a Q12.19 sum and a
// fixed-point reciprocal. Rows are independent: [row_begin, row_end).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"

namespace delegato::reference {

inline void SoftmaxFloat(float beta, const float* in, float* out, int64_t depth,
                         int64_t row_begin, int64_t row_end) {
  for (int64_t row = row_begin; row < row_end; ++row) {
    const float* x = in + row * depth;
    float* y = out + row * depth;
    float max = std::numeric_limits<float>::lowest();
    for (int64_t c = 0; c < depth; ++c) max = (max < x[c]) ? x[c] : max;  // std::max order
    float sum = 0.0f;
    for (int64_t c = 0; c < depth; ++c) {
      const float e = std::exp((x[c] - max) * beta);
      y[c] = e;
      sum += e;
    }
    for (int64_t c = 0; c < depth; ++c) y[c] = y[c] / sum;
  }
}

// Precomputed by Prepare from beta and the input scale.
struct QuantizedSoftmaxParams {
  int32_t input_multiplier = 0;  // beta * input_scale in Q(31-5), as multiplier and left shift
  int input_left_shift = 0;
  int32_t diff_min = 0;          // differences below this contribute nothing
};

constexpr int kSoftmaxScaledDiffIntegerBits = 5;
constexpr int kSoftmaxAccumulationIntegerBits = 12;

// TFLite's PreprocessSoftmaxScaling + CalculateInputRadius. Returns false when
// beta * input_scale is too small for the fixed-point scheme (TFLite aborts).
inline bool PrepareQuantizedSoftmax(double beta, double input_scale,
                                    QuantizedSoftmaxParams* params) {
  const double real_multiplier =
      std::min(beta * input_scale * (1 << (31 - kSoftmaxScaledDiffIntegerBits)),
               (int64_t{1} << 31) - 1.0);
  if (!(real_multiplier > 1.0)) return false;
  int shift = 0;
  quant::QuantizeMultiplier(real_multiplier, &params->input_multiplier, &shift);
  if (shift < 0 || shift > 31) return false;
  params->input_left_shift = shift;
  const double max_input_rescaled =
      1.0 * ((1 << kSoftmaxScaledDiffIntegerBits) - 1) *
      static_cast<double>(int64_t{1} << (31 - kSoftmaxScaledDiffIntegerBits)) /
      static_cast<double>(int64_t{1} << shift);
  params->diff_min = -static_cast<int32_t>(std::floor(max_input_rescaled));
  return true;
}

// In: uint8 or int8. Out: uint8, int8 or int16, implicitly scaled 1/2^bits
// with the zero point at the type's minimum.
template <class In, class Out>
void SoftmaxQuantized(const QuantizedSoftmaxParams& p, const In* in, Out* out, int64_t depth,
                      int64_t row_begin, int64_t row_end) {
  using fixed_point::FixedPoint;
  using ScaledDiff = FixedPoint<kSoftmaxScaledDiffIntegerBits>;
  using Accum = FixedPoint<kSoftmaxAccumulationIntegerBits>;
  using F0 = FixedPoint<0>;
  // diff * multiplier * 2^left_shift, in wrapping int32 like TFLite; diff_min
  // keeps the shifted difference in range.
  auto rescale_diff = [&p](int32_t diff) {
    const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(diff)
                                                 << p.input_left_shift);
    return ScaledDiff::FromRaw(quant::SaturatingRoundingDoublingHighMul(shifted, p.input_multiplier));
  };
  constexpr int32_t kOutMin = std::numeric_limits<Out>::min();
  constexpr int32_t kOutMax = std::numeric_limits<Out>::max();
  for (int64_t row = row_begin; row < row_end; ++row) {
    const In* x = in + row * depth;
    Out* y = out + row * depth;
    In max_in_row = std::numeric_limits<In>::min();
    for (int64_t c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[c]);

    Accum sum_of_exps = Accum::Zero();
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      if (diff >= p.diff_min)
        sum_of_exps = sum_of_exps + fixed_point::Rescale<kSoftmaxAccumulationIntegerBits>(
                                        fixed_point::ExpOnNegativeValues(rescale_diff(diff)));
    }

    int num_bits_over_unit = 0;
    const F0 shifted_scale = F0::FromRaw(fixed_point::GetReciprocal(
        sum_of_exps.raw, kSoftmaxAccumulationIntegerBits, &num_bits_over_unit));
    // sum_of_exps >= 1 (the maximum contributes exp(0)), so this lies in
    // [0, 31 - bits + 12]: past 31 for 8-bit outputs of ~1000 similar classes.
    const int exponent = num_bits_over_unit + 31 - static_cast<int>(sizeof(Out) * 8);

    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      if (diff >= p.diff_min) {
        const F0 exp_in_0 = fixed_point::ExpOnNegativeValues(rescale_diff(diff));
        const int32_t unsat = quant::RoundingDivideByPOTWide((shifted_scale * exp_in_0).raw, exponent);
        const int32_t shifted = unsat + kOutMin;
        y[c] = static_cast<Out>(std::max(std::min(shifted, kOutMax), kOutMin));
      } else {
        y[c] = static_cast<Out>(kOutMin);
      }
    }
  }
}

}  // namespace delegato::reference
