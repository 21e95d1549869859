// Quantized DEPTHWISE_CONV_2D (uint8 with per-tensor weights, int8 with
// per-tensor or per-channel weights), any depth multiplier, vectorized over
// output channels; bit-exact with reference::DepthwiseConvQuantized. (With
// a multiplier > 1, output channel c reads input channel c / multiplier: both
// SIMD paths expand the input bytes with a byte shuffle; AVX2 loads at most 4
// bytes per 8-channel block, placed inside the pixel. AVX2 runs the last
// output_depth % 8 channels through the scalar loop; AVX-512 uses the AVX2
// path when there are exactly 8 output channels.)
//
// Each output channel sums (w + w_off)(x - x_zp) over its window's taps
// inside the image. Weights are widened once (Prepare) to int32 lanes whose
// low 16 bits hold w + w_off and high 16 bits are zero, so vpmaddwd /
// vpdpwssd of a lane holding a sign- or zero-extended input yields exactly
// (w + w_off) * x. For pixels whose whole window lies inside the image the
// input offset is folded into a per-channel bias (bias - x_zp * sum of
// weights); border pixels add it to each tap they use instead. The int32 sum
// wraps modulo 2^32 like the reference, then is requantized exactly
// (requantize.h).
//
// With multiplier 1 and a 3x3 or 5x5 filter, AVX2 runs blocks of 8 channels
// and AVX-512 blocks of 16 (a last block of 8 through the AVX2 code, the
// last output_depth % 8 channels through the scalar loop) with two taps in
// each vpmaddwd / vpdpwssd lane: the two taps' input bytes interleaved and
// widened to int16, against weights packed in pairs (Prepare). Rows of
// the filter pair vertically; an odd last row pairs horizontally (a lone tap
// meets a zero weight). Taps outside the image read a row of input zero
// points, which contribute exactly nothing against the interior bias, so
// every pixel takes the same path. With stride 1 or 2 and dilation 1, two
// output pixels share the interleaved columns of their windows.
//
// AVX-512 with VBMI and IFMA (Ice Lake and later), 3x3 or 5x5, multiplier
// 1, stride 1 or 2, dilation 1 across, weights that fit a signed byte (int8
// always; uint8 when every w - w_zp lies in [-128, 127], else, within
// [-256, 254], as the sum of two signed bytes, which doubles the vpdpbusd
// per column): byte dot products instead. A 4-byte lane per channel holds
// one filter column's three input bytes (three 16-byte loads placed in one
// vector, reordered by vpermb; int8 inputs offset by 128 to unsigned, which
// the bias takes back as 128 * sum of weights), so vpdpbusd multiplies a
// whole column by its three weights (the fourth byte meets a zero weight):
// three per output pixel instead of five tap pairs. 5x5: rows 0-3 the same
// way (four bytes per column), row 4 as one lane of its columns 0-3 and one
// of column 4 alone: seven per pixel. Interior pixels go four at a time,
// sharing the columns of their windows (3x3 stride 1: 4 new columns per
// step, stride 2: 8), and their four results clamp and pack in one pass.
// Border taps read the zero-point row as above; on small images (5x5 up to
// 32 wide, or a quarter of the pixels on the border) border pixels also go
// in groups of four, each column checked, instead of one at a time. The
// last block of 8 channels runs the AVX2 pair code.
//
// Requantization. For depthwise layers it costs about as much as the
// multiply-adds (9 or 25 taps per output), so three cheaper exact forms
// replace the general one (requantize.h) where they apply:
// - Magnitude (tap-pair paths and the dot path, when Prepare proves it
//   exact for every channel): the reference's two roundings
//   (SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT by
//   e = -shift) compose into one on |acc|:
//     |result| = (|acc| * M + 2^30 + r * 2^31 - [acc < 0]) >> (31 + e),
//   r = 2^(e-1) (0 when e = 0), with the sign of acc. The [acc < 0] term
//   only matters when |acc| * M = 2^30 (mod 2^31) (the 2-adic valuations of
//   |acc| and M sum to 30) and, for e >= 1, the second rounding ties too,
//   which holds for one residue class of |acc| / 2^(30 - v2(M)) modulo
//   2^(e+1) (MagnitudeExact); Prepare bounds |acc| by |bias| + max|x - x_zp|
//   * sum|w| and takes this form only when no accumulator in that bound can
//   hit it, with no left shift and the bound below 2^31 (no wrap).
//   Then one 32x32->64 unsigned multiply, an add and a 64-bit shift per lane
//   replace the signed high multiply and the rounding divide (9 operations
//   per 16 lanes instead of 14); the sign is applied on the packed 16-bit
//   values. On the dot path, with every |acc| below 2^20, vpmadd52luq /
//   vpmadd52huq do the multiply and add in one (7 per 16 lanes).
// - requantize64.h's single 64-bit rounding shift (dot path, when the
//   magnitude form is ruled out and every channel shifts right): about 12
//   per 16 lanes, exact for any accumulator.
// - Otherwise the general requantization.
//
// aarch64 (neon, and dotprod, which has no variant of its own): multiplier 1
// only, blocks of 16 channels (then one of 8, the rest scalar), one tap at a
// time: the input widened to int16 times the weights' int16 halves (smlal).
// Other multipliers run the scalar loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/requantize.h"
#include "kernels/optimized/requantize64.h"
#include "kernels/optimized/requantize_magnitude.h"
#include "kernels/reference/depthwise_conv.h"

