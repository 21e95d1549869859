// int16x8 CONV_2D (int16 activations with zero point 0, int8 weights, INT64,
// INT32 or no bias) as a GEMM on AVX2 and aarch64, bit-exact with
// reference::Conv16x8;
// FULLY_CONNECTED too (as a 1x1 layer, with its own rescale), bit-exact with
// reference::FullyConnected16x8.
//
// output[m][n] = requant(bias[n] + sum_k x[m][k] w[k][n]), m = output pixel,
// k = (filter_y, filter_x, in_channel). Weights are packed once as int8 in
// panels of 16 output channels, k in pairs: [panel][k/2][16][2] (zero padded),
// the filter's own bytes. Rows of x: 1x1 stride-1 layers read the input
// pixels in place; other shapes gather each row (im2col) into per-task
// scratch, padded taps 0 (the zero point).
//
// Exactness: per pair of k, vpmaddwd multiplies a broadcast pair of int16
// inputs by the sign-extended pair of weights of 8 channels and adds the two
// products in int32: |x w| <= 2^15 * 2^7 = 2^22, so a pair is at most 2^23 and
// a run of kPairsPerRun = 128 pairs (reference::kExactProducts16x8 products)
// at most 2^30, exactly. Each run's int32 sums
// are then added to 64-bit sums (INT64 or no bias: the reference's wrapping
// 64-bit accumulator, reached in another order, which integer addition
// allows) or kept wrapping in 32 bits (INT32 bias, as the reference).
// Bias, the reference's requantization (64- or 32-bit) and the clamp then run
// per output; the 64-bit one 4 lanes at a time (the 64-bit product from two
// 32 x 32-bit multiplies, the arithmetic shift from a logical one and the
// sign); with at most 256 products per output the int32 sums are kept and
// requantized in 32-bit lanes (Requant16Int32). 4 output rows x 16 channels
// per block. Results do not depend on the thread count. aarch64 (NEON): the same packed pairs de-interleaved by
// vld2q_s8, smlal by each input value, the same runs; Requant16Int32 in NEON
// where it applies, otherwise the requantization per output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/optimized/aligned_buffer.h"
#include "kernels/optimized/grouped_conv.h"
#include "kernels/optimized/isa.h"
#include "kernels/optimized/requantize16.h"
#include "kernels/reference/conv.h"
#include "kernels/reference/int16x8.h"

namespace delegato::optimized {

struct Conv16x8Params {
  reference::ConvGeometry geometry;  // groups() must be 1
  const int8_t* filter = nullptr;    // [out][filter_y][filter_x][in]
  // At most one of the two; neither: no bias (64-bit sums).
  const int64_t* bias64 = nullptr;
  const int32_t* bias32 = nullptr;
  bool sums32 = false;  // INT32 bias declared: 32-bit wrapping sums, 32-bit requantization
  const int32_t* multiplier = nullptr;  // one per output channel
  const int32_t* shift = nullptr;
  // FULLY_CONNECTED (a 1x1 geometry, rows = batches): its double-precision
  // rescale per output channel (reference::FullyConnected16x8) instead of
  // multiplier and shift.
  const double* output_scale = nullptr;
  int32_t act_min = -32768, act_max = 32767;
};

class Conv16x8 {
 public:
  // Ungrouped layers on a CPU with AVX2 (AVX-512 runs the same code) or on
  // aarch64.
  static bool Covers(const reference::ConvGeometry& g, Isa isa);
  Conv16x8(const Conv16x8Params& params, int num_threads);

  int num_tasks() const { return num_tasks_; }
  size_t scratch_bytes() const { return per_task_bytes_ * num_tasks_; }
  // Task `task` of num_tasks() writes its own output rows; scratch holds
  // scratch_bytes(), 64-byte aligned.
  void RunTask(int task, const int16_t* input, int16_t* output, uint8_t* scratch) const;
  size_t packed_bytes() const { return weights_.bytes(); }
  // Whether sums stay int32 and requantize in 32-bit lanes (Requant16Int32).
  bool requantizes_in_int32() const { return requant32_ != nullptr; }

  static constexpr int kRows = 4;
  static constexpr int kPanel = 16;
  // Pairs of products summed in int32 before the 64-bit sums: the
  // reference's bound on exact 32-bit sums, in pairs.
  static constexpr int kPairsPerRun = reference::kExactProducts16x8 / 2;

 private:
  void RunRows(int64_t m_begin, int64_t m_end, const int16_t* input, int16_t* output,
               int16_t* rows_scratch) const;
  void GatherRow(const int16_t* input, int64_t m, int16_t* dst) const;
  // bias_ from the params' INT64 or INT32 bias (0 without one).
  void SetBias(const Conv16x8Params& p);
  // The 64-bit sums' requantization (bias_, reduced_ and right_, or
  // multiplier_ and shift_).
  void PrepareWideRequantization(const Conv16x8Params& p);

  reference::ConvGeometry g_;
  int k_ = 0, k_pairs_ = 0, n_ = 0, panels_ = 0;
  int64_t m_ = 0;
  bool direct_ = false;  // 1x1, stride 1, unpadded: row m is input pixel m
  bool sums32_ = false;
  // At most kExactProducts16x8 products per output (1x1 layers of up to 256
  // input channels), biases and shifts permitting (Requant16Int32::Covers):
  // int32 sums, requantized in 32-bit lanes. Otherwise 64-bit sums and,
  // per channel, padded to whole panels: the bias (0 without one; INT32
  // biases widened) and the 64-bit requantization's 16-bit multiplier and
  // right shift (reference::MultiplyByQuantizedMultiplier64), when every
  // channel's fit the vector form (vector_requant_). Otherwise the
  // requantization runs per output from multiplier_ and shift_ (kept only
  // then: 16 bytes per channel instead of 56, over a model's thousands).
  std::unique_ptr<Requant16Int32> requant32_;
  std::vector<double> fc_scale_;  // FULLY_CONNECTED: the rescale per channel (with bias_)
  AlignedBuffer<int64_t> bias_;
  AlignedBuffer<int32_t> reduced_, right_;
  std::vector<int32_t> multiplier_, shift_;
  bool vector_requant_ = false;
  int32_t act_min_ = 0, act_max_ = 0;
  AlignedBuffer<int8_t> weights_;  // [panel][k_pairs][16][2]
  int num_tasks_ = 1;
  size_t per_task_bytes_ = 0;
};

// A grouped int16x8 CONV_2D as one Conv16x8 per group, bit-exact like it:
// a task takes whole groups and, for each, gathers the group's input
// channels, runs the group's GEMM on the calling thread and scatters the
// outputs into the group's channels (grouped_conv.h).
class Conv16x8Grouped {
 public:
  // More than one group, each of which Conv16x8 covers on `isa`.
  static bool Covers(const reference::ConvGeometry& g, Isa isa);
  Conv16x8Grouped(const Conv16x8Params& params, int num_threads);

  int num_tasks() const { return num_tasks_; }
  size_t scratch_bytes() const { return scratch_.per_task_bytes * num_tasks_; }
  void RunTask(int task, const int16_t* input, int16_t* output, uint8_t* scratch) const;

 private:
  reference::ConvGeometry g_;
  std::vector<std::unique_ptr<Conv16x8>> groups_;
  int num_tasks_ = 1;
  GroupedScratch scratch_;
};

}  // namespace delegato::optimized
