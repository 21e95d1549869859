// SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY and REDUCE_ALL as
// TFLite's reference kernels compute them: every input element is combined
// into its output position in row-major input order, starting from the
// reduction's identity, except that a reduction over every dim starts from
// the first element (TFLite's all-dims path; it differs for -0.0 sums and NaN
// maxima). Quantized SUM rescales the int32 sums; quantized PROD rescales at
// every multiplication.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/quantization.h"
#include "kernels/reference/reduce.h"

namespace delegato::reference {

// Integer sums and products wrap (computed in the unsigned type).
template <class T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Promote through uint64 so small types do not become (signed) int.
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

// Generic reduction; `all_dims` selects the first-element start.
template <class T, class Op>
void ReduceGeneric(const ReduceShape& s, bool all_dims, T init, Op op, const T* input,
                   T* output) {
  std::fill_n(output, s.output_count, init);
  if (s.input_count == 0) return;
  if (all_dims) {
    T acc = input[0];
    for (int64_t i = 1; i < s.input_count; ++i) acc = op(acc, input[i]);
    output[0] = acc;
    return;
  }
  AccumulateReduce(s, input, output, op);
}

// Quantized SUM (uint8, int8, int16): wrapping int32 sums, then
// (sum - zero_point * count) * input_scale / output_scale + output_zero_point.
// `sums` is scratch of output_count int32.
template <class T>
void SumQuantized(const ReduceShape& s, const T* input, int32_t input_zero_point,
                  int32_t multiplier, int shift, int32_t output_zero_point, int32_t* sums,
                  T* output) {
  std::fill_n(output, s.output_count, T(0));
  if (s.input_count == 0 || s.reduced_count == 0) return;
  std::fill_n(sums, s.output_count, 0);
  AccumulateReduce(s, input, sums, [](int32_t a, T x) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(int32_t{x}));
  });
  const int64_t count = s.reduced_count;
  for (int64_t i = 0; i < s.output_count; ++i) {
    const int32_t centered =
        static_cast<int32_t>(static_cast<int64_t>(sums[i]) - input_zero_point * count);
    const int32_t value = quant::MultiplyByQuantizedMultiplier(centered, multiplier, shift) +
                          output_zero_point;
    output[i] = static_cast<T>(std::clamp<int32_t>(value, quant::QMin<T>(), quant::QMax<T>()));
  }
}

// TFLite's 64-bit-input MultiplyByQuantizedMultiplier: the multiplier is
// reduced to 16 bits and applied with one rounding shift.
inline int32_t MultiplyByQuantizedMultiplier64(int64_t x, int32_t multiplier, int shift) {
  const int32_t reduced =
      multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
  const int total_shift = 15 - shift;
  const int64_t round = int64_t{1} << (total_shift - 1);
  return static_cast<int32_t>((x * reduced + round) >> total_shift);
}

// Quantized REDUCE_PROD (int8, int16). The first element of each output
// (all reduced coordinates 0) starts the product as (x - zero_point); every
// further factor and the final step rescale by multiplier/shift, which encode
// input_scale / output_scale^(1/count). `prods` is scratch of output_count.
template <class T>
void ProdQuantized(const ReduceShape& s, const bool* reduced, const T* input,
                   int32_t input_zero_point, int32_t multiplier, int shift,
                   int32_t output_zero_point, int32_t* prods, T* output) {
  if (s.input_count == 0) {
    std::fill_n(output, s.output_count, static_cast<T>(output_zero_point));
    return;
  }
  int32_t index[kMaxReduceRank] = {};
  for (int64_t i = 0; i < s.input_count; ++i) {
    int64_t out = 0;
    bool first = true;
    for (int d = 0; d < s.rank; ++d) {
      out += index[d] * s.output_strides[d];
      if (reduced[d] && index[d] != 0) first = false;
    }
    const int32_t x = int32_t{input[i]} - input_zero_point;
    prods[out] = first ? x
                       : MultiplyByQuantizedMultiplier64(int64_t{prods[out]} * x, multiplier,
                                                         shift);
    for (int d = s.rank - 1; d >= 0; --d) {
      if (++index[d] < s.input_dims[d]) break;
      index[d] = 0;
    }
  }
  for (int64_t i = 0; i < s.output_count; ++i) {
    const int32_t value =
        MultiplyByQuantizedMultiplier64(prods[i], multiplier, shift) + output_zero_point;
    output[i] = static_cast<T>(std::clamp<int32_t>(value, quant::QMin<T>(), quant::QMax<T>()));
  }
}

}  // namespace delegato::reference
