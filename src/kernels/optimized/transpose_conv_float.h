// float32 TRANSPOSE_CONV as a gather (AVX-512, AVX2; portable loops).
//
// The reference scatters every input value times every tap into the outputs
// it reaches. For one output pixel each input pixel reaches it through one
// tap at most, so the reference adds that output's terms in (input y, input
// x, input channel) order. These kernels compute each output pixel directly:
// its contributing input pixels in that order, each input channel broadcast
// against a vector of output channels of the filter repacked in Prepare as
// [filter_y][filter_x][in_channel][out_channel] (out channels padded to the
// vector), with a separate multiply and add per term, starting from 0; then
// the bias (when there is one) and the reference's clamp. Each output is so
// the reference's sequence of IEEE operations: bit-exact, on every ISA and
// whatever the split into tasks. With up to two vectors of output channels,
// runs of 4 pixels of a row stride_width apart whose contributors are the
// same taps over input columns shifted by one share each weight load, and
// their 4 add chains run side by side (8x8x16 -> 16x16x8 with AVX2: 8.0 ->
// 4.1 µs; 16x16x32 -> 32x32x16: 62 -> 34 µs with AVX-512).
#pragma once

#include <cstdint>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/reference/transpose_conv.h"

namespace delegato::optimized {

class TransposeConvFloat {
 public:
  // Packs `filter` ([out_c][filter_y][filter_x][in_c]) for `isa`.
  void Prepare(Isa isa, const reference::TransposeConvGeometry& g, const float* filter);
  // Output rows [row_begin, row_end) of batches * output_height.
  void Run(const float* input, const float* bias, float act_min, float act_max, float* output,
           int64_t row_begin, int64_t row_end) const;
  int64_t rows() const { return int64_t{g_.batches} * g_.output_height; }

 private:
  Isa isa_ = Isa::kScalar;
  reference::TransposeConvGeometry g_;
  int32_t padded_depth_ = 0;  // output channels rounded up to the vector width
  AlignedBuffer<float> packed_;
};

}  // namespace delegato::optimized