namespace delegato::optimized {

struct QuantDepthwiseParams {
  reference::DepthwiseGeometry geometry;
  bool is_uint8 = false;
  int32_t input_zero_point = 0;
  int32_t filter_offset = 0;  // added to each weight (-w_zp for uint8, 0 for int8)
  int32_t output_zero_point = 0;
  int32_t act_min = 0, act_max = 0;
  const int32_t* multiplier = nullptr;  // one per channel
  const int32_t* shift = nullptr;
  const void* filter = nullptr;   // [1][filter_y][filter_x][channels]
  const int32_t* bias = nullptr;  // one per channel, or null
};

class QuantDepthwise {
 public:
  static bool Covers(const reference::DepthwiseGeometry& g);
  QuantDepthwise(const QuantDepthwiseParams& params, Isa isa);

  Isa isa() const { return isa_; }
  // Output rows ((batch, y) pairs); RunRows may split them across threads.
  int64_t rows() const { return int64_t{g_.batches} * g_.output_height; }
  // Multiply-adds per Eval (below a threshold one thread runs everything).
  int64_t macs() const {
    return rows() * g_.output_width * g_.output_depth * g_.filter_height * g_.filter_width;
  }
  void RunRows(int64_t begin, int64_t end, const void* input, void* output) const;

  size_t packed_bytes() const {
    return weights_.bytes() + bias_interior_.bytes() + bias_border_.bytes() +
           pair_weights_.bytes() + pair_zero_row_.bytes() + magnitude_.bytes() +
           dot_weights_.bytes() + dot_bias_.bytes() + requant64_.add.bytes() +
           requant64_.shift.bytes() + requant64_.multiplier.bytes() +
           requant64_.odd_multiplier.bytes() + requant64_.left_shift.bytes() +
           requant64_.rounds.bytes();
  }

  // Internals shared with the per-ISA loops.
  const reference::DepthwiseGeometry& geometry() const { return g_; }
  const int32_t* weights() const { return weights_.data(); }  // [tap][padded channels]
  const int32_t* bias_interior() const { return bias_interior_.data(); }
  const int32_t* bias_border() const { return bias_border_.data(); }
  const RequantChannels& requant() const { return requant_; }
  int padded_channels() const { return padded_channels_; }
  int32_t input_offset() const { return input_offset_; }
  bool is_uint8() const { return is_uint8_; }
  // Taps [lo, hi) of the filter inside the image, per output x and per
  // output y (precomputed: no division per pixel).
  struct TapRange {
    int32_t lo = 0, hi = 0;
  };
  const TapRange* x_taps() const { return x_taps_.data(); }
  const TapRange* y_taps() const { return y_taps_.data(); }
  // Output x in [begin, end) have every filter column inside the image.
  int32_t interior_x_begin() const { return interior_x_begin_; }
  int32_t interior_x_end() const { return interior_x_end_; }

