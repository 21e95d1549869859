// int16x8 kernels: int16 activations (zero point 0) with int8 weights, for
// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, bit-exact with TFLite's
// reference kernels.
//
// Sums accumulate in 64 bits (wrapping) with an INT64 bias (or none), and
// convolutions requantize with the 64-bit MultiplyByQuantizedMultiplier (the
// Q31 multiplier rounded to 16 bits, one rounding shift). With an INT32 bias
// (CONV_2D and FULLY_CONNECTED whose options declare quantized_bias_type
// INT32) sums accumulate in 32 bits and convolutions use the 32-bit
// requantization. FULLY_CONNECTED rescales in double precision like its 8-bit
// reference kernel. Output zero points are 0, so there is no output offset.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/quantization.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/depthwise_conv.h"
#include "kernels/reference/fully_connected.h"

namespace delegato::reference {

// x * multiplier * 2^shift for a 64-bit accumulator (TFLite's int64
// MultiplyByQuantizedMultiplier, MultiplyByQuantizedMultiplier64 below) in
// two steps: the Q31 multiplier rounded to 16 bits, then x times it with one
// rounding right shift by 15 - shift.
inline int32_t ReducedMultiplier16(int32_t multiplier) {
  return multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
}

// The second step: x times the 16-bit multiplier, one rounding right shift
// by total_shift (1-63), truncated to int32.
inline int32_t MultiplyByReducedMultiplier64(int64_t x, int32_t reduced, int total_shift) {
  const int64_t round = int64_t{1} << (total_shift - 1);
  // Wrapping multiply: absurd accumulators wrap as on x86 instead of being undefined.
  const int64_t product =
      static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(int64_t{reduced}));
  const int64_t result = static_cast<int64_t>(static_cast<uint64_t>(product) +
                                              static_cast<uint64_t>(round)) >>
                         total_shift;
  return static_cast<int32_t>(result);
}

inline int32_t MultiplyByQuantizedMultiplier64(int64_t x, int32_t multiplier, int shift) {
  return MultiplyByReducedMultiplier64(x, ReducedMultiplier16(multiplier), 15 - shift);
}

// Products of an int16 activation and an int8 weight are at most 2^22 in
// magnitude ((-32768) * (-128)): a sum of at most 2^8 of them fits in int32
// exactly (2^9 of them can reach 2^31).
inline constexpr int32_t kExactProducts16x8 = 256;

namespace detail {

// The wrapping accumulator for a bias type: 32 bits for INT32, 64 otherwise.
template <class Bias>
using Acc16x8 = std::conditional_t<std::is_same_v<Bias, int32_t>, uint32_t, uint64_t>;

template <class Bias>
inline int32_t Requantize16x8(Acc16x8<Bias> acc, int32_t multiplier, int shift) {
  if constexpr (std::is_same_v<Bias, int32_t>)
    return quant::MultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), multiplier, shift);
  else
    return MultiplyByQuantizedMultiplier64(static_cast<int64_t>(acc), multiplier, shift);
}

inline int16_t Clamp16(int64_t v, int32_t lo, int32_t hi) {
  return static_cast<int16_t>(std::min<int64_t>(std::max<int64_t>(v, lo), hi));
}

// FULLY_CONNECTED's double-precision rescale of a (signed) sum, clamped.
inline int16_t RescaleFullyConnected16(int64_t total, double scale, int32_t lo, int32_t hi) {
  const double r = std::round(static_cast<double>(total) * scale);
  // Out-of-range conversions give INT32_MIN on x86; reproduced, not undefined.
  const int32_t scaled = r >= -2147483648.0 && r < 2147483648.0
                             ? static_cast<int32_t>(r)
                             : std::numeric_limits<int32_t>::min();
  return Clamp16(scaled, lo, hi);
}

}  // namespace detail

