#include "kernels/optimized/softmax8.h"

#include <algorithm>
#include <limits>

#include "kernels/fixed_point.h"
#include "kernels/quantization.h"

namespace delegato::optimized {

void QuantSoftmax8::Build(const reference::QuantizedSoftmaxParams& p, bool in_signed,
                          Output output) {
  using fixed_point::FixedPoint;
  using ScaledDiff = FixedPoint<reference::kSoftmaxScaledDiffIntegerBits>;
  in_signed_ = in_signed;
  output_ = output;
  for (int d = 0; d < 256; ++d) {
    const int32_t diff = -d;
    if (diff < p.diff_min) {
      exp_[d] = exp_sum_[d] = 0;
      continue;
    }
    // The reference's rescale_diff and exp, step for step.
    const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(diff) << p.input_left_shift);
    const ScaledDiff scaled =
        ScaledDiff::FromRaw(quant::SaturatingRoundingDoublingHighMul(shifted, p.input_multiplier));
    const FixedPoint<0> e = fixed_point::ExpOnNegativeValues(scaled);
    exp_[d] = e.raw;
    exp_sum_[d] = fixed_point::Rescale<reference::kSoftmaxAccumulationIntegerBits>(e).raw;
  }
}

template <class In, class Out>
void QuantSoftmax8::RunTyped(const In* in, Out* out, int64_t depth, int64_t row_begin,
                             int64_t row_end) const {
  constexpr int32_t kOutMin = std::numeric_limits<Out>::min();
  constexpr int32_t kOutMax = std::numeric_limits<Out>::max();
  for (int64_t row = row_begin; row < row_end; ++row) {
    const In* x = in + row * depth;
    Out* y = out + row * depth;
    In max_in_row = std::numeric_limits<In>::min();
    for (int64_t c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[c]);
    const int32_t max = max_in_row;

    // Wrapping Q12.19 sum, in the reference's order (the sum is exact
    // modulo 2^32 in any order).
    uint32_t sum = 0;
    for (int64_t c = 0; c < depth; ++c) sum += static_cast<uint32_t>(exp_sum_[max - int32_t{x[c]}]);

    int num_bits_over_unit = 0;
    const int32_t scale = fixed_point::GetReciprocal(
        static_cast<int32_t>(sum), reference::kSoftmaxAccumulationIntegerBits, &num_bits_over_unit);
    const int exponent = num_bits_over_unit + 31 - static_cast<int>(sizeof(Out) * 8);
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t e = exp_[max - int32_t{x[c]}];
      const int32_t unsat =
          quant::RoundingDivideByPOTWide(quant::SaturatingRoundingDoublingHighMul(scale, e), exponent);
      y[c] = static_cast<Out>(std::clamp(unsat + kOutMin, kOutMin, kOutMax));
    }
  }
}

void QuantSoftmax8::Run(const void* in, void* out, int64_t depth, int64_t row_begin,
                        int64_t row_end) const {
  if (in_signed_) {
    const int8_t* x = static_cast<const int8_t*>(in);
    if (output_ == Output::kInt16)
      RunTyped(x, static_cast<int16_t*>(out), depth, row_begin, row_end);
    else
      RunTyped(x, static_cast<int8_t*>(out), depth, row_begin, row_end);
  } else {
    const uint8_t* x = static_cast<const uint8_t*>(in);
    if (output_ == Output::kInt16)
      RunTyped(x, static_cast<int16_t*>(out), depth, row_begin, row_end);
    else
      RunTyped(x, static_cast<uint8_t*>(out), depth, row_begin, row_end);
  }
}

}  // namespace delegato::optimized