  // Tap pairs (empty unless that path runs): channels [0, pair_channels())
  // in blocks of 8 (AVX2) or 16 (AVX-512, then at most one block of 8). The
  // block at channel c starts at pair_weights() + c * PairVectors(): that
  // many vectors of one int32 lane per channel, holding two int16 weights
  // each. One input row of zero points.
  int32_t pair_channels() const { return pair_channels_; }
  const int32_t* pair_weights() const { return pair_weights_.data(); }
  const uint8_t* pair_zero_row() const { return pair_zero_row_.data(); }
  static int PairVectors(int filter_height, int filter_width) {
    return filter_height / 2 * filter_width + (filter_height % 2) * 2 * (filter_width / 2 + 1);
  }

  // Magnitude requantization (see above; requantize_magnitude.h): whether
  // the tap-pair paths use it, and its per-channel constants.
  bool magnitude_requant() const { return magnitude_requant_; }
  const MagnitudeChannels& magnitude() const { return magnitude_; }

  // 3x3 / 5x5 byte dot products (AVX-512 path, empty unless it runs):
  // channels [0, dot_channels()) in blocks of 16, each block vectors of 16
  // lanes of 4 signed bytes: 3x3, three (filter columns: the column's three
  // weights, 0); 5x5, seven (rows 0-3 of each column, row 4's columns 0-3,
  // row 4's column 4 and three zeros); twice that when split (uint8 weights
  // past a signed byte: the ceil(w / 2) set, then the floor(w / 2) set); per
  // channel, the bias for inputs entering as unsigned bytes.
  int32_t dot_channels() const { return dot_channels_; }
  bool dot_split() const { return dot_split_; }
  // Whether the dot path requantizes with 52-bit multiply-adds (magnitude
  // requantization with every |acc| below 2^20).
  bool dot_ifma() const { return dot_ifma_; }
  // Without the magnitude form, whether it uses requantize64.h (every channel
  // right-shifted).
  bool dot_requant64() const { return dot_requant64_; }
  const Requant64Channels& requant64() const { return requant64_; }
  const int32_t* dot_weights() const { return dot_weights_.data(); }
  const int32_t* dot_bias() const { return dot_bias_.data(); }

 private:
  void PreparePairs(const QuantDepthwiseParams& p);
  void PrepareMagnitudeRequant(const QuantDepthwiseParams& p);
  void PrepareDots(const QuantDepthwiseParams& p);

  reference::DepthwiseGeometry g_;
  Isa isa_ = Isa::kScalar;
  bool is_uint8_ = false;
  int padded_channels_ = 0;
  int32_t input_offset_ = 0;  // -x_zp
  AlignedBuffer<int32_t> weights_;
  AlignedBuffer<int32_t> bias_interior_;  // bias + input_offset * sum of the channel's weights
  AlignedBuffer<int32_t> bias_border_;    // bias
  RequantChannels requant_;
  std::vector<TapRange> x_taps_, y_taps_;
  int32_t interior_x_begin_ = 0, interior_x_end_ = 0;
  int32_t pair_channels_ = 0;
  AlignedBuffer<int32_t> pair_weights_;
  AlignedBuffer<uint8_t> pair_zero_row_;
  bool magnitude_requant_ = false;
  MagnitudeChannels magnitude_;
  int64_t magnitude_bound_ = 0;  // largest |acc| bound over the channels
  int32_t dot_channels_ = 0;
  bool dot_split_ = false;
  bool dot_ifma_ = false;
  bool dot_requant64_ = false;
  Requant64Channels requant64_;
  AlignedBuffer<int32_t> dot_weights_;
  AlignedBuffer<int32_t> dot_bias_;
};

}  // namespace delegato::optimized
