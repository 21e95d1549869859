// int16x8 DEPTHWISE_CONV_2D (int16 activations with zero point 0, int8
// weights, INT64 or no bias, depth multiplier 1) on AVX2, bit-exact with
// reference::DepthwiseConv16x8.
//
// Taps are taken in pairs: the two taps' inputs of 16 channels are
// interleaved (vpunpcklwd / vpunpckhwd) and vpmaddwd multiplies them by the
// pair's weights, packed once in the same interleaved order as int16, adding
// both products per channel in int32. A window has at most
// reference::kExactProducts16x8 taps here, so each channel's sum is exact in
// int32 (the reference's 32-bit path); bias, the 64-bit requantization
// (requantize16.h) and the clamp follow. Taps outside the image read a row
// of zeros (the zero point). A last block of fewer than 16 channels reads
// its inputs from a copy, never past the tensor. aarch64 (NEON): the same
// packed weights de-interleaved by vld2q_s16, smlal per tap into int32
// lanes; Requant16Int32 in NEON where it applies, otherwise the 64-bit
// requantization per output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/requantize16.h"
#include "kernels/reference/depthwise_conv.h"

namespace delegato::optimized {

struct Depthwise16x8Params {
  reference::DepthwiseGeometry geometry;  // depth_multiplier 1
  const int8_t* filter = nullptr;         // [1][filter_y][filter_x][channels]
  const int64_t* bias = nullptr;          // one per channel, or null
  const int32_t* multiplier = nullptr;    // one per channel
  const int32_t* shift = nullptr;
  int32_t act_min = -32768, act_max = 32767;
};

class Depthwise16x8 {
 public:
  // Layers with depth multiplier 1, at most kExactProducts16x8 taps and every
  // channel's requantization in the vector form, on a CPU with AVX2 or on
  // aarch64.
  static bool Covers(const reference::DepthwiseGeometry& g, const int32_t* multiplier,
                     const int32_t* shift, Isa isa);
  explicit Depthwise16x8(const Depthwise16x8Params& params);

  int64_t rows() const { return int64_t{g_.batches} * g_.output_height; }
  int64_t macs() const {
    return rows() * g_.output_width * g_.output_depth * g_.filter_height * g_.filter_width;
  }
  // Output rows (batch * output_height + y) [begin, end).
  void RunRows(int64_t begin, int64_t end, const int16_t* input, int16_t* output) const;
  // Whether the requantization runs in 32-bit lanes (Requant16Int32).
  bool requantizes_in_int32() const { return requant32_ != nullptr; }
  size_t packed_bytes() const {
    return weights_.bytes() + bias_.bytes() + reduced_.bytes() + right_.bytes() + zeros_.bytes() +
           (requant32_ != nullptr ? requant32_->bytes() : 0);
  }

  static constexpr int kBlock = 16;  // channels per vector pair

 private:
  // sums[16] of channels [c, c + 16) requantized into out[0, ncols).
  void Requantize(const int32_t* sums, size_t c, int16_t* out, int ncols) const;

  reference::DepthwiseGeometry g_;
  int taps_ = 0, pairs_ = 0, blocks_ = 0;
  int32_t act_min_ = 0, act_max_ = 0;
  AlignedBuffer<int16_t> weights_;  // [block][pair][32], vpunpck order
  // The requantization in 32-bit lanes when the window and biases allow it
  // (Requant16Int32::Covers: every layer of the zoo's models); otherwise, per
  // channel padded to whole blocks, the bias (0 without one), the 16-bit
  // multiplier and the right shift of the 64-bit one.
  std::unique_ptr<Requant16Int32> requant32_;
  AlignedBuffer<int64_t> bias_;
  AlignedBuffer<int32_t> reduced_, right_;
  AlignedBuffer<int16_t> zeros_;  // what a tap outside the image reads
};

}  // namespace delegato::optimized
