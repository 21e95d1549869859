// CONV_2D reference kernels, bit-exact with TFLite's reference Conv
// (float, legacy uint8) and ConvPerChannel (int8), plus the window geometry
// (output size and padding) that every windowed op shares.
//
// Arithmetic follows TFLite exactly: each float output sums
// input * filter in (filter_y, filter_x, in_channel) order skipping positions
// outside the image, then adds the bias once; quantized outputs accumulate
// (filter + filter_offset) * (input + input_offset) in 32 bits, add the bias,
// requantize with MultiplyByQuantizedMultiplier, add the output offset and
// clamp. The loops are arranged for speed without changing any of that: the
// filter is repacked as [filter_y][filter_x][in_channel][out_channel] so the
// innermost loop runs over contiguous output channels, each with its own
// accumulator that sees its terms in the reference order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/quantization.h"
#include "model/op_params.h"

namespace delegato::reference {

// ----------------------------------------------------------- window geometry

// Output size and leading padding of one spatial dimension.
struct WindowDim {
  int32_t out_size = 0;
  int32_t pad = 0;
};

// TFLite's ComputeOutSize/ComputePaddingWithOffset for one dimension. Invalid
// arguments (filter or stride or dilation < 1, a negative size) give an empty
// output, as TFLite does, instead of an error.
inline bool ComputeWindowDim(Padding padding, int32_t in_size, int32_t filter_size,
                             int32_t stride, int32_t dilation, WindowDim* dim) {
  *dim = WindowDim{};
  if (in_size < 0 || filter_size <= 0 || stride <= 0 || dilation <= 0) return false;
  const int64_t effective_filter = (static_cast<int64_t>(filter_size) - 1) * dilation + 1;
  int64_t out = 0;
  if (padding == Padding::kSame) {
    out = (static_cast<int64_t>(in_size) + stride - 1) / stride;
  } else if (padding == Padding::kValid) {
    out = (static_cast<int64_t>(in_size) + stride - effective_filter) / stride;
  } else {
    return false;
  }
  if (out < 0 || out > std::numeric_limits<int32_t>::max()) return false;
  int64_t total_pad = (out - 1) * stride + effective_filter - in_size;
  total_pad = std::max<int64_t>(total_pad, 0);
  if (total_pad / 2 > std::numeric_limits<int32_t>::max()) return false;
  dim->out_size = static_cast<int32_t>(out);
  dim->pad = static_cast<int32_t>(total_pad / 2);
  return true;
}

struct Window2D {
  int32_t out_height = 0, out_width = 0;
  int32_t pad_height = 0, pad_width = 0;
};

// TFLite's ComputePaddingHeightWidth: width first; a failure leaves the
// remaining sizes at 0.
inline Window2D ComputeWindow2D(Padding padding, int32_t stride_h, int32_t stride_w,
                                int32_t dilation_h, int32_t dilation_w, int32_t in_h,
                                int32_t in_w, int32_t filter_h, int32_t filter_w) {
  Window2D w;
  WindowDim width, height;
  if (!ComputeWindowDim(padding, in_w, filter_w, stride_w, dilation_w, &width)) return w;
  w.out_width = width.out_size;
  if (!ComputeWindowDim(padding, in_h, filter_h, stride_h, dilation_h, &height)) return w;
  w.out_height = height.out_size;
  w.pad_height = height.pad;
  w.pad_width = width.pad;
  return w;
}

// ------------------------------------------------------------------ CONV_2D

struct ConvGeometry {
  int32_t batches = 0;
  int32_t input_height = 0, input_width = 0, input_depth = 0;
  int32_t filter_height = 0, filter_width = 0;
  int32_t filter_depth = 0;  // input channels per group
  int32_t output_height = 0, output_width = 0, output_depth = 0;
  int32_t stride_height = 1, stride_width = 1;
  int32_t dilation_height = 1, dilation_width = 1;
  int32_t pad_height = 0, pad_width = 0;

