// Dynamic-range ("hybrid") DEPTHWISE_CONV_2D with depth multiplier 1,
// bit-exact with reference::HybridDepthwiseConv: the image quantized as the
// reference does (HybridQuantizeRow, asymmetric), then per output pixel and
// 8 channels at a time sum w * (q - zero_point) over the valid taps in int32
// lanes (exact; skipped taps add nothing, as in the reference), and
// out = clamp(float(acc) * (channel_scale * image_scale) + bias) in the
// reference's order. AVX2 (also used on AVX-512 CPUs); channels beyond the
// last multiple of 8 and other ISAs run the same arithmetic one lane at a time.
#pragma once

#include <cstdint>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/depthwise_conv.h"

namespace delegato::optimized {

class HybridDepthwiseKernel {
 public:
  static bool Covers(const reference::DepthwiseGeometry& g) {
    return g.depth_multiplier == 1 && g.input_depth > 0;
  }
  // filter: [filter_y][filter_x][channels]; channel_scales: one per channel.
  HybridDepthwiseKernel(const reference::DepthwiseGeometry& g, const int8_t* filter,
                        const float* channel_scales, float act_min, float act_max, Isa isa);

  // Output rows [row_begin, row_end) (a row is one (batch, out_y) pair).
  void Run(const int8_t* quantized, const float* scales, const int32_t* zero_points,
           const float* bias, float* output, int64_t row_begin, int64_t row_end) const;
  Isa isa() const { return isa_; }

 private:
  reference::DepthwiseGeometry g_;
  const float* channel_scales_ = nullptr;
  float act_min_ = 0, act_max_ = 0;
  Isa isa_ = Isa::kScalar;
  AlignedBuffer<int32_t> weights_;  // [tap][channels], widened once
};

}  // namespace delegato::optimized
