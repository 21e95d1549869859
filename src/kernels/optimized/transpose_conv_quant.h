// 8-bit TRANSPOSE_CONV as a gather (AVX-512, AVX2; portable loops), bit-exact
// with reference::TransposeConvQuantized.
//
// Each output pixel sums (input + input_offset) * (filter + filter_offset)
// over its contributing input pixels and channels (transpose_conv_float.h
// explains the gather) in int32 lanes of output channels. Both factors lie
// in [-255, 255] (zero points are inside their type's range), so they are
// int16 and vpmaddwd multiplies two input channels per instruction, exactly
// (a pair's sum is at most 2 * 255^2); the filter is widened once in Prepare
// to int16 `filter + filter_offset` pairs. With up to 16 (AVX2) or 32
// (AVX-512) output channels, runs of 4 pixels of a row stride_width apart,
// whose contributors are the same taps over input columns shifted by one,
// share each weight load (8x8x16 -> 16x16x8 with AVX2: 6.2 -> 4.2 µs).
// Integer sums wrap the same in any
// order, so the accumulators equal the reference's; then the bias, TFLite's
// per-channel fixed-point rescale (requantize.h, bit-exact), the output
// offset and the clamp.
#pragma once

#include <cstdint>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/requantize.h"
#include "kernels/reference/transpose_conv.h"

namespace delegato::optimized {

class TransposeConvQuant {
 public:
  // `filter` is uint8 when `is_uint8`, else int8 ([out_c][fy][fx][in_c]).
  void Prepare(Isa isa, const reference::TransposeConvGeometry& g,
               const reference::TransposeConvQuantParams& q, bool is_uint8, const void* filter);
  // Output rows [row_begin, row_end) of batches * output_height; input and
  // output are uint8 or int8 as given to Prepare.
  void Run(const void* input, const int32_t* bias, void* output, int64_t row_begin,
           int64_t row_end) const;
  int64_t rows() const { return int64_t{g_.batches} * g_.output_height; }

  // Hybrid TRANSPOSE_CONV: int8 `filter` without offset or requantization;
  // Sums writes the int32 sums of (input + batch_offsets[batch]) * filter
  // (the reference's accumulators, [batch][y][x][out_c]) for output rows
  // [row_begin, row_end).
  void PrepareSums(Isa isa, const reference::TransposeConvGeometry& g, const int8_t* filter);
  void Sums(const int8_t* input, const int32_t* batch_offsets, int32_t* sums, int64_t row_begin,
            int64_t row_end) const;

 private:
  void Pack(Isa isa, const reference::TransposeConvGeometry& g,
            const reference::TransposeConvQuantParams& q, bool is_uint8, const void* filter);

  Isa isa_ = Isa::kScalar;
  bool is_uint8_ = false;
  int32_t input_offset_ = 0;
  reference::TransposeConvGeometry g_;
  int32_t padded_depth_ = 0;  // output channels rounded up to 16
  AlignedBuffer<int16_t> packed_;       // AVX2 / AVX-512 (see Pack)
  AlignedBuffer<int32_t> packed_wide_;  // portable
  RequantChannels requant_;
};

}  // namespace delegato::optimized
