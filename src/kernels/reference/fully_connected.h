// FULLY_CONNECTED reference kernels, bit-exact with TFLite's reference
// FullyConnected (float, uint8, int8 per-tensor) and FullyConnectedPerChannel
// (int8).
//
// Float outputs sum input[d] * weights[out][d] in d order and then add the
// bias. Quantized outputs accumulate (weight + weight_offset) *
// (input + input_offset) in 32 bits and add the bias; the reference kernels
// then rescale in double precision, not in fixed point:
//   out = round(double(acc) * (double(in_scale) * double(w_scale) / double(out_scale)))
// (std::round, halves away from zero), add the output offset and clamp.
// Weights are repacked as [depth][out] so the innermost loop runs over
// contiguous outputs, each with its own accumulator in reference order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/reference/conv.h"

namespace delegato::reference {

struct FullyConnectedGeometry {
  int32_t batches = 0;
  int32_t accum_depth = 0;   // input values per batch row = weights dim 1
  int32_t output_depth = 0;  // weights dim 0

  // Work units for ParallelFor: one per (batch, block of kChannelBlock outputs).
  int32_t blocks_per_batch() const { return (output_depth + kChannelBlock - 1) / kChannelBlock; }
  int64_t work_units() const { return static_cast<int64_t>(batches) * blocks_per_batch(); }
  size_t weight_elements() const { return static_cast<size_t>(accum_depth) * output_depth; }
};

struct FullyConnectedQuantParams {
  int32_t input_offset = 0;  // -input zero point
  int32_t output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  const double* output_scale = nullptr;  // per output channel: in_s * w_s / out_s
};

// Repacks [out][depth] weights as [depth][out] with `offset` added.
template <class Packed, class Source>
void PackFullyConnectedWeights(const FullyConnectedGeometry& g, const Source* weights,
                               int32_t offset, Packed* packed) {
  const size_t out_depth = g.output_depth;
  const size_t depth = g.accum_depth;
  for (size_t oc = 0; oc < out_depth; ++oc)
    for (size_t d = 0; d < depth; ++d)
      packed[d * out_depth + oc] = static_cast<Packed>(weights[oc * depth + d] + offset);
}

// The double rescale of the reference kernels; on x86 an out-of-range
// conversion yields INT32_MIN, which is reproduced instead of being undefined.
inline int32_t RescaleDouble(int32_t acc, double scale) {
  const double r = std::round(static_cast<double>(acc) * scale);
  if (!(r >= -2147483648.0 && r < 2147483648.0)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(r);
}

// Float fully connected over work units [unit_begin, unit_end) (see
// FullyConnectedGeometry::work_units). `bias` may be null.
inline void FullyConnectedFloat(const FullyConnectedGeometry& g, const float* input,
                                const float* packed_weights, const float* bias, float act_min,
                                float act_max, float* output, int64_t unit_begin,
                                int64_t unit_end) {
  const size_t out_depth = g.output_depth;
  float acc[kChannelBlock];
  for (int64_t unit = unit_begin; unit < unit_end; ++unit) {
    const int64_t batch = unit / g.blocks_per_batch();
    const int32_t block = static_cast<int32_t>(unit % g.blocks_per_batch()) * kChannelBlock;
    const int n = std::min<int32_t>(kChannelBlock, g.output_depth - block);
    const float* in = input + static_cast<size_t>(batch) * g.accum_depth;
    const float* w = packed_weights + block;
    for (int j = 0; j < n; ++j) acc[j] = 0.0f;
    for (int32_t d = 0; d < g.accum_depth; ++d, w += out_depth) {
      const float x = in[d];
      for (int j = 0; j < n; ++j) acc[j] += x * w[j];
    }
    float* out = output + static_cast<size_t>(batch) * out_depth + block;
    for (int j = 0; j < n; ++j) {
      const float total = acc[j] + (bias != nullptr ? bias[block + j] : 0.0f);
      out[j] = std::min(std::max(total, act_min), act_max);
    }
  }
}

// Quantized fully connected (uint8 or int8 data) over work units
// [unit_begin, unit_end). `packed_weights` holds weight + weight_offset as
// int16; `bias` may be null. Accumulation wraps modulo 2^32.
template <class T>
void FullyConnectedQuantized(const FullyConnectedGeometry& g, const T* input,
                             const int16_t* packed_weights, const int32_t* bias,
                             const FullyConnectedQuantParams& q, T* output, int64_t unit_begin,
                             int64_t unit_end) {
  const size_t out_depth = g.output_depth;
  uint32_t acc[kChannelBlock];
  for (int64_t unit = unit_begin; unit < unit_end; ++unit) {
    const int64_t batch = unit / g.blocks_per_batch();
    const int32_t block = static_cast<int32_t>(unit % g.blocks_per_batch()) * kChannelBlock;
    const int n = std::min<int32_t>(kChannelBlock, g.output_depth - block);
    const T* in = input + static_cast<size_t>(batch) * g.accum_depth;
    const int16_t* w = packed_weights + block;
    for (int j = 0; j < n; ++j) acc[j] = 0;
    for (int32_t d = 0; d < g.accum_depth; ++d, w += out_depth) {
      const int32_t x = static_cast<int32_t>(in[d]) + q.input_offset;
      for (int j = 0; j < n; ++j) acc[j] += static_cast<uint32_t>(static_cast<int32_t>(w[j]) * x);
    }
    T* out = output + static_cast<size_t>(batch) * out_depth + block;
    for (int j = 0; j < n; ++j) {
      const int32_t oc = block + j;
      uint32_t total = acc[j];
      if (bias != nullptr) total += static_cast<uint32_t>(bias[oc]);
      const int64_t v =
          int64_t{RescaleDouble(static_cast<int32_t>(total), q.output_scale[oc])} + q.output_offset;
      out[j] = static_cast<T>(std::min<int64_t>(std::max<int64_t>(v, q.act_min), q.act_max));
    }
  }
}

}  // namespace delegato::reference
