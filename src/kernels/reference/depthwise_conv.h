// DEPTHWISE_CONV_2D reference kernels, bit-exact with TFLite's reference
// DepthwiseConv (float, legacy uint8) and DepthwiseConvPerChannel (int8).
//
// Output channel oc reads input channel oc / depth_multiplier. Float outputs
// sum input * filter in (filter_y, filter_x) order over taps inside the image
// and then add the bias; quantized outputs accumulate
// (filter + filter_offset) * (input + input_offset) in 32 bits, add the bias,
// requantize with MultiplyByQuantizedMultiplier, add the output offset and
// clamp. The filter's [1][filter_y][filter_x][out_channel] layout already has
// output channels innermost, so each output pixel updates a block of
// contiguous per-channel accumulators tap by tap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/quantization.h"
#include "kernels/reference/conv.h"

namespace delegato::reference {

struct DepthwiseGeometry {
  int32_t batches = 0;
  int32_t input_height = 0, input_width = 0, input_depth = 0;
  int32_t filter_height = 0, filter_width = 0;
  int32_t output_height = 0, output_width = 0, output_depth = 0;
  int32_t depth_multiplier = 1;  // output_depth / input_depth
  int32_t stride_height = 1, stride_width = 1;
  int32_t dilation_height = 1, dilation_width = 1;
  int32_t pad_height = 0, pad_width = 0;

  int64_t output_rows() const { return static_cast<int64_t>(batches) * output_height; }
  size_t filter_elements() const {
    return static_cast<size_t>(filter_height) * filter_width * output_depth;
  }
};

// Copies a quantized filter to int16 with `offset` (the legacy uint8 filter
// offset; 0 for int8) added; the layout is unchanged.
template <class Source>
void PackDepthwiseFilter(const DepthwiseGeometry& g, const Source* filter, int32_t offset,
                         int16_t* packed) {
  const size_t n = g.filter_elements();
  for (size_t i = 0; i < n; ++i) packed[i] = static_cast<int16_t>(filter[i] + offset);
}

namespace detail {

// Calls fn(tap_index, input_pixel) for each tap of one output pixel inside
// the image, in (filter_y, filter_x) order.
template <class T, class Fn>
inline void ForEachDepthwiseTap(const DepthwiseGeometry& g, const T* batch_input, int32_t out_y,
                                int32_t out_x, Fn&& fn) {
  const int32_t in_y_origin = out_y * g.stride_height - g.pad_height;
  const int32_t in_x_origin = out_x * g.stride_width - g.pad_width;
  for (int32_t fy = 0; fy < g.filter_height; ++fy) {
    const int32_t in_y = in_y_origin + g.dilation_height * fy;
    if (in_y < 0 || in_y >= g.input_height) continue;
    for (int32_t fx = 0; fx < g.filter_width; ++fx) {
      const int32_t in_x = in_x_origin + g.dilation_width * fx;
      if (in_x < 0 || in_x >= g.input_width) continue;
      fn(fy * g.filter_width + fx,
         batch_input + (static_cast<size_t>(in_y) * g.input_width + in_x) * g.input_depth);
    }
  }
}

// acc[j] += f(input channel of block + j, block + j) for j < n.
template <class Acc, class Fn>
inline void AccumulateDepthwiseBlock(int32_t depth_multiplier, int32_t block, int n, Acc* acc,
                                     Fn&& term) {
  if (depth_multiplier == 1) {
    for (int j = 0; j < n; ++j) acc[j] += term(block + j, block + j);
  } else {
    for (int j = 0; j < n; ++j) acc[j] += term((block + j) / depth_multiplier, block + j);
  }
}

}  // namespace detail

// Float depthwise convolution of output rows [row_begin, row_end) (a row is
// one (batch, out_y) pair). `filter` is the model's [1, h, w, out] filter;
// `bias` may be null.
inline void DepthwiseConvFloat(const DepthwiseGeometry& g, const float* input,
                               const float* filter, const float* bias, float act_min,
                               float act_max, float* output, int64_t row_begin, int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  float acc[kChannelBlock];
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const float* batch_input = input + batch * batch_input_size;
    float* out_row = output + static_cast<size_t>(row) * g.output_width * out_depth;
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      float* out = out_row + static_cast<size_t>(out_x) * out_depth;
      for (int32_t block = 0; block < g.output_depth; block += kChannelBlock) {
        const int n = std::min<int32_t>(kChannelBlock, g.output_depth - block);
        for (int j = 0; j < n; ++j) acc[j] = 0.0f;
        detail::ForEachDepthwiseTap(g, batch_input, out_y, out_x, [&](int32_t tap, const float* in) {
          const float* w = filter + static_cast<size_t>(tap) * out_depth;
          detail::AccumulateDepthwiseBlock(g.depth_multiplier, block, n, acc,
                                           [&](int32_t ic, int32_t oc) { return in[ic] * w[oc]; });
        });
        for (int j = 0; j < n; ++j) {
          const float total = acc[j] + (bias != nullptr ? bias[block + j] : 0.0f);
          out[block + j] = std::min(std::max(total, act_min), act_max);
        }
      }
    }
  }
}

// Quantized depthwise convolution (uint8 or int8 data) of output rows
// [row_begin, row_end). `packed_filter` comes from PackDepthwiseFilter;
// `bias` may be null. Accumulation wraps modulo 2^32.
template <class T>
void DepthwiseConvQuantized(const DepthwiseGeometry& g, const T* input,
                            const int16_t* packed_filter, const int32_t* bias,
                            const ConvQuantParams& q, T* output, int64_t row_begin,
                            int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  uint32_t acc[kChannelBlock];
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const T* batch_input = input + batch * batch_input_size;
    T* out_row = output + static_cast<size_t>(row) * g.output_width * out_depth;
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      T* out = out_row + static_cast<size_t>(out_x) * out_depth;
      for (int32_t block = 0; block < g.output_depth; block += kChannelBlock) {
        const int n = std::min<int32_t>(kChannelBlock, g.output_depth - block);
        for (int j = 0; j < n; ++j) acc[j] = 0;
        detail::ForEachDepthwiseTap(g, batch_input, out_y, out_x, [&](int32_t tap, const T* in) {
          const int16_t* w = packed_filter + static_cast<size_t>(tap) * out_depth;
          detail::AccumulateDepthwiseBlock(
              g.depth_multiplier, block, n, acc, [&](int32_t ic, int32_t oc) {
                return static_cast<uint32_t>(static_cast<int32_t>(w[oc]) *
                                             (static_cast<int32_t>(in[ic]) + q.input_offset));
              });
        });
        for (int j = 0; j < n; ++j) {
          const int32_t oc = block + j;
          uint32_t total = acc[j];
          if (bias != nullptr) total += static_cast<uint32_t>(bias[oc]);
          const int64_t v = int64_t{quant::MultiplyByQuantizedMultiplier(
                                static_cast<int32_t>(total), q.multiplier[oc], q.shift[oc])} +
                            q.output_offset;
          out[oc] = static_cast<T>(std::min<int64_t>(std::max<int64_t>(v, q.act_min), q.act_max));
        }
      }
    }
  }
}

}  // namespace delegato::reference