// CONV_2D over output rows [row_begin, row_end). `packed_filter` is the int8
// filter through PackConvFilter with offset 0, kept int8; `bias` may be null.
template <class Bias>
void Conv16x8(const ConvGeometry& g, const int16_t* input, const int8_t* packed_filter,
              const Bias* bias, const ConvQuantParams& q, int16_t* output, int64_t row_begin,
              int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const int32_t filter_depth = g.filter_depth;
  const int32_t per_group = g.filters_per_group();
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  using Acc = detail::Acc16x8<Bias>;
  Acc acc[kChannelBlock];
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const int16_t* batch_input = input + batch * batch_input_size;
    int16_t* out_row = output + static_cast<size_t>(row) * g.output_width * out_depth;
    for (int32_t group = 0; group < g.groups(); ++group) {
      const int32_t group_end = (group + 1) * per_group;
      const int32_t in_channel_base = group * filter_depth;
      for (int32_t block = group * per_group; block < group_end; block += kChannelBlock) {
        const int n = std::min<int32_t>(kChannelBlock, group_end - block);
        for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
          for (int j = 0; j < n; ++j) acc[j] = 0;
          detail::ForEachConvTap(g, batch_input, out_y, out_x,
                                 [&](int32_t tap, const int16_t* px) {
            const int16_t* in = px + in_channel_base;
            const int8_t* w =
                packed_filter + static_cast<size_t>(tap) * filter_depth * out_depth + block;
            // Runs of input channels summed exactly in 32 bits first (see
            // kExactProducts16x8), then added to the wrapping accumulator:
            // the same total, with 32-bit vector lanes instead of 64-bit ones.
            for (int32_t ic0 = 0; ic0 < filter_depth; ic0 += kExactProducts16x8) {
              const int32_t ic1 = std::min(filter_depth, ic0 + kExactProducts16x8);
              int32_t part[kChannelBlock];
              for (int j = 0; j < n; ++j) part[j] = 0;
              for (int32_t ic = ic0; ic < ic1; ++ic, w += out_depth) {
                const int32_t x = in[ic];
                for (int j = 0; j < n; ++j) part[j] += int32_t{w[j]} * x;
              }
              for (int j = 0; j < n; ++j) acc[j] += static_cast<Acc>(int64_t{part[j]});
            }
          });
          int16_t* out = out_row + static_cast<size_t>(out_x) * out_depth + block;
          for (int j = 0; j < n; ++j) {
            const int32_t oc = block + j;
            Acc total = acc[j];
            if (bias != nullptr) total += static_cast<Acc>(static_cast<int64_t>(bias[oc]));
            out[j] = detail::Clamp16(
                detail::Requantize16x8<Bias>(total, q.multiplier[oc], q.shift[oc]), q.act_min,
                q.act_max);
          }
        }
      }
    }
  }
}

