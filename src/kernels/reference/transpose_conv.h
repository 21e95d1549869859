// TRANSPOSE_CONV reference kernels, bit-exact with TFLite's reference
// TransposeConv (float, legacy uint8) and the per-channel integer kernels
// (int8 with int32 accumulators, int16 activations with int64 accumulators).
//
// The arithmetic is a scatter: every input value, multiplied by each filter
// tap, is added to the output position it influences, visiting inputs in
// (batch, y, x, in_channel) order and taps in (filter_y, filter_x,
// out_channel) order; positions outside the output are skipped. Float outputs
// accumulate in place (so each output sees its terms in that order, then the
// bias, then the activation clamp); quantized outputs accumulate
// (input + input_offset) * (filter + filter_offset) in a scratch buffer, then
// add the bias, requantize per output channel, add the output offset and clamp.
// The filter layout is [out_channel][filter_y][filter_x][in_channel].
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/quantization.h"
#include "kernels/reference/int16x8.h"

namespace delegato::reference {

struct TransposeConvGeometry {
  int32_t batches = 0;
  int32_t input_height = 0, input_width = 0, input_depth = 0;
  int32_t filter_height = 0, filter_width = 0;
  int32_t output_height = 0, output_width = 0, output_depth = 0;
  int32_t stride_height = 1, stride_width = 1;
  int32_t pad_height = 0, pad_width = 0;

  size_t output_elements() const {
    return static_cast<size_t>(batches) * output_height * output_width * output_depth;
  }
};

// Adds input * filter products into acc (zeroed first, output_elements long).
// product(input_value, filter_value) gives the term.
template <class Acc, class In, class Filter, class Product>
void TransposeConvScatter(const TransposeConvGeometry& g, const In* input, const Filter* filter,
                          Acc* acc, const Product& product) {
  std::fill(acc, acc + g.output_elements(), Acc{0});
  const int64_t filter_tap_stride = g.input_depth;
  const int64_t filter_channel_stride =
      static_cast<int64_t>(g.filter_height) * g.filter_width * g.input_depth;
  for (int32_t b = 0; b < g.batches; ++b) {
    for (int32_t in_y = 0; in_y < g.input_height; ++in_y) {
      for (int32_t in_x = 0; in_x < g.input_width; ++in_x) {
        const In* in_pixel =
            input + ((static_cast<int64_t>(b) * g.input_height + in_y) * g.input_width + in_x) *
                        g.input_depth;
        const int32_t out_y0 = in_y * g.stride_height - g.pad_height;
        const int32_t out_x0 = in_x * g.stride_width - g.pad_width;
        for (int32_t ic = 0; ic < g.input_depth; ++ic) {
          const In in_value = in_pixel[ic];
          for (int32_t fy = 0; fy < g.filter_height; ++fy) {
            const int32_t out_y = out_y0 + fy;
            if (out_y < 0 || out_y >= g.output_height) continue;
            for (int32_t fx = 0; fx < g.filter_width; ++fx) {
              const int32_t out_x = out_x0 + fx;
              if (out_x < 0 || out_x >= g.output_width) continue;
              Acc* out_pixel =
                  acc + ((static_cast<int64_t>(b) * g.output_height + out_y) * g.output_width +
                         out_x) *
                            g.output_depth;
              const Filter* tap =
                  filter + (static_cast<int64_t>(fy) * g.filter_width + fx) * filter_tap_stride + ic;
              for (int32_t oc = 0; oc < g.output_depth; ++oc)
                out_pixel[oc] += product(in_value, tap[oc * filter_channel_stride]);
            }
          }
        }
      }
    }
  }
}

inline void TransposeConvFloat(const TransposeConvGeometry& g, const float* input,
                               const float* filter, const float* bias, float act_min,
                               float act_max, float* output) {
  TransposeConvScatter(g, input, filter, output,
                       [](float in, float f) { return in * f; });
  const size_t pixels = g.output_elements() / std::max<int32_t>(g.output_depth, 1);
  for (size_t p = 0; p < pixels; ++p) {
    float* out = output + p * g.output_depth;
    for (int32_t oc = 0; oc < g.output_depth; ++oc) {
      float v = out[oc];
      if (bias != nullptr) v += bias[oc];
      out[oc] = std::min(std::max(v, act_min), act_max);
    }
  }
}

struct TransposeConvQuantParams {
  int32_t input_offset = 0;   // -input zero point
  int32_t filter_offset = 0;  // -filter zero point (uint8 only; 0 otherwise)
  int32_t output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  const int32_t* multiplier = nullptr;  // one per output channel
  const int32_t* shift = nullptr;
};

// T: uint8/int8 (Acc int32, Bias int32) or int16 (Acc int64, Bias int32 or int64).
template <class T, class Acc, class Bias>
void TransposeConvQuantized(const TransposeConvGeometry& g, const TransposeConvQuantParams& q,
                            const T* input, const std::conditional_t<std::is_same_v<T, uint8_t>,
                                                                     uint8_t, int8_t>* filter,
                            const Bias* bias, Acc* scratch, T* output) {
  const int32_t input_offset = q.input_offset, filter_offset = q.filter_offset;
  TransposeConvScatter(g, input, filter, scratch, [&](auto in, auto f) {
    return static_cast<Acc>((static_cast<int32_t>(in) + input_offset) *
                            (static_cast<int32_t>(f) + filter_offset));
  });
  const size_t pixels = g.output_elements() / std::max<int32_t>(g.output_depth, 1);
  for (size_t p = 0; p < pixels; ++p) {
    const Acc* acc = scratch + p * g.output_depth;
    T* out = output + p * g.output_depth;
    for (int32_t oc = 0; oc < g.output_depth; ++oc) {
      Acc v = acc[oc];
      if (bias != nullptr) v += static_cast<Acc>(bias[oc]);
      int32_t scaled;
      if constexpr (std::is_same_v<Acc, int64_t>) {
        scaled = MultiplyByQuantizedMultiplier64(v, q.multiplier[oc], q.shift[oc]);
      } else {
        scaled = quant::MultiplyByQuantizedMultiplier(v, q.multiplier[oc], q.shift[oc]);
      }
      scaled += q.output_offset;
      out[oc] = static_cast<T>(std::min(std::max(scaled, q.act_min), q.act_max));
    }
  }
}

}  // namespace delegato::reference
