// Dynamic-range ("hybrid") DEPTHWISE_CONV_2D, bit-exact with
// reference::HybridDepthwiseConv. The image, quantized as the reference does
// (HybridQuantizeRow, asymmetric), is widened once per call to int16
// q - zero_point inside a zero border (and zero channels up to a multiple of
// 16), so every output pixel runs all its taps without bounds checks: a
// padding tap adds w * 0, as the reference adds nothing for it. With a depth
// multiplier m > 1 the widening writes each input channel m times (output
// channel c reads input channel c / m) and the layer runs as multiplier 1
// over the output's channels; the quantization, over the original image, is
// unchanged.
// Per tap and 16 channels (AVX-512 VNNI: one vpdpwssd on the zero-extended
// values against the weights held in the low halves of 32-bit lanes) or 8
// (AVX2: vpmaddwd + add; NEON: widening multiply-adds, 16 at a time) the
// products are exact int32 sums; up to four channel groups run together as
// independent chains. Then
// out = clamp(float(acc) * (channel_scale * image_scale) + bias) in the
// reference's order. The scalar ISA runs the same sums one lane at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/depthwise_conv.h"

namespace delegato::optimized {

class HybridDepthwiseKernel {
 public:
  // Multipliers above 1 while the widened images stay below 256 MB.
  static bool Covers(const reference::DepthwiseGeometry& g) {
    if (g.input_depth <= 0 || g.depth_multiplier < 1) return false;
    // An upper bound of the padded images' bytes (the border at most pad + filter).
    const double height = static_cast<double>(g.input_height) + 2.0 * g.pad_height + g.filter_height;
    const double width = static_cast<double>(g.input_width) + 2.0 * g.pad_width + g.filter_width;
    const double widened = 2.0 * g.batches * height * width * g.output_depth;
    return g.depth_multiplier == 1 || widened <= 256.0 * (1 << 20);
  }
  // filter: [filter_y][filter_x][channels]; channel_scales: one per channel.
  HybridDepthwiseKernel(const reference::DepthwiseGeometry& g, const int8_t* filter,
                        const float* channel_scales, float act_min, float act_max, Isa isa);

  // The batches' widened images.
  size_t scratch_bytes() const { return image_bytes_ * g_.batches; }
  // Stores image `batch` (quantized, with its zero point) into scratch;
  // every batch's image is widened before Run.
  void WidenImage(int64_t batch, const int8_t* quantized_image, int32_t zero_point,
                  uint8_t* scratch) const;
  // Output rows [row_begin, row_end) (a row is one (batch, out_y) pair).
  void Run(const uint8_t* scratch, const float* scales, const float* bias, float* output,
           int64_t row_begin, int64_t row_end) const;
  Isa isa() const { return isa_; }
  int64_t macs() const {
    return int64_t{g_.batches} * g_.output_height * g_.output_width * g_.input_depth *
           g_.filter_height * g_.filter_width;
  }

 private:
  reference::DepthwiseGeometry g_;  // multiplier 1, input depth the output's
  int32_t source_depth_ = 0;        // channels of the quantized image
  int32_t repeat_ = 1;              // the layer's depth multiplier
  const float* channel_scales_ = nullptr;
  float act_min_ = 0, act_max_ = 0;
  Isa isa_ = Isa::kScalar;
  int32_t padded_height_ = 0, padded_width_ = 0, padded_depth_ = 0;
  size_t image_bytes_ = 0;
  std::vector<size_t> tap_offsets_;  // each tap's offset from a window's first, in int16
  // [tap][padded_depth]: the weight in the low 16 bits, 0 in the high ones.
  AlignedBuffer<int32_t> weights_;
  // [tap][padded_depth] in groups of 2 * lanes channels (32 on AVX-512, 16
  // on AVX2; the whole groups below the layer's depth): the even channels'
  // weights in the low 16 bits, then the odd channels' in the high ones, so
  // vpdpwssd / vpmaddwd multiply the widened image's int16 pairs as they lie
  // (no widening to 32 bits). Empty on other ISAs.
  AlignedBuffer<int32_t> pair_weights_;
};

}  // namespace delegato::optimized