// DEPTHWISE_CONV_2D over output rows [row_begin, row_end). `packed_filter`
// comes from PackDepthwiseFilter with offset 0; `bias` may be null.
inline void DepthwiseConv16x8(const DepthwiseGeometry& g, const int16_t* input,
                       const int16_t* packed_filter, const int64_t* bias, const ConvQuantParams& q,
                       int16_t* output, int64_t row_begin, int64_t row_end) {
  const size_t out_depth = g.output_depth;
  const size_t batch_input_size =
      static_cast<size_t>(g.input_height) * g.input_width * g.input_depth;
  uint64_t acc[kChannelBlock];
  int32_t part[kChannelBlock];
  const bool taps_exact32 = int64_t{g.filter_height} * g.filter_width <= kExactProducts16x8;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int32_t batch = static_cast<int32_t>(row / g.output_height);
    const int32_t out_y = static_cast<int32_t>(row % g.output_height);
    const int16_t* batch_input = input + batch * batch_input_size;
    int16_t* out_row = output + static_cast<size_t>(row) * g.output_width * out_depth;
    for (int32_t out_x = 0; out_x < g.output_width; ++out_x) {
      int16_t* out = out_row + static_cast<size_t>(out_x) * out_depth;
      for (int32_t block = 0; block < g.output_depth; block += kChannelBlock) {
        const int n = std::min<int32_t>(kChannelBlock, g.output_depth - block);
        // The window's products into sums[j] of type S (converted from their
        // int64 value: wrapping for uint64_t, exact for int32_t).
        auto accumulate = [&](auto* sums) {
          using S = std::remove_pointer_t<decltype(sums)>;
          for (int j = 0; j < n; ++j) sums[j] = 0;
          detail::ForEachDepthwiseTap(g, batch_input, out_y, out_x,
                                      [&](int32_t tap, const int16_t* in) {
            const int16_t* w = packed_filter + static_cast<size_t>(tap) * out_depth;
            detail::AccumulateDepthwiseBlock(
                g.depth_multiplier, block, n, sums, [&](int32_t ic, int32_t oc) {
                  return static_cast<S>(static_cast<int64_t>(int32_t{w[oc]} * int32_t{in[ic]}));
                });
          });
        };
        if (taps_exact32) {
          // At most kExactProducts16x8 taps: their sum is exact in 32 bits
          // (32-bit vector lanes instead of 64-bit ones), then widened.
          accumulate(part);
          for (int j = 0; j < n; ++j) acc[j] = static_cast<uint64_t>(int64_t{part[j]});
        } else {
          accumulate(acc);
        }
        for (int j = 0; j < n; ++j) {
          const int32_t oc = block + j;
          uint64_t total = acc[j];
          if (bias != nullptr) total += static_cast<uint64_t>(static_cast<int64_t>(bias[oc]));
          out[oc] = detail::Clamp16(
              MultiplyByQuantizedMultiplier64(static_cast<int64_t>(total), q.multiplier[oc], q.shift[oc]), q.act_min,
              q.act_max);
        }
      }
    }
  }
}

// FULLY_CONNECTED over work units [unit_begin, unit_end) (see
// FullyConnectedGeometry). `packed_weights` holds weight + weight_offset
// (PackFullyConnectedWeights); `bias` may be null.
template <class Bias>
void FullyConnected16x8(const FullyConnectedGeometry& g, const int16_t* input,
                        const int16_t* packed_weights, const Bias* bias,
                        const FullyConnectedQuantParams& q, int16_t* output, int64_t unit_begin,
                        int64_t unit_end) {
  const size_t out_depth = g.output_depth;
  using Acc = detail::Acc16x8<Bias>;
  using SignedAcc = std::make_signed_t<Acc>;
  Acc acc[kChannelBlock];
  for (int64_t unit = unit_begin; unit < unit_end; ++unit) {
    const int64_t batch = unit / g.blocks_per_batch();
    const int32_t block = static_cast<int32_t>(unit % g.blocks_per_batch()) * kChannelBlock;
    const int n = std::min<int32_t>(kChannelBlock, g.output_depth - block);
    const int16_t* in = input + static_cast<size_t>(batch) * g.accum_depth;
    const int16_t* w = packed_weights + block;
    for (int j = 0; j < n; ++j) acc[j] = 0;
    for (int32_t d = 0; d < g.accum_depth; ++d, w += out_depth) {
      const int32_t x = in[d];
      for (int j = 0; j < n; ++j)
        acc[j] += static_cast<Acc>(static_cast<int64_t>(int32_t{w[j]} * x));
    }
    int16_t* out = output + static_cast<size_t>(batch) * out_depth + block;
    for (int j = 0; j < n; ++j) {
      const int32_t oc = block + j;
      Acc total = acc[j];
      if (bias != nullptr) total += static_cast<Acc>(static_cast<int64_t>(bias[oc]));
      out[j] = detail::RescaleFullyConnected16(static_cast<SignedAcc>(total), q.output_scale[oc],
                                               q.act_min, q.act_max);
    }
  }
}

}  // namespace delegato::reference
