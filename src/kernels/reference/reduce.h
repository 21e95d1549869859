// MEAN, as TFLite's reference kernels compute it: sum every input element
// into its output position in row-major input order, then divide (float) or
// rescale with a fixed-point multiplier that folds in 1/count (quantized).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/quantization.h"

namespace delegato::reference {

constexpr int kMaxReduceRank = 8;

// A reduction's geometry: the input dims and, per input dim, the stride of
// its index in the flattened output (0 for reduced dims).
struct ReduceShape {
  int rank = 0;
  int32_t input_dims[kMaxReduceRank] = {};
  int64_t output_strides[kMaxReduceRank] = {};
  int64_t input_count = 0;
  int64_t output_count = 0;
  int64_t reduced_count = 0;  // input elements per output element
};

// reduced[d] marks the dims to reduce (rank <= kMaxReduceRank).
inline ReduceShape MakeReduceShape(int rank, const int32_t* dims, const bool* reduced) {
  ReduceShape s;
  s.rank = rank;
  s.input_count = 1;
  s.output_count = 1;
  s.reduced_count = 1;
  for (int d = rank - 1; d >= 0; --d) {
    s.input_dims[d] = dims[d];
    s.input_count *= dims[d];
    if (reduced[d]) {
      s.output_strides[d] = 0;
      s.reduced_count *= dims[d];
    } else {
      s.output_strides[d] = s.output_count;
      s.output_count *= dims[d];
    }
  }
  return s;
}

// acc[output index of x] = add(acc[...], x) over the input in row-major order.
template <class In, class Acc, class Add>
void AccumulateReduce(const ReduceShape& s, const In* input, Acc* acc, Add add) {
  if (s.input_count == 0) return;
  if (s.rank == 0) {
    acc[0] = add(acc[0], input[0]);
    return;
  }
  int32_t index[kMaxReduceRank] = {};
  int64_t out = 0;
  const int last = s.rank - 1;
  const int64_t last_stride = s.output_strides[last];
  for (int64_t i = 0; i < s.input_count;) {
    for (int32_t k = 0; k < s.input_dims[last]; ++k, ++i)
      acc[out + k * last_stride] = add(acc[out + k * last_stride], input[i]);
    int d = last - 1;
    for (; d >= 0; --d) {
      out += s.output_strides[d];
      if (++index[d] < s.input_dims[d]) break;
      out -= s.output_strides[d] * s.input_dims[d];
      index[d] = 0;
    }
    if (d < 0) break;
  }
}

// Float mean. An empty input yields NaN, as in TFLite.
inline void MeanFloat(const ReduceShape& s, const float* input, float* output) {
  if (s.input_count == 0) {
    std::fill_n(output, s.output_count, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  std::fill_n(output, s.output_count, 0.0f);
  AccumulateReduce(s, input, output, [](float a, float x) { return a + x; });
  const float count = static_cast<float>(s.reduced_count);
  for (int64_t i = 0; i < s.output_count; ++i) output[i] = output[i] / count;
}

// The quantized mean's last step, from the int32 sums (also used by the
// optimized kernels, which only compute the sums differently).
template <class T>
void MeanRescale(const ReduceShape& s, const int32_t* sums, int32_t input_zero_point,
                 int32_t multiplier, int shift, int32_t output_zero_point, T* output) {
  // Fold 1/count into the multiplier: scale it up by 2^k (k = floor(log2
  // count), capped so the final shift stays >= -31) before the division.
  const int64_t count = s.reduced_count;
  int k = 63 - __builtin_clzll(static_cast<uint64_t>(count));
  k = std::min(k, 32);
  k = std::max(0, std::min(k, 31 + shift));
  const int32_t mean_multiplier =
      static_cast<int32_t>((static_cast<int64_t>(multiplier) << k) / count);
  const int mean_shift = shift - k;
  for (int64_t i = 0; i < s.output_count; ++i) {
    const int32_t centered =
        static_cast<int32_t>(static_cast<int64_t>(sums[i]) - input_zero_point * count);
    const int32_t value =
        quant::MultiplyByQuantizedMultiplier(centered, mean_multiplier, mean_shift) +
        output_zero_point;
    output[i] = static_cast<T>(
        std::clamp<int32_t>(value, quant::QMin<T>(), quant::QMax<T>()));
  }
}

// Quantized mean (uint8, int8, int16). multiplier/shift encode
// input_scale / output_scale; sums is scratch of output_count int32.
template <class T>
void MeanQuantized(const ReduceShape& s, const T* input, int32_t input_zero_point,
                   int32_t multiplier, int shift, int32_t output_zero_point, int32_t* sums,
                   T* output) {
  std::fill_n(output, s.output_count, T(0));
  if (s.input_count == 0 || s.reduced_count == 0) return;
  std::fill_n(sums, s.output_count, 0);
  // Wrapping int32 accumulation.
  AccumulateReduce(s, input, sums, [](int32_t a, T x) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(int32_t{x}));
  });
  MeanRescale(s, sums, input_zero_point, multiplier, shift, output_zero_point, output);
}

}  // namespace delegato::reference
