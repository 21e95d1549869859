// int16 SOFTMAX as TFLite's reference kernel computes it: exp of the
// (rescaled) difference to the row maximum through a 513-entry interpolated
// table over [-10, 0], a Q16.15 sum, its reciprocal through a second table of
// 1 / (1 + x) over [0, 1], and a rounding shift. Both tables are filled like
// TFLite's LUTPopulate for int16 (in double): 512 samples, each corrected by
// half the error of linear interpolation at the step's midpoint.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/quantization.h"

namespace delegato::reference {

using Int16Lut = std::array<int16_t, 513>;

// Samples fn over the int16 input range of (input_scale, input_zero_point),
// quantized to the int16 range of (output_scale, output_zero_point).
template <class Fn>
void PopulateInt16Lut(double input_scale, int32_t input_zero_point, double output_scale,
                      int32_t output_zero_point, Fn fn, Int16Lut* lut) {
  constexpr int32_t kMin = std::numeric_limits<int16_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int16_t>::max();
  const double input_min = input_scale * (kMin - input_zero_point);
  const double input_max = input_scale * (kMax - input_zero_point);
  const double output_min = output_scale * (kMin - output_zero_point);
  const double output_max = output_scale * (kMax - output_zero_point);
  constexpr int kSteps = 512;
  const double step = (input_max - input_min) / kSteps;
  const double half_step = step / 2;
  const double to_table = static_cast<double>(kMax - kMin + 1) / (output_max - output_min);
  auto clamp = [](double v) {
    return static_cast<int16_t>(std::min<double>(std::max<double>(v, kMin), kMax));
  };
  for (int i = 0; i < kSteps; ++i) {
    const double value = fn(input_min + i * step);
    const double midpoint = fn(input_min + i * step + half_step);
    const double next = fn(input_min + (i + 1) * step);
    const double sample = std::round(value * to_table);
    const double interpolated = std::round((next * to_table + std::round(value * to_table)) / 2);
    const double exact_midpoint = std::round(midpoint * to_table);
    const double bias = std::round((interpolated - exact_midpoint) / 2);
    (*lut)[i] = clamp(sample - bias);
  }
  (*lut)[kSteps] = clamp(std::round(fn(input_max) * to_table));
}

// Table value at a Q0.15 input: entry (value >> 7) + 256, interpolated over
// the low 7 bits with rounding.
inline int16_t LookupInt16Lut(int16_t value, const Int16Lut& lut) {
  const int index = 256 + (value >> 7);
  const int16_t offset = static_cast<int16_t>(value & 0x7F);
  const int16_t base = lut[index];
  const int16_t slope = static_cast<int16_t>(lut[index + 1] - lut[index]);
  const int delta = (slope * offset + 64) >> 7;
  return static_cast<int16_t>(base + delta);
}

struct SoftmaxInt16Params {
  int32_t input_multiplier = 0;  // in_scale * beta / (10 / 65535) as Q31 and shift
  int input_shift = 0;
  Int16Lut exp_lut{};
  Int16Lut reciprocal_lut{};
};

// Fills the tables and the input multiplier; false when the multiplier cannot
// be represented.
inline bool PrepareSoftmaxInt16(float input_scale, float beta, SoftmaxInt16Params* p) {
  constexpr int32_t kRange = 65535;
  PopulateInt16Lut(10.0 / kRange, 32767, 2.0 / kRange, 0,
                   [](double x) { return std::exp(x); }, &p->exp_lut);
  PopulateInt16Lut(1.0 / kRange, -32768, 2.0 / kRange, 0,
                   [](double x) { return 1.0 / (1.0 + x); }, &p->reciprocal_lut);
  const double rescale = static_cast<double>(input_scale * beta) / (10.0 / 65535.0);
  if (!std::isfinite(rescale) || rescale <= 0.0) return false;
  quant::QuantizeMultiplier(rescale, &p->input_multiplier, &p->input_shift);
  return p->input_shift <= 31;
}

// Rows [row_begin, row_end) of `depth` values each. The output doubles as
// the store of the row's exp values.
inline void SoftmaxInt16(const SoftmaxInt16Params& p, const int16_t* input, int16_t* output,
                         int64_t depth, int64_t row_begin, int64_t row_end) {
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int16_t* in = input + row * depth;
    int16_t* out = output + row * depth;
    int16_t max = std::numeric_limits<int16_t>::min();
    for (int64_t c = 0; c < depth; ++c) max = std::max(max, in[c]);
    int32_t sum = 0;  // Q16.15
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t diff = int32_t{in[c]} - max;
      // [-65535, 0] maps to [-10, 0]; recentred on the table's symmetric input.
      const int32_t scaled =
          quant::MultiplyByQuantizedMultiplier(diff, p.input_multiplier, p.input_shift) + 32767;
      const int16_t index = static_cast<int16_t>(std::min(std::max(scaled, -32768), 32767));
      out[c] = LookupInt16Lut(index, p.exp_lut);
      sum += out[c];
    }
    // Normalize the sum to [1, 2) in Q1.14 units, then x = sum - 1 recentred.
    const int headroom_plus_one =
        sum == 0 ? 32 : __builtin_clz(static_cast<uint32_t>(sum));
    const int32_t shifted_sum = static_cast<int32_t>(
        ((static_cast<int64_t>(sum) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int32_t centred = shifted_sum - ((1 << 15) + (1 << 16));
    const int16_t reciprocal = LookupInt16Lut(
        static_cast<int16_t>(std::min(std::max(centred, -32768), 32767)), p.reciprocal_lut);
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = int64_t{1} << (right_shift - 1);
    for (int64_t c = 0; c < depth; ++c) {
      const int32_t r = static_cast<int32_t>(
          (static_cast<int64_t>(out[c]) * reciprocal + round) >> right_shift);
      out[c] = static_cast<int16_t>(std::min(std::max(r, 0), 32767));
    }
  }
}

}  // namespace delegato::reference