  int32_t groups() const { return input_depth / filter_depth; }
  int32_t filters_per_group() const { return output_depth / groups(); }
  int64_t output_rows() const { return static_cast<int64_t>(batches) * output_height; }
  size_t packed_filter_elements() const {
    return static_cast<size_t>(filter_height) * filter_width * filter_depth * output_depth;
  }
};

// Quantized requantization parameters; multiplier/shift hold one entry per
// output channel (a per-tensor multiplier is repeated).
struct ConvQuantParams {
  int32_t input_offset = 0;  // -input zero point
  int32_t output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  const int32_t* multiplier = nullptr;
  const int32_t* shift = nullptr;
};

// Output channels computed together: their accumulators live on the stack.
inline constexpr int kChannelBlock = 64;

// Repacks an [out_channel][filter_y][filter_x][in_channel] filter as
// [filter_y][filter_x][in_channel][out_channel], adding `offset` to each
// value (the legacy uint8 filter offset; 0 otherwise).
template <class Packed, class Source>
void PackConvFilter(const ConvGeometry& g, const Source* filter, int32_t offset, Packed* packed) {
  const size_t out_depth = g.output_depth;
  const size_t taps = static_cast<size_t>(g.filter_height) * g.filter_width * g.filter_depth;
  for (size_t oc = 0; oc < out_depth; ++oc) {
    const Source* src = filter + oc * taps;
    for (size_t k = 0; k < taps; ++k)
      packed[k * out_depth + oc] = static_cast<Packed>(src[k] + offset);
  }
}

namespace detail {

// Calls fn(tap_index, input_pixel) for each filter tap of one output pixel
// that lies inside the image, in (filter_y, filter_x) order.
template <class T, class Fn>
inline void ForEachConvTap(const ConvGeometry& g, const T* batch_input, int32_t out_y,
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

}  // namespace detail

// Float convolution of output rows [row_begin, row_end), a row being one
// (batch, out_y) pair. `packed_filter` comes from PackConvFilter; `bias` may
// be null.
inline void ConvFloat(const ConvGeometry& g, const float* input, const float* packed_filter,
                      const float* bias, float act_min, float act_max, float* output,
                      int64_t row_begin, int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const int32_t filter_depth = g.filter_depth;
  const int32_t per_group = g.filters_per_group();
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  float acc[kChannelBlock];
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const float* batch_input = input + batch * batch_input_size;
    float* out_row = output + static_cast<size_t>(row) * g.output_width * out_depth;
    for (int32_t group = 0; group < g.groups(); ++group) {
      const int32_t group_end = (group + 1) * per_group;
      const int32_t in_channel_base = group * filter_depth;
      for (int32_t block = group * per_group; block < group_end; block += kChannelBlock) {
        const int n = std::min<int32_t>(kChannelBlock, group_end - block);
        for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
          for (int j = 0; j < n; ++j) acc[j] = 0.0f;
          detail::ForEachConvTap(g, batch_input, out_y, out_x, [&](int32_t tap, const float* px) {
            const float* in = px + in_channel_base;
            const float* w = packed_filter + static_cast<size_t>(tap) * filter_depth * out_depth + block;
            for (int32_t ic = 0; ic < filter_depth; ++ic, w += out_depth) {
              const float x = in[ic];
              for (int j = 0; j < n; ++j) acc[j] += x * w[j];
            }
          });
          float* out = out_row + static_cast<size_t>(out_x) * out_depth + block;
          for (int j = 0; j < n; ++j) {
            const float total = acc[j] + (bias != nullptr ? bias[block + j] : 0.0f);
            out[j] = std::min(std::max(total, act_min), act_max);
          }
        }
      }
    }
  }
}

// Quantized convolution (uint8 or int8 data) of output rows [row_begin,
// row_end). `packed_filter` holds filter + filter_offset as int16 (from
// PackConvFilter); `bias` may be null. Accumulation wraps modulo 2^32 like the
// reference's int32 accumulator does in practice.
template <class T>
void ConvQuantized(const ConvGeometry& g, const T* input, const int16_t* packed_filter,
                   const int32_t* bias, const ConvQuantParams& q, T* output, int64_t row_begin,
                   int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const int32_t filter_depth = g.filter_depth;
  const int32_t per_group = g.filters_per_group();
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  uint32_t acc[kChannelBlock];
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const T* batch_input = input + batch * batch_input_size;
    T* out_row = output + static_cast<size_t>(row) * g.output_width * out_depth;
    for (int32_t group = 0; group < g.groups(); ++group) {
      const int32_t group_end = (group + 1) * per_group;
      const int32_t in_channel_base = group * filter_depth;
      for (int32_t block = group * per_group; block < group_end; block += kChannelBlock) {
        const int n = std::min<int32_t>(kChannelBlock, group_end - block);
        for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
          for (int j = 0; j < n; ++j) acc[j] = 0;
          detail::ForEachConvTap(g, batch_input, out_y, out_x, [&](int32_t tap, const T* px) {
            const T* in = px + in_channel_base;
            const int16_t* w =
                packed_filter + static_cast<size_t>(tap) * filter_depth * out_depth + block;
            for (int32_t ic = 0; ic < filter_depth; ++ic, w += out_depth) {
              const int32_t x = static_cast<int32_t>(in[ic]) + q.input_offset;
              for (int j = 0; j < n; ++j)
                acc[j] += static_cast<uint32_t>(static_cast<int32_t>(w[j]) * x);
            }
          });
          T* out = out_row + static_cast<size_t>(out_x) * out_depth + block;
          for (int j = 0; j < n; ++j) {
            const int32_t oc = block + j;
            uint32_t total = acc[j];
            if (bias != nullptr) total += static_cast<uint32_t>(bias[oc]);
            const int64_t v = int64_t{quant::MultiplyByQuantizedMultiplier(
                                  static_cast<int32_t>(total), q.multiplier[oc], q.shift[oc])} +
                              q.output_offset;
            out[j] = static_cast<T>(std::min<int64_t>(std::max<int64_t>(v, q.act_min), q.act_max));
          }
        }
      }
    }
  }
}

}  // namespace delegato::reference
